"""The end-to-end harness's moving parts: a cluster (scripts/e2e-cluster.sh), the controller
as a subprocess under its own identity, and reading and checking its report ConfigMaps
against the ground truth."""

import calendar
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from apiclient import Api, Etcd, metric, read_env

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CLUSTER_SCRIPT = REPO / "scripts" / "e2e-cluster.sh"
RBAC = REPO / "deploy" / "rbac.yaml"
CONFIG = HERE / "config.json"
NS = "gpu-cost"
MIB = 1 << 20

# Tolerances: GPU-seconds to 1e-6 (plus what summing a few hundred doubles of up to 1e8 in
# another order can cost); money to half a cent, so both round to the same cent.
GS_ABS, GS_REL, USD_ABS = 1e-6, 4e-15, 0.005


# E2E_PORT_BASE (set by run_parallel.py, one base per worker): ports are taken in turn from
# [base, base + 2000), below the kernel's ephemeral range, so two test processes running side by
# side never pick the same free port between one's check and its server's bind.
_port_next = None


def free_port():
    global _port_next
    base = os.environ.get("E2E_PORT_BASE")
    if not base:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    base = int(base)
    if _port_next is None:
        _port_next = base
    for _ in range(2000):
        port, _port_next = _port_next, base + (_port_next + 1 - base) % 2000
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in [%d, %d)" % (base, base + 2000))


def tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)"


class Cluster:
    """etcd + kube-apiserver in `path`; admin and controller API clients."""

    def __init__(self, path):
        self.dir = Path(path)
        self.api = self.ctrl_api = self.etcd = None
        self.env = {}
        self.baseline = {}

    def _run(self, cmd):
        cp = subprocess.run([str(CLUSTER_SCRIPT), cmd, str(self.dir)], capture_output=True,
                            text=True, timeout=180)
        if cp.returncode != 0:
            raise RuntimeError("e2e-cluster.sh %s failed:\n%s%s" % (cmd, cp.stdout, cp.stderr))
        self._load()

    def _load(self):
        self.env = read_env(str(self.dir))
        if self.api is not None:
            # A restart keeps the port, CA and tokens: the same clients reconnect (others,
            # such as a running replay, hold references to them).
            self.api.close()
            self.ctrl_api.close()
            return
        self.api = Api(self.env["E2E_SERVER"], self.env["E2E_CA"], self.env["E2E_ADMIN_TOKEN"])
        self.ctrl_api = Api(self.env["E2E_SERVER"], self.env["E2E_CA"],
                            self.env["E2E_CONTROLLER_TOKEN"])
        self.etcd = Etcd(self.env["E2E_ETCD_URL"])

    def start(self):
        self._run("start")
        self.baseline = self.watch_counts()

    def stop(self):
        if (self.dir / "env").exists():
            subprocess.run([str(CLUSTER_SCRIPT), "stop", str(self.dir)], capture_output=True,
                           timeout=60)

    def restart_apiserver(self):
        self._run("restart-apiserver")

    def stop_apiserver(self):
        self._run("stop-apiserver")

    def start_apiserver(self):
        self._run("start-apiserver")

    @property
    def controller_kubeconfig(self):
        return str(self.dir / "controller.kubeconfig")

    def kubectl(self, *args, stdin=None):
        admin = str(self.dir / "admin.kubeconfig")
        cp = subprocess.run([self.env["KUBECTL"], "--kubeconfig", admin] + list(args),
                            input=stdin, capture_output=True, text=True, timeout=60)
        if cp.returncode != 0:
            raise RuntimeError("kubectl %s: %s" % (" ".join(args), cp.stderr.strip()))
        return cp.stdout

    def apply(self, path):
        return self.kubectl("apply", "-f", str(path))

    def wait_controller_can(self, path="/api/v1/pods?limit=1", want=200, timeout=10):
        """RBAC objects reach the authorizer through an informer: wait until it sees them."""
        deadline = time.time() + timeout
        status = None
        while time.time() < deadline:
            status, _ = self.ctrl_api.request("GET", path)
            if status == want:
                return
            time.sleep(0.1)
        raise AssertionError("controller GET %s: %s, wanted %s" % (path, status, want))

    def watch_counts(self):
        m = self.api.metrics()
        return {r: metric(m, "apiserver_longrunning_requests", resource=r, verb="WATCH")
                for r in ("pods", "nodes", "namespaces")}

    def wait_watchers(self, n=1, timeout=60, stable=2, alive=None):
        """Waits until n more watches than at start-up are open on each of pods, nodes and
        namespaces, seen on `stable` polls a second apart: the controller has re-listed (or
        resumed) and is watching again. Returns False on timeout, or at once when alive()
        says the watcher is gone."""
        deadline = time.time() + timeout
        seen = 0
        while time.time() < deadline:
            if alive is not None and not alive():
                return False
            try:
                c = self.watch_counts()
                ok = all(c[r] >= self.baseline.get(r, 0) + n for r in c)
            except (OSError, RuntimeError):
                ok = False
            seen = seen + 1 if ok else 0
            if seen >= stable:
                return True
            time.sleep(1.0)
        return False

    def request_count(self, resource, verb):
        return metric(self.api.metrics(), "apiserver_request_total", resource=resource, verb=verb)

    def configmaps(self, ns=NS, selector=None):
        path = "/api/v1/namespaces/%s/configmaps" % ns
        if selector:
            path += "?labelSelector=" + urllib.request.quote(selector)
        return {c["metadata"]["name"]: c for c in self.api.get(path)["items"]}

    def lease(self, name="gpu-cost-controller", ns=NS):
        status, doc = self.api.request(
            "GET", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (ns, name))
        return doc if status == 200 else None


class Controller:
    """build/gpu-cost-controller as a subprocess, with the controller's own kubeconfig (not
    the admin's). Its stdout and stderr (JSON log lines) go to `log_path`."""

    def __init__(self, binary, cluster, log_path, ident="gpu-cost-0", config=CONFIG,
                 extra=(), kubeconfig=None):
        self.binary, self.cluster = str(binary), cluster
        self.kubeconfig = str(kubeconfig or cluster.controller_kubeconfig)
        self.log_path = Path(log_path)
        self.ident, self.config, self.extra = ident, str(config), list(extra)
        self.proc = None
        self.port = None
        self.log = None

    def args(self):
        return [self.binary, "--config", self.config,
                "--kubeconfig", self.kubeconfig,
                "--namespace", NS, "--listen", "127.0.0.1:%d" % self.port, "--id", self.ident,
                "--checkpoint-interval", "5s", "--report-interval", "5s"] + self.extra

    def start(self):
        self.port = free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPU_COST_") and k not in ("KUBECONFIG", "POD_NAME")}
        self.log = open(self.log_path, "ab")
        self.log.write(("--- start %s: %s\n" % (time.strftime("%H:%M:%S"),
                                                " ".join(self.args()))).encode())
        self.log.flush()
        self.proc = subprocess.Popen(self.args(), stdout=self.log, stderr=self.log, env=env,
                                     cwd=str(REPO))
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def get(self, path):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path),
                                        timeout=2) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None

    def wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not self.alive():
                raise AssertionError("controller %s exited with %s before /readyz:\n%s" % (
                    self.ident, self.proc.returncode, tail(self.log_path)))
            if self.get("/readyz") == 200:
                return
            time.sleep(0.2)
        raise AssertionError("controller %s not ready after %d s:\n%s" % (
            self.ident, timeout, tail(self.log_path)))

    def kill(self, sig=signal.SIGKILL):
        if self.alive():
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        return self.proc.returncode

    def stop(self, timeout=20):
        """SIGTERM (it checkpoints and exits 0), SIGKILL if it does not exit in time."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log:
            self.log.close()
            self.log = None
        return self.proc.returncode if self.proc else None

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def log_records(self):
        """The JSON log lines of every run so far (other lines are skipped)."""
        out = []
        with open(self.log_path, errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
        return out


# ---- reports --------------------------------------------------------------------------------

class Report:
    def __init__(self, cm):
        self.name = cm["metadata"]["name"]
        self.cm = cm
        data = cm.get("data") or {}
        self.size = sum(len(k.encode()) + len(v.encode()) for k, v in data.items())
        self.md = data.get("report.md")
        self.error = None
        self.json = None
        try:
            self.json = json.loads(data["report.json"])
        except (KeyError, ValueError) as e:
            self.error = "report.json: %s" % e


class Reports(dict):
    """name -> Report, and `now`: when they were read."""
    now = 0.0


def read_reports(cluster, ns=NS):
    out = Reports((name, Report(cm)) for name, cm in
                  cluster.configmaps(ns, "gpu-cost.io/kind=report").items())
    out.now = time.time()
    return out


def _gs_ok(got, want):
    return got is not None and abs(got - want) <= GS_ABS + GS_REL * abs(want)


def _usd_ok(got, want):
    return got is not None and abs(got - want) <= USD_ABS


def compare_summary(where, summary, tw, only_team=None):
    """Mismatches between a report's cost summary (by team, project) and the truth's window,
    as readable lines. only_team: a per-team copy holds that team's groups only."""
    bad = []
    got = {}
    for g in summary.get("groups", []):
        k = g.get("keys", {})
        got[(k.get("team"), k.get("project"))] = g
    want = {k: v for k, v in tw["groups"].items() if only_team is None or k[0] == only_team}
    for key in sorted(set(got) | set(want), key=str):
        g, w = got.get(key), want.get(key)
        gs = g.get("gpu_seconds") if g else 0.0
        usd = g.get("cost_usd") if g else 0.0
        wgs = w["gpu_seconds"] if w else 0.0
        wusd = w["cost_usd"] if w else 0.0
        if not _gs_ok(gs, wgs) or not _usd_ok(usd, wusd):
            bad.append("%s %s/%s: %r GPU-s $%r, truth %r GPU-s $%r (diff %.9g GPU-s)" % (
                where, key[0], key[1], gs, usd, wgs, wusd, (gs or 0) - wgs))
    if only_team is not None:
        return bad
    for part in ("total", "unattributed", "capacity"):
        s = summary.get(part) or {}
        if not _gs_ok(s.get("gpu_seconds"), tw[part]["gpu_seconds"]) or \
                not _usd_ok(s.get("cost_usd"), tw[part]["cost_usd"]):
            bad.append("%s %s: %r GPU-s $%r, truth %r GPU-s $%r" % (
                where, part, s.get("gpu_seconds"), s.get("cost_usd"),
                tw[part]["gpu_seconds"], tw[part]["cost_usd"]))
    idle = {n.get("node"): n for n in (summary.get("idle") or {}).get("nodes", [])}
    for node in sorted(set(idle) | set(tw["idle_nodes"])):
        g, w = idle.get(node) or {}, tw["idle_nodes"].get(node)
        wgs = w["gpu_seconds"] if w else 0.0
        wusd = w["cost_usd"] if w else 0.0
        if not _gs_ok(g.get("gpu_seconds", 0.0), wgs) or not _usd_ok(g.get("cost_usd", 0.0),
                                                                      wusd):
            bad.append("%s idle on %s: %r GPU-s $%r, truth %r GPU-s $%r" % (
                where, node, g.get("gpu_seconds"), g.get("cost_usd"), wgs, wusd))
    return bad


# report.top_n of tests/e2e/config.json, which every controller of these tests runs with.
REPORT_TOP_N = json.loads((Path(__file__).resolve().parent / "config.json").read_text())[
    "report"]["top_n"]


# Pods and workloads period history names per period: max(100, report.top_n).
HISTORY_TOP_N = max(100, REPORT_TOP_N)


def compare_names(where, doc, tw, top_n=REPORT_TOP_N):
    """Mismatches in what a complete period's report names (issue: history that keeps names):
    pod counts per group and in all, the top pods and the top workloads with their exact
    figures, the rest of the workloads as "omitted" and none left unnamed ("folded").
    top_n: the controller's report.top_n."""
    history_top_n = max(100, top_n)
    bad = []
    summary = doc.get("summary") or {}
    if (summary.get("total") or {}).get("pods") != tw["total"]["pods"]:
        bad.append("%s: %r pods, truth %d" % (where, (summary.get("total") or {}).get("pods"),
                                              tw["total"]["pods"]))
    for g in summary.get("groups", []):
        k = g.get("keys", {})
        w = tw["groups"].get((k.get("team"), k.get("project")))
        if w and g.get("pods") != w["pods"]:
            bad.append("%s %s/%s: %r pods, truth %d" % (where, k.get("team"), k.get("project"),
                                                       g.get("pods"), w["pods"]))

    def top(listed, truth_rows, key, what):
        ranked = sorted(truth_rows.values(), key=lambda v: -v["cost_usd"])
        n = len([v for v in ranked if v["gpu_seconds"] > 0])
        if len(listed) != min(n, top_n):
            bad.append("%s: %d top %s listed, truth has %d (top %d)" % (
                where, len(listed), what, n, top_n))
        for e in listed:
            w = truth_rows.get(key(e))
            if w is None or not _gs_ok(e.get("gpu_seconds"), w["gpu_seconds"]) or \
                    not _usd_ok(e.get("cost_usd"), w["cost_usd"]):
                bad.append("%s top %s %s: %r GPU-s $%r, truth %r" % (
                    where, what, key(e), e.get("gpu_seconds"), e.get("cost_usd"), w))
        if listed and len(ranked) > len(listed):
            # Nothing left out is dearer than the cheapest listed (ties may go either way).
            cheapest = min(e.get("cost_usd", 0) for e in listed)
            if ranked[len(listed)]["cost_usd"] > cheapest + USD_ABS:
                bad.append("%s: a %s left out of the top costs $%r, more than $%r listed" % (
                    where, what, ranked[len(listed)]["cost_usd"], cheapest))

    top(doc.get("top_pods") or [], tw["pods"], lambda e: "%s/%s" % (e.get("namespace"),
                                                                   e.get("pod")), "pod")
    wls = doc.get("workloads") or []
    top(wls, tw["workloads"], lambda e: e.get("workload"), "workload")
    for e in wls:
        w = tw["workloads"].get(e.get("workload"))
        if w and e.get("pods") != w["pods"]:
            bad.append("%s workload %s: %r pods, truth %d" % (where, e.get("workload"),
                                                             e.get("pods"), w["pods"]))
    # Period history names a complete period's costliest max(100, top_n) workloads and sums the
    # rest (docs/ledger.md): exactly the truth's beyond that rank, nothing more.
    folded = (doc.get("workloads_folded") or {}).get("cost_usd", 0)
    ranked = sorted((v["cost_usd"] for v in tw["workloads"].values()), reverse=True)
    want_folded = sum(ranked[history_top_n:])
    if abs(folded - want_folded) > USD_ABS * max(1, len(ranked) - history_top_n):
        bad.append("%s: $%r of workloads left unnamed (folded), truth beyond the top %d: $%r" % (
            where, folded, history_top_n, want_folded))
    omitted = (doc.get("workloads_omitted") or {}).get("cost_usd", 0)
    want = tw["total"]["cost_usd"] - sum(e.get("cost_usd", 0) for e in wls)
    if abs(omitted - want) > USD_ABS * max(1, len(tw["workloads"])):
        bad.append("%s: workloads omitted $%r, truth $%r" % (where, omitted, want))
    return bad


def check_reports(cluster, truth, now, ns=NS, names=True, top_n=REPORT_TOP_N):
    """(reports, mismatches) for every complete day and ISO week of the truth."""
    reports = read_reports(cluster, ns)
    reports.now = now
    bad = []
    for name, start, end in truth.complete_days(now) + truth.complete_weeks(now):
        r = reports.get(name)
        if r is None:
            bad.append("%s: missing" % name)
            continue
        if r.error:
            bad.append("%s: %s" % (name, r.error))
            continue
        summary = r.json.get("summary") or {}
        tw = truth.window(start, end)
        bad += compare_summary(name, summary, tw)
        if names:
            bad += compare_names(name, r.json, tw, top_n)
        for d in r.json.get("by_day") or []:
            # A weekly report's days: each must equal that day's truth.
            ds = truth.window(max(start, _utc(d["start"])), min(end, _utc(d["end"])))
            if not _gs_ok(d.get("gpu_seconds"), ds["total"]["gpu_seconds"]) or \
                    not _usd_ok(d.get("cost_usd"), ds["total"]["cost_usd"]):
                bad.append("%s by_day %s: %r GPU-s $%r, truth %r GPU-s $%r" % (
                    name, d.get("date"), d.get("gpu_seconds"), d.get("cost_usd"),
                    ds["total"]["gpu_seconds"], ds["total"]["cost_usd"]))
    return reports, bad


def _utc(s):
    return calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S"))


def settle(mismatches, timeout=30, period=1.0):
    """Calls `mismatches()` (a list of what differs) until it returns none or `timeout`
    passes; returns the last list. For comparisons with what the controller serves, which
    lags the API server's latest events by their delivery and a snapshot interval: a wait on
    the condition itself, never a fixed sleep."""
    deadline = time.time() + timeout
    while True:
        bad = mismatches()
        if not bad or time.time() > deadline:
            return bad
        time.sleep(period)


def wait_reports(cluster, truth, timeout=90, ns=NS, controller=None, top_n=REPORT_TOP_N):
    """Polls until every complete period's report agrees with the truth; returns the reports,
    or raises AssertionError listing what still disagrees (the controller rewrites reports
    of complete periods when late events change them, every report interval)."""
    deadline = time.time() + timeout
    bad = ["(not checked)"]
    while time.time() < deadline:
        if controller is not None and not controller.alive():
            raise AssertionError("controller exited (%s) while waiting for reports:\n%s" % (
                controller.proc.returncode, tail(controller.log_path)))
        reports, bad = check_reports(cluster, truth, time.time(), ns, top_n=top_n)
        if not bad:
            return reports
        time.sleep(2)
    raise AssertionError("reports disagree with the truth after %d s (%d lines):\n%s" % (
        timeout, len(bad), "\n".join(bad[:60])))


def money(x):
    """As report.md writes USD: $1,234.56."""
    return "$" + format(round(x + 0.0, 2), ",.2f") if x >= 0 else "-$" + format(round(-x, 2),
                                                                               ",.2f")


# ---- forcing a watch expiry -----------------------------------------------------------------

def expire_watches(cluster):
    """Restarts kube-apiserver so that no watch can resume where it was: while it is down, a
    write straight to etcd moves the revision on and etcd is compacted up to it, so the new
    watch cache starts past every resourceVersion a client holds and etcd has forgotten the
    history in between. Every resumed watch then gets 410 Expired and must LIST again.
    Returns a resourceVersion from before (to check that with watch_answer)."""
    rv = cluster.api.get("/api/v1/namespaces?limit=1")["metadata"]["resourceVersion"]
    cluster.stop_apiserver()
    rev = cluster.etcd.put("/e2e/expire-watches", str(time.time()))
    cluster.etcd.compact(rev)
    cluster.start_apiserver()
    return rv


def watch_answer(cluster, path, rv):
    """What a watch of `path` from resourceVersion rv gets: "410" (HTTP status or in-stream
    ERROR with code 410), or "events:N"."""
    sep = "&" if "?" in path else "?"
    status, body = cluster.api.request(
        "GET", "%s%swatch=1&resourceVersion=%s&timeoutSeconds=1" % (path, sep, rv))
    if status == 410:
        return "410"
    if status != 200:
        return "http-%d" % status
    text = body if isinstance(body, str) else json.dumps(body)
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    events = [e for e in events if e.get("type") != "BOOKMARK"]
    if len(events) == 1 and events[0]["type"] == "ERROR" and \
            events[0]["object"].get("code") == 410:
        return "410"
    return "events:%d" % len(events)
