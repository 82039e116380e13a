"""Self-test of the end-to-end ground truth on a case small enough to compute by hand.

No cluster needed. Every expected figure below is worked out in the comments from the rules
(docs/controller.md, docs/architecture.md), not taken from the code under test.
"""

import pytest

import e2e_truth as truth  # registered by conftest.py (tests/cli has a truth.py too)

H = 3600
T0 = truth.utc("2026-11-16T00:00:00Z")  # a Monday: ISO week 2026-W47 starts here

CONFIG = {
    "attribution": {"team_label_keys": ["team"], "project_label_keys": ["project"],
                    "namespace_teams": {"legacy": "data-eng"}},
    "prices": {"currency": "USD", "prices": [
        {"model": "NVIDIA-H100-80GB-HBM3", "capacity_type": "*", "usd_per_gpu_hour": 4.0},
        {"model": "Tesla-T4", "capacity_type": "*", "usd_per_gpu_hour": 0.6},
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 100.0}]},
}


def node(name, created, labels, alloc):
    return {"object": {"metadata": {"name": name, "creationTimestamp": created, "labels": labels},
                       "status": {"allocatable": alloc}}, "deleted_at": None}


def ts(t):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def pod(name, ns, node_name, bound, end, gpus=None, labels=None, init=None):
    c = {"name": "c", "resources": {"limits": {k: str(v) for k, v in (gpus or {}).items()}}}
    spec = {"containers": [c]}
    if init:
        spec["initContainers"] = [{"name": "i", "resources": {"limits": init}}]
    return {"namespace": ns, "name": name, "labels": labels or {}, "spec": spec,
            "node": node_name, "bound": bound, "end": end}


def record():
    h100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    nodes = [
        # A: 2 whole H100s at $4, from day 1 20:00 -> capacity 2 GPU-equivalents
        node("a", ts(T0 + 20 * H), h100, {"nvidia.com/gpu": "2", "cpu": "8"}),
        # B: H100 MIG mixed, two 3g.40gb = max(3/7, 4/8) = 0.5 each -> capacity 1.0
        node("b", ts(T0), dict(h100, **{"nvidia.com/mig.strategy": "mixed"}),
             {"nvidia.com/mig-3g.40gb": "2", "nvidia.com/gpu": "0"}),
        # C: 1 T4 time-sliced 4 ways (4 units of 0.25) at $0.60; deleted at 36:00
        node("c", ts(T0), {"nvidia.com/gpu.product": "Tesla-T4-SHARED",
                           "nvidia.com/gpu.replicas": "4"}, {"nvidia.com/gpu": "4"}),
        # a CPU node: no capacity, no price needed
        node("cpu", ts(T0), {}, {"cpu": "16"}),
    ]
    nodes[2]["deleted_at"] = T0 + 36 * H
    nss = [{"metadata": {"name": "ml", "labels": {}}},
           {"metadata": {"name": "recsys", "labels": {"team": "ads"}}},
           {"metadata": {"name": "legacy"}},
           {"metadata": {"name": "sandbox", "labels": {}}}]
    pods = [
        # 1 GPU on A, 22:00 day 1 to 02:00 day 2: 2 h in each day
        pod("p1", "ml", "a", T0 + 22 * H, T0 + 26 * H, {"nvidia.com/gpu": 1},
            {"team": "vision", "project": "det"}),
        # a 3g.40gb slice (0.5) on B for 1 h on day 2; team from the namespace label
        pod("p2", "recsys", "b", T0 + 25 * H, T0 + 26 * H, {"nvidia.com/mig-3g.40gb": 1},
            {"project": "ranker"}),
        # a 30-second job on one T4 share (0.25), unlabelled namespace: unattributed
        pod("p3", "sandbox", "c", T0 + 10 * H, T0 + 10 * H + 30, {"nvidia.com/gpu": 1}),
        # still running on B from 23:00 day 2
        pod("p4", "recsys", "b", T0 + 47 * H, None, {"nvidia.com/mig-3g.40gb": 1},
            {"project": "ranker"}),
        # init container asks 2 GPUs, the app 1: holds 2 for an hour on day 2; team from the
        # configured namespace map, project unattributed
        pod("p5", "legacy", "a", T0 + 40 * H, T0 + 41 * H, {"nvidia.com/gpu": 1},
            init={"nvidia.com/gpu": "2"}),
        # never bound, and a CPU-only pod: nothing
        pod("p6", "ml", None, None, None, {"nvidia.com/gpu": 1}),
        pod("p7", "ml", "cpu", T0 + 1 * H, None, None),
    ]
    return {"nodes": nodes, "namespaces": nss, "pods": pods}


U = truth.UNATTRIBUTED


def approx(x):
    return pytest.approx(x, abs=1e-9)


def test_day_one():
    t = truth.Truth(record(), CONFIG)
    w = t.window(T0, T0 + 24 * H)
    assert set(w["groups"]) == {("vision", "det"), (U, U)}
    assert w["groups"][("vision", "det")]["gpu_seconds"] == approx(7200)   # 1 GPU x 2 h
    assert w["groups"][("vision", "det")]["cost_usd"] == approx(8.0)       # 2 h x $4
    assert w["groups"][(U, U)]["gpu_seconds"] == approx(7.5)               # 0.25 x 30 s
    assert w["groups"][(U, U)]["cost_usd"] == approx(0.00125)              # 7.5/3600 x 0.6
    assert w["total"]["gpu_seconds"] == approx(7207.5)
    assert w["unattributed"]["gpu_seconds"] == approx(7.5)
    # capacity: A 2 x 4 h = 28800 ($32); B 1.0 x 24 h = 86400 ($96); C 1.0 x 24 h ($14.40)
    assert w["capacity"]["gpu_seconds"] == approx(28800 + 86400 + 86400)
    assert w["capacity"]["cost_usd"] == approx(32 + 96 + 14.4)
    idle = w["idle_nodes"]
    assert idle["a"]["gpu_seconds"] == approx(21600) and idle["a"]["cost_usd"] == approx(24)
    assert idle["b"]["gpu_seconds"] == approx(86400) and idle["b"]["cost_usd"] == approx(96)
    assert idle["c"]["gpu_seconds"] == approx(86392.5)
    assert idle["c"]["cost_usd"] == approx(14.39875)
    assert "cpu" not in idle


def test_day_two():
    t = truth.Truth(record(), CONFIG)
    w = t.window(T0 + 24 * H, T0 + 48 * H)
    g = w["groups"]
    assert set(g) == {("vision", "det"), ("ads", "ranker"), ("data-eng", U)}
    assert g[("vision", "det")]["gpu_seconds"] == approx(7200)
    # p2 0.5 x 1 h + p4 0.5 x 1 h (23:00-24:00) = 3600 GPU-s, $4
    assert g[("ads", "ranker")]["gpu_seconds"] == approx(3600)
    assert g[("ads", "ranker")]["cost_usd"] == approx(4.0)
    assert g[("ads", "ranker")]["pods"] == 2
    assert g[("data-eng", U)]["gpu_seconds"] == approx(7200)               # 2 GPUs x 1 h
    assert g[("data-eng", U)]["cost_usd"] == approx(8.0)
    assert w["total"]["gpu_seconds"] == approx(18000)
    assert w["total"]["cost_usd"] == approx(20.0)
    assert w["unattributed"]["gpu_seconds"] == approx(7200)
    # C was deleted at 36:00: 12 h of capacity, all idle
    assert w["idle_nodes"]["c"]["gpu_seconds"] == approx(43200)
    assert w["idle_nodes"]["c"]["cost_usd"] == approx(7.2)
    # A: 2 x 24 h - (p1 2 h + p5 2 GPU-h) = 172800 - 14400
    assert w["idle_nodes"]["a"]["gpu_seconds"] == approx(158400)
    assert w["idle_nodes"]["b"]["gpu_seconds"] == approx(86400 - 3600)


def test_open_pod_accrues_to_now_or_window_end():
    t = truth.Truth(record(), CONFIG)
    # day 3 complete: p4 holds 0.5 all day = 43200 GPU-s, $48
    w = t.window(T0 + 48 * H, T0 + 72 * H)
    assert w["groups"][("ads", "ranker")]["gpu_seconds"] == approx(43200)
    assert w["groups"][("ads", "ranker")]["cost_usd"] == approx(48.0)
    # the same day seen at 12:00: half of it
    w = t.window(T0 + 48 * H, T0 + 72 * H, now=T0 + 60 * H)
    assert w["groups"][("ads", "ranker")]["gpu_seconds"] == approx(21600)


def test_periods():
    t = truth.Truth(record(), CONFIG)
    days = t.complete_days(T0 + 60 * H)
    assert days == [("gpu-cost-report-daily-2026-11-16", T0, T0 + 24 * H),
                    ("gpu-cost-report-daily-2026-11-17", T0 + 24 * H, T0 + 48 * H)]
    assert t.complete_weeks(T0 + 60 * H) == []
    assert t.complete_weeks(T0 + 7 * 24 * H) == [("gpu-cost-report-weekly-2026-w47", T0,
                                                  T0 + 7 * 24 * H)]
    # ISO week naming at year ends (the same examples as docs/report.md)
    assert truth.week_name(truth.utc("2027-01-01T00:00:00Z")) == "gpu-cost-report-weekly-2026-w53"
    assert truth.week_name(truth.utc("2024-12-30T00:00:00Z")) == "gpu-cost-report-weekly-2025-w01"
    assert truth.iso_week_start(truth.utc("2026-11-22T23:59:59Z")) == T0


def test_week_sums_its_days():
    t = truth.Truth(record(), CONFIG)
    wk = t.window(T0, T0 + 7 * 24 * H)
    days = [t.window(T0 + i * 24 * H, T0 + (i + 1) * 24 * H) for i in range(7)]
    assert wk["total"]["gpu_seconds"] == approx(sum(d["total"]["gpu_seconds"] for d in days))
    assert wk["total"]["cost_usd"] == pytest.approx(sum(d["total"]["cost_usd"] for d in days))


def test_exclude_and_unknown_node():
    rec = record()
    t = truth.Truth(rec, CONFIG, exclude=lambda p: p["name"] == "p1")
    assert ("vision", "det") not in t.window(T0, T0 + 24 * H)["groups"]
    rec["pods"].append(pod("p8", "ml", "nowhere", T0, None, {"nvidia.com/gpu": 1}))
    with pytest.raises(ValueError, match="not a GPU node"):
        truth.Truth(rec, CONFIG)
