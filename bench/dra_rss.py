#!/usr/bin/env python3
"""Peak RSS of `gpu-cost analyze` on 10,000 GPU pods: all on the device plugin (today), against
9,000 on the device plugin and 1,000 on DRA claims (with the claims and the slices of 100 DRA
nodes, half of them MIG with 7 partitions per GPU). Usage: bench/dra_rss.py BUILD_DIR.

Each run is its own process; its peak RSS is the child's ru_maxrss. The figures go to
docs/benchmarks.md by hand.
"""

import json
import os
import resource
import subprocess
import sys
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
OUT = os.path.join(BUILD, "bench", "dra")
PODS = 10000
DRA_PODS = 1000
NODES = 200  # 100 device-plugin nodes, 100 DRA nodes, 8 GPUs each
WINDOW = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
H100 = "NVIDIA H100 80GB HBM3"


def pod(i, node, dra):
    name = "p-%05d" % i
    c = {"name": "main", "image": "x", "resources": {}}
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": "ns-%d" % (i % 20), "uid": "uid-" + name,
                      "labels": {"team": "t%d" % (i % 7), "project": "p%d" % (i % 13)},
                      "creationTimestamp": "2026-11-16T00:00:00Z"},
         "spec": {"nodeName": node, "containers": [c]},
         "status": {"phase": "Succeeded",
                    "conditions": [{"type": "PodScheduled", "status": "True",
                                    "lastTransitionTime": "2026-11-%02dT%02d:00:00Z"
                                    % (16 + i % 6, i % 20)}],
                    "containerStatuses": [{"name": "main", "state": {"terminated": {
                        "finishedAt": "2026-11-%02dT%02d:30:00Z" % (16 + i % 6, i % 20 + 2)}}}]}}
    if dra:
        c["resources"]["claims"] = [{"name": "gpu"}]
        p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one"}]
        p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": name + "-gpu"}]
    else:
        c["resources"] = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    return p


def node(n, dra):
    alloc = {"cpu": "96", "memory": "1000Gi", "pods": "110"}
    if not dra:
        alloc["nvidia.com/gpu"] = "8"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": n, "uid": "uid-" + n, "creationTimestamp": "2026-11-01T00:00:00Z",
                         "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                    "nvidia.com/gpu.count": "8"}},
            "status": {"allocatable": alloc}}


def s(v):
    return {"string": v}


def slice_of(n, mig):
    devs = []
    for g in range(8):
        uuid = "GPU-%s-%d" % (n, g)
        if not mig:
            devs.append({"name": "gpu-%d" % g, "attributes": {
                "type": s("gpu"), "uuid": s(uuid), "productName": s(H100)},
                "capacity": {"memory": {"value": "81559Mi"}}})
            continue
        for k in range(7):
            devs.append({"name": "gpu-%d-mig-19-%d-1" % (g, k), "attributes": {
                "type": s("mig"), "uuid": s("MIG-%s-%d-%d" % (n, g, k)), "parentUUID": s(uuid),
                "profile": s("1g.10gb"), "productName": s(H100)},
                "capacity": {"memory": {"value": "9856Mi"}, "memorySlice%d" % k: {"value": "1"}}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": n + "-gpu"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": n,
                     "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                     "devices": devs}}


def generate(with_dra):
    nodes, pods, items = [], [], []
    dp_nodes = ["dp-%03d" % i for i in range(NODES // 2)]
    dra_nodes = ["dra-%03d" % i for i in range(NODES // 2)]
    nodes += [node(n, False) for n in dp_nodes]
    if with_dra:
        nodes += [node(n, True) for n in dra_nodes]
        items += [slice_of(n, i % 2 == 1) for i, n in enumerate(dra_nodes)]
    for i in range(PODS):
        dra = with_dra and i < DRA_PODS
        if dra:
            n = dra_nodes[i % len(dra_nodes)]
            mig = (i % len(dra_nodes)) % 2 == 1
            dev = "gpu-%d-mig-19-%d-1" % ((i // 100) % 8, (i // 800) % 7) if mig else \
                "gpu-%d" % ((i // 100) % 8)
            name = "p-%05d" % i
            items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": name + "-gpu", "namespace": "ns-%d" % (i % 20)},
                          "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                              "deviceClassName": "gpu.nvidia.com"}}]}},
                          "status": {"allocation": {"devices": {"results": [
                              {"request": "gpu", "driver": "gpu.nvidia.com", "pool": n,
                               "device": dev}]}},
                              "reservedFor": [{"resource": "pods", "name": name}]}})
        else:
            n = dp_nodes[i % len(dp_nodes)]
        pods.append(pod(i, n, dra))
    tag = "dra" if with_dra else "today"
    os.makedirs(OUT, exist_ok=True)
    paths = {}
    for kind, doc in (("pods", {"kind": "PodList", "items": pods}),
                      ("nodes", {"kind": "NodeList", "items": nodes}),
                      ("dra", {"kind": "List", "items": items})):
        paths[kind] = os.path.join(OUT, "%s-%s.json" % (tag, kind))
        with open(paths[kind], "w") as f:
            json.dump(doc, f)
    return paths


def run(paths, with_dra):
    args = [os.path.join(BUILD, "gpu-cost"), "analyze", "--pods", paths["pods"], "--nodes",
            paths["nodes"], "--window", WINDOW, "--by", "team,project", "--format", "json"]
    if with_dra:
        args += ["--claims", paths["dra"], "--slices", paths["dra"]]
    # A fresh interpreter per run: ru_maxrss of RUSAGE_CHILDREN is the largest child so far.
    code = ("import resource,subprocess,sys,time;t=time.time();"
            "r=subprocess.run(sys.argv[1:],capture_output=True);"
            "assert r.returncode==0,r.stderr[:2000];"
            "print(time.time()-t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
            "len(r.stdout))")
    out = subprocess.run([sys.executable, "-c", code] + args, capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), int(out[1])


def main():
    for with_dra in (False, True):
        paths = generate(with_dra)
        size = sum(os.path.getsize(p) for k, p in paths.items() if with_dra or k != "dra")
        best = min(run(paths, with_dra) for _ in range(3))
        print("%-6s pods=%d dra_pods=%d input=%.1f MiB time=%.3fs peak_rss=%.1f MiB"
              % ("dra" if with_dra else "today", PODS, DRA_PODS if with_dra else 0,
                 size / 2**20, best[0], best[1] / 1024))


if __name__ == "__main__":
    main()
