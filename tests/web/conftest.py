"""Fixtures for the dashboard's tests: the real controller in demo mode, a fake API for the error
states, and one headless Chromium for the session (tests/web/README.md)."""

import json
import os
import select
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree (tests/e2e's modules too)

import chrome  # noqa: E402

START_TIMEOUT = 60  # seconds for a server to say it listens
CHROME_TIMEOUT = 60  # seconds for any one browser step


def _binary(env, default):
    path = os.environ.get(env) or str(REPO / "build" / default)
    if not os.access(path, os.X_OK):
        pytest.fail("%s: no executable at %s (run `make web-test`, or set %s)" % (env, path, env),
                    pytrace=False)
    return path


class Server:
    """A child process that logs JSON lines, one of them {"msg":"listening",...,"port":N}."""

    def __init__(self, args, env=None):
        self.log = []
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env, cwd=str(REPO))
        self.port = self._wait_port()
        self.base = "http://127.0.0.1:%d/" % self.port
        # Keep reading its log, so that a chatty server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()

    def _read_rest(self):
        try:
            for line in iter(self.proc.stdout.readline, b""):
                self.log.append(line.decode("utf-8", "replace").rstrip("\n"))
                del self.log[:-1000]
        except (OSError, ValueError):
            pass

    def _wait_port(self):
        deadline = time.monotonic() + START_TIMEOUT
        buf = b""
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if not r:
                if self.proc.poll() is not None:
                    break
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self.log.append(line.decode("utf-8", "replace"))
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get("msg") == "listening" and msg.get("port"):
                    return int(msg["port"])
        self.stop()
        raise AssertionError("server did not log its port within %ss:\n%s"
                             % (START_TIMEOUT, "\n".join(self.log[-30:])))

    def with_headers(self, headers):
        """The same server, with these headers on every request of get() and json()."""
        other = object.__new__(Server)
        other.__dict__.update(self.__dict__)
        other.headers = dict(headers)
        return other

    def get(self, path, headers=None):
        """(status, headers, body bytes) of GET path, relative to the server's root."""
        h = dict(getattr(self, "headers", {}))
        h.update(headers or {})
        req = urllib.request.Request(self.base + path.lstrip("/"), headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    def json(self, path):
        status, _, body = self.get(path)
        assert status == 200, "%s: HTTP %d %s" % (path, status, body[:300])
        return json.loads(body)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if getattr(self, "_drain", None):
            self._drain.join(timeout=10)
        self.proc.stdout.close()


@pytest.fixture(scope="session")
def browser():
    if not chrome.find_chromium():
        pytest.fail("chromium is not installed (scripts/setup.sh installs it)", pytrace=False)
    with chrome.Chrome(timeout=CHROME_TIMEOUT) as c:
        yield c


@pytest.fixture(scope="session")
def demo():
    """The real gpu-cost-controller serving the bundled example cluster."""
    binary = _binary("GPU_COST_CONTROLLER", "gpu-cost-controller")
    srv = Server([binary, "--demo", "--listen", "127.0.0.1:0"])
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def labelled_demo(tmp_path_factory):
    """The demo keeping two labels as dimensions (labels.dimensions in --config)."""
    binary = _binary("GPU_COST_CONTROLLER", "gpu-cost-controller")
    cfg = json.loads((REPO / "examples" / "config.json").read_text())
    cfg["labels"] = {"dimensions": ["cost-center", "app"]}
    path = tmp_path_factory.mktemp("labelled") / "config.json"
    path.write_text(json.dumps(cfg))
    srv = Server([binary, "--demo", "--listen", "127.0.0.1:0", "--config", str(path)])
    yield srv
    srv.stop()


@pytest.fixture
def fake():
    """Starts the fake API (tests/web/fake_api.py) with the given flags; stops it after the test."""
    started = []

    def start(*flags):
        args = [sys.executable, str(HERE / "fake_api.py")] + list(flags)
        if "--status" not in flags:
            args += ["--gpu-cost", _binary("GPU_COST", "gpu-cost")]
        srv = Server(args)
        started.append(srv)
        return srv

    yield start
    for s in started:
        s.stop()


READY = "['ready', 'error'].includes(document.documentElement.dataset.state)"


def open_dashboard(browser, url, width=1280, height=900):
    return browser.open_page(url, width, height, READY)
