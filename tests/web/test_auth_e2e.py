"""The dashboard under delegated auth against the real kube-apiserver of `make e2e`: the
controller runs with --auth-delegate (path mode), a viewer ServiceAccount is granted get on "/"
and "/api/*" only, and the browser reaches the controller as through a proxy that adds the
viewer's bearer token to every request. The page must load with every request allowed: it is one
document and then asks the API only (docs/dashboard.md)."""

import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import HERE, READY, REPO

E2E = REPO / "tests" / "e2e"


@pytest.fixture(scope="module")
def delegated(tmp_path_factory):
    """A cluster, RBAC, a controller with --auth-delegate, and the viewer's token."""
    e2e_bin = Path(os.environ.get("E2E_BIN") or
                   Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") /
                   "gpu-cost-e2e" / "bin")
    if not os.access(e2e_bin / "kube-apiserver", os.X_OK):
        what = "%s/kube-apiserver is missing: run scripts/e2e-build.sh" % e2e_bin
        if os.environ.get("E2E_REQUIRE") == "1":
            pytest.fail(what, pytrace=False)
        pytest.skip(what)
    binary = os.environ.get("GPU_COST_CONTROLLER") or str(REPO / "build" / "gpu-cost-controller")
    sys.path.insert(0, str(E2E))
    import harness  # the e2e suite's cluster and controller runner

    tmp = tmp_path_factory.mktemp("web-auth")
    cluster = harness.Cluster(tmp / "cluster")
    cluster.start()
    ctl = None
    try:
        cluster.api.call("POST", "/api/v1/namespaces", {"metadata": {"name": harness.NS}})
        cluster.apply(harness.RBAC)
        cluster.apply(E2E / "rbac-auth.yaml")  # the controller's review grants; team-a
        cluster.apply(HERE / "rbac-dashboard.yaml")
        cluster.wait_controller_can()
        ctl = harness.Controller(binary, cluster, tmp / "controller.log", ident="web-auth",
                                 extra=["--no-leader-election", "--auth-delegate"])
        ctl.start()
        ctl.wait_ready(60)

        def token(name):
            doc = cluster.api.call(
                "POST", "/api/v1/namespaces/team-a/serviceaccounts/%s/token" % name,
                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                 "spec": {"expirationSeconds": 3600}})
            return doc["status"]["token"]

        yield {"ctl": ctl, "base": "http://127.0.0.1:%d/" % ctl.port,
               "viewer": token("viewer"), "reader": token("reader")}
    finally:
        if ctl:
            ctl.stop()
        cluster.stop()


def status_of(base, path, token=None):
    req = urllib.request.Request(base + path.lstrip("/"),
                                 headers={"Authorization": "Bearer " + token} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_viewer_sees_the_dashboard(browser, delegated):
    base, viewer = delegated["base"], delegated["viewer"]
    assert status_of(base, "/") == 401
    # RBAC reaches its verdict a moment after the binding is written: wait for the grant.
    deadline = time.monotonic() + 30
    while status_of(base, "/", viewer) != 200:
        assert time.monotonic() < deadline, "the viewer's grant on / never took effect"
        time.sleep(0.5)
    page = browser.open_page(base, 1280, 900, READY,
                             extra_headers={"Authorization": "Bearer " + viewer})
    assert page.errors == [] and page.network_errors == [], page.errors + page.network_errors
    assert page.eval("document.documentElement.dataset.state") == "ready", \
        page.eval("document.getElementById('message').textContent")
    urls = page.eval("performance.getEntriesByType('resource').map(e => e.name)")
    assert len(urls) >= 7 and all(u.startswith(base + "api/v1/") for u in urls), urls
    spend = page.eval("document.querySelector('#cards .card p.num').dataset.value")
    assert float(spend) == 0  # no GPU pods in this cluster: the page says so in every section
    assert page.eval("document.getElementById('table-team').textContent").startswith("No ")


def test_api_grant_without_the_page(delegated):
    """The e2e suite's reader may get /api/* but not "/": the page itself is refused."""
    base, reader = delegated["base"], delegated["reader"]
    assert status_of(base, "api/v1/costs?window=7d", reader) == 200
    assert status_of(base, "/", reader) == 403
