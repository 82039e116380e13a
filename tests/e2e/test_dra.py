"""GPUs allocated through Dynamic Resource Allocation, on the real control plane.

kube-scheduler's DynamicResources plugin allocates ResourceClaims from the ResourceSlices the
test publishes as NVIDIA's DRA driver would (dra_objects.py), writes their status.allocation and
reservedFor, and binds the pods; kube-controller-manager's resource-claim controller makes the
claims of ResourceClaimTemplates, takes finished pods out of reservedFor, deallocates claims
nobody holds and deletes generated ones. The simulated kubelet (kubelet.py) runs and finishes
the pods. Nothing writes a claim's status but those two components.

The cluster:
- dra-h100: two whole H100 80GB published as type "gpu" (on-demand), no nvidia.com/gpu;
- dra-a100: one A100-SXM4-40GB in MIG partitions 3g.20gb, 2g.10gb and two 1g.5gb (spot), no
  nvidia.com/gpu;
- dp-h100: an ordinary device-plugin node, two nvidia.com/gpu (on-demand);
- mixed-h100: a node in mid-migration, tainted: the device plugin advertises two
  nvidia.com/gpu and the DRA driver publishes the same two GPUs (two GPUs, not four);
- the driver's DeviceClasses gpu.nvidia.com (mapping the extended resource nvidia.com/gpu)
  and mig.nvidia.com.

The pods:
- train: a whole GPU through a ResourceClaimTemplate, finishes after 8 s;
- notebook: a 1g.5gb partition through a template, runs on;
- scratch: a 2g.10gb partition through a template, deleted while running;
- infer-a and infer-b: one named ResourceClaim (the 3g.20gb partition) reserved for both at
  once; infer-b starts 3 s after infer-a, infer-a finishes after 10 s, infer-b runs on;
- dp-job: nvidia.com/gpu: 1 on the device-plugin node, finishes after 12 s;
- dp-mixed: nvidia.com/gpu: 1 on the mixed node (served by the device plugin there);
- ext-job: nvidia.com/gpu: 1 on dra-h100, served by DRA through the class's
  extendedResourceName (the scheduler makes its claim): one GPU, not two;
- probe: a whole GPU with adminAccess (a monitoring pod), which costs nothing;
- too-big: three whole GPUs in one claim, which no node has: never bound, never billed.
Midway the driver republishes dra-h100's pool at generation 2 (a driver upgrade changes
driverVersion): the node still has two GPUs.

The truth (dra_objects.DraTruth) is computed from the pods and claims the test watched and the
slices it published. The controller's /api/v1/pods must equal it per pod (start, end, GPU-hours,
cost; the pieces of a pod whose share changed must be the truth's pieces), /api/v1/costs per team
and project over a window to the cent, and per node the GPU time held and idle: the DRA nodes'
capacity is their physical GPUs (2 and 1, however many partitions), no GPU counted twice.

Then the controller is killed (SIGKILL, after a fresh checkpoint) and, while it is down, a third
pod joins the shared claim with a second claim of its own, the notebook is deleted and a batch
pod finishes, their generated claims deleted by kube-controller-manager. Restarted, it must
equal the truth again, per pod and per team, project and node.
"""

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest

import dra_objects as dra
import e2e_truth as truth
import harness
import sim
from kubelet import SimulatedKubelet

CFG = json.loads(harness.CONFIG.read_text())
ML, SERVE, OPS = "dra-ml", "dra-serve", "dra-ops"
H100, A100, DP, MIXED = "dra-h100", "dra-a100", "dp-h100", "mixed-h100"
# The mixed node is tainted so that only the pod meant for it lands there.
MIGRATION = {"key": "gpu.example.com/migration", "value": "dra", "effect": "NoSchedule"}
R = dra.RESOURCE_API

def wait(what, fn, timeout=60, period=0.25):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(period)
    raise AssertionError("%s: not after %d s" % (what, timeout))


def _controller_binary():
    """The AddressSanitizer build when the suite is told where (GPU_COST_CONTROLLER_ASAN, as
    `make e2e` does), run sweeping its string pool at every snapshot (--test-sweep-strings), so
    a claim's, device's or pod's string freed under the accountant is a crash with a report;
    else the release build, sweeping as well."""
    asan = os.environ.get("GPU_COST_CONTROLLER_ASAN")
    if asan and os.access(asan, os.X_OK):
        os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1")
        return Path(asan)
    p = Path(os.environ.get("GPU_COST_CONTROLLER") or harness.REPO / "build" /
             "gpu-cost-controller")
    return p if os.access(p, os.X_OK) else None


class Scenario:
    """What the module's one run of the scenario leaves for the tests to check."""


@pytest.fixture(scope="module")
def scenario(module_cluster, tmp_path_factory):
    cluster = module_cluster
    api = cluster.api
    s = Scenario()
    s.cluster, s.api = cluster, api
    for ns, labels in (("gpu-cost", {}), (ML, {"team": "vision"}),
                       (SERVE, {"team": "serving", "project": "chat"}),
                       (OPS, {"team": "platform",
                              "resource.kubernetes.io/admin-access": "true"})):
        api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": ns, "labels": labels}})
    cluster.apply(harness.RBAC)  # the shipped RBAC alone: list/watch on the DRA resources
    cluster.wait_controller_can()
    cluster.wait_controller_can(R + "/resourceslices?limit=1")
    cluster.wait_controller_can(R + "/resourceclaims?limit=1")

    # The driver's classes and the nodes with their slices, before the controller starts.
    for dc in dra.DEVICE_CLASSES:
        api.call("POST", R + "/deviceclasses", dc)
    s.nodes = [
        dra.create_node(api, H100, dra.dra_node_labels(H100, "p5.48xlarge", "us-east-1",
                                                       "us-east-1a", "on-demand")),
        dra.create_node(api, A100, dra.dra_node_labels(A100, "p4d.24xlarge", "us-east-1",
                                                       "us-east-1b", "spot")),
    ]
    # The device-plugin nodes: the H100 GFD label set, moved to a cloud instance.
    dp_labels = sim._cloud_node(DP, "p5.48xlarge", "us-east-1", "us-east-1a",
                                {"nvidia.com/gpu.count": "2",
                                 "karpenter.sh/capacity-type": "on-demand"})
    s.nodes.append(dra.create_node(api, DP, dp_labels, {"nvidia.com/gpu": "2"}))
    # A node in the middle of a migration: the device plugin advertises its two GPUs and the
    # DRA driver publishes the same two in a slice.
    mx_labels = sim._cloud_node(MIXED, "p5.48xlarge", "us-east-1", "us-east-1c",
                                {"nvidia.com/gpu.count": "2",
                                 "karpenter.sh/capacity-type": "on-demand"})
    dra.create_node(api, MIXED, mx_labels, {"nvidia.com/gpu": "2"})
    api.merge_patch("/api/v1/nodes/" + MIXED, {"spec": {"taints": [MIGRATION]}})
    s.nodes.append(api.get("/api/v1/nodes/" + MIXED))
    api.call("POST", R + "/resourceslices", dra.resource_slice(MIXED, dra.h100_devices(2)))
    s.h100_slice = api.call("POST", R + "/resourceslices",
                            dra.resource_slice(H100, dra.h100_devices(1)))
    s.a100_slice = api.call("POST", R + "/resourceslices",
                            dra.resource_slice(A100, dra.a100_mig_devices()))

    s.pods = dra.Recorder(cluster, "/api/v1/pods").start()
    s.claims = dra.Recorder(cluster, R + "/resourceclaims").start()
    kubelet = SimulatedKubelet(cluster.env, [H100, A100, DP, MIXED]).start()
    s.controller, s.controller_error = None, None
    try:
        binary = _controller_binary()
        if binary is not None:
            s.controller = harness.Controller(
                binary, cluster, tmp_path_factory.mktemp("dra") / "controller.log",
                extra=["--snapshot-interval", "1s", "--test-sweep-strings"]).start()
            try:
                s.controller.wait_ready()
            except AssertionError as e:
                # The cluster side is still checked; the controller's tests report this.
                s.controller_error = str(e)
        # The window compared starts when every node and slice exists and has been listed.
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


def ns_path(ns, what, group="/api/v1"):
    return "%s/namespaces/%s/%s" % (group, ns, what)


def phase(api, ns, name):
    st, doc = api.request("GET", ns_path(ns, "pods/" + name))
    if st == 404:
        return "Gone"
    return (doc.get("status") or {}).get("phase")


def reserved_history(s, name="shared-3g", ns=SERVE):
    """The claim's reservedFor over its versions, runs of the same list collapsed."""
    out = []
    for v in s.claims.by_name(name, ns):
        r = [x["name"] for x in (v.get("status") or {}).get("reservedFor") or []]
        if out and out[-1][0] == r:
            out[-1][1] += 1
        else:
            out.append([r, 1])
    return out


def reserved_seen(s, names, after=0):
    """A version of shared-3g, among those after the first `after`, reserved for exactly
    these pods."""
    vs = s.claims.by_name("shared-3g", SERVE)[after:]
    return any(sorted(x["name"] for x in (v.get("status") or {}).get("reservedFor") or [])
               == sorted(names) for v in vs)


def run_workloads(s):
    api = s.api
    api.call("POST", ns_path(ML, "resourceclaimtemplates", R),
             dra.claim_template("whole-gpu", dra.request("gpu", "gpu.nvidia.com")))
    api.call("POST", ns_path(ML, "resourceclaimtemplates", R),
             dra.claim_template("mig-1g", dra.request("mig", "mig.nvidia.com",
                                                      dra.profile_is("1g.5gb"))))
    api.call("POST", ns_path(ML, "resourceclaimtemplates", R),
             dra.claim_template("mig-2g", dra.request("mig", "mig.nvidia.com",
                                                      dra.profile_is("2g.10gb"))))
    api.call("POST", ns_path(ML, "resourceclaimtemplates", R),
             dra.claim_template("three-gpus", dra.request("gpus", "gpu.nvidia.com", count=3)))
    api.call("POST", ns_path(OPS, "resourceclaimtemplates", R),
             dra.claim_template("gpu-admin", dra.request("gpu", "gpu.nvidia.com", admin=True)))
    api.call("POST", ns_path(SERVE, "resourceclaims", R),
             dra.claim("shared-3g", dra.request("mig", "mig.nvidia.com",
                                                dra.profile_is("3g.20gb"))))

    def create(ns, p):
        api.call("POST", ns_path(ns, "pods"), p)

    create(ML, dra.pod("train", "pretrain", run=8, template="whole-gpu"))
    create(ML, dra.pod("notebook", "notebooks", template="mig-1g"))
    create(ML, dra.pod("scratch", "scratch", template="mig-2g"))
    create(SERVE, dra.pod("infer-a", "chat", run=10, claim_name="shared-3g"))
    create(ML, dra.pod("dp-job", "etl", run=12, gpus=1, node=DP))
    create(ML, dra.pod("dp-mixed", "etl", gpus=1, node=MIXED, tolerate=dict(
        MIGRATION, operator="Equal")))
    create(SERVE, dra.pod("ext-job", "legacy", gpus=1, node=H100))
    create(OPS, dra.pod("probe", "dcgm", template="gpu-admin", node=H100))
    create(ML, dra.pod("too-big", "pretrain", template="three-gpus"))

    wait("infer-a running", lambda: phase(api, SERVE, "infer-a") == "Running")
    time.sleep(3)
    create(SERVE, dra.pod("infer-b", "chat", claim_name="shared-3g"))
    wait("scratch running", lambda: phase(api, ML, "scratch") == "Running")
    wait("infer-b running", lambda: phase(api, SERVE, "infer-b") == "Running")
    time.sleep(2)
    api.call("DELETE", ns_path(ML, "pods/scratch"))

    # A driver upgrade: the kubelet plugin republishes its pool with a new generation.
    sl = api.get(R + "/resourceslices/" + s.h100_slice["metadata"]["name"])
    sl["spec"]["pool"]["generation"] = 2
    for d in sl["spec"]["devices"]:
        d["attributes"]["driverVersion"] = {"version": "580.105.8"}
    s.h100_slice = api.call("PUT", R + "/resourceslices/" + sl["metadata"]["name"], sl)

    for ns, name, want in ((ML, "train", "Succeeded"), (SERVE, "infer-a", "Succeeded"),
                           (ML, "dp-job", "Succeeded"), (ML, "scratch", "Gone"),
                           (ML, "notebook", "Running"), (SERVE, "infer-b", "Running"),
                           (SERVE, "ext-job", "Running"), (OPS, "probe", "Running"),
                           (ML, "dp-mixed", "Running")):
        wait("%s/%s %s" % (ns, name, want), lambda: phase(api, ns, name) == want, timeout=45)

    # The resource-claim controller takes finished pods out of reservedFor and deletes the
    # claims generated for pods that are done or gone. (kube-controller-manager v1.37.2 then
    # puts a finished pod of a claim still allocated back into reservedFor, since its pod
    # sync does not look at the phase, and takes it out again, over and over: reservedFor
    # flaps between [infer-b] and [infer-b, infer-a]. The truth and the controller's holders
    # are the pods' intervals, never reservedFor.)
    wait("shared-3g reserved for infer-b only", lambda: reserved_seen(s, ["infer-b"]))
    gen = {}
    for p in s.pods.last():
        for st in (p.get("status") or {}).get("resourceClaimStatuses") or []:
            gen[p["metadata"]["name"]] = st.get("resourceClaimName")
    for name in ("train", "scratch"):
        assert gen.get(name), "no generated claim seen for %s: %s" % (name, gen)
        wait("claim of %s deleted" % name, lambda: api.request(
            "GET", ns_path(ML, "resourceclaims/" + gen[name], R))[0] == 404, timeout=30)
    s.generated = gen
    s.done = time.time()


# ---- the cluster side: what the real scheduler and controller-manager did ------------------------

def pods_by_name(s):
    return {p["metadata"]["name"]: p for p in s.pods.last()}


def claim_versions(s, ns, name):
    return s.claims.by_name(name, ns)


def allocated(versions):
    for v in reversed(versions):
        a = (v.get("status") or {}).get("allocation")
        if a:
            return a["devices"]["results"]
    return None


def build_truth(s):
    nodes = [s.api.get("/api/v1/nodes/" + n["metadata"]["name"]) for n in s.nodes]
    slices = s.api.get(R + "/resourceslices")["items"]
    namespaces = s.api.get("/api/v1/namespaces")["items"]
    return dra.DraTruth(CFG, nodes, slices, s.claims.all_versions(), s.pods.last(), namespaces)


def test_scheduler_allocates_from_the_slices(scenario):
    s = scenario
    pods = pods_by_name(s)
    for name in ("train", "notebook", "scratch", "infer-a", "infer-b", "dp-job", "ext-job",
                 "probe", "dp-mixed"):
        assert pods[name]["spec"].get("nodeName"), name
    # Placed by what they claim: no pod names a node but ext-job, probe and dp-job.
    assert pods["train"]["spec"]["nodeName"] == H100
    assert pods["ext-job"]["spec"]["nodeName"] == H100
    for name in ("notebook", "scratch", "infer-a", "infer-b"):
        assert pods[name]["spec"]["nodeName"] == A100, name
    assert pods["dp-job"]["spec"]["nodeName"] == DP
    # On the mixed node the device plugin serves nvidia.com/gpu (the node advertises it).
    assert pods["dp-mixed"]["spec"]["nodeName"] == MIXED
    assert not pods["dp-mixed"]["status"].get("extendedResourceClaimStatus")
    big = pods["too-big"]
    assert not big["spec"].get("nodeName")
    cond = [c for c in big["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    assert cond and cond[0]["status"] == "False" and cond[0]["reason"] == "Unschedulable", cond

    g = s.generated
    train = allocated(claim_versions(s, ML, g["train"]))
    assert [(r["driver"], r["pool"]) for r in train] == [("gpu.nvidia.com", H100)], train
    assert train[0]["device"] in ("gpu-0", "gpu-1")
    nb = allocated(claim_versions(s, ML, g["notebook"]))
    assert [r["device"] for r in nb] in (["gpu-0-mig-19-2-1"], ["gpu-0-mig-19-3-1"]), nb
    sc = allocated(claim_versions(s, ML, g["scratch"]))
    assert [r["device"] for r in sc] == ["gpu-0-mig-14-0-2"], sc
    shared = claim_versions(s, SERVE, "shared-3g")
    assert [r["device"] for r in allocated(shared)] == ["gpu-0-mig-9-4-4"]
    both = [v for v in shared if {r["name"] for r in (v.get("status") or {}).get("reservedFor")
                                  or []} == {"infer-a", "infer-b"}]
    assert both, "the scheduler never reserved shared-3g for both pods"
    # The deleted pod's and the finished pod's generated claims were deallocated and deleted.
    for name in ("train", "scratch"):
        vs = claim_versions(s, ML, g[name])
        assert vs[-1]["metadata"]["uid"] in s.claims.deleted, name

    # ext-job: the scheduler served nvidia.com/gpu from DRA with a claim of its own.
    ext = pods["ext-job"]["status"].get("extendedResourceClaimStatus")
    assert ext and ext["resourceClaimName"], pods["ext-job"]["status"]
    assert [m["resourceName"] for m in ext["requestMappings"]] == ["nvidia.com/gpu"], ext
    ev = claim_versions(s, SERVE, ext["resourceClaimName"])
    assert ev[-1]["metadata"].get("annotations", {}).get(dra.EXT_CLAIM_ANNOTATION) == "true"
    er = allocated(ev)
    assert [(r["pool"], r["device"] != train[0]["device"]) for r in er] == [(H100, True)], er
    # probe: an admin-access allocation of a GPU in use.
    pr = allocated(claim_versions(s, OPS, g["probe"]))
    assert len(pr) == 1 and pr[0].get("adminAccess") is True and pr[0]["pool"] == H100, pr
    assert not s.claims.errors and not s.pods.errors


def test_truth_on_the_scenario(scenario):
    """The truth's figures are what the scenario means, worked out from the pods' times alone."""
    s = scenario
    t = build_truth(s)
    now = int(s.done)
    h = {x.name: x for x in t.holders}
    assert set(h) == {"train", "notebook", "scratch", "infer-a", "infer-b", "dp-job",
                      "ext-job", "dp-mixed"}, sorted(h)
    for name in ("train", "ext-job", "dp-job", "dp-mixed"):
        segs = t.segments(h[name], now)
        assert [g for _, _, g in segs] == [1.0], (name, segs)
    assert [g for _, _, g in t.segments(h["notebook"], now)] == [pytest.approx(1 / 7)]
    assert [g for _, _, g in t.segments(h["scratch"], now)] == [pytest.approx(2 / 7)]
    a, b = h["infer-a"], h["infer-b"]
    assert a.start < b.start < a.end, (a.start, b.start, a.end)
    assert t.segments(a, now) == [(a.start, b.start, 0.5), (b.start, a.end, 0.25)]
    assert t.segments(b, now) == [(b.start, a.end, 0.25), (a.end, now, 0.5)]
    assert h["train"].end - h["train"].start >= 8
    assert h["scratch"].end is not None and h["notebook"].end is None
    # Capacity: physical GPUs, each once.
    assert {n: x.capacity for n, x in t.nodes.items()} == {H100: 2, A100: 1, DP: 2, MIXED: 2}
    assert (t.nodes[H100].model, t.nodes[H100].price) == ("NVIDIA-H100-80GB-HBM3", 6.88)
    assert (t.nodes[A100].model, t.nodes[A100].price) == ("NVIDIA-A100-SXM4-40GB", 1.29)
    assert t.nodes[DP].price == 6.88


# ---- the controller against the truth ------------------------------------------------------------

# The figures are seconds of GPU time, a few cents in all: money is compared to 1e-7 USD (the
# controller's arithmetic is double precision), far inside the cent the reports round to.
GH_EPS, GS_EPS, USD_EPS = 1e-9, 1e-6, 1e-7


def api_get(c, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (c.port, path), timeout=10) as r:
        return json.loads(r.read())


def _close(a, b, eps):
    return a is not None and abs(a - b) <= eps


def controller_up(s):
    c = s.controller
    assert s.controller_error is None, s.controller_error
    assert c is not None and c.alive(), "controller not running (exit %s):\n%s" % (
        c and c.proc.returncode, c and harness.tail(c.log_path))
    return c


def compare_pods(s, c):
    """/api/v1/pods against the truth, per pod: lines that differ."""
    doc = api_get(c, "/api/v1/pods?limit=100000")
    now = truth.utc(doc["now"])
    t = build_truth(s)
    holders = {h.uid: h for h in t.holders}
    got = {}
    for p in doc["pods"]:
        got.setdefault(p["uid"].split("#")[0], []).append(p)
    bad = []
    for uid in sorted(set(got) | set(holders), key=lambda u: (holders[u].name if u in holders
                                                               else u)):
        h, ps = holders.get(uid), got.get(uid)
        if h is None:
            bad.append("%s: listed, the truth has no GPU time for it: %s" % (
                ps[0]["name"], [(p["geq"], p["start"], p["end"]) for p in ps]))
            continue
        if ps is None:
            bad.append("%s/%s: missing" % (h.ns, h.name))
            continue
        ps.sort(key=lambda p: p["start"])
        segs = t.segments(h, now)
        hours = sum(g * (b - a) for a, b, g in segs) / 3600.0
        ghours = sum(p["gpu_hours"] for p in ps)
        gcost = sum(p["cost_usd"] for p in ps)
        start = truth.utc(ps[0]["start"])
        ends = [p["end"] for p in ps]
        end = None if ends[-1] is None else truth.utc(ends[-1])
        line = "%s/%s: %s..%s %.9f GPU-h $%.7f; truth %s..%s %.9f GPU-h $%.7f %s" % (
            h.ns, h.name, ps[0]["start"], ends[-1], ghours, gcost, dra.rfc3339(h.start),
            h.end and dra.rfc3339(h.end), hours, hours * h.price,
            [(b - a, round(g, 4)) for a, b, g in segs])
        print(line)
        if start != h.start or end != h.end or not _close(ghours, hours, GH_EPS) or \
                not _close(gcost, hours * h.price, USD_EPS):
            bad.append(line)
        for p in ps:
            if (p["node"], p["team"], p["project"], p["model"], p["capacity_type"]) != \
                    (h.node, h.team, h.project, h.model, h.capacity_type) or \
                    not _close(p["usd_per_gpu_hour"], h.price, 1e-9):
                bad.append("%s/%s: %s/%s/%s %s %s $%s; truth %s/%s/%s %s %s $%s" % (
                    h.ns, h.name, p["node"], p["team"], p["project"], p["model"],
                    p["capacity_type"], p["usd_per_gpu_hour"], h.node, h.team, h.project,
                    h.model, h.capacity_type, h.price))
        # A pod whose share changed: one row spanning its pieces (GPU-hours, start and end
        # checked above), or, if listed as pieces, the truth's pieces.
        if len(ps) > 1:
            pieces = [(truth.utc(p["start"]), now if p["end"] is None else truth.utc(p["end"]),
                       p["geq"]) for p in ps]
            if len(pieces) != len(segs) or any(
                    (a, b) != (x, y) or not _close(g, z, 1e-9)
                    for (a, b, g), (x, y, z) in zip(pieces, segs)):
                bad.append("%s/%s pieces %s; truth %s" % (h.ns, h.name, pieces, segs))
        # The current GPU-equivalents: the latest piece's.
        if not _close(ps[-1]["geq"], segs[-1][2], 1e-12):
            bad.append("%s/%s geq %r; truth %r" % (h.ns, h.name, ps[-1]["geq"], segs[-1][2]))
        # A running pod on claims only (its claims exist while it runs): the devices they
        # hold are what it requested. (A finished pod's generated claims go with it, and a
        # restarted controller never sees them: 0 is all it can say then.)
        if h.dp == 0 and h.end is None and ps[-1]["container"] is not None:
            want = sum(len(t.claims[k]["devices"]) for k in h.claims)
            if ps[-1]["gpus_requested"] != want:
                bad.append("%s/%s gpus_requested %r; truth %r devices" % (
                    h.ns, h.name, ps[-1]["gpus_requested"], want))
    return bad


def compare_costs(s, c):
    """/api/v1/costs over [w0, w1) against the truth: per team and project, total and capacity;
    per node the GPU time held and idle, the DRA nodes at their physical GPUs; and
    /metrics' node_gpu_count."""
    w1 = truth.utc(api_get(c, "/api/v1/pods?limit=1")["now"])
    w0 = s.w0
    t = build_truth(s)
    tw = t.window(w0, w1)
    win = "window=%d,%d" % (w0, w1)
    bad = []
    by_tp = api_get(c, "/api/v1/costs?%s&by=team,project" % win)
    got = {(g["keys"]["team"], g["keys"]["project"]): g for g in by_tp["groups"]}
    for key in sorted(set(got) | set(tw["groups"]), key=str):
        g, w = got.get(key) or {}, tw["groups"].get(key) or {"gpu_seconds": 0.0,
                                                             "cost_usd": 0.0}
        line = "%s/%s: %r GPU-s $%r; truth %r GPU-s $%r" % (
            key[0], key[1], g.get("gpu_seconds"), g.get("cost_usd"), w["gpu_seconds"],
            w["cost_usd"])
        print(line)
        if not _close(g.get("gpu_seconds", 0.0), w["gpu_seconds"], GS_EPS) or \
                not _close(g.get("cost_usd", 0.0), w["cost_usd"], USD_EPS):
            bad.append(line)
    for part in ("total", "capacity"):
        g, w = by_tp.get(part) or {}, tw[part]
        line = "%s %s: %r GPU-s $%r; truth %r GPU-s $%r" % (
            win, part, g.get("gpu_seconds"), g.get("cost_usd"), w["gpu_seconds"],
            w["cost_usd"])
        print(line)
        if not _close(g.get("gpu_seconds"), w["gpu_seconds"], GS_EPS) or \
                not _close(g.get("cost_usd"), w["cost_usd"], USD_EPS):
            bad.append(line)
    by_node = api_get(c, "/api/v1/costs?%s&by=node" % win)
    held = {g["keys"]["node"]: g for g in by_node["groups"]}
    idle = {n["node"]: n for n in (by_node.get("idle") or {}).get("nodes") or []}
    for node in sorted(set(t.nodes) | set(held) | set(idle)):
        w = tw["idle"].get(node)
        if w is None:
            bad.append("%s: not a GPU node, listed %s %s" % (node, held.get(node), idle.get(node)))
            continue
        gh = (held.get(node) or {}).get("gpu_seconds", 0.0)
        gi = (idle.get(node) or {}).get("gpu_seconds", 0.0)
        print("%s: held %r idle %r GPU-s; truth held %r idle %r (capacity %g GPUs)" % (
            node, gh, gi, w["held"], w["gpu_seconds"], t.nodes[node].capacity))
        if not _close(gh, w["held"], GS_EPS):
            bad.append("%s held: %r GPU-s; truth %r" % (node, gh, w["held"]))
        if not _close(gi, w["gpu_seconds"], GS_EPS) or \
                not _close((idle.get(node) or {}).get("cost_usd", 0.0), w["cost_usd"], USD_EPS):
            bad.append("%s idle: %r GPU-s $%r; truth %r GPU-s $%r" % (
                node, gi, (idle.get(node) or {}).get("cost_usd"), w["gpu_seconds"],
                w["cost_usd"]))
        # Capacity = held + idle (no node is ever full here): 2, 1, 2 and 2 GPUs over the
        # window.
        cap = t.nodes[node].capacity * (w1 - w0)
        if not _close(gh + gi, cap, GS_EPS):
            bad.append("%s capacity: %r GPU-s (%.4f GPUs); truth %r (%g GPUs)" % (
                node, gh + gi, (gh + gi) / (w1 - w0), cap, t.nodes[node].capacity))
    # OpenCost's node_gpu_count: the physical GPUs of each node, once.
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % c.port, timeout=10) as r:
        text = r.read().decode()
    counts = {}
    for line in text.splitlines():
        if line.startswith("node_gpu_count{"):
            lab = line[line.index("{") + 1:line.index("}")]
            node = dict(kv.split("=", 1) for kv in lab.split(",")).get("node", "").strip('"')
            counts[node] = float(line.rsplit(" ", 1)[1])
    want = {n: x.capacity for n, x in t.nodes.items()}
    if counts != want:
        bad.append("node_gpu_count %s; truth %s" % (counts, want))
    return bad


def test_controller_prices_dra_pods(scenario, controller_bin):
    """/api/v1/pods = the truth per pod: start, end, GPU-hours, cost, current share."""
    s = scenario
    c = controller_up(s)
    bad = harness.settle(lambda: compare_pods(s, c))
    assert not bad, "\n".join(bad)


def test_controller_costs_and_idle(scenario, controller_bin):
    """/api/v1/costs = the truth per team and project, and per node held and idle."""
    s = scenario
    c = controller_up(s)
    bad = harness.settle(lambda: compare_costs(s, c))
    assert not bad, "\n".join(bad)
    assert c.alive()


def test_controller_killed_while_claims_change(scenario, controller_bin):
    """SIGKILL, and while the controller is down: a third pod joins the shared claim (with a
    1g.5gb partition of its own, two claims), the notebook is deleted and its generated claim
    with it, and a batch pod finishes (it stays, Succeeded; its generated claim is deleted).
    Restarted, the controller resumes from its checkpoint and learns all of it again: the
    shared claim's split is re-cut where the new holder came, a deleted claim's past stays with
    the pod that held it, and everything equals the truth again."""
    s = scenario
    c = controller_up(s)
    api = s.api
    # batch: a whole GPU through a template, running when the controller is killed and done
    # while it is down (the pod stays, Succeeded; its generated claim is deleted).
    api.call("POST", ns_path(ML, "pods"), dra.pod("batch", "pretrain", run=9,
                                                  template="whole-gpu"))
    wait("batch running", lambda: phase(api, ML, "batch") == "Running", timeout=30)
    # A checkpoint written afresh holds the pieces so far (interval 5 s; its two generations'
    # ConfigMaps alternate); then kill it outright.
    def checkpoint_rvs():
        cms = s.cluster.configmaps()
        return tuple(cms[n]["metadata"]["resourceVersion"] if n in cms else None
                     for n in ("gpu-cost-checkpoint", "gpu-cost-checkpoint-g1"))

    rv0 = checkpoint_rvs()
    wait("a checkpoint after the scenario", lambda: checkpoint_rvs() != rv0, timeout=15)
    c.kill()
    killed = time.time()
    n0 = len(s.claims.by_name("shared-3g", SERVE))
    api.call("POST", ns_path(SERVE, "resourceclaimtemplates", R),
             dra.claim_template("mig-1g", dra.request("mig", "mig.nvidia.com",
                                                      dra.profile_is("1g.5gb"))))
    p = dra.pod("infer-c", "chat", claim_name="shared-3g")
    p["spec"]["resourceClaims"].append({"name": "own", "resourceClaimTemplateName": "mig-1g"})
    p["spec"]["containers"][0]["resources"]["claims"].append({"name": "own"})
    api.call("POST", ns_path(SERVE, "pods"), p)
    api.call("DELETE", ns_path(ML, "pods/notebook"))
    wait("infer-c running", lambda: phase(api, SERVE, "infer-c") == "Running", timeout=30)
    wait("notebook gone", lambda: phase(api, ML, "notebook") == "Gone", timeout=30)
    wait("batch done", lambda: phase(api, ML, "batch") == "Succeeded", timeout=30)
    claims = {p["metadata"]["name"]: ((p.get("status") or {}).get("resourceClaimStatuses") or
                                      [{}])[0].get("resourceClaimName")
              for p in s.pods.last() if p["metadata"]["name"] in ("batch", "notebook")}
    for name, cl in sorted(claims.items()):
        assert cl, (name, claims)
        wait("the claim of %s deleted" % name, lambda: api.request(
            "GET", ns_path(ML, "resourceclaims/" + cl, R))[0] == 404, timeout=30)
    try:
        wait("shared-3g reserved for infer-b and infer-c",
             lambda: reserved_seen(s, ["infer-b", "infer-c"], n0), timeout=30)
    finally:
        hist = reserved_history(s)
        print("shared-3g reservedFor (list, versions in a row): %s%s" % (
            hist[:6], " ... %s" % hist[-4:] if len(hist) > 10 else hist[6:]))
    time.sleep(1)
    c.start()
    c.wait_ready()
    t = build_truth(s)
    h = {x.name: x for x in t.holders}
    assert h["notebook"].end is not None and len(h["infer-c"].claims) == 2
    assert h["batch"].end is not None and h["batch"].end > truth.utc(dra.rfc3339(killed))
    bad = harness.settle(lambda: compare_pods(s, c) + compare_costs(s, c))
    assert not bad, "\n".join(bad)
    assert c.alive()


def test_controller_swept_and_clean(scenario):
    """Through the whole scenario the controller swept its string pool at every snapshot and
    freed strings (pods, claims and devices gone), and its log has no sanitizer report."""
    c = controller_up(scenario)
    deadline = time.time() + 30  # the counter starts again with the restart above
    while True:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % c.port, timeout=10) as r:
            m = {line.split()[0]: float(line.split()[1])
                 for line in r.read().decode().splitlines() if line.startswith("gpu_cost_pool_")}
        if m.get("gpu_cost_pool_sweeps_total", 0) >= 3 or time.time() > deadline:
            break
        time.sleep(0.5)
    assert m.get("gpu_cost_pool_sweeps_total", 0) >= 3, m
    text = c.log_path.read_text(errors="replace")
    for bad in ("AddressSanitizer", "runtime error:"):
        assert bad not in text, harness.tail(c.log_path, 60)
