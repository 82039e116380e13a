"""The usage basis end to end: shared GPUs split by measured use, read from a real Prometheus.

A complete day (yesterday, UTC) on two shared nodes made through the real kube-apiserver: a T4
node time-sliced four ways (two GPUs) and an A10 node shared by MPS two ways (one GPU). Pods of
different teams hold their replicas for hours that begin and end between samples; one pod has a
GPU to itself. dcgm-exporter's per-pod series (KUBERNETES_VIRTUAL_GPUS: each sharer's own
DCGM_FI_DEV_GPU_UTIL with pod_uid, beside the device's own series and the engine figure copied
to every sharer; tests/fixtures/SOURCES.md) every 15 s, with a 30-minute gap on one GPU, are
back-filled into Prometheus (promtool), which the controller reads as it would in a cluster.

The truth is computed here from the samples by the rule of docs/ledger.md, with Prometheus'
own semantics (a query_range point takes the newest sample of the last 5 minutes; so a series
stays visible 5 minutes after its pod ended, and the first 5 minutes of a gap are still
covered), never from the controller. The controller's points lie on its own 15-second grid,
which may sit up to 14 s off the samples' grid: that moves a pod's figure by at most a few of
its own 15-second spans at its start, its end and the gap's edges, a fraction of a cent here,
so per pod and per team the usage basis must equal the truth to the cent, both bases must add
up to the same total, and total plus idle to every node's cost of the day.
"""

import json
import os
import time
import urllib.request

import pytest

import dcgm
import harness
import sim

pytestmark = pytest.mark.skipif(not dcgm.have_prometheus() and
                                os.environ.get("E2E_REQUIRE") != "1",
                                reason="prometheus and promtool are not installed "
                                       "(scripts/setup.sh installs them)")

DAY = 86400
STEP = 15
LOOKBACK = 300  # Prometheus' default query lookback
NS = "shared"
T4_PRICE, A10_PRICE = 0.40, 1.10

# node, device, pod, team, GPU-equivalents, bound and end (seconds into the day), use
PODS = [
    ("t4-ts", "A", "trainer", "vision", 0.25, 0 * 3600 + 0, 9 * 3600, 0.85),
    ("t4-ts", "A", "tokenizer", "nlp", 0.25, 1 * 3600 + 7, 6 * 3600 - 7, 0.20),
    ("t4-ts", "A", "scorer", "ads", 0.25, 2 * 3600 + 3, 4 * 3600 + 11, 0.05),
    ("t4-ts", "B", "alone", "vision", 0.25, 0, 5 * 3600, 0.9),
    ("a10-mps", "C", "embedder", "search", 0.5, 3 * 3600 + 30, 12 * 3600, 0.6),
    ("a10-mps", "C", "reranker", "ads", 0.5, 5 * 3600 + 45, 14 * 3600 + 5, 0.15),
]
GAPS = {"A": (4 * 3600 + 1800, 5 * 3600)}  # seconds into the day with no sample of A
PRICE = {"t4-ts": T4_PRICE, "a10-mps": A10_PRICE}


def node_obj(name, created):
    if name == "t4-ts":
        labels = {"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.replicas": "4",
                  "nvidia.com/gpu.count": "2", "nvidia.com/gpu.sharing-strategy": "time-slicing"}
        alloc, price = "8", T4_PRICE
    else:
        labels = {"nvidia.com/gpu.product": "NVIDIA-A10-SHARED", "nvidia.com/gpu.replicas": "2",
                  "nvidia.com/gpu.count": "1", "nvidia.com/gpu.sharing-strategy": "mps"}
        alloc, price = "2", A10_PRICE
    labels["kubernetes.io/hostname"] = name
    status = {"capacity": {"nvidia.com/gpu": alloc, "cpu": "32", "memory": "128Gi"},
              "allocatable": {"nvidia.com/gpu": alloc, "cpu": "32", "memory": "128Gi"},
              "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                              "message": "ready", "lastHeartbeatTime": sim.rfc3339(created),
                              "lastTransitionTime": sim.rfc3339(created)}]}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "node-" + name,
                         "creationTimestamp": sim.rfc3339(created), "labels": labels,
                         "annotations": {"gpu-cost.io/price-per-gpu-hour": str(price)}},
            "spec": {"providerID": "e2e://%s" % name}, "status": status}


def create_finished_pod(api, name, team, node, start, end):
    """A pod that held its replica from start to end (its status back-dated), finished."""
    md = {"name": name, "namespace": NS, "labels": {"team": team, "project": name}}
    spec = {"containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                            "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
            "restartPolicy": "Never", "schedulerName": sim.REPLAY_SCHEDULER}
    api.call("POST", "/api/v1/namespaces/%s/pods" % NS,
             {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})
    path = "/api/v1/namespaces/%s/pods/%s" % (NS, name)
    api.call("POST", path + "/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
    s, e = sim.rfc3339(start), sim.rfc3339(end)
    api.merge_patch(path + "/status", {"status": {
        "phase": "Succeeded", "startTime": s,
        "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": s}],
        "containerStatuses": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                               "imageID": "", "restartCount": 0, "ready": False,
                               "started": False, "containerID": "containerd://%032x" % start,
                               "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                        "startedAt": s, "finishedAt": e}}}]}})
    return api.get(path)["metadata"]["uid"]


def samples(day0):
    """Per device, each sample time and the holders' (pod, use) at it: a pod's series exists
    while it holds the GPU, on the 15-second grid, except in a gap."""
    out = {}
    for node, dev, name, _, _, b, e, use in PODS:
        first = day0 + b + (-(day0 + b)) % STEP
        for t in range(first, day0 + e, STEP):
            g = GAPS.get(dev)
            if g and day0 + g[0] <= t < day0 + g[1]:
                continue
            out.setdefault(dev, {}).setdefault(t, []).append((name, use))
    return out


def openmetrics(path, smp, uids, day0):
    uuids = {"A": "GPU-5f0b9c1e-7a31-4c2b-9d0e-1a2b3c4d5e6f",
             "B": "GPU-0c3d2e1f-0a9b-4c8d-8e7f-6a5b4c3d2e1f",
             "C": "GPU-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"}
    host = {"A": "t4-ts", "B": "t4-ts", "C": "a10-mps"}
    model = {"A": "Tesla T4", "B": "Tesla T4", "C": "NVIDIA A10"}
    util, eng = [], []
    for dev, at in smp.items():
        base = ('gpu="%d",UUID="%s",device="nvidia%d",modelName="%s",Hostname="%s"'
                % (ord(dev) - 65, uuids[dev], ord(dev) - 65, model[dev], host[dev]))
        for t, holders in sorted(at.items()):
            total = min(100.0, 100 * sum(u for _, u in holders))
            util.append("DCGM_FI_DEV_GPU_UTIL{%s} %g %d" % (base, total, t))
            for name, u in holders:
                pod = ',container="main",namespace="%s",pod="%s"' % (NS, name)
                util.append('DCGM_FI_DEV_GPU_UTIL{%s%s,pod_uid="%s"} %g %d'
                            % (base, pod, uids[name], 100 * u, t))
                eng.append("DCGM_FI_PROF_GR_ENGINE_ACTIVE{%s%s} %g %d"
                           % (base, pod, total / 100, t))
    with open(path, "w") as f:
        f.write("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
        f.write("\n".join(util) + "\n")
        f.write("# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n")
        f.write("\n".join(eng) + "\n")
        f.write("# EOF\n")


def truth(smp, day0):
    """Per pod: allocation cost, usage-basis cost, measured cost. A point every 15 s from the
    day's start takes, per holder, its newest sample of the last 5 minutes (Prometheus); the
    point covers the 15 s before it, split among the holders by use x seconds held."""
    info = {name: (node, dev, geq, day0 + b, day0 + e, team)
            for node, dev, name, team, geq, b, e, _ in PODS}
    alloc = {n: (e - b) * g / 3600 * PRICE[nd] for n, (nd, _, g, b, e, _) in info.items()}
    cost, measured = dict(alloc), {n: 0.0 for n in info}
    for dev, at in smp.items():
        times = sorted(at)
        last = {}  # pod -> (time, use) of its newest sample
        k = 0
        for t in range(day0, day0 + DAY, STEP):
            while k < len(times) and times[k] <= t:
                for name, u in at[times[k]]:
                    last[name] = (times[k], u)
                k += 1
            parts = []
            for name, (ts, u) in last.items():
                if t - ts >= LOOKBACK:
                    continue
                nd, _, g, b, e, _ = info[name]
                held = max(0, min(t, e) - max(t - STEP, b))
                if held > 0:
                    parts.append((name, u, held, held * g / 3600 * PRICE[nd]))
            if len(parts) < 2:
                continue
            pot = sum(p[3] for p in parts)
            w = sum(p[1] * p[2] for p in parts)
            for name, u, held, a in parts:
                share = pot * u * held / w if w > 0 else a
                cost[name] += share - a
                measured[name] += share
    teams = {}
    for n, (_, _, _, _, _, team) in info.items():
        teams[team] = teams.get(team, 0.0) + cost[n]
    return alloc, cost, measured, teams


def get(ctl, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (ctl.port, path), timeout=10) as r:
        return json.loads(r.read())


def config(tmp_path, prom_url):
    cfg = json.loads(harness.CONFIG.read_text())
    cfg["usage"] = {"prometheus": {"url": prom_url, "interval_seconds": 10, "timeout_seconds": 10,
                                   "lookback_days": 3, "step_seconds": STEP}}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    return f


def test_usage_basis_from_prometheus(cluster, controller_bin, tmp_path):
    now = int(time.time())
    day0 = now - now % DAY - DAY  # yesterday, a complete UTC day
    api = cluster.api
    for ns in (NS, "gpu-cost"):
        api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": ns}})
    cluster.apply(harness.RBAC)
    for name in ("t4-ts", "a10-mps"):
        cluster.etcd.put("/registry/minions/" + name, json.dumps(node_obj(name, day0 - 3 * DAY)))
        api.get("/api/v1/nodes/" + name)
    uids = {}
    for node, _, name, team, _, b, e, _ in PODS:
        uids[name] = create_finished_pod(api, name, team, node, day0 + b, day0 + e)
    smp = samples(day0)
    om = tmp_path / "shared.om.txt"
    openmetrics(om, smp, uids, day0)
    prom = dcgm.Prometheus(tmp_path / "prometheus")
    prom.backfill(om)
    prom.start()
    ctl = None
    try:
        cluster.wait_controller_can()
        ctl = harness.Controller(controller_bin, cluster, tmp_path / "controller.log",
                                 config=config(tmp_path, prom.url),
                                 extra=["--no-leader-election", "--snapshot-interval", "1s",
                                        # yesterday's pods still intervals when the history
                                        # arrives: measured use of folded hours stays as
                                        # allocated (docs/ledger.md)
                                        "--fold-after", "72h"])
        ctl.start()
        ctl.wait_ready(timeout=60)
        alloc, cost, measured, teams = truth(smp, day0)
        win = "%s,%s" % (sim.rfc3339(day0), sim.rfc3339(day0 + DAY))
        deadline = time.time() + 180
        bad = ["(not read yet)"]
        while time.time() < deadline:
            us = get(ctl, "/api/v1/costs?window=%s&by=namespace,pod&basis=usage" % win)
            got = {g["keys"]["pod"]: g for g in us["groups"]}
            bad = ["%s: %.6f, truth %.6f" % (n, got.get(n, {}).get("cost", 0), c)
                   for n, c in cost.items() if abs(got.get(n, {}).get("cost", 0) - c) > 0.005]
            if not bad:
                break
            time.sleep(2)
        assert not bad, "\n".join(bad) + "\n" + harness.tail(ctl.log_path)
        print("usage basis per pod (allocation -> usage): %s" % {
            n: "%.4f -> %.4f" % (alloc[n], got[n]["cost"]) for n in sorted(got)})
        # The split moved money, where it should.
        assert cost["trainer"] > alloc["trainer"] + 0.05
        assert cost["scorer"] < alloc["scorer"] - 0.02
        assert cost["reranker"] < alloc["reranker"] - 0.05
        assert got["alone"]["cost"] == pytest.approx(alloc["alone"], abs=1e-9)
        for n in cost:
            assert got[n]["measured_cost"] == pytest.approx(measured[n], abs=0.005), n
        al = get(ctl, "/api/v1/costs?window=%s&by=namespace,pod" % win)
        for g in al["groups"]:
            assert g["cost"] == pytest.approx(alloc[g["keys"]["pod"]], abs=1e-6)
        # Both bases add up to the same total and, with idle, to the nodes' cost of the day.
        assert us["total"]["cost"] == pytest.approx(al["total"]["cost"], abs=1e-6)
        assert us["idle"]["cost"] == pytest.approx(al["idle"]["cost"], abs=1e-6)
        day_cost = 24 * (2 * T4_PRICE + A10_PRICE)
        assert us["total"]["cost"] + us["idle"]["cost"] == pytest.approx(day_cost, abs=1e-6)
        # Per team, the same money to the cent.
        bt = get(ctl, "/api/v1/costs?window=%s&by=team&basis=usage" % win)
        got_t = {g["keys"]["team"]: g["cost"] for g in bt["groups"]}
        for team, c in teams.items():
            assert got_t[team] == pytest.approx(c, abs=0.01), team
        # The day's report names both bases for each team.
        deadline = time.time() + 60
        rep = None
        while time.time() < deadline:
            reps = harness.read_reports(cluster)
            rep = reps.get("gpu-cost-report-daily-" + time.strftime("%Y-%m-%d",
                                                                     time.gmtime(day0)))
            if rep and rep.json and rep.json.get("usage_basis"):
                break
            time.sleep(2)
        assert rep and rep.json.get("usage_basis"), "no Usage basis in the day's report"
        rt = {t["team"]: t for t in rep.json["usage_basis"]["teams"]}
        for team, c in teams.items():
            assert rt[team]["usage_cost"] == pytest.approx(c, abs=0.01), team
        assert "## Usage basis" in rep.md
    finally:
        if ctl:
            ctl.stop()
        prom.stop()
