"""Shared GPUs on the real control plane: consumable capacity and dynamic MIG.

Kubernetes 1.37's kube-scheduler allocates ResourceClaims on devices that allow several
allocations (DRAConsumableCapacity, on by default since 1.36) and on partitionable devices
(DRAPartitionableDevices, likewise), writing each result's consumedCapacity and shareID; the
test publishes the devices exactly as NVIDIA's DRA driver v0.5.0 does (dra_objects.shared_gpu,
from cmd/gpu-kubelet-plugin/consumable_shares.go; dra_objects.partitionable_h100, from
cmd/gpu-kubelet-plugin/partitions.go) and never writes a claim's status.

The cluster (one H100 80GB per node, no nvidia.com/gpu):
- share-mem: the GPU in "memory" mode (81559Mi: 80Gi would not fit beside the others, as the
  scheduler knows); claims take 20Gi and 40Gi, and a named claim of 10Gi is held by two pods
  at once (a shared claim on a shared device);
- share-4: "4 shares" mode; claims take 1 and 2 shares;
- share-unl: "unlimited" mode; two claims ask nothing (memory default 0) and one 20Gi: the two
  share what the third leaves;
- dyn-mig: dynamic MIG: a counter-set slice and a device slice with the full GPU and every
  1g.10gb and 3g.40gb that could be carved; claims take a 3g.40gb and a 1g.10gb;
- hami-dra: the GPU as HAMi-DRA's kubelet plugin publishes it (dra_objects.hami_gpu: cores and
  memory); claims take 30 % of the cores with 20Gi, and 20 % with 40Gi, as its webhook writes
  them from nvidia.com/gpucores and nvidia.com/gpumem.

Pods start, finish and are deleted; then the controller is killed and, while it is down, a pod
takes a share, one is deleted and one finishes. Per pod (start, end, GPU-hours, cost, pieces),
per team and project, and per node held and idle, the controller equals the truth
(dra_objects.DraTruth, which computes each share from the claims' consumedCapacity by the rule
of docs/dra.md), and at every second where a holder comes or goes the holders plus idle are the
node's one GPU.
"""

import json
import time

import dra_objects as dra
import harness
from kubelet import SimulatedKubelet
from test_dra import (_controller_binary, api_get, compare_costs, compare_pods, controller_up,
                      ns_path, phase, wait)

import pytest

R = dra.RESOURCE_API
ML, SERVE = "share-ml", "share-serve"
MEM, FOUR, UNL, DMIG, HAMI = "share-mem", "share-4", "share-unl", "dyn-mig", "hami-dra"
GIB = 1024 ** 3


class Scenario:
    """What the module's one run leaves for the tests to check."""


def _pod(name, project, template=None, claim_name=None, node=None, run=None):
    return dra.pod(name, project, run=run, template=template, claim_name=claim_name, node=node)


def _template(name, klass, capacity=None, cel=None):
    return dra.claim_template(name, dra.request("gpu", klass, cel=cel, capacity=capacity))


@pytest.fixture(scope="module")
def scenario(module_cluster, tmp_path_factory):
    cluster = module_cluster
    api = cluster.api
    s = Scenario()
    s.cluster, s.api = cluster, api
    for ns, labels in (("gpu-cost", {}), (ML, {"team": "vision"}),
                       (SERVE, {"team": "serving", "project": "chat"})):
        api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": ns, "labels": labels}})
    cluster.apply(harness.RBAC)
    cluster.wait_controller_can()
    cluster.wait_controller_can(R + "/resourceslices?limit=1")
    for dc in dra.DEVICE_CLASSES + [dra.HAMI_CLASS]:
        api.call("POST", R + "/deviceclasses", dc)
    s.nodes = [dra.create_node(api, n, dra.dra_node_labels(n, "p5.48xlarge", "us-east-1",
                                                           "us-east-1a", "on-demand"))
               for n in (MEM, FOUR, UNL, DMIG, HAMI)]
    s.slices = {}
    for i, (node, mode) in enumerate(((MEM, "memory"), (FOUR, "4"), (UNL, "unlimited"))):
        dev = dra.shared_gpu(0, "GPU-5bd1c0de-0000-4000-8000-%012d" % i, mode)
        s.slices[node] = api.call("POST", R + "/resourceslices", dra.resource_slice(node, [dev]))
    sets, devs = dra.partitionable_h100(0, "GPU-5bd1c0de-0000-4000-8000-00000000d00d")
    api.call("POST", R + "/resourceslices", dra.counter_slice(DMIG, sets, count=2))
    s.slices[DMIG] = api.call("POST", R + "/resourceslices",
                              dra.resource_slice(DMIG, devs, count=2))
    s.slices[HAMI] = api.call("POST", R + "/resourceslices", dra.resource_slice(
        HAMI, [dra.hami_gpu(0, "GPU-5bd1c0de-0000-4000-8000-0000000000ab")],
        driver=dra.HAMI_DRIVER))
    # The API server keeps what its feature gates allow: a server without them drops the
    # fields, and this test has nothing to test there.
    back = api.get(R + "/resourceslices/" + s.slices[MEM]["metadata"]["name"])
    if not back["spec"]["devices"][0].get("allowMultipleAllocations"):
        pytest.skip("this kube-apiserver drops allowMultipleAllocations (DRAConsumableCapacity "
                    "off)")

    s.pods = dra.Recorder(cluster, "/api/v1/pods").start()
    s.claims = dra.Recorder(cluster, R + "/resourceclaims").start()
    kubelet = SimulatedKubelet(cluster.env, [MEM, FOUR, UNL, DMIG, HAMI]).start()
    s.controller, s.controller_error = None, None
    try:
        binary = _controller_binary()
        if binary is not None:
            s.controller = harness.Controller(
                binary, cluster, tmp_path_factory.mktemp("dra-share") / "controller.log",
                extra=["--snapshot-interval", "1s", "--test-sweep-strings"]).start()
            try:
                s.controller.wait_ready()
            except AssertionError as e:
                s.controller_error = str(e)
        s.w0 = int(time.time()) + 1
        time.sleep(s.w0 - time.time())
        run_workloads(s)
        yield s
    finally:
        if s.controller is not None:
            s.controller.stop()
            print("controller log (last lines):\n%s" % harness.tail(s.controller.log_path, 40))
        kubelet.stop()
        s.pods.stop()
        s.claims.stop()
        print("simulated kubelet errors: %s" % kubelet.errors[-5:])


def run_workloads(s):
    api = s.api
    gpu, mig = "gpu.nvidia.com", "mig.nvidia.com"
    for ns in (ML, SERVE):
        for name, klass, cap, cel in (
                ("mem-20", gpu, {"memory": "20Gi"}, None),
                ("mem-40", gpu, {"memory": "40Gi"}, None),
                ("shares-1", gpu, {"shares": "1"}, None),
                ("shares-2", gpu, {"shares": "2"}, None),
                ("any", gpu, None, None),
                ("mig-3g", mig, None, dra.profile_is("3g.40gb")),
                ("mig-1g", mig, None, dra.profile_is("1g.10gb")),
                ("hami-30", dra.HAMI_DRIVER, {"cores": "30", "memory": str(20 * GIB)}, None),
                ("hami-mem", dra.HAMI_DRIVER, {"cores": "20", "memory": str(40 * GIB)}, None)):
            api.call("POST", ns_path(ns, "resourceclaimtemplates", R),
                     _template(name, klass, cap, cel))
    api.call("POST", ns_path(SERVE, "resourceclaims", R),
             dra.claim("serve-10", dra.request("gpu", gpu, capacity={"memory": "10Gi"})))

    def create(ns, p):
        api.call("POST", ns_path(ns, "pods"), p)

    create(ML, _pod("embed", "embeddings", template="mem-20", node=MEM))
    create(ML, _pod("rank", "ranker", template="mem-40", node=MEM, run=12))
    create(SERVE, _pod("serve-a", "chat", claim_name="serve-10", node=MEM, run=10))
    create(SERVE, _pod("chat-1", "chat", template="shares-1", node=FOUR))
    create(SERVE, _pod("chat-2", "chat", template="shares-2", node=FOUR))
    create(ML, _pod("nb-a", "notebooks", template="any", node=UNL))
    create(ML, _pod("nb-c", "notebooks", template="mem-20", node=UNL))
    create(ML, _pod("ft", "finetune", template="mig-3g", node=DMIG))
    create(ML, _pod("tiny", "eval", template="mig-1g", node=DMIG, run=8))
    create(SERVE, _pod("hd-a", "chat", template="hami-30", node=HAMI))
    create(ML, _pod("hd-b", "ranker", template="hami-mem", node=HAMI, run=10))
    wait("serve-a running", lambda: phase(api, SERVE, "serve-a") == "Running")
    time.sleep(3)
    create(SERVE, _pod("serve-b", "chat", claim_name="serve-10", node=MEM))
    create(ML, _pod("nb-b", "notebooks", template="any", node=UNL, run=9))
    wait("chat-2 running", lambda: phase(api, SERVE, "chat-2") == "Running")
    wait("nb-b running", lambda: phase(api, ML, "nb-b") == "Running")
    time.sleep(2)
    api.call("DELETE", ns_path(SERVE, "pods/chat-2"))
    for ns, name, want in ((ML, "rank", "Succeeded"), (SERVE, "serve-a", "Succeeded"),
                           (ML, "tiny", "Succeeded"), (ML, "nb-b", "Succeeded"),
                           (SERVE, "chat-2", "Gone"), (ML, "embed", "Running"),
                           (SERVE, "serve-b", "Running"), (SERVE, "chat-1", "Running"),
                           (ML, "nb-a", "Running"), (ML, "nb-c", "Running"),
                           (ML, "ft", "Running"), (SERVE, "hd-a", "Running"),
                           (ML, "hd-b", "Succeeded")):
        wait("%s/%s %s" % (ns, name, want), lambda: phase(api, ns, name) == want, timeout=45)
    s.done = time.time()


def _results(s, ns, pod):
    """The allocation results of a pod's claim (its generated one, or the one it names)."""
    p = {x["metadata"]["name"]: x for x in s.pods.last()}[pod]
    names, _ = dra.pod_claim_names(p)
    for v in reversed(s.claims.by_name(names[0], ns)):
        a = (v.get("status") or {}).get("allocation")
        if a:
            return a["devices"]["results"]
    return None


def test_scheduler_shares_the_devices(scenario):
    """The real scheduler put several claims on each shared GPU, with a shareID each and what
    each consumed after the driver's request policies, and carved MIG devices by counters."""
    s = scenario
    got = {}
    for ns, pod in ((ML, "embed"), (ML, "rank"), (SERVE, "serve-a"), (SERVE, "chat-1"),
                    (SERVE, "chat-2"), (ML, "nb-a"), (ML, "nb-b"), (ML, "nb-c")):
        (r,) = _results(s, ns, pod)
        assert r["device"] == "gpu-0" and r.get("shareID"), (pod, r)
        got[pod] = {k: dra.cli.parse_quantity(v) for k, v in r["consumedCapacity"].items()}
    assert got["embed"] == {"memory": 20 * GIB} and got["rank"] == {"memory": 40 * GIB}
    assert got["serve-a"] == {"memory": 10 * GIB}
    assert got["chat-1"] == {"memory": 0, "shares": 1} and got["chat-2"]["shares"] == 2
    assert got["nb-a"] == {"memory": 0} and got["nb-b"] == {"memory": 0}
    assert got["nb-c"] == {"memory": 20 * GIB}
    shares = {r["shareID"] for p in ("embed", "rank") for r in _results(s, ML, p)}
    assert len(shares) == 2
    (ft,) = _results(s, ML, "ft")
    (tiny,) = _results(s, ML, "tiny")
    assert ft["device"] in ("gpu-0-mig-3g40gb-9-0", "gpu-0-mig-3g40gb-9-4"), ft
    assert tiny["device"].startswith("gpu-0-mig-1g10gb-19-"), tiny
    assert not ft.get("shareID"), ft
    (ha,) = _results(s, SERVE, "hd-a")
    (hb,) = _results(s, ML, "hd-b")
    assert ha["device"] == hb["device"] == "hami-gpu-0" and ha["shareID"] != hb["shareID"]
    assert {k: dra.cli.parse_quantity(v) for k, v in ha["consumedCapacity"].items()} == {
        "cores": 30, "memory": 20 * GIB}
    assert not s.claims.errors and not s.pods.errors


def test_truth_on_the_scenario(scenario):
    """The truth's shares are what the scenario means, from the rule worked by hand."""
    s = scenario
    from test_dra import build_truth
    t = build_truth(s)
    h = {x.name: x for x in t.holders}
    now = int(s.done)
    mem = 81559 * 1024 * 1024
    assert [g for _, _, g in t.segments(h["embed"], now)] == [pytest.approx(20 * GIB / mem)]
    assert [g for _, _, g in t.segments(h["rank"], now)] == [pytest.approx(40 * GIB / mem)]
    assert [g for _, _, g in t.segments(h["chat-1"], now)] == [0.25]
    assert [g for _, _, g in t.segments(h["chat-2"], now)] == [0.5]
    # serve-a and serve-b hold one claim of 10Gi: halves while both run.
    a, b = h["serve-a"], h["serve-b"]
    assert t.segments(a, now)[-1][2] == pytest.approx(5 * GIB / mem)
    # Unlimited: nb-a and nb-b share what nb-c (20Gi) leaves.
    rest = 1 - 20 * GIB / mem
    nb_a = t.segments(h["nb-a"], now)
    assert rest / 2 in [pytest.approx(g) for _, _, g in nb_a]
    assert nb_a[-1][2] == pytest.approx(rest)
    assert [g for _, _, g in t.segments(h["ft"], now)] == [0.5]
    assert [g for _, _, g in t.segments(h["tiny"], now)] == [pytest.approx(1 / 7)]
    # HAMi-DRA: the larger fraction of each: 30 % of the cores; 40Gi of the memory.
    hami_mem = 85520809984
    assert [g for _, _, g in t.segments(h["hd-a"], now)] == [pytest.approx(0.3)]
    assert [g for _, _, g in t.segments(h["hd-b"], now)] == [pytest.approx(40 * GIB / hami_mem)]
    assert {n: x.capacity for n, x in t.nodes.items()} == {MEM: 1, FOUR: 1, UNL: 1, DMIG: 1,
                                                             HAMI: 1}
    assert a.start < b.start


def check_every_change(s, c):
    """At every second where a holder on a node comes or goes (and the second before), the
    controller's held plus idle on that node is its one GPU, and held is the truth's."""
    from test_dra import build_truth
    t = build_truth(s)
    w1 = int(time.time()) - 2
    moments = set()
    for h in t.holders:
        moments |= {h.start, h.start - 1} | ({h.end, h.end - 1} if h.end else set())
    bad = []
    for m in sorted(x for x in moments if s.w0 <= x < w1):
        doc = api_get(c, "/api/v1/costs?window=%d,%d&by=node" % (m, m + 1))
        held = {g["keys"]["node"]: g["gpu_seconds"] for g in doc["groups"]}
        idle = {n["node"]: n["gpu_seconds"] for n in (doc.get("idle") or {}).get("nodes") or []}
        tw = t.window(m, m + 1)
        for node, n in t.nodes.items():
            gh, gi = held.get(node, 0.0), idle.get(node, 0.0)
            if abs(gh + gi - n.capacity) > 1e-9 or abs(gh - tw["idle"][node]["held"]) > 1e-9:
                bad.append("%s at %d: held %r + idle %r; truth held %r of %g" % (
                    node, m, gh, gi, tw["idle"][node]["held"], n.capacity))
    assert moments and not bad, "\n".join(bad[:20])


def test_controller_prices_the_shares(scenario, controller_bin):
    """/api/v1/pods and /api/v1/costs = the truth per pod, team, project and node."""
    s = scenario
    c = controller_up(s)
    bad = harness.settle(lambda: compare_pods(s, c) + compare_costs(s, c))
    assert not bad, "\n".join(bad)
    check_every_change(s, c)


def test_controller_killed_while_shares_change(scenario, controller_bin):
    """SIGKILL; while it is down a pod takes two shares, embed is deleted (its generated claim
    with it) and nb-c finishes... (deleted: it runs no timer). Restarted, it equals the truth."""
    s = scenario
    c = controller_up(s)
    api = s.api

    def checkpoint_rvs():
        cms = s.cluster.configmaps()
        return tuple(cms[n]["metadata"]["resourceVersion"] if n in cms else None
                     for n in ("gpu-cost-checkpoint", "gpu-cost-checkpoint-g1"))

    rv0 = checkpoint_rvs()
    wait("a checkpoint after the scenario", lambda: checkpoint_rvs() != rv0, timeout=15)
    c.kill()
    api.call("POST", ns_path(SERVE, "pods"), _pod("late", "chat", template="shares-2", node=FOUR))
    api.call("DELETE", ns_path(ML, "pods/embed"))
    api.call("DELETE", ns_path(ML, "pods/nb-c"))
    wait("late running", lambda: phase(api, SERVE, "late") == "Running", timeout=30)
    wait("embed gone", lambda: phase(api, ML, "embed") == "Gone", timeout=30)
    wait("nb-c gone", lambda: phase(api, ML, "nb-c") == "Gone", timeout=30)
    time.sleep(1)
    c.start()
    c.wait_ready()
    bad = harness.settle(lambda: compare_pods(s, c) + compare_costs(s, c))
    assert not bad, "\n".join(bad)
    check_every_change(s, c)
    # /allocation: OpenCost's view of the same pods adds up to the same cost.
    w1 = int(time.time()) - 2
    alloc = api_get(c, "/allocation?window=%d,%d&aggregate=pod" % (s.w0, w1))
    costs = api_get(c, "/api/v1/costs?window=%d,%d&by=pod" % (s.w0, w1))
    rows = [a for k, a in alloc["data"][0].items() if k != "__idle__"]
    got = sum(a["gpuCost"] for a in rows)
    # gpuCost is written to 5 decimals, as OpenCost writes it.
    assert abs(got - costs["total"]["cost_usd"]) <= 5e-6 * len(rows), (got, costs["total"])
    assert c.alive()
    print(json.dumps(costs["total"]))
