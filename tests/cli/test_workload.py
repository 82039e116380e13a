"""`gpu-cost analyze --by workload`: each pod's top-level owner (docs/workloads.md) from the
ReplicaSet and Job dumps given with --replicasets and --jobs, and the fallbacks without them,
with GPU-seconds worked out by hand."""

import json

from conftest import analyze_args
from test_cli import HAND_CONFIG, mk_list, mk_node, mk_pod

WINDOW = "2026-01-01T00:00:00Z,2026-01-02T00:00:00Z"


def owned(pod, kind, name, uid, labels=None):
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": kind, "name": name,
                                           "uid": uid, "controller": True}]
    pod["metadata"]["labels"].update(labels or {})
    return pod


def owner_obj(kind, ns, name, uid, parent=None):
    md = {"name": name, "namespace": ns, "uid": uid}
    if parent:
        md["ownerReferences"] = [{"kind": parent[0], "name": parent[1], "uid": parent[2],
                                  "controller": True}]
    return {"apiVersion": "apps/v1" if kind == "ReplicaSet" else "batch/v1", "kind": kind,
            "metadata": md, "spec": {}}


def one_gpu(ns, name, hour_from, hour_to):
    """1 GPU from hour_from to hour_to on 2026-01-01: (hour_to - hour_from) x 3600 GPU-s."""
    return mk_pod(ns, name, "node-a", [("main", {"nvidia.com/gpu": "1"},
                                        {"nvidia.com/gpu": "1"})],
                  phase="Succeeded", bound="2026-01-01T%02d:00:00Z" % hour_from,
                  finished=["2026-01-01T%02d:00:00Z" % hour_to])


def cluster(tmp_path):
    pods = [
        # a Deployment's ReplicaSet named <deployment>-<hash>: 1 h
        owned(one_gpu("ml", "web-7d9f8-a", 0, 1), "ReplicaSet", "web-7d9f8", "rs-1",
              {"pod-template-hash": "7d9f8"}),
        # a Deployment whose ReplicaSet does not say it by name: 2 h
        owned(one_gpu("ml", "odd-1", 1, 3), "ReplicaSet", "renamed-rs", "rs-2",
              {"pod-template-hash": "x1"}),
        # a CronJob's Job: 3 h
        owned(one_gpu("batch", "nightly-29-a", 3, 6), "Job", "nightly-29", "job-1"),
        # a Job of its own (Kueue-managed or not): 1 h
        owned(one_gpu("batch", "train-42-a", 6, 7), "Job", "train-42", "job-2",
              {"kueue.x-k8s.io/queue-name": "q"}),
        # a StatefulSet: 2 h
        owned(one_gpu("ml", "db-0", 7, 9), "StatefulSet", "db", "sts-1"),
        # a JobSet's Job, the Job not dumped: the label names it: 1 h
        owned(one_gpu("ml", "js-w-0-a", 9, 10), "Job", "js-w-0", "job-9",
              {"jobset.sigs.k8s.io/jobset-name": "js"}),
        # no controller: 1 h
        one_gpu("ml", "bare", 10, 11),
    ]
    nodes = [mk_node("node-a", "2025-12-01T00:00:00Z",
                     {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                      "nvidia.com/gpu.count": "8", "karpenter.sh/capacity-type": "on-demand"},
                     {"nvidia.com/gpu": "8"})]
    rss = [owner_obj("ReplicaSet", "ml", "web-7d9f8", "rs-1", ("Deployment", "web", "d-1")),
           owner_obj("ReplicaSet", "ml", "renamed-rs", "rs-2", ("Deployment", "odd", "d-2"))]
    jobs = [owner_obj("Job", "batch", "nightly-29", "job-1", ("CronJob", "nightly", "c-1")),
            owner_obj("Job", "batch", "train-42", "job-2")]
    files = {}
    for name, doc in (("pods", mk_list(pods)), ("nodes", mk_list(nodes)),
                      ("config", HAND_CONFIG),
                      ("rs", {"apiVersion": "apps/v1", "kind": "ReplicaSetList", "items": rss}),
                      ("jobs", {"apiVersion": "batch/v1", "kind": "JobList", "items": jobs})):
        files[name] = tmp_path / (name + ".json")
        files[name].write_text(json.dumps(doc))
    return files


def by_workload(doc):
    return {g["keys"]["workload"]: g["gpu_seconds"] for g in doc["groups"]}


def test_analyze_by_workload_with_owner_dumps(cli, tmp_path):
    f = cluster(tmp_path)
    args = analyze_args(WINDOW, by="workload", namespaces=False, config=f["config"],
                        pods=f["pods"], nodes=f["nodes"])
    doc = cli.ok(*args, "--replicasets", f["rs"], "--jobs", f["jobs"]).json()
    assert by_workload(doc) == {
        "Deployment/ml/web": 3600.0, "Deployment/ml/odd": 7200.0,
        "CronJob/batch/nightly": 10800.0, "Job/batch/train-42": 3600.0,
        "StatefulSet/ml/db": 7200.0, "JobSet/ml/js": 3600.0, "Pod/ml/bare": 3600.0}
    # "controller" is the dimension's other name.
    args2 = analyze_args(WINDOW, by="controller", namespaces=False, config=f["config"],
                         pods=f["pods"], nodes=f["nodes"])
    doc2 = cli.ok(*args2, "--replicasets", f["rs"], "--jobs", f["jobs"]).json()
    assert sorted(g["gpu_seconds"] for g in doc2["groups"]) == sorted(
        g["gpu_seconds"] for g in doc["groups"])


def test_analyze_by_workload_fallbacks(cli, tmp_path):
    """Without the dumps: the template hash names the Deployment, a Job stands for itself."""
    f = cluster(tmp_path)
    doc = cli.ok(*analyze_args(WINDOW, by="workload", namespaces=False, config=f["config"],
                               pods=f["pods"], nodes=f["nodes"])).json()
    assert by_workload(doc) == {
        "Deployment/ml/web": 3600.0, "ReplicaSet/ml/renamed-rs": 7200.0,
        "Job/batch/nightly-29": 10800.0, "Job/batch/train-42": 3600.0,
        "StatefulSet/ml/db": 7200.0, "JobSet/ml/js": 3600.0, "Pod/ml/bare": 3600.0}


def test_analyze_bad_owner_dumps(cli, tmp_path):
    f = cluster(tmp_path)
    args = analyze_args(WINDOW, by="workload", namespaces=False, config=f["config"],
                        pods=f["pods"], nodes=f["nodes"])
    # A Job list given as ReplicaSets: refused, naming the file.
    r = cli(*args, "--replicasets", f["jobs"])
    assert r.code == 2 and "jobs.json" in r.err, r
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = cli(*args, "--jobs", bad)
    assert r.code == 2 and "bad.json" in r.err, r
    # An item without a uid is skipped with a warning; the rest resolve.
    jobs = json.loads(f["jobs"].read_text())
    del jobs["items"][0]["metadata"]["uid"]
    f["jobs"].write_text(json.dumps(jobs))
    r = cli.ok(*args, "--jobs", f["jobs"])
    assert "uid" in r.err, r
    assert by_workload(r.json())["Job/batch/nightly-29"] == 10800.0
