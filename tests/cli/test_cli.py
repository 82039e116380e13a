"""Black-box tests of the gpu-cost CLI against an independent ground truth (truth.py).

The binary is named by $GPU_COST (`make cli-test` sets it). Figures must equal the truth to
1e-6 GPU-seconds and to the cent; the truth itself is checked against hand-computed figures.
"""

import copy
import json
import math
import re

import pytest

import truth
from conftest import EXAMPLES, FIXTURES, analyze_args

W47 = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"   # the demo week
W46 = "2026-11-09T00:00:00Z,2026-11-16T00:00:00Z"   # the week before
CUT = "2026-11-12T07:13:21Z,2026-11-19T15:42:08Z"   # cuts running and finished pods mid-interval
HOUR = "2026-11-20T14:00:00Z,2026-11-20T15:00:00Z"
LAST_DAY = "2026-11-22T06:00:00Z,2026-11-23T06:00:00Z"  # up to the moment of the dump
SHORT = "2026-11-20T16:00:00Z,2026-11-20T16:00:20Z"  # 20 s, inside a 30-second job
EARLY = "2026-11-01T00:00:00Z,2026-11-02T00:00:00Z"  # no pod yet; some nodes not yet created
# Past the dump's moment: in analyze, pods still running accrue to the window's end.
AFTER = "2026-11-23T00:00:00Z,2026-11-24T00:00:00Z"

WINDOWS = {"w47": W47, "w46": W46, "cut": CUT, "hour": HOUR, "last-day": LAST_DAY,
           "short": SHORT, "early": EARLY, "after": AFTER}
BYS = ["team,project", "namespace", "model", "node", "capacity_type", "team",
       "model,capacity_type", "namespace,team,project"]

SEC_TOL = 1e-6   # GPU-seconds
USD_TOL = 0.005  # to the cent


def norm_model(s):
    return (s or "").lower().replace(" ", "-")


# ---- comparing a CLI summary with the truth ------------------------------------------------------

def cli_groups(doc, by):
    dims = by.split(",")
    assert doc["by"] == dims, doc["by"]
    out = {}
    for g in doc["groups"]:
        key = tuple(g["keys"][d] for d in dims)
        assert key not in out, "group %r listed twice" % (key,)
        out[key] = g
    return out


def assert_summary_equals_truth(doc, t, by, check_pods=False):
    dims = by.split(",")
    got = cli_groups(doc, by)
    want = t["groups"]
    nonzero = {k: g for k, g in got.items() if g["gpu_seconds"] > SEC_TOL or
               g["cost_usd"] > USD_TOL}
    assert set(nonzero) == set(want), (
        "groups differ\n  only in CLI: %s\n  only in truth: %s"
        % (sorted(set(nonzero) - set(want)), sorted(set(want) - set(nonzero))))
    for k, w in want.items():
        g = got[k]
        assert abs(g["gpu_seconds"] - w["gpu_seconds"]) <= SEC_TOL, (
            "%s=%s: gpu_seconds %r, truth %r" % (dims, k, g["gpu_seconds"], w["gpu_seconds"]))
        assert abs(g["cost_usd"] - w["cost_usd"]) <= USD_TOL, (
            "%s=%s: cost_usd %r, truth %r" % (dims, k, g["cost_usd"], w["cost_usd"]))
        assert math.isclose(g["gpu_hours"] * 3600, g["gpu_seconds"], rel_tol=1e-12,
                            abs_tol=1e-9), (k, g)
        if check_pods:
            assert g["pods"] == w["pods"], "%s=%s: pods %r, truth %r" % (dims, k, g["pods"],
                                                                        w["pods"])
    tot = doc["total"]
    assert abs(tot["gpu_hours"] * 3600 - t["total"]["gpu_seconds"]) <= SEC_TOL, (
        tot, t["total"])
    assert abs(tot["cost_usd"] - t["total"]["cost_usd"]) <= USD_TOL, (tot, t["total"])
    if check_pods:
        assert tot["pods"] == t["total"]["pods"], (tot, t["total"])
    un = doc["unattributed"]
    assert abs(un["gpu_hours"] * 3600 - t["unattributed"]["gpu_seconds"]) <= SEC_TOL, (
        un, t["unattributed"])
    assert abs(un["cost_usd"] - t["unattributed"]["cost_usd"]) <= USD_TOL, (
        un, t["unattributed"])


def assert_idle_equals_truth(doc, t):
    idle = doc["idle"]
    assert abs(idle["gpu_hours"] * 3600 - t["idle"]["gpu_seconds"]) <= SEC_TOL, (
        idle["gpu_hours"] * 3600, t["idle"])
    assert abs(idle["cost_usd"] - t["idle"]["cost_usd"]) <= USD_TOL, (idle["cost_usd"],
                                                                       t["idle"])
    got = {}
    for n in idle["nodes"]:
        assert n["node"] not in got, "idle node %s listed twice" % n["node"]
        got[n["node"]] = n
    for name, w in t["idle_nodes"].items():
        if w["gpu_seconds"] <= SEC_TOL:
            if name in got:
                assert got[name]["gpu_hours"] * 3600 <= SEC_TOL, (name, got[name])
            continue
        assert name in got, "idle node %s missing (truth %.6f GPU-h)" % (
            name, w["gpu_seconds"] / 3600)
        g = got[name]
        assert abs(g["gpu_hours"] * 3600 - w["gpu_seconds"]) <= SEC_TOL, (name, g, w)
        assert abs(g["cost_usd"] - w["cost_usd"]) <= USD_TOL, (name, g, w)
        assert norm_model(g["model"]) == norm_model(w["model"]), (name, g["model"], w["model"])
        assert g["capacity_type"] == w["capacity_type"], (name, g, w)
    for name in got:
        assert name in t["idle_nodes"], "idle node %s is not a GPU node" % name
    cap = doc["capacity"]
    assert abs(cap["gpu_hours"] * 3600 - t["capacity"]["gpu_seconds"]) <= SEC_TOL, (
        cap, t["capacity"])
    assert abs(cap["cost_usd"] - t["capacity"]["cost_usd"]) <= USD_TOL, (cap, t["capacity"])


def money_strings(x):
    """How a total may be printed to the cent: 16291.49, 16,291.49."""
    return {"%.2f" % x, "{:,.2f}".format(x)}


# ---- the truth, checked by hand ---------------------------------------------------------------

def mk_node(name, created, labels, alloc, annotations=None):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "00000000-0000-4000-8000-%012d" % len(name),
                         "creationTimestamp": created, "labels": labels,
                         "annotations": annotations or {}},
            "spec": {},
            "status": {"capacity": dict(alloc, cpu="64", memory="512Gi", pods="110"),
                       "allocatable": dict(alloc, cpu="63", memory="500Gi", pods="110")}}


_uid = [0]


def mk_pod(ns, name, node, containers, *, labels=None, phase="Running", created=None,
           bound=None, finished=None, init=(), init_status=()):
    """containers: [(name, requests, limits)]; finished: [finishedAt per app container]."""
    _uid[0] += 1

    def c(n, req, lim, extra=None):
        d = {"name": n, "image": "nvcr.io/nvidia/cuda:12.6.2-base-ubuntu22.04",
             "resources": {}}
        if req is not None:
            d["resources"]["requests"] = req
        if lim is not None:
            d["resources"]["limits"] = lim
        d.update(extra or {})
        return d

    spec = {"containers": [c(*x) for x in containers], "restartPolicy": "Never"}
    if init:
        spec["initContainers"] = [c(*x) for x in init]
    if node:
        spec["nodeName"] = node
    st = {"phase": phase, "conditions": []}
    if bound:
        st["conditions"].append({"type": "PodScheduled", "status": "True",
                                 "lastProbeTime": None, "lastTransitionTime": bound})
        st["startTime"] = bound
        cs = []
        for i, x in enumerate(containers):
            if finished:
                cs.append({"name": x[0], "ready": False, "restartCount": 0,
                           "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                    "startedAt": bound,
                                                    "finishedAt": finished[i]}}})
            else:
                cs.append({"name": x[0], "ready": True, "restartCount": 0,
                           "state": {"running": {"startedAt": bound}}})
        st["containerStatuses"] = cs
        if init_status:
            st["initContainerStatuses"] = list(init_status)
    else:
        st["conditions"].append({"type": "PodScheduled", "status": "False",
                                 "reason": "Unschedulable", "lastProbeTime": None,
                                 "lastTransitionTime": created})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {},
                         "uid": "10000000-0000-4000-8000-%012d" % _uid[0],
                         "creationTimestamp": created or bound},
            "spec": spec, "status": st}


def mk_list(items):
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
            "items": items}


def mk_ns(name, labels):
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": dict(labels,
                                                      **{"kubernetes.io/metadata.name": name}),
                         "uid": "20000000-0000-4000-8000-%012d" % len(name),
                         "creationTimestamp": "2025-06-01T00:00:00Z"},
            "status": {"phase": "Active"}}


HAND_CONFIG = {
    "cluster": "hand",
    "attribution": {"team_label_keys": ["team"], "project_label_keys": ["project"],
                    "namespace_teams": {}, "namespace_projects": {}},
    "default_capacity_type": "on-demand",
    "prices": {"currency": "USD", "prices": [
        {"model": "NVIDIA-H100-80GB-HBM3", "capacity_type": "on-demand", "usd_per_gpu_hour": 10.0},
        {"model": "Tesla-T4", "capacity_type": "spot", "usd_per_gpu_hour": 0.20},
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 99.0}]},
}
HAND_WINDOW = "2026-01-01T00:00:00Z,2026-01-02T00:00:00Z"


def hand_cluster():
    """Two nodes, two GPU pods, one pending pod, one CPU pod. Figures worked out below."""
    nodes = [
        # 2 whole H100s at 10.00/GPU-h (Karpenter on-demand), there all day.
        mk_node("node-a", "2025-12-01T00:00:00Z",
                {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "2",
                 "karpenter.sh/capacity-type": "on-demand"}, {"nvidia.com/gpu": "2"}),
        # 4 T4 x 4 time-slice replicas (16 units of 1/4), GKE spot at 0.20, from noon.
        mk_node("node-b", "2026-01-01T12:00:00Z",
                {"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.count": "4",
                 "nvidia.com/gpu.replicas": "4", "cloud.google.com/gke-spot": "true"},
                {"nvidia.com/gpu": "16"}),
        mk_node("cpu-1", "2025-12-01T00:00:00Z", {}, {}),
    ]
    pods = [
        # 1 GPU from before the window until 06:30 -> 6.5 h in the window.
        mk_pod("ml", "train-1", "node-a", [("main", {"nvidia.com/gpu": "1"},
                                            {"nvidia.com/gpu": "1"})],
               labels={"team": "alpha", "project": "p1"}, phase="Succeeded",
               created="2025-12-31T21:59:58Z", bound="2025-12-31T22:00:00Z",
               finished=["2026-01-01T06:30:00Z"]),
        # 2 time-sliced units (limits only) = 0.5 GPU, from 18:00, still running -> 6 h.
        mk_pod("ml2", "serve-1", "node-b", [("srv", None, {"nvidia.com/gpu": "2"})],
               bound="2026-01-01T18:00:00Z"),
        mk_pod("ml", "waiting", None, [("main", {"nvidia.com/gpu": "1"}, None)],
               phase="Pending", created="2026-01-01T01:00:00Z"),
        mk_pod("ml", "cpu-only", "cpu-1", [("main", {"cpu": "2"}, None)],
               labels={"team": "alpha"}, bound="2026-01-01T00:10:00Z"),
    ]
    namespaces = [mk_ns("ml", {}), mk_ns("ml2", {"team": "beta"})]
    return mk_list(pods), mk_list(nodes), mk_list(namespaces)


HAND = {
    # train-1: 1 GPU x 23400 s = 23400 GPU-s; 6.5 h x 10.00 = 65.00
    ("alpha", "p1"): (23400.0, 65.00, 1),
    # serve-1: 0.5 GPU x 21600 s = 10800 GPU-s = 3 GPU-h x 0.20 = 0.60; team from the namespace
    ("beta", truth.UNATTRIBUTED): (10800.0, 0.60, 1),
}
HAND_TOTAL = (34200.0, 65.60)
HAND_UNATTRIBUTED = (10800.0, 0.60)
# node-a: 2 x 86400 = 172800 GPU-s = 48 GPU-h x 10 = 480.00; node-b: 4 x 43200 = 172800 at 0.20
HAND_CAPACITY = (345600.0, 489.60)
# node-a: 172800 - 23400 = 149400 GPU-s = 41.5 h -> 415.00; node-b: 162000 = 45 h -> 9.00
HAND_IDLE = {"node-a": (149400.0, 415.00), "node-b": (162000.0, 9.00)}


def test_truth_of_the_hand_example_equals_hand_figures():
    pods, nodes, namespaces = hand_cluster()
    t = truth.compute(pods, nodes, namespaces, HAND_CONFIG, HAND_WINDOW)
    assert set(t["groups"]) == set(HAND)
    for k, (sec, usd, n) in HAND.items():
        assert t["groups"][k]["gpu_seconds"] == pytest.approx(sec, abs=1e-9)
        assert t["groups"][k]["cost_usd"] == pytest.approx(usd, abs=1e-9)
        assert t["groups"][k]["pods"] == n
    assert t["total"]["gpu_seconds"] == pytest.approx(HAND_TOTAL[0])
    assert t["total"]["cost_usd"] == pytest.approx(HAND_TOTAL[1])
    assert t["unattributed"]["gpu_seconds"] == pytest.approx(HAND_UNATTRIBUTED[0])
    assert t["unattributed"]["cost_usd"] == pytest.approx(HAND_UNATTRIBUTED[1])
    assert t["capacity"]["gpu_seconds"] == pytest.approx(HAND_CAPACITY[0])
    assert t["capacity"]["cost_usd"] == pytest.approx(HAND_CAPACITY[1])
    for n, (sec, usd) in HAND_IDLE.items():
        assert t["idle_nodes"][n]["gpu_seconds"] == pytest.approx(sec)
        assert t["idle_nodes"][n]["cost_usd"] == pytest.approx(usd)


def test_truth_rules_by_hand():
    """The parts of the truth the examples lean on, each against a figure from the docs."""
    h100 = "NVIDIA-H100-80GB-HBM3"
    assert truth.mig_share(h100, "1g.10gb") == pytest.approx(1 / 7)
    assert truth.mig_share(h100, "1g.20gb") == pytest.approx(2 / 8)
    assert truth.mig_share(h100, "2g.20gb") == pytest.approx(2 / 7)
    assert truth.mig_share(h100, "3g.40gb") == pytest.approx(4 / 8)
    assert truth.mig_share(h100, "4g.40gb") == pytest.approx(4 / 7)
    assert truth.mig_share(h100, "7g.80gb") == pytest.approx(1)
    assert truth.mig_share("NVIDIA-A100-SXM4-40GB", "1g.5gb") == pytest.approx(1 / 7)
    assert truth.mig_share("NVIDIA-A100-SXM4-40GB", "1g.10gb") == pytest.approx(2 / 8)
    # Effective request: sidecar 1 started before an init container of 2, app 1:
    # max(1 + 1, 2 + 1) = 3.
    spec = {"initContainers": [
        {"name": "side", "restartPolicy": "Always",
         "resources": {"limits": {"nvidia.com/gpu": "1"}}},
        {"name": "init", "resources": {"requests": {"nvidia.com/gpu": "2"}}}],
        "containers": [{"name": "app", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    assert truth.effective_request(spec, truth.Config({})) == {"nvidia.com/gpu": 3}
    # An init container asking for more than the app: 4.
    spec = {"initContainers": [{"name": "i", "resources": {"limits": {"nvidia.com/gpu": "4"}}}],
            "containers": [{"name": "a", "resources": {"requests": {"nvidia.com/gpu": "2"}}},
                           {"name": "b", "resources": {"requests": {"cpu": "1"}}}]}
    assert truth.effective_request(spec, truth.Config({})) == {"nvidia.com/gpu": 4}
    # Catalog: exact model beats a glob whatever the capacity type; longer glob beats shorter;
    # a region entry beats none.
    cfg = truth.Config({"prices": {"prices": [
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 1},
        {"model": "NVIDIA-H100*", "capacity_type": "reserved", "usd_per_gpu_hour": 2},
        {"model": "NVIDIA-H100-80GB*", "capacity_type": "reserved", "usd_per_gpu_hour": 3},
        {"model": "NVIDIA-H100-80GB-HBM3", "capacity_type": "spot", "usd_per_gpu_hour": 4},
        {"model": "NVIDIA-H100-80GB-HBM3", "capacity_type": "spot", "region": "r1",
         "usd_per_gpu_hour": 5}]}})
    assert cfg.lookup(h100, "reserved", None) == 3
    assert cfg.lookup("nvidia h100 80gb hbm3", "spot", "r2") == 4
    assert cfg.lookup(h100, "spot", "r1") == 5
    assert cfg.lookup("NVIDIA-H100-NVL", "reserved", None) == 2
    assert cfg.lookup("Tesla-T4", "spot", None) == 1
    assert truth.parse_time("2026-11-20T09:15:03.999999Z") == truth.parse_time(
        "2026-11-20T09:15:03Z")
    assert truth.parse_time("2026-11-20T11:15:03+02:00") == truth.parse_time(
        "2026-11-20T09:15:03Z")


def test_truth_examples_cover_the_cases(cluster):
    """The examples hold what the brief asks for, so the CLI tests below exercise it."""
    items = json.loads((EXAMPLES / "pods.json").read_text())["items"]
    phases = {p["status"]["phase"] for p in items}
    assert {"Pending", "Running", "Succeeded", "Failed"} <= phases
    assert 150 <= len(items) <= 300
    t = cluster.compute(*truth.parse_window(W47), by=("team", "project"))
    teams = {k[0] for k in t["groups"]}
    assert {"research", "platform", "recommendations", "vision", "search",
            truth.UNATTRIBUTED} <= teams
    geqs = {round(u.geq, 6) for u in cluster.usages}
    assert {round(1 / 7, 6), round(2 / 7, 6), 0.5, 0.25, 3.0, 4.0, 8.0} <= geqs
    held = [u.end - u.start for u in cluster.usages if u.end is not None]
    assert 30 in held                       # 30-second jobs
    assert max(held) > 2 * 86400            # multi-day training
    assert any(u.end is None for u in cluster.usages)
    for size in (p.stat().st_size for p in EXAMPLES.glob("*.json")):
        assert size < 1 << 20
    idle = cluster.compute(*truth.parse_window(W47))["idle_nodes"]
    assert any(n["gpu_seconds"] > 0 and n["gpu_seconds"] == pytest.approx(
        cluster.nodes[k].alloc_geq * 7 * 86400) for k, n in idle.items())  # a node nobody used


def test_examples_are_what_the_generator_writes(tmp_path):
    import subprocess
    import sys
    subprocess.run([sys.executable, str(EXAMPLES.parent / "scripts" / "gen-examples.py"),
                    str(tmp_path)], check=True, capture_output=True)
    for f in sorted(EXAMPLES.glob("*.json")):
        assert (tmp_path / f.name).read_bytes() == f.read_bytes(), (
            "%s differs from scripts/gen-examples.py output: regenerate it" % f.name)


# ---- analyze over the examples ------------------------------------------------------------------

@pytest.mark.parametrize("by", BYS)
@pytest.mark.parametrize("wname", list(WINDOWS))
def test_analyze_examples_equals_truth(cli, cluster, wname, by):
    window = WINDOWS[wname]
    doc = cli.ok(*analyze_args(window, by=by)).json()
    t = cluster.compute(*truth.parse_window(window), by=tuple(by.split(",")))
    assert doc["window"] == {"start": window.split(",")[0], "end": window.split(",")[1]}
    assert doc["currency"] == "USD"
    assert_summary_equals_truth(doc, t, by)


@pytest.mark.parametrize("wname", list(WINDOWS))
def test_analyze_examples_pod_counts(cli, cluster, wname):
    window = WINDOWS[wname]
    doc = cli.ok(*analyze_args(window)).json()
    t = cluster.compute(*truth.parse_window(window))
    assert_summary_equals_truth(doc, t, "team,project", check_pods=True)


@pytest.mark.parametrize("wname", list(WINDOWS))
def test_analyze_examples_idle_and_capacity(cli, cluster, wname):
    window = WINDOWS[wname]
    doc = cli.ok(*analyze_args(window, by="node")).json()
    assert_idle_equals_truth(doc, cluster.compute(*truth.parse_window(window), by=("node",)))


@pytest.mark.parametrize("by", ["team,project", "node", "model"])
@pytest.mark.parametrize("wname", ["w47", "cut", "hour"])
def test_analyze_totals_add_up(cli, wname, by):
    doc = cli.ok(*analyze_args(WINDOWS[wname], by=by)).json()
    gs = sum(g["gpu_seconds"] for g in doc["groups"])
    usd = sum(g["cost_usd"] for g in doc["groups"])
    pods = sum(g["pods"] for g in doc["groups"])
    assert abs(gs - doc["total"]["gpu_hours"] * 3600) <= SEC_TOL
    assert abs(usd - doc["total"]["cost_usd"]) <= USD_TOL
    assert pods == doc["total"]["pods"]
    # No node of the examples is ever over-committed, so held + idle = capacity exactly.
    assert abs(doc["total"]["gpu_hours"] + doc["idle"]["gpu_hours"]
               - doc["capacity"]["gpu_hours"]) * 3600 <= SEC_TOL
    assert abs(doc["total"]["cost_usd"] + doc["idle"]["cost_usd"]
               - doc["capacity"]["cost_usd"]) <= USD_TOL
    un = sum(g["gpu_seconds"] for g in doc["groups"]
             if by == "team,project" and truth.UNATTRIBUTED in g["keys"].values())
    if by == "team,project":
        assert abs(un - doc["unattributed"]["gpu_hours"] * 3600) <= SEC_TOL


def test_analyze_window_with_utc_offsets(cli, cluster):
    """RFC 3339 offsets name the same instants as the Z form."""
    window = "2026-11-12T08:13:21+01:00,2026-11-19T10:12:08-05:30"
    doc = cli.ok(*analyze_args(window)).json()
    assert_summary_equals_truth(doc, cluster.compute(*truth.parse_window(CUT)), "team,project")


def test_analyze_early_window_has_only_idle_capacity(cli, cluster):
    doc = cli.ok(*analyze_args(EARLY, by="node")).json()
    t = cluster.compute(*truth.parse_window(EARLY), by=("node",))
    assert t["total"]["gpu_seconds"] == 0 and t["capacity"]["gpu_seconds"] > 0
    assert [g for g in doc["groups"] if g["gpu_seconds"] > 0] == []
    assert doc["total"]["cost_usd"] == 0
    assert_idle_equals_truth(doc, t)
    assert doc["idle"]["gpu_hours"] == pytest.approx(doc["capacity"]["gpu_hours"], abs=1e-9)


@pytest.mark.parametrize("wname", ["w47", "cut"])
def test_analyze_with_override_price_file(cli, wname):
    """--prices replaces the configuration's catalog (annotation and rule prices still win)."""
    window = WINDOWS[wname]
    doc = cli.ok(*analyze_args(window, prices=EXAMPLES / "prices.json")).json()
    t = truth.compute(EXAMPLES / "pods.json", EXAMPLES / "nodes.json",
                      EXAMPLES / "namespaces.json", EXAMPLES / "config.json", window,
                      prices=EXAMPLES / "prices.json")
    assert_summary_equals_truth(doc, t, "team,project")
    doc = cli.ok(*analyze_args(window, by="node", prices=EXAMPLES / "prices.json")).json()
    t = truth.compute(EXAMPLES / "pods.json", EXAMPLES / "nodes.json",
                      EXAMPLES / "namespaces.json", EXAMPLES / "config.json", window,
                      by=("node",), prices=EXAMPLES / "prices.json")
    assert_idle_equals_truth(doc, t)


def test_analyze_without_namespaces_loses_namespace_labels(cli):
    """Without --namespaces only pod labels and the configured maps attribute."""
    doc = cli.ok(*analyze_args(W47, namespaces=False)).json()
    t = truth.compute(EXAMPLES / "pods.json", EXAMPLES / "nodes.json", None,
                      EXAMPLES / "config.json", W47)
    assert_summary_equals_truth(doc, t, "team,project")


@pytest.mark.parametrize("fmt", ["table", "markdown"])
@pytest.mark.parametrize("wname", ["w47", "hour"])
def test_analyze_text_formats_show_the_total(cli, cluster, fmt, wname):
    window = WINDOWS[wname]
    r = cli.ok(*analyze_args(window, fmt=fmt))
    total = cluster.compute(*truth.parse_window(window))["total"]["cost_usd"]
    assert any(s in r.out for s in money_strings(total)), (
        "total %.2f not in the %s output:\n%s" % (total, fmt, r.out))
    if fmt == "markdown":
        assert re.search(r"^\|.*\|\s*$", r.out, re.M), r.out
        assert re.search(r"^\|\s*:?-{3,}", r.out, re.M), r.out
    for team in ("research", "platform", "vision"):
        assert team in r.out


# ---- the demo -----------------------------------------------------------------------------------

def demo_truth(cluster):
    demo = json.loads((EXAMPLES / "demo.json").read_text())
    start, end = truth.parse_window(demo["window"])
    now = truth.parse_time(demo["now"])
    assert end <= now  # so running pods accrue to the period's end
    return cluster.compute(start, end), cluster.compute(start - (end - start), start)


def test_demo_markdown_weekly_report(cli, cluster):
    r = cli.ok("demo")
    cur, prev = demo_truth(cluster)
    assert any(s in r.out for s in money_strings(cur["total"]["cost_usd"])), (
        "weekly total %.2f not in the demo report:\n%s" % (cur["total"]["cost_usd"], r.out))
    assert "W47" in r.out, "the weekly report should name its ISO week (2026-W47)"
    # Week-over-week: the previous total, or the change, to the cent.
    p, c = prev["total"]["cost_usd"], cur["total"]["cost_usd"]
    assert any(s in r.out for s in money_strings(p) | money_strings(abs(c - p))), (
        "neither the previous week's total %.2f nor the change %.2f is in the report" % (p, c - p))
    for team in ("research", "platform", "recommendations", "vision", "search"):
        assert team in r.out


def _numbers(obj):
    if isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)


def test_demo_json_weekly_report(cli, cluster):
    doc = cli.ok("demo", "--format", "json").json()
    cur, prev = demo_truth(cluster)
    assert "summary" in doc, sorted(doc)
    assert_summary_equals_truth(doc["summary"], cur, "team,project")
    p, c = prev["total"]["cost_usd"], cur["total"]["cost_usd"]
    assert any(abs(x - p) <= USD_TOL or abs(abs(x) - abs(c - p)) <= USD_TOL
               for x in _numbers(doc)), (
        "no figure in the weekly report equals the previous week's total %.2f or the change %.2f"
        % (p, c - p))


# ---- tco ---------------------------------------------------------------------------------------

DGX = ["--node-price", "425000", "--gpus-per-node", "8", "--years", "3", "--utilization", "0.80",
       "--cluster-gpus", "64", "--ftes", "1.5", "--fte-cost", "250000", "--kw-per-gpu", "0.56",
       "--pue", "1.3", "--usd-per-kwh", "0.10", "--network-per-gpu-hour", "0.10"]


def test_tco_worked_example(cli):
    doc = cli.ok("tco", *DGX, "--format", "json").json()
    want = truth.tco(425000, 8, 3, 0.80, 64, 1.5, 250000, 0.56, 1.3, 0.10, 0.10)
    # Hand: hardware 53125/3/7008 = 2.5269, operations 375000/(64*7008) = 0.8361,
    # power 0.56*8760*1.3*0.10/7008 = 0.0910, network 0.10: 3.554 ("about 3.56").
    assert want["total"] == pytest.approx(3.55398, abs=1e-5)
    assert doc["usd_per_productive_gpu_hour"] == pytest.approx(want["total"], rel=1e-9)
    assert abs(doc["usd_per_productive_gpu_hour"] - 3.56) < 0.01
    r = cli.ok("tco", *DGX)
    assert "3.55" in r.out, r.out


def test_tco_worked_example_with_cloud_price(cli):
    doc = cli.ok("tco", *DGX, "--cloud-price", "12.29", "--format", "json").json()
    want = truth.tco(425000, 8, 3, 0.80, 64, 1.5, 250000, 0.56, 1.3, 0.10, 0.10)
    # One GPU a year: 17708.33 + 5859.38 + 637.73 + 700.80 = 24906.24; / (8760 * 12.29)
    assert want["annual_cost_per_gpu"] == pytest.approx(24906.24, abs=0.01)
    assert doc["break_even_utilization"] == pytest.approx(
        truth.break_even(want["annual_cost_per_gpu"], 12.29), rel=1e-9)
    assert doc["break_even_utilization"] == pytest.approx(0.23134, abs=1e-5)


def test_money_fields_and_their_old_names(cli):
    """Every money member of a cost summary has its currency-neutral name and, for one release,
    its old *_usd name with the same value."""
    doc = cli.ok("demo", "--format", "json").json()
    seen = 0

    def walk(o):
        nonlocal seen
        if isinstance(o, dict):
            for k in ("cost", "shared", "charged", "capacity_cost"):
                if k in o:
                    assert o[k + "_usd"] == o[k], (k, o)
                    seen += 1
            for k in o:
                if k.endswith("_usd"):
                    assert k[:-4] in o, (k, o)
            for k, v in o.items():
                if k != "evidence":  # the advisor's figures: "cost" there had no *_usd name
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(doc)
    assert seen > 10


def test_tco_money_names_and_their_old_names(cli):
    """Money is in any currency: --price-per-kwh and the *_price_/cost_ fields are the names; the
    old --usd-per-kwh and *_usd_* names are read and written the same for one release."""
    new = [a if a != "--usd-per-kwh" else "--price-per-kwh" for a in DGX]
    a = cli.ok("tco", *new, "--cloud-price", "12.29", "--format", "json").json()
    b = cli.ok("tco", *DGX, "--cloud-price", "12.29", "--format", "json").json()
    assert a == b
    assert a["cost_per_productive_gpu_hour"] == a["usd_per_productive_gpu_hour"]
    assert a["cost_per_productive_gpu_hour"] == pytest.approx(3.55398, abs=1e-5)
    assert a["cloud_price_per_gpu_hour"] == a["cloud_usd_per_gpu_hour"] == 12.29
    r = cli("tco", *new[:-2], "--usd-per-kwh", "x")
    assert r.code == 2 and "--usd-per-kwh: not a number" in r.err, r.err


def test_tco_break_even(cli):
    doc = cli.ok("tco", "--annual-cost", "18628", "--cloud-price", "5.25", "--format",
                 "json").json()
    # 18628 / (8760 * 5.25) = 18628 / 45990 = 0.40504 ("about 40.5%")
    assert doc["break_even_utilization"] == pytest.approx(18628 / 45990, rel=1e-9)
    assert abs(doc["break_even_utilization"] - 0.405) < 0.001


# ---- help and errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("args,expect", [
    (["--help"], "analyze"),
    (["analyze", "--help"], "--pods"),
    (["demo", "--help"], "demo"),
    (["tco", "--help"], "--node-price"),
])
def test_help(cli, args, expect):
    r = cli(*args)
    assert r.code == 0, r
    assert expect in r.out + r.err, r


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text if isinstance(text, str) else json.dumps(text))
    return p


def assert_usage_error(r, *needles):
    assert r.code == 2, r
    assert r.err.strip(), "no message on stderr"
    low = r.err.lower()
    assert any(n.lower() in low for n in needles), (
        "stderr should name one of %r:\n%s" % (needles, r.err))


def test_error_missing_pods_file(cli, tmp_path):
    missing = tmp_path / "no-such-pods.json"
    r = cli(*analyze_args(W47, pods=missing))
    assert_usage_error(r, str(missing), "no-such-pods.json")


def test_error_missing_nodes_file(cli, tmp_path):
    missing = tmp_path / "no-such-nodes.json"
    r = cli(*analyze_args(W47, nodes=missing))
    assert_usage_error(r, "no-such-nodes.json")


@pytest.mark.parametrize("text", ["{not json", "", "[1, 2", '{"kind":"PodList","items":7}'])
def test_error_bad_json_pods(cli, tmp_path, text):
    bad = write(tmp_path, "broken-pods.json", text)
    r = cli(*analyze_args(W47, pods=bad))
    assert_usage_error(r, "broken-pods.json")


def test_error_bad_json_nodes(cli, tmp_path):
    bad = write(tmp_path, "broken-nodes.json", '{"items": [')
    assert_usage_error(cli(*analyze_args(W47, nodes=bad)), "broken-nodes.json")


@pytest.mark.parametrize("window", [
    "yesterday",
    "2026-11-16T00:00:00Z",
    "2026-11-16T00:00:00Z,",
    "2026-13-40T00:00:00Z,2026-11-23T00:00:00Z",
    "2026-11-23T00:00:00Z,2026-11-16T00:00:00Z",   # start after end
    "2026-11-16T00:00:00Z,2026-11-16T00:00:00Z",   # empty
])
def test_error_bad_window(cli, window):
    assert_usage_error(cli(*analyze_args(window)), "window")


def test_error_missing_window(cli):
    args = analyze_args(W47)
    i = args.index("--window")
    del args[i:i + 2]
    assert_usage_error(cli(*args), "window")


@pytest.mark.parametrize("by,word", [("team,colour", "colour"), ("flavour", "flavour"),
                                     ("team,team", "team")])
def test_error_bad_by(cli, by, word):
    assert_usage_error(cli(*analyze_args(W47, by=by)), word)


def test_error_unknown_flag(cli):
    assert_usage_error(cli(*analyze_args(W47), "--frobnicate"), "--frobnicate", "frobnicate")


def test_error_unknown_command(cli):
    assert_usage_error(cli("frobnicate"), "frobnicate")


def test_error_bad_format(cli):
    assert_usage_error(cli(*analyze_args(W47, fmt="yaml")), "format", "yaml")


@pytest.mark.parametrize("entry,field", [
    ({"model": "Tesla-T4", "capacity_type": "spot", "usd_per_gpu_hour": "cheap"},
     "usd_per_gpu_hour"),
    ({"model": "Tesla-T4", "capacity_type": "spot", "usd_per_gpu_hour": -1},
     "usd_per_gpu_hour"),
    ({"capacity_type": "spot", "usd_per_gpu_hour": 1.0}, "model"),
])
def test_error_bad_price_file(cli, tmp_path, entry, field):
    prices = json.loads((EXAMPLES / "prices.json").read_text())
    prices["prices"].insert(1, entry)
    bad = write(tmp_path, "bad-prices.json", prices)
    r = cli(*analyze_args(W47, prices=bad))
    assert_usage_error(r, field)
    assert "bad-prices.json" in r.err or "prices[1]" in r.err, r.err


def test_error_bad_price_file_not_json(cli, tmp_path):
    bad = write(tmp_path, "bad-prices.json", "prices: yes")
    assert_usage_error(cli(*analyze_args(W47, prices=bad)), "bad-prices.json")


def test_error_bad_config(cli, tmp_path):
    cfg = json.loads((EXAMPLES / "config.json").read_text())
    cfg["attribution"]["team_label_keys"] = "team"
    bad = write(tmp_path, "bad-config.json", cfg)
    assert_usage_error(cli(*analyze_args(W47, config=bad)), "team_label_keys")


@pytest.mark.parametrize("args,field", [
    (["--utilization", "1.5"], "utilization"),
    (["--utilization", "abc"], "utilization"),
    (["--years", "0"], "years"),
    (["--pue", "0.5"], "pue"),
])
def test_error_bad_tco_input(cli, args, field):
    a = list(DGX)
    i = a.index(args[0])
    a[i + 1] = args[1]
    assert_usage_error(cli("tco", *a, "--format", "json"), field)


def test_error_tco_missing_input(cli):
    a = list(DGX)
    i = a.index("--pue")
    del a[i:i + 2]
    assert_usage_error(cli("tco", *a), "pue")


def test_error_break_even_without_cloud_price(cli):
    assert_usage_error(cli("tco", "--annual-cost", "18628"), "cloud-price", "cloud_price")


# ---- a malformed item among good ones ---------------------------------------------------------

def _pods_with_one_bad(kind):
    doc = json.loads((EXAMPLES / "pods.json").read_text())
    idx = next(i for i, p in enumerate(doc["items"])
               if p["metadata"]["name"].startswith("rlhf-ppo-03"))
    victim = doc["items"][idx]
    name = victim["metadata"]["name"]
    if kind == "quantity":
        res = victim["spec"]["containers"][0]["resources"]
        res["requests"]["nvidia.com/gpu"] = "lots"
        res["limits"]["nvidia.com/gpu"] = "lots"
    elif kind == "time":
        for c in victim["status"]["conditions"]:
            if c["type"] == "PodScheduled":
                c["lastTransitionTime"] = "last tuesday"
    elif kind == "not-an-object":
        doc["items"][idx] = 42
    good = copy.deepcopy(doc)
    del good["items"][idx]
    return doc, good, name, idx


@pytest.mark.parametrize("kind", ["quantity", "time", "not-an-object"])
def test_malformed_pod_item_is_skipped_with_a_warning(cli, tmp_path, kind):
    doc, good, name, idx = _pods_with_one_bad(kind)
    bad = write(tmp_path, "pods.json", doc)
    r = cli(*analyze_args(W46, pods=bad))
    assert r.code == 0, r
    assert r.err.strip(), "no warning on stderr for the malformed item"
    needles = [name, "items[%d]" % idx, "item %d" % idx, "#%d" % idx]
    assert any(n in r.err for n in needles), (
        "the warning should say which item (%s or index %d):\n%s" % (name, idx, r.err))
    t = truth.compute(good, EXAMPLES / "nodes.json", EXAMPLES / "namespaces.json",
                      EXAMPLES / "config.json", W46)
    assert_summary_equals_truth(r.json(), t, "team,project")


# ---- hand-made clusters --------------------------------------------------------------------------

def test_cli_hand_example_equals_hand_figures(cli, tmp_path):
    pods, nodes, namespaces = hand_cluster()
    args = ["analyze", "--pods", write(tmp_path, "p.json", pods),
            "--nodes", write(tmp_path, "n.json", nodes),
            "--namespaces", write(tmp_path, "ns.json", namespaces),
            "--config", write(tmp_path, "c.json", HAND_CONFIG),
            "--window", HAND_WINDOW, "--format", "json"]
    doc = cli.ok(*args, "--by", "team,project").json()
    got = cli_groups(doc, "team,project")
    assert set(k for k, g in got.items() if g["gpu_seconds"] > 0) == set(HAND)
    for k, (sec, usd, n) in HAND.items():
        assert got[k]["gpu_seconds"] == pytest.approx(sec, abs=SEC_TOL)
        assert got[k]["cost_usd"] == pytest.approx(usd, abs=USD_TOL)
        assert got[k]["pods"] == n
    assert doc["total"]["gpu_hours"] * 3600 == pytest.approx(HAND_TOTAL[0], abs=SEC_TOL)
    assert doc["total"]["cost_usd"] == pytest.approx(HAND_TOTAL[1], abs=USD_TOL)
    assert doc["unattributed"]["cost_usd"] == pytest.approx(HAND_UNATTRIBUTED[1], abs=USD_TOL)
    assert doc["capacity"]["gpu_hours"] * 3600 == pytest.approx(HAND_CAPACITY[0], abs=SEC_TOL)
    assert doc["capacity"]["cost_usd"] == pytest.approx(HAND_CAPACITY[1], abs=USD_TOL)
    idle = {n["node"]: n for n in doc["idle"]["nodes"]}
    for n, (sec, usd) in HAND_IDLE.items():
        assert idle[n]["gpu_hours"] * 3600 == pytest.approx(sec, abs=SEC_TOL)
        assert idle[n]["cost_usd"] == pytest.approx(usd, abs=USD_TOL)
    doc = cli.ok(*args, "--by", "model,capacity_type").json()
    got = cli_groups(doc, "model,capacity_type")
    assert got[("NVIDIA-H100-80GB-HBM3", "on-demand")]["cost_usd"] == pytest.approx(65.0,
                                                                                  abs=USD_TOL)
    assert got[("Tesla-T4", "spot")]["cost_usd"] == pytest.approx(0.60, abs=USD_TOL)


FIXTURE_NODES = FIXTURES / "nodelist-rke2-a16-vgpu-gpu-operator.json"
FIXTURE_CONFIG = {
    "cluster": "rke2",
    "attribution": {"team_label_keys": ["team"], "project_label_keys": ["project"]},
    "node_rules": [{"match": {"node.kubernetes.io/instance-type": "rke2"},
                    "capacity_type": "on-prem"}],
    "prices": {"currency": "USD", "prices": [
        {"model": "NVIDIA-A16*", "capacity_type": "on-prem", "usd_per_gpu_hour": 0.45},
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 2.0}]},
}
FIXTURE_WINDOW = "2025-03-20T00:00:00Z,2025-03-21T00:00:00Z"


def fixture_pods():
    # Bound to the real node "nori" (one vGPU A16-4Q, nvidia.com/gpu: 1) 06:30:00 to 18:45:30.
    return mk_list([mk_pod("edge", "infer-0", "nori",
                           [("infer", {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})],
                           labels={"team": "edge", "project": "video"}, phase="Succeeded",
                           bound="2025-03-20T06:30:00Z", finished=["2025-03-20T18:45:30Z"])])


def test_truth_on_real_rke2_fixture_equals_hand_figures():
    t = truth.compute(fixture_pods(), FIXTURE_NODES, None, FIXTURE_CONFIG, FIXTURE_WINDOW)
    node = truth.Cluster(fixture_pods(), FIXTURE_NODES, None, FIXTURE_CONFIG).nodes["nori"]
    assert (node.model, node.capacity_type, node.price) == ("NVIDIA-A16-4Q", "on-prem", 0.45)
    # 12 h 15 min 30 s = 44130 s x 1 GPU; 44130 / 3600 x 0.45 = 5.51625
    assert t["groups"][("edge", "video")]["gpu_seconds"] == 44130
    assert t["groups"][("edge", "video")]["cost_usd"] == pytest.approx(5.51625)
    # idle: 86400 - 44130 = 42270 s; x 0.45 / 3600 = 5.28375
    assert t["idle_nodes"]["nori"]["gpu_seconds"] == 42270
    assert t["idle_nodes"]["nori"]["cost_usd"] == pytest.approx(5.28375)


def test_cli_on_real_rke2_fixture(cli, tmp_path):
    assert FIXTURE_NODES.exists()
    pods = write(tmp_path, "pods.json", fixture_pods())
    cfg = write(tmp_path, "config.json", FIXTURE_CONFIG)
    base = ["analyze", "--pods", pods, "--nodes", FIXTURE_NODES, "--config", cfg,
            "--window", FIXTURE_WINDOW, "--format", "json"]
    doc = cli.ok(*base, "--by", "team,project").json()
    t = truth.compute(fixture_pods(), FIXTURE_NODES, None, FIXTURE_CONFIG, FIXTURE_WINDOW)
    assert_summary_equals_truth(doc, t, "team,project", check_pods=True)
    assert doc["total"]["cost_usd"] == pytest.approx(5.51625, abs=USD_TOL)
    assert_idle_equals_truth(doc, t)
    doc = cli.ok(*base, "--by", "model,capacity_type,node").json()
    got = cli_groups(doc, "model,capacity_type,node")
    assert list(got) == [("NVIDIA-A16-4Q", "on-prem", "nori")], list(got)


# ---- rules pinned on small hand-made cases ------------------------------------------------------

RULES_CONFIG = {
    "attribution": {"team_label_keys": ["team"], "project_label_keys": ["project"]},
    "prices": {"currency": "USD", "prices": [
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 3.60}]},
}
RULES_WINDOW = "2026-02-01T00:00:00Z,2026-02-02T00:00:00Z"


def _rules_node():
    return mk_list([mk_node("n1", "2026-01-01T00:00:00Z",
                            {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                            {"nvidia.com/gpu": "8"})])


def _run_rules_case(cli, tmp_path, pods):
    doc = cli.ok("analyze", "--pods", write(tmp_path, "p.json", mk_list(pods)),
                 "--nodes", write(tmp_path, "n.json", _rules_node()),
                 "--config", write(tmp_path, "c.json", RULES_CONFIG),
                 "--window", RULES_WINDOW, "--by", "team,project", "--format", "json").json()
    t = truth.compute(mk_list(pods), _rules_node(), None, RULES_CONFIG, RULES_WINDOW)
    assert_summary_equals_truth(doc, t, "team,project", check_pods=True)
    return doc


def test_finished_pod_holds_until_its_last_container(cli, tmp_path):
    # main stops at 02:00:00, the log shipper at 02:00:09: the pod held 1 GPU for 7209 s.
    p = mk_pod("a", "two-containers", "n1",
               [("main", {"nvidia.com/gpu": "1"}, None), ("logs", {"cpu": "1"}, None)],
               phase="Succeeded", bound="2026-02-01T00:00:00Z",
               finished=["2026-02-01T02:00:00Z", "2026-02-01T02:00:09Z"],
               labels={"team": "t", "project": "p"})
    doc = _run_rules_case(cli, tmp_path, [p])
    assert doc["total"]["gpu_hours"] * 3600 == pytest.approx(7209, abs=SEC_TOL)


def test_finished_pod_with_gpu_sidecar_holds_until_the_sidecar_stops(cli, tmp_path):
    # A sidecar (restartPolicy Always) holds a GPU and stops 5 s after the main container;
    # its terminated state is in initContainerStatuses. Effective request 1 + 1 = 2 GPUs,
    # held from 00:00:00 to 01:00:05: 7210 GPU-s.
    p = mk_pod("a", "with-sidecar", "n1", [("main", {"nvidia.com/gpu": "1"}, None)],
               init=[("side", {"nvidia.com/gpu": "1"}, None, {"restartPolicy": "Always"})],
               init_status=[{"name": "side", "ready": False, "restartCount": 0,
                             "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                      "startedAt": "2026-02-01T00:00:01Z",
                                                      "finishedAt": "2026-02-01T01:00:05Z"}}}],
               phase="Succeeded", bound="2026-02-01T00:00:00Z",
               finished=["2026-02-01T01:00:00Z"], labels={"team": "t", "project": "p"})
    doc = _run_rules_case(cli, tmp_path, [p])
    assert doc["total"]["gpu_hours"] * 3600 == pytest.approx(7210, abs=SEC_TOL)


def test_pod_bound_after_a_wait_costs_from_binding(cli, tmp_path):
    # Created at 00:00, waited two hours for GPUs, bound 02:00:00, still running at the window's
    # end: 22 h x 2 GPUs = 158400 GPU-s = 44 GPU-h x 3.60 = 158.40.
    p = mk_pod("a", "queued", "n1", [("main", {"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "2"})],
               created="2026-02-01T00:00:00Z", bound="2026-02-01T02:00:00Z",
               labels={"team": "t", "project": "p"})
    doc = _run_rules_case(cli, tmp_path, [p])
    assert doc["total"]["cost_usd"] == pytest.approx(158.40, abs=USD_TOL)


def test_gpu_init_container_raises_the_request(cli, tmp_path):
    # init asks 4, app 2: 4 GPUs for the pod's whole life, 00:00:00 to 00:30:00 = 7200 GPU-s.
    p = mk_pod("a", "init-heavy", "n1", [("app", {"nvidia.com/gpu": "2"}, None)],
               init=[("convert", None, {"nvidia.com/gpu": "4"})], phase="Succeeded",
               bound="2026-02-01T00:00:00Z", finished=["2026-02-01T00:30:00Z"],
               init_status=[{"name": "convert", "ready": False, "restartCount": 0,
                             "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                                      "startedAt": "2026-02-01T00:00:02Z",
                                                      "finishedAt": "2026-02-01T00:10:00Z"}}}],
               labels={"team": "t", "project": "p"})
    doc = _run_rules_case(cli, tmp_path, [p])
    assert doc["total"]["gpu_hours"] * 3600 == pytest.approx(7200, abs=SEC_TOL)


def test_bound_pod_still_pending_holds_from_binding(cli, tmp_path):
    # Bound at 12:00:00 and still ContainerCreating at the dump: the scheduler has reserved its
    # GPU on the node since the binding (the design: "from the moment it is bound"), so it
    # holds 1 GPU for 12 h = 43200 GPU-s; an unbound Pending pod beside it holds nothing.
    p = mk_pod("a", "creating", "n1", [("m", {"nvidia.com/gpu": "1"}, None)], phase="Pending",
               bound="2026-02-01T12:00:00Z", labels={"team": "t", "project": "p"})
    p["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "ContainerCreating"}}
    p["status"]["containerStatuses"][0]["ready"] = False
    q = mk_pod("a", "unbound", None, [("m", {"nvidia.com/gpu": "8"}, None)], phase="Pending",
               created="2026-02-01T01:00:00Z", labels={"team": "t", "project": "p"})
    doc = _run_rules_case(cli, tmp_path, [p, q])
    assert doc["total"]["gpu_hours"] * 3600 == pytest.approx(43200, abs=SEC_TOL)
    assert doc["total"]["pods"] == 1
