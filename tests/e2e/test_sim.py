"""The simulator against a real kube-apiserver, without the controller: what it writes is
what it records (objects created, bound, status read back exactly), the plan has the churn
the scenarios need, and the replay never schedules beyond a node's allocatable."""

import collections
import json
import time

import pytest

import e2e_truth as truth
import harness
import sim

RECORD = {}


@pytest.fixture(scope="module")
def replay(module_cluster):
    r = sim.Replay(module_cluster.api, module_cluster.etcd)
    t0 = time.time()
    r.setup()
    # Held-back creations and deletions come back in order (the scenarios hold them while the
    # controller is down or cut off); what the API ends up with is the same.
    r.run(hooks=[(0.5, lambda r: r.hold_back("create", "delete")),
                 (0.6, lambda r: RECORD.__setitem__("released", r.release()))])
    RECORD["seconds"] = time.time() - t0
    RECORD["requests"] = module_cluster.api.requests
    return r


def test_plan_is_deterministic():
    a = [(p.name, p.node, p.bound, p.end, p.fate) for p in
         sim.schedule(sim.make_plan(), sim.node_specs())]
    b = [(p.name, p.node, p.bound, p.end, p.fate) for p in
         sim.schedule(sim.make_plan(), sim.node_specs())]
    assert a == b
    assert sim.anchor_for(1795314185) == truth.utc("2026-11-14T02:00:00Z")


def test_plan_has_the_churn():
    plan = sim.schedule(sim.make_plan(), sim.node_specs())
    gpu = [p for p in plan if p.gpu_units()]
    kinds = collections.Counter(p.name.rsplit("-", 1)[0] for p in gpu)
    assert len(gpu) >= 400, kinds
    bound = [p for p in gpu if p.bound is not None]
    assert sum(1 for p in bound if p.end != sim.INF and p.end - p.bound == 30) >= 150
    assert sum(1 for p in bound if (p.end - p.bound if p.end != sim.INF else
                                    sim.SPAN - p.bound) >= 2 * sim.DAY) >= 5
    res = collections.Counter(r for p in gpu for r in p.gpu_units())
    assert res["nvidia.com/mig-1g.10gb"] and res["nvidia.com/mig-2g.20gb"] and \
        res["nvidia.com/mig-3g.40gb"]
    fates = collections.Counter(p.fate for p in plan)
    assert fates["deleted_running"] >= 5 and fates["graceful"] >= 1 and \
        fates["terminated_then_deleted"] >= 1 and fates["unbound"] >= 1
    assert any(p.reclaimed for p in plan)
    assert sum(1 for p in plan if p.cleanup_after) >= 50
    assert any(p.init_containers for p in gpu)
    assert any(p.ns == "sandbox" and not p.labels for p in gpu)
    nodes = {p.node for p in gpu}
    assert {"p4d-a100-spot-0", "p5-h100-0", "g4dn-t4-ts-0", "nori", "p5-h100-mig-0",
            "p4d-a100-spot-1", "s4124-0073"} <= nodes


def test_nodes_carry_fixture_labels_and_back_dated_creation(replay, module_cluster):
    api = module_cluster.api
    fixture = sim.h100_gfd_labels()
    n = api.get("/api/v1/nodes/s4124-0073")
    assert n["metadata"]["labels"] == fixture
    assert n["metadata"]["creationTimestamp"] == sim.rfc3339(replay.anchor)
    assert n["status"]["allocatable"]["nvidia.com/gpu"] == "1"
    nori = api.get("/api/v1/nodes/nori")
    assert nori["metadata"]["labels"] == sim.rke2_a16_node()["metadata"]["labels"]
    mig = api.get("/api/v1/nodes/p5-h100-mig-0")
    assert mig["status"]["allocatable"]["nvidia.com/mig-1g.10gb"] == "16"
    assert mig["status"]["allocatable"]["nvidia.com/mig-3g.40gb"] == "8"
    assert mig["metadata"]["labels"]["nvidia.com/mig.strategy"] == "mixed"
    spot1 = api.get("/api/v1/nodes/p4d-a100-spot-1")
    assert spot1["metadata"]["creationTimestamp"] == sim.rfc3339(replay.anchor +
                                                                 sim.SPOT1_CREATED)
    assert spot1["metadata"]["labels"]["karpenter.sh/capacity-type"] == "spot"
    t4 = api.get("/api/v1/nodes/g4dn-t4-ts-0")
    assert t4["status"]["allocatable"]["nvidia.com/gpu"] == "16"
    assert t4["metadata"]["labels"]["nvidia.com/gpu.replicas"] == "4"
    # the reclaimed spot node was deleted at the end
    assert not api.exists("/api/v1/nodes/p4d-a100-spot-0")
    assert replay.node_objs["p4d-a100-spot-0"]["deleted_at"] is not None


def test_pods_read_back_as_recorded(replay, module_cluster):
    api = module_cluster.api
    items = api.get("/api/v1/pods")["items"]
    live = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in items}
    recs = replay.record()["pods"]
    assert len(recs) == len(replay.plan)
    for rec in recs:
        key = (rec["namespace"], rec["name"])
        if rec["deleted"]:
            assert key not in live, key
            continue
        p = live[key]
        assert p["metadata"]["uid"] == rec["uid"]
        assert (p["spec"].get("nodeName") or None) == rec["node"], key
        conds = {c["type"]: c for c in p["status"].get("conditions", [])}
        if rec["bound"] is None:
            assert conds["PodScheduled"]["status"] == "False"
            continue
        assert conds["PodScheduled"]["status"] == "True"
        assert truth.utc(conds["PodScheduled"]["lastTransitionTime"]) == rec["bound"], key
        phase = p["status"]["phase"]
        fins = [truth.utc(cs["state"]["terminated"]["finishedAt"])
                for cs in p["status"].get("containerStatuses", [])
                if "terminated" in cs.get("state", {})]
        if phase in ("Succeeded", "Failed"):
            assert max(fins) == rec["end"], key
        elif rec["fate"] == "bound_pending":
            assert phase == "Pending" and rec["end"] is None
        else:
            assert phase == "Running" and rec["end"] is None, key


def test_deletions_recorded_from_the_api(replay):
    recs = {r["name"]: r for r in replay.record()["pods"]}
    running = [r for r in recs.values() if r["fate"] in ("deleted_running", "graceful",
                                                         "bound_pending_deleted")
               and r["deleted"]]
    assert len(running) >= 6
    for r in running:
        # deleted in real time, during this replay: the end is the API's deletionTimestamp
        assert r["end"] == truth.utc(r["deletion_timestamp"])
        assert r["end"] >= replay.anchor + sim.SPAN - 3600
    graceful = [r for r in recs.values() if r["fate"] == "graceful" and r["deleted"]]
    for r in graceful:
        # forcing a graceful deletion keeps the moment it began
        assert r["deletion_timestamp"] <= r["graceful_deletion_timestamp"]
    early = [r for r in recs.values() if r["fate"] == "terminated_then_deleted"]
    for r in early:
        assert r["deleted"] and r["end"] < replay.anchor + sim.SPAN - 2 * sim.DAY


def test_truth_of_the_replay_adds_up(replay):
    cfg = json.loads(harness.CONFIG.read_text())
    t = truth.Truth(replay.record(), cfg)
    now = time.time()
    days = t.complete_days(now)
    assert len(days) >= 7
    for name, s, e in days + t.complete_weeks(now):
        w = t.window(s, e)
        # the scheduler never overcommits: no node holds more than its capacity
        for node, idle in w["idle_nodes"].items():
            held = sum(u.geq * max(0, (e if u.end is None else min(u.end, e)) - max(u.start, s))
                       for u in t.usages if u.node == node)
            n = t.nodes[node]
            cap = n.alloc_geq * max(0, (e if n.deleted_at is None else min(n.deleted_at, e))
                                    - max(s, n.created))
            assert held <= cap + 1e-6, (name, node, held, cap)
        assert w["total"]["gpu_seconds"] > 0, name
    groups = set()
    for name, s, e in days:
        groups |= set(t.window(s, e)["groups"])
    teams = {g[0] for g in groups}
    assert {"vision", "language", "ads", "data-eng", "platform",
            truth.UNATTRIBUTED} <= teams, teams
    assert ("data-eng", "cc-4410") in groups          # namespace map + cost-center key
    assert ("vision", "notebooks") in groups          # namespace label + second project key
    assert ("language", "llm-pretrain") in groups     # namespace labels for both


def test_hold_back_and_release(replay):
    assert RECORD["released"] > 50


def test_replay_is_fast_enough(replay):
    # a few minutes at most for the whole week, so the scenarios fit the e2e time budget
    assert RECORD["seconds"] < 120, RECORD
    print("replay: %d events, %d API requests, %.1f s" % (len(replay.events),
                                                          RECORD["requests"], RECORD["seconds"]))


def test_forced_watch_expiry_gives_410(replay, module_cluster):
    rv = harness.expire_watches(module_cluster)
    for path in ("/api/v1/pods", "/api/v1/nodes", "/api/v1/namespaces"):
        assert harness.watch_answer(module_cluster, path, rv) == "410", path
    # the data survived
    assert module_cluster.api.exists("/api/v1/nodes/nori")
