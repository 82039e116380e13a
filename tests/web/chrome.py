"""Drives headless Chromium over the DevTools protocol on a pipe (no WebSocket library needed).

Why not `--dump-dom --window-size`: headless Chromium lays pages out at least 500 CSS pixels wide
whatever the window size, so a 375 px phone needs Emulation.setDeviceMetricsOverride; and the
protocol reports uncaught exceptions and console errors as events instead of log lines to grep.
"""

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

CHROMIUM = os.environ.get("CHROMIUM", "chromium")


def find_chromium():
    """The browser's path, or None when it is not installed."""
    return shutil.which(CHROMIUM)


class ChromeError(Exception):
    pass


class Chrome:
    """One headless browser, as a context manager. Every wait is bounded by `timeout` seconds."""

    def __init__(self, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="gc-web-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # runs in the child: the protocol is on fds 3 (commands) and 4 (replies)
            # dup first: dup2 onto the same number would keep the close-on-exec flag
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [
            find_chromium() or CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--remote-debugging-pipe", "--user-data-dir=" + self.profile, "--no-first-run",
            "--disable-dev-shm-usage",  # containers often give /dev/shm 64 MiB
            "--disk-cache-dir=" + os.path.join(self.profile, "cache"),  # not in $HOME/.cache
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            "--disable-sync", "--disable-component-update", "--mute-audio", "--hide-scrollbars",
            "about:blank",
        ]
        self.stderr = open(os.path.join(self.profile, "stderr.log"), "wb")
        # Python's own descriptors are not inheritable, so only 0-4 reach the browser.
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.stderr,
                                     stderr=self.stderr, preexec_fn=wire, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self._next_id = 0
        self._target = None
        self._replies = {}
        self._cond = threading.Condition()
        self.events = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_child, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._replies[None] = True  # the browser went away
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._cond:
                        self._replies[msg["id"]] = msg
                        self._cond.notify_all()
                else:
                    self.events.put(msg)

    def send(self, method, params=None, session=None):
        """Sends one command and returns its result; raises ChromeError on an error or timeout."""
        self._next_id += 1
        mid = self._next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while mid not in self._replies:
                if None in self._replies:
                    raise ChromeError("chromium exited: " + self.log_tail())
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChromeError("no reply to %s within %ss" % (method, self.timeout))
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise ChromeError("%s: %s" % (method, reply["error"]))
        return reply.get("result", {})

    def log_tail(self):
        try:
            with open(os.path.join(self.profile, "stderr.log"), "rb") as f:
                return f.read()[-2000:].decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self):
        if self.proc.poll() is None:
            try:
                self.send("Browser.close")
            except (ChromeError, OSError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def open_page(self, url, width, height, ready_js, extra_headers=None):
        """Opens url in a new tab laid out at width x height CSS pixels and waits until the
        expression ready_js is truthy. Returns a Page holding the errors seen on the way. The
        previous tab is closed: one page at a time, so none keeps running (or retrying) behind."""
        if self._target:
            self.send("Target.closeTarget", {"targetId": self._target})
            self._target = None
        target = self._target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget",
                            {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for m in ("Runtime.enable", "Page.enable", "Log.enable", "Network.enable"):
            self.send(m, session=session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": width < 600}, session=session)
        if extra_headers:
            self.send("Network.setExtraHTTPHeaders", {"headers": extra_headers}, session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        deadline = time.monotonic() + self.timeout
        while True:
            page.drain()
            try:
                if page.eval("!!(" + ready_js + ")"):
                    break
            except ChromeError:
                pass  # the old document is going or the new one is not there yet
            if time.monotonic() > deadline:
                raise ChromeError("page not ready within %ss: %s" % (self.timeout, ready_js))
            time.sleep(0.1)
        time.sleep(0.2)  # late errors (a failing image, a handler after render) still count
        page.drain()
        return page


class Page:
    def __init__(self, chrome, session):
        self.chrome = chrome
        self.session = session
        self.errors = []  # uncaught exceptions, console.error, other error log entries, as text
        self.network_errors = []  # failed loads and HTTP errors (expected in error-state tests)

    def drain(self):
        while True:
            try:
                ev = self.chrome.events.get_nowait()
            except queue.Empty:
                return
            if ev.get("sessionId") != self.session:
                continue
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                text = d.get("exception", {}).get("description") or d.get("text")
                self.errors.append("uncaught: %s" % text)
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                args = [a.get("value", a.get("description")) for a in p.get("args", [])]
                self.errors.append("console.%s: %s" % (p["type"], " ".join(map(str, args))))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                e = p["entry"]
                text = "log: %s %s" % (e.get("text"), e.get("url", ""))
                (self.network_errors if e.get("source") == "network" else self.errors).append(text)

    def eval(self, js):
        """The value of a JavaScript expression (JSON-serialisable), awaiting a promise."""
        r = self.chrome.send("Runtime.evaluate", {"expression": js, "returnByValue": True,
                                                  "awaitPromise": True}, session=self.session)
        if "exceptionDetails" in r:
            raise ChromeError("evaluate %s: %s" % (js[:80], r["exceptionDetails"].get("text")))
        return r.get("result", {}).get("value")

    def screenshot(self, path, width, height=None):
        """A PNG of the page's top `height` pixels (default: the whole page; the viewport grows
        to fit it, so the layout is the one a window of that size shows)."""
        full = int(self.eval("Math.ceil(document.documentElement.scrollHeight)"))
        height = min(height or full, full)
        self.chrome.send("Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": height, "deviceScaleFactor": 1,
                          "mobile": width < 600}, session=self.session)
        time.sleep(0.3)
        r = self.chrome.send("Page.captureScreenshot", {"format": "png"}, session=self.session)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))
