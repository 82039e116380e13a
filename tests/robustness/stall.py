"""The issue's stall, measured against any build of the controller (before and after figures in
docs/benchmarks.md): N clients send a request line and then a header every 2 s, while /healthz is
asked on the API port every 100 ms on a new connection.

  python3 tests/robustness/stall.py BUILD/gpu-cost-controller [N] [SECONDS]
"""

import http.client
import json
import socket
import subprocess
import sys
import tempfile
import time


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 20
    log = tempfile.NamedTemporaryFile("w+", suffix=".log")
    proc = subprocess.Popen([binary, "--demo", "--listen", "127.0.0.1:0"], stdout=log,
                            stderr=log)
    try:
        port = None
        for _ in range(200):
            log.seek(0)
            for line in log.read().splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "listening":
                    port = int(rec["port"])
            if port:
                break
            time.sleep(0.05)
        slow = []
        for i in range(n):
            # From another address than the prober's, as a pod in the cluster would be.
            s = socket.create_connection(("127.0.0.1", port), timeout=5,
                                         source_address=("127.0.0.2", 0))
            s.sendall(b"GET /api/v1/prices HTTP/1.1\r\nHost: a\r\n")
            slow.append(s)
        times, failures, next_trickle = [], 0, 0.0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if time.monotonic() >= next_trickle:
                for s in slow:
                    try:
                        s.sendall(b"X-Trickle: 1\r\n")
                    except OSError:
                        pass
                next_trickle = time.monotonic() + 2
            t0 = time.monotonic()
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
                c.request("GET", "/healthz")
                c.getresponse().read()
                c.close()
            except (OSError, http.client.HTTPException):
                failures += 1
            times.append(1000 * (time.monotonic() - t0))
            time.sleep(0.1)
        times.sort()
        over1s = sum(t > 1000 for t in times)
        print("%d slow clients, %.0f s: /healthz n=%d p50=%.1fms p99=%.1fms max=%.1fms "
              "over 1 s=%d failed=%d" % (n, seconds, len(times), times[len(times) // 2],
                                         times[int(0.99 * (len(times) - 1))], times[-1], over1s,
                                         failures))
        for s in slow:
            s.close()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
