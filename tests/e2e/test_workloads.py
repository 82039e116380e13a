"""Workloads as a real cluster runs them: kube-controller-manager turns a Deployment, a
StatefulSet, Jobs, a CronJob and a JobSet-like custom parent into ReplicaSets, Jobs and pods with
the owner references it writes, kube-scheduler binds each pod to a node with free GPUs (and marks
one that fits nowhere Unschedulable), and the simulated kubelet (kubelet.py, the only simulated
part) runs and finishes them. The TTL-after-finished controller and the garbage collector then
delete finished Jobs and their pods, scaling a Deployment down deletes a running pod, and
deleting the custom parent cascades: real events the controller must survive.

The truth is what the pods said, read on a watch of their namespace by the test (the last state
of each pod before it went): a pod holds its GPUs from its PodScheduled time (written by
kube-scheduler) to the latest container finishedAt (written by the simulated kubelet), or up to
now while it runs. The controller's /api/v1/pods must equal it per pod, to the second, and name
the controller kube-controller-manager wrote for every pod that still exists; its
/api/v1/costs?by=workload must name each pod's top-level owner (docs/workloads.md: the
Deployment, CronJob, JobSet parent, Job or StatefulSet the test created), with the GPU-seconds
of the truth summed per workload.
"""

import http.client
import json
import ssl
import threading
import time
import urllib.parse
import urllib.request

import pytest

import e2e_truth as truth
import harness
import sim
from kubelet import RUN_SECONDS, SimulatedKubelet

CFG = json.loads(harness.CONFIG.read_text())
NS = "ml"
NODES = ("gpu-a", "gpu-b")
GPUS_PER_NODE = 8


class PodRecorder:
    """Watches the pods of a namespace from a LIST's resourceVersion and keeps the last object
    of every pod uid seen (a deleted pod: its last state before the DELETED event)."""

    def __init__(self, cluster, ns):
        env = cluster.env
        u = urllib.parse.urlparse(env["E2E_SERVER"])
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=env["E2E_CA"])
        self.token = env["E2E_ADMIN_TOKEN"]
        self.api, self.ns = cluster.api, ns
        self.last = {}
        self.deleted = set()
        self.lock = threading.Lock()
        self.stop_ev = threading.Event()
        self.thread = None

    def start(self):
        rv = self.api.get("/api/v1/namespaces/%s/pods" % self.ns)["metadata"]["resourceVersion"]
        self.thread = threading.Thread(target=self._run, args=(rv,), daemon=True)
        self.thread.start()
        return self

    def _run(self, rv):
        while not self.stop_ev.is_set():
            conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                               timeout=5)
            try:
                conn.request("GET", "/api/v1/namespaces/%s/pods?watch=1&resourceVersion=%s"
                             "&allowWatchBookmarks=true&timeoutSeconds=30" % (self.ns, rv),
                             headers={"Authorization": "Bearer " + self.token})
                resp = conn.getresponse()
                if resp.status != 200:
                    raise AssertionError("watch: HTTP %d" % resp.status)
                while not self.stop_ev.is_set():
                    line = resp.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    obj = ev["object"]
                    if ev["type"] == "ERROR":
                        raise AssertionError("watch error: %s" % obj)
                    rv = obj["metadata"]["resourceVersion"]
                    if ev["type"] == "BOOKMARK":
                        continue
                    with self.lock:
                        self.last[obj["metadata"]["uid"]] = obj
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

    def pods(self):
        with self.lock:
            return [json.loads(json.dumps(p)) for p in self.last.values()]


def _utc(s):
    return truth.utc(s) if s else None


def pod_interval(p):
    """(bound, end) as the truth sees a pod: PodScheduled=True time; the latest container
    finishedAt once every container has terminated, else None (it still holds its GPUs)."""
    st = p.get("status") or {}
    bound = None
    for c in st.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            bound = _utc(c["lastTransitionTime"])
    cs = st.get("containerStatuses") or []
    ends = [(c.get("state") or {}).get("terminated", {}).get("finishedAt") for c in cs]
    end = max(_utc(e) for e in ends) if cs and all(ends) else None
    return bound, end


def create_node(api, name):
    labels = sim._cloud_node(name, "p5.48xlarge", "us-east-1", "us-east-1a",
                             {"nvidia.com/gpu.count": str(GPUS_PER_NODE),
                              "karpenter.sh/capacity-type": "on-demand"})
    api.call("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                       "metadata": {"name": name, "labels": labels}})
    alloc = {"nvidia.com/gpu": str(GPUS_PER_NODE), "cpu": "192", "memory": "2Ti",
             "pods": "110"}
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    api.merge_patch("/api/v1/nodes/%s/status" % name, {"status": {
        "capacity": alloc, "allocatable": alloc,
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "simulated kubelet", "lastHeartbeatTime": now,
                        "lastTransitionTime": now}]}})
    return api.get("/api/v1/nodes/" + name)


def template(project, gpus, run=None, restart="Always"):
    ann = {RUN_SECONDS: str(run)} if run is not None else {}
    return {"metadata": {"labels": {"project": project, "app": project}, "annotations": ann},
            "spec": {"restartPolicy": restart, "terminationGracePeriodSeconds": 5,
                     "containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                     "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}


JOBSET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "jobsets.e2e.gpu-cost.io"},
    "spec": {"group": "e2e.gpu-cost.io", "scope": "Namespaced",
             "names": {"plural": "jobsets", "singular": "jobset", "kind": "JobSet"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def wait(what, fn, timeout=90, period=0.5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(period)
    raise AssertionError("%s: not after %d s" % (what, timeout))


def owner(obj):
    refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")]
    return (refs[0]["kind"], refs[0]["name"]) if refs else None


def expected_workload(pod):
    """The workload of a pod from what the test created, not from the controller: a
    Deployment's ReplicaSet is <deployment>-<hash>, the CronJob's Jobs nightly-<n>, the JobSet
    parent's Job pretrain-workers-0; a Job of its own and a StatefulSet stand for themselves."""
    kind, name = owner(pod)
    if kind == "ReplicaSet":
        dep = [d for d in ("serve", "too-big") if name.startswith(d + "-")]
        assert len(dep) == 1, name
        return "Deployment/%s/%s" % (NS, dep[0])
    if kind == "Job" and name.startswith("nightly-"):
        return "CronJob/%s/nightly" % NS
    if kind == "Job" and name == "pretrain-workers-0":
        return "JobSet/%s/pretrain" % NS
    return "%s/%s/%s" % (kind, NS, name)


@pytest.fixture
def workloads(cluster, controller_bin, tmp_path):
    api = cluster.api
    for ns, labels in (("gpu-cost", {}), (NS, {"team": "ml"})):
        api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": ns, "labels": labels}})
    cluster.apply(harness.RBAC)
    cluster.wait_controller_can()
    nodes = [create_node(api, n) for n in NODES]
    rec = PodRecorder(cluster, NS).start()
    kubelet = SimulatedKubelet(cluster.env, NODES).start()
    c = harness.Controller(controller_bin, cluster, tmp_path / "controller.log",
                           extra=["--snapshot-interval", "1s"]).start()
    c.wait_ready()
    yield {"api": api, "cluster": cluster, "nodes": nodes, "rec": rec, "kubelet": kubelet,
           "controller": c}
    c.stop()
    kubelet.stop()
    rec.stop()
    print("controller log (last lines):\n%s" % harness.tail(c.log_path, 30))
    print("simulated kubelet errors: %s" % kubelet.errors[-5:])


def test_workloads_from_kube_controller_manager(workloads):
    w = workloads
    api, c, rec = w["api"], w["controller"], w["rec"]
    ns = "/apis/%s/namespaces/" + NS + "/%s"
    api.call("POST", ns % ("apps/v1", "deployments"), {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "serving"}},
                 "template": template("serving", 1)}})
    api.call("POST", ns % ("apps/v1", "statefulsets"), {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "vec"}},
                 "template": template("vec", 1)}})
    # Finishes in 6 s; the TTL-after-finished controller then deletes the Job and the garbage
    # collector its pods.
    api.call("POST", ns % ("batch/v1", "jobs"), {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
        "spec": {"completions": 2, "parallelism": 2, "ttlSecondsAfterFinished": 3,
                 "template": template("train", 2, run=6, restart="Never")}})
    # The CronJob controller starts a Job at the next minute.
    api.call("POST", ns % ("batch/v1", "cronjobs"), {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
        "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid",
                 "successfulJobsHistoryLimit": 3,
                 "jobTemplate": {"spec": {"template": template("eval", 1, run=3,
                                                                restart="Never")}}}})
    # A JobSet-like parent no controller here manages: the test plays its controller and
    # creates its Job, owned by it; kube-controller-manager's Job controller makes the pods.
    api.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", JOBSET_CRD)
    js_path = "/apis/e2e.gpu-cost.io/v1/namespaces/%s/jobsets" % NS
    wait("the JobSet CRD served", lambda: api.request("GET", js_path)[0] == 200, timeout=30)
    js = api.call("POST", js_path, {
        "apiVersion": "e2e.gpu-cost.io/v1", "kind": "JobSet", "metadata": {"name": "pretrain"},
        "spec": {"replicatedJobs": [{"name": "workers", "replicas": 1}]}})
    assert js["metadata"]["uid"], js
    api.call("POST", ns % ("batch/v1", "jobs"), {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pretrain-workers-0",
                     "ownerReferences": [{"apiVersion": "e2e.gpu-cost.io/v1", "kind": "JobSet",
                                          "name": "pretrain", "uid": js["metadata"]["uid"],
                                          "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": {"completions": 2, "parallelism": 2,
                 "template": template("pretrain", 2, restart="Never")}})
    # Fits on no node: kube-scheduler marks it Unschedulable; it never holds a GPU.
    api.call("POST", ns % ("apps/v1", "deployments"), {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "too-big"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "big"}},
                 "template": template("big", GPUS_PER_NODE + 1)}})

    def pods_now():
        return api.get("/api/v1/namespaces/%s/pods" % NS)["items"]

    def running(prefix, n):
        ps = [p for p in pods_now() if p["metadata"]["name"].startswith(prefix)
              and (p.get("status") or {}).get("phase") == "Running"]
        return ps if len(ps) >= n else None

    wait("serve running", lambda: running("serve-", 2))
    wait("db-0 running", lambda: running("db-0", 1))
    wait("pretrain running", lambda: running("pretrain-workers-0-", 2))
    # The train Job: completes, then TTL deletes it and the GC its pods.
    wait("train Job deleted by the TTL controller",
         lambda: api.request("GET", ns % ("batch/v1", "jobs/train"))[0] == 404, timeout=60)
    wait("train pods deleted by the garbage collector",
         lambda: not [p for p in pods_now() if p["metadata"]["name"].startswith("train-")],
         timeout=60)
    # The CronJob's first Job runs and finishes.
    wait("a Job of the CronJob finished", lambda: [
        j for j in api.get(ns % ("batch/v1", "jobs"))["items"]
        if owner(j) == ("CronJob", "nightly") and (j.get("status") or {}).get("succeeded")],
        timeout=90)
    big = [p for p in pods_now() if p["metadata"]["name"].startswith("too-big-")]
    assert len(big) == 1 and not big[0]["spec"].get("nodeName"), big
    cond = [x for x in big[0]["status"].get("conditions") or [] if x["type"] == "PodScheduled"]
    assert cond and cond[0]["reason"] == "Unschedulable", cond
    # Scale the Deployment down: the ReplicaSet controller deletes a running pod, the
    # simulated kubelet stops it and confirms the deletion.
    api.merge_patch(ns % ("apps/v1", "deployments/serve"), {"spec": {"replicas": 1}})
    wait("serve scaled to one pod", lambda: len(
        [p for p in pods_now() if p["metadata"]["name"].startswith("serve-")]) == 1)
    # Deleting the parent cascades: the garbage collector deletes its Job, then the pods.
    api.call("DELETE", js_path + "/pretrain")
    wait("pretrain pods gone", lambda: not [
        p for p in pods_now() if p["metadata"]["name"].startswith("pretrain-")], timeout=60)

    # Every pod came from kube-controller-manager, with the owner it wrote.
    seen = rec.pods()
    kinds = {}
    for p in seen:
        o = owner(p)
        assert o is not None, "pod %s has no controller owner" % p["metadata"]["name"]
        kinds.setdefault(o[0], set()).add(o[1])
    assert kinds.get("StatefulSet") == {"db"}, kinds
    assert {n.rsplit("-", 1)[0] for n in kinds.get("ReplicaSet", ())} == {"serve", "too-big"}
    jobs = kinds.get("Job", set())
    assert {"train", "pretrain-workers-0"} <= jobs and any(j.startswith("nightly-")
                                                          for j in jobs), kinds

    # The truth, from the pods' own states, against the controller's answer.
    time.sleep(2.5)  # a snapshot (1 s) after the last event
    doc = json.loads(urllib.request.urlopen(
        "http://127.0.0.1:%d/api/v1/pods?namespace=%s&limit=100000" % (c.port, NS),
        timeout=10).read())
    now = truth.utc(doc["now"])
    record = {"anchor": 0, "nodes": [{"object": n, "deleted_at": None} for n in w["nodes"]],
              "namespaces": [api.get("/api/v1/namespaces/" + NS)], "pods": []}
    by_uid = {}
    for p in seen:
        bound, end = pod_interval(p)
        if bound is None:
            continue
        md = p["metadata"]
        r = {"namespace": NS, "name": md["name"], "uid": md["uid"], "labels": md["labels"],
             "spec": p["spec"], "node": p["spec"]["nodeName"], "bound": bound, "end": end}
        record["pods"].append(r)
        by_uid[md["uid"]] = p
    t = truth.Truth(record, CFG)
    want = {u.name: u for u in t.usages}
    got = {}
    for p in doc["pods"]:
        assert p["uid"] in by_uid, p
        got[p["uid"]] = p
    assert len(got) == len(record["pods"]) == len(want), (len(got), len(record["pods"]))
    bad = []
    for uid, p in got.items():
        u = want["%s/%s" % (NS, p["name"])]
        end = now if u.end is None else u.end
        hours = u.geq * (end - u.start) / 3600.0
        if truth.utc(p["start"]) != u.start or (p["end"] and truth.utc(p["end"]) != u.end) or \
                (p["end"] is None) != (u.end is None) or abs(p["gpu_hours"] - hours) > 1e-9 or \
                abs(p["cost_usd"] - hours * u.price) > 0.005:
            bad.append("%s: %s..%s %r GPU-h $%r; truth %s..%s %r GPU-h $%r" % (
                p["name"], p["start"], p["end"], p["gpu_hours"], p["cost_usd"], u.start, u.end,
                hours, hours * u.price))
        o = owner(by_uid[uid])
        exists = uid not in rec.deleted
        if exists and (p["controller_kind"], p["controller"]) != o:
            bad.append("%s: controller %s/%s, kube-controller-manager wrote %s" % (
                p["name"], p["controller_kind"], p["controller"], o))
    assert not bad, "\n".join(bad)

    # By workload: the window from the first bound to the pods' snapshot's now, so the pods
    # still running accrue exactly up to there whatever snapshot answers.
    start = min(u.start for u in t.usages)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    window = "%s,%s" % (time.strftime(fmt, time.gmtime(start)), time.strftime(fmt, time.gmtime(now)))
    truth_by = {}
    for p in seen:
        if p["metadata"]["uid"] not in got:
            continue
        u = want["%s/%s" % (NS, p["metadata"]["name"])]
        end = now if u.end is None else min(u.end, now)
        key = expected_workload(p)
        truth_by[key] = truth_by.get(key, 0.0) + u.geq * max(0, end - u.start)
    assert {"Deployment/ml/serve", "StatefulSet/ml/db", "Job/ml/train", "CronJob/ml/nightly",
            "JobSet/ml/pretrain"} <= set(truth_by), truth_by
    costs = json.loads(urllib.request.urlopen(
        "http://127.0.0.1:%d/api/v1/costs?window=%s&by=workload&namespace=%s" % (
            c.port, urllib.parse.quote(window), NS), timeout=10).read())
    got_by = {g["keys"]["workload"]: g["gpu_seconds"] for g in costs["groups"]}
    assert set(got_by) == set(truth_by), (got_by, truth_by)
    for key, secs in truth_by.items():
        assert abs(got_by[key] - secs) < 1e-6, (key, got_by[key], secs)
    assert c.alive()
