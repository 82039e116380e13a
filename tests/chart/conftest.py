"""Fixtures for the Helm chart's tests: the pinned helm and kubectl, rendering, the CLI.

Environment:
  E2E_BIN        the pinned helm, kubectl, kube-apiserver, etcd (default ~/.cache/gpu-cost-e2e/bin,
                 built by scripts/e2e-build.sh)
  GPU_COST       the CLI (default build/gpu-cost), which must accept every rendered configuration
  GPU_COST_CONTROLLER  the controller (default build/gpu-cost-controller), run in the cluster test
  GPU_COST_CONTROLLER_PREV  the previous release's controller (default
                 build/prev-<version>/gpu-cost-controller, tests/chart/prev-release.sh), run in the
                 upgrade test
  CHART_REQUIRE=1  fail instead of skipping when a tool is missing (`make chart-test` sets it)
  CHART_HELM     the helm binary in E2E_BIN: helm (Helm 4, the default) or helm3 (Helm 3)
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CHART = REPO / "charts" / "gpu-cost"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
INVALID_VALUES = sorted((HERE / "invalid").glob("*.yaml"))
# The cluster the e2e harness runs; deploy/gpu-cost.yaml is rendered for it.
KUBE_VERSION = "1.37.0"
RELEASE = "gpu-cost"
NAMESPACE = "gpu-cost"

E2E_BIN = Path(os.environ.get("E2E_BIN") or
               Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") /
               "gpu-cost-e2e" / "bin")
# CHART_HELM=helm3 runs the same tests with Helm 3 (tests/chart/run.sh runs both majors).
HELM = E2E_BIN / os.environ.get("CHART_HELM", "helm")
KUBECTL = E2E_BIN / "kubectl"
GPU_COST = Path(os.environ.get("GPU_COST") or REPO / "build" / "gpu-cost")
GPU_COST_CONTROLLER = Path(os.environ.get("GPU_COST_CONTROLLER") or
                           REPO / "build" / "gpu-cost-controller")


def missing(what):
    if os.environ.get("CHART_REQUIRE") == "1":
        pytest.fail(what, pytrace=False)
    pytest.skip(what)


def need(path, hint):
    if not os.access(path, os.X_OK):
        missing("%s is missing: %s" % (path, hint))


class Rendered:
    """The objects of one `helm template`, by kind and name."""

    def __init__(self, text):
        self.text = text
        self.objects = [d for d in yaml.safe_load_all(text) if d]

    def all(self, kind):
        return [o for o in self.objects if o["kind"] == kind]

    def one(self, kind, name=None):
        found = [o for o in self.all(kind) if name is None or o["metadata"]["name"] == name]
        assert len(found) == 1, "expected one %s %s, got %d" % (kind, name or "", len(found))
        return found[0]

    def kinds(self):
        return sorted({o["kind"] for o in self.objects})

    def deployment(self):
        return self.one("Deployment")

    def container(self):
        return self.deployment()["spec"]["template"]["spec"]["containers"][0]

    def config(self):
        return json.loads(self.one("ConfigMap", "gpu-cost-config")["data"]["config.json"])


def helm(*args, check=True):
    need(HELM, "run scripts/e2e-build.sh")
    cp = subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=120)
    if check and cp.returncode != 0:
        raise AssertionError("helm %s: exit %d\n%s" % (" ".join(args), cp.returncode, cp.stderr))
    return cp


def template_args(values=(), sets=(), release=RELEASE, namespace=NAMESPACE):
    # --skip-tests: the objects an install creates; the `helm test` pod is rendered on its own
    # (test_chart_templates.py, test_chart_image.py) and is not part of deploy/gpu-cost.yaml.
    args = ["template", release, str(CHART), "--namespace", namespace,
            "--kube-version", KUBE_VERSION, "--skip-tests"]
    for v in values:
        args += ["-f", str(v)]
    for s in sets:
        args += ["--set", s]
    return args


def render(values=(), sets=(), extra=(), **kw):
    return Rendered(helm(*template_args(values, sets, **kw), *extra).stdout)


def render_fails(values=(), sets=(), extra=(), **kw):
    """The error text of a `helm template` that must fail."""
    cp = helm(*template_args(values, sets, **kw), *extra, check=False)
    assert cp.returncode != 0, "helm template succeeded but should have failed:\n" + cp.stdout
    return cp.stderr


@pytest.fixture(scope="session")
def default_render():
    return render()


@pytest.fixture(scope="session")
def scenarios():
    """Every scenario: default values and each ci/*-values.yaml, rendered once."""
    out = {"default": render()}
    for f in CI_VALUES:
        out[f.name] = render([f])
    return out
