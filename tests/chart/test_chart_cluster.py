"""The Helm chart against the real kube-apiserver of the e2e harness (tests/e2e/README.md):
every rendered object of every scenario passes a server-side dry run; `helm install` with the
README's values file, `helm upgrade` and `helm uninstall` work; and the controller, running with
a token of the chart's own ServiceAccount (TokenRequest API) and the configuration the chart
rendered, syncs, takes the Lease, checkpoints and writes a report: the chart's RBAC suffices.
kube-apiserver's audit log of that identity (scripts/e2e-cluster.sh, E2E_AUDIT=1) then shows the
controller used every verb the chart grants it and no other, and was refused nothing: the RBAC
holds no verb the controller does not use.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from conftest import (CHART, CI_VALUES, E2E_BIN, GPU_COST_CONTROLLER, KUBECTL, NAMESPACE,
                      REPO, HERE, helm, need, template_args)

SCENARIOS = [None] + CI_VALUES
TEAM_NAMESPACES = ["ml-research", "nlp"]


class Cluster:
    def __init__(self, path):
        self.dir = path
        self.kubeconfig = path / "admin.kubeconfig"

    def start(self):
        subprocess.run([str(REPO / "scripts" / "e2e-cluster.sh"), "start", str(self.dir)],
                       check=True, timeout=180,
                       env=dict(os.environ, E2E_BIN=str(E2E_BIN), E2E_AUDIT="1"))
        self.env = {}
        for line in (self.dir / "env").read_text().splitlines():
            m = re.match(r"^([A-Z0-9_]+)=(.*)$", line)
            if m:
                self.env[m.group(1)] = m.group(2).strip("'")

    def stop(self):
        subprocess.run([str(REPO / "scripts" / "e2e-cluster.sh"), "stop", str(self.dir)],
                       timeout=120, env=dict(os.environ, E2E_BIN=str(E2E_BIN)))

    def kubectl(self, *args, check=True, kubeconfig=None, stdin=None):
        cp = subprocess.run([str(KUBECTL), "--kubeconfig", str(kubeconfig or self.kubeconfig),
                             *args], capture_output=True, text=True, timeout=120, input=stdin)
        if check and cp.returncode != 0:
            raise AssertionError("kubectl %s: exit %d\n%s" % (" ".join(args), cp.returncode,
                                                              cp.stderr))
        return cp

    def helm(self, *args, check=True):
        return helm("--kubeconfig", str(self.kubeconfig), *args, check=check)

    def get(self, *args):
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    for tool in ("kube-apiserver", "etcd", "kubectl", "helm"):
        need(E2E_BIN / tool, "run scripts/e2e-build.sh")
    c = Cluster(tmp_path_factory.mktemp("chart-cluster"))
    c.start()
    try:
        for ns in [NAMESPACE] + TEAM_NAMESPACES:
            c.kubectl("create", "namespace", ns)
        c.kubectl("apply", "-f", str(HERE / "fixtures" / "servicemonitor-crd.yaml"))
        c.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                  "crd/servicemonitors.monitoring.coreos.com")
        yield c
    finally:
        c.stop()
        if os.environ.get("E2E_KEEP") != "1":
            shutil.rmtree(c.dir / "etcd", ignore_errors=True)


def rendered(values):
    return helm(*template_args([values] if values else [])).stdout


def dry_run(cluster, text):
    return cluster.kubectl("apply", "--dry-run=server", "--validate=strict", "-f", "-",
                           stdin=text, check=False)


@pytest.mark.parametrize("values", SCENARIOS, ids=lambda v: v.name if v else "default")
def test_server_side_dry_run(cluster, values):
    text = rendered(values)
    objects = [d for d in yaml.safe_load_all(text) if d]
    cp = dry_run(cluster, text)
    assert cp.returncode == 0, cp.stderr
    # every object accepted, none created, and no warning (deprecated API, unknown field)
    done = [line for line in cp.stdout.splitlines() if line.endswith("(server dry run)")]
    assert len(done) == len(objects), cp.stdout
    assert "Warning" not in cp.stderr, cp.stderr
    assert cluster.kubectl("get", "clusterrole", "gpu-cost-controller",
                           check=False).returncode != 0


def test_plain_manifests_dry_run(cluster):
    text = (REPO / "deploy" / "gpu-cost.yaml").read_text()
    cp = dry_run(cluster, text)
    assert cp.returncode == 0 and "Warning" not in cp.stderr, cp.stderr


def test_dry_run_catches_a_bad_object(cluster):
    """The dry run validates for real: a misspelt field and a wrong type are refused."""
    objects = [d for d in yaml.safe_load_all(rendered(None)) if d]
    dep = [o for o in objects if o["kind"] == "Deployment"][0]
    bad = json.loads(json.dumps(dep))
    bad["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFS"] = True
    cp = dry_run(cluster, yaml.safe_dump(bad))
    assert cp.returncode != 0 and "readOnlyRootFS" in cp.stderr, cp.stderr
    bad = json.loads(json.dumps(dep))
    bad["spec"]["template"]["spec"]["securityContext"]["runAsUser"] = "nobody"
    cp = dry_run(cluster, yaml.safe_dump(bad))
    assert cp.returncode != 0, cp.stdout


def readme_values():
    """The values file that the README's "Install with Helm" section documents."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Install with Helm", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "README.md: no yaml block under Install with Helm"
    return block.group(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def wait_for(what, fn, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.5)
    raise AssertionError("timed out waiting for " + what)


def sa_kubeconfig(cluster, path, sa):
    """A kubeconfig holding a token of the chart's ServiceAccount, from the TokenRequest API."""
    token = cluster.kubectl("-n", NAMESPACE, "create", "token", sa, "--duration", "1h").stdout
    cfg = json.loads(cluster.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    cfg["users"][0]["user"] = {"token": token.strip()}
    path.write_text(json.dumps(cfg))
    path.chmod(0o600)
    return path


def add_gpu_workload(cluster, scheduled):
    """A node with one T4 and a pod of team vision holding it since `scheduled`, written as the
    scheduler and kubelet would (the harness runs neither)."""
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-t4-0", "labels": {"nvidia.com/gpu.product": "Tesla-T4",
                                                    "nvidia.com/gpu.count": "1"}}}))
    cluster.kubectl("patch", "node", "gpu-t4-0", "--subresource=status", "--type=merge", "-p",
                    json.dumps({"status": {"capacity": {"nvidia.com/gpu": "1"},
                                           "allocatable": {"nvidia.com/gpu": "1"}}}))
    cluster.kubectl("label", "namespace", "ml-research", "team=vision", "--overwrite")
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "train-0", "namespace": "ml-research",
                     "labels": {"project": "detection"}},
        "spec": {"nodeName": "gpu-t4-0", "containers": [{
            "name": "train", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
            "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}))
    t = scheduled.strftime("%Y-%m-%dT%H:%M:%SZ")
    cluster.kubectl("-n", "ml-research", "patch", "pod", "train-0", "--subresource=status",
                    "--type=merge", "-p", json.dumps({"status": {
                        "phase": "Running", "startTime": t,
                        "conditions": [{"type": "PodScheduled", "status": "True",
                                        "lastTransitionTime": t}],
                        "containerStatuses": [{"name": "train", "ready": True,
                                               "restartCount": 0, "image": "pytorch",
                                               "imageID": "", "state": {
                                                   "running": {"startedAt": t}}}]}}))


def local_day(t, offset):
    """The date of t where days start at the configured UTC offset ("+HH:MM")."""
    m = re.fullmatch(r"([+-])(\d\d):(\d\d)", offset)
    delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
    return (t + delta if m.group(1) == "+" else t - delta).strftime("%Y-%m-%d")


def can_i(cluster, kubeconfig, verb, resource, ns=None):
    args = ["auth", "can-i", verb, resource] + (["-n", ns] if ns else [])
    return cluster.kubectl(*args, kubeconfig=kubeconfig, check=False).stdout.strip()


def granted(cluster, sa):
    """(verb, apiGroup, resource, namespace or None) that the installed ClusterRoles and Roles
    bound to the ServiceAccount grant it."""
    out = set()
    for kind, role_kind in (("clusterrolebindings", "ClusterRole"), ("rolebindings", "Role")):
        for b in cluster.get(kind, "-A")["items"]:
            if not any(s.get("kind") == "ServiceAccount" and s.get("name") == sa and
                       s.get("namespace") == NAMESPACE for s in b.get("subjects") or []):
                continue
            ns = b["metadata"].get("namespace")
            ref = b["roleRef"]
            assert ref["kind"] == role_kind, b
            role = cluster.get(role_kind.lower(), ref["name"], *(["-n", ns] if ns else []))
            for rule in role["rules"]:
                for g in rule["apiGroups"]:
                    for res in rule["resources"]:
                        for v in rule["verbs"]:
                            out.add((v, g, res, ns))
    return out


def audit_events(cluster, user):
    """The controller's requests (its user agent) in the cluster's audit log, one per request."""
    path = Path(cluster.env["E2E_AUDIT_LOG"])
    events = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        e = json.loads(line)
        if (e.get("user", {}).get("username") == user and
                e.get("userAgent", "").startswith("gpu-cost/")):
            # a watch logs ResponseStarted then ResponseComplete: one request
            events.setdefault(e["auditID"], e)
            if e["stage"] == "ResponseComplete":
                events[e["auditID"]] = e
    return list(events.values())


def used(events):
    out = set()
    for e in events:
        ref = e.get("objectRef")
        if not ref:
            continue  # a non-resource URL (discovery: system:discovery grants it to everyone)
        assert "subresource" not in ref, e
        out.add((e["verb"], ref.get("apiGroup", ""), ref.get("resource"), ref.get("namespace")))
    return out


def streamed(events):
    """The `list` grants a streaming list stood in for: the controller takes its initial state
    by a watch with sendInitialEvents (authorized as `watch`) and LISTs only where a server
    refuses or ignores that (docs/kube.md), so on a server that streams, the chart's `list`
    on those resources is the fallback's grant, used by no request."""
    out = set()
    for e in events:
        ref = e.get("objectRef")
        if ref and e["verb"] == "watch" and "sendInitialEvents=true" in e.get("requestURI", ""):
            out.add(("list", ref.get("apiGroup", ""), ref.get("resource"), ref.get("namespace")))
    return out


def test_install_run_upgrade_uninstall(cluster, tmp_path):
    need(GPU_COST_CONTROLLER, "build it (make build) or set GPU_COST_CONTROLLER")
    values = tmp_path / "my-values.yaml"
    values.write_text(readme_values())
    cp = cluster.helm("install", "gpu-cost", str(CHART), "--namespace", NAMESPACE, "-f",
                      str(values))
    notes = cp.stdout
    assert "kubectl -n gpu-cost port-forward svc/gpu-cost 8080:8080" in notes
    assert ("kubectl -n gpu-cost get cm gpu-cost-report-weekly-latest -o jsonpath="
            "'{.data.report\\.md}'") in notes
    assert "kubectl -n ml-research get cm gpu-cost-report-weekly-latest" in notes

    dep = cluster.get("deployment", "-n", NAMESPACE, "gpu-cost-controller")
    sum1 = dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    config = cluster.get("configmap", "-n", NAMESPACE, "gpu-cost-config")["data"]["config.json"]
    want = yaml.safe_load(readme_values())["config"]
    assert json.loads(config)["cluster"] == want["cluster"]

    # The controller as the chart deploys it: its ServiceAccount's token, its rendered
    # configuration and flags (the listen address and intervals adapted to a test).
    kubeconfig = sa_kubeconfig(cluster, tmp_path / "sa.kubeconfig", sa)
    (tmp_path / "config.json").write_text(config)
    # Scheduled last week, so that week is complete and its report is copied to the team's
    # namespace (the per-team Role's grant is exercised too).
    scheduled = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=8)
    add_gpu_workload(cluster, scheduled)
    # A chunk left over from an earlier, longer checkpoint: the controller deletes it after its
    # first checkpoint write, which exercises the Role's delete on configmaps.
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "gpu-cost-checkpoint-7", "namespace": NAMESPACE,
                     "labels": {"app.kubernetes.io/name": "gpu-cost",
                                "gpu-cost.io/kind": "checkpoint"}},
        "data": {"checkpoint.json": "{}"}}))
    port, probe_port = free_port(), free_port()
    assert "--probe-listen=0.0.0.0:8081" in args
    argv = [str(GPU_COST_CONTROLLER)] + [
        a for a in args if not a.startswith(("--config=", "--listen=", "--probe-listen="))] + [
        "--config", str(tmp_path / "config.json"), "--listen", "127.0.0.1:%d" % port,
        "--probe-listen", "127.0.0.1:%d" % probe_port,
        "--kubeconfig", str(kubeconfig), "--checkpoint-interval=2s", "--report-interval=2s"]
    log = tmp_path / "controller.log"
    env = dict(os.environ, POD_NAME="gpu-cost-controller-0", GPU_COST_NAMESPACE=NAMESPACE)
    env.pop("KUBECONFIG", None)
    with open(log, "w") as logf:
        proc = subprocess.Popen(argv, stdout=logf, stderr=logf, env=env)
    try:
        wait_for("/readyz", lambda: http_status("http://127.0.0.1:%d/readyz" % port) == 200
                 or proc.poll() is not None)
        assert proc.poll() is None, log.read_text()
        assert http_status("http://127.0.0.1:%d/healthz" % port) == 200
        # Where the chart's probes go.
        assert http_status("http://127.0.0.1:%d/healthz" % probe_port) == 200
        assert http_status("http://127.0.0.1:%d/readyz" % probe_port) == 200
        lease = cluster.get("lease", "-n", NAMESPACE, "gpu-cost-controller")
        assert lease["spec"]["holderIdentity"] == "gpu-cost-controller-0"
        wait_for("the checkpoint", lambda: cluster.kubectl(
            "get", "configmap", "-n", NAMESPACE, "gpu-cost-checkpoint", check=False
        ).returncode == 0)
        day = "gpu-cost-report-daily-" + local_day(scheduled, want["report"]["utc_offset"])
        wait_for(day, lambda: cluster.kubectl("get", "configmap", "-n", NAMESPACE, day,
                                              check=False).returncode == 0)
        report = cluster.kubectl("get", "cm", "-n", NAMESPACE, day, "-o",
                                 "jsonpath={.data.report\\.json}").stdout
        summary = json.dumps(json.loads(report))
        assert "vision" in summary and "detection" in summary, summary[:2000]
        md = cluster.kubectl("get", "cm", "-n", NAMESPACE, day, "-o",
                             "jsonpath={.data.report\\.md}").stdout
        assert md.startswith("#") and "$" in md, md[:500]
        # The chart's default memory limit leaves room (the cluster here is small: this is a
        # floor, not a sizing).
        rss_kib = int(re.search(r"VmRSS:\s+(\d+) kB",
                                Path("/proc/%d/status" % proc.pid).read_text()).group(1))
        limit = dep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
        assert limit == "64Mi" and rss_kib < 32 * 1024, rss_kib
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # A restart: the checkpoint restored, the released Lease taken again, and the reports
    # written again (the controller remembers what it wrote only in memory), so the team's copy,
    # which exists now, is replaced (update) where the first run created it.
    user = "system:serviceaccount:%s:%s" % (NAMESPACE, sa)
    team_update = ("update", "", "configmaps", "ml-research")
    with open(log, "a") as logf:
        proc = subprocess.Popen(argv, stdout=logf, stderr=logf, env=env)
    try:
        wait_for("/readyz after the restart", lambda: http_status(
            "http://127.0.0.1:%d/readyz" % port) == 200 or proc.poll() is not None)
        assert proc.poll() is None, log.read_text()
        wait_for("the team's copy replaced",
                 lambda: team_update in used(audit_events(cluster, user)), 30)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "checkpoint restored" in log.read_text(), log.read_text()
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert lines and not [x for x in lines if x["level"] == "error"], log.read_text()
    token = json.loads(kubeconfig.read_text())["users"][0]["user"]["token"]
    assert token not in log.read_text()
    assert cluster.kubectl("get", "configmap", "-n", NAMESPACE, "gpu-cost-checkpoint-7",
                           check=False).returncode != 0, "the stale chunk was not deleted"

    # The proof of least privilege: in its whole life (start, sync, checkpoints, reports, the
    # stale chunk, SIGTERM releasing the Lease) the controller used exactly the verbs its roles
    # grant, each at least once (a `list` by the streaming list that stood in for it), and was
    # refused nothing. The log is written as each response
    # completes, so the last few events may land just after the controller exits.
    grant = granted(cluster, sa)
    assert grant, "no role bound to " + user
    end = time.monotonic() + 15
    events = audit_events(cluster, user)
    while not used(events) | streamed(events) >= grant and time.monotonic() < end:
        time.sleep(0.5)
        events = audit_events(cluster, user)
    got = used(events) | (streamed(events) & grant)
    assert got == grant, {"unused grants": sorted(grant - got, key=str),
                          "used, not granted": sorted(got - grant, key=str)}
    refused = [(e["verb"], e["requestURI"], e["responseStatus"]["code"]) for e in events
               if e.get("responseStatus", {}).get("code") in (401, 403)]
    assert not refused, refused

    # What the chart's RBAC grants that identity, and what it does not.
    for verb, res, ns in [("list", "pods", None), ("watch", "nodes", None),
                          ("watch", "resourceslices.resource.k8s.io", None),
                          ("list", "resourceclaims.resource.k8s.io", None),
                          ("watch", "deviceclasses.resource.k8s.io", None),
                          ("list", "namespaces", None), ("delete", "configmaps", NAMESPACE),
                          ("update", "leases.coordination.k8s.io", NAMESPACE),
                          ("create", "configmaps", "ml-research")]:
        assert can_i(cluster, kubeconfig, verb, res, ns) == "yes", (verb, res, ns)
    for verb, res, ns in [("get", "secrets", NAMESPACE), ("list", "secrets", None),
                          ("delete", "pods", None), ("patch", "nodes", None),
                          ("get", "pods", None), ("get", "namespaces", None),
                          ("get", "resourceclaims.resource.k8s.io", None),
                          ("update", "resourceclaims.resource.k8s.io", None),
                          ("patch", "configmaps", NAMESPACE), ("watch", "configmaps", NAMESPACE),
                          ("create", "configmaps", "default"),
                          ("delete", "configmaps", "ml-research"),
                          ("create", "configmaps", "nlp"),
                          ("delete", "leases.coordination.k8s.io", NAMESPACE),
                          ("create", "tokenreviews.authentication.k8s.io", None)]:
        assert can_i(cluster, kubeconfig, verb, res, ns) == "no", (verb, res, ns)

    # helm upgrade: a configuration change rolls the pods (new checksum); auth adds its grant.
    cluster.helm("upgrade", "gpu-cost", str(CHART), "--namespace", NAMESPACE, "-f", str(values),
                 "--set", "config.report.top_n=20", "--set", "auth.enabled=true")
    dep = cluster.get("deployment", "-n", NAMESPACE, "gpu-cost-controller")
    assert dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"] != sum1
    assert json.loads(cluster.get("configmap", "-n", NAMESPACE, "gpu-cost-config")["data"][
        "config.json"])["report"]["top_n"] == 20
    wait_for("the auth grant", lambda: can_i(
        cluster, kubeconfig, "create", "tokenreviews.authentication.k8s.io") == "yes", 20)
    assert can_i(cluster, kubeconfig, "create",
                 "subjectaccessreviews.authorization.k8s.io") == "yes"

    # helm uninstall removes what the chart made; the controller's own ConfigMaps stay.
    cluster.helm("uninstall", "gpu-cost", "--namespace", NAMESPACE)
    for args in (["clusterrole", "gpu-cost-controller"], ["-n", "ml-research", "role",
                                                         "gpu-cost-report-writer"],
                 ["-n", NAMESPACE, "deployment", "gpu-cost-controller"]):
        assert cluster.kubectl("get", *args, check=False).returncode != 0, args
    assert cluster.kubectl("get", "configmap", "-n", NAMESPACE, day, check=False).returncode == 0
