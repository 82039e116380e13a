"""The upgrade from the previous release to this chart, and the rollback, against the real
kube-apiserver of the e2e harness (tests/chart/README.md).

The previous release is the chart packaged from the commit in fixtures/previous-release.env
(fixtures/gpu-cost-<version>.tgz) and the controller built from that commit
(tests/chart/prev-release.sh, GPU_COST_CONTROLLER_PREV): what its image holds. No kubelet runs
here, so each release's controller is run as its Deployment would run it: the release's rendered
flags and ConfigMap, a token of the release's ServiceAccount (TokenRequest API).

    helm install (previous chart, the README's values of that commit) -> the previous controller
    writes its Lease, checkpoint and reports; a finished pod is deleted, so its cost is in the
    ledger (and the checkpoint) only -> helm upgrade to this chart with the same values, the image
    tag moved to the new appVersion -> this controller restores the previous one's checkpoint ->
    helm rollback to revision 1 -> the previous controller restores the checkpoint this one wrote.

The checkpoint format did not change between the two (pkg/checkpoint is the same; this build adds
a fourth resume point, `resourceclaims`, which the header has room for and an earlier build
ignores: docs/checkpoint.md), so each way the restore must succeed with the same figures.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from conftest import CHART, E2E_BIN, GPU_COST_CONTROLLER, HERE, NAMESPACE, REPO, missing, need
from test_chart_cluster import (Cluster, add_gpu_workload, audit_events, free_port, http_status,
                                local_day, sa_kubeconfig, wait_for)

PREV = dict(re.findall(r"^(PREV_[A-Z]+)=(\S+)$",
                       (HERE / "fixtures" / "previous-release.env").read_text(), re.M))
PREV_VERSION = PREV["PREV_VERSION"]
PREV_COMMIT = PREV["PREV_COMMIT"]
FIXTURE = HERE / "fixtures" / ("gpu-cost-%s.tgz" % PREV_VERSION)
GPU_COST_CONTROLLER_PREV = Path(os.environ.get("GPU_COST_CONTROLLER_PREV") or
                                REPO / "build" / ("prev-" + PREV_VERSION) / "gpu-cost-controller")
CURRENT = yaml.safe_load((CHART / "Chart.yaml").read_text())
RELEASE = "gpu-cost"
# The README's prices (values of both releases): a T4 GPU-hour.
T4_PRICE = 0.35


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A cluster of its own, with the audit log of test_chart_cluster.py's."""
    for tool in ("kube-apiserver", "etcd", "kubectl", "helm"):
        need(E2E_BIN / tool, "run scripts/e2e-build.sh")
    c = Cluster(tmp_path_factory.mktemp("upgrade-cluster"))
    c.start()
    try:
        for ns in (NAMESPACE, "ml-research"):
            c.kubectl("create", "namespace", ns)
        yield c
    finally:
        c.stop()
        if os.environ.get("E2E_KEEP") != "1":
            shutil.rmtree(c.dir / "etcd", ignore_errors=True)


def git(*args, check=True):
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=check)


def need_commit():
    if git("cat-file", "-e", PREV_COMMIT + "^{commit}", check=False).returncode != 0:
        missing("commit %s (the previous release) is not in this clone" % PREV_COMMIT)


def version_key(v):
    return tuple(int(x) for x in v.split("."))


def test_fixture_is_the_previous_release():
    """The packaged chart is the chart of the previous release's commit, file for file, and an
    earlier version than this chart's."""
    need_commit()
    assert git("merge-base", "--is-ancestor", PREV_COMMIT, "HEAD",
               check=False).returncode == 0, "%s is not an ancestor of HEAD" % PREV_COMMIT
    tracked = git("ls-tree", "-r", "--name-only", PREV_COMMIT,
                  "charts/gpu-cost/").stdout.decode().split()
    with tarfile.open(FIXTURE) as t:
        packed = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
    assert sorted(packed) == sorted("gpu-cost/" + p[len("charts/gpu-cost/"):] for p in tracked)
    for name, data in packed.items():
        source = git("show", "%s:charts/%s" % (PREV_COMMIT, name)).stdout
        if name == "gpu-cost/Chart.yaml":
            # helm package writes Chart.yaml again from what it parsed
            assert yaml.safe_load(data) == yaml.safe_load(source)
        else:
            assert data == source, name
    chart = yaml.safe_load(packed["gpu-cost/Chart.yaml"])
    assert chart["version"] == chart["appVersion"] == PREV_VERSION
    assert version_key(PREV_VERSION) < version_key(CURRENT["version"])


def test_previous_controller_is_the_release():
    need(GPU_COST_CONTROLLER_PREV,
         "run tests/chart/prev-release.sh or set GPU_COST_CONTROLLER_PREV")
    need_commit()
    short = git("rev-parse", "--short", PREV_COMMIT).stdout.decode().strip()
    out = subprocess.run([str(GPU_COST_CONTROLLER_PREV), "--version"], capture_output=True,
                         text=True, timeout=10).stdout
    assert out == "gpu-cost-controller %s (revision %s)\n" % (PREV_VERSION, short)


def previous_readme_values():
    """The values file the README's "Install with Helm" documented at the previous release."""
    text = git("show", PREV_COMMIT + ":README.md").stdout.decode()
    section = text.split("## Install with Helm", 1)[1].split("\n## ", 1)[0]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


def add_finished_pod(cluster, start, end):
    """A second T4 node and a pod of team vision, project segmentation, that ran on it from start
    to end: a finished Job's pod, as the kubelet would have left it."""
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-t4-1", "labels": {"nvidia.com/gpu.product": "Tesla-T4",
                                                    "nvidia.com/gpu.count": "1"}}}))
    cluster.kubectl("patch", "node", "gpu-t4-1", "--subresource=status", "--type=merge", "-p",
                    json.dumps({"status": {"capacity": {"nvidia.com/gpu": "1"},
                                           "allocatable": {"nvidia.com/gpu": "1"}}}))
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "seg-0", "namespace": "ml-research",
                     "labels": {"project": "segmentation"}},
        "spec": {"nodeName": "gpu-t4-1", "restartPolicy": "Never", "containers": [{
            "name": "train", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}))
    s, e = (t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in (start, end))
    cluster.kubectl("-n", "ml-research", "patch", "pod", "seg-0", "--subresource=status",
                    "--type=merge", "-p", json.dumps({"status": {
                        "phase": "Succeeded", "startTime": s,
                        "conditions": [{"type": "PodScheduled", "status": "True",
                                        "lastTransitionTime": s}],
                        "containerStatuses": [{"name": "train", "ready": False,
                                               "restartCount": 0, "image": "pytorch",
                                               "imageID": "", "state": {"terminated": {
                                                   "exitCode": 0, "reason": "Completed",
                                                   "startedAt": s, "finishedAt": e}}}]}}))


def checkpoint_manifests(cluster):
    """Chunk 0 of each generation slot that exists, parsed: who wrote it, which generation."""
    out = []
    for name in ("gpu-cost-checkpoint", "gpu-cost-checkpoint-g1"):
        cp = cluster.kubectl("get", "configmap", "-n", NAMESPACE, name, "-o", "json", check=False)
        if cp.returncode == 0:
            out.append(json.loads(json.loads(cp.stdout)["data"]["checkpoint.json"]))
    return out


def newest_checkpoint(cluster):
    found = checkpoint_manifests(cluster)
    return max(found, key=lambda m: m["generation"]) if found else None


def controller_configmaps(cluster):
    """The controller's own ConfigMaps (checkpoint and reports, in every namespace), which no
    release owns: name -> data."""
    items = cluster.get("configmaps", "-A", "-l", "gpu-cost.io/kind")["items"]
    return {"%s/%s" % (o["metadata"]["namespace"], o["metadata"]["name"]): o["data"]
            for o in items}


def live(cluster, obj, check=True):
    """The object as the API server holds it, or None."""
    ns = obj["metadata"].get("namespace")
    cp = cluster.kubectl("get", obj["kind"].lower(), obj["metadata"]["name"],
                         *(["-n", ns] if ns else []), "-o", "json", check=check)
    return json.loads(cp.stdout) if cp.returncode == 0 else None


def release_objects(cluster, revision):
    text = cluster.helm("get", "manifest", RELEASE, "--namespace", NAMESPACE, "--revision",
                        str(revision)).stdout
    return text, {(o["kind"], o["metadata"]["name"]): o
                  for o in yaml.safe_load_all(text) if o}


def flatten(x, path=""):
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            out.update(flatten(v, "%s.%s" % (path, k) if path else k))
        return out
    if isinstance(x, list):
        out = {}
        for i, v in enumerate(x):
            out.update(flatten(v, "%s[%d]" % (path, i)))
        return out
    return {path: x}


def changes(a, b):
    """path -> (before, after) for every leaf that differs between a and b."""
    fa, fb = flatten(a), flatten(b)
    return {p: (fa.get(p), fb.get(p)) for p in sorted(set(fa) | set(fb)) if fa.get(p) != fb.get(p)}


def is_subset(want, have):
    """Every field of want (a rendered object) is in have (the live object, server defaults
    added)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and is_subset(v, have[k])
                                              for k, v in want.items())
    if isinstance(want, list):
        return (isinstance(have, list) and len(want) == len(have) and
                all(is_subset(w, h) for w, h in zip(want, have)))
    return want == have


def same_figures(a, b, path="answer"):
    """Two cost answers equal: the same members and strings, numbers to 1e-9 (a restored ledger
    sums its records part by part: docs/checkpoint.md)."""
    fa, fb = flatten(a), flatten(b)
    assert sorted(fa) == sorted(fb), {"only before": sorted(set(fa) - set(fb)),
                                      "only after": sorted(set(fb) - set(fa))}
    for p, v in fa.items():
        if isinstance(v, float) or isinstance(fb[p], float):
            assert fb[p] == pytest.approx(v, rel=1e-9, abs=1e-9), (p, v, fb[p])
        else:
            assert fb[p] == v, (p, v, fb[p])


class Controller:
    """gpu-cost-controller run as the installed release's Deployment runs it."""

    def __init__(self, cluster, binary, workdir, pod):
        self.cluster, self.binary, self.pod = cluster, binary, pod
        workdir.mkdir()
        dep = cluster.get("deployment", "-n", NAMESPACE, "gpu-cost-controller")
        spec = dep["spec"]["template"]["spec"]
        self.sa = spec["serviceAccountName"]
        cm = [v["configMap"]["name"] for v in spec["volumes"] if "configMap" in v]
        assert len(cm) == 1, spec["volumes"]
        config = cluster.get("configmap", "-n", NAMESPACE, cm[0])["data"]["config.json"]
        (workdir / "config.json").write_text(config)
        self.kubeconfig = sa_kubeconfig(cluster, workdir / "sa.kubeconfig", self.sa)
        self.port, probe_port = free_port(), free_port()
        args = spec["containers"][0]["args"]
        self.argv = [str(binary)] + [
            a for a in args if not a.startswith(("--config=", "--listen=", "--probe-listen="))
        ] + ["--config", str(workdir / "config.json"), "--listen", "127.0.0.1:%d" % self.port,
             "--probe-listen", "127.0.0.1:%d" % probe_port, "--kubeconfig", str(self.kubeconfig),
             "--checkpoint-interval=2s", "--report-interval=2s", "--snapshot-interval=1s"]
        self.log = workdir / "controller.log"
        self.env = dict(os.environ, POD_NAME=pod, GPU_COST_NAMESPACE=NAMESPACE)
        self.env.pop("KUBECONFIG", None)

    @contextlib.contextmanager
    def running(self):
        with open(self.log, "w") as logf:
            proc = subprocess.Popen(self.argv, stdout=logf, stderr=logf, env=self.env)
        try:
            wait_for("%s ready" % self.pod, lambda: http_status(
                "http://127.0.0.1:%d/readyz" % self.port) == 200 or proc.poll() is not None)
            assert proc.poll() is None, self.log.read_text()
            lease = self.cluster.get("lease", "-n", NAMESPACE, "gpu-cost-controller")
            assert lease["spec"]["holderIdentity"] == self.pod
            yield self
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, self.log.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def get(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), timeout=10) as r:
            return json.loads(r.read())

    def records(self):
        return [json.loads(line) for line in self.log.read_text().splitlines()
                if line.startswith("{")]

    def checkpoint_written(self, after=0):
        """Waits for a checkpoint generation newer than `after` written by this controller."""
        def mine():
            m = newest_checkpoint(self.cluster)
            return m if m and m["controller"] == self.pod and m["generation"] > after else None
        return wait_for("a checkpoint by " + self.pod, mine, 30)

    def restored(self):
        """The log record of the checkpoint restored at start; exactly one."""
        found = [r for r in self.records() if r["msg"] == "checkpoint restored"]
        assert len(found) == 1, self.log.read_text()
        return found[0]

    def complaints(self):
        return [r for r in self.records() if r["level"] in ("warn", "error")]


def costs_by_project(answer):
    return {(g["keys"]["team"], g["keys"]["project"]): g for g in answer["groups"]}


def test_upgrade_and_rollback_keep_the_ledger(cluster, tmp_path):
    need(GPU_COST_CONTROLLER, "build it (make build) or set GPU_COST_CONTROLLER")
    need(GPU_COST_CONTROLLER_PREV,
         "run tests/chart/prev-release.sh or set GPU_COST_CONTROLLER_PREV")
    need_commit()
    ns = ["--namespace", NAMESPACE]

    # --- the previous release, installed as its README said --------------------------------
    values = previous_readme_values()
    assert values["image"]["tag"] == PREV_VERSION
    (tmp_path / "values-prev.yaml").write_text(yaml.safe_dump(values))
    cluster.helm("install", RELEASE, str(FIXTURE), *ns, "-f", str(tmp_path / "values-prev.yaml"))
    manifest1, objects1 = release_objects(cluster, 1)
    dep1 = objects1[("Deployment", "gpu-cost-controller")]
    assert dep1["spec"]["template"]["spec"]["containers"][0]["image"] == \
        "%s:%s" % (values["image"]["repository"], PREV_VERSION)

    now = datetime.now(timezone.utc).replace(microsecond=0)
    scheduled = now - timedelta(days=8)
    seg_start, seg_end = now - timedelta(days=7), now - timedelta(days=2)
    add_gpu_workload(cluster, scheduled)  # train-0, vision/detection, still running
    add_finished_pod(cluster, seg_start, seg_end)  # seg-0, vision/segmentation, finished
    # A past window the ledger answers the same way whenever asked: whole UTC days back from
    # the last whole hour, in steps of a day.
    end = now.replace(minute=0, second=0)
    start = (now - timedelta(days=9)).replace(hour=0, minute=0, second=0)
    window = "window=%s,%s" % (start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                               end.strftime("%Y-%m-%dT%H:%M:%SZ"))
    by_project = "/api/v1/costs?%s&by=team,project" % window
    by_day = "/api/v1/costs?%s&by=team,project,model,node&step=1d" % window

    def folded(answer):
        return answer if costs_by_project(answer)[("vision", "segmentation")]["pods"] == 0 \
            else None

    prev = Controller(cluster, GPU_COST_CONTROLLER_PREV, tmp_path / "prev", "gpu-cost-prev-0")
    with prev.running():
        day = "gpu-cost-report-daily-" + local_day(scheduled, values["config"]["report"][
            "utc_offset"])
        wait_for(day, lambda: cluster.kubectl("get", "configmap", "-n", NAMESPACE, day,
                                              check=False).returncode == 0)
        wait_for("both pods priced", lambda: len(costs_by_project(prev.get(by_project))) == 2)
        # The pod that finished leaves the API: from now on only the ledger knows it.
        cluster.kubectl("-n", "ml-research", "delete", "pod", "seg-0", "--grace-period=0",
                        "--force")
        seen = newest_checkpoint(cluster)
        prev.checkpoint_written(seen["generation"] if seen else 0)
        # The figures as checkpointed: the checkpoint's fold made seg-0's hours rollups, which
        # count no pods (docs/ledger.md), once the API's snapshot is rebuilt after it.
        before = wait_for("seg-0 folded", lambda: folded(prev.get(by_project)), 30)
        before_by_day = prev.get(by_day)
    # Figures worked out here, not by the controller: seconds held in the window, T4 price.
    groups = costs_by_project(before)
    for key, secs in ((("vision", "detection"), (end - scheduled).total_seconds()),
                      (("vision", "segmentation"), (seg_end - seg_start).total_seconds())):
        assert groups[key]["gpu_seconds"] == pytest.approx(secs, abs=1e-6), (key, groups[key])
        assert groups[key]["cost"] == pytest.approx(secs / 3600 * T4_PRICE, rel=1e-9)
    written = newest_checkpoint(cluster)
    assert written["controller"] == "gpu-cost-prev-0"
    assert "resourceclaims" not in written["resource_versions"], written
    kept = controller_configmaps(cluster)
    assert "%s/gpu-cost-checkpoint" % NAMESPACE in kept and "%s/%s" % (NAMESPACE, day) in kept
    assert "ml-research/gpu-cost-report-weekly-latest" in kept, sorted(kept)

    # --- helm upgrade to this chart with the release's values; the tag moves to this app ----
    old_values = json.loads(cluster.helm("get", "values", RELEASE, *ns, "-o", "json").stdout)
    assert old_values == values
    new_values = json.loads(json.dumps(old_values))
    new_values["image"]["tag"] = CURRENT["appVersion"]
    (tmp_path / "values-new.yaml").write_text(yaml.safe_dump(new_values))
    cluster.helm("upgrade", RELEASE, str(CHART), *ns, "-f", str(tmp_path / "values-new.yaml"))
    manifest2, objects2 = release_objects(cluster, 2)
    # Every object of the previous release is still the release's, under the same name (a
    # renamed ServiceAccount, ConfigMap or Role would leave the checkpoint unreadable).
    assert set(objects1) <= set(objects2), sorted(set(objects1) - set(objects2))
    dep2 = objects2[("Deployment", "gpu-cost-controller")]
    assert dep2["spec"]["selector"] == dep1["spec"]["selector"]  # immutable: else no upgrade
    chart1, chart2 = "gpu-cost-" + PREV_VERSION, "gpu-cost-" + CURRENT["version"]
    want = {
        "metadata.labels.helm.sh/chart": (chart1, chart2),
        "metadata.labels.app.kubernetes.io/version": (PREV_VERSION, CURRENT["appVersion"]),
        "spec.template.metadata.labels.helm.sh/chart": (chart1, chart2),
        "spec.template.metadata.labels.app.kubernetes.io/version": (PREV_VERSION,
                                                                    CURRENT["appVersion"]),
        "spec.template.spec.containers[0].image": (
            "%s:%s" % (values["image"]["repository"], PREV_VERSION),
            "%s:%s" % (values["image"]["repository"], CURRENT["appVersion"])),
    }
    # What this upgrade changes in the Deployment, and nothing else: a change to the template
    # since the previous release shows here, to be added after checking that a rollback across
    # it still works (docs/helm.md, "Upgrading and rolling back").
    assert changes(dep1, dep2) == want
    assert is_subset(dep2, live(cluster, dep2))
    history = json.loads(cluster.helm("history", RELEASE, *ns, "-o", "json").stdout)
    assert [(h["revision"], h["status"], h["chart"]) for h in history] == [
        (1, "superseded", chart1), (2, "deployed", chart2)], history
    assert controller_configmaps(cluster) == kept, "helm upgrade changed the controller's data"

    # This controller under the upgraded release reads the previous one's checkpoint.
    new = Controller(cluster, GPU_COST_CONTROLLER, tmp_path / "new", "gpu-cost-new-0")
    with new.running():
        after_upgrade = new.get(by_project)
        after_upgrade_by_day = new.get(by_day)
        new.checkpoint_written(written["generation"])
    restored = new.restored()
    assert restored["by"] == "gpu-cost-prev-0"
    assert "generation %d in slot" % written["generation"] in restored["records"], restored
    same_figures(before, after_upgrade)
    same_figures(before_by_day, after_upgrade_by_day)
    assert not new.complaints(), new.log.read_text()
    written = newest_checkpoint(cluster)
    assert written["controller"] == "gpu-cost-new-0"
    # What this build adds to the checkpoint, which the previous one must read past.
    assert "resourceclaims" in written["resource_versions"], written

    # --- helm rollback to revision 1: the previous release's objects, the newer checkpoint --
    kept = controller_configmaps(cluster)
    cluster.helm("rollback", RELEASE, "1", *ns)
    manifest3, objects3 = release_objects(cluster, 3)
    assert manifest3 == manifest1
    for key, obj in objects1.items():
        now_obj = live(cluster, obj)
        assert is_subset(obj, now_obj), key
        assert now_obj["metadata"]["labels"]["helm.sh/chart"] == chart1, key
    for key in set(objects2) - set(objects1):
        assert live(cluster, objects2[key], check=False) is None, key
    history = json.loads(cluster.helm("history", RELEASE, *ns, "-o", "json").stdout)
    assert [(h["revision"], h["status"], h["chart"]) for h in history] == [
        (1, "superseded", chart1), (2, "superseded", chart2), (3, "deployed", chart1)], history
    assert history[-1]["description"] == "Rollback to 1"
    assert controller_configmaps(cluster) == kept, "helm rollback changed the controller's data"

    back = Controller(cluster, GPU_COST_CONTROLLER_PREV, tmp_path / "back", "gpu-cost-prev-1")
    with back.running():
        after_rollback = back.get(by_project)
        after_rollback_by_day = back.get(by_day)
        back.checkpoint_written(written["generation"])
    restored = back.restored()
    assert restored["by"] == "gpu-cost-new-0"
    assert "generation %d in slot" % written["generation"] in restored["records"], restored
    same_figures(before, after_rollback)
    same_figures(before_by_day, after_rollback_by_day)
    assert not back.complaints(), back.log.read_text()

    # The releases' RBAC sufficed each time: nothing the controllers asked was refused.
    for sa in {prev.sa, new.sa, back.sa}:
        refused = [(e["verb"], e["requestURI"], e["responseStatus"]["code"])
                   for e in audit_events(cluster, "system:serviceaccount:%s:%s" % (NAMESPACE, sa))
                   if e.get("responseStatus", {}).get("code") in (401, 403)]
        assert not refused, refused
