"""`gpu-cost report --send-test-email / --send-test-webhook` against real receivers: Mailpit (the
pinned SMTP server of the e2e tools, built by scripts/e2e-build.sh) whose HTTP API says what
arrived, and a fake webhook receiver (an http.server in this test) that keeps what it was sent.
The figures must be the report's: the same JSON the controller serves.
"""

import hashlib
import hmac
import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from test_remote import Demo, _controller_path


def _money(v):
    return "${:,.2f}".format(v)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mailpit_path():
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    p = Path(os.environ.get("E2E_BIN") or cache / "gpu-cost-e2e" / "bin") / "mailpit"
    assert os.access(p, os.X_OK), "%s is missing: run scripts/e2e-build.sh" % p
    return str(p)


class Mailpit:
    """Mailpit on 127.0.0.1: SMTP and its HTTP API on free ports, its own database under tmp."""

    def __init__(self, tmp, *extra):
        self.smtp_port, self.http_port = _free_port(), _free_port()
        tmp = tmp / ("mailpit-%d" % self.smtp_port)
        tmp.mkdir()
        self.log = open(tmp / "mailpit.log", "wb")
        self.proc = subprocess.Popen(
            [_mailpit_path(), "--smtp", "127.0.0.1:%d" % self.smtp_port,
             "--listen", "127.0.0.1:%d" % self.http_port, "--database", str(tmp / "mail.db"),
             "--disable-version-check", "--smtp-disable-rdns"] + list(extra),
            stdout=self.log, stderr=self.log)
        self.api = "http://127.0.0.1:%d/api/v1" % self.http_port
        deadline = time.time() + 20
        while True:
            try:
                self.get("/messages")
                with socket.create_connection(("127.0.0.1", self.smtp_port), timeout=1):
                    break
            except OSError:
                assert self.proc.poll() is None, (tmp / "mailpit.log").read_text()
                assert time.time() < deadline, "mailpit did not start"
                time.sleep(0.1)
        self.url = "smtp://127.0.0.1:%d" % self.smtp_port

    def get(self, path):
        with urllib.request.urlopen(self.api + path, timeout=10) as r:
            return json.loads(r.read())

    def raw(self, mid):
        with urllib.request.urlopen(self.api + "/message/%s/raw" % mid, timeout=10) as r:
            return r.read()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def demo(cli, tmp_path_factory):
    d = Demo(_controller_path(cli), tmp_path_factory.mktemp("demo"))
    yield d
    d.stop()


@pytest.fixture
def mailpit(tmp_path):
    m = Mailpit(tmp_path)
    yield m
    m.stop()


@pytest.fixture(scope="module")
def report(cli, demo):
    """The weekly report's JSON, as the controller serves it."""
    return cli.ok("report", "weekly", "--format", "json", "--server", demo.url).json()


def test_email_arrives_once_with_both_parts_and_the_figures(cli, demo, report, mailpit):
    r = cli("report", "weekly", "--server", demo.url, "--send-test-email",
            "lead@example.com", "--smtp-server", mailpit.url, "--smtp-from",
            "gpu-cost@example.com", "--smtp-starttls", "none",
            "--dashboard-url", "https://gpu-cost.example.com/")
    assert r.code == 0, r
    assert "sent the weekly report 2026-W47 to lead@example.com" in r.out, r
    listing = mailpit.get("/messages")
    assert listing["total"] == 1, listing
    mid = listing["messages"][0]["ID"]
    msg = mailpit.get("/message/%s" % mid)
    assert [t["Address"] for t in msg["To"]] == ["lead@example.com"]
    assert msg["From"]["Address"] == "gpu-cost@example.com"
    assert msg["Subject"].startswith(report["title"]), msg["Subject"]
    total = _money(report["summary"]["total"]["cost"])
    change = _money(report["change"]["cost"])
    assert total in msg["Subject"]
    for part in (msg["Text"], msg["HTML"]):
        assert total in part, part[:2000]
        assert change.lstrip("-") in part
        for row in report["by_team"][:5]:
            assert row["team"] in part
            assert _money(row["cost"]) in part
    assert "<table" in msg["HTML"] and "<img" not in msg["HTML"]
    assert 'href="https://gpu-cost.example.com/"' in msg["HTML"]
    raw = mailpit.raw(mid)
    assert b"multipart/alternative" in raw
    assert max(len(line) for line in raw.split(b"\r\n")) <= 78
    assert msg["MessageID"] and "Date" not in (msg.get("Error") or "")


def test_non_ascii_team_names_arrive_decoded(cli, report, mailpit, tmp_path):
    rep = json.loads(json.dumps(report))
    rep["title"] = "GPU-Kosten, Woche 2026-W47 \u2014 \u00dcbersicht"
    rep["by_team"][0]["team"] = "F\u00f6rschung-\u65e5\u672c"
    f = tmp_path / "report.json"
    f.write_text(json.dumps(rep, ensure_ascii=False), encoding="utf-8")
    r = cli("report", "--from-file", f, "--send-test-email", "lead@example.com",
            "--smtp-server", mailpit.url, "--smtp-from", "gpu-cost@example.com",
            "--smtp-starttls", "none")
    assert r.code == 0, r
    msg = mailpit.get("/message/%s" % mailpit.get("/messages")["messages"][0]["ID"])
    assert msg["Subject"].startswith(rep["title"])
    assert "F\u00f6rschung-\u65e5\u672c" in msg["Text"]
    assert "F\u00f6rschung-\u65e5\u672c" in msg["HTML"]
    raw = mailpit.raw(msg["ID"])
    raw.decode("ascii")  # every byte on the wire is ASCII: headers and bodies encoded


def test_auth_plain_and_login_and_a_wrong_password(cli, report, tmp_path):
    auth = tmp_path / "auth"
    auth.write_text("sender:s3cret\n")
    m = Mailpit(tmp_path, "--smtp-auth-file", str(auth), "--smtp-auth-allow-insecure")
    try:
        f = tmp_path / "report.json"
        f.write_text(json.dumps(report))
        pw = tmp_path / "pw"
        pw.write_text("s3cret\n")
        base = ["report", "--from-file", f, "--send-test-email", "lead@example.com",
                "--smtp-server", m.url, "--smtp-from", "gpu-cost@example.com",
                "--smtp-starttls", "none", "--smtp-user", "sender"]
        for mech in ("plain", "login"):
            r = cli(*(base + ["--smtp-password-file", pw, "--smtp-auth", mech]))
            assert r.code == 0, r
        bad = tmp_path / "bad"
        bad.write_text("wrong")
        r = cli(*(base + ["--smtp-password-file", bad]))
        assert r.code == 1 and "wrong" not in r.err and "s3cret" not in r.err, r
        r = cli(*base)
        assert r.code == 2 and "needs a password" in r.err, r
        assert m.get("/messages")["total"] == 2
    finally:
        m.stop()


@pytest.mark.skipif(not shutil.which("openssl"), reason="needs the openssl program")
def test_starttls_required_verifies_and_refuses_plain(cli, report, tmp_path, mailpit):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    tls = Mailpit(tmp_path, "--smtp-tls-cert", str(cert), "--smtp-tls-key", str(key),
                  "--smtp-require-starttls")
    try:
        f = tmp_path / "report.json"
        f.write_text(json.dumps(report))
        base = ["report", "--from-file", f, "--send-test-email", "lead@example.com",
                "--smtp-from", "gpu-cost@example.com"]
        r = cli(*(base + ["--smtp-server", tls.url, "--smtp-cacert", cert]))
        assert r.code == 0, r
        assert tls.get("/messages")["total"] == 1
        # Without the CA the certificate is refused; a server without STARTTLS is refused.
        r = cli(*(base + ["--smtp-server", tls.url, "--smtp-cacert", f]))
        assert r.code == 1, r
        r = cli(*(base + ["--smtp-server", mailpit.url]))
        assert r.code == 1, r
        assert mailpit.get("/messages")["total"] == 0
    finally:
        tls.stop()


class FakeReceiver:
    """A fake webhook receiver: keeps each POST's headers and body, answers 200 (or `status`)."""

    def __init__(self, status=200):
        self.got = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                outer.got.append((dict(self.headers), self.rfile.read(n)))
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d/hook/secret-path" % self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def receiver():
    r = FakeReceiver()
    yield r
    r.close()


def test_slack_payload(cli, demo, report, receiver):
    r = cli("report", "weekly", "--server", demo.url, "--send-test-webhook", receiver.url,
            "--webhook-format", "slack", "--dashboard-url", "https://gpu-cost.example.com/")
    assert r.code == 0, r
    assert "secret-path" not in r.out
    assert len(receiver.got) == 1
    body = json.loads(receiver.got[0][1])
    blocks = body["blocks"]
    assert 0 < len(blocks) <= 50
    assert blocks[0]["type"] == "header"
    assert _money(report["summary"]["total"]["cost"]) in body["text"]
    texts = json.dumps(blocks)
    assert report["by_team"][0]["team"] in texts
    assert any(b["type"] == "actions" and b["elements"][0]["url"] ==
               "https://gpu-cost.example.com/" for b in blocks)
    for b in blocks:
        if "text" in b and b["type"] == "section":
            assert len(b["text"]["text"]) <= 3000
        assert len(b.get("fields", [])) <= 10


def test_teams_card(cli, report, receiver, tmp_path):
    f = tmp_path / "report.json"
    f.write_text(json.dumps(report))
    r = cli("report", "--from-file", f, "--send-test-webhook", receiver.url,
            "--webhook-format", "teams")
    assert r.code == 0, r
    raw = receiver.got[0][1]
    assert len(raw) <= 28000
    card = json.loads(raw)
    assert card["type"] == "message"
    att = card["attachments"][0]
    assert att["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert att["content"]["type"] == "AdaptiveCard"
    facts = att["content"]["body"][1]["facts"]
    assert facts[0]["value"] == _money(report["summary"]["total"]["cost"])


def test_json_is_signed(cli, report, receiver, tmp_path, monkeypatch):
    f = tmp_path / "report.json"
    f.write_text(json.dumps(report))
    secret = tmp_path / "secret"
    secret.write_text("hook-secret\n")
    r = cli("report", "--from-file", f, "--send-test-webhook", receiver.url,
            "--webhook-secret-file", secret)
    assert r.code == 0, r
    headers, raw = receiver.got[0]
    want = hmac.new(b"hook-secret", raw, hashlib.sha256).hexdigest()
    assert headers["X-Gpu-Cost-Signature"] == "sha256=" + want
    doc = json.loads(raw)
    assert doc["type"] == "gpu-cost.report"
    assert doc["total"]["cost"] == pytest.approx(report["summary"]["total"]["cost"])
    assert doc["teams"][0]["name"] == report["by_team"][0]["team"]


def test_refusals_name_the_problem(cli, report, tmp_path):
    f = tmp_path / "report.json"
    f.write_text(json.dumps(report))
    r = cli("report", "--from-file", f, "--send-test-email", "not-an-address")
    assert r.code == 2 and "not an address" in r.err, r
    r = cli("report", "--from-file", f, "--send-test-email", "a@example.com")
    assert r.code == 2 and "SMTP server" in r.err, r
    r = cli("report", "--from-file", f, "--send-test-webhook", "ftp://x")
    assert r.code == 2 and "https://" in r.err, r
    r = cli("report", "--from-file", f, "--send-test-webhook", "http://x", "--webhook-format",
            "discord")
    assert r.code == 2 and "slack, teams or json" in r.err, r
    bad = tmp_path / "bad.json"
    bad.write_text('{"title": 5}')
    r = cli("report", "--from-file", bad, "--send-test-webhook", "http://127.0.0.1:1/")
    assert r.code == 2 and "\"title\"" in r.err, r
    failing = FakeReceiver(status=500)
    try:
        r = cli("report", "--from-file", f, "--send-test-webhook", failing.url)
        assert r.code == 1 and "answered 500" in r.err and "secret-path" not in r.err, r
    finally:
        failing.close()
