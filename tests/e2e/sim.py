"""A back-dated replay for the end-to-end tests: eight days of GPU churn, replayed against a
real kube-apiserver in under a minute, with every timestamp back-dated.

The e2e cluster runs the real kube-scheduler and kube-controller-manager, but neither can act
in the past, so the replay plays scheduler and kubelet for its own pods: they name a scheduler
that does not exist (`schedulerName: gpu-cost-replay`), which the real kube-scheduler leaves
alone, and the replay binds them and writes their status itself. It plans a week of workloads
deterministically (fixed seed, times as offsets from an anchor on the hour eight days before
now), places them on GPU nodes the way a scheduler would (never over a node's allocatable),
then writes the history to the API server in time order:

  - Nodes carry real label sets: the H100 node's GPU Feature Discovery labels and the RKE2 A16
    node from tests/fixtures, and nodes derived from that H100 set for the MIG layouts of
    NVIDIA's mig-parted config (H100 MIG mixed `all-balanced`, A100 MIG single `all-1g.5gb`),
    an A100 spot node (Karpenter), and a T4 node time-sliced 4 ways (replicas from the
    device plugin's time-slicing config). The API server stamps creationTimestamp itself and
    refuses a client's, so nodes are written straight into etcd with a back-dated
    creationTimestamp (the one field a client cannot set); everything after that, status
    included, goes through the API.
  - Pods are created, bound (POST pods/<name>/binding) and given status (PATCH
    pods/<name>/status: PodScheduled lastTransitionTime, startTime, container running and
    terminated times), all back-dated to the plan. Some finish, some fail, some are cleaned up
    after finishing, some are deleted while running (grace 0: their end is the
    deletionTimestamp the API answers with, which is real time, not back-dated), some are
    deleted gracefully and then forced, some stop all their containers while still Running and
    are deleted afterwards, a spot node is reclaimed (its pods fail) and later deleted.
  - Some pods belong to workloads kube-controller-manager runs: a Deployment (through its
    ReplicaSet; its pod fails once and the ReplicaSet replaces it), one Job per training run,
    and a CronJob (through the Job it starts, of three pods run one after another). The replay
    creates the Deployment, Job or CronJob through the API a few events before its first pod;
    the real kube-controller-manager writes the ReplicaSet, the CronJob's Job and every pod,
    with its own owner references, from a template that names the replay's scheduler; the
    replay waits for each pod (a Job's next one appears only after the replay has finished the
    one before) and then binds and runs it like a bare pod. So these pods' creationTimestamps
    are the replay's real time (kube-controller-manager makes them now, and the API server
    stamps the time), while the GPU time they hold is back-dated: the controller derives a
    pod's interval from its PodScheduled time and its containers' finishedAt, never from its
    creation (pkg/model/decode.c, gc_pod_interval in pkg/account/account.c). Those back-dated
    status times, written by the replay as scheduler and kubelet, are the only simulated part
    of these workloads; the CronJob is moreover given a last run a day ago in its status, so
    that its controller starts today's run at once instead of at the next minute.

Everything the replay writes is recorded (`Replay.record()`), and truth.py computes the
expected costs from that record alone: the harness never asks the controller what happened.

Run by hand against a cluster started with scripts/e2e-cluster.sh:
    python3 tests/e2e/sim.py --cluster DIR [--record FILE]
"""

import argparse
import calendar
import functools
import json
import random
import re
import sys
import time
import urllib.parse
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = REPO / "tests" / "fixtures"
sys.path.insert(0, str(HERE))

from apiclient import Api, ApiError, Etcd, read_env  # noqa: E402

HOUR, DAY = 3600, 86400
INF = float("inf")
SEED = 20261122
SPAN = 8 * DAY - 120              # the plan covers [anchor, anchor + SPAN]
SPOT_RECLAIM = int(6.5 * DAY)     # the whole-GPU spot node is reclaimed then
SPOT1_CREATED = int(2.5 * DAY)    # the MIG-single spot node joins then
CONTROLLER_NS = "gpu-cost"

NAMESPACES = {
    # namespace -> labels; attribution: pod label, then namespace label, then the config's
    # namespace map (legacy-batch), else __unattributed__ (sandbox)
    "ml-research": {"team": "vision"},
    "nlp": {"team": "language", "project": "llm-pretrain"},
    "recsys": {"app.kubernetes.io/team": "ads"},
    "legacy-batch": {},
    "sandbox": {},
    "platform": {"team": "platform"},
}


def anchor_for(now):
    """The replay's start: eight days before now, on the hour, so complete UTC days exist."""
    return (int(now) - 8 * DAY) // HOUR * HOUR


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(t)))


def parse_rfc3339(s):
    """Second-precision RFC 3339 UTC ("...Z"; a fraction is cut) to seconds."""
    if not s.endswith("Z"):
        raise ValueError("not a UTC time: %r" % (s,))
    return calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S"))


# ---- the fixtures ---------------------------------------------------------------------------

def mig_layout(config_name, device_id=None, path=None):
    """MIG devices per GPU ({profile: count}) of a layout in NVIDIA's default mig-parted config:
    the entry of `config_name` whose device-filter holds device_id, or the one without a
    filter. A reader for that file's regular shape, not a YAML parser."""
    lines = Path(path or FIXTURES / "gpu-operator-default-mig-parted-config.yaml").read_text() \
        .splitlines()
    start = None
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)" + re.escape(config_name) + r":\s*$", line)
        if m:
            start, indent = i + 1, len(m.group(1))
            break
    if start is None:
        raise KeyError("no MIG config %r" % config_name)
    entries = []
    for line in lines[start:]:
        if not line.strip() or line.strip().startswith("#"):
            continue
        if len(line) - len(line.lstrip()) <= indent:
            break
        body = line.strip()
        if body.startswith("- "):
            entries.append({"filters": [], "devices": {}})
            body = body[2:]
        m = re.match(r"^device-filter:\s*\[(.*)\]\s*$", body)
        if m:
            entries[-1]["filters"] = [f.strip().strip('"').lower() for f in m.group(1).split(",")]
        m = re.match(r'^"([0-9]+g\.[0-9]+gb(?:\+[a-z]+)?)":\s*([0-9]+)\s*$', body)
        if m:
            entries[-1]["devices"][m.group(1)] = int(m.group(2))
    for e in entries:
        if not e["filters"] or (device_id and device_id.lower() in e["filters"]):
            return e["devices"]
    raise KeyError("MIG config %r has no entry for device %s" % (config_name, device_id))


def time_slicing_replicas(section, resource="nvidia.com/gpu", path=None):
    """Replicas of `resource` in one node type's section of the device plugin's time-slicing
    config (tests/fixtures/time-slicing-config-fine.yaml)."""
    text = Path(path or FIXTURES / "time-slicing-config-fine.yaml").read_text()
    m = re.search(r"^  " + re.escape(section) + r": \|-\n((?:    .*\n?)*)", text, re.M)
    if not m:
        raise KeyError("no time-slicing section %r" % section)
    m2 = re.search(r"- name: " + re.escape(resource) + r"\s*\n\s*replicas: ([0-9]+)", m.group(1))
    if not m2:
        raise KeyError("no replicas for %s in %s" % (resource, section))
    return int(m2.group(1))


def h100_gfd_labels():
    with open(FIXTURES / "gfd-node-labels-h100-mig-single-all-disabled.json") as f:
        return json.load(f)


def rke2_a16_node():
    with open(FIXTURES / "nodelist-rke2-a16-vgpu-gpu-operator.json") as f:
        return json.load(f)["items"][0]


# ---- nodes ----------------------------------------------------------------------------------

# MIG profile -> (memory MiB as GFD labels it, GPU instance slices) for the layouts used here
_MIG_LABELS = {"1g.10gb": (9856, 1), "2g.20gb": (19968, 2), "3g.40gb": (40192, 3),
               "1g.5gb": (4864, 1)}


class NodeSpec:
    def __init__(self, name, labels, allocatable, created=0, reclaim_at=None,
                 delete_at_end=False, annotations=None, extra_status=None):
        self.name = name
        self.labels = labels
        self.allocatable = allocatable
        self.created = created
        self.reclaim_at = reclaim_at
        self.delete_at_end = delete_at_end
        self.annotations = annotations or {}
        self.extra_status = extra_status or {}

    def gpu_units(self):
        return {k: int(v) for k, v in self.allocatable.items()
                if k.startswith("nvidia.com/") and int(v) > 0}


def _cloud_node(name, instance_type, region, zone, extra):
    """The real H100 GFD label set, moved to a cloud instance: host, instance type, topology,
    and the given GPU/capacity labels on top. Control-plane role labels dropped."""
    lab = h100_gfd_labels()
    for k in [k for k in lab if k.startswith("node-role.kubernetes.io/")
              or k == "node.kubernetes.io/exclude-from-external-load-balancers"]:
        del lab[k]
    lab.update({
        "kubernetes.io/hostname": name,
        "node.kubernetes.io/instance-type": instance_type,
        "beta.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
        "nvidia.com/gpu.machine": instance_type,
    })
    lab.update(extra)
    return {k: v for k, v in lab.items() if v is not None}


def node_specs():
    specs = []
    # 1. The H100 node exactly as GPU Feature Discovery labelled it (one GPU, on a Supermicro
    #    machine the config's node_rules call reserved capacity).
    lab = h100_gfd_labels()
    specs.append(NodeSpec(lab["kubernetes.io/hostname"], lab, {"nvidia.com/gpu": "1"}))

    # 2. Eight whole H100s, on-demand (EKS managed node group).
    eks_od = {"eks.amazonaws.com/capacityType": "ON_DEMAND",
              "eks.amazonaws.com/nodegroup": "gpu-h100"}
    specs.append(NodeSpec("p5-h100-0", _cloud_node(
        "p5-h100-0", "p5.48xlarge", "us-east-1", "us-east-1a",
        dict(eks_od, **{"nvidia.com/gpu.count": "8"})), {"nvidia.com/gpu": "8"}))

    # 3. Eight H100s in MIG mixed mode, layout all-balanced (H100-80GB device 0x2330).
    layout = mig_layout("all-balanced", "0x233010DE")
    extra = dict(eks_od, **{"nvidia.com/gpu.count": "8", "nvidia.com/mig.strategy": "mixed",
                            "nvidia.com/mig.config": "all-balanced"})
    alloc = {"nvidia.com/gpu": "0"}
    for prof, n in sorted(layout.items()):
        mem, gi = _MIG_LABELS[prof]
        p = "nvidia.com/mig-%s." % prof
        extra.update({p + "count": str(8 * n), p + "memory": str(mem), p + "slices.gi": str(gi),
                      p + "slices.ci": str(gi), p + "replicas": "1",
                      p + "product": "NVIDIA-H100-80GB-HBM3-MIG-" + prof})
        alloc["nvidia.com/mig-" + prof] = str(8 * n)
    specs.append(NodeSpec("p5-h100-mig-0", _cloud_node(
        "p5-h100-mig-0", "p5.48xlarge", "us-east-1", "us-east-1b", extra), alloc))

    # 4. Eight whole A100 40GB on Karpenter spot capacity; reclaimed late in the week.
    a100 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.family": "ampere",
            "nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "0",
            "nvidia.com/gpu.memory": "40960", "nvidia.com/gpu.count": "8",
            "karpenter.sh/capacity-type": "spot", "karpenter.sh/nodepool": "gpu-spot",
            "karpenter.k8s.aws/instance-gpu-name": "a100"}
    specs.append(NodeSpec("p4d-a100-spot-0", _cloud_node(
        "p4d-a100-spot-0", "p4d.24xlarge", "us-east-1", "us-east-1c", a100),
        {"nvidia.com/gpu": "8"}, reclaim_at=SPOT_RECLAIM, delete_at_end=True))

    # 5. Eight A100 40GB in MIG single mode, all-1g.5gb: 56 devices advertised as nvidia.com/gpu.
    per_gpu = mig_layout("all-1g.5gb")["1g.5gb"]
    single = dict(a100, **{"nvidia.com/mig.strategy": "single",
                           "nvidia.com/mig.config": "all-1g.5gb",
                           "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
                           "nvidia.com/gpu.count": str(8 * per_gpu),
                           "nvidia.com/gpu.memory": str(_MIG_LABELS["1g.5gb"][0]),
                           "nvidia.com/gpu.slices.gi": "1", "nvidia.com/gpu.slices.ci": "1"})
    specs.append(NodeSpec("p4d-a100-spot-1", _cloud_node(
        "p4d-a100-spot-1", "p4d.24xlarge", "us-east-1", "us-east-1c", single),
        {"nvidia.com/gpu": str(8 * per_gpu)}, created=SPOT1_CREATED))

    # 6. Four T4s time-sliced (replicas from the device plugin's tesla-t4 config), on-demand.
    reps = time_slicing_replicas("tesla-t4")
    t4 = dict(eks_od, **{"eks.amazonaws.com/nodegroup": "gpu-t4",
                         "nvidia.com/gpu.product": "Tesla-T4-SHARED",
                         "nvidia.com/gpu.family": "turing", "nvidia.com/gpu.compute.major": "7",
                         "nvidia.com/gpu.compute.minor": "5", "nvidia.com/gpu.memory": "15360",
                         "nvidia.com/gpu.count": "4", "nvidia.com/gpu.replicas": str(reps),
                         "nvidia.com/gpu.sharing-strategy": "time-slicing",
                         "nvidia.com/mig.capable": "false", "nvidia.com/mig.strategy": "none",
                         "nvidia.com/mig.config": None, "nvidia.com/mig.config.state": None,
                         "nvidia.com/gpu.deploy.mig-manager": None})
    specs.append(NodeSpec("g4dn-t4-ts-0", _cloud_node(
        "g4dn-t4-ts-0", "g4dn.12xlarge", "us-west-2", "us-west-2a", t4),
        {"nvidia.com/gpu": str(4 * reps)}))

    # 7. The on-premises RKE2 node with a vGPU A16 exactly as listed (the config's node_rules
    #    price it: its instance type, "rke2", says nothing).
    rke2 = rke2_a16_node()
    alloc = {k: v for k, v in rke2["status"]["allocatable"].items()}
    specs.append(NodeSpec(rke2["metadata"]["name"], dict(rke2["metadata"]["labels"]), alloc,
                          annotations={}, extra_status={"capacity": rke2["status"]["capacity"]}))

    # 8. A CPU-only node: its pods and it must not count at all.
    specs.append(NodeSpec("cpu-0", {"kubernetes.io/hostname": "cpu-0", "kubernetes.io/os": "linux",
                                    "node.kubernetes.io/instance-type": "m7i.4xlarge",
                                    "topology.kubernetes.io/region": "us-east-1"},
                          {"cpu": "16", "memory": "64Gi", "pods": "110"}))
    return specs


# ---- the plan -------------------------------------------------------------------------------

# The scheduler the replay's pods name: none runs by that name, so kube-scheduler leaves them
# for the replay to bind at their back-dated times.
REPLAY_SCHEDULER = "gpu-cost-replay"


class WorkloadPlan:
    """A Deployment, Job or CronJob of the plan. The replay creates it through the API a few
    events before its first pod (LOOKAHEAD); kube-controller-manager makes its ReplicaSet or
    Job and its pods (with its own owner references) from the pod template below, which names
    the replay's scheduler, so the replay binds and runs them like its bare pods. The plan's
    pods of one workload share its template (their labels and containers), and a Job's pods
    run one after another (parallelism 1), since the Job controller makes the next only when
    one finishes."""

    def __init__(self, kind, ns, name, labels, containers, restart_policy, pods=1):
        self.kind, self.ns, self.name = kind, ns, name
        self.labels, self.containers = labels, containers
        self.restart_policy = restart_policy
        self.pods = pods               # replicas (Deployment) or completions (Job, CronJob)

    def id(self):
        """Its workload as docs/workloads.md names it: what the controller must say."""
        return "%s/%s/%s" % (self.kind, self.ns, self.name)

    def selector(self):
        return "%s=%s.%s" % (WORKLOAD_LABEL, self.kind.lower(), self.name)


# How many events ahead of its first pod the replay creates a workload.
LOOKAHEAD = 25

# Marks the pods of a plan's workload, so the replay finds the ones KCM made (not a team or
# project key: attribution ignores it).
WORKLOAD_LABEL = "replay.e2e.gpu-cost.io/workload"


class PodPlan:
    """One pod of the plan. Times are offsets from the anchor in seconds; end INF = holds its
    GPUs past the end of the replay (still running, or deleted in real time)."""

    def __init__(self, name, ns, labels, containers, candidates, arrival, duration,
                 init_containers=None, outcome="Succeeded", restart_policy="Never",
                 fate="normal", direct=False, workload=None):
        self.name, self.ns, self.labels = name, ns, labels
        # A WorkloadPlan when kube-controller-manager makes the pod (Deployment, Job, CronJob):
        # `name` is then the plan's placeholder until the replay claims the pod KCM created.
        self.workload = workload
        self.containers, self.init_containers = containers, init_containers or []
        self.candidates = candidates
        self.arrival, self.duration = int(arrival), duration
        self.outcome = outcome            # Succeeded or Failed when it finishes
        self.restart_policy = restart_policy
        # normal | deleted_running | graceful | terminated_then_deleted | bound_pending |
        # bound_pending_deleted | unbound
        self.fate = fate
        self.direct = direct              # spec.nodeName at creation instead of a binding
        self.cleanup_after = None         # delete this long after finishing
        self.node = None
        self.bound = None
        self.end = None                   # planned end (offset) or INF
        self.reclaimed = False

    def gpu_units(self):
        """{resource: units} as the scheduler counts them (the effective request)."""
        out = {}
        for c in self.containers:
            for r, v in _res(c).items():
                out[r] = out.get(r, 0) + v
        side, best = {}, {}
        for c in self.init_containers:
            for r, v in _res(c).items():
                if c.get("restartPolicy") == "Always":
                    side[r] = side.get(r, 0) + v
                else:
                    best[r] = max(best.get(r, 0), v + side.get(r, 0))
        for r, v in side.items():
            out[r] = out.get(r, 0) + v
        for r, v in best.items():
            out[r] = max(out.get(r, 0), v)
        return out


def _res(c):
    r = c.get("resources", {})
    d = dict(r.get("limits", {}))
    d.update(r.get("requests", {}))
    return {k: int(v) for k, v in d.items() if k.startswith("nvidia.com/")}


def container(name, gpus=None, style="limits", image="nvcr.io/nvidia/pytorch:24.05-py3",
              cpu="2"):
    """A container asking for `gpus` ({resource: n}): in limits only (the API server copies
    them to requests), or in both."""
    res = {"requests": {"cpu": cpu, "memory": "8Gi"}, "limits": {"memory": "8Gi"}}
    for k, v in (gpus or {}).items():
        res["limits"][k] = str(v)
        if style == "both":
            res["requests"][k] = str(v)
    return {"name": name, "image": image, "resources": res}


# The T4 jobs run the container of NVIDIA's time-slicing verification Deployment.
VECTORADD = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04"


def make_plan(seed=SEED):
    """The week's pods, before scheduling. Deterministic for a seed."""
    rng = random.Random(seed)
    pods = []
    counter = {}

    def add(prefix, *a, **kw):
        counter[prefix] = counter.get(prefix, 0) + 1
        p = PodPlan("%s-%04d" % (prefix, counter[prefix]), *a, **kw)
        pods.append(p)
        return p

    def arrivals(n, lo, hi):
        return sorted(rng.uniform(lo, hi) for _ in range(n))

    def loguniform(lo, hi):
        return int(lo * (hi / lo) ** rng.random())

    # Multi-day training on whole GPUs: on-demand H100s or spot A100s (reclaimed at 6.5 d).
    for t in arrivals(12, 0.05 * DAY, 7.3 * DAY):
        if rng.random() < 0.5:
            cands, n = ["p5-h100-0"], rng.choice([2, 4])
        else:
            cands, n = ["p4d-a100-spot-0"], rng.choice([2, 4, 8])
        if rng.random() < 0.5:
            ns, lab = "ml-research", {"project": rng.choice(["detector", "segmentation"])}
        else:
            ns, lab = "nlp", rng.choice([{}, {"project": "llm-finetune"}])
        # Each one a Job of its own (backoffLimit 0: a failed run is not retried); the Job
        # controller labels its pods with the Job's name.
        c = [container("trainer", {"nvidia.com/gpu": n}, "both")]
        p = add("train", ns, lab, c, cands, t, rng.randint(18 * HOUR, int(3.5 * DAY)),
                outcome="Failed" if rng.random() < 0.15 else "Succeeded")
        p.workload = WorkloadPlan("Job", ns, p.name, lab, c, "Never")

    # Notebooks on the single reserved H100 (the project from the second project key).
    t = 0.1 * DAY
    while t < SPAN:
        add("notebook", "ml-research", {"app.kubernetes.io/project": "notebooks"},
            [container("notebook", {"nvidia.com/gpu": 1}, "limits",
                       "quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27")],
            ["s4124-0073"], t, rng.randint(1 * HOUR, 8 * HOUR), restart_policy="Always")
        t += rng.uniform(5 * HOUR, 14 * HOUR)

    # MIG slices on the MIG-mixed H100s: inference and experiments of assorted sizes.
    for t in arrivals(90, 0.02 * DAY, SPAN - 600):
        prof, n = rng.choice([("mig-1g.10gb", 1), ("mig-1g.10gb", 2), ("mig-2g.20gb", 1),
                              ("mig-3g.40gb", 1)])
        if rng.random() < 0.6:
            ns, lab = "recsys", {"project": rng.choice(["ranker", "ctr-model"])}
        else:
            ns, lab = "ml-research", {"project": "embeddings"}
        add("mig", ns, lab, [container("server", {"nvidia.com/" + prof: n},
                                       rng.choice(["limits", "both"]))],
            ["p5-h100-mig-0"], t, loguniform(10 * 60, 12 * HOUR),
            outcome="Failed" if rng.random() < 0.1 else "Succeeded")

    # MIG single on the second spot node (from 2.5 d): legacy batch (team from the config's
    # namespace map, project from cost-center), unlabelled sandbox jobs, LLM evaluation.
    for t in arrivals(45, SPOT1_CREATED + 600, SPAN - 600):
        u = rng.random()
        if u < 0.5:
            ns, lab = "legacy-batch", {"cost-center": "cc-4410"}
        elif u < 0.8:
            ns, lab = "sandbox", {}
        else:
            ns, lab = "nlp", {"project": "llm-eval"}
        add("batch", ns, lab, [container("job", {"nvidia.com/gpu": rng.randint(1, 3)})],
            ["p4d-a100-spot-1"], t, loguniform(5 * 60, 6 * HOUR))

    # 30-second jobs on time-sliced T4 shares (the verification Deployment's container).
    for t in arrivals(220, 0.01 * DAY, SPAN - 120):
        u = rng.random()
        if u < 0.5:
            ns, lab = "ml-research", {"team": "vision", "project": "ci"}
        elif u < 0.75:
            ns, lab = "sandbox", {}
        else:
            ns, lab = "legacy-batch", {"project": "smoke-tests"}
        add("ci", ns, lab, [container("cuda-sample-vector-add", {"nvidia.com/gpu": 1}, "limits",
                                      VECTORADD, cpu="100m")],
            ["g4dn-t4-ts-0"], t, 30, outcome="Failed" if rng.random() < 0.05 else "Succeeded")

    # Longer time-sliced jobs holding two shares.
    for t in arrivals(30, 0.1 * DAY, SPAN - 600):
        add("tokenize", "nlp", rng.choice([{}, {"project": "tokenizer"}]),
            [container("tok", {"nvidia.com/gpu": 2}, "both", VECTORADD)],
            ["g4dn-t4-ts-0"], t, rng.randint(1 * HOUR, 4 * HOUR))

    # A long-running inference service on the on-prem A16, a Deployment of one replica: its pod
    # fails once and the ReplicaSet replaces it.
    lab = {"project": "triton-serving", "app": "triton"}
    c = [container("triton", {"nvidia.com/gpu": 1}, "limits",
                   "nvcr.io/nvidia/tritonserver:24.05-py3")]
    triton = WorkloadPlan("Deployment", "platform", "triton", lab, c, "Always")
    add("triton", "platform", lab, c, ["nori"], 0.05 * DAY, int(3.2 * DAY) - int(0.05 * DAY),
        outcome="Failed", restart_policy="Always", workload=triton)
    add("triton", "platform", lab, c, ["nori"], 3.2 * DAY + 240, INF, restart_policy="Always",
        workload=triton)

    # Effective requests: an init container asking for more GPUs than the app, a GPU sidecar,
    # two GPU containers ending at different times.
    add("init-gpu", "ml-research", {"project": "detector"},
        [container("train", {"nvidia.com/gpu": 1}, "both")], ["p5-h100-0"], 1.3 * DAY, 6 * HOUR,
        init_containers=[container("warmup", {"nvidia.com/gpu": 2}, "both")])
    side = container("profiler", {"nvidia.com/gpu": 1}, "both")
    side["restartPolicy"] = "Always"
    add("sidecar-gpu", "nlp", {"project": "llm-finetune"},
        [container("train", {"nvidia.com/gpu": 1}, "both")], ["p5-h100-0"], 2.2 * DAY, 3 * HOUR,
        init_containers=[side])
    add("multi", "recsys", {"project": "ranker"},
        [container("a", {"nvidia.com/gpu": 1}), container("b", {"nvidia.com/gpu": 1})],
        ["p5-h100-0"], 1.0 * DAY, 2 * HOUR)

    # Bound but never started (image pull back-off): holds its GPU from the binding on.
    add("stuck", "ml-research", {"project": "detector"},
        [container("train", {"nvidia.com/gpu": 1})], ["p4d-a100-spot-1"], 5.2 * DAY, INF,
        fate="bound_pending")
    add("stuck", "recsys", {"project": "ranker"},
        [container("server", {"nvidia.com/mig-1g.10gb": 1})], ["p5-h100-mig-0"], 7.6 * DAY,
        int(0.1 * DAY), fate="bound_pending_deleted")
    # Never bound (too big for any node): costs nothing.
    for i in range(2):
        add("unschedulable", "nlp", {"project": "llm-pretrain"},
            [container("train", {"nvidia.com/gpu": 16}, "both")], [], (2 + 3 * i) * DAY, INF,
            fate="unbound")

    # Pods without GPUs: CPU jobs, and a per-node exporter written with spec.nodeName.
    for t in arrivals(20, 0.1 * DAY, SPAN - 3600):
        add("cpu", "platform", {"project": "etl"}, [container("etl", None, cpu="4")], ["cpu-0"], t,
            rng.randint(60, 3 * HOUR))
    for name in ["p5-h100-0", "p5-h100-mig-0", "g4dn-t4-ts-0"]:
        add("dcgm-exporter", "platform", {"app": "dcgm-exporter"},
            [container("exporter", None, image="nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5",
                       cpu="100m")], [name], 600, INF, restart_policy="Always", direct=True)

    # Fates decided before scheduling (a pod deleted in real time holds its GPUs to the end).
    late = [p for p in pods if p.name.startswith(("mig-", "tokenize-"))
            and p.arrival > SPAN - 1.5 * DAY and p.fate == "normal"]
    for p in rng.sample(late, 6):
        p.fate = "deleted_running"
    for p in rng.sample([p for p in late if p.fate == "normal"], 2):
        p.fate = "graceful"
    onp5 = [p for p in pods if p.name.startswith("train-") and p.candidates == ["p5-h100-0"]
            and p.arrival > SPAN - 3 * DAY]
    for p in onp5[:1]:
        p.fate = "deleted_running"
    early = [p for p in pods if p.name.startswith("mig-") and p.fate == "normal"
             and p.arrival < SPAN - 2 * DAY]
    for p in rng.sample(early, 3):
        p.fate = "terminated_then_deleted"
    for p in pods:
        if p.fate == "normal" and p.name.startswith(("mig-", "batch-", "ci-", "train-")) \
                and rng.random() < 0.35:
            p.cleanup_after = rng.randint(300, DAY)
    # A CronJob of LLM evaluations on MIG slices. kube-controller-manager runs it once during
    # the replay (Replay._create_workload); its Job has three completions, one after another,
    # spread over the week, the first within a day of the start, so the complete ISO weeks
    # hold one whatever the weekday. Its own random stream: the pods above stay as they were.
    erng = random.Random(seed + 2)
    lab = {"project": "llm-eval", "app": "nightly-eval"}
    c = [container("eval", {"nvidia.com/mig-1g.10gb": 1}, "both")]
    cron = WorkloadPlan("CronJob", "nlp", "nightly-eval", lab, c, "Never", pods=3)
    for day in (0.3, 3, 5.5):
        add("eval", "nlp", lab, c, ["p5-h100-mig-0"], day * DAY + erng.randint(0, 4 * HOUR),
            erng.randint(1 * HOUR, 3 * HOUR), workload=cron)
    return pods


class Scheduler:
    """First come, first served placement that never exceeds a node's allocatable units."""

    def __init__(self, nodes):
        self.nodes = {n.name: n for n in nodes}
        self.held = {n.name: [] for n in nodes}   # (start, end, {res: units})

    def _fits(self, node, units, start, end):
        cap = node.gpu_units()
        if any(cap.get(r, 0) < u for r, u in units.items()):
            return False
        held = self.held[node.name]
        points = [start] + [s for s, e, _ in held if start < s < end]
        for t in points:
            use = {}
            for s, e, u in held:
                if s <= t < e:
                    for r, v in u.items():
                        use[r] = use.get(r, 0) + v
            if any(use.get(r, 0) + v > cap.get(r, 0) for r, v in units.items()):
                return False
        return True

    def place(self, p):
        units = p.gpu_units()
        for delay in range(0, DAY + 1, 300):
            start = p.arrival + delay
            if start > SPAN - 60:
                return False
            for name in p.candidates:
                node = self.nodes[name]
                if start < node.created + 60:
                    continue
                if node.reclaim_at is not None and start >= node.reclaim_at - 600:
                    continue
                end = INF if p.duration == INF else start + p.duration
                if p.fate in ("deleted_running", "graceful", "bound_pending"):
                    end = INF
                if node.reclaim_at is not None and end > node.reclaim_at:
                    end = node.reclaim_at
                    p.reclaimed = True
                if units and not self._fits(node, units, start, end):
                    p.reclaimed = False
                    continue
                self.held[name].append((start, end, units))
                p.node, p.bound = name, start
                p.end = end if end == INF else int(end)
                return True
        return False


def schedule(plan, nodes):
    sched = Scheduler(nodes)
    placed = []
    for p in sorted(plan, key=lambda p: (p.arrival, p.name)):
        if p.fate == "unbound":
            placed.append(p)
        elif sched.place(p):
            placed.append(p)
    # The Job controller makes a Job's next pod only when one has finished (parallelism 1).
    last = {}
    for p in placed:
        w = p.workload
        if w is None or w.kind == "Deployment":
            continue
        if w in last and (last[w].end == INF or p.bound < last[w].end):
            raise AssertionError("plan: %s of %s starts before the one before it ends" % (
                p.name, w.id()))
        last[w] = p
    # (A one-pod Job whose pod found no room is left out with it.)
    for w in {p.workload for p in plan if p.workload and p.workload.pods > 1}:
        if sum(1 for p in placed if p.workload is w) != w.pods:
            raise AssertionError("plan: a pod of %s was not placed" % w.id())
    return placed


# ---- the events -----------------------------------------------------------------------------

class Event:
    __slots__ = ("t", "seq", "kind", "pod")

    def __init__(self, t, seq, kind, pod):
        self.t, self.seq, self.kind, self.pod = t, seq, kind, pod


def events_for(pods, nodes):
    ev = []

    def add(t, kind, p):
        if t <= SPAN:
            ev.append(Event(int(t), len(ev), kind, p))

    for p in pods:
        if p.fate == "unbound":
            add(p.arrival, "create", p)
            continue
        add(p.bound, "create", p)
        if p.end == INF and p.fate in ("normal", "bound_pending"):
            continue
        if p.reclaimed:
            add(p.end, "finish", p)
            if p.cleanup_after:
                add(p.end + p.cleanup_after, "delete", p)
        elif p.fate == "normal":
            add(p.end, "finish", p)
            if p.cleanup_after:
                add(p.end + p.cleanup_after, "delete", p)
        elif p.fate == "terminated_then_deleted":
            add(p.end, "terminate_containers", p)
            add(p.end + 120, "delete", p)
        elif p.fate in ("deleted_running", "bound_pending_deleted"):
            add(max(p.bound + 60, min(p.bound + p.duration, SPAN - 120)), "delete", p)
        elif p.fate == "graceful":
            t = max(p.bound + 60, min(p.bound + p.duration, SPAN - 900))
            add(t, "delete_graceful", p)
            add(t + 600, "delete", p)
    for n in nodes:
        if n.delete_at_end:
            add(SPAN, "node_delete", n)
    ev.sort(key=lambda e: (e.t, e.seq))
    return ev


def node_object(n, anchor, uid):
    """The Node the replay writes for spec n, created at anchor + n.created."""
    created = anchor + n.created
    status = {"capacity": dict(n.allocatable), "allocatable": dict(n.allocatable),
              "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                              "message": "kubelet is posting ready status",
                              "lastHeartbeatTime": rfc3339(created + 60),
                              "lastTransitionTime": rfc3339(created + 60)}]}
    status["capacity"].update(n.extra_status.get("capacity", {}))
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n.name, "uid": uid, "creationTimestamp": rfc3339(created),
                         "labels": n.labels, "annotations": n.annotations},
            "spec": {"providerID": "e2e://%s" % n.name}, "status": status}


@functools.lru_cache(maxsize=2)
def _plan_events(seed):
    nodes = node_specs()
    return nodes, events_for(schedule(make_plan(seed), nodes), nodes)


def plan_record(now, seed=SEED):
    """What Replay(now=now).record() holds after a whole run, computed from the plan alone,
    with no API server: the calendar test (test_calendar.py) asks, at fixed moments of the
    week, month and year, whether the periods the e2e tests choose hold what they assert
    about their own truth. Pods made by kube-controller-manager keep the plan's placeholder
    names; pods deleted while holding their GPUs end at `now`, as the replay's real-time
    deletions end at the moment it runs them; nodes deleted at the end go then too."""
    anchor = anchor_for(now)
    nodes, events = _plan_events(seed)
    pods = {}
    for e in events:
        p = e.pod
        if e.kind == "node_delete":
            continue
        if e.kind == "create":
            w = p.workload
            labels = dict(w.labels, **{WORKLOAD_LABEL: w.selector().split("=", 1)[1]}) \
                if w is not None else dict(p.labels)
            spec = {"containers": w.containers if w is not None else p.containers}
            if p.init_containers and w is None:
                spec["initContainers"] = p.init_containers
            pods[p.name] = {"namespace": p.ns, "name": p.name, "labels": labels,
                            "spec": json.loads(json.dumps(spec)), "fate": p.fate,
                            "node": None if p.fate == "unbound" else p.node,
                            "bound": None if p.fate == "unbound" else anchor + e.t,
                            "end": None, "deleted": False}
            if w is not None:
                pods[p.name]["workload"] = w.id()
            continue
        rec = pods[p.name]
        if e.kind in ("finish", "terminate_containers"):
            rec["end"] = anchor + e.t
        elif e.kind == "delete":
            rec["deleted"] = True
            if rec["end"] is None and rec["bound"] is not None:
                rec["end"] = int(now)
    return {"anchor": anchor,
            "nodes": [{"object": node_object(n, anchor, "plan-%s" % n.name),
                       "deleted_at": int(now) if n.delete_at_end else None} for n in nodes],
            "namespaces": [{"metadata": {"name": ns, "labels": lab}}
                           for ns, lab in NAMESPACES.items()],
            "pods": list(pods.values())}


# ---- the replay -----------------------------------------------------------------------------

def _cid(rng):
    return "containerd://%064x" % rng.getrandbits(256)


class Replay:
    """Writes the plan to the API server in time order and records what it wrote.

    hooks: [(fraction, fn)]: fn(replay) runs before the event at that fraction of the
    replay, e.g. to kill the controller or restart kube-apiserver.

    hold_back(kinds) queues events of those kinds (and every later event of a pod with a
    queued event, so each pod's history stays in order) until release(). Fault scenarios do
    not hold events back: churn goes on during every outage, and the controller's resumed
    watches replay it (test_faults.py). The few that do say why in a comment: a forced 410
    while running, whose gap is a blind span by definition, and a blind-span scenario whose
    back-dated deletions would end at the checkpoint's real time, days after their record.
    """

    def __init__(self, api, etcd, now=None, seed=SEED, log=None):
        self.api, self.etcd = api, etcd
        self.started = now if now is not None else time.time()
        self.anchor = anchor_for(self.started)
        self.rng = random.Random(seed + 1)
        self.nodes = node_specs()
        self.plan = schedule(make_plan(seed), self.nodes)
        self.events = events_for(self.plan, self.nodes)
        self.log = log or (lambda msg: None)
        self.holding = set()
        self.held = []
        self.held_pods = set()
        self.pods = {}        # name -> record (see record())
        self.node_objs = {}   # name -> {"object": ..., "deleted_at": t | None}
        self.ns_objs = {}
        self.done = 0
        self.made = {}          # WorkloadPlan -> the object as created through the API
        self.claimed = set()    # uids of KCM's pods the replay has taken for plan pods
        self.dropped = set()    # plan pods a deletion out of plan left without a pod
        self.finalizing = []    # paths of deleted pods a finalizer keeps for a moment

    def ts(self, off):
        return rfc3339(self.anchor + off)

    # -- setup: namespaces and nodes, before any controller starts
    def setup(self):
        for ns in [CONTROLLER_NS] + list(NAMESPACES):
            body = {"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": ns, "labels": NAMESPACES.get(ns, {})}}
            status, doc = self.api.request("POST", "/api/v1/namespaces", body)
            if status == 409:
                doc = self.api.get("/api/v1/namespaces/" + ns)
            elif status != 201:
                raise ApiError("POST", "/api/v1/namespaces", status, doc)
            self.ns_objs[ns] = doc
        for n in self.nodes:
            self.node_objs[n.name] = {"object": self._inject_node(n), "deleted_at": None}

    def _inject_node(self, n):
        """A Node with a back-dated creationTimestamp: written into etcd (the API server
        would stamp the current time), then read back through the API."""
        created = self.anchor + n.created
        obj = node_object(n, self.anchor, str(uuid.UUID(int=self.rng.getrandbits(128),
                                                          version=4)))
        self.etcd.put("/registry/minions/" + n.name, json.dumps(obj))
        got = self.api.get("/api/v1/nodes/" + n.name)
        if got["metadata"]["creationTimestamp"] != rfc3339(created):
            raise AssertionError("node %s: creationTimestamp %s, wanted %s" % (
                n.name, got["metadata"]["creationTimestamp"], rfc3339(created)))
        return got

    # -- the replay itself
    def run(self, hooks=(), start=0, stop=None, release=True):
        """Events [start, stop); at the end of the plan, held events run too unless
        release=False."""
        n = len(self.events)
        stop = n if stop is None else stop
        marks = sorted((int(f * n), i, fn) for i, (f, fn) in enumerate(hooks))
        for idx in range(start, stop):
            while marks and marks[0][0] <= idx:
                marks.pop(0)[2](self)
            self._prepare(idx + LOOKAHEAD)
            self._apply(self.events[idx])
            self.done = idx + 1
        for _, _, fn in marks:
            fn(self)
        if stop == n and release:
            self.release()
        if stop == n:
            self.settle()

    def settle(self, timeout=60):
        """Waits until the pods deleted with a finalizer still on them (a Job's pod, until the
        Job controller has counted it) are gone, so the API shows what the record says."""
        deadline = time.time() + timeout
        while self.finalizing:
            self.finalizing = [path for path in self.finalizing if self.api.exists(path)]
            if self.finalizing and time.time() > deadline:
                raise AssertionError("deleted pods still there after %d s: %s" % (
                    timeout, self.finalizing))
            if self.finalizing:
                time.sleep(0.1)

    def hold_back(self, *kinds):
        """kinds: "create", "delete" (pod and node deletions, graceful ones included)."""
        for k in kinds:
            self.holding |= {"delete": {"delete", "delete_graceful", "node_delete"}}.get(k, {k})

    def release(self):
        """Runs the held events in their order and stops holding."""
        self.holding = set()
        queued, self.held = self.held, []
        self.held_pods = set()
        for e in queued:
            self._apply(e)
        return len(queued)

    def _apply(self, e):
        p = e.pod
        if e.kind in self.holding or (e.kind != "node_delete" and p.name in self.held_pods):
            self.held.append(e)
            if e.kind != "node_delete":
                self.held_pods.add(p.name)
            return
        if e.kind == "node_delete":
            self.api.call("DELETE", "/api/v1/nodes/" + p.name)
            self.node_objs[p.name]["deleted_at"] = int(time.time())
            return
        rec = self.pods.get(p.name)
        if (rec is not None and rec["deleted"]) or p in self.dropped:
            return  # deleted out of plan by a scenario (delete_pod_now)
        getattr(self, "_ev_" + e.kind)(p, e.t)

    def _path(self, p, sub=""):
        return "/api/v1/namespaces/%s/pods/%s%s" % (p.ns, p.name, sub)

    # -- workloads of kube-controller-manager

    def _prepare(self, idx):
        """Creates the workload of a pod whose creation is a few events ahead, so that
        kube-controller-manager has made the pod when the replay comes to it (nothing waits
        then). Not while creations are held back."""
        if idx >= len(self.events) or "create" in self.holding:
            return
        e = self.events[idx]
        if e.kind == "create" and e.pod.workload is not None and \
                e.pod.workload not in self.made and e.pod not in self.dropped:
            self._create_workload(e.pod.workload)

    def _template(self, w):
        labels = dict(w.labels, **{WORKLOAD_LABEL: w.selector().split("=", 1)[1]})
        return {"metadata": {"labels": labels},
                "spec": {"containers": w.containers, "restartPolicy": w.restart_policy,
                         "terminationGracePeriodSeconds": 30,
                         "schedulerName": REPLAY_SCHEDULER}}

    def _job_spec(self, w):
        # One pod at a time, none retried: the plan says when each runs and how it ends.
        return {"completions": w.pods, "parallelism": 1, "backoffLimit": 0,
                "template": self._template(w)}

    def _create_workload(self, w):
        """Creates the Deployment, Job or CronJob through the API; kube-controller-manager
        makes the rest. A CronJob fires at its schedule, and a new one would wait for the next
        minute at least: it is given a daily schedule at the current minute and, through its
        status, a last run a day ago, so the CronJob controller starts today's run at once
        (about a second) instead of in up to 60 s."""
        base = "/apis/%s/namespaces/" + w.ns + "/%s"
        meta = {"name": w.name, "labels": dict(w.labels)}
        if w.kind == "Deployment":
            doc = self.api.call("POST", base % ("apps/v1", "deployments"), {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                "spec": {"replicas": w.pods, "selector": {"matchLabels": {
                    WORKLOAD_LABEL: w.selector().split("=", 1)[1]}},
                    "template": self._template(w)}})
        elif w.kind == "Job":
            doc = self.api.call("POST", base % ("batch/v1", "jobs"), {
                "apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                "spec": self._job_spec(w)})
        elif w.kind == "CronJob":
            now = time.gmtime()
            doc = self.api.call("POST", base % ("batch/v1", "cronjobs"), {
                "apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
                "spec": {"schedule": "%d %d * * *" % (now.tm_min, now.tm_hour),
                         "concurrencyPolicy": "Forbid",
                         "jobTemplate": {"metadata": {"labels": dict(w.labels)},
                                         "spec": self._job_spec(w)}}})
            minute = calendar.timegm(now) // 60 * 60
            self.api.merge_patch(base % ("batch/v1", "cronjobs") + "/%s/status" % w.name,
                                 {"status": {"lastScheduleTime": rfc3339(minute - DAY)}})
        else:
            raise ValueError(w.kind)
        self.made[w] = doc

    def _claim(self, p, timeout=60):
        """The pod kube-controller-manager made for the plan pod p: the oldest of its workload's
        pods that is not bound, not being deleted and not taken yet. Waits for it (the
        ReplicaSet, Job and CronJob controllers take from milliseconds to about a second)."""
        w = p.workload
        path = "/api/v1/namespaces/%s/pods?labelSelector=%s" % (
            w.ns, urllib.parse.quote(w.selector()))
        deadline = time.time() + timeout
        while True:
            items = self.api.get(path)["items"]
            free = sorted((x for x in items
                           if not x["spec"].get("nodeName")
                           and not x["metadata"].get("deletionTimestamp")
                           and x["metadata"]["uid"] not in self.claimed
                           and x["status"].get("phase") == "Pending"),
                          key=lambda x: (x["metadata"]["creationTimestamp"],
                                         x["metadata"]["name"]))
            if free:
                self.claimed.add(free[0]["metadata"]["uid"])
                return free[0]
            if time.time() > deadline:
                raise AssertionError("%s: no new pod from kube-controller-manager after %d s "
                                     "(its pods: %s)" % (w.id(), timeout, [
                                         (x["metadata"]["name"], x["status"].get("phase"))
                                         for x in items]))
            time.sleep(0.05)

    def _ev_create(self, p, t):
        if p.workload is not None:
            return self._create_owned(p, t)
        spec = {"containers": p.containers, "restartPolicy": p.restart_policy,
                "terminationGracePeriodSeconds": 30, "schedulerName": REPLAY_SCHEDULER}
        if p.init_containers:
            spec["initContainers"] = p.init_containers
        if p.direct:
            spec["nodeName"] = p.node
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": p.name, "namespace": p.ns, "labels": p.labels},
                "spec": spec}
        doc = self.api.call("POST", "/api/v1/namespaces/%s/pods" % p.ns, body)
        rec = {"namespace": p.ns, "name": p.name, "uid": doc["metadata"]["uid"],
               "labels": dict(p.labels), "spec": json.loads(json.dumps(spec)), "node": None,
               "bound": None, "end": None, "fate": p.fate, "deleted": False,
               "deletion_timestamp": None}
        self.pods[p.name] = rec
        if p.fate == "unbound":
            self.api.merge_patch(self._path(p, "/status"), {"status": {
                "phase": "Pending", "conditions": [{
                    "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "lastTransitionTime": self.ts(t),
                    "message": "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."}]}})
            return
        if not p.direct:
            self.api.call("POST", self._path(p, "/binding"), {
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": p.name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": p.node}})
        rec["node"], rec["bound"] = p.node, self.anchor + t
        self.api.merge_patch(self._path(p, "/status"), {"status": self._status_start(p, t)})

    def _create_owned(self, p, t):
        """A pod of a Deployment, Job or CronJob: made by kube-controller-manager (now, so its
        creationTimestamp is today's), then bound and run by the replay at its back-dated plan
        times like any other pod."""
        if p.workload not in self.made:
            self._create_workload(p.workload)
        doc = self._claim(p)
        p.name = doc["metadata"]["name"]
        refs = [r for r in doc["metadata"].get("ownerReferences") or [] if r.get("controller")]
        self.pods[p.name] = {
            "namespace": p.ns, "name": p.name, "uid": doc["metadata"]["uid"],
            "labels": dict(doc["metadata"].get("labels") or {}),
            "spec": json.loads(json.dumps(doc["spec"])), "node": None, "bound": None,
            "end": None, "fate": p.fate, "deleted": False, "deletion_timestamp": None,
            "workload": p.workload.id(),
            "owner": "%s/%s" % (refs[0]["kind"], refs[0]["name"]) if refs else None}
        self.api.call("POST", self._path(p, "/binding"), {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": p.name},
            "target": {"apiVersion": "v1", "kind": "Node", "name": p.node}})
        rec = self.pods[p.name]
        rec["node"], rec["bound"] = p.node, self.anchor + t
        self.api.merge_patch(self._path(p, "/status"), {"status": self._status_start(p, t)})

    def _conditions(self, t, ready_at=None, ready=True, reason=None):
        c = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": self.ts(t)},
             {"type": "Initialized", "status": "True",
              "lastTransitionTime": self.ts(ready_at or t)}]
        for typ in ("ContainersReady", "Ready"):
            d = {"type": typ, "status": "True" if ready else "False",
                 "lastTransitionTime": self.ts(ready_at or t)}
            if reason:
                d["reason"] = reason
            c.append(d)
        return c

    def _times(self, p):
        """startTime and container start of a bound pod (seconds after binding)."""
        short = p.duration != INF and p.duration < 120
        start = p.bound + (1 if short else 2)
        started = start + (2 if short else 5 + len(p.name) % 20)
        if p.init_containers:
            started = max(started, p.bound + 600)
        return start, started

    def _cs(self, c, state, ready):
        return {"name": c["name"], "image": c["image"], "imageID": "", "restartCount": 0,
                "ready": ready, "started": ready, "containerID": _cid(self.rng), "state": state}

    def _status_start(self, p, t):
        start, started = self._times(p)
        st = {"startTime": self.ts(start), "hostIP": "10.0.0.7", "podIP": "10.1.0.%d" % (
            1 + len(self.pods) % 250)}
        if p.fate in ("bound_pending", "bound_pending_deleted"):
            st["phase"] = "Pending"
            st["conditions"] = self._conditions(t, ready=False, reason="ContainersNotReady")
            st["containerStatuses"] = [self._cs(c, {"waiting": {
                "reason": "ImagePullBackOff",
                "message": "Back-off pulling image \"%s\"" % c["image"]}}, False)
                for c in p.containers]
            return st
        st["phase"] = "Running"
        st["conditions"] = self._conditions(t, started)
        st["containerStatuses"] = [self._cs(c, {"running": {"startedAt": self.ts(started)}}, True)
                                   for c in p.containers]
        if p.init_containers:
            st["initContainerStatuses"] = [self._init_status(p, c, start, started, None)
                                           for c in p.init_containers]
        return st

    def _init_status(self, p, c, start, started, end):
        if c.get("restartPolicy") == "Always":
            if end is None:
                return self._cs(c, {"running": {"startedAt": self.ts(start + 1)}}, True)
            return self._cs(c, {"terminated": {"exitCode": 0, "reason": "Completed",
                                               "startedAt": self.ts(start + 1),
                                               "finishedAt": self.ts(end)}}, False)
        return self._cs(c, {"terminated": {"exitCode": 0, "reason": "Completed",
                                           "startedAt": self.ts(start + 1),
                                           "finishedAt": self.ts(started - 1)}}, False)

    def _terminated(self, p, end, failed):
        """Container statuses at the end: the last container finishes at `end`, earlier
        ones a little before it (the pod's end is the latest finishedAt)."""
        start, started = self._times(p)
        out = []
        k = len(p.containers)
        for i, c in enumerate(p.containers):
            fin = end - 60 * (k - 1 - i) if k > 1 else end
            fin = max(fin, started)
            out.append(self._cs(c, {"terminated": {
                "exitCode": 137 if p.reclaimed else (1 if failed else 0),
                "reason": "Error" if failed else "Completed",
                "startedAt": self.ts(started), "finishedAt": self.ts(fin)}}, False))
        return start, started, out

    def _ev_finish(self, p, t):
        failed = p.outcome == "Failed" or p.reclaimed
        start, started, cs = self._terminated(p, t, failed)
        st = {"phase": "Failed" if failed else "Succeeded",
              "conditions": self._conditions(p.bound, started, ready=False,
                                             reason="PodFailed" if failed else "PodCompleted"),
              "containerStatuses": cs}
        if p.reclaimed:
            st["reason"] = "Terminated"
            st["message"] = "Pod was terminated in response to imminent node shutdown."
        if p.init_containers:
            st["initContainerStatuses"] = [self._init_status(p, c, start, started, t)
                                           for c in p.init_containers]
        self.api.merge_patch(self._path(p, "/status"), {"status": st})
        self.pods[p.name]["end"] = self.anchor + t

    def _ev_terminate_containers(self, p, t):
        # Every container has stopped but the pod still says Running (the kubelet has not
        # moved the phase yet); it is deleted a little later. Its end is the finishedAt.
        start, started, cs = self._terminated(p, t, False)
        self.api.merge_patch(self._path(p, "/status"), {"status": {
            "phase": "Running", "containerStatuses": cs,
            "conditions": self._conditions(p.bound, started, ready=False,
                                           reason="ContainersNotReady")}})
        self.pods[p.name]["end"] = self.anchor + t

    def _ev_delete_graceful(self, p, t):
        doc = self.api.call("DELETE", self._path(p))
        # No kubelet confirms it, so the pod stays with a deletionTimestamp in the future.
        self.pods[p.name]["graceful_deletion_timestamp"] = doc["metadata"]["deletionTimestamp"]

    def _ev_delete(self, p, t):
        rec = self.pods[p.name]
        if rec["deleted"]:
            return
        doc = self.api.call("DELETE", self._path(p), {"apiVersion": "v1", "kind": "DeleteOptions",
                                                     "gracePeriodSeconds": 0})
        rec["deleted"] = True
        if (doc.get("metadata") or {}).get("finalizers"):
            self.finalizing.append(self._path(p))
        dts = (doc.get("metadata") or {}).get("deletionTimestamp")
        rec["deletion_timestamp"] = dts
        if rec["end"] is None and rec["bound"] is not None:
            # Deleted while holding its GPUs: it held them until the deletion (real time).
            if not dts:
                raise AssertionError("DELETE of running pod %s answered without a "
                                     "deletionTimestamp" % p.name)
            rec["end"] = parse_rfc3339(dts)

    def delete_pod_now(self, name):
        """Deletes one pod at once (grace 0), outside the plan; its later events are dropped."""
        p = next(p for p in self.plan if p.name == name)
        self._ev_delete(p, None)
        self.pods[name]["fate"] = "deleted_out_of_plan"
        if p.workload is not None and p.workload.kind != "Deployment":
            # The Job fails (backoffLimit 0): its later pods will never be made.
            self.dropped |= {q for q in self.plan if q.workload is p.workload
                             and q.name not in self.pods}

    def running_pods(self):
        """Names of pods holding GPUs now, as recorded (bound, not ended, not deleted)."""
        return sorted(n for n, r in self.pods.items()
                      if r["bound"] is not None and r["end"] is None and not r["deleted"]
                      and any(k.startswith("nvidia.com/") for c in r["spec"]["containers"]
                              for k in c["resources"].get("limits", {})))

    # -- what the truth is computed from
    def record(self):
        return {"anchor": self.anchor,
                "nodes": list(self.node_objs.values()),
                "namespaces": list(self.ns_objs.values()),
                "pods": list(self.pods.values())}

    def stats(self):
        kinds = {}
        for e in self.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        return {"pods": len(self.plan), "events": len(self.events), "by_kind": kinds}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cluster", required=True, help="a directory of scripts/e2e-cluster.sh")
    ap.add_argument("--record", help="write the replay's record (JSON) here")
    ap.add_argument("--plan-only", action="store_true", help="print the plan's size and stop")
    a = ap.parse_args(argv)
    env = read_env(a.cluster)
    api = Api(env["E2E_SERVER"], env["E2E_CA"], env["E2E_ADMIN_TOKEN"])
    r = Replay(api, Etcd(env["E2E_ETCD_URL"]))
    print(json.dumps(r.stats()))
    if a.plan_only:
        return 0
    t0 = time.time()
    r.setup()
    r.run()
    print("replayed %d events with %d requests in %.1f s" % (len(r.events), api.requests,
                                                            time.time() - t0))
    if a.record:
        with open(a.record, "w") as f:
            json.dump(r.record(), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
