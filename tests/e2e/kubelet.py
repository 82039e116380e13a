"""A simulated kubelet: the one simulated part of the end-to-end control plane.

kube-scheduler binds pods to the test's Nodes and kube-controller-manager creates, scales and
deletes them; nothing would then run them, since there is no container runtime here. This
simulated kubelet does for the pods bound to its nodes what a kubelet's status manager writes:

- a bound pod with no status yet starts: phase Running, startTime, Ready conditions, each
  container running since now;
- a pod annotated `kubelet.e2e.gpu-cost/run-seconds: N` finishes N seconds after it started:
  phase Succeeded (or Failed with `kubelet.e2e.gpu-cost/exit-code` other than 0), each
  container terminated;
- a pod being deleted (deletionTimestamp set) stops: containers terminated with exit code 143
  (SIGTERM), phase Failed unless it had already finished, then the deletion is confirmed with
  gracePeriodSeconds 0 and a UID precondition, as the kubelet confirms it.

It polls its nodes' pods (fieldSelector spec.nodeName, as a kubelet watches) every `period`
seconds on its own connection, and survives an API server that restarts. It never posts Node
status: the node lifecycle controller is off in the e2e cluster.
"""

import datetime
import threading
import time
import urllib.parse

from apiclient import Api, ApiError

RUN_SECONDS = "kubelet.e2e.gpu-cost/run-seconds"
EXIT_CODE = "kubelet.e2e.gpu-cost/exit-code"


def rfc3339(t):
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


class SimulatedKubelet:
    """The simulated kubelet of `nodes` (names), against the cluster's API as admin."""

    def __init__(self, env, nodes, period=0.25):
        self.api = Api(env["E2E_SERVER"], env["E2E_CA"], env["E2E_ADMIN_TOKEN"], timeout=10)
        self.nodes = list(nodes)
        self.period = period
        self.started = {}        # pod uid -> start time (whole seconds) it was given
        self.finished = {}       # pod uid -> (end time, phase) it was given
        self.confirmed = []      # (namespace, name, uid) of deletions it confirmed
        self.errors = []
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()

    def start(self):
        self._thread = threading.Thread(target=self._loop, name="simulated-kubelet",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.api.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _loop(self):
        while not self._stop.is_set():
            try:
                for node in self.nodes:
                    self.sync_node(node)
            except (OSError, ApiError) as e:
                # An API server restarting: the next round tries again.
                self.errors.append(str(e))
                del self.errors[:-20]
                self.api.close()
            self._stop.wait(self.period)

    def sync_node(self, node):
        sel = urllib.parse.quote("spec.nodeName=" + node)
        doc = self.api.get("/api/v1/pods?fieldSelector=" + sel)
        now = int(time.time())
        for pod in doc.get("items", []):
            self._sync_pod(pod, now)

    def _path(self, pod, sub=""):
        md = pod["metadata"]
        return "/api/v1/namespaces/%s/pods/%s%s" % (md["namespace"], md["name"], sub)

    def _sync_pod(self, pod, now):
        md, st = pod["metadata"], pod.get("status") or {}
        uid = md["uid"]
        phase = st.get("phase")
        terminal = phase in ("Succeeded", "Failed")
        if md.get("deletionTimestamp"):
            if not terminal:
                self._finish(pod, now, 143, stopped=True)
            self._confirm_deletion(pod)
            return
        if terminal:
            return
        if not st.get("startTime"):
            self._start(pod, now)
            return
        run = (md.get("annotations") or {}).get(RUN_SECONDS)
        if run is None:
            return
        started = parse_rfc3339(st["startTime"])
        if now >= started + float(run):
            code = int((md.get("annotations") or {}).get(EXIT_CODE, "0"))
            self._finish(pod, int(started + float(run)), code)

    def _conditions(self, pod, ts, ready):
        scheduled = [c for c in (pod.get("status") or {}).get("conditions", [])
                     if c.get("type") == "PodScheduled"]
        out = scheduled or [{"type": "PodScheduled", "status": "True",
                             "lastTransitionTime": ts}]
        out.append({"type": "Initialized", "status": "True", "lastTransitionTime": ts})
        for typ in ("ContainersReady", "Ready"):
            out.append({"type": typ, "status": "True" if ready else "False",
                        "lastTransitionTime": ts})
        return out

    def _start(self, pod, now):
        ts = rfc3339(now)
        cs = [{"name": c["name"], "image": c["image"], "imageID": "", "restartCount": 0,
               "ready": True, "started": True,
               "containerID": "containerd://sim-%s-%s" % (pod["metadata"]["uid"][:8], c["name"]),
               "state": {"running": {"startedAt": ts}}} for c in pod["spec"]["containers"]]
        st = {"phase": "Running", "startTime": ts, "hostIP": "10.0.0.7",
              "podIP": "10.1.%d.%d" % (now % 200, 1 + len(self.started) % 250),
              "conditions": self._conditions(pod, ts, True), "containerStatuses": cs}
        self.api.merge_patch(self._path(pod, "/status"), {"status": st})
        with self._lock:
            self.started[pod["metadata"]["uid"]] = now

    def _finish(self, pod, end, code, stopped=False):
        st = pod.get("status") or {}
        ts = rfc3339(end)
        started = st.get("startTime") or ts
        cs = [{"name": c["name"], "image": c["image"], "imageID": "", "restartCount": 0,
               "ready": False, "started": False,
               "containerID": "containerd://sim-%s-%s" % (pod["metadata"]["uid"][:8], c["name"]),
               "state": {"terminated": {"exitCode": code,
                                        "reason": "Completed" if code == 0 else "Error",
                                        "startedAt": started, "finishedAt": ts}}}
              for c in pod["spec"]["containers"]]
        phase = "Succeeded" if code == 0 else "Failed"
        patch = {"phase": phase, "conditions": self._conditions(pod, ts, False),
                 "containerStatuses": cs}
        if not st.get("startTime"):
            patch["startTime"] = ts
        if stopped and code != 0:
            patch["reason"] = "Terminated"
        self.api.merge_patch(self._path(pod, "/status"), {"status": patch})
        with self._lock:
            self.finished[pod["metadata"]["uid"]] = (end, phase)

    def _confirm_deletion(self, pod):
        md = pod["metadata"]
        status, doc = self.api.request("DELETE", self._path(pod), {
            "apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
            "preconditions": {"uid": md["uid"]}})
        # 404: gone already; 409: the UID precondition failed (a new pod of the same name).
        if status not in (200, 202, 404, 409):
            raise ApiError("DELETE", self._path(pod), status, doc)
        if status in (200, 202):
            with self._lock:
                self.confirmed.append((md["namespace"], md["name"], md["uid"]))
