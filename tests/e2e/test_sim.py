"""The simulator against a real kube-apiserver, without the controller: what it writes is
what it records (objects created, bound, status read back exactly), the plan has the churn
the scenarios need, and the replay never schedules beyond a node's allocatable."""

import collections
import json
import subprocess
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
    # How long the week's replay takes is the suite's budget, not a property of the code:
    # printed (pytest -s), never asserted.
    print("replay: %d events, %d API requests, %.1f s" % (len(r.events), RECORD["requests"],
                                                          RECORD["seconds"]))
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
    # Pods kube-controller-manager makes: a Deployment's (one replaced), one-pod Jobs (one
    # reclaimed with its spot node, one deleted while running, some cleaned up), a CronJob's
    # Job of three pods one after another.
    owned = collections.defaultdict(list)
    for p in gpu:
        if p.workload:
            owned[p.workload.kind].append(p)
    assert len(owned["Deployment"]) == 2 and len(owned["CronJob"]) == 3, owned
    assert len(owned["Job"]) >= 8
    jobs = owned["Job"]
    assert any(p.reclaimed for p in jobs) and any(p.fate == "deleted_running" for p in jobs) \
        and any(p.cleanup_after for p in jobs)
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


def _controller_owner(obj):
    refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")]
    return "%s/%s" % (refs[0]["kind"], refs[0]["name"]) if refs else None


def test_kube_controller_manager_made_the_workloads_pods(replay, module_cluster):
    """The replay's Deployment, Jobs and CronJob went through kube-controller-manager: it wrote
    the ReplicaSet, the CronJob's Job and every pod with its owner references; the replay only
    bound and ran them, back-dated. Their creationTimestamps are the replay's real time."""
    api = module_cluster.api
    recs = [r for r in replay.record()["pods"] if r.get("workload")]
    kinds = collections.Counter(r["workload"].split("/")[0] for r in recs)
    assert kinds["Deployment"] == 2 and kinds["CronJob"] == 3 and kinds["Job"] >= 8, kinds
    started = time.time() - RECORD["seconds"] - 5
    for r in recs:
        kind, ns, name = r["workload"].split("/")
        assert r["namespace"] == ns
        owner = r["owner"]
        if kind == "Deployment":
            assert owner.startswith("ReplicaSet/%s-" % name), r
            rs = api.get("/apis/apps/v1/namespaces/%s/replicasets/%s" % (
                ns, owner.split("/", 1)[1]))
            assert _controller_owner(rs) == "Deployment/" + name, rs["metadata"]
        elif kind == "CronJob":
            assert owner.startswith("Job/%s-" % name), r
            job = api.get("/apis/batch/v1/namespaces/%s/jobs/%s" % (ns, owner.split("/", 1)[1]))
            assert _controller_owner(job) == "CronJob/" + name, job["metadata"]
        else:
            assert owner == "Job/" + name, r
        assert r["name"].startswith(owner.split("/", 1)[1].rsplit("-", 1)[0] + "-"), r
        if not r["deleted"]:
            pod = api.get("/api/v1/namespaces/%s/pods/%s" % (ns, r["name"]))
            assert pod["metadata"]["uid"] == r["uid"]
            assert _controller_owner(pod) == owner
            assert truth.utc(pod["metadata"]["creationTimestamp"]) >= started, pod["metadata"]
        assert r["bound"] < started - 3600, r  # back-dated: before the pod existed
    # One CronJob run: one Job whose pods ran one after another.
    cron = sorted((r for r in recs if r["workload"].startswith("CronJob/")),
                  key=lambda r: r["bound"])
    assert len({r["owner"] for r in cron}) == 1
    for a, b in zip(cron, cron[1:]):
        assert a["end"] is not None and a["end"] <= b["bound"], (a, b)
    job = api.get("/apis/batch/v1/namespaces/nlp/jobs/" + cron[0]["owner"].split("/", 1)[1])
    assert job["status"].get("succeeded") == 3, job["status"]
    # The Deployment's failed pod was replaced by its ReplicaSet.
    dep = [r for r in recs if r["workload"].startswith("Deployment/")]
    assert len({r["owner"] for r in dep}) == 1 and dep[0]["end"] is not None


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


def test_plan_record_is_the_replay(replay):
    """sim.plan_record (what test_calendar.py checks at fixed moments) is what a replay
    records: every complete day's figures by team and project, and idle by node, equal."""
    cfg = json.loads(harness.CONFIG.read_text())
    real = truth.Truth(replay.record(), cfg)
    plan = truth.Truth(sim.plan_record(replay.started), cfg)
    days = real.complete_days(replay.started)
    assert days == plan.complete_days(replay.started) and len(days) >= 7
    for name, s, e in days:
        a, b = real.window(s, e), plan.window(s, e)
        assert set(a["groups"]) == set(b["groups"]), name
        for k in a["groups"]:
            assert abs(a["groups"][k]["gpu_seconds"] - b["groups"][k]["gpu_seconds"]) < 1e-6, \
                (name, k)
            assert a["groups"][k]["pods"] == b["groups"][k]["pods"], (name, k)
        for n, v in a["idle_nodes"].items():
            assert abs(v["gpu_seconds"] - b["idle_nodes"][n]["gpu_seconds"]) < 1e-6, (name, n)


def test_offline_analyzer_agrees_with_the_truth(replay, module_cluster, controller_bin,
                                                tmp_path):
    """The cross-check tests/e2e/README.md promises: `gpu-cost analyze` (the offline analyzer)
    on `kubectl get -o json`-shaped dumps of the replayed cluster equals the truth on every
    complete day and week, by team and project. A dump shows what exists now: pods deleted,
    and those on the node deleted at the end, are left out of the truth it is compared with."""
    cli = controller_bin.with_name("gpu-cost")
    assert cli.exists(), "%s is missing: make build" % cli
    api = module_cluster.api
    files = {}
    gone = {n["object"]["metadata"]["name"] for n in replay.record()["nodes"] if n["deleted_at"]}
    for kind, path in (("pods", "/api/v1/pods"), ("nodes", "/api/v1/nodes"),
                       ("namespaces", "/api/v1/namespaces")):
        doc = api.get(path)
        if kind == "pods":
            # Pods of the deleted node are in the dump, their node is not: analyze would price
            # them at the catalog's fallback. Left out of both sides.
            doc["items"] = [p for p in doc["items"] if p["spec"].get("nodeName") not in gone]
        files[kind] = tmp_path / (kind + ".json")
        files[kind].write_text(json.dumps(doc))
    cfg = json.loads(harness.CONFIG.read_text())
    t = truth.Truth(replay.record(), cfg,
                    exclude=lambda p: p["deleted"] or p.get("node") in gone)
    now = time.time()
    periods = t.complete_days(now) + t.complete_weeks(now)
    assert len(periods) >= 8
    bad = []
    for name, s, e in periods:
        cp = subprocess.run([str(cli), "analyze", "--pods", str(files["pods"]), "--nodes",
                             str(files["nodes"]), "--namespaces", str(files["namespaces"]),
                             "--config", str(harness.CONFIG), "--window",
                             "%s,%s" % (sim.rfc3339(s), sim.rfc3339(e)), "--by",
                             "team,project", "--format", "json"],
                            capture_output=True, text=True, timeout=120)
        assert cp.returncode == 0, cp.stderr
        got = {(g["keys"]["team"], g["keys"]["project"]): g
               for g in json.loads(cp.stdout)["groups"]}
        want = {k: v for k, v in t.window(s, e)["groups"].items() if v["gpu_seconds"] > 0}
        if set(got) != set(want):
            bad.append("%s: groups %s" % (name, sorted(set(got) ^ set(want), key=str)))
            continue
        for k, w in want.items():
            if abs(got[k]["gpu_seconds"] - w["gpu_seconds"]) > 1e-6 or \
                    abs(got[k]["cost_usd"] - w["cost_usd"]) > 0.005:
                bad.append("%s %s: %r GPU-s $%r; truth %r $%r" % (
                    name, k, got[k]["gpu_seconds"], got[k]["cost_usd"], w["gpu_seconds"],
                    w["cost_usd"]))
    assert not bad, "\n".join(bad[:20])


def test_hold_back_and_release(replay):
    assert RECORD["released"] > 50


def test_forced_watch_expiry_gives_410(replay, module_cluster):
    rv = harness.expire_watches(module_cluster)
    for path in ("/api/v1/pods", "/api/v1/nodes", "/api/v1/namespaces"):
        assert harness.watch_answer(module_cluster, path, rv) == "410", path
    # the data survived
    assert module_cluster.api.exists("/api/v1/nodes/nori")
