"""deploy/rbac.yaml against the real authorizer: the controller's identity gets exactly what
the shipped roles grant (list and watch pods, nodes and namespaces, ResourceSlices and
ResourceClaims and DeviceClasses, ReplicaSets and Jobs; ConfigMaps and its Lease in
gpu-cost), and the per-team example Role adds ConfigMaps (get, create, update) in that team's
namespace only. No grant of a verb the controller never uses (get on a single pod, node or
namespace; patch or watch on ConfigMaps)."""

import subprocess

import pytest

import harness

GRANTED = [
    ("list", "pods", None), ("watch", "pods", None),
    ("list", "nodes", None), ("watch", "nodes", None), ("list", "namespaces", None),
    ("watch", "namespaces", None),
    ("list", "resourceslices.resource.k8s.io", None),
    ("watch", "resourceslices.resource.k8s.io", None),
    ("list", "resourceclaims.resource.k8s.io", None),
    ("watch", "resourceclaims.resource.k8s.io", None),
    ("list", "deviceclasses.resource.k8s.io", None),
    ("watch", "deviceclasses.resource.k8s.io", None),
    ("list", "replicasets.apps", None), ("watch", "replicasets.apps", None),
    ("list", "jobs.batch", None), ("watch", "jobs.batch", None),
    ("create", "configmaps", "gpu-cost"), ("update", "configmaps", "gpu-cost"),
    ("delete", "configmaps", "gpu-cost"), ("list", "configmaps", "gpu-cost"),
    ("get", "configmaps", "gpu-cost"), ("get", "leases.coordination.k8s.io", "gpu-cost"),
    ("create", "leases.coordination.k8s.io", "gpu-cost"),
    ("update", "leases.coordination.k8s.io", "gpu-cost"),
    ("get", "configmaps", "ml-research"), ("create", "configmaps", "ml-research"),
    ("update", "configmaps", "ml-research"),
]
REFUSED = [
    ("list", "secrets", None), ("get", "secrets", "gpu-cost"), ("delete", "pods", None),
    ("create", "pods", "default"), ("update", "nodes", None), ("patch", "pods", None),
    ("create", "configmaps", "default"), ("delete", "configmaps", "ml-research"),
    ("create", "leases.coordination.k8s.io", "default"),
    ("delete", "leases.coordination.k8s.io", "gpu-cost"),
    # verbs the controller never uses (the chart tests prove it from the audit log)
    ("get", "pods", None), ("get", "nodes", None), ("get", "namespaces", None),
    ("patch", "configmaps", "gpu-cost"), ("watch", "configmaps", "gpu-cost"),
    ("list", "configmaps", "ml-research"), ("patch", "configmaps", "ml-research"),
    ("patch", "leases.coordination.k8s.io", "gpu-cost"),
    ("get", "resourceclaims.resource.k8s.io", "default"),
    ("update", "resourceclaims.resource.k8s.io", "default"),
    ("create", "resourceslices.resource.k8s.io", None),
    ("get", "deviceclasses.resource.k8s.io", None),
    ("get", "replicasets.apps", "default"), ("update", "replicasets.apps", "default"),
    ("get", "jobs.batch", "default"), ("delete", "jobs.batch", "default"),
    ("list", "deployments.apps", None), ("list", "cronjobs.batch", None),
]


@pytest.fixture(scope="module")
def rbac_cluster(module_cluster):
    c = module_cluster
    for ns in ("gpu-cost", "ml-research"):
        c.api.call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    c.apply(harness.RBAC)
    c.apply(harness.HERE / "rbac-team-ml-research.yaml")
    c.wait_controller_can()
    return c


def can_i(c, verb, resource, ns):
    args = [c.env["KUBECTL"], "--kubeconfig", c.controller_kubeconfig, "auth", "can-i", verb,
            resource] + (["-n", ns] if ns else [])
    cp = subprocess.run(args, capture_output=True, text=True, timeout=30)
    return cp.stdout.strip()


@pytest.mark.parametrize("verb,resource,ns", GRANTED)
def test_granted(rbac_cluster, verb, resource, ns):
    assert can_i(rbac_cluster, verb, resource, ns) == "yes"


@pytest.mark.parametrize("verb,resource,ns", REFUSED)
def test_refused(rbac_cluster, verb, resource, ns):
    assert can_i(rbac_cluster, verb, resource, ns) == "no"


def test_identity_is_the_service_account(rbac_cluster):
    c = rbac_cluster
    out = subprocess.run([c.env["KUBECTL"], "--kubeconfig", c.controller_kubeconfig, "auth",
                          "whoami", "-o", "jsonpath={.status.userInfo.username}"],
                         capture_output=True, text=True, timeout=30).stdout
    assert out == "system:serviceaccount:gpu-cost:gpu-cost-controller"
