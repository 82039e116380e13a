"""`gpu-cost analyze` on a Dynamic Resource Allocation cluster (tests/fixtures/dra), against a truth
recomputed here from the raw JSON, and against figures worked out by hand.

The fixture's slices follow NVIDIA's DRA driver as it publishes them
(NVIDIA/k8s-dra-driver-gpu, now kubernetes-sigs/dra-driver-nvidia-gpu,
cmd/gpu-kubelet-plugin/deviceinfo.go, GetDevice() of GpuInfo and MigDeviceInfo, 2025-2026 main):
device names gpu-<minor> and gpu-<minor>-mig-<GI profile>-<start>-<size>, string attributes type,
uuid, parentUUID, profile, productName with spaces, capacities memory and memorySlice<i>.
The rules (docs/dra.md): a whole GPU is 1.0 GPU-equivalent of the model its productName names
(GFD form, spaces as dashes); a MIG partition max(compute/7, memory/8) of its parent; a claim
held by several pods is split equally among the pods holding it at each moment; adminAccess
costs nothing; an extended-resource claim replaces the pod's nvidia.com/gpu request; a DRA node's
capacity is its slices' physical GPUs, each once; only a pool's newest generation counts.
"""

import json
from collections import defaultdict

import pytest

from conftest import FIXTURES
import truth as base

DRA = FIXTURES / "dra"
W = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
CUT = "2026-11-17T09:00:00Z,2026-11-17T15:00:00Z"   # cuts the shared claim's pieces
LATER = "2026-11-18T00:00:00Z,2026-11-19T00:00:00Z"  # sees only infer-2's later piece
NVIDIA = "gpu.nvidia.com"

# NVIDIA MIG user guide, the A100 80GB / H100 80GB table: (compute slices of 7, memory of 8).
MIG_80GB = {"1g.10gb": (1, 1), "1g.10gb+me": (1, 1), "1g.20gb": (1, 2), "2g.20gb": (2, 2),
            "3g.40gb": (3, 4), "4g.40gb": (4, 4), "7g.80gb": (7, 8)}


def load(name):
    with open(DRA / name) as f:
        return json.load(f)


def attr(dev, name):
    attrs = dev.get("attributes", dev.get("basic", {}).get("attributes", {}))
    v = attrs.get(name) or attrs.get(NVIDIA + "/" + name) or {}
    return v.get("string")


# ---- the truth ----------------------------------------------------------------------------------

def dra_truth(window):
    w0, w1 = base.parse_window(window)
    items = load("dra.json")["items"]
    slices = [o for o in items if o["kind"] == "ResourceSlice" and o["spec"]["driver"] == NVIDIA]
    newest = defaultdict(int)
    for s in slices:
        newest[s["spec"]["pool"]["name"]] = max(newest[s["spec"]["pool"]["name"]],
                                                s["spec"]["pool"]["generation"])
    devices = {}  # (pool, device) -> (node, geq, physical GPU, model)
    for s in slices:
        pool = s["spec"]["pool"]
        if pool["generation"] < newest[pool["name"]]:
            continue
        for d in s["spec"]["devices"]:
            model = attr(d, "productName").replace(" ", "-")
            if attr(d, "type") == "gpu":
                devices[(pool["name"], d["name"])] = (s["spec"]["nodeName"], 1.0,
                                                      attr(d, "uuid"), model)
            elif attr(d, "type") == "mig":
                c, m = MIG_80GB[attr(d, "profile")]
                devices[(pool["name"], d["name"])] = (s["spec"]["nodeName"], max(c / 7, m / 8),
                                                      attr(d, "parentUUID"), model)
    claims = {}  # (ns, name) -> [device keys]
    for c in (o for o in items if o["kind"] == "ResourceClaim"):
        reqs = {r["name"]: r for r in c["spec"]["devices"]["requests"]}
        held = []
        for r in c.get("status", {}).get("allocation", {}).get("devices", {}).get("results", []):
            req = reqs.get(r["request"].split("/")[0], {})
            admin = (r.get("adminAccess") or req.get("adminAccess") or
                     req.get("exactly", {}).get("adminAccess"))
            if r["driver"] == NVIDIA and not admin:
                held.append((r["pool"], r["device"]))
        claims[(c["metadata"]["namespace"], c["metadata"]["name"])] = held

    prices = {p["model"]: p["usd_per_gpu_hour"] for p in load("prices.json")["prices"]}
    nodes = {n["metadata"]["name"]: n for n in load("nodes.json")["items"]}

    def node_model(name):
        label = nodes[name]["metadata"]["labels"].get("nvidia.com/gpu.product")
        if label:
            return label
        return next(m for (nd, _, _, m) in devices.values() if nd == name)

    # Every pod's interval and what it holds: device-plugin GPUs and claims.
    holders = []
    for p in load("pods.json")["items"]:
        node = p["spec"].get("nodeName")
        sched = [c for c in p["status"].get("conditions", [])
                 if c["type"] == "PodScheduled" and c["status"] == "True"]
        if not node or not sched:
            continue
        start = base.parse_time(sched[0]["lastTransitionTime"])
        end = w1
        if p["status"]["phase"] in ("Succeeded", "Failed"):
            end = max(base.parse_time(cs["state"]["terminated"]["finishedAt"])
                      for cs in p["status"]["containerStatuses"])
        ns = p["metadata"]["namespace"]
        names = []
        statuses = {s["name"]: s.get("resourceClaimName")
                    for s in p["status"].get("resourceClaimStatuses", [])}
        for rc in p["spec"].get("resourceClaims", []):
            names.append(rc.get("resourceClaimName") or statuses.get(rc["name"]))
        ext = p["status"].get("extendedResourceClaimStatus")
        mapped = set()
        if ext:
            names.append(ext["resourceClaimName"])
            mapped = {m["resourceName"] for m in ext["requestMappings"]}
        dp = 0.0
        for c in p["spec"]["containers"]:
            n = c.get("resources", {}).get("requests", {}).get("nvidia.com/gpu")
            if n and "nvidia.com/gpu" not in mapped:
                dp += float(n)
        labels = p["metadata"]["labels"]
        holders.append(dict(name=p["metadata"]["name"], ns=ns, node=node, start=start, end=end,
                            claims=[(ns, n) for n in names if n], dp=dp,
                            team=labels["team"], project=labels["project"]))

    def holding(claim, t):
        return sum(1 for h in holders if claim in h["claims"] and h["start"] <= t < h["end"])

    rows = {}
    for h in holders:
        # Every moment any holder of one of its claims starts or stops cuts its interval.
        cuts = {h["start"], h["end"], w0, w1}
        for o in holders:
            if set(o["claims"]) & set(h["claims"]):
                cuts |= {o["start"], o["end"]}
        cuts = sorted(t for t in cuts if max(h["start"], w0) <= t <= min(h["end"], w1))
        price = prices[node_model(h["node"])]
        secs = 0.0
        for a, b in zip(cuts, cuts[1:]):
            geq = h["dp"]
            for c in h["claims"]:
                geq += sum(devices[d][1] for d in claims.get(c, [])) / holding(c, a)
            secs += geq * (b - a)
        if secs > 0:
            rows[h["name"]] = dict(gpu_seconds=secs, cost_usd=secs / 3600 * price, team=h["team"],
                                   project=h["project"], node=h["node"])

    idle = {}
    for name in nodes:
        gpus = {g for (nd, _, g, _) in devices.values() if nd == name}
        cap = len(gpus) + float(nodes[name]["status"]["allocatable"].get("nvidia.com/gpu", 0))
        if cap == 0:
            continue
        held = sum(r["gpu_seconds"] for r in rows.values() if r["node"] == name)
        idle[name] = cap * (w1 - w0) - held
    return rows, idle


def analyze(cli, window, by, claims=DRA / "dra.json", slices=DRA / "dra.json", extra=()):
    args = ["analyze", "--pods", DRA / "pods.json", "--nodes", DRA / "nodes.json",
            "--prices", DRA / "prices.json"]
    if claims:
        args += ["--claims", claims]
    if slices:
        args += ["--slices", slices]
    return cli.ok(*args, *extra, "--window", window, "--by", by, "--format", "json").json()


def by_key(doc, dim):
    return {g["keys"][dim]: g for g in doc["groups"]}


# ---- the truth against the hand -----------------------------------------------------------------

def test_truth_matches_hand_figures():
    rows, idle = dra_truth(W)
    h = {k: r["gpu_seconds"] / 3600 for k, r in rows.items()}
    assert h["train-a"] == pytest.approx(10.0)             # whole H100, 10:00-20:00
    assert h["infer-1"] == pytest.approx(6 * 0.5 + 6 * 0.25)  # 3g.40gb, shared from 06:00
    assert h["infer-2"] == pytest.approx(6 * 0.25 + 132 * 0.5)
    assert h["notebook"] == pytest.approx(120 / 7)         # 1g.10gb: max(1/7, 1/8)
    assert h["ext-pod"] == pytest.approx(8.0)              # through its claim, once
    assert h["a100-job"] == pytest.approx(4.0)
    assert h["dp-pod"] == pytest.approx(10.0)
    assert "monitor" not in rows                           # adminAccess
    assert idle["dra-a100-b"] / 3600 == pytest.approx(2 * 168 - 12)  # generation 2 not counted
    assert idle["dra-h100-a"] / 3600 == pytest.approx(2 * 168 - 10 - 4.5 - 67.5 - 120 / 7)


# ---- the CLI against the truth ------------------------------------------------------------------

@pytest.mark.parametrize("window", [W, CUT, LATER])
def test_pods_equal_truth(cli, window):
    rows, _ = dra_truth(window)
    got = by_key(analyze(cli, window, "pod"), "pod")
    assert {k for k, g in got.items() if g["gpu_seconds"] > 1e-6} == set(rows)
    for name, r in rows.items():
        assert got[name]["gpu_seconds"] == pytest.approx(r["gpu_seconds"], abs=1e-6), name
        assert got[name]["cost_usd"] == pytest.approx(r["cost_usd"], abs=0.005), name
        # A pod whose share changed while it ran is still one pod.
        assert got[name]["pods"] == 1, name


def test_teams_total_and_idle_equal_truth(cli):
    rows, idle = dra_truth(W)
    doc = analyze(cli, W, "team,project")
    want = defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows.values():
        k = want[(r["team"], r["project"])]
        k[0] += r["gpu_seconds"]
        k[1] += r["cost_usd"]
        k[2] += 1
    got = {(g["keys"]["team"], g["keys"]["project"]): g for g in doc["groups"]}
    assert set(got) == set(want)
    for k, (secs, usd, pods) in want.items():
        assert got[k]["gpu_seconds"] == pytest.approx(secs, abs=1e-6), k
        assert got[k]["cost_usd"] == pytest.approx(usd, abs=0.005), k
        assert got[k]["pods"] == pods, k
    assert doc["total"]["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows.values()),
                                                     abs=0.005)
    assert doc["total"]["pods"] == len(rows)
    nodes = {n["node"]: n for n in doc["idle"]["nodes"]}
    assert set(nodes) == set(idle)
    for name, secs in idle.items():
        assert nodes[name]["gpu_hours"] * 3600 == pytest.approx(secs, abs=1e-3), name


def test_by_model_prices_dra_nodes_from_their_devices(cli):
    got = by_key(analyze(cli, W, "model"), "model")
    # dra-a100-b has no GFD label: its model comes from its slice's productName.
    assert got["NVIDIA-A100-SXM4-80GB"]["gpu_hours"] == pytest.approx(12.0)
    assert got["NVIDIA-A100-SXM4-80GB"]["cost_usd"] == pytest.approx(30.0)
    assert "unknown" not in got


def test_separate_files_equal_combined(cli, tmp_path):
    items = load("dra.json")["items"]
    claims = tmp_path / "claims.json"
    slices = tmp_path / "slices.json"
    claims.write_text(json.dumps({"kind": "ResourceClaimList", "apiVersion": "resource.k8s.io/v1",
                                  "items": [o for o in items if o["kind"] == "ResourceClaim"]}))
    slices.write_text(json.dumps({"kind": "ResourceSliceList", "apiVersion": "resource.k8s.io/v1",
                                  "items": [o for o in items if o["kind"] == "ResourceSlice"]}))
    assert analyze(cli, W, "pod", claims, slices) == analyze(cli, W, "pod")


def test_without_dra_dumps_only_device_plugin_pods_and_a_warning(cli):
    args = ["analyze", "--pods", DRA / "pods.json", "--nodes", DRA / "nodes.json",
            "--prices", DRA / "prices.json", "--window", W, "--by", "pod", "--format", "json"]
    r = cli.ok(*args)
    assert [g["keys"]["pod"] for g in r.json()["groups"]] == ["dp-pod"]
    assert "7 pods name ResourceClaims" in r.err


def test_bad_dra_dump_names_the_file(cli, tmp_path):
    bad = tmp_path / "claims.json"
    bad.write_text('{"kind": "ResourceClaimList", "items": [')
    r = cli("analyze", "--pods", DRA / "pods.json", "--nodes", DRA / "nodes.json",
            "--claims", bad, "--window", W)
    assert r.code == 2, r
    assert str(bad) in r.err


def test_malformed_claim_is_skipped_with_a_warning(cli, tmp_path):
    doc = load("dra.json")
    shared = next(o for o in doc["items"] if o["metadata"]["name"] == "shared-mig")
    shared["status"]["allocation"]["devices"]["results"][0]["device"] = 7
    f = tmp_path / "dra.json"
    f.write_text(json.dumps(doc))
    r = cli.ok("analyze", "--pods", DRA / "pods.json", "--nodes", DRA / "nodes.json",
               "--prices", DRA / "prices.json", "--claims", f, "--slices", f, "--window", W,
               "--by", "pod", "--format", "json")
    assert "web/shared-mig" in r.err and "device" in r.err
    assert {g["keys"]["pod"] for g in r.json()["groups"]} == {
        "train-a", "notebook", "ext-pod", "a100-job", "dp-pod"}


def test_configured_driver_is_off_by_default_and_priced_when_configured(cli, tmp_path):
    # Another vendor's driver: a device with attribute model=X1 counts 0.5 GPU of an A100 80GB.
    doc = load("dra.json")
    doc["items"] += [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": "dra-a100-b-example"},
         "spec": {"driver": "gpu.example.com", "nodeName": "dra-a100-b",
                  "pool": {"name": "dra-a100-b", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "x-0", "attributes": {"model": {"string": "X1"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "x-claim", "namespace": "ml", "uid": "rc-x"},
         "spec": {"devices": {"requests": [{"name": "x", "exactly": {
             "deviceClassName": "x.example.com"}}]}},
         "status": {"allocation": {"devices": {"results": [
             {"request": "x", "driver": "gpu.example.com", "pool": "dra-a100-b",
              "device": "x-0"}]}}}}]
    dra = tmp_path / "dra.json"
    dra.write_text(json.dumps(doc))
    pods = load("pods.json")
    x = json.loads(json.dumps(next(p for p in pods["items"] if p["metadata"]["name"] == "a100-job")))
    x["metadata"].update(name="x-job", uid="pod-x-job")
    x["spec"]["resourceClaims"] = [{"name": "x", "resourceClaimName": "x-claim"}]
    del x["status"]["resourceClaimStatuses"]
    pods["items"].append(x)
    pf = tmp_path / "pods.json"
    pf.write_text(json.dumps(pods))
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"dra": {"drivers": [
        {"driver": "gpu.example.com", "attribute": "model", "value": "X1",
         "model": "NVIDIA-A100-SXM4-80GB", "gpus_per_device": 0.5}]}}))
    base_args = ["analyze", "--pods", pf, "--nodes", DRA / "nodes.json", "--prices",
                 DRA / "prices.json", "--claims", dra, "--slices", dra, "--window", W,
                 "--by", "pod", "--format", "json"]
    off = by_key(cli.ok(*base_args).json(), "pod")
    assert "x-job" not in off
    on = cli.ok(*base_args, "--config", cfg).json()
    got = by_key(on, "pod")
    # 4 h x 0.5 at the A100 price; the A100 node's capacity gains the configured device's 0.5.
    assert got["x-job"]["gpu_hours"] == pytest.approx(2.0)
    assert got["x-job"]["cost_usd"] == pytest.approx(5.0)
    idle = {n["node"]: n for n in on["idle"]["nodes"]}
    assert idle["dra-a100-b"]["gpu_hours"] == pytest.approx(2.5 * 168 - 12 - 2)


def test_advisor_sees_a_pod_with_pieces_once_and_dra_nodes_in_pools(cli, tmp_path):
    # infer-2 idle on its shared 3g.40gb every 10 minutes over two days.
    t0 = base.parse_time("2026-11-20T00:00:00Z")
    lbl = ('gpu="1",UUID="GPU-8c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f",device="nvidia1",'
           'modelName="NVIDIA H100 80GB HBM3",Hostname="dra-h100-a",GPU_I_PROFILE="3g.40gb",'
           'GPU_I_ID="2",container="main",namespace="web",pod="infer-2"')
    lines = []
    for k in range(2 * 24 * 6):
        ms = (t0 + k * 600) * 1000
        lines.append("DCGM_FI_PROF_GR_ENGINE_ACTIVE{%s} 0.0 %d" % (lbl, ms))
        lines.append("DCGM_FI_DEV_FB_USED{%s} 100 %d" % (lbl, ms))
    prom = tmp_path / "metrics.prom"
    prom.write_text("\n".join(lines) + "\n")
    doc = analyze(cli, W, "team", extra=("--metrics", prom))
    sav = doc["savings"]
    # 7 pods held GPUs: infer-2's two pieces are one pod to the advisor too.
    assert sav["usage"]["pods"] == 7
    pools = [f for f in sav["findings"] if f["kind"] == "idle_capacity"]
    h100 = [f for f in pools if f["subject"]["model"] == "NVIDIA-H100-80GB-HBM3"]
    assert h100 and h100[0]["evidence"]["nodes"] == 2  # the DRA node and the device-plugin node
