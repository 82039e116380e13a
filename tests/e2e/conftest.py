"""Fixtures for the end-to-end tests: the harness modules, clusters, the controller binary.

Environment:
  GPU_COST_CONTROLLER   the controller binary (default build/gpu-cost-controller)
  E2E_BIN               the pinned control plane and kubectl (default ~/.cache/gpu-cost-e2e/bin)
  E2E_REQUIRE=1         fail instead of skipping when either is missing (`make e2e` sets it)
  E2E_KEEP=1            leave clusters and logs in place after the tests (for diagnosis)
"""

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

# tests/cli has a truth.py too: this directory's is registered as e2e_truth.
_spec = importlib.util.spec_from_file_location("e2e_truth", HERE / "truth.py")
e2e_truth = importlib.util.module_from_spec(_spec)
sys.modules["e2e_truth"] = e2e_truth
_spec.loader.exec_module(e2e_truth)

import harness  # noqa: E402


def _missing(what):
    if os.environ.get("E2E_REQUIRE") == "1":
        pytest.fail(what, pytrace=False)
    pytest.skip(what)


@pytest.fixture(scope="session")
def e2e_bin():
    b = Path(os.environ.get("E2E_BIN") or
             Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") /
             "gpu-cost-e2e" / "bin")
    for tool in ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubectl"):
        if not os.access(b / tool, os.X_OK):
            _missing("%s/%s is missing: run scripts/e2e-build.sh" % (b, tool))
    return b


@pytest.fixture(scope="session")
def controller_bin():
    p = Path(os.environ.get("GPU_COST_CONTROLLER") or REPO / "build" / "gpu-cost-controller")
    if not os.access(p, os.X_OK):
        _missing("%s is missing: build it (make build) or set GPU_COST_CONTROLLER" % p)
    return p


def _new_cluster(tmp_path_factory, name, request):
    path = tmp_path_factory.mktemp(name)
    c = harness.Cluster(path)
    c.start()
    return c


@pytest.fixture(scope="module")
def module_cluster(e2e_bin, tmp_path_factory, request):
    """One cluster for a whole test module (tests that can share its objects)."""
    c = _new_cluster(tmp_path_factory, "cluster-" + request.module.__name__, request)
    yield c
    c.stop()
    if os.environ.get("E2E_KEEP") != "1":
        shutil.rmtree(c.dir / "etcd", ignore_errors=True)


@pytest.fixture
def cluster(e2e_bin, tmp_path_factory, request):
    """A fresh cluster for one test: controller totals are cluster-wide, so a scenario must not
    see another's pods (a start costs about 5 s)."""
    c = _new_cluster(tmp_path_factory, "cluster-" + request.node.name[:40], request)
    yield c
    c.stop()
    if os.environ.get("E2E_KEEP") != "1":
        shutil.rmtree(c.dir / "etcd", ignore_errors=True)
