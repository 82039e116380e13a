"""A small HTTP client for the end-to-end harness: the Kubernetes API (TLS verified against the
cluster's CA, bearer token, one kept-alive connection) and etcd's JSON gateway.

Standard library only. Nothing here knows about GPUs or the controller; sim.py and the tests
build on it.
"""

import base64
import http.client
import json
import os
import shlex
import ssl
import time
import urllib.parse
import urllib.request


class ApiError(Exception):
    def __init__(self, method, path, status, body):
        self.method, self.path, self.status, self.body = method, path, status, body
        msg = body.get("message") if isinstance(body, dict) else body
        super().__init__("%s %s: HTTP %d: %s" % (method, path, status, msg))


def read_env(cluster_dir):
    """DIR/env (written by scripts/e2e-cluster.sh) as a dict; values are shell-quoted."""
    env = {}
    with open(os.path.join(cluster_dir, "env")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("export "):
                continue
            key, _, val = line.partition("=")
            words = shlex.split(val) if val else [""]
            env[key] = words[0] if words else ""
    return env


class Api:
    """One connection to kube-apiserver; reconnects after a broken connection.

    request() returns (status, decoded JSON body or None); call() raises ApiError unless the
    status is 2xx (or listed in ok).
    """

    def __init__(self, server, ca_file, token, timeout=30.0):
        u = urllib.parse.urlparse(server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=ca_file)
        self.token = token
        self.timeout = timeout
        self.conn = None
        self.requests = 0

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                timeout=self.timeout)

    def raw(self, method, path, body=None, content_type="application/json", retries=3):
        """(status, body bytes)."""
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        last = None
        for attempt in range(retries):
            if self.conn is None:
                self._connect()
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                self.requests += 1
                return resp.status, raw
            except (http.client.HTTPException, OSError) as e:
                # A kept-alive connection the server closed, or a restarted server: reconnect.
                # Writes are retried only when they cannot have reached the server (the
                # connection was refused or dropped before any answer).
                last = e
                self.close()
                # An SSL EOF on sending: the server had closed the idle kept-alive
                # connection, so the request never reached it.
                if method != "GET" and not isinstance(
                        e, (http.client.RemoteDisconnected, ConnectionResetError,
                            BrokenPipeError, ConnectionRefusedError, ssl.SSLEOFError)):
                    raise
                time.sleep(0.2 * (attempt + 1))
        raise last

    def request(self, method, path, body=None, content_type="application/json", retries=3):
        """(status, decoded JSON body, or the text when it is not one JSON document, or
        None when empty)."""
        status, raw = self.raw(method, path, body, content_type, retries)
        try:
            doc = json.loads(raw) if raw else None
        except ValueError:
            doc = raw.decode("utf-8", "replace")
        return status, doc

    def call(self, method, path, body=None, content_type="application/json", ok=()):
        status, doc = self.request(method, path, body, content_type)
        if not (200 <= status < 300 or status in ok):
            raise ApiError(method, path, status, doc)
        return doc

    def get(self, path, ok=()):
        return self.call("GET", path, ok=ok)

    def exists(self, path):
        status, _ = self.request("GET", path)
        if status == 404:
            return False
        if status != 200:
            raise ApiError("GET", path, status, None)
        return True

    def merge_patch(self, path, body):
        return self.call("PATCH", path, body, "application/merge-patch+json")

    def wait_ready(self, timeout=60.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                status, _ = self.request("GET", "/readyz", retries=1)
                if status == 200:
                    return
            except OSError:
                pass
            self.close()
            time.sleep(0.2)
        raise TimeoutError("kube-apiserver not ready after %.0f s" % timeout)

    def metrics(self):
        """Prometheus text of /metrics as {(name, frozenset(labels)): value}."""
        status, raw = self.raw("GET", "/metrics")
        text = raw.decode()
        if status != 200:
            raise ApiError("GET", "/metrics", status, text[:200])
        out = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            head, _, val = line.rpartition(" ")
            name, _, labels = head.partition("{")
            lab = {}
            for part in _split_labels(labels.rstrip("}")):
                k, _, v = part.partition("=")
                lab[k] = v.strip('"')
            try:
                out[(name, frozenset(lab.items()))] = float(val)
            except ValueError:
                pass
        return out


def _split_labels(s):
    parts, cur, quoted = [], "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    return parts


def metric(metrics, name, **labels):
    """Sum of the samples of `name` whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, lab), v in metrics.items() if n == name and want <= lab)


class Etcd:
    """etcd's v3 JSON gateway (plain HTTP on loopback in the e2e cluster)."""

    def __init__(self, url):
        self.url = url.rstrip("/")

    def _post(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    @staticmethod
    def _b64(s):
        return base64.b64encode(s if isinstance(s, bytes) else s.encode()).decode()

    def put(self, key, value):
        """Returns the revision the put created."""
        doc = self._post("/v3/kv/put", {"key": self._b64(key), "value": self._b64(value)})
        return int(doc["header"]["revision"])

    def revision(self):
        doc = self._post("/v3/kv/range", {"key": self._b64("/"), "limit": 1})
        return int(doc["header"]["revision"])

    def compact(self, revision):
        self._post("/v3/kv/compaction", {"revision": str(revision), "physical": True})
