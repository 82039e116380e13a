"""Ground truth for the CLI tests: GPU cost attribution recomputed from the raw JSON, in Python.

Independent of the C code by design: it reads the same `kubectl get -o json` dumps and the same
configuration, applies the accounting rules as written in the design (docs) and the reference
pages, and returns figures to compare with `gpu-cost analyze --format json`.

The rules, in brief:
  - a pod holds GPUs from its PodScheduled=True lastTransitionTime until, if Succeeded or Failed,
    the latest container terminated.finishedAt (app, init and sidecar containers alike), else
    until the window end; pods without a node or PodScheduled=True (unbound Pending pods) hold
    nothing, a bound pod still Pending (ContainerCreating) holds from its binding;
  - its GPU-equivalents are its effective request per GPU resource (Kubernetes rules: app
    containers plus sidecars, at least each ordinary init container plus the sidecars started
    before it, plus overhead; requests, else limits) times the unit's share on its node;
  - team and project: pod label by configured key order, namespace label, configured namespace
    map, else "__unattributed__";
  - price per whole GPU-hour of the node: annotation, first matching node rule, catalog (most
    specific entry); cost = GPU-equivalents x seconds in window / 3600 x price;
  - idle per node = max(0, allocatable GPU-equivalents x node seconds in window - held).
"""

import json
import math
import os
import re
from datetime import datetime, timezone

UNATTRIBUTED = "__unattributed__"
DIMS = ("namespace", "team", "project", "model", "capacity_type", "node")

# ---- time ---------------------------------------------------------------------------------------

_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                      r"([Zz]|[+-]\d{2}:\d{2})$")


def parse_time(s):
    """RFC 3339 to integer UTC seconds; fractions truncate toward the earlier second."""
    m = _RFC3339.match(s or "")
    if not m:
        raise ValueError("not an RFC 3339 time: %r" % (s,))
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    t = int(datetime(y, mo, d, h, mi, sec, tzinfo=timezone.utc).timestamp())
    off = m.group(8)
    if off not in ("Z", "z"):
        sign = 1 if off[0] == "+" else -1
        t -= sign * (int(off[1:3]) * 3600 + int(off[4:6]) * 60)
    return t


def format_time(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_window(s):
    a, b = s.split(",")
    return parse_time(a.strip()), parse_time(b.strip())


# ---- quantities ---------------------------------------------------------------------------------

_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "m": 0.001}


def parse_quantity(q):
    """A Kubernetes quantity as a float ("1", "500m", "2Ki", "1e3")."""
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        return float(q)
    m = re.match(r"^([+-]?[0-9.]+)([eE][+-]?\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$", str(q))
    if not m:
        raise ValueError("not a quantity: %r" % (q,))
    v = float(m.group(1) + (m.group(2) or ""))
    return v * _SUFFIX[m.group(3) or ""]


# ---- MIG shares (NVIDIA MIG user guide; gpu-operator mig-parted config) ------------------------

# parent family -> (compute slices C, memory slices M, {profile: (compute, memory slices)})
_MIG_TABLES = {
    "A30": (4, 4, {"1g.6gb": (1, 1), "2g.12gb": (2, 2), "4g.24gb": (4, 4)}),
    "A100-40GB": (7, 8, {"1g.5gb": (1, 1), "1g.10gb": (1, 2), "2g.10gb": (2, 2),
                         "3g.20gb": (3, 4), "4g.20gb": (4, 4), "7g.40gb": (7, 8)}),
    "80GB": (7, 8, {"1g.10gb": (1, 1), "1g.20gb": (1, 2), "2g.20gb": (2, 2), "3g.40gb": (3, 4),
                    "4g.40gb": (4, 4), "7g.80gb": (7, 8)}),
    "94GB": (7, 8, {"1g.12gb": (1, 1), "1g.24gb": (1, 2), "2g.24gb": (2, 2), "3g.47gb": (3, 4),
                    "4g.47gb": (4, 4), "7g.94gb": (7, 8)}),
    "96GB": (7, 8, {"1g.12gb": (1, 1), "1g.24gb": (1, 2), "2g.24gb": (2, 2), "3g.48gb": (3, 4),
                    "4g.48gb": (4, 4), "7g.96gb": (7, 8)}),
    "141GB": (7, 8, {"1g.18gb": (1, 1), "1g.35gb": (1, 2), "2g.35gb": (2, 2), "3g.71gb": (3, 4),
                     "4g.71gb": (4, 4), "7g.141gb": (7, 8)}),
    "144GB": (7, 8, {"1g.18gb": (1, 1), "1g.36gb": (1, 2), "2g.36gb": (2, 2), "3g.72gb": (3, 4),
                     "4g.72gb": (4, 4), "7g.144gb": (7, 8)}),
    "180GB": (7, 8, {"1g.23gb": (1, 1), "1g.45gb": (1, 2), "2g.45gb": (2, 2), "3g.90gb": (3, 4),
                     "4g.90gb": (4, 4), "7g.180gb": (7, 8)}),
}


def _mig_family(model):
    m = (model or "").upper().replace(" ", "-")
    if "A30" in m:
        return "A30"
    if "A100" in m and "80GB" not in m:
        return "A100-40GB"
    for fam in ("80GB", "94GB", "96GB", "141GB", "144GB", "180GB"):
        if fam in m:
            return fam
    if "H100-NVL" in m:
        return "94GB"
    return None


def mig_share(parent_model, profile):
    """Share of its parent GPU: max(compute/C, memory/M). Unknown profiles follow the pattern
    1g -> 1 memory slice, 2g -> 2, 3g -> 4, 4g -> 4, 7g -> 8."""
    m = re.match(r"^(\d+)g\.(\d+)gb", profile)
    if not m:
        raise ValueError("not a MIG profile: %r" % (profile,))
    base = "%sg.%sgb" % (m.group(1), m.group(2))
    fam = _mig_family(parent_model)
    if fam:
        C, M, table = _MIG_TABLES[fam]
        if base in table:
            c, mem = table[base]
            return max(c / C, mem / M)
    c = int(m.group(1))
    mem = {1: 1, 2: 2, 3: 4, 4: 4, 7: 8}.get(c, c)
    return max(c / 7, mem / 8)


# ---- configuration ------------------------------------------------------------------------------

def _norm_model(s):
    return (s or "").lower().replace(" ", "-")


class Config:
    def __init__(self, cfg=None, prices=None):
        cfg = cfg or {}
        att = cfg.get("attribution", {})
        self.team_keys = att.get("team_label_keys", ["team", "app.kubernetes.io/team"])
        self.project_keys = att.get("project_label_keys",
                                    ["project", "app.kubernetes.io/project", "cost-center"])
        self.ns_teams = att.get("namespace_teams", {})
        self.ns_projects = att.get("namespace_projects", {})
        self.resources = {r["name"]: r for r in cfg.get("resources", [])}
        self.rules = cfg.get("node_rules", [])
        self.instance_types = cfg.get("instance_types", {})
        self.default_capacity = cfg.get("default_capacity_type", "on-demand")
        cat = prices if prices is not None else cfg.get("prices", {"prices": []})
        self.catalog = cat.get("prices", [])

    # -- price catalog
    def lookup(self, model, capacity, region):
        """Most specific entry: exact model > longer glob > shorter glob > "*"; then exact
        capacity type > "*"; then exact region > none. Ties go to the earlier entry."""
        best, best_key = None, None
        nm = _norm_model(model)
        for i, e in enumerate(self.catalog):
            pm = e["model"]
            if pm == "*":
                mrank = (0, 0)
            elif pm.endswith("*"):
                if not nm.startswith(_norm_model(pm[:-1])):
                    continue
                mrank = (1, len(pm))
            elif _norm_model(pm) == nm:
                mrank = (2, 0)
            else:
                continue
            ct = e.get("capacity_type", "*")
            if ct == "*":
                crank = 0
            elif ct == capacity:
                crank = 1
            else:
                continue
            rg = e.get("region")
            if rg in (None, "*", ""):
                rrank = 0
            elif rg == region:
                rrank = 1
            else:
                continue
            key = (mrank, crank, rrank, -i)
            if best_key is None or key > best_key:
                best, best_key = e, key
        if best is None:
            raise LookupError("no price for %s/%s/%s" % (model, capacity, region))
        return float(best["usd_per_gpu_hour"])


# ---- nodes --------------------------------------------------------------------------------------

_GPU_RES = re.compile(r"^nvidia\.com/(gpu|gpu\.shared|"
                      r"mig-[0-9]+g\.[0-9]+gb(\.[a-z]+)*(\.shared)?)$")

# Other vendors' device plugins, built in (docs/model.md "Other accelerators"): AMD's ROCm
# k8s-device-plugin (amd.com/gpu; the mixed strategy's <compute>_<memory> partition names),
# habanalabs-k8s-device-plugin, the AWS Neuron device plugin, GKE's TPUs.
_VENDOR_RES = re.compile(r"^(amd\.com/(gpu|(spx|dpx|tpx|qpx|cpx)_[a-z0-9]+)|habana\.ai/gaudi|"
                         r"aws\.amazon\.com/(neuron|neurondevice|neuroncore)|google\.com/tpu)$")
_NEURON = ("aws.amazon.com/neuron", "aws.amazon.com/neurondevice", "aws.amazon.com/neuroncore")
# XCDs of the partitionable Instinct GPUs (ROCm GPU specifications: CUs, and CUs per XCD);
# a compute partition mode cuts a GPU into 1, 2, 3, 4 or one-per-XCD partitions.
_AMD_XCDS = {"MI300X": (304, 8), "MI325X": (304, 8), "MI300A": (228, 6), "MI350X": (256, 8),
             "MI355X": (256, 8)}
_AMD_IDS = {"74a1": "MI300X", "74a5": "MI325X", "74a0": "MI300A", "75a3": "MI355X"}
_TPUS = {"tpu-v4-podslice": "Google-TPU-v4", "tpu-v5-lite-podslice": "Google-TPU-v5e",
         "tpu-v5p-slice": "Google-TPU-v5p", "tpu-v6e-slice": "Google-TPU-v6e"}
# Instance types that name their accelerator (AWS Neuron docs; the AWS DL1 announcement).
_VENDOR_INSTANCES = (("trn1.", "AWS-Trainium1"), ("trn1n.", "AWS-Trainium1"),
                     ("trn2.", "AWS-Trainium2"), ("inf1.", "AWS-Inferentia1"),
                     ("inf2.", "AWS-Inferentia2"), ("dl1.", "Intel-Gaudi1"))


def is_gpu_resource(name, cfg):
    return bool(_GPU_RES.match(name)) or bool(_VENDOR_RES.match(name)) or name in cfg.resources


def _amd_model(lab):
    name = lab.get("amd.com/gpu.product-name") or lab.get("beta.amd.com/gpu.product-name")
    if name:
        m = re.search(r"(?:^|[_ -])(MI\d+[A-Z]*)(?:$|[_ -])", name)
        return "AMD-Instinct-" + m.group(1) if m else name.replace("_", "-")
    dev = lab.get("amd.com/gpu.device-id") or lab.get("beta.amd.com/gpu.device-id")
    return "AMD-Instinct-" + _AMD_IDS[dev] if dev in _AMD_IDS else None


def _amd_partitions(model, mode, cus):
    """Compute partitions of one GPU: SPX 1, DPX 2, TPX 3, QPX 4, CPX one per XCD; without a
    mode, the GPU's CUs over the CUs one device reports."""
    total, xcds = _AMD_XCDS.get((model or "").replace("AMD-Instinct-", ""), (0, 8))
    if mode:
        return {"spx": 1, "dpx": 2, "tpx": 3, "qpx": 4, "cpx": xcds}[mode[:3].lower()]
    if cus and total and total % cus == 0:
        return total // cus
    return 1


class Node:
    def __init__(self, obj, cfg):
        md = obj.get("metadata", {})
        self.name = md["name"]
        self.labels = md.get("labels", {}) or {}
        self.annotations = md.get("annotations", {}) or {}
        self.created = parse_time(md["creationTimestamp"])
        alloc = (obj.get("status", {}) or {}).get("allocatable", {}) or {}
        self.alloc = {k: parse_quantity(v) for k, v in alloc.items() if is_gpu_resource(k, cfg)}
        lab = self.labels
        self.product = lab.get("nvidia.com/gpu.product")
        gpu_model = None
        self.mig_single = None
        if self.product:
            m = re.match(r"^(.*)-MIG-(\d+g\.\d+gb(?:[.+][a-z]+)*)$", self.product)
            if m:
                gpu_model, self.mig_single = m.group(1), m.group(2)
            elif self.product.endswith("-SHARED"):
                gpu_model = self.product[:-len("-SHARED")]
            else:
                gpu_model = self.product
        try:
            self.replicas = int(lab.get("nvidia.com/gpu.replicas", "1"))
        except ValueError:
            self.replicas = 1
        if self.replicas < 1:
            self.replicas = 1
        self.gfd_model = gpu_model
        self.vendor_model = _amd_model(lab) or _TPUS.get(
            lab.get("cloud.google.com/gke-tpu-accelerator"),
            lab.get("cloud.google.com/gke-tpu-accelerator"))
        self._classify(cfg)
        # A Neuron node's devices and cores are one set of devices: counted once, the largest.
        views = [self.unit_share(r, cfg) * n for r, n in self.alloc.items()
                 if r in _NEURON and r not in cfg.resources]
        self.alloc_geq = sum(self.unit_share(r, cfg) * n for r, n in self.alloc.items()
                             if r not in _NEURON or r in cfg.resources) + max(views, default=0)

    def _rule_field(self, cfg, field):
        for r in cfg.rules:
            ok = all((v == "*" and k in self.labels) or self.labels.get(k) == v
                     for k, v in r.get("match", {}).items())
            if ok and r.get(field) is not None:
                if field == "usd_per_gpu_hour" and float(r[field]) < 0:
                    continue
                return r[field]
        return None

    def _classify(self, cfg):
        lab, ann = self.labels, self.annotations
        # capacity type
        ct = ann.get("gpu-cost.io/capacity-type") or self._rule_field(cfg, "capacity_type")
        if not ct and lab.get("karpenter.sh/capacity-type"):
            ct = lab["karpenter.sh/capacity-type"]
        if not ct and lab.get("eks.amazonaws.com/capacityType"):
            ct = {"ON_DEMAND": "on-demand", "SPOT": "spot",
                  "CAPACITY_BLOCK": "reserved"}.get(lab["eks.amazonaws.com/capacityType"])
        if not ct and lab.get("cloud.google.com/gke-spot") == "true":
            ct = "spot"
        if not ct and lab.get("kubernetes.azure.com/scalesetpriority") == "spot":
            ct = "spot"
        self.capacity_type = ct or cfg.default_capacity
        # model: the physical GPU, for MIG shares and prices
        model = ann.get("gpu-cost.io/gpu-model") or self._rule_field(cfg, "model")
        if not model:
            model = self.gfd_model
        if not model:
            model = lab.get("cloud.google.com/gke-accelerator")
        if not model:
            model = self.vendor_model
        if not model:
            it = lab.get("node.kubernetes.io/instance-type") or \
                lab.get("beta.kubernetes.io/instance-type")
            model = cfg.instance_types.get(it) or next(
                (m for p, m in _VENDOR_INSTANCES if (it or "").startswith(p)), None)
        self.model = model or "unknown"
        self.region = self._rule_field(cfg, "region") or lab.get("topology.kubernetes.io/region")
        # price of one whole GPU-hour
        p = ann.get("gpu-cost.io/usd-per-gpu-hour")
        if p is not None:
            self.price = float(p)
        else:
            p = self._rule_field(cfg, "usd_per_gpu_hour")
            self.price = float(p) if p is not None else cfg.lookup(self.model, self.capacity_type,
                                                                   self.region)

    def unit_share(self, res, cfg):
        """GPU-equivalents of one unit of `res` on this node."""
        if res in cfg.resources:
            r = cfg.resources[res]
            if r.get("kind", "fixed") == "fixed":
                return float(r.get("gpus_per_unit", 1.0))
        parent = self.gfd_model or self.model
        if res.startswith("amd.com/"):
            lab = self.labels
            if res == "amd.com/gpu":
                mode = (lab.get("amd.com/gpu.compute-memory-partition") or
                        lab.get("amd.com/compute-memory-partition"))
                cus = int(lab.get("amd.com/gpu.cu-count") or
                          lab.get("beta.amd.com/gpu.cu-count") or 0)
            else:
                mode, cus = res.split("/", 1)[1], 0
            return 1.0 / _amd_partitions(self.vendor_model, mode, cus)
        if res == "aws.amazon.com/neuroncore":
            devices = max(self.alloc.get("aws.amazon.com/neuron", 0),
                          self.alloc.get("aws.amazon.com/neurondevice", 0))
            return devices / self.alloc[res]
        if _VENDOR_RES.match(res):
            return 1.0
        if res == "nvidia.com/gpu":
            if self.mig_single:
                return mig_share(parent, self.mig_single)
            return 1.0 / self.replicas
        if res == "nvidia.com/gpu.shared":
            return 1.0 / self.replicas
        m = re.match(r"^nvidia\.com/mig-(.+?)(\.shared)?$", res)
        if m:
            share = mig_share(parent, m.group(1))
            if m.group(2):
                rep = int(self.labels.get("nvidia.com/mig-%s.replicas" % m.group(1),
                                          self.replicas) or 1)
                share /= max(rep, 1)
            return share
        raise KeyError(res)


# ---- pods ---------------------------------------------------------------------------------------

def _count(c, res):
    r = c.get("resources", {}) or {}
    req, lim = r.get("requests", {}) or {}, r.get("limits", {}) or {}
    if res in req:
        return parse_quantity(req[res])
    if res in lim:
        return parse_quantity(lim[res])
    return 0.0


def effective_request(spec, cfg):
    """Per GPU resource: max(app + sidecars, each init + sidecars before it) + overhead."""
    conts = spec.get("containers", []) or []
    inits = spec.get("initContainers", []) or []
    names = set()
    for c in conts + inits:
        r = c.get("resources", {}) or {}
        for k in list((r.get("requests") or {}).keys()) + list((r.get("limits") or {}).keys()):
            if is_gpu_resource(k, cfg):
                names.add(k)
    for k in (spec.get("overhead") or {}):
        if is_gpu_resource(k, cfg):
            names.add(k)
    out = {}
    for res in sorted(names):
        app = sum(_count(c, res) for c in conts)
        side = 0.0
        best = None
        for c in inits:
            if c.get("restartPolicy") == "Always":
                side += _count(c, res)
            else:
                v = _count(c, res) + side
                best = v if best is None else max(best, v)
        total = app + side
        if best is not None:
            total = max(total, best)
        total += parse_quantity((spec.get("overhead") or {}).get(res, 0))
        if total > 0:
            out[res] = total
    return out


def pod_interval(pod):
    """(bound, end) with end None while the pod still holds its GPUs; None when never bound."""
    spec, st = pod.get("spec", {}) or {}, pod.get("status", {}) or {}
    if not spec.get("nodeName"):
        return None
    bound = None
    for c in st.get("conditions", []) or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            bound = parse_time(c["lastTransitionTime"])
    if bound is None:
        return None
    phase = st.get("phase")
    if phase in ("Succeeded", "Failed"):
        ends = []
        for key in ("containerStatuses", "initContainerStatuses"):
            for cs in st.get(key, []) or []:
                term = ((cs.get("state") or {}).get("terminated") or {})
                if term.get("finishedAt"):
                    ends.append(parse_time(term["finishedAt"]))
        if not ends:
            raise ValueError("finished pod without finishedAt: %s" % pod["metadata"]["name"])
        return bound, max(ends)
    # A bound pod still Pending (pulling images, ContainerCreating) holds its GPUs: the
    # scheduler has reserved them on the node from the binding on (the design's rule).
    return bound, None


def attribute(labels, ns_labels, ns_name, keys, ns_map):
    for k in keys:
        if labels.get(k):
            return labels[k]
    for k in keys:
        if ns_labels.get(k):
            return ns_labels[k]
    if ns_name in ns_map:
        return ns_map[ns_name]
    return UNATTRIBUTED


# ---- the computation ----------------------------------------------------------------------------

def _items(doc):
    if isinstance(doc, (str, os.PathLike)):
        with open(doc) as f:
            doc = json.load(f)
    if doc is None:
        return []
    if isinstance(doc, dict) and "items" in doc:
        return doc["items"]
    if isinstance(doc, dict):
        return [doc]
    return doc


def _load(doc):
    if isinstance(doc, (str, os.PathLike)):
        with open(doc) as f:
            return json.load(f)
    return doc


class Usage:
    """One pod's GPU holding, ready to clip to windows."""

    def __init__(self, pod, node, geq, start, end, team, project):
        md = pod["metadata"]
        self.uid = md.get("uid")
        self.name = md["name"]
        self.ns = md["namespace"]
        self.node = node
        self.geq = geq
        self.start = start
        self.end = end
        self.dims = {"namespace": self.ns, "team": team, "project": project,
                     "model": node.model, "capacity_type": node.capacity_type,
                     "node": node.name, "pod": "%s/%s" % (self.ns, self.name)}

    def seconds(self, ws, we):
        end = we if self.end is None else min(self.end, we)
        return max(0, end - max(self.start, ws))


class Cluster:
    """The examples (or any dumps) loaded once; compute() answers a window and grouping."""

    def __init__(self, pods, nodes, namespaces=None, config=None, prices=None):
        cfg = Config(_load(config), _load(prices) if prices is not None else None)
        self.cfg = cfg
        self.nodes = {}
        for n in _items(nodes):
            node = Node(n, cfg)
            if node.alloc:
                self.nodes[node.name] = node
        ns_labels = {}
        for ns in _items(namespaces):
            ns_labels[ns["metadata"]["name"]] = ns["metadata"].get("labels", {}) or {}
        self.usages = []
        for p in _items(pods):
            req = effective_request(p.get("spec", {}) or {}, cfg)
            if not req:
                continue
            iv = pod_interval(p)
            if iv is None:
                continue
            node = self.nodes.get(p["spec"]["nodeName"])
            if node is None:
                raise ValueError("pod %s on unknown node" % p["metadata"]["name"])
            geq = sum(n * node.unit_share(r, cfg) for r, n in req.items())
            lab = p["metadata"].get("labels", {}) or {}
            nsn = p["metadata"]["namespace"]
            nsl = ns_labels.get(nsn, {})
            team = attribute(lab, nsl, nsn, cfg.team_keys, cfg.ns_teams)
            project = attribute(lab, nsl, nsn, cfg.project_keys, cfg.ns_projects)
            self.usages.append(Usage(p, node, geq, iv[0], iv[1], team, project))

    def compute(self, start, end, by=("team", "project")):
        if isinstance(start, str):
            start = parse_time(start)
        if isinstance(end, str):
            end = parse_time(end)
        groups = {}
        total = {"gpu_seconds": 0.0, "cost_usd": 0.0, "pods": 0}
        unattr = {"gpu_seconds": 0.0, "cost_usd": 0.0, "pods": 0}
        held = {}
        for u in self.usages:
            sec = u.seconds(start, end)
            if sec <= 0:
                continue
            gs = u.geq * sec
            cost = gs / 3600.0 * u.node.price
            key = tuple(u.dims[d] for d in by)
            g = groups.setdefault(key, {"gpu_seconds": 0.0, "cost_usd": 0.0, "pods": 0})
            for acc in [g, total] + ([unattr] if UNATTRIBUTED in (u.dims["team"],
                                                                  u.dims["project"]) else []):
                acc["gpu_seconds"] += gs
                acc["cost_usd"] += cost
                acc["pods"] += 1
            held[u.node.name] = held.get(u.node.name, 0.0) + gs
        idle_nodes = {}
        cap = {"gpu_seconds": 0.0, "cost_usd": 0.0}
        idle = {"gpu_seconds": 0.0, "cost_usd": 0.0}
        for n in self.nodes.values():
            sec = max(0, end - max(start, n.created))
            cs = n.alloc_geq * sec
            cap["gpu_seconds"] += cs
            cap["cost_usd"] += cs / 3600.0 * n.price
            ids = max(0.0, cs - held.get(n.name, 0.0))
            idle_nodes[n.name] = {"gpu_seconds": ids, "cost_usd": ids / 3600.0 * n.price,
                                  "model": n.model, "capacity_type": n.capacity_type}
            idle["gpu_seconds"] += ids
            idle["cost_usd"] += ids / 3600.0 * n.price
        return {"start": start, "end": end, "by": tuple(by), "groups": groups, "total": total,
                "unattributed": unattr, "capacity": cap, "idle": idle, "idle_nodes": idle_nodes}


def compute(pods, nodes, namespaces, config, window, by=("team", "project"), prices=None):
    start, end = parse_window(window) if isinstance(window, str) else window
    return Cluster(pods, nodes, namespaces, config, prices).compute(start, end, by)


def tco(node_price, gpus_per_node, years, utilization, cluster_gpus, ftes, fte_cost,
        kw_per_gpu, pue, usd_per_kwh, network_per_gpu_hour):
    """Cost per productive GPU-hour of owned GPUs (the reference formula)."""
    productive = 8760.0 * utilization
    hardware = (node_price / gpus_per_node) / years / productive
    operations = (ftes * fte_cost) / (cluster_gpus * productive)
    power = (kw_per_gpu * 8760.0 * pue * usd_per_kwh) / productive
    total = hardware + operations + power + network_per_gpu_hour
    return {"hardware": hardware, "operations": operations, "power": power,
            "network": network_per_gpu_hour, "total": total,
            "annual_cost_per_gpu": total * productive}


def break_even(annual_cost, cloud_price):
    return annual_cost / (8760.0 * cloud_price)


assert math.isclose(mig_share("NVIDIA-H100-80GB-HBM3", "1g.20gb"), 0.25)
