"""Dynamic Resource Allocation objects for the end-to-end tests, and the truth computed from them.

The objects are what NVIDIA's DRA driver for GPUs (kubernetes-sigs/dra-driver-nvidia-gpu,
formerly NVIDIA/k8s-dra-driver-gpu) installs and publishes, in the shapes of tests/fixtures/dra:

- its two DeviceClasses, as its chart renders them on resource.k8s.io/v1 (the whole-GPU class
  maps the extended resource nvidia.com/gpu);
- one ResourceSlice per node and pool (pool = node name, as the kubelet plugin names it), with
  devices named gpu-<minor> (type "gpu") and gpu-<minor>-mig-<GI profile id>-<start>-<size>
  (type "mig"), typed unqualified attributes (type, uuid, parentUUID, profile, productName with
  spaces, ...), capacities memory and, for MIG, the engines and one memorySlice<i> per memory
  slice of the placement.

The truth (DraTruth) is computed from objects the test watched on the API server (pods, claims)
and the slices it published, never from anything the controller produced. Its rules, from
docs/dra.md and docs/model.md:

- a pod holds from its PodScheduled=True time to its last container's finishedAt (a pod deleted
  while running: the finishedAt the kubelet wrote when it stopped it), or up to now;
- its GPU-equivalents at a moment t: the device-plugin request (minus the extended resources
  its extended-resource claim serves) at the node's share per unit, plus, for each claim it
  names, the claim's devices (whole GPU 1.0, MIG partition max(compute/7, memory/8) of its
  parent; adminAccess results nothing) divided by the number of pods naming that claim whose
  interval holds t;
- a DRA node's capacity: the physical GPUs its slices publish, each once (a MIG parent counts
  one, however many partitions); a device-plugin node's: its allocatable nvidia.com/gpu;
- prices: the catalog of config.json by the node's model (for a DRA node the devices'
  productName, spaces as dashes), capacity type and region;
- idle per node over a window: capacity minus what pods held there, never below zero.
"""

import copy
import http.client
import json
import ssl
import threading
import time
import urllib.parse

import e2e_truth as truth

cli = truth.cli

DRIVER = "gpu.nvidia.com"
# HAMi-DRA's kubelet plugin (Project-HAMi/k8s-dra-driver v0.1.0, cmd/hami-kubelet-plugin).
HAMI_DRIVER = "hami-core-gpu.project-hami.io"
DRIVERS = (DRIVER, HAMI_DRIVER)
RESOURCE_API = "/apis/resource.k8s.io/v1"
EXT_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"

# The driver's chart, deviceclass-gpu.yaml and deviceclass-mig.yaml as rendered for
# resource.k8s.io/v1 (the extendedResourceName line is rendered on v1 only).
DEVICE_CLASSES = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
     "metadata": {"name": "gpu.nvidia.com"},
     "spec": {"selectors": [{"cel": {"expression":
                                     "device.driver == 'gpu.nvidia.com' && "
                                     "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
              "extendedResourceName": "nvidia.com/gpu"}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
     "metadata": {"name": "mig.nvidia.com"},
     "spec": {"selectors": [{"cel": {"expression":
                                     "device.driver == 'gpu.nvidia.com' && "
                                     "device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}},
]

# NVIDIA's MIG user guide, A100 40GB (compute slices of 7, memory slices of 8), with what
# `nvidia-smi mig -lgip` lists for each GPU instance profile on an A100-SXM4-40GB: profile id,
# multiprocessors, memory (MiB), copy engines, decoders, encoders, JPEG and OFA engines.
A100_40GB_MIG = {
    "1g.5gb": {"slices": (1, 1), "id": 19, "sm": 14, "mib": 4864, "ce": 1, "dec": 0},
    "2g.10gb": {"slices": (2, 2), "id": 14, "sm": 28, "mib": 9856, "ce": 2, "dec": 1},
    "3g.20gb": {"slices": (3, 4), "id": 9, "sm": 42, "mib": 19968, "ce": 3, "dec": 2},
    "4g.20gb": {"slices": (4, 4), "id": 5, "sm": 56, "mib": 19968, "ce": 4, "dec": 2},
    "7g.40gb": {"slices": (7, 8), "id": 0, "sm": 98, "mib": 40192, "ce": 7, "dec": 5},
}


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


# ---- nodes ---------------------------------------------------------------------------------------

def dra_node_labels(name, instance_type, region, zone, capacity_type):
    """A GPU node served by the DRA driver: cloud and Karpenter labels, no GPU Feature Discovery
    product labels (the model must come from the slices' productName)."""
    return {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
            "beta.kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": instance_type,
            "beta.kubernetes.io/instance-type": instance_type,
            "topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone,
            "karpenter.sh/capacity-type": capacity_type,
            "karpenter.sh/nodepool": "gpu-dra"}


def create_node(api, name, labels, extra_alloc=None):
    """A Node as the tests make them (no kubelet behind it): created, then its status written
    through the status subresource with cpu/memory/pods (and any extra allocatable)."""
    api.call("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                       "metadata": {"name": name, "labels": labels}})
    alloc = {"cpu": "96", "memory": "1Ti", "pods": "110"}
    alloc.update(extra_alloc or {})
    now = rfc3339(time.time())
    api.merge_patch("/api/v1/nodes/%s/status" % name, {"status": {
        "capacity": alloc, "allocatable": alloc,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "simulated kubelet", "lastHeartbeatTime": now,
                        "lastTransitionTime": now}]}})
    return api.get("/api/v1/nodes/" + name)


# ---- slices --------------------------------------------------------------------------------------

def _s(v):
    return {"string": v}


def _v(v):
    return {"version": v}


def _common_attrs(product, arch, cc, bus):
    return {"productName": _s(product), "brand": _s("Nvidia"), "architecture": _s(arch),
            "cudaComputeCapability": _v(cc), "driverVersion": _v("580.95.5"),
            "cudaDriverVersion": _v("13.0.0"), "pcieBusID": _s(bus),
            "addressingMode": _s("None")}


def whole_gpu(minor, uuid, product, arch, cc, bus, memory):
    attrs = {"type": _s("gpu"), "uuid": _s(uuid)}
    attrs.update(_common_attrs(product, arch, cc, bus))
    attrs["resource.kubernetes.io/pcieRoot"] = _s("pci0000:%02x" % (minor * 0x10))
    return {"name": "gpu-%d" % minor, "attributes": attrs,
            "capacity": {"memory": {"value": memory}}}


def mig_device(minor, profile, start, uuid, parent_uuid, product, bus):
    p = A100_40GB_MIG[profile]
    size = p["slices"][1]
    attrs = {"type": _s("mig"), "uuid": _s(uuid), "parentUUID": _s(parent_uuid),
             "profile": _s(profile)}
    attrs.update(_common_attrs(product, "Ampere", "8.0.0", bus))
    cap = {"multiprocessors": {"value": str(p["sm"])}, "copyEngines": {"value": str(p["ce"])},
           "decoders": {"value": str(p["dec"])}, "encoders": {"value": "0"},
           "jpegEngines": {"value": "1" if size == 8 else "0"},
           "ofaEngines": {"value": "1" if size == 8 else "0"},
           "memory": {"value": "%dMi" % p["mib"]}}
    for i in range(start, start + size):
        cap["memorySlice%d" % i] = {"value": "1"}
    return {"name": "gpu-%d-mig-%d-%d-%d" % (minor, p["id"], start, size),
            "attributes": attrs, "capacity": cap}


# Shared GPUs (consumable capacity, KEP-5075), as NVIDIA's driver v0.5.0 publishes them:
# kubernetes-sigs/dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin/consumable_shares.go
# (applyConsumableShares, commit f49e778e): the whole-GPU device gets
# allowMultipleAllocations: true and its memory (rounded down to a whole MiB) a requestPolicy,
# by the kubelet plugin's consumable-shares option:
#   "memory":    default the whole memory, validRange 1Mi..memory, step 1Mi;
#   "unlimited": default 0, validRange 0..memory, step 1Mi;
#   "N":         memory as unlimited, plus a capacity "shares" of N: default 1, range 1..N, step 1.
def shared_gpu(minor, uuid, mode, memory="81559Mi"):
    dev = whole_gpu(minor, uuid, "NVIDIA H100 80GB HBM3", "Hopper", "9.0.0",
                    "0000:%02x:00.0" % (0x18 + minor * 0x12), memory)
    dev["allowMultipleAllocations"] = True
    if mode == "memory":
        pol = {"default": memory, "validRange": {"min": "1Mi", "max": memory, "step": "1Mi"}}
    else:
        pol = {"default": "0", "validRange": {"min": "0", "max": memory, "step": "1Mi"}}
    dev["capacity"]["memory"]["requestPolicy"] = pol
    if mode not in ("memory", "unlimited"):
        n = str(int(mode))
        dev["capacity"]["shares"] = {"value": n, "requestPolicy": {
            "default": "1", "validRange": {"min": "1", "max": n, "step": "1"}}}
    return dev


# Dynamic MIG (partitionable devices, KEP-4815), as the driver publishes it
# (cmd/gpu-kubelet-plugin/partitions.go, commit 095b7a19): one counter set per full GPU,
# "gpu-<minor>-counter-set", with a counter per capacity of the largest profile (names
# camelCase to DNS: copy-engines, jpeg-engines, ...) and one "memory-slice-<i>" of 1 per memory
# slice; the full GPU consumes all of it, each MIG profile that could be carved at each
# placement its own capacities and its memory slices, named gpu-<minor>-mig-<profile without
# dots>-<profile id>-<placement start> (mig.go), without a uuid (the device exists only once
# prepared). The counter sets go in a slice of their own (a slice holds devices or counters).
# H100 80GB HBM3 (nvidia-smi mig -lgip): profile id,
# SMs, memory MiB, copy engines, decoders, JPEG, OFA; placements of 1g.10gb 0..6 and 3g.40gb
# 0 and 4.
H100_MIG = {
    "1g.10gb": {"id": 19, "sm": 16, "mib": 9856, "ce": 1, "dec": 1, "jpeg": 1, "ofa": 0,
                "size": 1, "starts": range(7)},
    "3g.40gb": {"id": 9, "sm": 60, "mib": 40192, "ce": 3, "dec": 3, "jpeg": 3, "ofa": 0,
                "size": 4, "starts": (0, 4)},
}
H100_FULL = {"sm": 132, "mib": 81559, "ce": 8, "dec": 7, "jpeg": 7, "ofa": 1, "slices": 8}


def _mig_counters(sm, mib, ce, dec, jpeg, ofa, start, size):
    c = {"multiprocessors": {"value": str(sm)}, "copy-engines": {"value": str(ce)},
         "decoders": {"value": str(dec)}, "encoders": {"value": "0"},
         "jpeg-engines": {"value": str(jpeg)}, "ofa-engines": {"value": str(ofa)},
         "memory": {"value": "%dMi" % mib}}
    for i in range(start, start + size):
        c["memory-slice-%d" % i] = {"value": "1"}
    return c


def partitionable_h100(minor, uuid):
    """(counter sets, devices) of one H100 80GB with dynamic MIG."""
    f = H100_FULL
    cset = "gpu-%d-counter-set" % minor
    full = whole_gpu(minor, uuid, "NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "0000:18:00.0",
                     "%dMi" % f["mib"])
    full["consumesCounters"] = [{"counterSet": cset, "counters": _mig_counters(
        f["sm"], f["mib"], f["ce"], f["dec"], f["jpeg"], f["ofa"], 0, f["slices"])}]
    sets = [{"name": cset, "counters": _mig_counters(
        f["sm"], f["mib"], f["ce"], f["dec"], f["jpeg"], f["ofa"], 0, f["slices"])}]
    devices = [full]
    for prof, p in H100_MIG.items():
        for start in p["starts"]:
            attrs = {"type": _s("mig"), "parentUUID": _s(uuid), "profile": _s(prof)}
            attrs.update(_common_attrs("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0",
                                       "0000:18:00.0"))
            devices.append({
                "name": "gpu-%d-mig-%s-%d-%d" % (minor, prof.replace(".", ""), p["id"], start),
                "attributes": attrs,
                "capacity": {"multiprocessors": {"value": str(p["sm"])},
                             "copyEngines": {"value": str(p["ce"])},
                             "decoders": {"value": str(p["dec"])}, "encoders": {"value": "0"},
                             "jpegEngines": {"value": str(p["jpeg"])},
                             "ofaEngines": {"value": str(p["ofa"])},
                             "memory": {"value": "%dMi" % p["mib"]}},
                "consumesCounters": [{"counterSet": cset, "counters": _mig_counters(
                    p["sm"], p["mib"], p["ce"], p["dec"], p["jpeg"], p["ofa"], start,
                    p["size"])}]})
    return sets, devices


# HAMi-DRA (Project-HAMi/k8s-dra-driver v0.1.0, commit ebeaad97,
# cmd/hami-kubelet-plugin/hami_core.go): one device per GPU, "hami-gpu-<minor>", shared, type
# "hami-gpu", uuid, minor, productName...; capacities cores (100, default 100, 0..100 step 1) and
# memory in bytes (default all, 1Mi..all step 1Mi). Its webhook (Project-HAMi/HAMi-DRA
# pkg/webhook/dra/mutating.go) turns nvidia.com/gpucores and nvidia.com/gpumem (MiB) into
# capacity.requests cores and memory (bytes) on its class.
HAMI_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
              "metadata": {"name": HAMI_DRIVER},
              "spec": {"selectors": [{"cel": {"expression":
                                              'device.driver == "%s" && device.attributes["%s"]'
                                              '.type == "hami-gpu"' % (HAMI_DRIVER,
                                                                       HAMI_DRIVER)}}]}}


def hami_gpu(minor, uuid, memory_bytes=85520809984):
    m = str(memory_bytes)
    attrs = {"type": _s("hami-gpu"), "uuid": _s(uuid), "minor": {"int": minor},
             "productName": _s("NVIDIA H100 80GB HBM3"), "brand": _s("Nvidia"),
             "architecture": _s("Hopper"), "cudaComputeCapability": _v("9.0.0"),
             "driverVersion": _v("580.95.5"), "cudaDriverVersion": _v("13.0.0"),
             "pcieBusID": _s("0000:18:00.0")}
    return {"name": "hami-gpu-%d" % minor, "allowMultipleAllocations": True,
            "attributes": attrs,
            "capacity": {"cores": {"value": "100", "requestPolicy": {
                "default": "100", "validRange": {"min": "0", "max": "100", "step": "1"}}},
                "memory": {"value": m, "requestPolicy": {
                    "default": m, "validRange": {"min": "1Mi", "max": m, "step": "1Mi"}}}}}


def counter_slice(node, sets, generation=1, count=2):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": "%s-%s-counters-" % (node, DRIVER)},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": generation,
                              "resourceSliceCount": count},
                     "sharedCounters": sets}}


def resource_slice(node, devices, generation=1, count=1, driver=DRIVER):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": "%s-%s-" % (node, driver)},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": generation,
                              "resourceSliceCount": count},
                     "devices": devices}}


def h100_devices(node_index):
    """Two whole H100 80GB HBM3 (minors 0 and 1), as the kubelet plugin publishes them."""
    return [whole_gpu(m, "GPU-4a7bc0d2-1e44-5c7f-9d1a-%04x%08x" % (node_index, m),
                      "NVIDIA H100 80GB HBM3", "Hopper", "9.0.0",
                      "0000:%02x:00.0" % (0x18 + m * 0x12), "81559Mi") for m in (0, 1)]


# The A100 40GB's MIG layout: 3g.20gb at placement 4 (memory slices 4-7), 2g.10gb at 0 (0-1),
# 1g.5gb at 2 and at 3: 7 compute slices of 7, 8 memory slices of 8.
A100_LAYOUT = (("3g.20gb", 4), ("2g.10gb", 0), ("1g.5gb", 2), ("1g.5gb", 3))
A100_PARENT_UUID = "GPU-29384756-aabb-ccdd-eeff-0011223344aa"


def a100_mig_devices():
    return [mig_device(0, prof, start, "MIG-5a6b7c8d-0000-5000-8000-%012d" % i, A100_PARENT_UUID,
                       "NVIDIA A100-SXM4-40GB", "0000:07:00.0")
            for i, (prof, start) in enumerate(A100_LAYOUT)]


# ---- claims, templates, pods ---------------------------------------------------------------------

def request(name, device_class, cel=None, count=None, admin=False, capacity=None):
    ex = {"deviceClassName": device_class}
    if capacity:
        ex["capacity"] = {"requests": dict(capacity)}
    if cel:
        ex["selectors"] = [{"cel": {"expression": cel}}]
    if count is not None:
        ex["allocationMode"] = "ExactCount"
        ex["count"] = count
    if admin:
        ex["adminAccess"] = True
    return {"name": name, "exactly": ex}


def profile_is(profile):
    return "device.attributes['gpu.nvidia.com'].profile == '%s'" % profile


def claim_template(name, req):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name}, "spec": {"spec": {"devices": {"requests": [req]}}}}


def claim(name, req):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name}, "spec": {"devices": {"requests": [req]}}}


def pod(name, project, run=None, template=None, claim_name=None, gpus=None, node=None,
        tolerate=None, run_key="kubelet.e2e.gpu-cost/run-seconds"):
    """A pod holding its GPU through a claim template, a named claim, or a device-plugin
    request (nvidia.com/gpu: served by the device plugin, or by DRA through the class's
    extended-resource mapping on a node that advertises none)."""
    c = {"name": "main", "image": "nvcr.io/nvidia/pytorch:24.05-py3"}
    spec = {"restartPolicy": "Never", "terminationGracePeriodSeconds": 5, "containers": [c]}
    if template or claim_name:
        ref = {"name": "gpu"}
        if template:
            ref["resourceClaimTemplateName"] = template
        else:
            ref["resourceClaimName"] = claim_name
        spec["resourceClaims"] = [ref]
        c["resources"] = {"claims": [{"name": "gpu"}]}
    if gpus:
        c["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    if tolerate:
        spec["tolerations"] = [tolerate]
    ann = {run_key: str(run)} if run is not None else {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"project": project, "app": name},
                         "annotations": ann},
            "spec": spec}


# ---- watching ------------------------------------------------------------------------------------

class Recorder:
    """Watches a collection (e.g. /api/v1/pods, /apis/resource.k8s.io/v1/resourceclaims) from
    a LIST's resourceVersion and keeps every version of every object seen, by uid, in order,
    and which were deleted. Nothing is held back: the watch resumes from the last
    resourceVersion after a quiet stream ends."""

    def __init__(self, cluster, path, keep=None):
        """keep: what to store of each object (e.g. only its metadata); the whole by default."""
        env = cluster.env
        self.keep = keep or (lambda o: o)
        u = urllib.parse.urlparse(env["E2E_SERVER"])
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=env["E2E_CA"])
        self.token = env["E2E_ADMIN_TOKEN"]
        self.api, self.path = cluster.api, path
        self.versions = {}
        self.deleted = set()
        self.errors = []
        self.lock = threading.Lock()
        self.stop_ev = threading.Event()
        self.thread = None

    def start(self):
        doc = self.api.get(self.path)
        with self.lock:
            for obj in doc.get("items", []):
                self.versions.setdefault(obj["metadata"]["uid"], []).append(self.keep(obj))
        rv = doc["metadata"]["resourceVersion"]
        self.thread = threading.Thread(target=self._run, args=(rv,), daemon=True)
        self.thread.start()
        return self

    def _run(self, rv):
        while not self.stop_ev.is_set():
            conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=5)
            try:
                conn.request("GET", "%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true"
                             "&timeoutSeconds=30" % (self.path, rv),
                             headers={"Authorization": "Bearer " + self.token})
                resp = conn.getresponse()
                if resp.status != 200:
                    raise AssertionError("watch %s: HTTP %d" % (self.path, resp.status))
                while not self.stop_ev.is_set():
                    line = resp.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    obj = ev["object"]
                    if ev["type"] == "ERROR":
                        self.errors.append(obj)
                        raise AssertionError("watch %s error: %s" % (self.path, obj))
                    rv = obj["metadata"]["resourceVersion"]
                    if ev["type"] == "BOOKMARK":
                        continue
                    with self.lock:
                        self.versions.setdefault(obj["metadata"]["uid"], []).append(
                            self.keep(obj))
                        if ev["type"] == "DELETED":
                            self.deleted.add(obj["metadata"]["uid"])
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.2)  # a read timeout on a quiet stream: watch again from rv
            finally:
                conn.close()

    def stop(self):
        self.stop_ev.set()
        if self.thread:
            self.thread.join(timeout=10)

    def all_versions(self):
        with self.lock:
            return copy.deepcopy(self.versions)

    def last(self):
        with self.lock:
            return [copy.deepcopy(v[-1]) for v in self.versions.values()]

    def by_name(self, name, namespace=None):
        """Every version of the objects of that name (and namespace), oldest first."""
        out = []
        with self.lock:
            for vs in self.versions.values():
                md = vs[-1]["metadata"]
                if md["name"] == name and (namespace is None or md.get("namespace") == namespace):
                    out += copy.deepcopy(vs)
        return out


# ---- the truth -----------------------------------------------------------------------------------

def shared_caps(dev):
    """[(name, value)] of a shared device's capacities its allocations' shares are taken over:
    those with a requestPolicy first, then the rest, each by name, at most four, above zero
    (docs/dra.md)."""
    if not dev.get("allowMultipleAllocations"):
        return []
    caps = dev.get("capacity") or {}
    order = sorted(caps, key=lambda n: ("requestPolicy" not in caps[n], n))
    out = []
    for n in order:
        v = cli.parse_quantity(caps[n]["value"])
        if v > 0 and len(out) < 4:
            out.append((n.split("/")[-1], v))
    return out


def _attr(dev, name, driver=DRIVER):
    attrs = dev.get("attributes") or (dev.get("basic") or {}).get("attributes") or {}
    v = attrs.get(name) or attrs.get(driver + "/" + name) or {}
    return v.get("string")


def pod_interval(p):
    """(bound, end): PodScheduled=True time; the latest container finishedAt once every
    container has terminated, else None (it still holds its GPUs)."""
    st = p.get("status") or {}
    bound = None
    for c in st.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            bound = truth.utc(c["lastTransitionTime"])
    cs = st.get("containerStatuses") or []
    ends = [((c.get("state") or {}).get("terminated") or {}).get("finishedAt") for c in cs]
    end = max(truth.utc(e) for e in ends) if cs and all(ends) else None
    return bound, end


def pod_claim_names(p):
    """The claims a pod names: resourceClaimName, the generated claim of a template (from
    status.resourceClaimStatuses), and the extended-resource claim; plus the resources the
    latter serves."""
    spec, st = p.get("spec") or {}, p.get("status") or {}
    gen = {s["name"]: s.get("resourceClaimName") for s in st.get("resourceClaimStatuses") or []}
    names = []
    for rc in spec.get("resourceClaims") or []:
        n = rc.get("resourceClaimName") or gen.get(rc["name"])
        if n:
            names.append(n)
    mapped = set()
    ext = st.get("extendedResourceClaimStatus")
    if ext and ext.get("resourceClaimName"):
        names.append(ext["resourceClaimName"])
        mapped = {m["resourceName"] for m in ext.get("requestMappings") or []}
    return names, mapped


class DraNode:
    """Capacity, model and price of a node: DRA (from its slices) or device plugin."""

    def __init__(self, obj, devices, cfg):
        name = obj["metadata"]["name"]
        phys = {d["physical"] for d in devices.values() if d["node"] == name}
        models = {d["model"] for d in devices.values() if d["node"] == name}
        self.name = name
        if phys:
            assert len(models) == 1, models
            self.model = models.pop()
            # The node's classification (capacity type, region, price) as the catalog rules
            # say, with the model its devices name.
            o = copy.deepcopy(obj)
            o["metadata"].setdefault("annotations", {})["gpu-cost.io/gpu-model"] = self.model
            n = cli.Node(o, cfg)
            self.dp_capacity = n.alloc_geq
            self.capacity = len(phys) + n.alloc_geq
            if n.alloc_geq > 0:
                # Both the device plugin and the driver on one node: the same GPUs advertised
                # twice count once, capped at GFD's gpu.count, else the larger of the two.
                count = (obj["metadata"].get("labels") or {}).get("nvidia.com/gpu.count")
                self.capacity = min(self.capacity, float(count)) if count else \
                    max(len(phys), n.alloc_geq)
        else:
            n = cli.Node(obj, cfg)
            self.model = n.model
            self.capacity = self.dp_capacity = n.alloc_geq
        self.node = n
        self.created = truth.utc(obj["metadata"]["creationTimestamp"])
        self.price, self.capacity_type = n.price, n.capacity_type


class Holder:
    __slots__ = ("uid", "ns", "name", "node", "start", "end", "claims", "dp", "team", "project",
                 "price", "model", "capacity_type")


class DraTruth:
    """slices: the ResourceSlice objects; nodes: Node objects; claims: every version seen of
    every ResourceClaim; pods: the last version of every pod; namespaces: Namespace objects."""

    def __init__(self, cfg, nodes, slices, claims, pods, namespaces):
        self.cfg = cli.Config(cfg)
        newest = {}
        for s in slices:
            pool = s["spec"]["pool"]
            if s["spec"]["driver"] in DRIVERS:
                newest[pool["name"]] = max(newest.get(pool["name"], 0), pool["generation"])
        # (driver, pool, device) -> {node, geq, physical, model, shared, caps}
        self.devices = {}
        for s in slices:
            pool = s["spec"]["pool"]
            drv = s["spec"]["driver"]
            if drv not in DRIVERS or pool["generation"] < newest[pool["name"]]:
                continue
            for d in s["spec"].get("devices") or []:
                typ = _attr(d, "type", drv)
                if typ == "gpu" or (drv == HAMI_DRIVER and typ == "hami-gpu"):
                    geq, phys = 1.0, _attr(d, "uuid")
                elif typ == "mig":
                    geq = cli.mig_share(_attr(d, "productName").replace(" ", "-"),
                                        _attr(d, "profile"))
                    phys = _attr(d, "parentUUID")
                else:
                    continue
                # A partition of a partitionable GPU belongs to its counter set's GPU.
                if d.get("consumesCounters"):
                    phys = "%s/%s/%s" % (DRIVER, pool["name"],
                                         d["consumesCounters"][0]["counterSet"])
                self.devices[(drv, pool["name"], d["name"])] = {
                    "node": s["spec"]["nodeName"], "geq": geq, "physical": phys,
                    "model": _attr(d, "productName").replace(" ", "-"),
                    "shared": bool(d.get("allowMultipleAllocations")),
                    "caps": shared_caps(d)}
        self.nodes = {}
        for o in nodes:
            n = DraNode(o, self.devices, self.cfg)
            if n.capacity > 0:
                self.nodes[n.name] = n
        # A claim's devices: the last allocation it had (the resource-claim controller clears
        # it when its last pod is done, and deletes a generated claim).
        self.claims = {}    # (ns, name) -> {"geq", "devices", "reserved_max"}
        for versions in claims.values():
            c = versions[-1]
            key = (c["metadata"]["namespace"], c["metadata"]["name"])
            alloc = None
            reserved = 0
            for v in versions:
                st = v.get("status") or {}
                if st.get("allocation"):
                    alloc = st["allocation"]
                reserved = max(reserved, len(st.get("reservedFor") or []))
            reqs = {r["name"]: r for r in c["spec"]["devices"]["requests"]}
            devs, used = [], []
            for r in ((alloc or {}).get("devices") or {}).get("results") or []:
                req = reqs.get(r["request"].split("/")[0]) or {}
                admin = r.get("adminAccess") or (req.get("exactly") or {}).get("adminAccess")
                if r["driver"] not in DRIVERS or admin:
                    continue
                k = (r["driver"], r["pool"], r["device"])
                devs.append(k)
                used.append({n.split("/")[-1]: cli.parse_quantity(q)
                             for n, q in (r.get("consumedCapacity") or {}).items()})
            self.claims[key] = {"devices": devs, "used": used, "reserved_max": reserved,
                                "allocated": alloc is not None}
        ns_labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in namespaces}
        self.holders = []
        for p in pods:
            if not (p.get("spec") or {}).get("nodeName"):
                continue
            bound, end = pod_interval(p)
            if bound is None:
                continue
            md = p["metadata"]
            ns = md["namespace"]
            names, mapped = pod_claim_names(p)
            node = self.nodes.get(p["spec"]["nodeName"])
            req = {r: n for r, n in cli.effective_request(p["spec"], self.cfg).items()
                   if r not in mapped}
            if node is None:
                held = req or [n for n in names if self.claims.get((ns, n), {}).get("devices")]
                assert not held, "pod %s holds GPUs on a node without any" % md["name"]
                continue
            dp = sum(n * node.node.unit_share(r, self.cfg) for r, n in req.items())
            claims_held = [(ns, n) for n in names if self.claims.get((ns, n), {}).get("devices")]
            if dp == 0 and not claims_held:
                continue
            h = Holder()
            h.uid, h.ns, h.name, h.node = md["uid"], ns, md["name"], node.name
            h.start, h.end, h.claims, h.dp = bound, end, claims_held, dp
            nsl = ns_labels.get(ns, {})
            h.team = cli.attribute(md.get("labels") or {}, nsl, ns, self.cfg.team_keys,
                                   self.cfg.ns_teams)
            h.project = cli.attribute(md.get("labels") or {}, nsl, ns, self.cfg.project_keys,
                                      self.cfg.ns_projects)
            h.price, h.model, h.capacity_type = node.price, node.model, node.capacity_type
            self.holders.append(h)

    def holding(self, claim, t):
        return sum(1 for h in self.holders if claim in h.claims and h.start <= t and
                   (h.end is None or t < h.end))

    def _taken(self, dev, used):
        """The largest fraction of a shared device's capacities an allocation consumed."""
        return min(1.0, max([used.get(n, 0.0) / v for n, v in dev["caps"]] or [0.0]))

    def share(self, key, claim, idx, t):
        """The share of shared device `key` allocation idx of `claim` holds at t
        (docs/dra.md, "Shared devices"), computed from the claims' consumedCapacity."""
        dev = self.devices[key]
        own = self._taken(dev, self.claims[claim]["used"][idx])
        total, zero = 0.0, 0
        for c, cl in self.claims.items():
            if not self.holding(c, t):
                continue
            for k, u in zip(cl["devices"], cl["used"]):
                if k != key:
                    continue
                m = self._taken(dev, u)
                total, zero = (total + m, zero) if m > 0 else (total, zero + 1)
        if own > 0:
            return own / max(1.0, total)
        return 0.0 if total >= 1.0 or zero == 0 else (1.0 - total) / zero

    def claim_geq(self, claim, t):
        """What a claim's devices give its holders together at t."""
        cl = self.claims[claim]
        g = 0.0
        for i, k in enumerate(cl["devices"]):
            dev = self.devices[k]
            g += dev["geq"] * (self.share(k, claim, i, t) if dev["shared"] else 1.0)
        return g

    def _related(self, h):
        """The claims whose holders change what h holds: its own, and those allocated a
        shared device one of its claims was."""
        mine = set(h.claims)
        shared = {k for c in mine for k in self.claims[c]["devices"]
                  if self.devices[k]["shared"]}
        return mine | {c for c, cl in self.claims.items() if shared & set(cl["devices"])}

    def segments(self, h, now):
        """[(a, b, geq)]: the pod's interval up to now cut wherever a holder of a claim that
        changes its share starts or stops, with its GPU-equivalents on each piece (equal
        neighbours merged)."""
        end = now if h.end is None else h.end
        cuts = {h.start, end}
        related = self._related(h)
        for o in self.holders:
            if set(o.claims) & related:
                cuts |= {o.start} | ({o.end} if o.end is not None else set())
        cuts = sorted(t for t in cuts if h.start <= t <= end)
        out = []
        for a, b in zip(cuts, cuts[1:]):
            if b <= a:
                continue
            geq = h.dp + sum(self.claim_geq(c, a) / self.holding(c, a) for c in h.claims)
            if out and out[-1][1] == a and abs(out[-1][2] - geq) < 1e-12:
                out[-1] = (out[-1][0], b, geq)
            else:
                out.append((a, b, geq))
        return out

    def gpu_seconds(self, h, w0, w1):
        return sum(g * max(0, min(b, w1) - max(a, w0)) for a, b, g in self.segments(h, w1))

    def window(self, w0, w1):
        """By (team, project), by pod uid, total, capacity and idle per node over [w0, w1),
        w1 at or before now."""
        groups, pods, held = {}, {}, {}
        total = {"gpu_seconds": 0.0, "cost_usd": 0.0}
        for h in self.holders:
            gs = self.gpu_seconds(h, w0, w1)
            if gs <= 0:
                continue
            cost = gs / 3600.0 * h.price
            pods[h.uid] = {"gpu_seconds": gs, "cost_usd": cost}
            g = groups.setdefault((h.team, h.project), {"gpu_seconds": 0.0, "cost_usd": 0.0})
            for acc in (g, total):
                acc["gpu_seconds"] += gs
                acc["cost_usd"] += cost
            held[h.node] = held.get(h.node, 0.0) + gs
        cap = {"gpu_seconds": 0.0, "cost_usd": 0.0}
        idle = {}
        for n in self.nodes.values():
            cs = n.capacity * max(0, w1 - max(w0, n.created))
            cap["gpu_seconds"] += cs
            cap["cost_usd"] += cs / 3600.0 * n.price
            ids = max(0.0, cs - held.get(n.name, 0.0))
            idle[n.name] = {"gpu_seconds": ids, "cost_usd": ids / 3600.0 * n.price,
                            "held": held.get(n.name, 0.0), "capacity_seconds": cs}
        return {"groups": groups, "pods": pods, "total": total, "capacity": cap, "idle": idle}
