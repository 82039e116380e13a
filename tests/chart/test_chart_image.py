"""The container image `make image` builds (scripts/image-build.sh), and the chart installed with it.

The image's root filesystem is exported from the podman store and run the way a container
runtime would start it (tests/chart/image-root.sh): read-only root, uid/gid 65532, a tmpfs /dev,
only the environment given, files bind-mounted read-only where the kubelet mounts them.
`podman run` itself is refused on these machines (its runtime's setrlimit), and no kubelet runs
here: what a node adds (pulling, cgroups, seccomp, the pod network, the probes) is not tested.

Environment: IMAGE (default gpu-cost-controller:<version>, what `make image` tags), and
conftest.py's.
"""

import json
import os
import re
import signal
import subprocess
import tarfile
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from conftest import CHART, E2E_BIN, NAMESPACE, REPO, HERE, helm, need
from test_chart_cluster import (Cluster, add_gpu_workload, free_port, http_status, local_day,
                                wait_for)

VERSION = re.search(r"^project\(gpu-cost VERSION ([0-9.]+) ",
                    (REPO / "CMakeLists.txt").read_text(), re.M).group(1)
IMAGE = os.environ.get("IMAGE") or "gpu-cost-controller:" + VERSION
PODMAN = REPO / "scripts" / "image-podman.sh"
ROOT_RUN = HERE / "image-root.sh"
# The bound on the image (what `podman image inspect` reports, uncompressed).
MAX_BYTES = 40 * 1000 * 1000
UID = 65532


def pm(*args, check=True):
    cp = subprocess.run([str(PODMAN), *args], capture_output=True, text=True, timeout=300)
    if check and cp.returncode != 0:
        raise AssertionError("podman %s: exit %d\n%s" % (" ".join(args), cp.returncode,
                                                         cp.stderr))
    return cp


def git(*args):
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture(scope="module")
def inspect():
    if os.geteuid() != 0:
        pytest.fail("the image tests run as root (mount namespaces, uid 65532)", pytrace=False)
    if pm("image", "exists", IMAGE, check=False).returncode != 0:
        pytest.fail("no image %s in the store: run make image" % IMAGE, pytrace=False)
    return json.loads(pm("image", "inspect", IMAGE).stdout)[0]


@pytest.fixture(scope="module")
def root(inspect, tmp_path_factory):
    """The image's root filesystem, exported from a container created (never started) from it."""
    d = tmp_path_factory.mktemp("image")
    cid = pm("create", IMAGE).stdout.strip()
    try:
        pm("export", "-o", str(d / "rootfs.tar"), cid)
    finally:
        pm("rm", cid)
    with tarfile.open(d / "rootfs.tar") as t:
        names = sorted(m.name + ("/" if m.isdir() else "") for m in t.getmembers())
        t.extractall(d / "root", numeric_owner=True)
    (d / "files.txt").write_text("\n".join(names) + "\n")
    return d / "root"


def run_in(root, *argv, binds=(), env=(), timeout=60, check=True):
    cmd = [str(ROOT_RUN), str(root)]
    for b in binds:
        cmd += ["--bind", b]
    for e in env:
        cmd += ["--env", e]
    cp = subprocess.run(cmd + ["--", *argv], capture_output=True, text=True, timeout=timeout)
    if check and cp.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (" ".join(argv), cp.returncode, cp.stdout,
                                                    cp.stderr))
    return cp


def start_in(root, log, *argv, binds=(), env=()):
    cmd = [str(ROOT_RUN), str(root)]
    for b in binds:
        cmd += ["--bind", b]
    for e in env:
        cmd += ["--env", e]
    with open(log, "w") as f:
        return subprocess.Popen(cmd + ["--", *argv], stdout=f, stderr=f)


def program_pid(proc):
    """The program's pid: unshare --fork's only child, which exec'd chroot and then the program.
    unshare itself ignores SIGTERM while it waits, and the child's parent-death signal is reset
    when chroot changes its user, so the signal goes to the program."""
    children = Path("/proc/%d/task/%d/children" % (proc.pid, proc.pid)).read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def stop(proc, log):
    """SIGTERM to the program, and its exit status 0 (unshare passes it on)."""
    try:
        if proc.poll() is None:
            os.kill(program_pid(proc), signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, Path(log).read_text()
    finally:
        if proc.poll() is None:
            try:
                os.kill(program_pid(proc), signal.SIGKILL)
            except (OSError, AssertionError):
                pass
            proc.kill()
            proc.wait()


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def expected_revision(inspect):
    """The revision the image claims: the commit, or the commit marked -dirty when the tree had
    changes to what the image is built from."""
    rev = inspect["Config"]["Labels"]["org.opencontainers.image.revision"]
    assert rev in (git("rev-parse", "--short", "HEAD"),
                   git("rev-parse", "--short", "HEAD") + "-dirty"), rev
    return rev


def test_metadata(inspect):
    cfg = inspect["Config"]
    assert cfg["User"] == "%d:%d" % (UID, UID)
    assert cfg["Entrypoint"] == ["/usr/local/bin/gpu-cost-controller"]
    assert "8080/tcp" in cfg.get("ExposedPorts", {})
    labels = cfg["Labels"]
    assert labels["org.opencontainers.image.version"] == VERSION
    assert labels["org.opencontainers.image.title"] == "gpu-cost-controller"
    expected_revision(inspect)
    # created is the commit's time (SOURCE_DATE_EPOCH), not the build's
    commit_time = int(git("log", "-1", "--format=%ct"))
    created = datetime.fromtimestamp(commit_time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert labels["org.opencontainers.image.created"] == created
    assert inspect["Created"].startswith(created[:19]), inspect["Created"]
    assert len(inspect["RootFS"]["Layers"]) == 1, inspect["RootFS"]
    # no per-step history: it names intermediate images, which differ from build to build
    assert not inspect.get("History"), inspect["History"]
    assert inspect["Size"] <= MAX_BYTES, inspect["Size"]
    # the chart's defaults name this image
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert "%s:%s" % (values["image"]["repository"], values["image"]["tag"] or
                      chart["appVersion"]) == IMAGE
    assert chart["appVersion"] == VERSION


def test_push_as_the_readme_says(inspect, tmp_path):
    """The README's push command, to an OCI layout on disk instead of a registry (none can be
    reached here): the same podman push, the image's config (its ID) unchanged."""
    dest = tmp_path / "layout"
    pm("push", "--quiet", IMAGE, "oci:%s:%s" % (dest, VERSION))
    index = json.loads((dest / "index.json").read_text())
    (m,) = index["manifests"]
    assert m["annotations"]["org.opencontainers.image.ref.name"] == VERSION
    manifest = json.loads((dest / "blobs" / "sha256" / m["digest"].split(":")[1]).read_text())
    assert manifest["config"]["digest"] == "sha256:" + inspect["Id"]
    assert len(manifest["layers"]) == 1


def test_files(root):
    """Only the programs, their libraries and loader, the CA bundle, zoneinfo, passwd and group:
    no shell, no package manager, nothing setuid."""
    files = (root.parent / "files.txt").read_text().split()
    allowed = re.compile(r"^(\./)?(usr/local/bin/gpu-cost(-controller)?"
                         r"|usr/lib/[^/]+/lib[^/]+\.so[.0-9]*|usr/lib64/ld-linux[^/]*\.so\.[0-9]+"
                         r"|usr/lib/ld-linux[^/]*\.so\.[0-9]+"
                         r"|usr/share/zoneinfo/.*|etc/ssl/certs/ca-certificates\.crt"
                         r"|etc/(passwd|group|nsswitch\.conf)|lib|lib64|lib32|libx32"
                         r"|tmp/|(usr/|usr/lib/|usr/lib/[^/]+/|usr/lib64/|usr/local/"
                         r"|usr/local/bin/|usr/share/|etc/|etc/ssl/|etc/ssl/certs/|\./))$")
    stray = [f for f in files if not allowed.match(f)]
    assert not stray, stray
    for f in root.rglob("*"):
        if f.is_symlink():
            continue
        assert not (f.stat().st_mode & 0o6000), "setuid/setgid: %s" % f
        assert f.name not in ("sh", "bash", "dash", "busybox", "apt", "apt-get", "dpkg"), f
    passwd = (root / "etc" / "passwd").read_text()
    assert "nonroot:x:%d:%d:" % (UID, UID) in passwd
    assert (root / "etc/ssl/certs/ca-certificates.crt").read_text().count("BEGIN CERTIFICATE") > 100
    assert (root / "usr/share/zoneinfo/Europe/Berlin").read_bytes().startswith(b"TZif")


def test_no_library_missing(root):
    """The loader the programs name (PT_INTERP) lists every library it resolves, inside the
    image: ldd's own method, without ldd's shell."""
    for prog in ("gpu-cost-controller", "gpu-cost"):
        path = root / "usr/local/bin" / prog
        interp = re.search(r"Requesting program interpreter: (\S+)\]",
                           subprocess.run(["readelf", "-l", str(path)], capture_output=True,
                                          text=True, check=True).stdout).group(1)
        cp = run_in(root, interp, "--list", "/usr/local/bin/" + prog)
        assert "not found" not in cp.stdout, cp.stdout
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", subprocess.run(
            ["readelf", "-d", str(path)], capture_output=True, text=True, check=True).stdout)
        assert needed and all(n in cp.stdout for n in needed), (needed, cp.stdout)


def test_versions_match_the_commit(inspect, root):
    rev = expected_revision(inspect)
    assert run_in(root, "/usr/local/bin/gpu-cost", "version").stdout == \
        "gpu-cost %s (revision %s)\n" % (VERSION, rev)
    assert run_in(root, "/usr/local/bin/gpu-cost-controller", "--version").stdout == \
        "gpu-cost-controller %s (revision %s)\n" % (VERSION, rev)


def test_offline_demo(root):
    out = run_in(root, "/usr/local/bin/gpu-cost", "demo").stdout
    assert "Total spend" in out, out[:2000]


def test_demo_server(root, tmp_path):
    """--demo as 65532 on a read-only root: the API, /healthz, /readyz, /metrics, /allocation,
    the dashboard; then the chart's `helm test` command, run from the image against it."""
    port = free_port()
    log = tmp_path / "demo.log"
    proc = start_in(root, log, "/usr/local/bin/gpu-cost-controller", "--demo",
                    "--listen", "127.0.0.1:%d" % port)
    base = "http://127.0.0.1:%d" % port
    try:
        wait_for("/healthz", lambda: http_status(base + "/healthz") == 200
                 or proc.poll() is not None)
        assert proc.poll() is None, log.read_text()
        assert http_status(base + "/readyz") == 200
        status, ctype, body = get(base + "/api/v1/costs?window=7d&by=team")
        assert status == 200 and "json" in ctype
        assert json.loads(body)
        status, _, body = get(base + "/metrics")
        assert status == 200 and re.search(r"^gpu_cost_\w+", body, re.M), body[:500]
        status, _, body = get(base + "/allocation?window=7d&aggregate=namespace")
        assert status == 200 and json.loads(body)
        status, ctype, body = get(base + "/")
        assert status == 200 and "html" in ctype and "<html" in body.lower()
        # The hook's containers: same programs, same flags, the Service's address replaced.
        health, api = test_hooks(helm_template())
        for hook in (health, api):
            args = [a if not a.startswith("--server=") else "--server=" + base
                    for a in hook["args"]]
            out = run_in(root, *hook["command"], *args).stdout
            if hook is health:
                assert out.splitlines() == ["/healthz: 200 ok", "/readyz: 200 ok"], out
            else:
                assert "team" in out.lower() or "gpu" in out.lower(), out
            # and each fails when nothing answers
            assert run_in(root, *hook["command"], *[
                a if not a.startswith("--server=") else
                "--server=http://127.0.0.1:%d" % free_port()
                for a in hook["args"]], check=False).returncode != 0
    finally:
        stop(proc, log)


def helm_template(*args):
    return [d for d in yaml.safe_load_all(helm(
        "template", "gpu-cost", str(CHART), "--namespace", NAMESPACE, *args).stdout) if d]


def test_hooks(objects):
    """The `helm test` pod's containers: `gpu-cost health`, then `gpu-cost costs`."""
    pods = [o for o in objects if o["kind"] == "Pod"]
    assert len(pods) == 1, [o["kind"] for o in objects]
    assert pods[0]["metadata"]["annotations"]["helm.sh/hook"] == "test"
    cs = pods[0]["spec"]["containers"]
    assert [c["args"][0] for c in cs] == ["health", "costs"], cs
    assert all(c["image"] == IMAGE for c in cs)
    return cs


test_hooks.__test__ = False  # a helper: pytest must not collect it


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    for tool in ("kube-apiserver", "etcd", "kubectl", "helm"):
        need(E2E_BIN / tool, "run scripts/e2e-build.sh")
    c = Cluster(tmp_path_factory.mktemp("image-cluster"))
    c.start()
    try:
        c.kubectl("create", "namespace", NAMESPACE)
        c.kubectl("create", "namespace", "ml-research")
        yield c
    finally:
        c.stop()


def test_install_with_the_image_and_run_it(inspect, root, cluster, tmp_path):
    """helm install with the chart's default image (what `make image` tagged) and with the
    README's registry reference, against kube-apiserver; then the controller from the image,
    given what the kubelet would give its pod: the ServiceAccount's token, CA and namespace at
    /var/run/secrets/kubernetes.io/serviceaccount, the ConfigMap at /etc/gpu-cost, the
    KUBERNETES_SERVICE_* and downward-API variables and the Deployment's args. It takes the
    Lease, checkpoints and writes the report of a GPU pod; the `helm test` pod's command passes
    against it. No kubelet runs here: the Deployment's pods are never started, pulled or probed."""
    cp = cluster.helm("install", "gpu-cost", str(CHART), "--namespace", NAMESPACE, "--wait=false")
    notes = cp.stdout
    assert "later version" not in notes, notes
    for text in ("kubectl -n gpu-cost port-forward svc/gpu-cost 8080:8080",
                 "http://127.0.0.1:8080/api/v1/costs", "The dashboard is http://127.0.0.1:8080/",
                 "http://127.0.0.1:8080/metrics", "helm test gpu-cost -n gpu-cost"):
        assert text in notes, (text, notes)
    dep = cluster.get("deployment", "-n", NAMESPACE, "gpu-cost-controller")
    pod = dep["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"] == IMAGE
    hooks = [d for d in yaml.safe_load_all(cluster.helm(
        "get", "hooks", "gpu-cost", "--namespace", NAMESPACE).stdout) if d]
    health, hook = test_hooks(hooks)
    # The hook pod as the API server validates it (created for real only by `helm test`).
    cp = cluster.kubectl("apply", "--dry-run=server", "--validate=strict", "-f", "-",
                         stdin=yaml.safe_dump([h for h in hooks if h["kind"] == "Pod"][0]))
    assert "Warning" not in cp.stderr, cp.stderr
    # The README's order: pushed to a registry, installed with that reference.
    ref = "registry.example.com/platform/gpu-cost-controller"
    cluster.helm("upgrade", "gpu-cost", str(CHART), "--namespace", NAMESPACE,
                 "--set", "image.repository=" + ref, "--set", "image.tag=" + VERSION)
    dep = cluster.get("deployment", "-n", NAMESPACE, "gpu-cost-controller")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == ref + ":" + VERSION

    sa_dir = tmp_path / "serviceaccount"
    sa_dir.mkdir()
    (sa_dir / "token").write_text(cluster.kubectl(
        "-n", NAMESPACE, "create", "token", pod["serviceAccountName"], "--duration", "1h"
    ).stdout.strip())
    (sa_dir / "ca.crt").write_bytes(Path(cluster.env["E2E_CA"]).read_bytes())
    (sa_dir / "namespace").write_text(NAMESPACE)
    conf_dir = tmp_path / "gpu-cost"
    conf_dir.mkdir()
    config = cluster.get("configmap", "-n", NAMESPACE, "gpu-cost-config")["data"]
    for k, v in config.items():
        (conf_dir / k).write_text(v)
    for d in (sa_dir, conf_dir):  # what the kubelet's volumes give 65532 (fsGroup): read access
        os.chmod(d, 0o755)
        for f in d.iterdir():
            os.chmod(f, 0o644)
    scheduled = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=2)
    add_gpu_workload(cluster, scheduled)

    server = re.match(r"https://([^:/]+):(\d+)", cluster.env["E2E_SERVER"])
    port = free_port()
    args = [a for a in pod["containers"][0]["args"] if not a.startswith("--listen=")]
    log = tmp_path / "controller.log"
    proc = start_in(root, log, "/usr/local/bin/gpu-cost-controller", *args,
                    "--listen=127.0.0.1:%d" % port, "--checkpoint-interval=2s",
                    "--report-interval=2s",
                    binds=[str(sa_dir) + ":/var/run/secrets/kubernetes.io/serviceaccount",
                           str(conf_dir) + ":/etc/gpu-cost"],
                    env=["KUBERNETES_SERVICE_HOST=" + server.group(1),
                         "KUBERNETES_SERVICE_PORT=" + server.group(2),
                         "POD_NAME=gpu-cost-controller-image", "GPU_COST_NAMESPACE=" + NAMESPACE])
    base = "http://127.0.0.1:%d" % port
    try:
        wait_for("/readyz", lambda: http_status(base + "/readyz") == 200
                 or proc.poll() is not None, 90)
        assert proc.poll() is None, log.read_text()
        lease = cluster.get("lease", "-n", NAMESPACE, "gpu-cost-controller")
        assert lease["spec"]["holderIdentity"] == "gpu-cost-controller-image"
        wait_for("the checkpoint", lambda: cluster.kubectl(
            "get", "configmap", "-n", NAMESPACE, "gpu-cost-checkpoint", check=False
        ).returncode == 0)
        offset = json.loads(config["config.json"]).get("report", {}).get("utc_offset", "+00:00")
        day = "gpu-cost-report-daily-" + local_day(scheduled, offset)
        wait_for(day, lambda: cluster.kubectl("get", "configmap", "-n", NAMESPACE, day,
                                              check=False).returncode == 0)
        report = cluster.kubectl("get", "cm", "-n", NAMESPACE, day, "-o",
                                 "jsonpath={.data.report\\.json}").stdout
        assert "ml-research" in report, report[:2000]
        # `helm test`'s commands, from the image, against the controller from the image
        args = [a if not a.startswith("--server=") else "--server=" + base
                for a in health["args"]]
        out = run_in(root, *health["command"], *args).stdout
        assert out.splitlines() == ["/healthz: 200 ok", "/readyz: 200 ok"], out
        args = [a if not a.startswith("--server=") else "--server=" + base for a in hook["args"]]
        out = run_in(root, *hook["command"], *args).stdout
        assert "ml-research" in out or "vision" in out, out
    finally:
        stop(proc, log)
    lines = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
    assert lines and not [x for x in lines if x["level"] == "error"], log.read_text()
