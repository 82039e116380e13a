"""TLS handshakes that stall or are no TLS at all, against `gpu-cost-controller --demo` serving
HTTPS (docs/httpd.md, "TLS handshakes").

Many clients open a TCP connection to the TLS port and send nothing; others send half a
ClientHello and stall, trickle one a byte a second, finish the handshake and ask nothing, send
random bytes instead of a ClientHello, or a plain HTTP request. Each such connection must be
closed by the server within the documented bound (the head deadline, `header_timeout_sec`, 10 s
by default: from the accept for a handshake, from the handshake's end for the head) plus
SLACK_S, and not before it; bytes that are no TLS are closed unanswered. Meanwhile a
well-behaved HTTPS client on a kept-alive connection and one making a new handshake for every
request are answered, every time. Conditions, not latencies: their times are printed as
FIGURE lines (the latency bounds are `make bench`'s, docs/benchmarks.md).
"""

import http.client
import os
import socket
import ssl
import threading
import time

from conftest import connect

HEAD_TIMEOUT_S = 10.0  # header_timeout_sec, the server's default (GC_HTTPD_DEFAULT_*)
SLACK_S = 5.0          # for a loaded machine: the server's timers are checked each second
EARLY_S = 0.5          # a deadline never fires before its time; this much for clock steps
CHEAP = "/api/v1/prices"
# Attackers, from loopback addresses of their own, each under the per-address cap (64) and all
# together under the server's 256 connections, so admission sheds none of them: every close
# seen is the deadline's.
N_SILENT, N_HALF, N_TRICKLE, N_IDLE, N_GARBAGE, N_PLAIN = 120, 40, 10, 10, 40, 40


def client_hello():
    """The first flight of a real TLS client (Python's ssl), as bytes."""
    ctx = ssl.create_default_context()
    inb, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inb, outb, server_hostname="127.0.0.1")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = outb.read()
    assert hello[:1] == b"\x16" and len(hello) > 100, hello[:16]
    return hello


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))] if v else float("nan")


class Good:
    """A well-behaved HTTPS client on a kept-alive connection (reconnecting once if the server
    closed it) and one that makes a new handshake for every request, for a with block."""

    def __init__(self, server):
        self.server = server
        self.ctx = ssl.create_default_context(cafile=server.ca)
        self.stop = threading.Event()
        self.kept, self.fresh, self.errors = [], [], []

    def _get(self, conn):
        conn.request("GET", CHEAP)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200 or not body:
            self.errors.append("status %d" % r.status)

    def _kept(self):
        conn = None
        while not self.stop.is_set():
            t0 = time.monotonic()
            for attempt in (0, 1):
                try:
                    if conn is None:
                        conn = http.client.HTTPSConnection("127.0.0.1", self.server.api_port,
                                                           context=self.ctx, timeout=30)
                    self._get(conn)
                    break
                except (OSError, http.client.HTTPException) as e:
                    conn = None
                    if attempt:
                        self.errors.append("kept: %r" % e)
            self.kept.append(time.monotonic() - t0)
            self.stop.wait(0.02)

    def _fresh(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            conn = http.client.HTTPSConnection("127.0.0.1", self.server.api_port,
                                               context=self.ctx, timeout=30)
            try:
                self._get(conn)
            except (OSError, http.client.HTTPException) as e:
                self.errors.append("new handshake: %r" % e)
            finally:
                conn.close()
            self.fresh.append(time.monotonic() - t0)
            self.stop.wait(0.2)

    def __enter__(self):
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self._kept,
                                                                          self._fresh)]
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(40)
        return False


class Attack:
    """One attacking connection: its socket, what it is, when its deadline started, what it
    received and when the server closed it."""

    def __init__(self, kind, sock, since):
        self.kind, self.sock, self.since = kind, sock, since
        self.got = b""
        self.closed_after = None

    def poll(self, now):
        """Reads what is there without waiting; records the server's close."""
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    break
                self.got += data
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except (OSError, ssl.SSLError):
            pass  # a reset, or a TLS alert: closed all the same
        self.closed_after = now - self.since


def test_tls_stalled_and_garbage_handshakes(tls_server):
    server = tls_server
    fds0 = server.fds()
    hello = client_hello()
    ctx = ssl.create_default_context(cafile=server.ca)
    attacks = []
    addr = iter("127.0.0.%d" % (2 + i % 8) for i in range(10 ** 6))

    def raw(kind, payload=b""):
        s = connect(server.api_port, next(addr))
        t = time.monotonic()
        if payload:
            s.sendall(payload)
        s.setblocking(False)
        attacks.append(Attack(kind, s, t))

    with Good(server) as good:
        time.sleep(0.5)
        for _ in range(N_SILENT):
            raw("silent")
        for _ in range(N_HALF):
            raw("half ClientHello", hello[:len(hello) // 2])
        for _ in range(N_TRICKLE):
            raw("trickled ClientHello", hello[:1])
        trickled = [a for a in attacks if a.kind == "trickled ClientHello"]
        for _ in range(N_IDLE):
            s = ctx.wrap_socket(connect(server.api_port, next(addr)),
                                server_hostname="127.0.0.1")
            t = time.monotonic()  # the head's deadline runs from the handshake's end
            s.setblocking(False)
            attacks.append(Attack("handshake, no request", s, t))
        for i in range(N_GARBAGE):
            raw("garbage", os.urandom(300) if i % 2 else b"A" * 300)
        for _ in range(N_PLAIN):
            raw("plain HTTP", b"GET %s HTTP/1.1\r\nHost: a\r\n\r\n" % CHEAP.encode())

        sent, next_byte = 1, time.monotonic() + 1
        end = max(a.since for a in attacks) + HEAD_TIMEOUT_S + SLACK_S
        while time.monotonic() < end and any(a.closed_after is None for a in attacks):
            now = time.monotonic()
            if now >= next_byte and sent < len(hello):
                for a in trickled:
                    if a.closed_after is None:
                        try:
                            a.sock.send(hello[sent:sent + 1])
                        except OSError:
                            pass
                sent, next_byte = sent + 1, now + 1
            for a in attacks:
                if a.closed_after is None:
                    a.poll(now)
            time.sleep(0.05)
        # A last look, once every deadline has passed.
        time.sleep(0.2)
        for a in attacks:
            if a.closed_after is None:
                a.poll(time.monotonic())
    for a in attacks:
        a.sock.close()

    kinds = {}
    for a in attacks:
        kinds.setdefault(a.kind, []).append(a)
    for kind, group in kinds.items():
        times = [a.closed_after for a in group if a.closed_after is not None]
        print("FIGURE TLS %s x%d: closed by the server %d, after %.2f to %.2f s" % (
            kind, len(group), len(times), min(times or [float("nan")]),
            max(times or [float("nan")])))
    kept, fresh = [1000 * x for x in good.kept], [1000 * x for x in good.fresh]
    print("FIGURE TLS handshakes meanwhile: kept-alive client n=%d p50=%.1fms max=%.1fms; "
          "new handshake per request n=%d p50=%.1fms max=%.1fms; errors=%d" % (
              len(kept), pct(kept, 50), max(kept or [0]), len(fresh), pct(fresh, 50),
              max(fresh or [0]), len(good.errors)))

    # Every connection closed by the server, none before its deadline or past it with slack.
    for a in attacks:
        assert a.closed_after is not None, "%s: still open after %.0f s" % (
            a.kind, HEAD_TIMEOUT_S + SLACK_S)
        assert a.closed_after <= HEAD_TIMEOUT_S + SLACK_S, (a.kind, a.closed_after)
        if a.kind in ("garbage", "plain HTTP"):
            # No TLS: dropped, never answered as HTTP.
            assert b"HTTP/" not in a.got, (a.kind, a.got[:100])
        else:
            assert a.closed_after >= HEAD_TIMEOUT_S - EARLY_S, (a.kind, a.closed_after)
    # The trickler was still sending when its deadline came: the deadline runs from the accept.
    assert sent > 5, sent
    # The others were served all along, over a kept connection and with new handshakes.
    assert not good.errors, good.errors[:5]
    assert len(kept) > 20 and len(fresh) > 10, (len(kept), len(fresh))
    assert server.alive()
    # Nothing of the attack is left behind.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and server.fds() > fds0:
        time.sleep(0.2)
    assert server.fds() <= fds0, (server.fds(), fds0)
