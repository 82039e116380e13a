"""A fake of the controller's HTTP API, for the dashboard's error-state tests and UI work.

It serves the dashboard from web/ as files and answers the API with one fixed error (--status
503|401|403|500: states a test cannot hold the real controller in), or with figures computed by
the real `gpu-cost analyze` over examples/ (--gpu-cost PATH), with 401 for any request without
--token's bearer token when one is given. The
dashboard's required tests run against the real `gpu-cost-controller --demo`; this is a fake and
is named one.

    python3 tests/web/fake_api.py --gpu-cost build/gpu-cost --port 8099
"""

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WEB = os.path.join(ROOT, "web")
EX = os.path.join(ROOT, "examples")
NOW = dt.datetime(2026, 11, 23, 6, 0, 0, tzinfo=dt.timezone.utc)  # examples/demo.json's now
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png"}


def rfc3339(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def window_bounds(w):
    if w == "month":
        return NOW.replace(day=1, hour=0), NOW
    days = int(w.rstrip("d"))
    return NOW - dt.timedelta(days=days), NOW


class Handler(BaseHTTPRequestHandler):
    status = 0
    gpu_cost = None
    token = None
    token_everywhere = False
    prices = None

    def log_message(self, *a):
        pass

    def send(self, code, body, ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def analyze(self, start, end, by):
        out = subprocess.run(
            [self.gpu_cost, "analyze", "--pods", os.path.join(EX, "pods.json"),
             "--nodes", os.path.join(EX, "nodes.json"),
             "--namespaces", os.path.join(EX, "namespaces.json"),
             "--prices", self.prices or os.path.join(EX, "prices.json"),
             "--config", os.path.join(EX, "config.json"),
             "--window", rfc3339(start) + "," + rfc3339(end), "--by", by, "--format", "json"],
            check=True, capture_output=True, timeout=30)
        return json.loads(out.stdout)

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        if self.token and self.token_everywhere and \
                self.headers.get("Authorization") != "Bearer " + self.token:
            return self.send(401, {"error": "a bearer token is required"})
        if not u.path.startswith("/api/"):
            name = "index.html" if u.path == "/" else u.path.lstrip("/")
            f = os.path.join(WEB, name)
            if "/" in name or not os.path.isfile(f):
                return self.send(404, {"error": "not found"})
            with open(f, "rb") as fh:
                return self.send(200, fh.read(), TYPES.get(os.path.splitext(f)[1], "text/plain"))
        if self.token and self.headers.get("Authorization") != "Bearer " + self.token:
            return self.send(401, {"error": "unauthorized"})
        if self.status:
            msg = {503: "no data yet", 401: "unauthorized", 403: "forbidden"}.get(self.status,
                                                                                  "error")
            return self.send(self.status, {"error": msg})
        if u.path == "/api/v1/costs":
            start, end = window_bounds(q.get("window", "7d"))
            by = q.get("by", "team,project")
            out = {"window": {"start": rfc3339(start), "end": rfc3339(end)}, "step": q.get("step"),
                   "sets": []}
            if q.get("step") == "1d":
                t = start.replace(hour=0)
                while t < end:
                    e = min(t + dt.timedelta(days=1), end)
                    out["sets"].append(self.analyze(max(t, start), e, by))
                    t = t + dt.timedelta(days=1)
            else:
                out = self.analyze(start, end, by)
            return self.send(200, out)
        if u.path.startswith("/api/v1/reports/weekly"):
            before_pods = NOW < dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc)
            if u.path.endswith("/weekly") and before_pods:
                return self.send(200, {"kind": "weekly", "periods": [], "latest": None})
            if u.path.endswith("/weekly"):
                return self.send(200, {"kind": "weekly", "latest": "2026-W47", "periods": [
                    {"id": "2026-W47", "start": "2026-11-16T00:00:00Z",
                     "end": "2026-11-23T00:00:00Z", "partial": False,
                     "url": "/api/v1/reports/weekly/2026-W47"}]})
            fmt = q.get("format", "json")
            out = subprocess.run([self.gpu_cost, "demo", "--format",
                                  "markdown" if fmt == "md" else "json"],
                                 check=True, capture_output=True, timeout=30).stdout
            return self.send(200, out, "text/markdown" if fmt == "md" else "application/json")
        if u.path == "/api/v1/reports/monthly":
            # The fake knows no months: the dashboard says there is no monthly report yet.
            return self.send(200, {"kind": "monthly", "periods": [], "latest": None})
        if u.path == "/api/v1/recommendations":
            fixture = os.path.join(os.path.dirname(__file__), "fixtures", "recommendations.json")
            with open(fixture) as f:
                return self.send(200, f.read())
        if u.path == "/api/v1/pods":
            return self.send(200, {"now": rfc3339(NOW), "pods": [], "count": 0, "matched": 0,
                                   "truncated": False})
        if u.path == "/api/v1/dimensions":
            # examples/config.json keeps no label dimensions.
            return self.send(200, {"dimensions": ["namespace", "team", "project", "model",
                                                  "capacity_type", "node", "pod", "workload"],
                                   "label_keys": []})
        return self.send(404, {"error": "not found"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--status", type=int, default=0)
    ap.add_argument("--gpu-cost")
    ap.add_argument("--token", help="answer 401 unless an API request carries Bearer TOKEN")
    ap.add_argument("--token-everywhere", action="store_true",
                    help="the page's files need the token too, as with --auth-delegate")
    ap.add_argument("--prices", help="price catalog for the costs (default examples/prices.json)")
    ap.add_argument("--now", help="RFC 3339 time the windows end at (before 2026-10-01: no data)")
    a = ap.parse_args()
    Handler.status = a.status
    Handler.gpu_cost = a.gpu_cost
    Handler.token = a.token
    Handler.token_everywhere = a.token_everywhere
    Handler.prices = a.prices
    if a.now:
        global NOW
        NOW = dt.datetime.strptime(a.now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(json.dumps({"msg": "listening", "port": srv.server_address[1]}), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
