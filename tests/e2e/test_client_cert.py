"""The controller authenticated by a client certificate against the real kube-apiserver, not a
token: the kubeconfig carries client-certificate-data and client-key-data, or client-certificate
and client-key file names (relative to the kubeconfig, as kubectl reads them). The certificate is
made here with openssl and signed by the cluster's client CA (scripts/e2e-cluster.sh gives it to
kube-apiserver as --client-ca-file): CN gpu-cost-cert, O gpu-cost-controllers, a group that
rbac-client-cert.yaml binds to the shipped ClusterRole and Role of deploy/rbac.yaml.

With it the controller takes the Lease and writes its checkpoint. The same subject signed by a CA
the API server does not know is refused: the controller exits 1 (no crash) with an error line
saying the API server does not accept its client certificate (HTTP 401), and writes nothing; so
does a key that is not the certificate's, with the cause named."""

import base64
import http.client
import json
import ssl
import subprocess
import time
from pathlib import Path

import pytest

import harness

NS = harness.NS
USER, GROUP = "gpu-cost-cert", "gpu-cost-controllers"
CHECKPOINT = "gpu-cost-checkpoint"


def openssl(*args):
    subprocess.run(["openssl"] + [str(a) for a in args], check=True, capture_output=True,
                   timeout=60)


def make_ca(d, name):
    """A self-signed EC CA: (cert, key) paths."""
    crt, key = d / (name + ".crt"), d / (name + ".key")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", key, "-out", crt, "-days", "1", "-subj", "/CN=" + name)
    return crt, key


def make_client(d, name, ca_crt, ca_key, key=None):
    """A client certificate for CN=USER, O=GROUP signed by the CA (with a new key unless key
    is given): (cert, key) paths."""
    key = key or d / (name + ".key")
    if not key.exists():
        openssl("genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                key)
    csr, crt, ext = d / (name + ".csr"), d / (name + ".crt"), d / (name + ".ext")
    ext.write_text("extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n")
    openssl("req", "-new", "-key", key, "-out", csr, "-subj", "/O=%s/CN=%s" % (GROUP, USER))
    openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
            "-out", crt, "-days", "1", "-extfile", ext)
    return crt, key


def b64(path):
    return base64.b64encode(path.read_bytes()).decode()


def kubeconfig(cluster, path, user):
    """A kubeconfig at path for the cluster's server and CA with the given `user:` fields."""
    lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: e2e", "  cluster:",
             "    server: " + cluster.env["E2E_SERVER"],
             "    certificate-authority-data: " + b64(Path(cluster.env["E2E_CA"])),
             "users:", "- name: cert", "  user:"]
    lines += ["    %s: %s" % kv for kv in user.items()]
    lines += ["contexts:", "- name: cert@e2e", "  context: {cluster: e2e, user: cert}",
              "current-context: cert@e2e", ""]
    path.write_text("\n".join(lines))
    path.chmod(0o600)
    return path


def who(cluster, crt, key):
    """(username, groups) kube-apiserver gives the bearer of crt (a SelfSubjectReview)."""
    ctx = ssl.create_default_context(cafile=cluster.env["E2E_CA"])
    ctx.load_cert_chain(str(crt), str(key))
    conn = http.client.HTTPSConnection("127.0.0.1", int(cluster.env["E2E_APISERVER_PORT"]),
                                       context=ctx, timeout=10)
    try:
        conn.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                     json.dumps({"apiVersion": "authentication.k8s.io/v1",
                                 "kind": "SelfSubjectReview"}),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        body = r.read()
    finally:
        conn.close()
    if r.status != 201:
        return r.status, None
    info = json.loads(body)["status"]["userInfo"]
    return info["username"], info.get("groups", [])


def can(cluster, verb, group, resource, ns=None):
    """What kube-apiserver's authorizer says of USER in GROUP doing verb on resource."""
    attrs = {"verb": verb, "group": group, "resource": resource}
    if ns:
        attrs["namespace"] = ns
    doc = cluster.api.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": USER, "groups": [GROUP, "system:authenticated"],
                 "resourceAttributes": attrs}})
    return doc["status"].get("allowed", False)


def wait_for(what, fn, timeout, ctl=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = fn()
        if got:
            return got
        if ctl is not None and not ctl.alive():
            raise AssertionError("controller exited (%s) waiting for %s:\n%s" % (
                ctl.proc.returncode, what, harness.tail(ctl.log_path)))
        time.sleep(0.2)
    raise AssertionError("timed out after %d s waiting for %s%s" % (
        timeout, what, ":\n" + harness.tail(ctl.log_path) if ctl else ""))


@pytest.fixture(scope="module")
def certs(module_cluster, tmp_path_factory):
    c = module_cluster
    d = tmp_path_factory.mktemp("client-cert")
    c.api.call("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    c.apply(harness.RBAC)
    c.apply(harness.HERE / "rbac-client-cert.yaml")
    for verb, group, resource, ns in (("list", "", "pods", None), ("watch", "", "nodes", None),
                                      ("get", "", "configmaps", NS),
                                      ("update", "coordination.k8s.io", "leases", NS)):
        wait_for("the group's grant to %s %s" % (verb, resource),
                 lambda: can(c, verb, group, resource, ns), 20)
    ca = (Path(c.env["E2E_CLIENT_CA"]), Path(c.env["E2E_CLIENT_CA_KEY"]))
    good = make_client(d, "good", *ca)
    rogue = make_client(d, "rogue", *make_ca(d, "rogue-ca"))
    other_key = d / "other.key"
    openssl("genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
            other_key)
    return {"cluster": c, "dir": d, "good": good, "rogue": rogue, "other_key": other_key}


def controller(controller_bin, certs, name, kc):
    return harness.Controller(controller_bin, certs["cluster"], certs["dir"] / (name + ".log"),
                              ident=name, kubeconfig=kc).start()


def checkpoint_rv(cluster):
    status, doc = cluster.api.request("GET", "/api/v1/namespaces/%s/configmaps/%s" % (
        NS, CHECKPOINT))
    return doc["metadata"]["resourceVersion"] if status == 200 else None


def errors(ctl):
    return [r for r in ctl.log_records() if r.get("level") == "error"]


def test_the_certificate_is_who_rbac_binds(certs):
    """The CA setup itself: kube-apiserver takes the certificate's CN as the user and its O as a
    group, and does not take the rogue CA's."""
    c = certs["cluster"]
    user, groups = who(c, *certs["good"])
    assert user == USER and GROUP in groups, (user, groups)
    assert who(c, *certs["rogue"]) == (401, None)


@pytest.mark.parametrize("form", ["data", "files"])
def test_controller_with_a_client_certificate(certs, controller_bin, form):
    """The kubeconfig's only credential is the certificate: the controller becomes ready, takes
    the Lease under its identity and writes a checkpoint, then exits 0 on SIGTERM."""
    c, d = certs["cluster"], certs["dir"]
    crt, key = certs["good"]
    if form == "data":
        kc = kubeconfig(c, d / "cert-data.kubeconfig", {"client-certificate-data": b64(crt),
                                                       "client-key-data": b64(key)})
    else:
        # Relative names are relative to the kubeconfig's directory, as kubectl reads them.
        sub = d / "files"
        sub.mkdir(exist_ok=True)
        (sub / "tls.crt").write_bytes(crt.read_bytes())
        (sub / "tls.key").write_bytes(key.read_bytes())
        (sub / "tls.key").chmod(0o600)
        kc = kubeconfig(c, sub / "kubeconfig", {"client-certificate": "tls.crt",
                                                "client-key": "tls.key"})
    assert "token" not in kc.read_text()
    before = checkpoint_rv(c)
    name = "cert-" + form
    ctl = controller(controller_bin, certs, name, kc)
    try:
        ctl.wait_ready(60)
        wait_for("the Lease held by " + name,
                 lambda: (c.lease() or {}).get("spec", {}).get("holderIdentity") == name, 30,
                 ctl)
        wait_for("a checkpoint written", lambda: checkpoint_rv(c) not in (None, before), 30,
                 ctl)
    finally:
        rc = ctl.stop()
    assert rc == 0, harness.tail(ctl.log_path)
    msgs = [r.get("msg", "") for r in ctl.log_records()]
    assert "became the leader" in msgs
    assert not errors(ctl), errors(ctl)


def refused(controller_bin, certs, name, kc):
    """Runs the controller with kc until it exits; its log records. It must exit 1 (an error it
    reports, not a crash) without taking the Lease or writing a checkpoint."""
    c = certs["cluster"]
    before = checkpoint_rv(c)
    ctl = controller(controller_bin, certs, name, kc)
    try:
        rc = ctl.wait_exit(60)
    finally:
        ctl.stop()
    assert rc == 1, "exit status %s:\n%s" % (rc, harness.tail(ctl.log_path))
    assert (c.lease() or {}).get("spec", {}).get("holderIdentity") != name
    assert checkpoint_rv(c) == before
    records = ctl.log_records()
    assert not any(r.get("msg", "").startswith("standby") for r in records), records
    assert not any(r.get("msg") == "became the leader" for r in records), records
    return records


def test_unknown_ca_is_refused(certs, controller_bin):
    """The same subject signed by a CA kube-apiserver does not trust: a 401, and the controller
    says that its client certificate was refused, where to look, and nothing about RBAC."""
    c, d = certs["cluster"], certs["dir"]
    crt, key = certs["rogue"]
    kc = kubeconfig(c, d / "rogue.kubeconfig", {"client-certificate-data": b64(crt),
                                                "client-key-data": b64(key)})
    records = refused(controller_bin, certs, "cert-rogue", kc)
    errs = [r for r in records if r.get("level") == "error"]
    assert len(errs) == 1, records
    msg = errs[0]["msg"]
    assert "does not accept the controller's credentials (HTTP 401)" in msg, msg
    assert "client certificate" in msg and "--client-ca-file" in msg, msg
    assert "Role" not in msg and "403" not in msg, msg
    # kube-apiserver refused it for the reason the message gives.
    log = (c.dir / "kube-apiserver.log").read_text(errors="replace")
    assert "certificate signed by unknown authority" in log


def test_key_of_another_certificate_is_refused(certs, controller_bin):
    """A key that is not the certificate's: the TLS client cannot use the pair; the error names
    the key instead of blaming the Role."""
    c, d = certs["cluster"], certs["dir"]
    crt, _ = certs["good"]
    kc = kubeconfig(c, d / "mismatch.kubeconfig", {
        "client-certificate-data": b64(crt), "client-key-data": b64(certs["other_key"])})
    records = refused(controller_bin, certs, "cert-mismatch", kc)
    errs = [r for r in records if r.get("level") == "error"]
    assert len(errs) == 1, records
    msg = errs[0]["msg"]
    assert msg.startswith("cannot read the checkpoint ConfigMap: ") and "private key" in msg, msg
    assert "Role" not in msg, msg
