"""Load for the robustness suite, in a process of its own so that it does not compete with the
measuring clients for Python's interpreter lock. Prints one JSON line when done.

  load.py flood PORT SECONDS SOURCE      connect from SOURCE, send half a request line, reset
  load.py expensive PORT SECONDS PATH    GET PATH back to back on one keep-alive connection
"""

import http.client
import json
import socket
import struct
import sys
import time


def flood(port, seconds, source):
    done = failed = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(2)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.bind((source, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /api/v1/co")
            s.close()
            done += 1
        except OSError:
            failed += 1
    return {"connections": done, "failed": failed}


def expensive(port, seconds, path):
    ttfb, total, size = [], [], 0
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        c.request("GET", path)
        r = c.getresponse()
        ttfb.append(time.monotonic() - t0)
        size = max(size, len(r.read()))
        total.append(time.monotonic() - t0)
    return {"ttfb": ttfb, "total": total, "bytes": size}


if __name__ == "__main__":
    mode, port, seconds, arg = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    print(json.dumps((flood if mode == "flood" else expensive)(port, seconds, arg)))
