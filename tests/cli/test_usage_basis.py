"""`gpu-cost analyze --basis usage`: time-sliced GPUs split by measured use, against a computation
of the rule written here (docs/ledger.md, "The usage basis"), never the program's own figures.

The cluster: one GKE-style T4 node time-sliced four ways (two GPUs, nvidia.com/gpu 8, a quarter
GPU per unit) at $0.40 per GPU-hour. On GPU A three pods of three teams come and go at times
between samples; GPU B has one pod alone (nothing to split). Per-pod use is written as the
exporters write it (tests/fixtures/SOURCES.md): dcgm-exporter with KUBERNETES_VIRTUAL_GPUS
(per-pod DCGM_FI_DEV_GPU_UTIL with pod_uid beside the device's own series and the engine
figure copied to every sharer) or HAMi's vGPU monitor (--legacy-metrics names, no uid: pods
found by name). Samples every 15 s, with a 30-minute gap on GPU A.
"""

import calendar
import json
import time

import pytest

DAY0 = calendar.timegm((2026, 11, 17, 0, 0, 0))
WINDOW = "2026-11-17T00:00:00Z,2026-11-18T00:00:00Z"
PRICE = 0.40
GEQ = 0.25
STEP = 15
UUID_A = "GPU-5f0b9c1e-7a31-4c2b-9d0e-1a2b3c4d5e6f"
UUID_B = "GPU-0c3d2e1f-0a9b-4c8d-8e7f-6a5b4c3d2e1f"
GAP = (DAY0 + 3 * 3600 + 1800, DAY0 + 4 * 3600)  # no sample of GPU A in it

# pod, team, GPU, bound, end (seconds after midnight), and its measured use at time t
PODS = [
    ("trainer", "vision", UUID_A, 0, 6 * 3600, lambda t: 0.55 + 0.3 * ((t // 900) % 2)),
    ("tokenizer", "nlp", UUID_A, 3600 + 7, 5 * 3600 - 7, lambda t: 0.2),
    ("scorer", "ads", UUID_A, 2 * 3600 + 3, 3 * 3600 + 11, lambda t: 0.05 * ((t // 60) % 3)),
    ("alone", "vision", UUID_B, 0, 4 * 3600, lambda t: 0.9),
]


def ts(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def dumps(tmp_path):
    node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "t4-a", "uid": "node-t4-a", "creationTimestamp": "2026-11-01T00:00:00Z",
                     "labels": {"kubernetes.io/hostname": "t4-a",
                                "nvidia.com/gpu.product": "Tesla-T4-SHARED",
                                "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.count": "2",
                                "nvidia.com/gpu.sharing-strategy": "time-slicing"},
                     "annotations": {"gpu-cost.io/price-per-gpu-hour": str(PRICE)}},
        "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "32"}},
    }
    pods = []
    for name, team, _, b, e, _ in PODS:
        pods.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shared", "uid": "uid-" + name,
                         "labels": {"team": team, "project": name},
                         "creationTimestamp": ts(DAY0 + b)},
            "spec": {"nodeName": "t4-a", "containers": [
                {"name": "main", "image": "x",
                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
            "status": {"phase": "Succeeded",
                       "conditions": [{"type": "PodScheduled", "status": "True",
                                       "lastTransitionTime": ts(DAY0 + b)}],
                       "containerStatuses": [{"name": "main", "state": {"terminated": {
                           "exitCode": 0, "startedAt": ts(DAY0 + b),
                           "finishedAt": ts(DAY0 + e)}}}]},
        })
    (tmp_path / "nodes.json").write_text(json.dumps({"kind": "NodeList", "items": [node]}))
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "PodList", "items": pods}))


def samples():
    """Per device, the sample times and each holder's use at them: a pod's series exists while
    it holds the GPU (sampled at multiples of 15 s); GPU A is not sampled in GAP."""
    out = {}
    for name, _, uuid, b, e, use in PODS:
        first = DAY0 + b + (-b) % STEP
        for t in range(first, DAY0 + e, STEP):
            if uuid == UUID_A and GAP[0] <= t < GAP[1]:
                continue
            out.setdefault(uuid, {}).setdefault(t, []).append((name, use(t - DAY0)))
    return out


def write_dcgm(path, smp):
    base = ('gpu="0",UUID="%s",pci_bus_id="00000000:00:04.0",device="nvidia0",'
            'modelName="Tesla T4",Hostname="t4-a",DCGM_FI_DRIVER_VERSION="550.127.08"')
    lines = ["# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).",
             "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    eng = ["# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.",
           "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge"]
    for uuid, at in smp.items():
        for t, holders in sorted(at.items()):
            dev = base % uuid
            total = min(100, sum(u for _, u in holders) * 100)
            lines.append("DCGM_FI_DEV_GPU_UTIL{%s} %g %d" % (dev, total, t * 1000))
            for name, u in holders:
                lines.append('DCGM_FI_DEV_GPU_UTIL{%s,container="main",namespace="shared",'
                             'pod="%s",pod_uid="uid-%s"} %g %d'
                             % (dev, name, name, round(u * 100, 6), t * 1000))
                # The engine figure, copied to every sharer: nobody's own use.
                eng.append('DCGM_FI_PROF_GR_ENGINE_ACTIVE{%s,container="main",namespace="shared",'
                           'pod="%s"} %g %d' % (dev, name, total / 100, t * 1000))
    path.write_text("\n".join(lines + eng) + "\n")


def write_hami(path, smp):
    lines = ["# HELP Device_utilization_desc_of_container Container device utilization "
             "description", "# TYPE Device_utilization_desc_of_container gauge"]
    for uuid, at in smp.items():
        for t, holders in sorted(at.items()):
            for name, u in holders:
                lines.append('Device_utilization_desc_of_container{ctrname="main",deviceuuid="%s",'
                             'podname="%s",podnamespace="shared",vdeviceid="0",zone="vGPU"} %g %d'
                             % (uuid, name, round(u * 100, 6), t * 1000))
    path.write_text("\n".join(lines) + "\n")


def truth(smp):
    """Usage-basis cost and measured cost per pod by the rule, from the same samples: each
    sample covers (max(previous, t - 15), t] of its GPU; the holders' allocation cost of it is
    split by use x seconds held; one holder alone keeps its own."""
    iv = {name: (DAY0 + b, DAY0 + e) for name, _, _, b, e, _ in PODS}
    alloc = {name: (e - b) * GEQ / 3600 * PRICE for name, (b, e) in iv.items()}
    cost, measured = dict(alloc), {name: 0.0 for name in iv}
    for uuid, at in smp.items():
        prev = None
        for t in sorted(at):
            lo = prev if prev is not None and t - prev <= STEP else t - STEP
            prev = t
            parts = []
            for name, u in at[t]:
                held = max(0, min(t, iv[name][1]) - max(lo, iv[name][0]))
                if held > 0:
                    parts.append((name, u, held, held * GEQ / 3600 * PRICE))
            if len(parts) < 2:
                continue
            pot = sum(p[3] for p in parts)
            w = sum(p[1] * p[2] for p in parts)
            for name, u, held, a in parts:
                share = pot * u * held / w if w > 0 else a
                cost[name] += share - a
                measured[name] += share
    return cost, measured, alloc


def analyze(cli, tmp_path, metrics, basis, by="pod"):
    r = cli.ok("analyze", "--pods", tmp_path / "pods.json", "--nodes", tmp_path / "nodes.json",
               "--window", WINDOW, "--by", by, "--format", "json", "--metrics", metrics,
               "--basis", basis)
    return json.loads(r.out)


@pytest.mark.parametrize("source", ["dcgm", "hami"])
def test_usage_basis_equals_the_rule(cli, tmp_path, source):
    dumps(tmp_path)
    smp = samples()
    metrics = tmp_path / ("%s.prom" % source)
    (write_dcgm if source == "dcgm" else write_hami)(metrics, smp)
    cost, measured, alloc = truth(smp)
    us = analyze(cli, tmp_path, metrics, "usage")
    al = analyze(cli, tmp_path, metrics, "allocation")
    assert us["basis"] == "usage" and "basis" not in al
    got = {g["keys"]["pod"]: g for g in us["groups"]}
    held = {g["keys"]["pod"]: g for g in al["groups"]}
    assert set(got) == set(cost)
    for name in cost:
        assert got[name]["cost"] == pytest.approx(cost[name], rel=1e-9, abs=1e-9), name
        assert got[name]["measured_cost"] == pytest.approx(measured[name], rel=1e-9,
                                                           abs=1e-9), name
        assert held[name]["cost"] == pytest.approx(alloc[name], rel=1e-12), name
        # GPU-hours are what each pod held, in both bases.
        assert got[name]["gpu_hours"] == pytest.approx(held[name]["gpu_hours"], rel=1e-12)
    # The split moves money: the busy trainer pays more than it held, the idle scorer less;
    # the pod alone on its GPU pays exactly what it held, measured or not.
    assert cost["trainer"] > alloc["trainer"] + 0.01
    assert cost["tokenizer"] < alloc["tokenizer"] - 0.01
    assert got["alone"]["cost"] == pytest.approx(alloc["alone"], rel=1e-12)
    assert got["alone"]["measured_cost"] == 0
    # Both bases add up to the same total, the same idle and the node's cost.
    assert us["total"]["cost"] == pytest.approx(al["total"]["cost"], rel=1e-12)
    assert us["idle"]["cost"] == pytest.approx(al["idle"]["cost"], rel=1e-12)
    assert us["total"]["cost"] + us["idle"]["cost"] == pytest.approx(2 * 24 * PRICE, rel=1e-12)
    # By team: the same money, grouped.
    teams = analyze(cli, tmp_path, metrics, "usage", by="team")
    by_team = {g["keys"]["team"]: g["cost"] for g in teams["groups"]}
    assert by_team["nlp"] == pytest.approx(cost["tokenizer"], rel=1e-9)
    assert by_team["vision"] == pytest.approx(cost["trainer"] + cost["alone"], rel=1e-9)


def test_usage_basis_without_metrics_is_allocation(cli, tmp_path):
    dumps(tmp_path)
    empty = tmp_path / "empty.prom"
    empty.write_text("# nothing measured\n")
    us = analyze(cli, tmp_path, empty, "usage")
    al = analyze(cli, tmp_path, empty, "allocation")
    for a, b in zip(us["groups"], al["groups"]):
        assert a["keys"] == b["keys"] and a["cost"] == b["cost"] and a["measured_cost"] == 0


def test_basis_flag_is_checked(cli, tmp_path):
    dumps(tmp_path)
    r = cli("analyze", "--pods", tmp_path / "pods.json", "--nodes", tmp_path / "nodes.json",
                "--window", WINDOW, "--basis", "use")
    assert r.code == 2 and "--basis" in r.err


def export_rows(cli, tmp_path, metrics, *args):
    import csv
    import io
    r = cli.ok("export", "--pods", tmp_path / "pods.json", "--nodes", tmp_path / "nodes.json",
               "--window", WINDOW, "--metrics", metrics, *args)
    return list(csv.DictReader(io.StringIO(r.out, newline="")))


def test_focus_export_in_the_usage_basis(cli, tmp_path):
    """FOCUS 1.3 in the usage basis: the usage rows name the method (gpu-cost:measured-use) and
    carry the usage-basis cost; every node's allocated charges still add up to it (ratios sum to
    1), the file's total is the allocation basis's, and each team's rows add up to analyze's
    usage-basis figure."""
    dumps(tmp_path)
    smp = samples()
    metrics = tmp_path / "dcgm.prom"
    write_dcgm(metrics, smp)
    cost, _, _ = truth(smp)
    us = export_rows(cli, tmp_path, metrics, "--focus-version", "1.3", "--basis", "usage")
    al = export_rows(cli, tmp_path, metrics, "--focus-version", "1.3")
    assert {r["AllocatedMethodId"] for r in us if r["x_CostKind"] == "usage"} == \
        {"gpu-cost:measured-use"}
    assert {r["AllocatedMethodId"] for r in al if r["x_CostKind"] == "usage"} == \
        {"gpu-cost:held-gpu-equivalents"}
    assert sum(float(r["BilledCost"]) for r in us) == pytest.approx(
        sum(float(r["BilledCost"]) for r in al), rel=1e-9)
    origin = {}
    for r in us:
        d = json.loads(r["AllocatedMethodDetails"])
        k = (r["ResourceId"], r["ChargePeriodStart"])
        origin[k] = origin.get(k, 0) + sum(e["AllocatedRatio"] for e in d["Elements"])
    for k, v in origin.items():
        assert v == pytest.approx(1.0, abs=1e-6), k
    teams = {}
    for r in us:
        if r["x_CostKind"] == "usage":
            t = json.loads(r["AllocatedTags"])["gpu-cost/team"]
            teams[t] = teams.get(t, 0.0) + float(r["BilledCost"])
    assert teams["nlp"] == pytest.approx(cost["tokenizer"], abs=1e-6)
    assert teams["ads"] == pytest.approx(cost["scorer"], abs=1e-6)
    assert teams["vision"] == pytest.approx(cost["trainer"] + cost["alone"], abs=1e-6)
