"""GPU usage for the end-to-end tests: a small cluster of planted behaviours, their week of
dcgm-exporter series (back-filled into a real Prometheus with promtool), and a stand-in for one
dcgm-exporter pod (a plain HTTP server on 127.0.0.1 serving a body in dcgm-exporter's format).

The planted pods (namespace ml, team ml), on two on-demand nodes:

  h100-od-0 (8 x H100 80GB):
    busy-train      4 GPUs, the whole week, 85-95% busy, 70 GB each     -> no finding
    notebook-idle   1 GPU, 2 days: busy an hour, then idle holding 60 GB -> idle_gpu
    infer-small     1 GPU (a ReplicaSet's), 2 days, <= 4 GB, <= 9% busy  -> mig_fit 1g.10gb
    live-2gpu       2 GPUs, bound at the test's start, scraped directly:
                    one busy, one untouched                              -> over_requested, 1
  a100-od-0 (8 x A100 40GB):
    train-8gpu      8 GPUs, 2 days, two busy, six untouched              -> over_requested, 2

busy-train keeps 4 H100s busy every whole day of the week: the floor a reservation covers
(reserve_floor, 96 GPU-hours a day). Every pod carries team and project, so nothing is
unattributed; neither pool idles a whole node on average, so no idle_capacity.
"""

import json
import os
import random
import subprocess
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness import free_port
from sim import REPLAY_SCHEDULER, _cloud_node, rfc3339

HOUR, DAY = 3600, 86400
STEP = 300  # one sample every 5 minutes: Prometheus' lookback always finds one
NS = "ml"
# Each planted pod carries its own name under this label: the selector of the ReplicaSet or Job
# that adopts it.
ADOPT_LABEL = "e2e.gpu-cost/pod"
H100 = "NVIDIA H100 80GB HBM3"   # dcgm-exporter's modelName
A100 = "NVIDIA A100-SXM4-40GB"
H100_MIB, A100_MIB = 81559, 40536


def _labels_a100(name):
    lab = _cloud_node(name, "p4d.24xlarge", "us-east-1", "us-east-1a", {
        "karpenter.sh/capacity-type": "on-demand",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "40960", "nvidia.com/gpu.family": "ampere",
        "nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "0"})
    return lab


def _labels_h100(name):
    return _cloud_node(name, "p5.48xlarge", "us-east-1", "us-east-1a", {
        "eks.amazonaws.com/capacityType": "ON_DEMAND", "eks.amazonaws.com/nodegroup": "gpu-h100",
        "nvidia.com/gpu.count": "8"})


class Device:
    """One GPU a pod holds, and how busy it is at time t."""

    def __init__(self, rng, pod, node, gpu, model, total_mib, fn):
        self.pod, self.node, self.gpu, self.model = pod, node, gpu, model
        self.uuid = "GPU-%s" % uuid.UUID(int=rng.getrandbits(128))
        self.total = total_mib
        self.fn = fn  # t -> (activity, tensor, used MiB)

    def labels(self):
        return [("gpu", str(self.gpu)), ("UUID", self.uuid), ("device", "nvidia%d" % self.gpu),
                ("modelName", self.model), ("Hostname", self.node), ("container", "main"),
                ("namespace", self.pod["ns"]), ("pod", self.pod["name"])]


class Scenario:
    """The nodes, pods and devices above, at times relative to `now`."""

    def __init__(self, now, seed=5):
        rng = random.Random(seed)
        self.now = int(now)
        self.start = self.now - 7 * DAY          # the advisor's window: the last 7 days
        self.nodes = [("h100-od-0", _labels_h100("h100-od-0")),
                      ("a100-od-0", _labels_a100("a100-od-0"))]
        recent = self.now - 2 * DAY
        u = rng.uniform
        self.pods = [
            {"name": "busy-train", "node": "h100-od-0", "gpus": 4, "bound": self.start - DAY,
             "project": "pretrain", "owner": None},
            {"name": "notebook-idle", "node": "h100-od-0", "gpus": 1, "bound": recent,
             "project": "notebooks", "owner": None},
            {"name": "infer-small", "node": "h100-od-0", "gpus": 1, "bound": recent,
             "project": "intent", "owner": ("ReplicaSet", "infer-small-6d4f8b")},
            {"name": "train-8gpu", "node": "a100-od-0", "gpus": 8, "bound": recent,
             "project": "detection", "owner": ("Job", "train-8gpu")},
        ]
        self.live = {"name": "live-2gpu", "node": "h100-od-0", "gpus": 2, "bound": None,
                     "project": "ranking", "owner": None}
        for p in self.pods + [self.live]:
            p["ns"] = NS
        busy, nb, inf, tr = self.pods
        self.devices = []
        for g in range(4):
            self.devices.append(Device(rng, busy, "h100-od-0", g, H100, H100_MIB,
                                       lambda t: (u(0.85, 0.95), u(0.45, 0.6), 70000)))
        self.devices.append(Device(
            rng, nb, "h100-od-0", 4, H100, H100_MIB,
            lambda t, b=nb["bound"]: (u(0.3, 0.5), 0.1, 30000) if t < b + HOUR else
            (0.0, 0.0, 60000)))
        self.devices.append(Device(rng, inf, "h100-od-0", 5, H100, H100_MIB,
                                   lambda t: (u(0.03, 0.09), u(0.01, 0.03), 3500 + int(u(0, 500)))))
        for g in range(8):
            if g < 2:
                fn = (lambda t: (u(0.85, 0.95), u(0.4, 0.5), 31000))
            else:
                fn = (lambda t: (0.0, 0.0, 0))
            self.devices.append(Device(rng, tr, "a100-od-0", g, A100, A100_MIB, fn))
        self.live_devices = [
            Device(rng, self.live, "h100-od-0", 6, H100, H100_MIB,
                   lambda t: (0.7, 0.3, 20000)),
            Device(rng, self.live, "h100-od-0", 7, H100, H100_MIB, lambda t: (0.0, 0.0, 0))]

    # -- the cluster objects

    def inject_nodes(self, api, etcd):
        """Nodes with a creationTimestamp 8 days back: written into etcd (the API server would
        stamp the current time), as sim.Replay does."""
        created = self.start - DAY
        for name, labels in self.nodes:
            status = {"capacity": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti"},
                      "allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti"},
                      "conditions": [{"type": "Ready", "status": "True",
                                      "reason": "KubeletReady", "message": "ready",
                                      "lastHeartbeatTime": rfc3339(created + 60),
                                      "lastTransitionTime": rfc3339(created + 60)}]}
            obj = {"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": name, "uid": str(uuid.uuid4()),
                                "creationTimestamp": rfc3339(created), "labels": labels},
                   "spec": {"providerID": "e2e://%s" % name}, "status": status}
            etcd.put("/registry/minions/" + name, json.dumps(obj))
            api.get("/api/v1/nodes/" + name)

    def create_namespaces(self, api):
        for ns, labels in ((NS, {"team": "ml"}), ("gpu-operator", {}), ("gpu-cost", {})):
            status, doc = api.request("POST", "/api/v1/namespaces", {
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "labels": labels}})
            if status not in (201, 409):
                raise RuntimeError("namespace %s: %s %s" % (ns, status, doc))

    @staticmethod
    def create_pod(api, p, bound):
        """A running GPU pod bound at `bound` (back-dated through its status). It names the
        replay's scheduler, which does not run, so kube-scheduler leaves it to be bound here.
        A pod with an owner is adopted by a real ReplicaSet or Job created after it: the
        owner reference is the one kube-controller-manager writes."""
        md = {"name": p["name"], "namespace": p["ns"],
              "labels": {"project": p["project"], ADOPT_LABEL: p["name"]}}
        spec = {"containers": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                "resources": {"limits": {"nvidia.com/gpu": str(p["gpus"])}}}],
                "restartPolicy": "Never", "schedulerName": REPLAY_SCHEDULER}
        api.call("POST", "/api/v1/namespaces/%s/pods" % p["ns"],
                 {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})
        path = "/api/v1/namespaces/%s/pods/%s" % (p["ns"], p["name"])
        api.call("POST", path + "/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": p["name"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": p["node"]}})
        ts = rfc3339(bound)
        api.merge_patch(path + "/status", {"status": {
            "phase": "Running", "startTime": ts, "hostIP": "10.0.0.7", "podIP": "10.1.0.9",
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": ts}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [{"name": "main", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                   "imageID": "", "restartCount": 0, "ready": True,
                                   "started": True, "containerID": "containerd://%032x" % bound,
                                   "state": {"running": {"startedAt": ts}}}]}})
        if p["owner"]:
            adopt(api, p["ns"], p["owner"][0], p["owner"][1], md["labels"], spec)


    @staticmethod
    def create_exporter_pod(api, port):
        """A dcgm-exporter pod as the controller discovers it: the label selector's label,
        Running, status.podIP 127.0.0.1 (the stand-in server below listens there)."""
        path = "/api/v1/namespaces/gpu-operator/pods"
        api.call("POST", path, {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "nvidia-dcgm-exporter-e2e", "labels": {"app": "nvidia-dcgm-exporter"}},
            "spec": {"containers": [{"name": "nvidia-dcgm-exporter",
                                     "image": "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1",
                                     "ports": [{"name": "metrics", "containerPort": port}]}]}})
        api.merge_patch(path + "/nvidia-dcgm-exporter-e2e/status", {"status": {
            "phase": "Running", "podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}],
            "hostIP": "127.0.0.1"}})

    # -- the week of samples

    def openmetrics(self, path):
        """The week as OpenMetrics text (timestamps in seconds, `# EOF`), for promtool."""
        names = [("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0), ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1),
                 ("DCGM_FI_DEV_FB_USED", 2), ("DCGM_FI_DEV_FB_FREE", 3)]
        readings = []
        last = self.now - 60
        for d in self.devices:
            first = max(self.start, d.pod["bound"])
            first += -first % STEP
            rows = []
            for t in range(first, last, STEP):
                act, tensor, used = d.fn(t)
                rows.append((t, act, tensor, used, d.total - used))
            readings.append((d, rows))
        with open(path, "w") as f:
            for name, k in names:
                f.write("# TYPE %s gauge\n" % name)
                for d, rows in readings:
                    lab = ",".join('%s="%s"' % kv for kv in d.labels())
                    for row in rows:
                        v = row[1 + k]
                        f.write("%s{%s} %s %d\n" % (name, lab, ("%.4f" % v) if k < 2 else
                                                    str(v), row[0]))
            f.write("# EOF\n")
        return sum(len(r) for _, r in readings)

    def live_body(self):
        """One scrape of live-2gpu's devices, as dcgm-exporter serves it (no timestamps)."""
        out = []
        for name, k in (("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0), ("DCGM_FI_DEV_FB_USED", 2),
                        ("DCGM_FI_DEV_FB_FREE", 3)):
            out.append("# HELP %s dcgm-exporter metric.\n# TYPE %s gauge" % (name, name))
            for d in self.live_devices:
                act, tensor, used = d.fn(time.time())
                v = [act, tensor, used, d.total - used][k]
                lab = ",".join('%s="%s"' % kv for kv in d.labels())
                out.append("%s{%s} %s" % (name, lab, ("%.6f" % v) if k < 2 else str(v)))
        return ("\n".join(out) + "\n").encode()


# ---- a real Prometheus, back-filled -----------------------------------------------------------

def adopt(api, ns, kind, name, labels, pod_spec, timeout=30):
    """Creates the ReplicaSet or Job `name` whose selector matches the running pod's labels and
    which wants exactly that one pod: kube-controller-manager adopts it (writes its controller
    owner reference) instead of creating another. Waits until the reference is there."""
    sel = {"matchLabels": {ADOPT_LABEL: labels[ADOPT_LABEL]}}
    template = {"metadata": {"labels": labels}, "spec": dict(pod_spec)}
    if kind == "ReplicaSet":
        # A ReplicaSet's pods restart always; the adopted pod need not match its template.
        template["spec"]["restartPolicy"] = "Always"
        obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"replicas": 1, "selector": sel, "template": template}}
        api.call("POST", "/apis/apps/v1/namespaces/%s/replicasets" % ns, obj)
    elif kind == "Job":
        obj = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"parallelism": 1, "completions": 1, "manualSelector": True,
                        "selector": sel, "template": template}}
        api.call("POST", "/apis/batch/v1/namespaces/%s/jobs" % ns, obj)
    else:
        raise ValueError("cannot adopt by a %s" % kind)
    path = "/api/v1/namespaces/%s/pods/%s" % (ns, labels[ADOPT_LABEL])
    deadline = time.time() + timeout
    while time.time() < deadline:
        refs = api.get(path)["metadata"].get("ownerReferences") or []
        if any(r.get("controller") and r["kind"] == kind and r["name"] == name for r in refs):
            return refs
        time.sleep(0.2)
    raise AssertionError("%s/%s was not adopted by %s %s within %d s" % (
        ns, labels[ADOPT_LABEL], kind, name, timeout))


class Prometheus:
    """Debian's prometheus on 127.0.0.1 over a TSDB that promtool back-filled."""

    def __init__(self, workdir):
        self.dir = Path(workdir)
        self.proc = None
        self.port = None
        self.log = None

    def backfill(self, openmetrics_file):
        data = self.dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        cp = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics",
                             str(openmetrics_file), str(data)], capture_output=True, text=True,
                            timeout=120)
        if cp.returncode != 0:
            raise RuntimeError("promtool: %s%s" % (cp.stdout, cp.stderr))

    def start(self, timeout=30):
        self.port = free_port()
        cfg = self.dir / "prometheus.yml"
        cfg.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
        self.log = open(self.dir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=%s" % cfg, "--storage.tsdb.path=%s" % (self.dir / "data"),
             "--storage.tsdb.retention.time=30d",
             "--web.listen-address=127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=self.log, cwd=str(self.dir))
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("prometheus exited: %s" % (self.dir / "prometheus.log"))
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("prometheus not ready after %d s" % timeout)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def query(self, promql, at):
        q = urllib.parse.urlencode({"query": promql, "time": str(at)})
        with urllib.request.urlopen(self.url + "/api/v1/query?" + q, timeout=10) as r:
            return json.loads(r.read())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log:
            self.log.close()


class ExporterStandIn:
    """Serves body_fn() at /metrics on 127.0.0.1 like dcgm-exporter (text/plain; version
    0.0.4), and counts the scrapes. Stands in for the exporter pod: no GPU here."""

    def __init__(self, body_fn):
        stand_in = self
        self.scrapes = 0

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if self.path != "/metrics":
                    self.send_error(404)
                    return
                body = body_fn()
                stand_in.scrapes += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def have_prometheus():
    return all(any(os.access(os.path.join(d, t), os.X_OK)
                   for d in os.environ.get("PATH", "").split(os.pathsep))
               for t in ("prometheus", "promtool"))
