"""A TCP forwarder on loopback that a test can cut: the controller reaches kube-apiserver
through it (TLS passes through untouched, the certificate is for 127.0.0.1 either way), and
cut() makes the API server unreachable for the controller alone, at once: the listening socket
closes (new connections are refused) and every open connection is reset; heal() listens on the
same port again, a partition that ends."""

import socket
import threading

from harness import free_port


class TcpProxy:
    def __init__(self, target_port, host="127.0.0.1"):
        self.target = (host, target_port)
        self.host = host
        self.lock = threading.Lock()
        self.socks = []
        # A port of this process's own range (harness.free_port): heal() listens on it again,
        # and no other test process can have taken it meanwhile.
        self._listen(free_port())

    def _listen(self, port):
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((self.host, port))
        self.lsock.listen(64)
        self.port = self.lsock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, args=(self.lsock,), daemon=True).start()

    def heal(self):
        """Forwards again, on the same port."""
        self._listen(self.port)

    def _accept(self, lsock):
        while True:
            try:
                client, _ = lsock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.lock:
                if self.closed:
                    client.close()
                    upstream.close()
                    return
                self.socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            self.closed = True
            socks, self.socks = self.socks, []
        self.lsock.close()
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
