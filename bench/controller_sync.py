#!/usr/bin/env python3
"""Benchmark of gpu-cost-controller's initial sync against a real kube-apiserver, beside the
peer a Go controller would be (bench/informer-peer, a client-go SharedInformerFactory), in one
run against the same server.

What it does:
  1. starts etcd + kube-apiserver (scripts/e2e-cluster.sh) in a temporary directory, creates
     namespace gpu-cost and applies deploy/rbac.yaml;
  2. writes GPU nodes (the real H100 GPU Feature Discovery label set), CPU nodes, team
     namespaces, and N pods of which G ask for GPUs: Deployment-style pods with labels, owner
     references, env, probes, volumes, tolerations, some with a sidecar, bound to a node and
     with a Running status (conditions, container statuses, IPs), written in parallel;
  3. runs build/gpu-cost-controller under its own ServiceAccount identity (the controller
     kubeconfig, bound only by deploy/rbac.yaml) and measures the time from exec to /readyz
     200 and its RSS (VmRSS, VmHWM of /proc/<pid>/status) a few seconds after that;
  4. runs informer-peer with the same identity, plain, then with --strip-managed-fields, then
     with --protobuf, then with --careful (protobuf, a transform keeping only what a GPU cost
     controller reads with non-GPU pods as stubs, the streaming list), each to its cache sync,
     and measures the same;
  5. starts the controller again (it restores its checkpoint), replays tests/e2e/sim.py's
     seven days of GPU churn into the same cluster while it runs, and reads its RSS once it has
     checkpointed and published the reports.

With --dra-pods D, D of the G GPU pods get their GPUs through Dynamic Resource Allocation
instead of nvidia.com/gpu: DRA nodes (no nvidia.com/gpu resource; per 1,000 DRA pods 50 nodes
of 8 whole H100s and 50 of 8 H100s each cut into 7 MIG 1g.10gb partitions), their
ResourceSlices as NVIDIA's driver (gpu.nvidia.com) publishes them, NVIDIA's two DeviceClasses,
and per DRA pod a ResourceClaim allocated (status.allocation, status.reservedFor) to devices of
its node; the pod names it in spec.resourceClaims and its main container in resources.claims.
With --share the DRA pods hold shares of shared GPUs instead (consumable capacity, as NVIDIA's
driver v0.5.0 publishes them in its "memory" mode): DRA nodes of 8 H100s each published with
allowMultipleAllocations and memory 81559Mi under a request policy, four pods per GPU, each with
a claim of 19Gi (four fit in 81559Mi) whose result carries consumedCapacity and a shareID (docs/dra.md).
A comma-separated list (--dra-pods 0,1000) runs the whole benchmark once per value, each on a
fresh cluster, and ends with the figures side by side. Every run checks that the controller
priced what the cluster holds (/api/v1/pods: the GPU pods, the DRA ones on the DRA nodes, their
GPU-equivalents) and fails otherwise.

Everything it starts is stopped on exit, failure and SIGINT/SIGTERM included.

Usage: bench/controller_sync.py [--build DIR] [--pods N] [--gpu-pods G] [--dra-pods D[,D...]]
                                [--share] [--no-replay] [--keep]
  E2E_BIN: the e2e tools and informer-peer (default ~/.cache/gpu-cost-e2e/bin)
  BENCH_SYNC_PODS, BENCH_SYNC_GPU_PODS, BENCH_SYNC_DRA_PODS: the defaults of the three counts
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid as uuid_mod
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
E2E = REPO / "tests" / "e2e"
sys.path.insert(0, str(E2E))

import sim  # noqa: E402
from apiclient import Api, ApiError, Etcd, metric, read_env  # noqa: E402

CLUSTER = REPO / "scripts" / "e2e-cluster.sh"
RBAC = REPO / "deploy" / "rbac.yaml"
CONFIG = E2E / "config.json"
PEER_SRC = HERE / "informer-peer"
NS = "gpu-cost"
GPUS_PER_NODE = 8
DRA_DRIVER = "gpu.nvidia.com"
DRA_PODS_PER_PAIR = 20  # a whole-GPU and a MIG DRA node per 20 DRA pods: 50 + 50 per 1,000
MIG_PER_GPU = 7         # 1g.10gb partitions of an H100 (GPU instance profile 19, size 1)
MIG_SHARE = 1.0 / 7     # what one 1g.10gb is of an H100: max(1/7 compute, 1/8 memory)
SHARES_PER_GPU = 4      # --share: pods per shared H100, each claiming 19Gi of its 81559Mi
SHARE_GEQ = 19 * 1024 / 81559.0  # four fit (76Gi): the scheduler would refuse 4 x 20Gi
H100_PRODUCT = "NVIDIA H100 80GB HBM3"
P5_BUSES = (0x53, 0x64, 0x75, 0x86, 0x97, 0xa8, 0xb9, 0xca)  # a p5.48xlarge's GPU PCIe buses
SETTLE_S = 3.0      # RSS is read this long after ready/synced, for both sides
TEAMS = ["vision", "language", "ads", "search", "platform"]
ENVS = ["prod", "staging", "dev", "batch"]
MIB = 1024.0


def say(msg):
    print(msg, flush=True)


def e2e_bin():
    return Path(os.environ.get("E2E_BIN") or
                Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") /
                "gpu-cost-e2e" / "bin")


# ---- the informer peer ------------------------------------------------------------------------

def build_peer(bindir):
    """Builds informer-peer into the e2e tools' cache (not the repository) unless its stamp (a
    hash of the sources, go.mod, go.sum and the Go version) is current. Same flags as the e2e
    tools."""
    env = dict(os.environ, GOTOOLCHAIN="local", CGO_ENABLED="0", GOFLAGS="-mod=readonly")
    gover = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True,
                           env=env, check=True).stdout.strip()
    h = hashlib.sha256()
    for f in [PEER_SRC / "go.mod", PEER_SRC / "go.sum"] + sorted(PEER_SRC.glob("*.go")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    h.update(("go=%s ldflags=-s -w" % gover).encode())
    want = h.hexdigest()
    out, stamp = bindir / "informer-peer", bindir / ".stamp-informer-peer"
    if out.exists() and stamp.exists() and stamp.read_text().strip() == want:
        return out
    say("building informer-peer (%s) into %s" % (gover, bindir))
    t0 = time.time()
    tmp = bindir / ".informer-peer.tmp"
    subprocess.run(["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", str(tmp), "."],
                   cwd=str(PEER_SRC), env=env, check=True)
    os.replace(tmp, out)
    stamp.write_text(want + "\n")
    say("built informer-peer in %.0f s" % (time.time() - t0))
    return out


# ---- what the cluster holds -------------------------------------------------------------------

def gpu_node(name, i):
    labels = sim._cloud_node(name, "p5.48xlarge", "us-east-1", "us-east-1" + "abcd"[i % 4], {
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": "gpu-h100",
        "nvidia.com/gpu.count": str(GPUS_PER_NODE)})
    alloc = {"cpu": "191", "memory": "2013522892Ki", "pods": "110",
             "ephemeral-storage": "3770517200Ki", "nvidia.com/gpu": str(GPUS_PER_NODE)}
    return labels, alloc


def cpu_node(name, i):
    labels = {
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
        "kubernetes.io/hostname": name,
        "node.kubernetes.io/instance-type": "m6i.8xlarge",
        "beta.kubernetes.io/instance-type": "m6i.8xlarge",
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": "us-east-1" + "abcd"[i % 4],
        "failure-domain.beta.kubernetes.io/region": "us-east-1",
        "failure-domain.beta.kubernetes.io/zone": "us-east-1" + "abcd"[i % 4],
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": "general",
        "eks.amazonaws.com/nodegroup-image": "ami-0c2b8ca1dad447f8a",
        "k8s.io/cloud-provider-aws": "a94967527effcefb5f5829f529c0a1b9",
    }
    alloc = {"cpu": "31850m", "memory": "124681488Ki", "pods": "110",
             "ephemeral-storage": "95551679124"}
    return labels, alloc


def dra_node(name, i, mig):
    """A node whose GPUs NVIDIA's DRA driver publishes: GPU Feature Discovery labels as on the
    device-plugin nodes, the GPU Operator's device plugin turned off, no nvidia.com/gpu."""
    labels, alloc = gpu_node(name, i)
    del alloc["nvidia.com/gpu"]
    labels["eks.amazonaws.com/nodegroup"] = "gpu-h100-dra-mig" if mig else "gpu-h100-dra"
    labels["nvidia.com/gpu.deploy.device-plugin"] = "false"
    if mig:
        labels["nvidia.com/mig.config"] = "all-1g.10gb"
    return labels, alloc


def _s(v):
    return {"string": v}


def _v(v):
    return {"version": v}


def dra_slice(node, node_uid, i, mig, share=False):
    """The ResourceSlice NVIDIA's kubelet plugin publishes for a node (tests/fixtures/dra/dra.json:
    typed, unqualified attributes; one pool per node, named after it; owned by the Node): 8 whole
    H100s (gpu-<minor>), or on a MIG node each H100's seven 1g.10gb partitions
    (gpu-<minor>-mig-19-<start>-1, parentUUID the H100's) and not the H100 itself."""
    devices = []
    for g in range(GPUS_PER_NODE):
        uuid = "GPU-%08x-%04x-5%03x-8%03x-%012x" % (0x4a7bc0d2 + i, g, i % 4096, g, i * 8 + g)
        common = {"productName": _s(H100_PRODUCT), "brand": _s("Nvidia"),
                  "architecture": _s("Hopper"), "cudaComputeCapability": _v("9.0.0"),
                  "driverVersion": _v("580.95.5"), "cudaDriverVersion": _v("13.0.0"),
                  "pcieBusID": _s("0000:%02x:00.0" % P5_BUSES[g]),
                  "addressingMode": _s("None")}
        if not mig:
            attrs = {"type": _s("gpu"), "uuid": _s(uuid)}
            attrs.update(common)
            attrs["resource.kubernetes.io/pcieRoot"] = _s("pci0000:%02x" % (P5_BUSES[g] - 3))
            dev = {"name": "gpu-%d" % g, "attributes": attrs,
                   "capacity": {"memory": {"value": "81559Mi"}}}
            if share:
                # consumable_shares.go, "memory" mode.
                dev["allowMultipleAllocations"] = True
                dev["capacity"]["memory"]["requestPolicy"] = {
                    "default": "81559Mi",
                    "validRange": {"min": "1Mi", "max": "81559Mi", "step": "1Mi"}}
            devices.append(dev)
            continue
        for start in range(MIG_PER_GPU):
            attrs = {"type": _s("mig"),
                     "uuid": _s("MIG-%08x-%04x-5%03x-8%03x-%012x" % (
                         0x0a1b2c3d + i, g, start, i % 4096, i * 64 + g * 8 + start)),
                     "parentUUID": _s(uuid), "profile": _s("1g.10gb")}
            attrs.update(common)
            devices.append({"name": "gpu-%d-mig-19-%d-1" % (g, start), "attributes": attrs,
                            "capacity": {"multiprocessors": {"value": "16"},
                                         "copyEngines": {"value": "1"},
                                         "decoders": {"value": "1"}, "encoders": {"value": "0"},
                                         "jpegEngines": {"value": "1"},
                                         "ofaEngines": {"value": "0"},
                                         "memory": {"value": "9856Mi"},
                                         "memorySlice%d" % start: {"value": "1"}}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": "%s-%s-" % (node, DRA_DRIVER),
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                                              "uid": node_uid, "controller": True}]},
            "spec": {"driver": DRA_DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def device_classes():
    """The two DeviceClasses NVIDIA's driver installs for GPUs (its Helm chart)."""
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
             "metadata": {"name": "%s.nvidia.com" % t},
             "spec": {"selectors": [{"cel": {"expression":
                                             "device.driver == '%s' && device.attributes['%s']"
                                             ".type == '%s'" % (DRA_DRIVER, DRA_DRIVER, t)}}]}}
            for t in ("gpu", "mig")]


def dra_claim(p, node, devices, mig, share=False):
    """The ResourceClaim a DRA pod names, and its status (allocated to the devices, reserved for
    the pod; the pod's uid is filled in once the pod exists). With share: 19Gi of one shared
    GPU, the result with what it consumed and a shareID, as the scheduler writes them."""
    m = p["metadata"]
    req = {"deviceClassName": "mig.nvidia.com" if mig else "gpu.nvidia.com",
           "allocationMode": "ExactCount", "count": len(devices)}
    if share:
        req["capacity"] = {"requests": {"memory": "19Gi"}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": m["name"] + "-gpu", "namespace": m["namespace"],
                          "labels": {"app": m["labels"]["app"], "team": m["labels"]["team"]}},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": req}]}}}
    results = [{"request": "gpu", "driver": DRA_DRIVER, "pool": node, "device": d}
               for d in devices]
    if share:
        for r in results:
            r["consumedCapacity"] = {"memory": "19Gi"}
            r["shareID"] = str(uuid_mod.uuid5(uuid_mod.NAMESPACE_URL, m["name"]))
    status = {"status": {
        "allocation": {"devices": {"results": results},
                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                           "key": "metadata.name", "operator": "In", "values": [node]}]}]}},
        "reservedFor": [{"resource": "pods", "name": m["name"], "uid": None}]}}
    return claim, status


def node_status(name, i, alloc):
    now = sim.rfc3339(time.time())
    conds = [{"type": t, "status": "False", "reason": "Kubelet" + r,
              "message": "kubelet has " + m, "lastHeartbeatTime": now,
              "lastTransitionTime": now}
             for t, r, m in (("MemoryPressure", "HasSufficientMemory", "sufficient memory"),
                             ("DiskPressure", "HasNoDiskPressure", "no disk pressure"),
                             ("PIDPressure", "HasSufficientPID", "sufficient PID available"))]
    conds.append({"type": "Ready", "status": "True", "reason": "KubeletReady",
                  "message": "kubelet is posting ready status", "lastHeartbeatTime": now,
                  "lastTransitionTime": now})
    return {"capacity": dict(alloc), "allocatable": dict(alloc), "conditions": conds,
            "addresses": [{"type": "InternalIP", "address": "10.0.%d.%d" % (i // 250, i % 250)},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "bootID": "%08x-0000-4000-8000-%012x" % (i, i),
                         "containerRuntimeVersion": "containerd://1.7.27",
                         "kernelVersion": "6.1.132-147.221.amzn2023.x86_64",
                         "kubeProxyVersion": "", "kubeletVersion": "v1.33.1-eks-b9364f6",
                         "machineID": "ec2%029x" % i, "operatingSystem": "linux",
                         "osImage": "Amazon Linux 2023.7.20250512",
                         "systemUUID": "ec2%05x-0000-0000-0000-%012x" % (i, i)},
            "images": [{"names": ["registry.example.com/%s/worker@sha256:%064x" % (t, k),
                                  "registry.example.com/%s/worker:1.4.%d" % (t, k)],
                        "sizeBytes": 1200000000 + k} for k, t in enumerate(TEAMS)]}


def pod(i, ns, team, node, gpus, rng, claim=False):
    """A Deployment-style pod, as a scheduler and kubelet would leave it, without status. With
    claim, its GPUs come from the ResourceClaim <name>-gpu (Dynamic Resource Allocation)."""
    app = "%s-worker" % team if not gpus else "%s-trainer" % team
    h = "%09x" % (rng.getrandbits(36))
    image = "registry.example.com/%s/%s:1.4.%d" % (team, app, i % 7)
    res = {"limits": {"cpu": "4", "memory": "16Gi"}, "requests": {"cpu": "2", "memory": "8Gi"}}
    if claim:
        res["claims"] = [{"name": "gpu"}]
    elif gpus:
        res["limits"]["nvidia.com/gpu"] = str(gpus)
        res["requests"]["nvidia.com/gpu"] = str(gpus)
    sa_vol = "kube-api-access-%05x" % rng.getrandbits(20)
    main = {
        "name": "main", "image": image, "imagePullPolicy": "IfNotPresent",
        "args": ["--port=8080", "--log-level=info", "--config=/etc/%s/config.yaml" % app],
        "env": [{"name": "MODEL_DIR", "value": "/models"},
                {"name": "TEAM", "value": team},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "GOMAXPROCS", "valueFrom": {"resourceFieldRef": {
                    "resource": "limits.cpu", "containerName": "main"}}}],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
        "resources": res,
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                          "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8080, "scheme": "HTTP"},
                           "periodSeconds": 5, "timeoutSeconds": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/%s" % app, "readOnly": True},
                         {"name": "scratch", "mountPath": "/scratch"},
                         {"name": sa_vol, "readOnly": True,
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
    }
    containers = [main]
    if i % 4 == 0:
        containers.append({
            "name": "log-shipper", "image": "fluent/fluent-bit:3.0.7",
            "args": ["--config=/fluent-bit/etc/fluent-bit.conf"],
            "resources": {"limits": {"cpu": "200m", "memory": "128Mi"},
                          "requests": {"cpu": "50m", "memory": "64Mi"}},
            "volumeMounts": [{"name": "scratch", "mountPath": "/scratch", "readOnly": True}]})
    volumes = [
        {"name": "config", "configMap": {"name": app + "-config", "defaultMode": 420}},
        {"name": "scratch", "emptyDir": {"sizeLimit": "20Gi"}},
        {"name": sa_vol, "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt",
                           "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}]
    tolerations = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300},
                   {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300}]
    if gpus:
        tolerations.append({"key": "nvidia.com/gpu", "operator": "Exists",
                            "effect": "NoSchedule"})
    name = "%s-%s-%05d" % (app, h[:5], i)
    spec = {"containers": containers, "volumes": volumes, "tolerations": tolerations,
            "nodeName": node, "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "nodeSelector": {"kubernetes.io/os": "linux"}}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": name + "-gpu"}]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns,
            "generateName": "%s-%s-" % (app, h[:5]),
            "labels": {"app": app, "pod-template-hash": h[:9], "team": team,
                       "project": "p%d" % (i % 40), "app.kubernetes.io/name": app,
                       "app.kubernetes.io/version": "1.4.%d" % (i % 7)},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                            "kubectl.kubernetes.io/restartedAt": "2026-11-01T08:00:00Z"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "%s-%s" % (app, h[:9]), "controller": True,
                                 "blockOwnerDeletion": True,
                                 "uid": "0b6e3f1c-1d2e-4f5a-9b8c-%012x" % (i // 10)}]},
        "spec": spec,
    }


def pod_status(p, i, node_ip, t0):
    ts = sim.rfc3339
    started = t0 + 40
    cs = [{"name": c["name"], "image": c["image"],
           "imageID": c["image"].rsplit(":", 1)[0] + "@sha256:%064x" % (i * 7 + k),
           "containerID": "containerd://%064x" % (i * 131 + k), "ready": True, "started": True,
           "restartCount": 0, "lastState": {}, "state": {"running": {"startedAt": ts(started)}}}
          for k, c in enumerate(p["spec"]["containers"])]
    return {"status": {
        "phase": "Running", "qosClass": "Burstable", "hostIP": node_ip,
        "hostIPs": [{"ip": node_ip}],
        "podIP": "10.244.%d.%d" % (i // 250 % 256, i % 250 + 2),
        "podIPs": [{"ip": "10.244.%d.%d" % (i // 250 % 256, i % 250 + 2)}],
        "startTime": ts(t0 + 1),
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts(t0 + 3)},
            {"type": "Initialized", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts(t0 + 1)},
            {"type": "Ready", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts(started + 1)},
            {"type": "ContainersReady", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts(started + 1)},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
             "lastTransitionTime": ts(t0)}],
        "containerStatuses": cs}}


def place_share(dra):
    """--share: each DRA pod 19Gi of a shared GPU, four to a GPU, eight GPUs to a node:
    (nodes, {k: (("share", j), [device], False)})."""
    out = {}
    for n, k in enumerate(dra):
        j, slot = divmod(n, GPUS_PER_NODE * SHARES_PER_GPU)
        out[k] = (("share", j), ["gpu-%d" % (slot // SHARES_PER_GPU)], False)
    return -(-len(dra) // (GPUS_PER_NODE * SHARES_PER_GPU)) if dra else 0, out


def place_dra(sizes, dra):
    """Devices for the DRA pods (indices into sizes, in order): a pod takes its size in whole
    GPUs, first fit on the whole-GPU DRA nodes, while they have room; otherwise one 1g.10gb
    partition, first fit on the MIG nodes. Returns (pairs, {k: (node, devices, mig)}) with node
    ("dra", j) or ("mig", j)."""
    pairs = -(-len(dra) // DRA_PODS_PER_PAIR) if dra else 0
    whole = [0] * pairs   # GPUs taken on each whole-GPU node
    parts = [0] * pairs   # partitions taken on each MIG node
    out = {}
    for k in dra:
        g = sizes[k]
        j = next((j for j in range(pairs) if whole[j] + g <= GPUS_PER_NODE), None)
        if j is not None:
            out[k] = (("dra", j), ["gpu-%d" % m for m in range(whole[j], whole[j] + g)], False)
            whole[j] += g
            continue
        j = next(j for j in range(pairs) if parts[j] < GPUS_PER_NODE * MIG_PER_GPU)
        g, start = divmod(parts[j], MIG_PER_GPU)
        out[k] = (("mig", j), ["gpu-%d-mig-19-%d-1" % (g, start)], True)
        parts[j] += 1
    return pairs, out


def populate(env, n_pods, n_gpu, workers, n_dra=0, share=False):
    """Namespaces, nodes, DRA objects and pods; returns a summary dict."""
    rng = random.Random(20261122)
    api = Api(env["E2E_SERVER"], env["E2E_CA"], env["E2E_ADMIN_TOKEN"])
    namespaces = []
    for t in TEAMS:
        for e in ENVS:
            ns = "%s-%s" % (t, e)
            lab = {"team": t, "environment": e}
            if e == "prod":
                lab["project"] = t + "-serving"
            api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": ns, "labels": lab}})
            namespaces.append((ns, t))

    # GPU requests: a mix of 1, 2, 4 and 8 whole GPUs, packed first-fit onto 8-GPU nodes. The
    # DRA pods (n_dra of them, spread evenly through the GPU pods) go to DRA nodes instead; with
    # none, the cluster is exactly the one this benchmark always wrote.
    sizes = [rng.choice((1, 1, 1, 1, 2, 2, 4, 8)) for _ in range(n_gpu)]
    dra = sorted({int(j * n_gpu / n_dra) for j in range(n_dra)}) if n_dra else []
    dra_set = set(dra)
    free, place = [], [None] * n_gpu
    for k, g in enumerate(sizes):
        if k in dra_set:
            continue
        j = next((j for j, f in enumerate(free) if f >= g), None)
        if j is None:
            free.append(GPUS_PER_NODE)
            j = len(free) - 1
        free[j] -= g
        place[k] = j
    pairs, dra_place = place_share(dra) if share else place_dra(sizes, dra)
    n_gpu_nodes = len(free)
    n_cpu_nodes = max(1, (n_pods - n_gpu + 89) // 90)
    nodes = []  # (name, ip)
    for i in range(n_gpu_nodes + n_cpu_nodes):
        gpu = i < n_gpu_nodes
        name = "gpu-h100-%04d" % i if gpu else "cpu-m6i-%04d" % (i - n_gpu_nodes)
        labels, alloc = gpu_node(name, i) if gpu else cpu_node(name, i)
        api.call("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                           "metadata": {"name": name, "labels": labels},
                                           "spec": {"providerID": "aws:///us-east-1a/i-%017x"
                                                    % i}})
        st = node_status(name, i, alloc)
        api.merge_patch("/api/v1/nodes/%s/status" % name, {"status": st})
        nodes.append((name, st["addresses"][0]["address"]))

    # DRA nodes, a whole-GPU and a MIG one per pair, each with its ResourceSlice.
    dra_nodes = {}   # ("dra"|"mig", j) -> (name, ip)
    n_devices = 0
    if pairs:
        for dc in device_classes():
            api.call("POST", "/apis/resource.k8s.io/v1/deviceclasses", dc)
    for j in range(pairs):
        for kind in (("share",) if share else ("dra", "mig")):
            i = len(nodes) + len(dra_nodes)
            name = "gpu-h100-%s-%04d" % (kind, j)
            labels, alloc = dra_node(name, i, kind == "mig")
            created = api.call("POST", "/api/v1/nodes", {
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "spec": {"providerID": "aws:///us-east-1a/i-%017x" % i}})
            st = node_status(name, i, alloc)
            api.merge_patch("/api/v1/nodes/%s/status" % name, {"status": st})
            sl = dra_slice(name, created["metadata"]["uid"], i, kind == "mig", share)
            api.call("POST", "/apis/resource.k8s.io/v1/resourceslices", sl)
            n_devices += len(sl["spec"]["devices"])
            dra_nodes[(kind, j)] = (name, st["addresses"][0]["address"])

    # Pod i < n_pods: GPU pods spread evenly through the sequence.
    every = n_pods / n_gpu if n_gpu else 0
    gpu_idx = {int(k * every): k for k in range(n_gpu)}
    t0 = int(time.time()) - 3 * 86400
    jobs = []
    dra_geq, dra_whole = 0.0, 0
    for i in range(n_pods):
        ns, team = namespaces[i % len(namespaces)]
        k = gpu_idx.get(i)
        at = dra_place.get(k) if k is not None else None  # (where, devices, mig) of a DRA pod
        if at:
            node, gpus = dra_nodes[at[0]], sizes[k]
            dra_geq += SHARE_GEQ if share else MIG_SHARE if at[2] else len(at[1])
            dra_whole += not at[2] and not share
        elif k is not None:
            node, gpus = nodes[place[k]], sizes[k]
        else:
            node, gpus = nodes[n_gpu_nodes + i % n_cpu_nodes], 0
        p = pod(i, ns, team, node[0], gpus, rng, claim=bool(at))
        claim = dra_claim(p, node[0], at[1], at[2], share) if at else None
        jobs.append((p, pod_status(p, i, node[1], t0 + (i % 1000) * 60), claim))

    local = threading.local()

    def client():
        if not hasattr(local, "api"):
            local.api = Api(env["E2E_SERVER"], env["E2E_CA"], env["E2E_ADMIN_TOKEN"])
        return local.api

    def write(job):
        p, st, claim = job
        a = client()
        path = "/api/v1/namespaces/%s/pods" % p["metadata"]["namespace"]
        created = a.call("POST", path, p)
        a.merge_patch("%s/%s/status" % (path, p["metadata"]["name"]), st)
        if claim:
            # After the pod, so that the reservation carries its uid (kube-controller-manager's
            # resource claim controller drops a reservation for a pod it cannot find, and
            # deallocates a claim left reserved by no one).
            body, cst = claim
            cst["status"]["reservedFor"][0]["uid"] = created["metadata"]["uid"]
            cpath = "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % (
                p["metadata"]["namespace"])
            a.call("POST", cpath, body)
            a.merge_patch("%s/%s/status" % (cpath, body["metadata"]["name"]), cst)

    start = time.time()
    done = 0
    ex = concurrent.futures.ThreadPoolExecutor(workers)
    try:
        for _ in ex.map(write, jobs):
            done += 1
            if done % 2000 == 0:
                say("  %d pods written (%.0f s)" % (done, time.time() - start))
    finally:
        # On a failure or a signal, drop the queued writes instead of waiting for them.
        ex.shutdown(wait=True, cancel_futures=True)
    el = time.time() - start
    listed = api.get("/api/v1/pods?limit=1")
    dp_geq = float(sum(g for k, g in enumerate(sizes) if k not in dra_place))
    return {"namespaces": len(namespaces), "gpu_nodes": n_gpu_nodes, "cpu_nodes": n_cpu_nodes,
            "gpus": sum(sizes), "pods": n_pods, "gpu_pods": n_gpu, "write_s": el,
            "pod_bytes": len(json.dumps(jobs[0][0])) + len(json.dumps(jobs[0][1])),
            "remaining": listed["metadata"].get("remainingItemCount"),
            "dra_pods": len(dra_place), "dra_whole_pods": dra_whole,
            "dra_mig_pods": 0 if share else len(dra_place) - dra_whole,
            "dra_share_pods": len(dra_place) if share else 0, "dra_node_count": len(dra_nodes),
            "dra_nodes": sorted(n for n, _ in dra_nodes.values()), "devices": n_devices,
            "dra_geq": dra_geq, "dp_geq": dp_geq}


# ---- processes ------------------------------------------------------------------------------

def proc_mem(pid):
    """(VmRSS, VmHWM, RssAnon) in KiB. RssAnon is the private part: RSS less the mapped
    binary and shared libraries."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon"):
                out[k] = int(v.split()[0])
    return out["VmRSS"], out["VmHWM"], out["RssAnon"]


# The environment deploy/Dockerfile gives the controller (the image sets it; so does this run).
IMAGE_ENV = {"GNUTLS_NO_IMPLICIT_INIT": "1"}


class Procs:
    """Every process this benchmark starts, so that all are stopped whatever happens."""

    def __init__(self):
        self.procs = []

    def start(self, args, log, append=True, extra_env=None):
        f = open(log, "ab" if append else "wb")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GPU_COST_") and k not in ("KUBECONFIG", "POD_NAME")}
        env.update(extra_env or {})
        p = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=str(REPO))
        f.close()
        self.procs.append(p)
        return p

    @staticmethod
    def stop(p, timeout=20):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return p.returncode

    def stop_all(self):
        for p in self.procs:
            self.stop(p, timeout=10)


def tail(path, n=30):
    try:
        return "".join(Path(path).read_text(errors="replace").splitlines(True)[-n:])
    except OSError:
        return "(no log)"


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def controller_args(binary, cdir, port, extra=()):
    return [str(binary), "--config", str(CONFIG), "--kubeconfig",
            str(cdir / "controller.kubeconfig"), "--namespace", NS, "--no-leader-election",
            "--listen", "127.0.0.1:%d" % port, "--id", "bench-0"] + list(extra)


def controller_pods(port, timeout=30):
    """The controller's GET /api/v1/pods, every row (it answers 503 until its first snapshot)."""
    url = "http://127.0.0.1:%d/api/v1/pods?limit=100000" % port
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            if e.code != 503 or time.monotonic() > deadline:
                raise RuntimeError("GET %s: %s %s" % (url, e.code, e.read()[:500]))
        time.sleep(0.2)


def check_priced(doc, pop):
    """That the controller priced what the cluster holds: every GPU pod running, the DRA ones on
    the DRA nodes, their GPU-equivalents (whole GPUs, a 1g.10gb = 1/7 of an H100), and at an
    H100's price (the model from the devices' productName). A benchmark of a controller that
    ignored the DRA pods would measure nothing; this raises."""
    if doc.get("truncated"):
        raise RuntimeError("/api/v1/pods truncated at %d rows" % doc.get("count", -1))
    rows = [r for r in doc["pods"] if r.get("running")]
    dra_nodes = set(pop["dra_nodes"])
    on_dra = [r for r in rows if r.get("node") in dra_nodes]
    geq_dra = sum(r.get("geq") or 0 for r in on_dra)
    geq_all = sum(r.get("geq") or 0 for r in rows)
    want_all = pop["dra_geq"] + pop["dp_geq"]
    priced = sorted({(r.get("model"), r.get("capacity_type"), r.get("usd_per_gpu_hour"))
                     for r in on_dra}, key=str)
    line = ("%d running GPU pods (cluster: %d), %d of them on DRA nodes (cluster: %d) with "
            "%.3f GPU-equivalents (cluster: %.3f), %.3f GPU-equivalents in all (cluster: %.3f)" % (
                len(rows), pop["gpu_pods"], len(on_dra), pop["dra_pods"], geq_dra,
                pop["dra_geq"], geq_all, want_all))
    if on_dra:
        line += "; DRA pods priced as %s" % ", ".join("%s %s %s USD/GPU-hour" % k for k in priced)
    if (len(rows) != pop["gpu_pods"] or len(on_dra) != pop["dra_pods"] or
            any(k[0] != H100_PRODUCT.replace(" ", "-") or not k[2] for k in priced) or
            abs(geq_dra - pop["dra_geq"]) > 1e-3 * max(1.0, pop["dra_geq"]) or
            abs(geq_all - want_all) > 1e-3 * max(1.0, want_all)):
        raise RuntimeError("the controller did not price the cluster's GPU pods: %s; first rows "
                           "on DRA nodes: %s" % (line, json.dumps(on_dra[:3])))
    return line


def run_controller_sync(procs, binary, cdir, logdir, check=None, timeout=300):
    """Time to /readyz and RSS 3 s later; then (after the RSS is read, so that answering it
    is not in the figure) check(port), whose result goes in "check"."""
    port = free_port()
    log = logdir / "controller-sync.log"
    t0 = time.monotonic()
    p = procs.start(controller_args(binary, cdir, port), log, extra_env=IMAGE_ENV)
    while True:
        if p.poll() is not None:
            raise RuntimeError("controller exited with %s before /readyz:\n%s" % (
                p.returncode, tail(log)))
        if http_status("http://127.0.0.1:%d/readyz" % port) == 200:
            break
        if time.monotonic() - t0 > timeout:
            raise RuntimeError("controller not ready after %d s:\n%s" % (timeout, tail(log)))
        time.sleep(0.02)
    ready_s = time.monotonic() - t0
    time.sleep(SETTLE_S)
    rss, hwm, anon = proc_mem(p.pid)
    load = os.getloadavg()  # the machine may be shared: the figures are read beside this
    checked = check(port) if check else None
    rc = procs.stop(p)
    if rc != 0:
        raise RuntimeError("controller exited %s after SIGTERM:\n%s" % (rc, tail(log)))
    return {"ready_s": ready_s, "rss_kib": rss, "hwm_kib": hwm, "anon_kib": anon,
            "check": checked, "load": load}


def run_peer(procs, peer, cdir, logdir, flags, timeout=300):
    log = logdir / ("peer%s.log" % "".join(flags).replace("--", "-"))
    t0 = time.monotonic()
    # A fresh log: the "synced" line looked for below must be this run's.
    p = procs.start([str(peer), "--kubeconfig", str(cdir / "controller.kubeconfig")] + flags,
                    log, append=False)
    line = None
    while line is None:
        if p.poll() is not None:
            raise RuntimeError("informer-peer exited with %s before sync:\n%s" % (
                p.returncode, tail(log)))
        for ln in Path(log).read_text(errors="replace").splitlines():
            if ln.startswith("synced "):
                line = ln
        if line is None:
            if time.monotonic() - t0 > timeout:
                raise RuntimeError("informer-peer not synced after %d s:\n%s" % (timeout,
                                                                                 tail(log)))
            time.sleep(0.02)
    synced_s = time.monotonic() - t0
    time.sleep(SETTLE_S)
    rss, hwm, anon = proc_mem(p.pid)
    # Then, for the record: the live heap after a forced collection (the cache itself, without
    # the garbage of the initial LIST) and the RSS once the freed pages went back to the OS.
    p.send_signal(signal.SIGUSR1)
    gc_line = None
    deadline = time.monotonic() + 30
    while gc_line is None and time.monotonic() < deadline:
        gc_line = next((ln for ln in Path(log).read_text(errors="replace").splitlines()
                        if ln.startswith("gc ")), None)
        time.sleep(0.05)
    if gc_line is None:
        raise RuntimeError("informer-peer did not answer SIGUSR1:\n%s" % tail(log))
    time.sleep(0.5)
    rss_gc = proc_mem(p.pid)[0]
    procs.stop(p)
    fields = dict(kv.split("=", 1) for kv in line.split()[1:])
    gc = dict(kv.split("=", 1) for kv in gc_line.split()[1:])
    return {"ready_s": synced_s, "rss_kib": rss, "hwm_kib": hwm, "anon_kib": anon,
            "line": line,
            "own_sync_s": float(fields["sync_s"]), "pods": int(fields["pods"]),
            "gpu_pods": int(fields["gpu_pods"]), "dra_pods": int(fields["dra_pods"]),
            "slices": int(fields["slices"]), "claims": int(fields["claims"]),
            "heap_mib": float(fields["heap_inuse_mib"]),
            "streaming_list": fields.get("streaming_list", "?"),
            "client_lists": int(fields.get("lists", -1)),
            "client_watchlists": int(fields.get("watchlists", -1)),
            "live_heap_mib": float(gc["heap_alloc_mib"]), "rss_gc_kib": rss_gc}


def pod_lists(api):
    """(seconds, requests) kube-apiserver has spent answering LISTs of pods so far."""
    m = api.metrics()
    return (metric(m, "apiserver_request_duration_seconds_sum", verb="LIST", resource="pods"),
            metric(m, "apiserver_request_duration_seconds_count", verb="LIST",
                   resource="pods"))


def measured(api, fn, *args):
    """fn(*args), plus how long the server took to answer the pod LISTs meanwhile."""
    s0, n0 = pod_lists(api)
    r = fn(*args)
    s1, n1 = pod_lists(api)
    r["server_list_s"], r["server_lists"] = s1 - s0, int(n1 - n0)
    return r


def cluster_state(api):
    """(pods, ResourceClaims allocated and reserved for a pod) as the API server holds them
    now: kube-controller-manager runs beside the benchmark (its pod garbage collector, garbage
    collector and resource claim controller could delete pods or release claims)."""
    listed = api.get("/api/v1/pods?limit=1")
    pods = len(listed["items"]) + (listed["metadata"].get("remainingItemCount") or 0)
    claims = api.get("/apis/resource.k8s.io/v1/resourceclaims")["items"]
    held = sum(1 for c in claims if (c.get("status") or {}).get("allocation") and
               (c.get("status") or {}).get("reservedFor"))
    return pods, held


def checkpoint_rv(api):
    status, doc = api.request("GET", "/api/v1/namespaces/%s/configmaps/gpu-cost-checkpoint" % NS)
    return doc["metadata"]["resourceVersion"] if status == 200 else None


def run_replay(procs, binary, cdir, logdir, env, timeout=300):
    """The controller restarts (restoring its checkpoint), the seven-day replay runs while it
    watches, then its RSS once it has checkpointed and published again."""
    port = free_port()
    log = logdir / "controller-replay.log"
    p = procs.start(controller_args(binary, cdir, port, ["--checkpoint-interval", "5s",
                                                         "--report-interval", "5s"]), log,
                    extra_env=IMAGE_ENV)
    t0 = time.monotonic()
    while http_status("http://127.0.0.1:%d/readyz" % port) != 200:
        if p.poll() is not None or time.monotonic() - t0 > timeout:
            raise RuntimeError("controller (replay) not ready:\n%s" % tail(log))
        time.sleep(0.05)
    time.sleep(SETTLE_S)
    before = proc_mem(p.pid)
    api = Api(env["E2E_SERVER"], env["E2E_CA"], env["E2E_ADMIN_TOKEN"])
    r = sim.Replay(api, Etcd(env["E2E_ETCD_URL"]))
    t1 = time.time()
    r.setup()
    r.run()
    replay_s = time.time() - t1
    # Two fresh checkpoints after the replay: everything it wrote has been folded in, written
    # out, and the reports of the replayed days published (same loop, every 5 s).
    for _ in range(2):
        rv0 = checkpoint_rv(api)
        deadline = time.time() + 60
        while checkpoint_rv(api) == rv0:
            if p.poll() is not None or time.time() > deadline:
                raise RuntimeError("no fresh checkpoint after the replay:\n%s" % tail(log))
            time.sleep(0.25)
    time.sleep(SETTLE_S)
    rss, hwm, anon = proc_mem(p.pid)
    cms = api.get("/api/v1/namespaces/%s/configmaps" % NS)["items"]
    reports = [c for c in cms if (c["metadata"].get("labels") or {}).get("gpu-cost.io/kind") ==
               "report"]
    ckpt = [c for c in cms if c["metadata"]["name"].startswith("gpu-cost-checkpoint")]
    ckpt_bytes = sum(len(v.encode()) for c in ckpt for v in (c.get("data") or {}).values())
    rc = procs.stop(p)
    if rc != 0:
        raise RuntimeError("controller (replay) exited %s after SIGTERM:\n%s" % (rc, tail(log)))
    st = r.stats()
    return {"rss_before_kib": before[0], "rss_kib": rss, "hwm_kib": hwm, "anon_kib": anon,
            "replay_s": replay_s,
            "replay_pods": st["pods"], "replay_events": st["events"], "reports": len(reports),
            "checkpoint_bytes": ckpt_bytes}


# ---- main -----------------------------------------------------------------------------------

def mib(kib):
    return kib / MIB


def dra_counts(text):
    try:
        out = [int(v) for v in str(text).split(",") if v.strip() != ""]
    except ValueError:
        raise argparse.ArgumentTypeError("not a count or a comma-separated list of counts: %r"
                                         % text)
    if not out or any(v < 0 for v in out):
        raise argparse.ArgumentTypeError("counts must be >= 0: %r" % text)
    return out


def bench_cluster(a, n_dra, binary, peer):
    """One run on a fresh cluster with n_dra of the GPU pods on DRA claims; returns the
    figures. Everything it starts is stopped before it returns or raises."""
    cdir = Path(tempfile.mkdtemp(prefix="gpu-cost-bench-"))
    logdir = cdir / "logs"
    logdir.mkdir()
    procs = Procs()
    ok = False
    res = {"dra_pods": n_dra}
    try:
        t = time.time()
        cp = subprocess.run([str(CLUSTER), "start", str(cdir)], capture_output=True, text=True,
                            timeout=240)
        if cp.returncode != 0:
            raise RuntimeError("e2e-cluster.sh start:\n%s%s" % (cp.stdout, cp.stderr))
        env = read_env(str(cdir))
        kubectl = [env["KUBECTL"], "--kubeconfig", str(cdir / "admin.kubeconfig")]
        subprocess.run(kubectl + ["create", "namespace", NS], check=True, capture_output=True)
        subprocess.run(kubectl + ["apply", "-f", str(RBAC)], check=True, capture_output=True)
        ctrl_api = Api(env["E2E_SERVER"], env["E2E_CA"], env["E2E_CONTROLLER_TOKEN"])
        deadline = time.time() + 15
        while ctrl_api.request("GET", "/api/v1/pods?limit=1")[0] != 200:
            if time.time() > deadline:
                raise RuntimeError("the controller identity is still refused after RBAC")
            time.sleep(0.1)
        say("cluster ready in %.1f s (%s)" % (time.time() - t, cdir))

        say("writing %d pods (%d with GPUs, %d of them on DRA claims) with %d writers" % (
            a.pods, a.gpu_pods, n_dra, a.workers))
        pop = populate(env, a.pods, a.gpu_pods, a.workers, n_dra, a.share)
        res["pop"] = pop
        say("cluster: %(pods)d pods (%(gpu_pods)d with GPUs, %(gpus)d GPUs), %(gpu_nodes)d GPU "
            "nodes + %(cpu_nodes)d CPU nodes, %(namespaces)d team namespaces; pods written, "
            "bound and given status in %(write_s).0f s; a pod's create + status body about "
            "%(pod_bytes)d bytes" % pop)
        if n_dra and a.share:
            say("  DRA: %(dra_pods)d of the GPU pods on ResourceClaims, each a 19Gi share of a "
                "shared H100 (%(dra_share_pods)d shares; %(dra_geq).3f GPU-equivalents), "
                "%(dra_node_count)d DRA nodes publishing %(devices)d shared devices" % pop)
        elif n_dra:
            say("  DRA: %(dra_pods)d of the GPU pods on ResourceClaims (%(dra_whole_pods)d on "
                "whole H100s, %(dra_mig_pods)d on a 1g.10gb partition; %(dra_geq).3f "
                "GPU-equivalents), %(dra_node_count)d DRA nodes (half whole GPUs, half MIG) "
                "publishing %(devices)d devices in their ResourceSlices" % pop)

        admin = Api(env["E2E_SERVER"], env["E2E_CA"], env["E2E_ADMIN_TOKEN"])
        ours = measured(admin, run_controller_sync, procs, binary, cdir, logdir,
                        lambda port: check_priced(controller_pods(port), pop))
        res["ours"] = ours
        say("ours: gpu-cost-controller ready_s=%.2f rss_mib=%.1f hwm_mib=%.1f anon_mib=%.1f; "
            "server time answering its pod LISTs %.2f s in %d requests; load average %.2f "
            "%.2f %.2f" % ((ours["ready_s"], mib(ours["rss_kib"]), mib(ours["hwm_kib"]),
                            mib(ours["anon_kib"]), ours["server_list_s"], ours["server_lists"])
                           + tuple(ours["load"])))
        say("check: the controller's /api/v1/pods after the sync: %s: ok" % ours["check"])
        peers = {}
        dra_flag = ["--dra"] if n_dra else []
        for name, flags in (("informer", []),
                            ("informer --strip-managed-fields", ["--strip-managed-fields"]),
                            ("informer --protobuf", ["--protobuf"]),
                            ("informer --careful", ["--careful"])):
            r = measured(admin, run_peer, procs, peer, cdir, logdir, flags + dra_flag)
            if r["pods"] < a.pods or r["gpu_pods"] != a.gpu_pods or r["dra_pods"] != n_dra:
                raise RuntimeError("%s saw %d pods, %d with GPUs, %d on claims" % (
                    name, r["pods"], r["gpu_pods"], r["dra_pods"]))
            if n_dra and (r["slices"] != pop["dra_node_count"] or r["claims"] != n_dra):
                raise RuntimeError("%s saw %d ResourceSlices and %d ResourceClaims" % (
                    name, r["slices"], r["claims"]))
            peers[name] = r
            say("peer: %s%s synced_s=%.2f rss_mib=%.1f hwm_mib=%.1f anon_mib=%.1f "
                "heap_inuse_mib=%.1f; after a forced GC: live_heap_mib=%.1f rss_mib=%.1f; "
                "server time answering its pod LISTs %.2f s in %d requests; streaming list "
                "%s (its requests: %d LISTs, %d watch-lists)" % (
                    name, " --dra" if n_dra else "", r["ready_s"], mib(r["rss_kib"]),
                    mib(r["hwm_kib"]), mib(r["anon_kib"]), r["heap_mib"], r["live_heap_mib"],
                    mib(r["rss_gc_kib"]), r["server_list_s"], r["server_lists"],
                    r["streaming_list"], r["client_lists"], r["client_watchlists"]))
        res["peers"] = peers

        plain = peers["informer"]
        ratio = ours["rss_kib"] / plain["rss_kib"]
        say("RSS after syncing %d pods: ours %.1f MiB (target < 20 MB: %s), informer %.1f MiB; "
            "ours/informer %.3f = 1/%.1f (target <= 1/5: %s)" % (
                a.pods, mib(ours["rss_kib"]),
                "met" if ours["rss_kib"] * 1024 < 20e6 else "MISSED", mib(plain["rss_kib"]),
                ratio, 1 / ratio, "met" if ratio <= 0.2 else "MISSED"))
        for name, r in peers.items():
            if name not in ("informer", "informer --careful"):
                say("  vs %s: ours/peer RSS %.3f" % (name, ours["rss_kib"] / r["rss_kib"]))
        careful = peers["informer --careful"]
        cratio = ours["rss_kib"] / careful["rss_kib"]
        say("  vs the careful informer (--careful, %.1f MiB, streaming list %s): ours/peer RSS "
            "%.3f = 1/%.1f (target <= 1/5: %s); after a forced GC (%.1f MiB) %.3f = 1/%.1f" % (
                mib(careful["rss_kib"]), careful["streaming_list"], cratio, 1 / cratio,
                "met" if cratio <= 0.2 else "MISSED", mib(careful["rss_gc_kib"]),
                ours["rss_kib"] / careful["rss_gc_kib"], careful["rss_gc_kib"] / ours["rss_kib"]))
        say("  vs the informer after a forced GC returned its garbage (its floor): ours/peer "
            "RSS %.3f = 1/%.1f" % (ours["rss_kib"] / plain["rss_gc_kib"],
                                  plain["rss_gc_kib"] / ours["rss_kib"]))
        say("time to sync: ours %.2f s, informer %.2f s (ours/informer %.2fx), careful "
            "informer %.2f s (ours/careful %.2fx)" % (
                ours["ready_s"], plain["ready_s"], ours["ready_s"] / plain["ready_s"],
                careful["ready_s"], ours["ready_s"] / careful["ready_s"]))

        # kube-controller-manager and kube-scheduler run beside the benchmark: the pods (bound,
        # to nodes that exist, owners that do not) and the claims must still be there.
        pods_now, held = cluster_state(admin)
        if pods_now != a.pods or held != n_dra:
            raise RuntimeError("the cluster changed under the benchmark: %d pods (wrote %d), %d "
                               "claims allocated and reserved (wrote %d)" % (
                                   pods_now, a.pods, held, n_dra))
        say("cluster after the measurements: %d pods, %d claims allocated and reserved, as "
            "written" % (pods_now, held))

        if a.no_replay:
            say("seven-day replay: skipped (--no-replay)")
        else:
            rep = run_replay(procs, binary, cdir, logdir, env)
            res["replay"] = rep
            say("seven-day replay (tests/e2e/sim.py: %(replay_pods)d GPU-churn pods, "
                "%(replay_events)d events, %(replay_s).0f s) into the same cluster while the "
                "controller runs: %(reports)d report ConfigMaps, checkpoint %(checkpoint_bytes)d "
                "bytes" % rep)
            say("ours after the replay: rss_mib=%.1f hwm_mib=%.1f anon_mib=%.1f (rss %.1f MiB "
                "before it; target < 20 MB: %s)" % (mib(rep["rss_kib"]), mib(rep["hwm_kib"]),
                                                   mib(rep["anon_kib"]),
                                                   mib(rep["rss_before_kib"]),
                                        "met" if rep["rss_kib"] * 1024 < 20e6 else "MISSED"))
        ok = True
    finally:
        procs.stop_all()
        subprocess.run([str(CLUSTER), "stop", str(cdir)], capture_output=True, timeout=60)
        if a.keep or not ok:
            say("cluster directory and logs kept in %s" % cdir)
        else:
            shutil.rmtree(cdir, ignore_errors=True)
    return res


def side_by_side(a, runs):
    say("")
    say("side by side (%d pods, %d with GPUs; each row its own cluster):" % (a.pods, a.gpu_pods))
    say("  %-9s %-18s %-10s %-10s %-10s %-20s %-13s %-20s %-13s %-13s %s" % (
        "dra_pods", "DRA nodes/devices", "ours sync", "ours RSS", "ours anon",
        "informer sync, RSS", "ours/informer", "careful sync, RSS", "ours/careful",
        "after replay", "load (1 min)"))
    for r in runs:
        pop, ours, plain = r["pop"], r["ours"], r["peers"]["informer"]
        careful = r["peers"]["informer --careful"]
        rep = r.get("replay")
        say("  %-9d %-18s %-10s %-10s %-10s %-20s %-13s %-20s %-13s %-13s %.2f" % (
            r["dra_pods"], "%d/%d" % (pop["dra_node_count"], pop["devices"]),
            "%.2f s" % ours["ready_s"], "%.1f MiB" % mib(ours["rss_kib"]),
            "%.1f MiB" % mib(ours["anon_kib"]),
            "%.2f s, %.1f MiB" % (plain["ready_s"], mib(plain["rss_kib"])),
            "1/%.1f" % (plain["rss_kib"] / ours["rss_kib"]),
            "%.2f s, %.1f MiB" % (careful["ready_s"], mib(careful["rss_kib"])),
            "1/%.1f" % (careful["rss_kib"] / ours["rss_kib"]),
            "%.1f MiB" % mib(rep["rss_kib"]) if rep else "-", ours["load"][0]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(REPO / "build"), help="the CMake build directory")
    ap.add_argument("--pods", type=int, default=int(os.environ.get("BENCH_SYNC_PODS", 10000)))
    ap.add_argument("--gpu-pods", type=int,
                    default=int(os.environ.get("BENCH_SYNC_GPU_PODS", 1000)))
    ap.add_argument("--dra-pods", type=dra_counts,
                    default=dra_counts(os.environ.get("BENCH_SYNC_DRA_PODS") or "0"),
                    help="how many of the GPU pods hold their GPUs through ResourceClaims; a "
                    "comma-separated list runs once per value, each on a fresh cluster")
    ap.add_argument("--share", action="store_true",
                    help="the DRA pods hold 19Gi shares of shared GPUs (consumable capacity)")
    ap.add_argument("--workers", type=int, default=8, help="parallel writers of pods")
    ap.add_argument("--no-replay", action="store_true", help="skip the seven-day replay")
    ap.add_argument("--keep", action="store_true", help="keep the cluster directory")
    a = ap.parse_args(argv)
    if any(d > a.gpu_pods for d in a.dra_pods):
        ap.error("--dra-pods: at most --gpu-pods (%d)" % a.gpu_pods)

    binary = Path(a.build).resolve() / "gpu-cost-controller"
    bindir = e2e_bin()
    if not binary.exists():
        sys.exit("controller-sync: %s not built" % binary)
    if not (bindir / "kube-apiserver").exists():
        sys.exit("controller-sync: no e2e tools in %s (scripts/e2e-build.sh)" % bindir)
    peer = build_peer(bindir)

    # SIGTERM/SIGINT unwind through the finally of bench_cluster, which stops everything.
    def on_signal(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    runs = []
    for k, n_dra in enumerate(a.dra_pods):
        if len(a.dra_pods) > 1:
            say("%s== run %d of %d: %d of the %d GPU pods on DRA claims" % (
                "\n" if k else "", k + 1, len(a.dra_pods), n_dra, a.gpu_pods))
        runs.append(bench_cluster(a, n_dra, binary, peer))
    if len(runs) > 1:
        side_by_side(a, runs)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, ApiError, subprocess.CalledProcessError) as e:
        print("controller-sync: FAILED: %s" % e, file=sys.stderr)
        sys.exit(1)
