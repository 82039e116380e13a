"""Monthly reports in real time zones and budget alerts, against a real kube-apiserver.

A replayed month is reported by the controller exactly as an independent truth computed here
with Python's zoneinfo (its own reader of the same tzdata): in Europe/Berlin the latest complete
month with a daylight-saving change (a 23- or 25-hour day), and in Asia/Kathmandu (+05:45) the
latest complete month, with pods crossing the months' local midnights at odd seconds and history
folded (--fold-after 1h). Every figure is checked to 1e-6 GPU-seconds: the month, the previous
month, and each local day.

A team budget crossed in the running month yields exactly one Event per threshold (warning,
100%, forecast over 100%) in the team's namespace, still one after more report cycles and after
a restart; the gpu_cost_budget_* series the controller serves make the chart's PrometheusRule
fire under `promtool test rules`.
"""

import datetime
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from zoneinfo import ZoneInfo

import pytest
import yaml

import harness
from sim import REPLAY_SCHEDULER

H = 3600
PRICE = 4.0  # USD per H100-hour in this test's catalog
MODEL = "NVIDIA-H100-80GB-HBM3"
WORKLOAD_BUDGETS = ("running", "edge-end")  # pods of plan_pods: bare pods, their own workloads
TEAM_NS = "ml"
RBAC_FINANCE = harness.HERE / "rbac-finance.yaml"


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def local_midnight(zone, y, m, d=1):
    return int(datetime.datetime(y, m, d, tzinfo=ZoneInfo(zone)).timestamp())


def month_add(y, m, k):
    i = y * 12 + (m - 1) + k
    return i // 12, i % 12 + 1


def month_of(zone, t):
    d = datetime.datetime.fromtimestamp(t, ZoneInfo(zone))
    return d.year, d.month


def month_bounds(zone, y, m):
    ny, nm = month_add(y, m, 1)
    return local_midnight(zone, y, m), local_midnight(zone, ny, nm)


def days_of(zone, y, m):
    """[(date, start, end)] of every local day of the month."""
    out = []
    start, end = month_bounds(zone, y, m)
    d = datetime.date(y, m, 1)
    while True:
        s = local_midnight(zone, d.year, d.month, d.day)
        if s >= end:
            return out
        n = d + datetime.timedelta(days=1)
        out.append((d.isoformat(), s, local_midnight(zone, n.year, n.month, n.day)))
        d = n


def pick_month(zone, now, need_dst):
    """The latest local month that ended at least PAST_END before now (its pods that cross its
    last midnight have finished then: plan_pods), with a day that is not 24 hours long if
    asked."""
    y, m = month_of(zone, now)
    for k in range(1, 14):
        py, pm = month_add(y, m, -k)
        if month_bounds(zone, py, pm)[1] + PAST_END > now:
            continue
        if not need_dst or any(e - s != 24 * H for _, s, e in days_of(zone, py, pm)):
            return py, pm
    raise AssertionError("no month with a clock change in the last year in " + zone)


class Truth:
    """GPU-seconds and cost of the replayed pods over any window, from their intervals."""

    def __init__(self, pods):
        self.pods = pods  # [(name, gpus, start, end or None)]

    def gpu_seconds(self, ws, we, now):
        total = 0
        for _, gpus, s, e in self.pods:
            e = now if e is None else e
            total += gpus * max(0, min(e, we, now) - max(s, ws))
        return total

    def cost(self, ws, we, now):
        return self.gpu_seconds(ws, we, now) / 3600.0 * PRICE

    def per_pod(self, ws, we, now):
        """GPU-seconds of each pod that held GPUs in the window."""
        out = {}
        for name, gpus, s, e in self.pods:
            e = now if e is None else e
            held = max(0, min(e, we, now) - max(s, ws))
            if held > 0:
                out[name] = gpus * held
        return out


# How long after the replayed month's end its last pod finishes (edge-end below), and a margin:
# a month that ended more recently is not replayed, so no pod finishes in the future.
PAST_END = 2 * H


def plan_pods(zone, y, m, now):
    """Pods crossing the month's first and last local midnight, one across its longest (or a
    middle) day, one at odd seconds, and one still running in the current month."""
    ms, me = month_bounds(zone, y, m)
    days = days_of(zone, y, m)
    odd = max(days, key=lambda d: (abs(d[2] - d[1] - 24 * H), -d[1]))
    cur_start = month_bounds(zone, *month_of(zone, now))[0]
    return [
        ("edge-start", 1, ms - 3 * H - 17 * 60 - 3, ms + H + 2 * 60 + 11),
        ("edge-end", 1, me - 40 * 60 - 7, me + H + 13 * 60 + 29),
        ("long-day", 2, odd[1] - 2 * H - 1, odd[2] + 3 * H + 1),
        ("odd-seconds", 1, ms + 9 * 86400 + 9 * H + 7 * 60 + 13,
         ms + 11 * 86400 + 13 * H + 44 * 60 + 59),
        ("running", 1, min(cur_start - 2 * 86400, now - 3 * 86400), None),
    ]


def budget_amount(spent):
    """The team's monthly budget: three quarters of what the running month has spent, in
    cents, so it was crossed mid-month."""
    return round(max(spent * 0.75, 0.01), 2)


# ---- the cluster ----------------------------------------------------------------------------

def create_ns(api, name, labels=None):
    status, doc = api.request("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": labels or {}}})
    assert status in (201, 409), (status, doc)


def inject_node(cluster, name, created):
    """A Node with a back-dated creationTimestamp (written into etcd, as tests/e2e/sim.py does)."""
    alloc = {"nvidia.com/gpu": "4", "cpu": "96", "memory": "1Ti", "pods": "110"}
    obj = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "uid": "9b2f6a8e-6d0e-4c59-8f0e-%012x" % created,
                        "creationTimestamp": rfc3339(created),
                        "labels": {"nvidia.com/gpu.product": MODEL,
                                   "nvidia.com/gpu.count": "4"}},
           "spec": {"providerID": "e2e://" + name},
           "status": {"capacity": alloc, "allocatable": alloc,
                      "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                      "lastHeartbeatTime": rfc3339(created + 60),
                                      "lastTransitionTime": rfc3339(created + 60)}]}}
    cluster.etcd.put("/registry/minions/" + name, json.dumps(obj))
    got = cluster.api.get("/api/v1/nodes/" + name)
    assert got["metadata"]["creationTimestamp"] == rfc3339(created)


def replay_pod(api, node, name, gpus, start, end):
    """Create, bind (PodScheduled at start), run; finish at end (the container's finishedAt)."""
    path = "/api/v1/namespaces/%s/pods" % TEAM_NS
    c = {"name": "train", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
         "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
    api.call("POST", path, {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": name, "labels": {"team": "ml",
                                                                  "project": "llm"}},
                            "spec": {"containers": [c], "restartPolicy": "Never",
                                     "schedulerName": REPLAY_SCHEDULER}})
    api.call("POST", "%s/%s/binding" % (path, name), {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
    cond = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339(start)}]
    cs = {"name": "train", "image": c["image"], "imageID": "", "restartCount": 0,
          "containerID": "containerd://%064x" % abs(hash(name))}
    if end is None:
        st = {"phase": "Running", "startTime": rfc3339(start + 2), "conditions": cond,
              "containerStatuses": [dict(cs, ready=True, started=True, state={
                  "running": {"startedAt": rfc3339(start + 5)}})]}
    else:
        st = {"phase": "Succeeded", "startTime": rfc3339(start + 2), "conditions": cond,
              "containerStatuses": [dict(cs, ready=False, started=False, state={
                  "terminated": {"exitCode": 0, "reason": "Completed",
                                 "startedAt": rfc3339(start + 5),
                                 "finishedAt": rfc3339(end)}})]}
    api.merge_patch("%s/%s/status" % (path, name), {"status": st})


def check_folded_export(ctl, ms, me, truth, now):
    """The month's FOCUS export from the folded ledger: its usage rows add up to the truth, and
    the folded hours' rows name the model's nodes, with that model's SKU and price (the pods'
    hourly rows keep no node, docs/export.md)."""
    import csv
    import io
    text = controller_get(ctl, "/api/v1/export/focus?window=%d,%d&granularity=daily" % (ms, me))
    rows = list(csv.DictReader(io.StringIO(text)))
    usage = [r for r in rows if r["x_CostKind"] == "usage"]
    assert usage, text[:2000]
    got = sum(float(r["BilledCost"]) for r in usage)
    want = truth.cost(ms, me, now)
    assert abs(got - want) < 0.005, (got, want)
    folded = [r for r in usage if "/__folded__" in r["ResourceId"]]
    assert folded, "no row of the folded month names folded hours"
    for r in folded:
        assert r["ResourceId"].split("/__folded__/", 1)[1].startswith(MODEL + "/"), r
        assert r["SkuId"].startswith(MODEL + "/") and r["ResourceType"] == "GPU nodes", r
        assert abs(float(r["ListUnitPrice"]) - PRICE) < 1e-9, r


def controller_get(ctl, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (ctl.port, path), timeout=10) as r:
        return r.read().decode()


def wait_for(what, fn, timeout=120, every=1.0):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(every)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def budget_events(cluster):
    items = cluster.api.get("/api/v1/namespaces/%s/events" % TEAM_NS)["items"]
    return sorted((e["reason"], e["metadata"]["name"], e.get("count", 1)) for e in items
                  if e["reason"].startswith("GpuBudget"))


# ---- the checks -----------------------------------------------------------------------------

def check_month(doc, zone, y, m, truth, now):
    ms, me = month_bounds(zone, y, m)
    py, pm = month_add(y, m, -1)
    ps, _ = month_bounds(zone, py, pm)
    assert doc["kind"] == "monthly"
    assert doc["period"]["start"] == rfc3339(ms) and doc["period"]["end"] == rfc3339(me), doc[
        "period"]
    assert doc["period"]["time_zone"] == zone and doc["period"]["month"] == "%04d-%02d" % (y, m)
    assert doc["period"]["partial"] is False and doc["forecast"] is None
    total = doc["summary"]["total"]
    want = truth.gpu_seconds(ms, me, now)
    assert abs(total["gpu_seconds"] - want) < 1e-6, (total, want)
    assert abs(total["cost_usd"] - truth.cost(ms, me, now)) < 1e-6
    assert doc["previous"]["start"] == rfc3339(ps)
    assert abs(doc["previous"]["gpu_seconds"] - truth.gpu_seconds(ps, ms, now)) < 1e-6
    days = days_of(zone, y, m)
    assert [d["date"] for d in doc["by_day"]] == [d for d, _, _ in days]
    for got, (date, s, e) in zip(doc["by_day"], days):
        assert got["start"] == rfc3339(s) and got["end"] == rfc3339(e), (got, date)
        assert abs(got["gpu_seconds"] - truth.gpu_seconds(s, e, now)) < 1e-6, (got, date)
    # No note about history cut inside a bucket: the fold keeps every local midnight exact.
    assert not [n for n in doc["notes"] if "bucket" in n], doc["notes"]


def check_month_pods(doc, zone, y, m, truth, now):
    """The pods of the month and of each day: counted and named, folded history included."""
    ms, me = month_bounds(zone, y, m)
    want = truth.per_pod(ms, me, now)
    assert doc["summary"]["total"]["pods"] == len(want), (doc["summary"]["total"], want)
    top = {p["pod"]: p["gpu_seconds"] for p in doc["top_pods"]}
    assert set(top) == set(want), (top, want)
    for name, gs in want.items():
        assert abs(top[name] - gs) < 1e-6, (name, top[name], gs)
    for got, (date, s, e) in zip(doc["by_day"], days_of(zone, y, m)):
        assert got["pods"] == len(truth.per_pod(s, e, now)), (got, date)


def metric_samples(text, name):
    out = []
    for line in text.splitlines():
        m = re.match(r"^%s(\{[^}]*\}) (\S+)$" % re.escape(name), line)
        if m:
            out.append((m.group(1), float(m.group(2))))
    return out


def check_rule_fires(tmp_path, metrics_text, e2e_bin):
    """The chart's PrometheusRule, fed the series the controller serves, under promtool."""
    promtool = shutil.which("promtool")
    helm = e2e_bin / "helm"
    if not promtool or not os.access(helm, os.X_OK):
        if os.environ.get("E2E_REQUIRE") == "1":
            pytest.fail("promtool or helm is missing")
        pytest.skip("promtool or helm is missing")
    cp = subprocess.run([str(helm), "template", "gpu-cost", str(harness.REPO / "charts" /
                                                                  "gpu-cost"),
                         "--set", "prometheusRule.enabled=true", "--set", "prometheusRule.for=5m",
                         "--kube-version", "1.37.0", "--show-only",
                         "templates/prometheusrule.yaml"],
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(yaml.safe_load(cp.stdout)["spec"]))
    used = [s for s in metric_samples(metrics_text, "gpu_cost_budget_used_ratio")
            if 'scope="team",name="ml"' in s[0]]
    fc = [s for s in metric_samples(metrics_text, "gpu_cost_budget_forecast_ratio")
          if 'scope="team",name="ml"' in s[0]]
    assert len(used) == 1 and len(fc) == 1, metrics_text
    labels = dict(re.findall(r'(\w+)="([^"]*)"', used[0][0]))
    tests = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [
            {"series": "gpu_cost_budget_used_ratio" + used[0][0], "values": "%r+0x30" % used[0][1]},
            {"series": "gpu_cost_budget_forecast_ratio" + fc[0][0],
             "values": "%r+0x30" % fc[0][1]}],
        "alert_rule_test": [
            {"eval_time": "10m", "alertname": "GpuCostBudgetExceeded",
             "exp_alerts": [{"exp_labels": dict(labels, severity="critical"),
                             "exp_annotations": {
                                 # humanizePercentage: the value x 100 to 4 significant digits
                                 "summary": "GPU budget of team ml is spent (%.4g%%)" % (
                                     used[0][1] * 100),
                                 "description": "The monthly GPU budget of team ml in cluster "
                                                "%s is used up." % labels["cluster"]}}]},
            {"eval_time": "10m", "alertname": "GpuCostBudgetWarning", "exp_alerts": []},
            {"eval_time": "10m", "alertname": "GpuCostBudgetForecastExceeded", "exp_alerts": []},
        ]}]}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests))
    cp = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stdout + cp.stderr


@pytest.mark.parametrize("zone,need_dst", [("Europe/Berlin", True), ("Asia/Kathmandu", False)])
def test_replayed_month_and_budget_alerts(cluster, controller_bin, e2e_bin, tmp_path, zone,
                                          need_dst):
    now = int(time.time())
    y, m = pick_month(zone, now, need_dst)
    pods = plan_pods(zone, y, m, now)
    truth = Truth([(n, g, s, e) for n, g, s, e in pods])
    # The running month so far: the budget is set below it, so it was crossed mid-month.
    cs, ce = month_bounds(zone, *month_of(zone, now))
    spent_now = truth.cost(cs, ce, now)
    amount = budget_amount(spent_now)

    create_ns(cluster.api, harness.NS)
    create_ns(cluster.api, TEAM_NS, {"team": "ml"})
    inject_node(cluster, "h100-a", month_bounds(zone, *month_add(y, m, -2))[0])
    for name, gpus, s, e in pods:
        replay_pod(cluster.api, "h100-a", name, gpus, s, e)
    cluster.apply(harness.RBAC)
    cluster.apply(RBAC_FINANCE)
    cluster.wait_controller_can()
    cluster.wait_controller_can("/api/v1/namespaces/%s/configmaps/x" % TEAM_NS, want=404)

    cfg = json.loads(harness.CONFIG.read_text())
    cfg["prices"] = {"currency": "USD", "prices": [
        {"model": MODEL, "capacity_type": "*", "usd_per_gpu_hour": PRICE}]}
    cfg["report"] = {"timezone": zone, "team_namespaces": {"ml": TEAM_NS}}
    cfg["budgets"] = {"warn_share": 0.8, "events": True, "items": [
        {"scope": "team", "name": "ml", "period": "monthly", "amount": amount},
        {"scope": "namespace", "name": TEAM_NS, "period": "monthly", "amount": 1e9}] + [
        # Workload budgets never crossed (no Event): one still running, one whose hours in the
        # running month (if any: the replayed month may be the last) are folded.
        {"scope": "workload", "name": "Pod/%s/%s" % (TEAM_NS, w), "period": "monthly",
         "amount": 1e9} for w in WORKLOAD_BUDGETS]}
    cfg_path = tmp_path / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    ctl = harness.Controller(controller_bin, cluster, tmp_path / "ctl.log", config=cfg_path,
                             extra=["--fold-after", "1h"])
    try:
        ctl.start()
        ctl.wait_ready()
        name = "gpu-cost-report-monthly-%04d-%02d" % (y, m)

        def report():
            cm = cluster.configmaps(selector="gpu-cost.io/period=monthly").get(name)
            return json.loads(cm["data"]["report.json"]) if cm else None

        doc = wait_for("the monthly report ConfigMap", report)
        check_month(doc, zone, y, m, truth, now)
        check_month_pods(doc, zone, y, m, truth, now)
        # The API's answer, from the folded ledger once a checkpoint has run (it folds first).
        def checkpoint_rv():
            cm = cluster.configmaps().get("gpu-cost-checkpoint")
            return cm["metadata"]["resourceVersion"] if cm else None

        rv0 = wait_for("a checkpoint", checkpoint_rv, timeout=60)
        wait_for("a second checkpoint", lambda: checkpoint_rv() not in (None, rv0), timeout=60)
        api_doc = json.loads(controller_get(ctl, "/api/v1/reports/monthly/%04d-%02d" % (y, m)))
        check_month(api_doc, zone, y, m, truth, now)
        # Folded, the month still names and counts its pods (period history).
        check_month_pods(api_doc, zone, y, m, truth, now)
        ms, me = month_bounds(zone, y, m)
        by_pod = json.loads(controller_get(ctl, "/api/v1/costs?window=%d,%d&by=pod" % (ms, me)))
        got = {g["keys"]["pod"]: g["gpu_seconds"] for g in by_pod["groups"]}
        want = truth.per_pod(ms, me, now)
        assert set(got) == set(want), (got, want)
        for name, gs in want.items():
            assert abs(got[name] - gs) < 1e-6, (name, got[name], gs)
        # ... and its workloads (bare pods here: each is its own, docs/workloads.md).
        by_wl = json.loads(controller_get(ctl, "/api/v1/costs?window=%d,%d&by=workload" % (ms, me)))
        got = {g["keys"]["workload"]: g["gpu_seconds"] for g in by_wl["groups"]}
        assert set(got) == {"Pod/%s/%s" % (TEAM_NS, n) for n in want}, (got, want)
        for name, gs in want.items():
            assert abs(got["Pod/%s/%s" % (TEAM_NS, name)] - gs) < 1e-6, (name, gs)
        latest = json.loads(controller_get(ctl, "/api/v1/reports/monthly/latest"))
        assert latest["period"]["month"] == "%04d-%02d" % (y, m)
        check_folded_export(ctl, ms, me, truth, now)

        # The running month: partial, its forecast and the team's budget past 100%.
        cur = json.loads(controller_get(ctl, "/api/v1/reports/monthly/%04d-%02d" %
                                        month_of(zone, now)))
        assert cur["period"]["partial"] is True and cur["forecast"]["method"] == "elapsed_average"
        b = [x for x in cur["budgets"] if x["scope"] == "team"][0]
        assert b["state"] == "over" and b["forecast_over"] is True, b
        # The team's own copy of the latest monthly report, in its namespace.
        wait_for("the team's monthly copy", lambda: cluster.configmaps(ns=TEAM_NS).get(
            "gpu-cost-report-monthly-latest"))

        # Exactly one Event per threshold, in the team's namespace; the namespace budget none.
        want = ["GpuBudgetExceeded", "GpuBudgetForecastExceeded", "GpuBudgetWarning"]
        events = wait_for("three budget events",
                          lambda: (lambda ev: ev if len(ev) >= 3 else None)(budget_events(cluster)))
        assert [e[0] for e in events] == want, events
        assert all(e[2] == 1 for e in events), events
        time.sleep(16)  # three more report cycles (--report-interval 5s)
        assert budget_events(cluster) == events

        metrics = controller_get(ctl, "/metrics")
        used = [v for lab, v in metric_samples(metrics, "gpu_cost_budget_used_ratio")
                if 'scope="team"' in lab and 'name="ml"' in lab]
        lo = truth.cost(cs, ce, now) / amount
        hi = truth.cost(cs, ce, int(time.time()) + 1) / amount
        assert len(used) == 1 and lo - 1e-9 <= used[0] <= hi + 1e-9, (used, lo, hi)
        # Each workload's budget: its pod's spend in the running month, in the report and
        # /metrics, from the folded ledger.
        later = int(time.time()) + 1
        for w in WORKLOAD_BUDGETS:
            name = "Pod/%s/%s" % (TEAM_NS, w)
            lo = truth.per_pod(cs, ce, now).get(w, 0) / 3600.0 * PRICE
            hi = truth.per_pod(cs, ce, later).get(w, 0) / 3600.0 * PRICE
            got = [x for x in cur["budgets"] if x["scope"] == "workload" and x["name"] == name]
            assert len(got) == 1 and lo - 1e-6 <= got[0]["spent"] <= hi + 1e-6, (got, lo, hi)
            used = [v for lab, v in metric_samples(metrics, "gpu_cost_budget_used_ratio")
                    if 'scope="workload"' in lab and 'name="%s"' % name in lab]
            assert len(used) == 1 and lo / 1e9 - 1e-12 <= used[0] <= hi / 1e9 + 1e-12, (used, lo)
        check_rule_fires(tmp_path, metrics, e2e_bin)

        # A restart sends them again under the same names: the API server keeps one of each.
        assert ctl.stop() == 0
        ctl.start()
        ctl.wait_ready()
        time.sleep(16)
        assert budget_events(cluster) == events
    finally:
        ctl.stop()
        print("controller log (last lines):\n" + harness.tail(ctl.log_path, 40))
