"""The remote commands (costs, report, recommendations --server) against the real controller in
--demo mode: what the CLI prints must be what the API answers, formatted by the same code as the
offline analyzer's tables; errors carry the server's message and a non-zero exit.

The controller is $GPU_COST_CONTROLLER, or gpu-cost-controller next to $GPU_COST.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, analyze_args

W47 = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"  # the example's last complete week
USD_TOL = 0.005


def _controller_path(cli):
    p = os.environ.get("GPU_COST_CONTROLLER") or str(Path(cli.path).with_name(
        "gpu-cost-controller"))
    if not os.access(p, os.X_OK):
        pytest.fail("%s is not executable: set GPU_COST_CONTROLLER" % p, pytrace=False)
    return p


class Demo:
    """gpu-cost-controller --demo on 127.0.0.1, port 0; the port is read from its log."""

    def __init__(self, binary, tmp, extra=()):
        self.log_path = tmp / "controller.log"
        self.log = open(self.log_path, "wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_COST_")}
        self.proc = subprocess.Popen([binary, "--demo", "--listen", "127.0.0.1:0"] + list(extra),
                                     stdout=self.log, stderr=self.log, env=env)
        self.port = None
        deadline = time.time() + 20
        while time.time() < deadline and self.port is None:
            if self.proc.poll() is not None:
                raise AssertionError("controller exited %s:\n%s" % (
                    self.proc.returncode, self.log_path.read_text()))
            for line in self.log_path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "listening" and rec.get("port"):
                    self.port = int(rec["port"])
            time.sleep(0.05)
        assert self.port, "no listening line:\n%s" % self.log_path.read_text()
        self.url = "http://127.0.0.1:%d" % self.port

    def get(self, path, **params):
        url = self.url + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def json(self, path, **params):
        status, body = self.get(path, **params)
        assert status == 200, (path, status, body[:500])
        return json.loads(body)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@pytest.fixture(scope="module")
def demo(cli, tmp_path_factory):
    d = Demo(_controller_path(cli), tmp_path_factory.mktemp("demo"))
    yield d
    assert d.stop() == 0, "SIGTERM must stop the demo with status 0:\n%s" % (
        d.log_path.read_text())


def remote(cli, demo, *args):
    return cli(*(list(args) + ["--server", demo.url]))


# ---- costs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("window", [W47, "lastweek", "7d", "2026-11-20T09:30:00Z,2026-11-23T06:00:00Z"])
@pytest.mark.parametrize("by", ["team,project", "namespace", "model,capacity_type", "node",
                                "workload,team"])
def test_costs_json_is_the_apis_answer(cli, demo, window, by):
    r = remote(cli, demo, "costs", "--window", window, "--by", by, "--format", "json")
    assert r.code == 0, r
    assert r.json() == demo.json("/api/v1/costs", window=window, by=by)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
@pytest.mark.parametrize("by", ["team,project", "namespace", "model,capacity_type", "workload"])
def test_costs_table_equals_the_offline_analyzers(cli, demo, fmt, by):
    """The week is over before the example's `now`: the controller's API and the offline
    analyzer of the same dumps must print the same table, character for character."""
    got = remote(cli, demo, "costs", "--window", W47, "--by", by, "--format", fmt)
    assert got.code == 0, got
    want = cli.ok(*analyze_args(W47, by=by, fmt=fmt))
    assert got.out == want.out


def test_allocation_by_controller_is_opencosts_shape(cli, demo):
    """/allocation by controller and controllerKind: OpenCost's names ("kind:name", the kind in
    lower case, __unallocated__ for a pod without one), the name and kind as properties, and
    the same money as by namespace."""
    def one_set(aggregate):
        doc = demo.json("/allocation", window=W47, aggregate=aggregate)
        assert doc["code"] == 200 and len(doc["data"]) == 1
        return doc["data"][0]

    by_ns = sum(a["gpuCost"] for a in one_set("namespace").values())
    assert by_ns > 0
    for aggregate in ("controller", "controllerKind", "controllerKind,controller"):
        allocs = one_set(aggregate)
        assert abs(sum(a["gpuCost"] for a in allocs.values()) - by_ns) < 1e-4 * len(allocs)
        for name, a in allocs.items():
            assert a["name"] == name
            key = name.split("/")[-1]
            props = a["properties"]
            if key == "__unallocated__":
                assert "controller" not in props and "controllerKind" not in props, a
            elif aggregate == "controllerKind":
                assert key == key.lower() and props["controllerKind"] == key, a
            else:
                kind, _, ctl = key.rpartition(":")
                assert props["controller"] == ctl and ":" not in ctl, a
                assert kind == kind.lower(), a
    kinds = set(one_set("controllerKind"))
    assert kinds - {"__unallocated__"}, "the demo's pods name no controller kind: %s" % kinds


def test_costs_table_figures_are_the_apis(cli, demo):
    doc = demo.json("/api/v1/costs", window="lastweek", by="team")
    r = remote(cli, demo, "costs", "--window", "lastweek", "--by", "team")
    assert r.code == 0, r
    lines = r.out.splitlines()
    for g in doc["groups"]:
        row = [ln for ln in lines if ln.split()[:1] == [g["keys"]["team"]]]
        assert len(row) == 1, (g, r.out)
        # Rows are rounded so that they add up to the rounded total: a cent either way.
        printed = float(row[0].split()[2].lstrip("$").replace(",", ""))
        assert abs(printed - g["cost_usd"]) <= 0.01 + 1e-9, (g, row[0])
    total = [ln for ln in lines if ln.startswith("Total")]
    assert money(doc["total"]["cost_usd"]) in total[0], r.out


def test_costs_defaults_are_seven_days_by_team_and_project(cli, demo):
    r = remote(cli, demo, "costs", "--format", "json")
    assert r.code == 0, r
    assert r.json() == demo.json("/api/v1/costs", window="7d", by="team,project")


def test_costs_step_prints_each_step_and_they_add_up(cli, demo):
    doc = demo.json("/api/v1/costs", window=W47, by="team", step="1d")
    sets = doc["sets"]
    assert len(sets) == 7
    whole = demo.json("/api/v1/costs", window=W47, by="team")
    assert abs(sum(s["total"]["cost_usd"] for s in sets) - whole["total"]["cost_usd"]) < 1e-6
    r = remote(cli, demo, "costs", "--window", W47, "--by", "team", "--step", "1d")
    assert r.code == 0, r
    heads = re.findall(r"^(\S+Z) to (\S+Z)$", r.out, re.M)
    assert heads == [(s["window"]["start"], s["window"]["end"]) for s in sets]
    totals = [ln for ln in r.out.splitlines() if ln.startswith("Total")]
    assert [t.split()[2] for t in totals] == [money(s["total"]["cost_usd"]) for s in sets]
    j = remote(cli, demo, "costs", "--window", W47, "--by", "team", "--step", "1d",
               "--format", "json")
    assert j.json() == doc


def test_costs_filters(cli, demo):
    r = remote(cli, demo, "costs", "--window", W47, "--by", "project", "--team", "research",
               "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    assert doc == demo.json("/api/v1/costs", window=W47, by="project", team="research")
    whole = demo.json("/api/v1/costs", window=W47, by="team")
    research = [g for g in whole["groups"] if g["keys"]["team"] == "research"][0]
    assert abs(doc["total"]["cost_usd"] - research["cost_usd"]) < 1e-6
    r = remote(cli, demo, "costs", "--window", W47, "--namespace", "sandbox", "--format", "json")
    assert r.code == 0, r
    assert r.json() == demo.json("/api/v1/costs", window=W47, namespace="sandbox")


def test_costs_environment_names_the_server(cli, demo):
    cp = subprocess.run([cli.path, "costs", "--window", W47, "--format", "json"],
                        capture_output=True, text=True, timeout=60,
                        env=dict(os.environ, GPU_COST_SERVER=demo.url + "/"))
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout) == demo.json("/api/v1/costs", window=W47)


# ---- report, recommendations -------------------------------------------------------------------

def test_report_weekly_latest_is_the_apis_markdown(cli, demo):
    status, body = demo.get("/api/v1/reports/weekly/latest", format="md")
    assert status == 200
    r = remote(cli, demo, "report", "weekly")
    assert r.code == 0, r
    assert r.out.rstrip("\n") == body.decode().rstrip("\n")
    assert r.out.startswith("# GPU spend, week 2026-W47")
    week = demo.json("/api/v1/reports/weekly/latest")
    assert money(week["summary"]["total"]["cost_usd"]) in r.out


def test_report_monthly_is_the_apis(cli, demo):
    listing = demo.json("/api/v1/reports/monthly")
    assert listing["kind"] == "monthly" and listing["periods"], listing
    month = listing["periods"][0]["id"]
    status, body = demo.get("/api/v1/reports/monthly/" + month, format="md")
    assert status == 200
    for args in (["report", "monthly", month], ["report", "--period", "monthly", month]):
        r = remote(cli, demo, *args)
        assert r.code == 0, r
        assert r.out.rstrip("\n") == body.decode().rstrip("\n")
    r = remote(cli, demo, "report", "--period", "monthly", month, "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    assert doc == demo.json("/api/v1/reports/monthly/" + month)
    assert doc["kind"] == "monthly" and doc["period"]["month"] == month
    # The running month has a forecast with its method; a complete one has none.
    assert (doc["forecast"] is None) == (not doc["period"]["partial"])


def test_report_by_id_and_json(cli, demo):
    r = remote(cli, demo, "report", "daily", "2026-11-20", "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    assert doc == demo.json("/api/v1/reports/daily/2026-11-20")
    assert doc["kind"] == "daily"
    day = demo.json("/api/v1/costs", window="2026-11-20T00:00:00Z,2026-11-21T00:00:00Z")
    assert abs(doc["summary"]["total"]["cost_usd"] - day["total"]["cost_usd"]) < 1e-6


def test_recommendations_json_and_table(cli, demo):
    doc = demo.json("/api/v1/recommendations")
    j = remote(cli, demo, "recommendations", "--format", "json")
    assert j.code == 0, j
    assert j.json() == doc
    t = remote(cli, demo, "recommendations")
    assert t.code == 0, t
    assert t.out.startswith("KIND")
    findings = doc.get("findings") or []
    for f in findings[:20]:
        assert f["kind"] in t.out
    if not findings:
        assert "(no findings)" in t.out


# ---- errors ------------------------------------------------------------------------------------

def test_bad_window_is_the_servers_400_message(cli, demo):
    status, body = demo.get("/api/v1/costs", window="fortnight")
    assert status == 400
    msg = json.loads(body)["error"]
    r = remote(cli, demo, "costs", "--window", "fortnight")
    assert r.code == 2, r
    assert msg in r.err and "400" in r.err, r
    assert r.out == ""


def test_bad_grouping_and_unknown_report(cli, demo):
    r = remote(cli, demo, "costs", "--by", "colour")
    assert r.code == 2 and "by" in r.err and "colour" in r.err, r
    r = remote(cli, demo, "report", "weekly", "1999-W01")
    assert r.code == 2 and "404" in r.err, r
    r = remote(cli, demo, "report", "yearly")
    assert r.code == 2 and "daily, weekly or monthly" in r.err, r


def test_unreachable_server_fails_with_the_reason(cli):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    r = cli("costs", "--server", "http://127.0.0.1:%d" % port, "--timeout", "5s")
    assert r.code == 1, r
    assert "127.0.0.1:%d" % port in r.err and "onnect" in r.err, r


def test_missing_or_bad_server_is_a_usage_error(cli):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_COST_")}
    cp = subprocess.run([cli.path, "costs"], capture_output=True, text=True, env=env,
                        timeout=30)
    assert cp.returncode == 2 and "--server" in cp.stderr, cp.stderr
    r = cli("costs", "--server", "ftp://example.com")
    assert r.code == 2 and "http://" in r.err, r
    r = cli("costs", "--server", "http://127.0.0.1:1", "--token-file", "/nonexistent/token")
    assert r.code == 2 and "/nonexistent/token" in r.err, r


def one_answer(status, body):
    """A server on 127.0.0.1 that answers one GET with status and body; returns (url, seen,
    thread): seen gets the request's path and Authorization header."""
    import http.server
    import threading

    seen = {}

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen["auth"] = self.headers.get("Authorization")
            seen["path"] = self.path
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), H)

    def serve():
        srv.handle_request()
        srv.server_close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return "http://127.0.0.1:%d" % srv.server_port, seen, t


def test_not_a_cost_summary_is_refused(cli):
    """A 200 that is not a cost summary (a proxy's page, another service) is an error, never
    a blank table."""
    url, seen, t = one_answer(200, b'{"hello":"world"}')
    r = cli("costs", "--server", url)
    t.join(10)
    assert r.code == 1 and "not a cost summary" in r.err, r
    assert r.out == ""


# ---- health ----------------------------------------------------------------------------------

def test_health_of_the_demo(cli, demo):
    """`gpu-cost health` (what `helm test` runs): both probes 200, each printed."""
    r = remote(cli, demo, "health")
    assert r.code == 0, r
    assert r.out.splitlines() == ["/healthz: 200 ok", "/readyz: 200 ok"], r.out


def test_health_fails_on_503_and_on_no_answer(cli):
    url, seen, t = one_answer(503, b'{"error":"not the leader: a standby","status":503}')
    r = cli("health", "--server", url)
    t.join(10)
    assert r.code == 1 and "503" in r.err and "standby" in r.err, r
    assert "/healthz did not answer 200" in r.err and seen["path"] == "/healthz", r
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    r = cli("health", "--server", "http://127.0.0.1:%d" % port, "--timeout", "5s")
    assert r.code == 1 and "onnect" in r.err, r
    r = cli("health", "--server", url, "extra")
    assert r.code == 2 and "unexpected argument" in r.err, r


# ---- authentication ----------------------------------------------------------------------------
# (A controller with --auth-delegate needs an API server for its TokenReviews: the CLI against
# one, 401 without a token, 403 with another's, the answer with the reader's, is
# tests/e2e/test_api_live.py::test_remote_cli_with_delegated_auth.)

def test_token_is_sent_as_a_bearer_header(cli, tmp_path):
    url, seen, t = one_answer(403, b'{"error":"token refused by the test","status":403}')
    tok = tmp_path / "token"
    tok.write_text("s3cr3t-token\n")
    r = cli("recommendations", "--server", url, "--token-file", tok)
    t.join(10)
    assert seen.get("auth") == "Bearer s3cr3t-token", seen
    assert seen.get("path") == "/api/v1/recommendations"
    assert r.code == 1 and "403" in r.err and "token refused by the test" in r.err, r
    assert "s3cr3t" not in r.err


def test_https_with_cacert_or_without_verification(cli, tmp_path):
    """The controller serving HTTPS (a self-signed certificate for 127.0.0.1): --cacert
    verifies it, no option refuses it, --insecure-skip-tls-verify skips the check."""
    openssl = shutil.which("openssl")
    assert openssl, "no openssl command to make a certificate (scripts/setup.sh installs it)"
    crt, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", crt, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    d = Demo(_controller_path(cli), tmp_path, extra=["--tls-cert-file", crt, "--tls-key-file",
                                                      key])
    try:
        url = "https://127.0.0.1:%d" % d.port
        ok = cli("costs", "--server", url, "--cacert", crt, "--window", W47, "--format", "json")
        assert ok.code == 0, ok
        assert ok.json()["window"]["start"] == "2026-11-16T00:00:00Z"
        bad = cli("costs", "--server", url, "--window", W47)
        assert bad.code == 1 and "certificate" in bad.err.lower(), bad
        skip = cli("costs", "--server", url, "--insecure-skip-tls-verify", "--window", W47,
                   "--format", "json")
        assert skip.code == 0 and skip.json() == ok.json(), skip
    finally:
        assert d.stop() == 0


# ---- kubectl plugin ----------------------------------------------------------------------------

def test_kubectl_plugin_name(cli, demo, tmp_path):
    """Installed as kubectl-gpu_cost on PATH it works under that name, and through the pinned
    kubectl of the e2e tools (E2E_BIN; `make cli-test` builds them first)."""
    link = tmp_path / "kubectl-gpu_cost"
    link.symlink_to(cli.path)
    cp = subprocess.run([str(link), "costs", "--server", demo.url, "--window", W47, "--format",
                         "json"], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout) == demo.json("/api/v1/costs", window=W47)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    kubectl = str(Path(os.environ.get("E2E_BIN") or cache / "gpu-cost-e2e" / "bin") / "kubectl")
    assert os.access(kubectl, os.X_OK), "%s is missing: run scripts/e2e-build.sh" % kubectl
    env = dict(os.environ, PATH="%s:%s" % (tmp_path, os.environ.get("PATH", "")),
               KUBECONFIG=str(tmp_path / "none"))
    cp = subprocess.run([kubectl, "gpu-cost", "costs", "--server", demo.url, "--window", W47,
                         "--format", "json"], capture_output=True, text=True, env=env,
                        timeout=60, cwd=str(REPO))
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout) == demo.json("/api/v1/costs", window=W47)


def money(x):
    """As pkg/report writes USD in tables: $1,234.56."""
    return ("$" if x >= 0 else "-$") + format(round(abs(x) + 0.0, 2), ",.2f")
