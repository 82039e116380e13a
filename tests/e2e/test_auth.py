"""Delegated authentication of the controller's HTTP API against the real kube-apiserver: the
controller runs with --auth-delegate under its own ServiceAccount (granted TokenReview and
SubjectAccessReview create, as the chart does with auth.enabled) and asks the API server about
every caller. Callers are ServiceAccounts with bound tokens from the TokenRequest API: `reader`
is bound to a ClusterRole with nonResourceURLs ["/api/*", "/metrics", "/allocation"] verb get,
`outsider` to nothing.

Path mode (the default) asks `get <path>` as a non-resource URL. kube-apiserver's default
ClusterRole system:discovery grants `get` on "/api/*" to every authenticated user, so in that
mode the REST API under /api/ is open to any valid token, while /metrics, /allocation and the
dashboard are not: the tests pin that (docs/auth.md says it). Resource mode
(--auth-resource ..., services/proxy) restricts the REST API to the reader. Then the same over
TLS with a certificate made here, and against an API server that cannot be reached."""

import http.client
import json
import ssl
import subprocess
import time

import pytest

import harness
from tcpproxy import TcpProxy

NS = harness.NS
API = "/api/v1/costs"  # the REST API's main route; /metrics is checked beside it
RESOURCE = "namespace=gpu-cost,resource=services,subresource=proxy,name=gpu-cost"


def request(port, path, token=None, ca=None, timeout=10):
    """(status, headers as a lower-cased dict, body text) of one GET to the controller."""
    if ca:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout,
                                           context=ssl.create_default_context(cafile=ca))
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Authorization": "Bearer " + token} if token else {}
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8",
                                                                                "replace")
    finally:
        conn.close()


def sa_token(cluster, ns, name):
    """A bound token of ServiceAccount ns/name from the TokenRequest API (one hour)."""
    doc = cluster.api.call("POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (ns, name),
                           {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                            "spec": {"expirationSeconds": 3600}})
    return doc["status"]["token"]


def allowed(cluster, user, path=None, group=None, resource=None, verb="create", **attrs):
    """What the API server's authorizer says about `get path` (or `verb` on a resource) for
    user; the admin asks."""
    spec = {"user": user, "groups": ["system:serviceaccounts", "system:authenticated"]}
    if resource:
        spec["resourceAttributes"] = dict(group=group, resource=resource, verb=verb, **attrs)
    else:
        spec["nonResourceAttributes"] = {"path": path, "verb": "get"}
    doc = cluster.api.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
    return doc["status"].get("allowed", False)


def wait_for(what, fn, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if fn():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def start(controller_bin, cluster, tmp_path, name, extra, ca=None, kubeconfig=None):
    """A controller with --auth-delegate, ready (its /readyz is open, over TLS when ca)."""
    class Ctl(harness.Controller):
        def args(self):
            a = super().args()
            if kubeconfig:
                a[a.index("--kubeconfig") + 1] = str(kubeconfig)
            return a

        def get(self, path):
            try:
                return request(self.port, path, ca=ca, timeout=2)[0]
            except OSError:
                return None

    c = Ctl(controller_bin, cluster, tmp_path / (name + ".log"), ident=name,
            extra=["--no-leader-election", "--auth-delegate"] + extra)
    c.start()
    return c


@pytest.fixture(scope="module")
def auth(module_cluster, controller_bin, tmp_path_factory):
    """The cluster with RBAC for the controller and the callers, their tokens, a controller."""
    c = module_cluster
    c.api.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    c.apply(harness.RBAC)
    c.apply(harness.HERE / "rbac-auth.yaml")
    c.wait_controller_can()
    for group, resource in (("authentication.k8s.io", "tokenreviews"),
                            ("authorization.k8s.io", "subjectaccessreviews")):
        wait_for("the controller's %s grant" % resource, lambda: allowed(
            c, c.env["E2E_CONTROLLER_USER"], group=group, resource=resource))
    wait_for("the reader's grant", lambda: allowed(
        c, "system:serviceaccount:team-a:reader", "/metrics"))
    wait_for("the reader's services/proxy grant", lambda: allowed(
        c, "system:serviceaccount:team-a:reader", group="", resource="services",
        subresource="proxy", name="gpu-cost", namespace=NS, verb="get"))
    tmp = tmp_path_factory.mktemp("auth")
    ctl = start(controller_bin, c, tmp, "auth-path", [])
    res = start(controller_bin, c, tmp, "auth-resource", ["--auth-resource", RESOURCE])
    try:
        ctl.wait_ready(60)
        res.wait_ready(60)
        yield {"cluster": c, "ctl": ctl, "res": res, "tmp": tmp,
               "reader": sa_token(c, "team-a", "reader"),
               "outsider": sa_token(c, "team-a", "outsider")}
    finally:
        ctl.stop()
        res.stop()


@pytest.mark.parametrize("mode", ["ctl", "res"])
def test_health_is_open(auth, mode):
    port = auth[mode].port
    assert request(port, "/healthz")[0] == 200
    assert request(port, "/readyz")[0] == 200


@pytest.mark.parametrize("mode", ["ctl", "res"])
def test_no_token_is_401(auth, mode):
    status, headers, body = request(auth[mode].port, API)
    assert status == 401
    assert headers.get("www-authenticate") == "Bearer"
    assert json.loads(body) == {"error": "a bearer token is required", "status": 401}
    assert request(auth[mode].port, "/metrics")[0] == 401
    assert request(auth[mode].port, API, token="")[0] == 401


@pytest.mark.parametrize("mode", ["ctl", "res"])
def test_garbage_token_is_401(auth, mode):
    status, headers, body = request(auth[mode].port, API, token="not-a-token-the-server-made")
    assert status == 401, body
    assert headers.get("www-authenticate", "").startswith("Bearer")


def test_path_mode(auth):
    port, reader, outsider = auth["ctl"].port, auth["reader"], auth["outsider"]
    status, headers, body = request(port, API, token=reader)
    assert status == 200, body
    assert headers.get("content-type", "").startswith("application/json")
    json.loads(body)
    assert request(port, "/metrics", token=reader)[0] == 200
    # The grant is per path: the dashboard at / is not in the reader's ClusterRole.
    assert request(port, "/", token=reader)[0] == 403
    for path in ("/metrics", "/allocation", "/"):
        status, _, body = request(port, path, token=outsider)
        assert status == 403, (path, body)
        assert json.loads(body) == {"error": "forbidden", "status": 403}
    # system:discovery lets every authenticated user get /api/*: the pitfall of path mode,
    # which the controller's log names at start.
    assert allowed(auth["cluster"], "system:serviceaccount:team-a:outsider", API)
    assert request(port, API, token=outsider)[0] == 200
    assert any("system:discovery" in r.get("msg", "") for r in auth["ctl"].log_records())
    assert not any("system:discovery" in r.get("msg", "") for r in auth["res"].log_records())
    # Cached now: many requests in a row need no new review and all pass.
    for _ in range(20):
        assert request(port, API, token=reader)[0] == 200


def test_one_tokenreview_per_token(auth):
    """Path mode asks one SubjectAccessReview per path, but the TokenReview's answer is kept
    per token: three new paths for a new token are one TokenReview and three reviews of
    access (counted by kube-apiserver itself)."""
    c, port = auth["cluster"], auth["ctl"].port
    tok = sa_token(c, "team-a", "reader")
    tr0 = c.request_count("tokenreviews", "POST")
    sar0 = c.request_count("subjectaccessreviews", "POST")
    for path in ("/api/v1/costs", "/metrics", "/allocation"):
        assert request(port, path, token=tok)[0] != 401, path
    assert c.request_count("tokenreviews", "POST") - tr0 == 1
    assert c.request_count("subjectaccessreviews", "POST") - sar0 == 3


def test_resource_mode(auth):
    port, reader, outsider = auth["res"].port, auth["reader"], auth["outsider"]
    status, _, body = request(port, API, token=outsider)
    assert status == 403, body
    assert json.loads(body) == {"error": "forbidden", "status": 403}
    assert request(port, "/metrics", token=outsider)[0] == 403
    status, _, body = request(port, API, token=reader)
    assert status == 200, body
    json.loads(body)
    # One question for every path: the reader may read the dashboard and /metrics too.
    assert request(port, "/metrics", token=reader)[0] == 200
    assert request(port, "/", token=reader)[0] == 200


def test_no_token_in_the_log(auth):
    for mode in ("ctl", "res"):
        text = auth[mode].log_path.read_text(errors="replace")
        for who in ("reader", "outsider"):
            assert auth[who] not in text
            assert auth[who][-40:] not in text


def test_over_tls(auth, controller_bin):
    c, tmp = auth["cluster"], auth["tmp"]
    crt, key = tmp / "tls.crt", tmp / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key), "-out", str(crt),
                    "-days", "1", "-subj", "/CN=gpu-cost", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=30)
    ctl = start(controller_bin, c, tmp, "auth-tls",
                ["--tls-cert-file", str(crt), "--tls-key-file", str(key),
                 "--auth-resource", RESOURCE], ca=str(crt))
    try:
        ctl.wait_ready(60)
        port, ca = ctl.port, str(crt)
        assert request(port, "/healthz", ca=ca)[0] == 200
        assert request(port, API, ca=ca)[0] == 401
        assert request(port, API, token=auth["outsider"], ca=ca)[0] == 403
        status, _, body = request(port, API, token=auth["reader"], ca=ca)
        assert status == 200, body
        # Plain HTTP on the TLS port gets no answer from the API.
        try:
            status = request(port, "/healthz", timeout=3)[0]
        except (OSError, http.client.HTTPException):
            status = None
        assert status != 200
        # A client that does not trust the certificate cannot connect.
        with pytest.raises(ssl.SSLError):
            request(port, "/healthz", ca=c.env["E2E_CA"])
    finally:
        ctl.stop()


def test_api_server_unreachable_is_503(auth, controller_bin):
    """The controller reaches kube-apiserver through a forwarder that the test cuts once it is
    ready: every review then fails to connect. Callers get 503 (never 200, never a hang), the
    controller stays up, health stays open."""
    c, tmp = auth["cluster"], auth["tmp"]
    proxy = TcpProxy(int(c.env["E2E_APISERVER_PORT"]))
    cfg = open(c.controller_kubeconfig).read()
    via = tmp / "via-proxy.kubeconfig"
    via.write_text(cfg.replace(c.env["E2E_SERVER"], "https://127.0.0.1:%d" % proxy.port))
    via.chmod(0o600)
    assert "127.0.0.1:%d" % proxy.port in via.read_text()
    ctl = start(controller_bin, c, tmp, "auth-down", ["--auth-resource", RESOURCE],
                kubeconfig=via)
    try:
        ctl.wait_ready(60)
        assert request(ctl.port, API, token=auth["reader"])[0] == 200
        proxy.cut()
        # A question not cached yet (the outsider's) needs the API server: an answer, not a
        # hang (the client gives up after its 10 s timeout).
        status, headers, body = request(ctl.port, API, token=auth["outsider"])
        assert status == 503, body
        assert headers.get("retry-after") == "1"
        assert json.loads(body)["status"] == 503
        # What was allowed a moment ago stays allowed for the cache's TTL.
        assert request(ctl.port, API, token=auth["reader"])[0] == 200
        assert ctl.alive()
        assert request(ctl.port, "/healthz")[0] == 200
        records = [r for r in ctl.log_records() if r.get("msg") == "delegated auth"]
        assert any("answering 503" in r.get("detail", "") for r in records), records
    finally:
        proxy.cut()
        ctl.stop()
