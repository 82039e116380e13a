"""The controller under test for the robustness suite: `gpu-cost-controller --demo` on free ports
of 127.0.0.1, the API and the probes apart (--probe-listen), its /proc figures, raw clients."""

import json
import os
import re
import resource
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def controller_path():
    path = os.environ.get("GPU_COST_CONTROLLER") or str(REPO / "build" / "gpu-cost-controller")
    if not os.access(path, os.X_OK):
        pytest.fail("%s is missing: run `make robustness-test` (it builds it first)" % path,
                    pytrace=False)
    return path


class Server:
    """A running controller: its pid, API port, probe port and what /proc says about it."""

    def __init__(self, proc, api_port, probe_port, log_path):
        self.proc = proc
        self.pid = proc.pid
        self.api_port = api_port
        self.probe_port = probe_port
        self.log_path = log_path

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def fds(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def alive(self):
        return self.proc.poll() is None


def _ports(log_path, deadline):
    api = probe = None
    while time.monotonic() < deadline and (api is None or probe is None):
        text = Path(log_path).read_text(errors="replace")
        for line in text.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("msg") == "listening":
                api = int(rec["port"])
            elif rec.get("msg") == "listening for probes":
                probe = int(rec["port"])
        time.sleep(0.05)
    return api, probe


def _controller(tmp_path_factory, extra=()):
    """Starts a controller (with extra flags), yields its Server, and stops it (exit 0 after
    SIGTERM)."""
    # The suite holds over 1,000 sockets at once; the server inherits the limit but keeps its own
    # cap (256 connections, docs/httpd.md).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    log_path = tmp_path_factory.mktemp("robustness") / "controller.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([controller_path(), "--demo", "--listen", "127.0.0.1:0",
                             "--probe-listen", "127.0.0.1:0", *extra], stdout=log, stderr=log)
    api, probe = _ports(log_path, time.monotonic() + 20)
    if api is None or probe is None:
        proc.kill()
        pytest.fail("the controller did not log its ports:\n" + Path(log_path).read_text())
    srv = Server(proc, api, probe, log_path)
    yield srv
    proc.terminate()
    try:
        assert proc.wait(timeout=10) == 0, "the controller did not exit 0 after SIGTERM"
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The controller every attack shares, whose descriptors and RSS the last test bounds."""
    yield from _controller(tmp_path_factory)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """A controller serving its API over TLS with a certificate made here (EC P-256, for
    127.0.0.1); its .ca is the file a client trusts."""
    d = tmp_path_factory.mktemp("tls")
    crt, key = d / "tls.crt", d / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key), "-out", str(crt),
                    "-days", "1", "-subj", "/CN=gpu-cost", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    for srv in _controller(tmp_path_factory, ["--tls-cert-file", str(crt), "--tls-key-file",
                                              str(key)]):
        srv.ca = str(crt)
        yield srv


@pytest.fixture
def own_server(tmp_path_factory):
    """A controller of its own, for an attack whose memory should not count against that bound."""
    yield from _controller(tmp_path_factory)


def connect(port, source="127.0.0.1", timeout=5.0):
    """A TCP connection to 127.0.0.1:port from the loopback address source (127.0.0.x), so that
    one test can be many clients to the per-address cap."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_response(s, limit=1 << 20):
    """Reads one HTTP/1.1 response (Content-Length framed) from s: (status, headers, body), or
    None if the server closed first."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            return None
        buf += chunk
        assert len(buf) < limit, "head over %d bytes" % limit
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ", lines[0])
    assert m, "not a status line: %r" % lines[0]
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return int(m.group(1)), headers, rest[:n]
