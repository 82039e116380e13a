#!/usr/bin/env python3
"""Writes examples/: a small GPU cluster as `kubectl get -o json` dumps, for `gpu-cost demo`.

Deterministic (fixed seed): running it twice writes the same bytes. The cluster is two ISO weeks
(2026-W46 and W47) plus six hours of 2026-11-23 of a mixed fleet:

  - two H100 80GB HBM3 nodes under MIG strategy mixed (EKS node groups: a capacity block, which
    is reserved capacity, and an on-demand group), 8 GPUs each as 1g.10gb x2 + 2g.20gb + 3g.40gb;
  - one H100 node of whole GPUs launched by Karpenter (on-demand);
  - two A100 40GB Karpenter spot nodes (us-east-1 and us-west-2) and an A100 on-demand EKS node
    whose price comes from a gpu-cost.io/usd-per-gpu-hour annotation;
  - an A100 40GB node under MIG strategy single (all 1g.5gb, 56 units of 1/7 GPU);
  - two GKE T4 nodes time-sliced 4 ways (4 GPUs, capacity 16, Tesla-T4-SHARED), one of them spot;
  - a GKE L4 node without GPU Feature Discovery labels that nobody uses (idle);
  - an on-premises DGX H100 on RKE2, priced by a node rule;
  - two CPU nodes and the usual non-GPU pods, which the decoder must skip.

Every pod is placed by a small scheduler so that no node ever holds more GPU units than it
offers: idle capacity is then never negative and the accounting is unambiguous.

Usage: scripts/gen-examples.py [OUTDIR]   (default: examples/ next to this script)
"""

import datetime as _dt
import json
import os
import random
import sys
import uuid

SEED = 20261123
NOW = "2026-11-23T06:00:00Z"
WINDOW = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
INF = 1 << 62

rng = random.Random(SEED)


def ep(s):
    """RFC 3339 UTC to epoch seconds."""
    return int(_dt.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")
               .replace(tzinfo=_dt.timezone.utc).timestamp())


def ts(t):
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


T_NOW = ep(NOW)
T_BEGIN = ep("2026-11-09T00:00:00Z")
HOUR = 3600
DAY = 86400

_rv = [4200117]


def rv():
    _rv[0] += rng.randint(3, 97)
    return str(_rv[0])


def uid():
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"


def sfx(n=5):
    return "".join(rng.choice(_SUFFIX) for _ in range(n))


def hexid(n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


# ---- nodes ------------------------------------------------------------------------------------

def gfd(product, count, memory, family, cc, machine, *, strategy="single", mig_capable=False,
        mig_config=None, replicas=1, sharing="none", driver="550.127.08"):
    """The label set GPU Feature Discovery and the GPU Operator write (see tests/fixtures/)."""
    major, minor, rev = driver.split(".")
    lab = {
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "feature.node.kubernetes.io/kernel-version.full": "5.15.0-1071-aws",
        "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
        "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",
        "nvidia.com/cuda.driver-version.full": driver,
        "nvidia.com/cuda.driver-version.major": major,
        "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.driver.major": major,
        "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.runtime-version.full": "12.4",
        "nvidia.com/cuda.runtime-version.major": "12",
        "nvidia.com/cuda.runtime-version.minor": "4",
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/cuda.runtime.minor": "4",
        "nvidia.com/gfd.timestamp": "1762%06d" % rng.randint(0, 999999),
        "nvidia.com/gpu-driver-upgrade-state": "upgrade-done",
        "nvidia.com/gpu.compute.major": cc[0],
        "nvidia.com/gpu.compute.minor": cc[1],
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.deploy.container-toolkit": "true",
        "nvidia.com/gpu.deploy.dcgm": "true",
        "nvidia.com/gpu.deploy.dcgm-exporter": "true",
        "nvidia.com/gpu.deploy.device-plugin": "true",
        "nvidia.com/gpu.deploy.driver": "true",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
        "nvidia.com/gpu.deploy.mig-manager": "true" if mig_capable else "false",
        "nvidia.com/gpu.deploy.node-status-exporter": "true",
        "nvidia.com/gpu.deploy.operator-validator": "true",
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.machine": machine,
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.replicas": str(replicas),
        "nvidia.com/gpu.sharing-strategy": sharing,
        "nvidia.com/mig.capable": "true" if mig_capable else "false",
        "nvidia.com/mig.strategy": strategy,
        "nvidia.com/mps.capable": "false",
    }
    if mig_config:
        lab["nvidia.com/mig.config"] = mig_config
        lab["nvidia.com/mig.config.state"] = "success"
    return lab


# MIG mixed, H100 80GB HBM3, "all-balanced": per GPU 2 x 1g.10gb, 1 x 2g.20gb, 1 x 3g.40gb.
H100_MIG_PROFILES = [
    # profile, per GPU, memory MiB, multiprocessors, gi/ci slices, decoders, jpeg
    ("1g.10gb", 2, 9856, 16, 1, 1, 1),
    ("2g.20gb", 1, 20096, 32, 2, 2, 2),
    ("3g.40gb", 1, 40320, 60, 3, 3, 3),
]


def h100_mig_mixed_labels(gpus):
    lab = gfd("NVIDIA-H100-80GB-HBM3", gpus, 81559, "hopper", ("9", "0"), "p5.48xlarge",
              strategy="mixed", mig_capable=True, mig_config="all-balanced")
    for p, per, mem, sm, sl, dec, jpg in H100_MIG_PROFILES:
        k = "nvidia.com/mig-%s." % p
        lab.update({
            k + "count": str(per * gpus),
            k + "engines.copy": str(sl),
            k + "engines.decoder": str(dec),
            k + "engines.encoder": "0",
            k + "engines.jpeg": str(jpg),
            k + "engines.ofa": "0" if sl < 7 else "1",
            k + "memory": str(mem),
            k + "multiprocessors": str(sm),
            k + "product": "NVIDIA-H100-80GB-HBM3-MIG-" + p,
            k + "replicas": "1",
            k + "sharing-strategy": "none",
            k + "slices.ci": str(sl),
            k + "slices.gi": str(sl),
        })
    return lab


def base_labels(hostname, instance, region, zone, arch="amd64"):
    return {
        "beta.kubernetes.io/arch": arch,
        "beta.kubernetes.io/instance-type": instance,
        "beta.kubernetes.io/os": "linux",
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": arch,
        "kubernetes.io/hostname": hostname,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
    }


def aws_labels(name, instance, zone, zone_id):
    lab = base_labels(name, instance, zone[:-1], zone)
    lab["topology.k8s.aws/zone-id"] = zone_id
    lab["k8s.io/cloud-provider-aws"] = "5f0c6b1fa3c8d47e9b2e01d7c9a4f6b3"
    return lab


def karpenter_labels(pool, capacity, instance, gpu_name, gpu_count, gpu_mem):
    fam = instance.split(".")[0]
    return {
        "karpenter.k8s.aws/instance-category": fam[0],
        "karpenter.k8s.aws/instance-family": fam,
        "karpenter.k8s.aws/instance-generation": fam[1:].rstrip("d"),
        "karpenter.k8s.aws/instance-gpu-count": str(gpu_count),
        "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia",
        "karpenter.k8s.aws/instance-gpu-memory": str(gpu_mem),
        "karpenter.k8s.aws/instance-gpu-name": gpu_name,
        "karpenter.k8s.aws/instance-hypervisor": "nitro",
        "karpenter.k8s.aws/instance-size": instance.split(".")[1],
        "karpenter.sh/capacity-type": capacity,
        "karpenter.sh/initialized": "true",
        "karpenter.sh/nodepool": pool,
        "karpenter.sh/registered": "true",
    }


def eks_ng_labels(group, capacity, ami="ami-0c4e3f5a9b7d21e86"):
    return {
        "eks.amazonaws.com/capacityType": capacity,
        "eks.amazonaws.com/nodegroup": group,
        "eks.amazonaws.com/nodegroup-image": ami,
        "eks.amazonaws.com/sourceLaunchTemplateId": "lt-0" + hexid(16),
        "eks.amazonaws.com/sourceLaunchTemplateVersion": "3",
    }


def gke_labels(name, pool, instance, zone, accelerator, spot=False):
    lab = base_labels(name, instance, zone[:-2], zone)
    lab.update({
        "cloud.google.com/gke-accelerator": accelerator,
        "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-cpu-scaling-level": instance.rsplit("-", 1)[1],
        "cloud.google.com/gke-logging-variant": "DEFAULT",
        "cloud.google.com/gke-max-pods-per-node": "110",
        "cloud.google.com/gke-nodepool": pool,
        "cloud.google.com/gke-os-distribution": "ubuntu",
        "cloud.google.com/gke-provisioning": "spot" if spot else "standard",
        "cloud.google.com/machine-family": instance.split("-")[0],
        "cloud.google.com/private-node": "false",
    })
    if spot:
        lab["cloud.google.com/gke-spot"] = "true"
    return lab


NODES = []       # (name, created, labels, annotations, cpu, mem_gi, gpu resources, provider)
SCHED = {}       # node name -> Sched


class Sched:
    """Keeps a node's GPU units booked over time so that no pod is placed on a full node."""

    def __init__(self, name, created, units):
        self.name = name
        self.created = created
        self.units = dict(units)
        self.books = []  # (start, end, resource, count)

    def fits(self, res, count, s, e):
        cap = self.units.get(res, 0)
        if s < self.created or count > cap:
            return False
        over = [b for b in self.books if b[2] == res and b[0] < e and s < b[1]]
        for t in [s] + [b[0] for b in over if b[0] > s]:
            used = sum(b[3] for b in over if b[0] <= t < b[1])
            if used + count > cap:
                return False
        return True

    def first_fit(self, res, count, earliest, dur):
        cands = sorted({earliest} | {b[1] for b in self.books if b[1] > earliest
                                     and b[1] < INF})
        for t in cands:
            if self.fits(res, count, t, t + dur if dur is not None else INF):
                return t
        return None

    def book(self, res, count, s, e):
        assert self.fits(res, count, s, e), (self.name, res, count, ts(s))
        self.books.append((s, e, res, count))


def add_node(name, created, labels, units, *, annotations=None, cpu=192, mem_gi=2048,
             provider=None, taint=True, extra_capacity=None):
    created_t = ep(created)
    NODES.append(dict(name=name, created=created_t, labels=labels, annotations=annotations or {},
                      cpu=cpu, mem_gi=mem_gi, units=units, provider=provider, taint=taint,
                      extra=extra_capacity or {}))
    SCHED[name] = Sched(name, created_t, {k: int(v) for k, v in units.items()})
    return name


def node_json(n):
    cpu, mem = n["cpu"], n["mem_gi"]
    cap = {"cpu": str(cpu), "ephemeral-storage": "%dKi" % (487 * 1024 * 1024),
           "hugepages-1Gi": "0", "hugepages-2Mi": "0",
           "memory": "%dKi" % (mem * 1024 * 1024 + 3 * 1024), "pods": "110"}
    alloc = {"cpu": "%dm" % (cpu * 1000 - 1930), "ephemeral-storage": "448454316360",
             "hugepages-1Gi": "0", "hugepages-2Mi": "0",
             "memory": "%dKi" % (mem * 1024 * 1024 - 4 * 1024 * 1024), "pods": "110"}
    for k, v in list(n["extra"].items()) + list(n["units"].items()):
        cap[k] = str(v)
        alloc[k] = str(v)
    cap = dict(sorted(cap.items()))
    alloc = dict(sorted(alloc.items()))
    created = n["created"]
    ready = ts(created + rng.randint(40, 90))
    hb = ts(T_NOW - rng.randint(5, 50))
    ip = "10.%d.%d.%d" % (rng.randint(0, 1), rng.randint(1, 90), rng.randint(2, 250))
    spec = {}
    if n["provider"]:
        spec["providerID"] = n["provider"]
    if n["taint"]:
        spec["taints"] = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "true"}]
    ann = {"alpha.kubernetes.io/provided-node-ip": ip,
           "node.alpha.kubernetes.io/ttl": "0",
           "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
    if n["units"]:
        ann["nvidia.com/gpu-driver-upgrade-enabled"] = "true"
    ann.update(n["annotations"])
    conds = []
    for typ, reason, msg in [
            ("MemoryPressure", "KubeletHasSufficientMemory",
             "kubelet has sufficient memory available"),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "KubeletReady", "kubelet is posting ready status")]:
        conds.append({"lastHeartbeatTime": hb,
                      "lastTransitionTime": ready if typ == "Ready" else ts(created + 12),
                      "message": msg, "reason": reason,
                      "status": "True" if typ == "Ready" else "False", "type": typ})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": dict(sorted(ann.items())),
            "creationTimestamp": ts(created),
            "labels": dict(sorted(n["labels"].items())),
            "name": n["name"],
            "resourceVersion": rv(),
            "uid": uid(),
        },
        "spec": spec,
        "status": {
            "addresses": [{"address": ip, "type": "InternalIP"},
                          {"address": n["name"], "type": "Hostname"}],
            "allocatable": alloc,
            "capacity": cap,
            "conditions": conds,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": uid(),
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "5.15.0-1071-aws",
                "kubeProxyVersion": "v1.31.4",
                "kubeletVersion": "v1.31.4",
                "machineID": hexid(32),
                "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.5 LTS",
                "systemUUID": uid(),
            },
        },
    }


def build_nodes():
    # H100 MIG mixed, EKS capacity block (reserved).
    n = "ip-10-0-33-117.ec2.internal"
    lab = aws_labels(n, "p5.48xlarge", "us-east-1a", "use1-az4")
    lab.update(eks_ng_labels("h100-mig-capacity-block", "CAPACITY_BLOCK"))
    lab.update(h100_mig_mixed_labels(8))
    H["mig_a"] = add_node(n, "2026-10-27T16:02:11Z", lab,
                          {"nvidia.com/gpu": 0, "nvidia.com/mig-1g.10gb": 16,
                           "nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-3g.40gb": 8},
                          provider="aws:///us-east-1a/i-0" + hexid(16))
    # H100 MIG mixed, EKS on-demand node group.
    n = "ip-10-0-35-201.ec2.internal"
    lab = aws_labels(n, "p5.48xlarge", "us-east-1b", "use1-az6")
    lab.update(eks_ng_labels("h100-mig-od", "ON_DEMAND"))
    lab.update(h100_mig_mixed_labels(8))
    H["mig_b"] = add_node(n, "2026-11-03T09:41:57Z", lab,
                          {"nvidia.com/gpu": 0, "nvidia.com/mig-1g.10gb": 16,
                           "nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-3g.40gb": 8},
                          provider="aws:///us-east-1b/i-0" + hexid(16))
    # H100 whole GPUs, Karpenter on-demand.
    n = "ip-10-0-41-12.ec2.internal"
    lab = aws_labels(n, "p5.48xlarge", "us-east-1a", "use1-az4")
    lab.update(karpenter_labels("gpu-h100", "on-demand", "p5.48xlarge", "h100", 8, 81920))
    lab.update(gfd("NVIDIA-H100-80GB-HBM3", 8, 81559, "hopper", ("9", "0"), "p5.48xlarge",
                   mig_capable=True, mig_config="all-disabled"))
    H["h100"] = add_node(n, "2026-11-06T22:18:40Z", lab, {"nvidia.com/gpu": 8},
                         provider="aws:///us-east-1a/i-0" + hexid(16))
    # A100 40GB Karpenter spot, us-east-1 and us-west-2.
    n = "ip-10-0-52-88.ec2.internal"
    lab = aws_labels(n, "p4d.24xlarge", "us-east-1c", "use1-az1")
    lab.update(karpenter_labels("gpu-a100-spot", "spot", "p4d.24xlarge", "a100", 8, 40960))
    lab.update(gfd("NVIDIA-A100-SXM4-40GB", 8, 40960, "ampere", ("8", "0"), "p4d.24xlarge",
                   mig_capable=True, mig_config="all-disabled"))
    H["spot1"] = add_node(n, "2026-11-08T11:05:09Z", lab, {"nvidia.com/gpu": 8}, cpu=96,
                          mem_gi=1152, provider="aws:///us-east-1c/i-0" + hexid(16))
    n = "ip-10-1-60-23.us-west-2.compute.internal"
    lab = aws_labels(n, "p4d.24xlarge", "us-west-2b", "usw2-az2")
    lab.update(karpenter_labels("gpu-a100-spot", "spot", "p4d.24xlarge", "a100", 8, 40960))
    lab.update(gfd("NVIDIA-A100-SXM4-40GB", 8, 40960, "ampere", ("8", "0"), "p4d.24xlarge",
                   mig_capable=True, mig_config="all-disabled"))
    H["spot2"] = add_node(n, "2026-11-18T03:12:44Z", lab, {"nvidia.com/gpu": 8}, cpu=96,
                          mem_gi=1152, provider="aws:///us-west-2b/i-0" + hexid(16))
    # A100 40GB EKS on-demand, with a negotiated price annotation.
    n = "ip-10-0-71-5.ec2.internal"
    lab = aws_labels(n, "p4d.24xlarge", "us-east-1a", "use1-az4")
    lab.update(eks_ng_labels("a100-od", "ON_DEMAND"))
    lab.update(gfd("NVIDIA-A100-SXM4-40GB", 8, 40960, "ampere", ("8", "0"), "p4d.24xlarge",
                   mig_capable=True, mig_config="all-disabled"))
    H["a100od"] = add_node(n, "2026-10-14T08:00:31Z", lab, {"nvidia.com/gpu": 8}, cpu=96,
                           mem_gi=1152, annotations={"gpu-cost.io/usd-per-gpu-hour": "3.20"},
                           provider="aws:///us-east-1a/i-0" + hexid(16))
    # A100 40GB, MIG strategy single, all 1g.5gb: 56 units of one seventh of a GPU.
    n = "ip-10-0-74-19.ec2.internal"
    lab = aws_labels(n, "p4d.24xlarge", "us-east-1b", "use1-az6")
    lab.update(eks_ng_labels("a100-mig-1g5gb", "ON_DEMAND"))
    g = gfd("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 56, 4864, "ampere", ("8", "0"),
            "p4d.24xlarge", strategy="single", mig_capable=True, mig_config="all-1g.5gb")
    g.update({"nvidia.com/gpu.engines.copy": "1", "nvidia.com/gpu.engines.decoder": "0",
              "nvidia.com/gpu.engines.encoder": "0", "nvidia.com/gpu.engines.jpeg": "0",
              "nvidia.com/gpu.engines.ofa": "0", "nvidia.com/gpu.multiprocessors": "14",
              "nvidia.com/gpu.slices.ci": "1", "nvidia.com/gpu.slices.gi": "1"})
    lab.update(g)
    H["migsingle"] = add_node(n, "2026-10-20T13:27:02Z", lab, {"nvidia.com/gpu": 56}, cpu=96,
                              mem_gi=1152, provider="aws:///us-east-1b/i-0" + hexid(16))
    # GKE T4, time-sliced 4 ways by the GPU Operator (renameByDefault false).
    for key, name, pool, created, spot in [
            ("t4a", "gke-demo-t4-pool-6f2b9c1e-k3xq", "t4-pool", "2026-10-30T07:45:00Z", False),
            ("t4b", "gke-demo-t4-spot-8d41a7b2-w9zt", "t4-spot", "2026-11-11T19:20:36Z", True)]:
        lab = gke_labels(name, pool, "n1-standard-32", "us-central1-a", "nvidia-tesla-t4", spot)
        lab.update(gfd("Tesla-T4-SHARED", 4, 15360, "turing", ("7", "5"), "Google-Compute-Engine",
                       replicas=4, sharing="time-slicing"))
        H[key] = add_node(name, created, lab, {"nvidia.com/gpu": 16}, cpu=32, mem_gi=120,
                          provider="gce://demo-ml/us-central1-a/" + name)
    # GKE L4 with GKE's own driver and device plugin: no GFD labels, only the accelerator label.
    n = "gke-demo-l4-pool-2a7e5d90-fh2m"
    lab = gke_labels(n, "l4-pool", "g2-standard-48", "us-central1-b", "nvidia-l4")
    lab["cloud.google.com/gke-gpu-driver-version"] = "latest"
    H["l4"] = add_node(n, "2026-11-14T10:03:27Z", lab, {"nvidia.com/gpu": 4}, cpu=48, mem_gi=192,
                       provider="gce://demo-ml/us-central1-b/" + n)
    # On-premises DGX H100 on RKE2: instance type says nothing; a node rule prices it.
    n = "dgx-h100-01"
    lab = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "rke2",
           "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
           "kubernetes.io/hostname": n, "kubernetes.io/os": "linux",
           "node-role.kubernetes.io/worker": "true", "node.kubernetes.io/instance-type": "rke2",
           "gpu-cost.io/pool": "onprem-dgx"}
    lab.update(gfd("NVIDIA-H100-80GB-HBM3", 8, 81559, "hopper", ("9", "0"), "DGXH100",
                   mig_capable=True, mig_config="all-disabled", driver="550.54.15"))
    H["dgx"] = add_node(n, "2026-09-02T12:00:00Z", lab, {"nvidia.com/gpu": 8}, cpu=224,
                        mem_gi=2048, extra_capacity={"rdma/rdma_shared_device_a": 63})
    # CPU nodes.
    for name, created in [("ip-10-0-8-14.ec2.internal", "2026-10-01T09:12:40Z"),
                          ("ip-10-0-9-201.ec2.internal", "2026-11-10T04:31:18Z")]:
        lab = aws_labels(name, "m7i.4xlarge", "us-east-1a", "use1-az4")
        lab.update(eks_ng_labels("system", "ON_DEMAND"))
        H[name] = add_node(name, created, lab, {}, cpu=16, mem_gi=64, taint=False,
                           provider="aws:///us-east-1a/i-0" + hexid(16))


H = {}

# ---- pods -------------------------------------------------------------------------------------

PODS = []
IMAGES = {
    "train": "nvcr.io/nvidia/pytorch:24.10-py3",
    "serve": "nvcr.io/nvidia/tritonserver:24.10-trtllm-python-py3",
    "vllm": "vllm/vllm-openai:v0.6.4",
    "nb": "quay.io/jupyter/pytorch-notebook:cuda12-2024-11-18",
    "tf": "nvcr.io/nvidia/tensorflow:24.10-tf2-py3",
    "cuda": "nvcr.io/nvidia/cuda:12.6.2-base-ubuntu22.04",
    "py": "python:3.12-slim",
}


def res_block(c):
    req = {"cpu": c.get("cpu", "4"), "memory": c.get("memory", "32Gi")}
    lim = {"memory": c.get("memory", "32Gi")}
    if c.get("gpu"):
        r, n = c["gpu"]
        mode = c.get("mode", "both")
        if mode in ("both", "requests"):
            req[r] = str(n)
        if mode in ("both", "limits"):
            lim[r] = str(n)
    return {"limits": dict(sorted(lim.items())), "requests": dict(sorted(req.items()))}


def cspec(c):
    d = {"image": c.get("image", IMAGES["train"]),
         "imagePullPolicy": "IfNotPresent",
         "name": c["name"],
         "resources": res_block(c),
         "terminationMessagePath": "/dev/termination-log",
         "terminationMessagePolicy": "File",
         "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                           "name": "kube-api-access-" + sfx(), "readOnly": True}]}
    if c.get("args"):
        d["args"] = c["args"]
    if c.get("sidecar"):
        d["restartPolicy"] = "Always"
    return d


def cid():
    return "containerd://" + hexid(64)


def cstatus(c, state, restarts=0, ready=False, started=None):
    img = c.get("image", IMAGES["train"])
    d = {"containerID": cid(), "image": img,
         "imageID": img.split(":")[0] + "@sha256:" + hexid(64),
         "lastState": {}, "name": c["name"], "ready": ready, "restartCount": restarts,
         "state": state}
    if started is not None:
        d["started"] = started
    return d


def make_pod(ns, name, containers, *, labels=None, owner=None, init=(), node=None, created,
             bound=None, run_s=None, phase=None, exit_code=0, fail_reason="Error", pull=None,
             restart_policy="Never", extra_finish=None, restarts=0, hold_s=None):
    """One Pod in `kubectl get -o json` shape. Returns (pod, hold_end) where hold_end is the
    latest container finishedAt (or INF while running). hold_s fixes the time from binding to
    the main container's finishedAt."""
    labels = dict(labels or {})
    md = {"creationTimestamp": ts(created), "labels": dict(sorted(labels.items())),
          "name": name, "namespace": ns, "resourceVersion": rv(), "uid": uid()}
    if owner:
        kind, oname, ouid = owner
        api = {"Job": "batch/v1", "ReplicaSet": "apps/v1", "DaemonSet": "apps/v1",
               "StatefulSet": "apps/v1"}[kind]
        md["generateName"] = name[:name.rfind("-") + 1]
        md["ownerReferences"] = [{"apiVersion": api, "blockOwnerDeletion": True,
                                  "controller": True, "kind": kind, "name": oname,
                                  "uid": ouid}]
    has_gpu = any(c.get("gpu") for c in list(containers) + list(init))
    spec = {"containers": [cspec(c) for c in containers],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "restartPolicy": restart_policy, "schedulerName": "default-scheduler",
            "securityContext": {}, "serviceAccount": "default",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                             "operator": "Exists", "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
                             "operator": "Exists", "tolerationSeconds": 300}]}
    if has_gpu:
        spec["tolerations"].insert(0, {"effect": "NoSchedule", "key": "nvidia.com/gpu",
                                       "operator": "Exists"})
    if init:
        spec["initContainers"] = [cspec(c) for c in init]
    qos = "Burstable"
    if bound is None:
        st = {"conditions": [{
            "lastProbeTime": None, "lastTransitionTime": ts(created + 1),
            "message": "0/13 nodes are available: 2 node(s) had untolerated taint "
                       "{node-role.kubernetes.io/control-plane: }, 11 Insufficient %s. "
                       "preemption: 0/13 nodes are available: 13 No preemption victims found "
                       "for incoming pod." % next(c["gpu"][0] for c in
                                                  list(containers) + list(init) if c.get("gpu")),
            "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}],
            "phase": "Pending", "qosClass": qos}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": st}
        PODS.append(pod)
        return pod, None
    spec["nodeName"] = node
    assert created <= bound
    start_time = bound + rng.randint(1, 2)
    t = start_time + rng.randint(1, 3)
    init_st = []
    finished = phase in ("Succeeded", "Failed")
    for c in init:
        if c.get("sidecar"):
            # Finished pods with sidecars are avoided in the examples: whether a sidecar's own
            # finishedAt ends the pod is pinned by a dedicated test, not by the demo data.
            assert not finished, name
            init_st.append(cstatus(c, {"running": {"startedAt": ts(t)}}, ready=True,
                                   started=True))
            t += rng.randint(2, 6)
        else:
            d = c.get("run_s", rng.randint(8, 90))
            init_st.append(cstatus(c, {"terminated": {
                "containerID": None, "exitCode": 0, "finishedAt": ts(t + d), "reason": "Completed",
                "startedAt": ts(t)}}, started=False))
            init_st[-1]["state"]["terminated"]["containerID"] = init_st[-1]["containerID"]
            t += d + 1
    app_start = t + (pull if pull is not None else rng.randint(4, 95))
    if hold_s is not None:
        run_s = bound + hold_s - app_start
        assert run_s > 0
    st_list = []
    last_finish = None
    for i, c in enumerate(containers):
        cs = app_start + (0 if i == 0 else rng.randint(0, 2))
        if finished:
            if i == 0:
                fin = app_start + run_s
                code = exit_code
                reason = "Completed" if exit_code == 0 else fail_reason
            else:
                fin = app_start + run_s + (extra_finish[i - 1] if extra_finish else
                                           rng.randint(0, 3))
                code = 0 if exit_code == 0 else 137
                reason = "Completed" if code == 0 else "Error"
            term = {"containerID": None, "exitCode": code, "finishedAt": ts(fin),
                    "reason": reason, "startedAt": ts(cs)}
            s = cstatus(c, {"terminated": term}, started=False)
            term["containerID"] = s["containerID"]
            last_finish = fin if last_finish is None else max(last_finish, fin)
        else:
            since = cs + (restarts and rng.randint(600, 9000))
            s = cstatus(c, {"running": {"startedAt": ts(since)}},
                        restarts=restarts if i == 0 else 0, ready=True, started=True)
            if restarts and i == 0:
                s["lastState"] = {"terminated": {
                    "containerID": cid(), "exitCode": 137,
                    "finishedAt": ts(cs + 400), "reason": "OOMKilled", "startedAt": ts(cs)}}
        st_list.append(s)
    ip = "10.%d.%d.%d" % (rng.randint(100, 127), rng.randint(0, 255), rng.randint(2, 254))
    if finished:
        ready_t = ts(last_finish + 1)
        conds = [("PodReadyToStartContainers", "False", ready_t),
                 ("Initialized", "True", ts(t)),
                 ("Ready", "False", ready_t), ("ContainersReady", "False", ready_t),
                 ("PodScheduled", "True", ts(bound))]
    else:
        conds = [("PodReadyToStartContainers", "True", ts(start_time + 2)),
                 ("Initialized", "True", ts(t)),
                 ("Ready", "True", ts(app_start + 5)),
                 ("ContainersReady", "True", ts(app_start + 5)),
                 ("PodScheduled", "True", ts(bound))]
    cl = []
    for typ, s, tt in conds:
        c = {"lastProbeTime": None, "lastTransitionTime": tt, "status": s, "type": typ}
        if finished and typ in ("Ready", "ContainersReady"):
            c["reason"] = "PodCompleted" if exit_code == 0 else "PodFailed"
        cl.append(c)
    st = {"conditions": cl, "containerStatuses": st_list,
          "hostIP": "10.0.%d.%d" % (rng.randint(1, 90), rng.randint(2, 250)),
          "phase": phase or "Running", "podIP": ip, "podIPs": [{"ip": ip}], "qosClass": qos,
          "startTime": ts(start_time)}
    st["hostIPs"] = [{"ip": st["hostIP"]}]
    if init_st:
        st["initContainerStatuses"] = init_st
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec,
           "status": dict(sorted(st.items()))}
    PODS.append(pod)
    return pod, (last_finish if finished else INF)


def pod_units(containers, init):
    """The pod's effective request per resource (Kubernetes rules), for booking."""
    out = {}
    res = {c["gpu"][0] for c in list(containers) + list(init) if c.get("gpu")}
    for r in res:
        def n(c):
            return c["gpu"][1] if c.get("gpu") and c["gpu"][0] == r else 0
        app = sum(n(c) for c in containers) + sum(n(c) for c in init if c.get("sidecar"))
        best = app
        side = 0
        for c in init:
            if c.get("sidecar"):
                side += n(c)
            else:
                best = max(best, n(c) + side)
        out[r] = best
    return out


def place(ns, name, containers, *, nodes, earliest, run_s, init=(), phase="Succeeded",
          created=None, latest=None, margin=400, **kw):
    """Finds the first node and time the pod fits, books it and writes the pod. run_s None
    means still running. A pod that cannot be bound before NOW is written as Pending."""
    units = pod_units(containers, init)
    dur = None if run_s is None else run_s + margin + sum(c.get("run_s", 90) + 1 for c in init)
    best = None
    for nd in nodes:
        s = SCHED[nd]
        t = max(earliest, s.created + rng.randint(120, 900))
        ok = None
        cands = sorted({t} | {b[1] for b in s.books if t < b[1] < INF})
        for c in cands:
            e = INF if dur is None else c + dur
            if all(s.fits(r, k, c, e) for r, k in units.items()):
                ok = c
                break
        if ok is not None and (best is None or ok < best[0]):
            best = (ok, nd)
    created = created if created is not None else earliest - rng.randint(0, 5)
    if best is None or best[0] >= (latest or T_NOW):
        if dur is None:
            raise RuntimeError("no room for running pod %s/%s" % (ns, name))
        return None
    t, nd = best
    if dur is not None and t + dur > T_NOW:
        # Would finish after the dump was taken: it is still running then.
        if not all(SCHED[nd].fits(r, k, t, INF) for r, k in units.items()):
            return None
        run_s, dur = None, None
    if run_s is None:
        phase = "Running"
    pod, end = make_pod(ns, name, containers, init=init, node=nd, created=min(created, t),
                        bound=t, run_s=run_s, phase=phase, **kw)
    for r, k in units.items():
        SCHED[nd].book(r, k, t, INF if dur is None else t + dur)
    assert end is None or end == INF or end <= t + dur
    return pod


def job_owner(job):
    return ("Job", job, uid())


def job_labels(job, owner, extra=None):
    lab = {"batch.kubernetes.io/controller-uid": owner[2], "batch.kubernetes.io/job-name": job,
           "controller-uid": owner[2], "job-name": job}
    lab.update(extra or {})
    return lab


def job(ns, job_name, containers, *, nodes, earliest, run_s, labels=None, **kw):
    own = job_owner(job_name)
    return place(ns, "%s-%s" % (job_name, sfx()), containers, nodes=nodes, earliest=earliest,
                 run_s=run_s, labels=job_labels(job_name, own, labels), owner=own,
                 restart_policy="Never", **kw)


def deployment(ns, dep, replicas, containers, *, nodes, created, labels=None, **kw):
    rs_hash = hexid(10)
    own = ("ReplicaSet", "%s-%s" % (dep, rs_hash), uid())
    lab = {"app": dep, "pod-template-hash": rs_hash}
    lab.update(labels or {})
    out = []
    for _ in range(replicas):
        out.append(place(ns, "%s-%s-%s" % (dep, rs_hash, sfx()), containers, nodes=nodes,
                         earliest=created + rng.randint(0, 40), run_s=None, labels=lab,
                         owner=own, restart_policy="Always", phase="Running", **kw))
    return out


def gpu(name, res, n, **kw):
    c = {"name": name, "gpu": (res, n)}
    c.update(kw)
    return c


def cpu_c(name, **kw):
    c = {"name": name, "image": IMAGES["py"], "cpu": "500m", "memory": "1Gi"}
    c.update(kw)
    return c


G = "nvidia.com/gpu"
M1 = "nvidia.com/mig-1g.10gb"
M2 = "nvidia.com/mig-2g.20gb"
M3 = "nvidia.com/mig-3g.40gb"


def t(s):
    return ep(s)


def build_pods():
    mig = [H["mig_a"], H["mig_b"]]
    t4 = [H["t4a"], H["t4b"]]

    # ---- platform: inference on MIG slices, a speculative-decoding pod with a GPU sidecar.
    ns = "platform-inference"
    deployment(ns, "llm-chat", 2, [gpu("triton", M3, 1, image=IMAGES["serve"], cpu="8",
                                       memory="64Gi"),
                                   cpu_c("metrics-proxy")],
               nodes=[H["mig_a"]], created=t("2026-11-02T10:14:55Z"),
               labels={"app.kubernetes.io/project": "chat-assistant"}, restarts=1)
    deployment(ns, "llm-chat", 2, [gpu("triton", M3, 1, image=IMAGES["serve"], cpu="8",
                                       memory="64Gi"),
                                   cpu_c("metrics-proxy")],
               nodes=[H["mig_a"]], created=t("2026-11-17T14:22:10Z"),
               labels={"app.kubernetes.io/project": "chat-assistant"})
    deployment(ns, "embedder", 6, [gpu("server", M1, 1, image=IMAGES["serve"], cpu="4",
                                       memory="24Gi")],
               nodes=[H["mig_b"]], created=t("2026-11-05T16:40:02Z"))
    deployment(ns, "summarizer", 4, [gpu("server", M3, 1, image=IMAGES["vllm"], cpu="8",
                                         memory="96Gi")],
               nodes=[H["mig_b"]], created=t("2026-11-10T13:31:20Z"),
               labels={"app.kubernetes.io/project": "summaries"})
    deployment(ns, "reranker", 4, [gpu("server", M2, 1, image=IMAGES["vllm"], cpu="6",
                                       memory="48Gi")],
               nodes=[H["mig_b"]], created=t("2026-11-19T09:00:03Z"),
               labels={"team": "platform"})
    # Sidecar (restartPolicy Always) holding one GPU, started before an ordinary init container
    # asking two: effective request = max(1 + 1, 2 + 1) = 3 whole GPUs.
    own = ("StatefulSet", "spec-decode", uid())
    place(ns, "spec-decode-0",
          [gpu("target-model", G, 1, image=IMAGES["vllm"], cpu="16", memory="200Gi")],
          init=[gpu("draft-model", G, 1, image=IMAGES["vllm"], sidecar=True),
                gpu("warm-kv-cache", G, 2, image=IMAGES["cuda"], run_s=412)],
          nodes=[H["h100"]], earliest=t("2026-11-20T08:00:00Z"), run_s=None, phase="Running",
          labels={"app": "spec-decode", "apps.kubernetes.io/pod-index": "0",
                  "statefulset.kubernetes.io/pod-name": "spec-decode-0",
                  "app.kubernetes.io/project": "speculative-decoding"},
          owner=own, restart_policy="Always")

    # ---- research: pre-training on the on-prem DGX, RLHF on H100, sweeps on spot A100s.
    ns = "research"
    tt = t("2026-11-08T19:52:10Z")
    for i, (hours, code) in enumerate([(59.6, 0), (71.3, 1), (88.2, 0), (30.5, 0), (None, 0)]):
        jn = "pretrain-7b-r%d" % (i + 1)
        run = None if hours is None else int(hours * 3600) + rng.randint(0, 59)
        p = job(ns, jn, [gpu("trainer", G, 8, cpu="96", memory="1200Gi")], nodes=[H["dgx"]],
                earliest=tt, run_s=run, exit_code=code, phase="Failed" if code else "Succeeded",
                fail_reason="Error", labels={"project": "llm-pretrain", "team": "research"})
        tt = tt + (run or 0) + rng.randint(1800, 5400)
    tt = t("2026-11-09T03:11:47Z")
    for i in range(24):
        run = rng.randint(3 * 3600, 14 * 3600)
        p = job(ns, "rlhf-ppo-%02d" % i, [gpu("learner", G, 4, cpu="48", memory="600Gi"),
                                          cpu_c("log-shipper")],
                nodes=[H["h100"]], earliest=tt, run_s=run,
                labels={"app.kubernetes.io/project": "rlhf"},
                extra_finish=[rng.choice([0, 2, 7])])
        tt += rng.randint(5 * 3600, 14 * 3600)
    # An ordinary init container asking for more GPUs than the app: effective request 4.
    own = job_owner("ckpt-convert-70b")
    place(ns, "ckpt-convert-70b-" + sfx(), [gpu("shard-eval", G, 2, memory="400Gi")],
          init=[gpu("convert", G, 4, image=IMAGES["cuda"], run_s=2710)],
          nodes=[H["h100"]], earliest=t("2026-11-17T10:21:05Z"), run_s=5 * 3600 + 1234,
          labels=job_labels("ckpt-convert-70b", own, {"project": "llm-pretrain"}), owner=own)
    # Sweeps: 1-2 GPUs, a few hours; spot interruptions kill some (exit 143).
    tt = t("2026-11-09T06:00:00Z")
    for i in range(34):
        n = rng.choice([1, 1, 2])
        run = rng.randint(2 * 3600, 9 * 3600)
        failed = i % 6 == 4
        lab = {"cost-center": "cc-ablations"} if i % 3 else {"project": "ablations"}
        job(ns, "sweep-lr-%02d" % i, [gpu("train", G, n, cpu="12", memory="160Gi")],
            nodes=[H["spot1"], H["spot2"]], earliest=tt, run_s=run,
            phase="Failed" if failed else "Succeeded", exit_code=143 if failed else 0,
            labels=lab)
        tt += rng.randint(3 * 3600, 13 * 3600)
    # Notebooks: no labels of their own; team from the namespace, project unattributed.
    tt = t("2026-11-09T09:30:00Z")
    for i in range(7):
        run = None if i >= 5 else rng.randint(2 * 3600, 30 * 3600)
        place(ns, "jupyter-%s" % rng.choice(["akira", "bea", "chen", "dmitri", "elif", "femi",
                                              "gosia"]) + "-" + sfx(),
              [gpu("notebook", M1, 1, image=IMAGES["nb"], cpu="4", memory="32Gi")],
              nodes=[H["mig_a"]], earliest=tt, run_s=run,
              phase="Running" if run is None else "Succeeded")
        tt += rng.randint(20 * 3600, 50 * 3600)
    # Pending: nobody has eight free H100s.
    own = job_owner("pretrain-13b-r1")
    make_pod(ns, "pretrain-13b-r1-" + sfx(), [gpu("trainer", G, 8, cpu="96", memory="1200Gi")],
             labels=job_labels("pretrain-13b-r1", own, {"project": "llm-pretrain"}), owner=own,
             created=t("2026-11-22T21:14:09Z"))
    own = job_owner("pretrain-13b-r1-eval")
    make_pod(ns, "pretrain-13b-r1-eval-" + sfx(), [gpu("eval", G, 8, mode="limits")],
             labels=job_labels("pretrain-13b-r1-eval", own, {"project": "llm-pretrain"}),
             owner=own, created=t("2026-11-23T02:40:51Z"))
    # CPU-only preprocessing: never billed.
    tt = t("2026-11-09T02:00:00Z")
    for i in range(8):
        own = job_owner("tokenize-shard-%d" % i)
        make_pod(ns, "tokenize-shard-%d-%s" % (i, sfx()),
                 [cpu_c("tokenize", cpu="8", memory="32Gi")],
                 labels=job_labels("tokenize-shard-%d" % i, own, {"project": "llm-pretrain"}),
                 owner=own, node="ip-10-0-8-14.ec2.internal", created=tt, bound=tt + 1,
                 run_s=rng.randint(900, 7200), phase="Succeeded")
        tt += rng.randint(20 * 3600, 40 * 3600)

    # ---- recommendations: T4 serving (limits only), 30-second scoring jobs, A100 training.
    ns = "recsys"
    deployment(ns, "ranker-serving", 5, [gpu("ranker", G, 1, mode="limits", image=IMAGES["tf"],
                                             cpu="2", memory="8Gi")],
               nodes=[H["t4a"]], created=t("2026-11-04T12:00:41Z"),
               labels={"project": "feed-ranking"})
    deployment(ns, "ranker-serving-canary", 2,
               [gpu("ranker", G, 1, mode="limits", image=IMAGES["tf"], cpu="2", memory="8Gi")],
               nodes=[H["t4b"]], created=t("2026-11-12T08:30:19Z"),
               labels={"project": "feed-ranking", "track": "canary"})
    tt = t("2026-11-09T00:00:00Z")
    k = 0
    while tt < T_NOW - 600:
        cj = "score-batch-%d" % (29380000 + (tt - T_BEGIN) // 60)
        own = job_owner(cj)
        nd = t4[k % 2] if tt > SCHED[H["t4b"]].created + 3600 else t4[0]
        bound = tt + rng.randint(0, 2)
        if k % 5 == 0 and SCHED[nd].fits(G, 1, bound, bound + 60):
            # Exactly 30 s from binding to finishedAt.
            make_pod(ns, cj + "-" + sfx(), [gpu("score", G, 1, image=IMAGES["tf"], cpu="1",
                                                memory="4Gi")],
                     labels=job_labels(cj, own), owner=own, node=nd, created=bound - 1,
                     bound=bound, hold_s=30, phase="Succeeded", pull=1)
            SCHED[nd].book(G, 1, bound, bound + 60)
        else:
            place(ns, cj + "-" + sfx(), [gpu("score", G, 1, image=IMAGES["tf"], cpu="1",
                                             memory="4Gi")],
                  nodes=[nd], earliest=bound, run_s=rng.randint(18, 41), margin=60,
                  labels=job_labels(cj, own), owner=own, pull=rng.randint(1, 4),
                  phase="Failed" if k % 17 == 8 else "Succeeded",
                  exit_code=1 if k % 17 == 8 else 0)
        k += 1
        tt += 8 * 3600
    tt = t("2026-11-09T14:05:33Z")
    for i in range(9):
        n = rng.choice([2, 4])
        job(ns, "two-tower-train-%02d" % i, [gpu("trainer", G, n, cpu="32", memory="300Gi")],
            nodes=[H["a100od"]], earliest=tt, run_s=rng.randint(6 * 3600, 20 * 3600),
            labels={"project": "two-tower"})
        tt += rng.randint(14 * 3600, 30 * 3600)
    # Feature backfills labelled only by cost-center on the pod: team from the namespace.
    tt = t("2026-11-10T22:00:00Z")
    for i in range(4):
        job(ns, "feature-backfill-%d" % i, [gpu("backfill", G, 1, image=IMAGES["tf"])],
            nodes=[H["a100od"]], earliest=tt, run_s=rng.randint(3600, 5 * 3600),
            labels={"cost-center": "cc-4410-backfill"})
        tt += rng.randint(50 * 3600, 80 * 3600)

    # ---- vision: detection on spot A100s, segmentation on MIG single, eval on MIG mixed.
    ns = "vision"
    tt = t("2026-11-09T08:12:00Z")
    for i in range(5):
        run = rng.randint(18 * 3600, 40 * 3600)
        job(ns, "detr-train-%d" % i, [gpu("trainer", G, 8, cpu="90", memory="1000Gi"),
                                      cpu_c("tensorboard")],
            nodes=[H["spot1"], H["spot2"]], earliest=tt, run_s=run,
            labels=dict({"project": "detection", "cost-center": "cc-vision-9",
                         "app.kubernetes.io/team": "vision"},
                        # two team keys: the first configured key ("team") wins
                        **({"team": "vision", "app.kubernetes.io/team": "research"}
                           if i == 2 else {})),
            phase="Failed" if i == 3 else "Succeeded", exit_code=143 if i == 3 else 0)
        tt += rng.randint(30 * 3600, 50 * 3600)
    job(ns, "detr-train-long", [gpu("trainer", G, 8, cpu="90", memory="1000Gi")],
        nodes=[H["spot2"]], earliest=t("2026-11-21T10:00:00Z"), run_s=None,
        phase="Running", labels={"project": "detection"})
    tt = t("2026-11-09T11:00:00Z")
    for i in range(16):
        n = rng.choice([1, 1, 2, 4])
        run = None if i in (5, 11, 15) else rng.randint(1800, 26 * 3600)
        job(ns, "seg-unet-%02d" % i,
            [gpu("train", G, n, mode="limits" if i % 4 == 1 else "both", cpu="6",
                 memory="40Gi")],
            nodes=[H["migsingle"]], earliest=tt, run_s=run,
            labels={"project": "segmentation"},
            phase="Running" if run is None else ("Failed" if i == 7 else "Succeeded"),
            exit_code=1 if i == 7 else 0, fail_reason="OOMKilled" if i == 7 else "Error")
        tt += rng.randint(6 * 3600, 22 * 3600)
    tt = t("2026-11-10T15:30:00Z")
    for i in range(6):
        job(ns, "detr-eval-%d" % i, [gpu("eval", M3, 1, cpu="8", memory="64Gi")],
            nodes=[H["mig_b"]], earliest=tt, run_s=rng.randint(1200, 4 * 3600),
            labels={"project": "detection"})
        tt += rng.randint(24 * 3600, 48 * 3600)
    # Pending: a whole-GPU MIG profile no node offers.
    own = job_owner("sam-finetune")
    make_pod(ns, "sam-finetune-" + sfx(), [gpu("train", "nvidia.com/mig-7g.80gb", 1)],
             labels=job_labels("sam-finetune", own, {"project": "segmentation"}), owner=own,
             created=t("2026-11-21T17:02:44Z"))
    # A labelled pod in an unlabelled namespace: team from the pod, no project anywhere.
    place("default", "gpu-smoke-test", [gpu("cuda", G, 1, image=IMAGES["cuda"], cpu="1",
                                            memory="1Gi")],
          nodes=[H["a100od"]], earliest=t("2026-11-18T13:37:00Z"), run_s=94,
          labels={"team": "vision", "run": "gpu-smoke-test"})

    # ---- search: an unlabelled namespace mapped to a team and project by configuration.
    ns = "search"
    deployment(ns, "query-embed", 3, [gpu("encoder", M2, 1, image=IMAGES["serve"])],
               nodes=[H["mig_a"]], created=t("2026-11-13T11:11:11Z"))
    deployment(ns, "spell-correct", 2, [gpu("model", G, 1, image=IMAGES["tf"], cpu="2",
                                            memory="6Gi")],
               nodes=[H["t4a"]], created=t("2026-11-15T20:45:30Z"),
               labels={"project": "spelling"})
    tt = t("2026-11-09T20:00:00Z")
    for i in range(7):
        job(ns, "index-embed-%d" % i, [gpu("embed", G, 1, image=IMAGES["tf"], cpu="4",
                                           memory="16Gi")],
            nodes=t4, earliest=tt, run_s=rng.randint(1200, 3 * 3600))
        tt += rng.randint(30 * 3600, 45 * 3600)

    # ---- sandbox: nobody's (no labels, no namespace labels, no mapping).
    ns = "sandbox"
    place(ns, "try-cuda", [gpu("cuda", G, 1, image=IMAGES["cuda"])], nodes=t4,
          earliest=t("2026-11-12T16:20:00Z"), run_s=3 * 3600 + 17, labels={"run": "try-cuda"})
    place(ns, "llm-playground-" + sfx(), [gpu("vllm", M1, 1, image=IMAGES["vllm"])],
          nodes=[H["mig_a"]], earliest=t("2026-11-19T22:03:00Z"), run_s=None, phase="Running")
    place(ns, "oom-repro", [gpu("repro", M1, 1, image=IMAGES["cuda"])], nodes=[H["mig_a"]],
          earliest=t("2026-11-16T05:55:55Z"), run_s=1234, phase="Failed", exit_code=137,
          fail_reason="OOMKilled")
    place(ns, "bench-t4-" + sfx(), [gpu("bench", G, 2, image=IMAGES["cuda"])], nodes=t4,
          earliest=t("2026-11-22T23:30:00Z"), run_s=2 * 3600 + 45)
    # A team label, but no project anywhere.
    place(ns, "platform-debug-" + sfx(), [gpu("debug", M2, 1, image=IMAGES["cuda"])],
          nodes=[H["mig_b"]], earliest=t("2026-11-20T14:25:09Z"), run_s=35 * 60,
          labels={"team": "platform"})

    # ---- system pods (no GPU requests) on every node.
    gpu_nodes = [n["name"] for n in NODES if n["units"]]
    for ds, image, nodes in [
            ("nvidia-device-plugin-daemonset", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
             gpu_nodes),
            ("nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04",
             gpu_nodes),
            ("gpu-feature-discovery", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
             [n for n in gpu_nodes if not n.startswith("gke-demo-l4")])]:
        own = ("DaemonSet", ds, uid())
        for nd in nodes:
            created = max(SCHED[nd].created + rng.randint(30, 200), t("2026-10-28T00:00:00Z"))
            make_pod("gpu-operator", "%s-%s" % (ds, sfx()),
                     [cpu_c(ds.split("-")[-1], image=image)],
                     labels={"app": ds, "controller-revision-hash": hexid(10)}, owner=own,
                     node=nd, created=created, bound=created, phase="Running",
                     restart_policy="Always")
    for i in range(2):
        own = ("ReplicaSet", "coredns-7d8f5b9c4d", uid())
        nd = ["ip-10-0-8-14.ec2.internal", "ip-10-0-9-201.ec2.internal"][i]
        created = SCHED[nd].created + 300
        make_pod("kube-system", "coredns-7d8f5b9c4d-" + sfx(), [cpu_c("coredns",
                 image="registry.k8s.io/coredns/coredns:v1.11.3")],
                 labels={"k8s-app": "kube-dns", "pod-template-hash": "7d8f5b9c4d"}, owner=own,
                 node=nd, created=created, bound=created, phase="Running",
                 restart_policy="Always")


# ---- planted behaviours for the advisor, and their dcgm-exporter series ------------------------

# Pods that run on the last day of the demo week with measured use that each rule must catch.
# They are drawn with a random generator of their own (and resourceVersions of their own), so
# the rest of the cluster is the same bytes as without them.
PLANTED = {}
SERIES_START = ep("2026-11-22T09:00:00Z")
SERIES_END = ep("2026-11-23T00:00:00Z")   # the demo week's end: the series lies inside it
SERIES_STEP = 600                          # one scrape every 10 minutes


def build_planted():
    global rng
    saved_rng, saved_rv = rng, _rv[0]
    rng = random.Random(SEED + 5)
    _rv[0] = 9100000
    try:
        # An idle notebook: busy for two hours, then nothing for eight while it holds 70% of its
        # MIG slice's memory (idle_gpu).
        PLANTED["idle"] = place(
            "research", "jupyter-hana-" + sfx(),
            [gpu("notebook", M1, 1, image=IMAGES["nb"], cpu="4", memory="32Gi")],
            nodes=[H["mig_a"]], earliest=t("2026-11-22T14:00:00Z"), run_s=None,
            phase="Running")
        # An 8-GPU fine-tuning job whose code uses two of them (over_requested: ask for 2).
        own = job_owner("detr-finetune")
        PLANTED["over"] = place(
            "vision", "detr-finetune-" + sfx(),
            [gpu("trainer", G, 8, cpu="90", memory="1000Gi")],
            nodes=[H["a100od"]], earliest=t("2026-11-22T12:00:00Z"), run_s=None,
            phase="Running", labels=job_labels("detr-finetune", own, {"project": "detection"}),
            owner=own)
        # A small inference service on a whole H100: 5 GiB of 80, 12% busy, little tensor work
        # (mig_fit: a 1g.10gb slice holds it).
        PLANTED["mig"] = deployment(
            "platform-inference", "intent-classifier", 1,
            [gpu("server", G, 1, image=IMAGES["serve"], cpu="4", memory="16Gi")],
            nodes=[H["h100"]], created=t("2026-11-22T09:00:00Z"),
            labels={"app.kubernetes.io/project": "intent"})[0]
        # One time-sliced T4 shared by two teams (a quarter GPU each): research's notebook
        # barely uses it, recommendations' feature backfill keeps it busy. By allocation they
        # pay the same; the usage basis (docs/ledger.md) moves the difference between them.
        PLANTED["share_nb"] = place(
            "research", "jupyter-omar-" + sfx(),
            [gpu("notebook", G, 1, mode="limits", image=IMAGES["nb"], cpu="2", memory="8Gi")],
            nodes=[H["t4a"]], earliest=t("2026-11-22T09:00:00Z"), run_s=None, phase="Running")
        PLANTED["share_bf"] = place(
            "recsys", "feature-backfill-" + sfx(),
            [gpu("backfill", G, 1, mode="limits", image=IMAGES["tf"], cpu="4", memory="16Gi")],
            nodes=[H["t4a"]], earliest=t("2026-11-22T09:00:00Z"), run_s=None, phase="Running",
            labels={"project": "feed-ranking"})
    finally:
        rng, _rv[0] = saved_rng, saved_rv


DCGM_HELP = [
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
]


def pod_start(pod):
    return ep(pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"])


def metrics_text():
    """dcgm-exporter's /metrics for the planted pods, one scrape every SERIES_STEP seconds while
    each runs, with timestamps (ms): a series `gpu-cost demo` and `analyze --metrics` read."""
    r = random.Random(SEED + 7)
    devices = []  # (labels, used_fn(t), total_mib, activity_fn(t), tensor_fn(t) or None, start)

    def labels(node, gpu_idx, model, pod, container, mig=None):
        lab = [("gpu", str(gpu_idx)), ("UUID", "GPU-%s" % uuid.UUID(int=r.getrandbits(128))),
               ("pci_bus_id", "00000000:%02X:00.0" % (0x18 + 0x10 * gpu_idx)),
               ("device", "nvidia%d" % gpu_idx), ("modelName", model), ("Hostname", node)]
        if mig:
            lab += [("GPU_I_PROFILE", mig[0]), ("GPU_I_ID", str(mig[1]))]
        lab += [("DCGM_FI_DRIVER_VERSION", "550.127.08"), ("container", container),
                ("namespace", pod["metadata"]["namespace"]), ("pod", pod["metadata"]["name"])]
        return lab

    p = PLANTED["idle"]
    st = pod_start(p)
    devices.append((labels(p["spec"]["nodeName"], 5, "NVIDIA H100 80GB HBM3", p, "notebook",
                           ("1g.10gb", 9)),
                    lambda tt, st=st: 7050 if tt < st + 2 * HOUR else 6890, 9856,
                    lambda tt, st=st: r.uniform(0.25, 0.45) if tt < st + 2 * HOUR else 0.0,
                    None, st))
    p = PLANTED["over"]
    st = pod_start(p)
    for g in range(8):
        busy = g < 2
        devices.append((labels(p["spec"]["nodeName"], g, "NVIDIA A100-SXM4-40GB", p, "trainer"),
                        (lambda tt: r.randint(30500, 31200)) if busy else (lambda tt: 0), 40536,
                        (lambda tt: r.uniform(0.80, 0.95)) if busy else (lambda tt: 0.0),
                        (lambda tt: r.uniform(0.45, 0.6)) if busy else None, st))
    p = PLANTED["mig"]
    st = pod_start(p)
    devices.append((labels(p["spec"]["nodeName"], 3, "NVIDIA H100 80GB HBM3", p, "server"),
                    lambda tt: r.randint(4900, 5200), 81559,
                    lambda tt: r.uniform(0.03, 0.09), lambda tt: r.uniform(0.01, 0.04), st))
    # The shared T4: dcgm-exporter with KUBERNETES_VIRTUAL_GPUS writes each sharer's own
    # GPU_UTIL (%) with pod_uid beside the device's series (tests/fixtures/SOURCES.md).
    rs = random.Random(SEED + 11)  # its own: the other series stay the same bytes
    shared_uuid = "GPU-%s" % uuid.UUID(int=rs.getrandbits(128))
    sharers = [(PLANTED["share_nb"], "notebook", lambda tt: rs.uniform(0.03, 0.08)),
               (PLANTED["share_bf"], "backfill", lambda tt: rs.uniform(0.70, 0.90))]
    shared = {}
    for p, container, use_fn in sharers:
        st = pod_start(p)
        first = max(SERIES_START, st - st % SERIES_STEP + SERIES_STEP)
        for tt in range(first, SERIES_END, SERIES_STEP):
            shared.setdefault(tt, []).append((p, container, use_fn(tt)))
    # Readings: per device and scrape time, (activity, tensor, used, free).
    rows = []
    for lab, used_fn, total, act_fn, tensor_fn, st in devices:
        first = max(SERIES_START, st - st % SERIES_STEP + SERIES_STEP)
        per = []
        for tt in range(first, SERIES_END, SERIES_STEP):
            used = used_fn(tt)
            per.append((tt, act_fn(tt), tensor_fn(tt) if tensor_fn else None, used, total - used))
        rows.append((lab, per))

    def lab_text(lab):
        return ",".join('%s="%s"' % kv for kv in lab)

    out = []
    node = PLANTED["share_nb"]["spec"]["nodeName"]
    dev = ('gpu="0",UUID="%s",pci_bus_id="00000000:00:04.0",device="nvidia0",'
           'modelName="Tesla T4",Hostname="%s",DCGM_FI_DRIVER_VERSION="550.127.08"'
           % (shared_uuid, node))
    out.append("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).")
    out.append("# TYPE DCGM_FI_DEV_GPU_UTIL gauge")
    for tt in sorted(shared):
        total = min(100.0, sum(u for _, _, u in shared[tt]) * 100)
        out.append("DCGM_FI_DEV_GPU_UTIL{%s} %.0f %d" % (dev, total, tt * 1000))
        for p, container, u in shared[tt]:
            out.append('DCGM_FI_DEV_GPU_UTIL{%s,container="%s",namespace="%s",pod="%s",'
                       'pod_uid="%s"} %.0f %d'
                       % (dev, container, p["metadata"]["namespace"], p["metadata"]["name"],
                          p["metadata"]["uid"], u * 100, tt * 1000))
    for k, (name, help_) in enumerate(DCGM_HELP):
        out.append("# HELP %s %s" % (name, help_))
        out.append("# TYPE %s gauge" % name)
        for lab, per in rows:
            lt = lab_text(lab)
            for tt, act, tensor, used, free in per:
                v = [act, tensor, used, free][k]
                if v is None:
                    continue
                out.append("%s{%s} %s %d" % (name, lt, ("%.6f" % v) if k < 2 else str(v),
                                              tt * 1000))
    return "\n".join(out) + "\n"


# ---- namespaces, config, prices ---------------------------------------------------------------

def namespaces():
    items = []
    for name, created, labels in [
            ("default", "2026-09-01T08:00:00Z", {}),
            ("kube-system", "2026-09-01T08:00:00Z", {}),
            ("kube-public", "2026-09-01T08:00:00Z", {}),
            ("gpu-operator", "2026-09-01T09:30:12Z", {"pod-security.kubernetes.io/enforce":
                                                      "privileged"}),
            ("platform-inference", "2026-09-14T10:02:51Z",
             {"app.kubernetes.io/team": "platform", "project": "serving"}),
            ("research", "2026-09-03T15:44:07Z", {"team": "research"}),
            ("recsys", "2026-09-20T07:30:00Z", {"team": "recommendations",
                                                "cost-center": "cc-4410"}),
            ("vision", "2026-10-02T12:12:12Z", {"team": "vision"}),
            ("search", "2026-10-11T09:00:00Z", {}),
            ("sandbox", "2026-10-21T17:45:30Z", {})]:
        lab = {"kubernetes.io/metadata.name": name}
        lab.update(labels)
        items.append({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"creationTimestamp": created,
                                   "labels": dict(sorted(lab.items())), "name": name,
                                   "resourceVersion": rv(), "uid": uid()},
                      "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    return items


CONFIG = {
    "cluster": "demo",
    "attribution": {
        "team_label_keys": ["team", "app.kubernetes.io/team"],
        "project_label_keys": ["project", "app.kubernetes.io/project", "cost-center"],
        "namespace_teams": {"search": "search"},
        "namespace_projects": {"search": "ranking"},
    },
    "resources": [{"name": "amd.com/gpu", "kind": "fixed", "gpus_per_unit": 1.0}],
    "node_rules": [
        {"match": {"gpu-cost.io/pool": "onprem-a100"}, "capacity_type": "on-prem",
         "model": "NVIDIA-A100-SXM4-80GB", "region": "dc-fra-1", "usd_per_gpu_hour": 1.90},
        {"match": {"gpu-cost.io/pool": "onprem-dgx", "node.kubernetes.io/instance-type": "rke2"},
         "capacity_type": "on-prem", "model": "NVIDIA-H100-80GB-HBM3", "region": "dc-fra-1",
         "usd_per_gpu_hour": 3.56},
    ],
    "instance_types": {"p5.48xlarge": "NVIDIA-H100-80GB-HBM3",
                       "p4d.24xlarge": "NVIDIA-A100-SXM4-40GB",
                       "g6.12xlarge": "NVIDIA-L4"},
    "default_capacity_type": "on-demand",
    "prices": {
        "currency": "USD",
        "as_of": "2025-06-01",
        "source": "published list prices (see docs/prices.md)",
        "prices": [
            {"model": "NVIDIA-H100-80GB-HBM3", "capacity_type": "on-demand",
             "usd_per_gpu_hour": 12.29},
            {"model": "NVIDIA-H100-80GB-HBM3", "capacity_type": "spot", "usd_per_gpu_hour": 6.15},
            {"model": "NVIDIA-H100*", "capacity_type": "reserved", "usd_per_gpu_hour": 8.05},
            {"model": "NVIDIA-H100-80GB*", "capacity_type": "reserved", "usd_per_gpu_hour": 5.25},
            {"model": "NVIDIA-A100-SXM4-40GB", "capacity_type": "on-demand",
             "usd_per_gpu_hour": 4.10},
            {"model": "NVIDIA-A100-SXM4-40GB", "capacity_type": "spot", "usd_per_gpu_hour": 1.75},
            {"model": "NVIDIA-A100-SXM4-40GB", "capacity_type": "spot", "region": "us-east-1",
             "usd_per_gpu_hour": 1.50},
            {"model": "Tesla-T4", "capacity_type": "on-demand", "usd_per_gpu_hour": 0.35},
            {"model": "Tesla-T4", "capacity_type": "spot", "usd_per_gpu_hour": 0.14},
            {"model": "NVIDIA-L4", "capacity_type": "on-demand", "usd_per_gpu_hour": 0.71},
            {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 2.00},
        ],
    },
    # Monthly budgets (docs/configuration.md, "Budgets"): in November research is past the
    # warning share, vision over, platform within; the dashboard and monthly reports show them.
    "budgets": {
        "warn_share": 0.8,
        "events": False,
        "items": [
            {"scope": "team", "name": "research", "period": "monthly", "amount": 25000},
            {"scope": "team", "name": "platform", "period": "monthly", "amount": 30000},
            {"scope": "team", "name": "vision", "period": "monthly", "amount": 3000},
        ],
    },
}

PRICES = {
    "currency": "USD",
    "as_of": "2026-11-01",
    "source": "example negotiated rates: an enterprise discount on demand, a savings plan",
    "prices": [
        {"model": "NVIDIA-H100-80GB-HBM3", "capacity_type": "on-demand", "usd_per_gpu_hour": 9.83,
         "source": "20% enterprise discount"},
        {"model": "NVIDIA-H100*", "capacity_type": "reserved", "usd_per_gpu_hour": 4.90},
        {"model": "NVIDIA-A100-SXM4-40GB", "capacity_type": "on-demand",
         "usd_per_gpu_hour": 3.28},
        {"model": "NVIDIA-A100*", "capacity_type": "spot", "usd_per_gpu_hour": 1.40},
        {"model": "NVIDIA-A100-SXM4-40GB", "capacity_type": "spot", "region": "us-east-1",
         "usd_per_gpu_hour": 1.21},
        {"model": "Tesla-T4", "capacity_type": "*", "usd_per_gpu_hour": 0.25},
        {"model": "NVIDIA-L4", "capacity_type": "on-demand", "usd_per_gpu_hour": 0.60},
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 1.50},
    ],
}


def dump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=False, ensure_ascii=True)
        f.write("\n")


def dump_list(path, lst, items):
    """A List with one compact item per line: small enough to embed, still diffable."""
    with open(path, "w") as f:
        f.write('{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[\n')
        for i, it in enumerate(items):
            f.write(json.dumps(it, separators=(",", ":"), ensure_ascii=True))
            f.write(",\n" if i + 1 < len(items) else "\n")
        f.write("]}\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    os.makedirs(out, exist_ok=True)
    build_nodes()
    build_pods()
    build_planted()
    nodes = [node_json(n) for n in NODES]
    ns = namespaces()
    # kubectl lists pods by namespace, then name.
    pods = sorted(PODS, key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"]))
    lst = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}
    dump_list(os.path.join(out, "pods.json"), lst, pods)
    dump(os.path.join(out, "nodes.json"), dict(lst, items=sorted(
        nodes, key=lambda n: n["metadata"]["name"])))
    dump(os.path.join(out, "namespaces.json"), dict(lst, items=ns))
    dump(os.path.join(out, "config.json"), CONFIG)
    dump(os.path.join(out, "prices.json"), PRICES)
    dump(os.path.join(out, "demo.json"), {"now": NOW, "window": WINDOW})
    with open(os.path.join(out, "metrics.prom"), "w") as f:
        f.write(metrics_text())
    for f in sorted(os.listdir(out)):
        size = os.path.getsize(os.path.join(out, f))
        if size >= 1 << 20:
            raise SystemExit("%s is %d bytes: too big to embed" % (f, size))
    print("wrote %d pods, %d nodes, %d namespaces to %s" % (len(pods), len(nodes), len(ns), out),
          file=sys.stderr)


if __name__ == "__main__":
    main()
