"""The Helm chart without a cluster: lint, the values schema (and that it refuses what the
controller's parser refuses), the rendered security context, RBAC, configuration, checksum and
optional objects, and that deploy/gpu-cost.yaml is the chart's current rendering."""

import hashlib
import json
import re
import subprocess

import pytest
import yaml

from conftest import (CHART, CI_VALUES, GPU_COST, INVALID_VALUES, NAMESPACE, REPO, Rendered, helm,
                      need, render, render_fails, template_args)

EXAMPLES = REPO / "examples"
CHART_META = yaml.safe_load((CHART / "Chart.yaml").read_text())
CHART_VERSION = CHART_META["version"]
APP_VERSION = CHART_META["appVersion"]
WINDOW = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
# Every verb any gpu-cost role may hold; "*" and escalation verbs never.
# (The controller never patches; tests/chart/test_chart_cluster.py proves each granted verb used.)
CONTROLLER_VERBS = {"get", "list", "watch", "create", "update", "delete"}
SCENARIOS = ["default"] + [f.name for f in CI_VALUES]


def controller_role(r):
    """The controller's own ClusterRole (the optional reader example is another)."""
    found = [o for o in r.all("ClusterRole") if not o["metadata"]["name"].endswith("-reader")]
    assert len(found) == 1, [o["metadata"]["name"] for o in r.all("ClusterRole")]
    return found[0]


def rules_set(rules):
    """A role's rules as (apiGroup, resource, verb) triples, the grant they amount to."""
    out = set()
    for r in rules:
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    out.add((g, res, v))
    return out


def rules_normalised(rules):
    """A role's rules with each list sorted, for an exact comparison rule by rule."""
    return sorted(json.dumps({k: sorted(v) if isinstance(v, list) else v for k, v in r.items()},
                             sort_keys=True) for r in rules)


def deploy_rbac():
    docs = [d for d in yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text()) if d]
    return {d["kind"]: d for d in docs}


def run_cli_config(config_text, tmp_path):
    need(GPU_COST, "build it (make build) or set GPU_COST")
    f = tmp_path / "config.json"
    f.write_text(config_text)
    return subprocess.run([str(GPU_COST), "analyze", "--config", str(f),
                           "--pods", str(EXAMPLES / "pods.json"),
                           "--nodes", str(EXAMPLES / "nodes.json"),
                           "--namespaces", str(EXAMPLES / "namespaces.json"),
                           "--window", WINDOW, "--format", "json"],
                          capture_output=True, text=True, timeout=60)


def values_file(tmp_path, values):
    f = tmp_path / "values.yaml"
    f.write_text(yaml.safe_dump(values))
    return f


# ---------------------------------------------------------------------------------------------
# Chart metadata, lint, schema


def test_chart_metadata():
    c = CHART_META
    assert c["apiVersion"] == "v2"
    assert c["name"] == "gpu-cost"
    assert c["kubeVersion"] == ">=1.25.0-0"
    # One version for the chart, the program and the image: make image tags
    # gpu-cost-controller:<CMakeLists.txt's version>, the image the chart names by default.
    version = re.search(r"^project\(gpu-cost VERSION ([0-9.]+) ",
                        (REPO / "CMakeLists.txt").read_text(), re.M).group(1)
    assert c["appVersion"] == version and c["version"] == version == CHART_VERSION
    schema = json.loads((CHART / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["additionalProperties"] is False


def test_ci_scenarios_exist():
    names = {f.name for f in CI_VALUES}
    assert {"auth-values.yaml", "team-reports-values.yaml", "servicemonitor-values.yaml",
            "onprem-prices-values.yaml"} <= names


@pytest.mark.parametrize("values", [None] + CI_VALUES, ids=lambda v: v.name if v else "default")
def test_lint_strict(values):
    args = ["lint", "--strict", str(CHART), "--namespace", NAMESPACE]
    if values:
        args += ["-f", str(values)]
    cp = helm(*args)
    assert "0 chart(s) failed" in cp.stdout
    assert "[WARNING]" not in cp.stdout and "[ERROR]" not in cp.stdout


@pytest.mark.parametrize("values", INVALID_VALUES, ids=lambda v: v.name)
def test_invalid_values_refused(values):
    head = values.read_text().splitlines()
    expect = head[0].removeprefix("# expect: ")
    err = render_fails([values])
    assert expect in err, err
    if not any(line.startswith("# stage: template") for line in head):
        # A schema error fails `helm lint` as well (a template's fail() is only INFO there).
        cp = helm("lint", "--strict", str(CHART), "-f", str(values), check=False)
        assert cp.returncode != 0 and expect in cp.stdout + cp.stderr, cp.stdout + cp.stderr


def test_schema_covers_every_value():
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def walk(v, s, path):
        if not isinstance(v, dict) or s.get("additionalProperties") is not False:
            return
        for k, sub in v.items():
            assert k in s.get("properties", {}), "%s%s has no schema" % (path, k)
            walk(sub, s["properties"][k], path + k + ".")

    walk(values, schema, "")


def test_every_value_documented():
    """Each key in values.yaml has a "# --" comment, or an ancestor has one (a Kubernetes
    object such as resources is documented as a whole), or it is a section of documented keys."""
    lines = (CHART / "values.yaml").read_text().splitlines()
    keys = []  # (indent, name, documented, line number)
    for i, line in enumerate(lines):
        m = re.match(r"^( *)([A-Za-z0-9_.\-/]+):( |$)", line)
        if not m:
            continue
        j, doc = i - 1, False
        while j >= 0 and lines[j].lstrip().startswith("#"):
            doc = doc or lines[j].lstrip().startswith("# --")
            j -= 1
        keys.append((len(m.group(1)), m.group(2), doc, i + 1))
    bad = []
    for n, (indent, name, doc, lineno) in enumerate(keys):
        children = []
        for ind2, _, _, _ in keys[n + 1:]:
            if ind2 <= indent:
                break
            children.append(ind2)
        ancestors_doc = False
        cur = indent
        for ind0, _, doc0, _ in reversed(keys[:n]):
            if ind0 < cur:
                ancestors_doc = ancestors_doc or doc0
                cur = ind0
        if not doc and not ancestors_doc and not children:
            bad.append("values.yaml:%d %s" % (lineno, name))
    assert not bad, "undocumented values: " + ", ".join(bad)


def documented_values():
    """Dotted paths of the values.yaml keys that carry a "# --" comment."""
    lines = (CHART / "values.yaml").read_text().splitlines()
    stack, out = [], []
    for i, line in enumerate(lines):
        m = re.match(r"^( *)([A-Za-z0-9_.\-/]+):( |$)", line)
        if not m:
            continue
        while stack and stack[-1][0] >= len(m.group(1)):
            stack.pop()
        stack.append((len(m.group(1)), m.group(2)))
        j = i - 1
        while j >= 0 and lines[j].lstrip().startswith("#"):
            if lines[j].lstrip().startswith("# --"):
                out.append(".".join(k for _, k in stack))
                break
            j -= 1
    return out


def test_docs_name_every_value():
    doc = (REPO / "docs" / "helm.md").read_text()
    paths = documented_values()
    assert len(paths) > 50
    missing = [p for p in paths if "`%s`" % p not in doc]
    assert not missing, "docs/helm.md does not describe: " + ", ".join(missing)


# ---------------------------------------------------------------------------------------------
# The Deployment


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_security_context(scenarios, scenario):
    r = scenarios[scenario]
    pod = r.deployment()["spec"]["template"]["spec"]
    psc = pod["securityContext"]
    assert psc["runAsNonRoot"] is True and psc["runAsUser"] == 65532
    assert psc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["automountServiceAccountToken"] is True
    assert pod.get("hostNetwork") is not True and pod.get("hostPID") is not True
    assert len(pod["containers"]) == 1 and "initContainers" not in pod
    sc = r.container()["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 65532
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["privileged"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_container(scenarios, scenario):
    r = scenarios[scenario]
    c = r.container()
    assert c["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                          {"name": "probes", "containerPort": 8081, "protocol": "TCP"}]
    # The probes go to the probe port, plain HTTP even with TLS: test_probe_port.
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "probes"}
    assert c["resources"]["requests"] == {"cpu": "50m", "memory": "32Mi"}
    assert c["resources"]["limits"] == {"memory": "64Mi"}
    args = c["args"]
    assert "--config=/etc/gpu-cost/config.json" in args
    assert "--listen=0.0.0.0:8080" in args
    for flag in ("--checkpoint-interval=", "--report-interval=", "--log-level=", "--fold-after="):
        assert sum(a.startswith(flag) for a in args) == 1, flag
    env = {e["name"]: e for e in c["env"]}
    assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["GPU_COST_NAMESPACE"]["valueFrom"] == {
        "fieldRef": {"fieldPath": "metadata.namespace"}}
    assert c["volumeMounts"][0] == {"name": "config", "mountPath": "/etc/gpu-cost",
                                    "readOnly": True}
    vols = r.deployment()["spec"]["template"]["spec"]["volumes"]
    assert vols[0] == {"name": "config", "configMap": {"name": "gpu-cost-config"}}
    if scenario != "auth-values.yaml":
        assert len(c["volumeMounts"]) == 1 and len(vols) == 1
    assert "config.json" in r.one("ConfigMap", "gpu-cost-config")["data"]


def test_default_args_and_replicas(default_render):
    d = default_render.deployment()
    assert d["spec"]["replicas"] == 2
    assert default_render.container()["args"] == [
        "--config=/etc/gpu-cost/config.json", "--listen=0.0.0.0:8080",
        "--probe-listen=0.0.0.0:8081", "--checkpoint-interval=60s", "--report-interval=5m", "--fold-after=6h",
        "--log-level=info", "--lease-name=gpu-cost-controller", "--lease-duration=15s"]
    # A standby is never ready: a rollout must not wait for new ready pods before stopping the
    # old leader.
    assert d["spec"]["strategy"] == {"type": "RollingUpdate",
                                     "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "100%"}}
    anti = d["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    assert anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"][
        "topologyKey"] == "kubernetes.io/hostname"


def test_single_replica_without_leader_election(scenarios):
    r = scenarios["onprem-prices-values.yaml"]
    d = r.deployment()
    assert d["spec"]["replicas"] == 1
    assert d["spec"]["strategy"] == {"type": "Recreate"}
    args = r.container()["args"]
    assert "--no-leader-election" in args and "--log-level=debug" in args
    assert not any(a.startswith("--lease-") for a in args)
    assert "affinity" not in d["spec"]["template"]["spec"]
    # No Lease, so no grant on Leases either.
    assert all(t[1] != "leases" for t in rules_set(r.one("Role")["rules"]))


def test_extra_args_and_image(tmp_path):
    r = render(sets=["extraArgs[0]=--fold-after=12h", "image.repository=registry.example/gc",
                     "image.tag=0.1.0-rc1"])
    assert r.container()["args"][-1] == "--fold-after=12h"
    assert r.container()["image"] == "registry.example/gc:0.1.0-rc1"
    digest = "sha256:" + "ab" * 32
    r = render(sets=["image.digest=" + digest])
    assert r.container()["image"] == "gpu-cost-controller@" + digest


def test_labels_and_selector(scenarios):
    for name, r in scenarios.items():
        for o in r.objects:
            labels = o["metadata"]["labels"]
            assert labels["app.kubernetes.io/name"] == "gpu-cost", (name, o["kind"])
            assert labels["app.kubernetes.io/instance"] == "gpu-cost"
            assert labels["app.kubernetes.io/managed-by"] == "Helm"
            assert labels["helm.sh/chart"] == "gpu-cost-" + CHART_VERSION
            # The controller deletes report ConfigMaps by this label: never on the chart's.
            assert "gpu-cost.io/kind" not in labels
        d = r.deployment()
        sel = d["spec"]["selector"]["matchLabels"]
        assert sel == {"app.kubernetes.io/name": "gpu-cost",
                       "app.kubernetes.io/instance": "gpu-cost",
                       "app.kubernetes.io/component": "controller"}
        pod_labels = d["spec"]["template"]["metadata"]["labels"]
        assert sel.items() <= pod_labels.items()
        assert r.one("Service")["spec"]["selector"] == sel


def test_service(default_render):
    s = default_render.one("Service")
    assert s["metadata"]["name"] == "gpu-cost"
    assert s["spec"]["type"] == "ClusterIP"
    assert s["spec"]["ports"] == [{"name": "http", "port": 8080, "targetPort": "http",
                                   "protocol": "TCP"}]


# ---------------------------------------------------------------------------------------------
# RBAC


def test_rbac_matches_deploy_rbac(default_render):
    """The chart's roles grant exactly what deploy/rbac.yaml grants (which the e2e tests prove
    sufficient and minimal), so the two cannot drift apart."""
    want = deploy_rbac()
    for kind in ("ClusterRole", "Role"):
        got = default_render.one(kind)
        assert rules_normalised(got["rules"]) == rules_normalised(want[kind]["rules"]), kind
        assert rules_set(got["rules"]) == rules_set(want[kind]["rules"]), kind
        assert got["metadata"]["name"] == want[kind]["metadata"]["name"]
    # The same identity as deploy/rbac.yaml for the release "gpu-cost" in "gpu-cost".
    sa = default_render.one("ServiceAccount")
    assert (sa["metadata"]["name"], sa["metadata"]["namespace"]) == (
        want["ServiceAccount"]["metadata"]["name"], want["ServiceAccount"]["metadata"]["namespace"])
    for kind, role in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        b = default_render.one(kind)
        assert b["roleRef"] == want[kind]["roleRef"]
        assert b["subjects"] == want[kind]["subjects"]
        assert b["roleRef"]["kind"] == role


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_wildcards_or_extra_verbs(scenarios, scenario):
    r = scenarios[scenario]
    for o in [controller_role(r)] + r.all("Role"):
        for rule in o["rules"]:
            for field in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule.get(field, []), (o["metadata"]["name"], rule)
            assert set(rule["verbs"]) <= CONTROLLER_VERBS, rule
            assert "secrets" not in rule["resources"]
            assert "resourceNames" not in rule and "nonResourceURLs" not in rule
    # Writes only in the release namespace and the team namespaces, never cluster-wide.
    cluster = rules_set(controller_role(r)["rules"])
    writes = {t for t in cluster if t[2] not in ("get", "list", "watch")}
    assert writes <= {("authentication.k8s.io", "tokenreviews", "create"),
                      ("authorization.k8s.io", "subjectaccessreviews", "create")}


def test_auth_rbac_only_when_enabled(scenarios):
    base = rules_set(scenarios["default"].one("ClusterRole")["rules"])
    auth = rules_set(controller_role(scenarios["auth-values.yaml"])["rules"])
    assert not any(t[1] in ("tokenreviews", "subjectaccessreviews") for t in base)
    assert auth - base == {("authentication.k8s.io", "tokenreviews", "create"),
                           ("authorization.k8s.io", "subjectaccessreviews", "create")}
    assert base <= auth
    for name, r in scenarios.items():
        if name != "auth-values.yaml":
            assert rules_set(r.one("ClusterRole")["rules"]) == base, name


def test_auth_and_tls_args(scenarios):
    """auth.enabled renders the flags; tls.secretName mounts the Secret and probes over HTTPS;
    neither touches the default Deployment."""
    r = scenarios["auth-values.yaml"]
    c = r.container()
    assert "--auth-delegate" in c["args"] and "--auth-cache-ttl=30s" in c["args"]
    assert not any(a.startswith("--auth-resource") for a in c["args"])
    assert "--tls-cert-file=/etc/gpu-cost/tls/tls.crt" in c["args"]
    assert "--tls-key-file=/etc/gpu-cost/tls/tls.key" in c["args"]
    assert {"name": "tls", "mountPath": "/etc/gpu-cost/tls", "readOnly": True} in \
        c["volumeMounts"]
    vols = r.deployment()["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": "gpu-cost-tls"}} in vols
    # The probes keep plain HTTP on the probe port (test_probe_port has them over HTTPS on
    # port http when probePort is 0).
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        assert c[probe]["httpGet"] == {"path": path, "port": "probes"}
    for name, other in scenarios.items():
        if name == "auth-values.yaml":
            continue
        args = other.container()["args"]
        assert not any(a.startswith(("--auth", "--tls")) for a in args), name
        assert "scheme" not in other.container()["livenessProbe"]["httpGet"], name


def test_servicemonitor_with_auth_and_tls(scenarios):
    sm = scenarios["auth-values.yaml"].one("ServiceMonitor")
    (ep,) = sm["spec"]["endpoints"]
    assert ep["scheme"] == "https"
    assert ep["tlsConfig"] == {"serverName": "gpu-cost.gpu-cost.svc",
                               "ca": {"secret": {"name": "gpu-cost-tls", "key": "ca.crt"}}}
    assert ep["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"


def test_auth_resource_attributes(tmp_path):
    args = render([values_file(tmp_path, {"auth": {
        "enabled": True,
        "resourceAttributes": "namespace=gpu-cost,resource=services,subresource=proxy,"
                              "name=gpu-cost"}})]).container()["args"]
    assert ("--auth-resource=namespace=gpu-cost,resource=services,subresource=proxy,"
            "name=gpu-cost") in args


def test_reader_clusterrole_only_when_asked(scenarios):
    """The example reader role: get on the controller's non-resource URLs, no binding, only
    with auth.enabled and auth.readerClusterRole.create."""
    r = scenarios["auth-values.yaml"]
    reader = r.one("ClusterRole", "gpu-cost-reader")
    assert reader["rules"] == [{"nonResourceURLs": ["/api/*", "/metrics", "/allocation", "/"],
                                "verbs": ["get"]}]
    assert all(b["roleRef"]["name"] != "gpu-cost-reader" for b in r.all("ClusterRoleBinding"))
    for name, other in scenarios.items():
        if name != "auth-values.yaml":
            assert [o for o in other.all("ClusterRole")
                    if o["metadata"]["name"].endswith("-reader")] == [], name


def test_team_roles_only_when_configured(scenarios):
    for name, r in scenarios.items():
        roles = [o for o in r.all("Role") + r.all("RoleBinding")
                 if o["metadata"]["namespace"] != NAMESPACE]
        if name != "team-reports-values.yaml":
            assert roles == [], name
    r = scenarios["team-reports-values.yaml"]
    example = [d for d in yaml.safe_load_all(
        (REPO / "tests" / "e2e" / "rbac-team-ml-research.yaml").read_text()) if d]
    example_role = [d for d in example if d["kind"] == "Role"][0]
    teams = {o["metadata"]["namespace"]: o for o in r.all("Role")
             if o["metadata"]["namespace"] != NAMESPACE}
    assert sorted(teams) == ["ml-research", "nlp"]
    for ns, role in teams.items():
        assert role["metadata"]["name"] == "gpu-cost-report-writer"
        # exactly the grant of the example the e2e tests use
        assert rules_normalised(role["rules"]) == rules_normalised(example_role["rules"])
        assert rules_set(role["rules"]) == {("", "configmaps", v)
                                            for v in ("get", "create", "update")}
        binding = [b for b in r.all("RoleBinding") if b["metadata"]["namespace"] == ns][0]
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": "gpu-cost-report-writer"}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gpu-cost-controller",
                                        "namespace": NAMESPACE}]


def test_rbac_and_service_account_can_be_left_out():
    r = render(sets=["rbac.create=false", "serviceAccount.create=false",
                     "serviceAccount.name=existing"])
    assert not r.all("ClusterRole") and not r.all("Role") and not r.all("ServiceAccount")
    assert r.deployment()["spec"]["template"]["spec"]["serviceAccountName"] == "existing"
    err = render_fails(sets=["serviceAccount.create=false"])
    assert "serviceAccount.name is required" in err


# ---------------------------------------------------------------------------------------------
# The configuration


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_config_accepted_by_the_cli(scenarios, scenario, tmp_path):
    text = scenarios[scenario].one("ConfigMap", "gpu-cost-config")["data"]["config.json"]
    json.loads(text)
    cp = run_cli_config(text, tmp_path)
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["total"]["pods"] > 0


def test_config_is_the_values(scenarios):
    want = yaml.safe_load((CHART / "ci" / "onprem-prices-values.yaml").read_text())["config"]
    got = scenarios["onprem-prices-values.yaml"].config()
    # Every section given is rendered as given (maps merge with the defaults, lists replace).
    for key in ("cluster", "resources", "node_rules", "prices", "tco", "default_capacity_type"):
        assert got[key] == want[key], key
    assert got["attribution"] == want["attribution"]
    assert got["report"] == dict(want["report"], team_namespaces={})
    assert got["instance_types"] == want["instance_types"]


def test_default_config_is_the_documented_default(default_render):
    got = default_render.config()
    assert "prices" not in got and "tco" not in got  # built-in catalog, no cost model
    assert got["cluster"] == "default"
    assert got["attribution"]["team_label_keys"] == ["team", "app.kubernetes.io/team",
                                                     "gpu-cost.io/team"]
    assert got["attribution"]["project_label_keys"] == [
        "project", "app.kubernetes.io/project", "gpu-cost.io/project", "cost-center"]
    assert got["report"] == {"top_n": 10, "utc_offset": "+00:00", "daily_retention_days": 35,
                             "weekly_retention_weeks": 12, "monthly_retention_months": 12,
                             "team_namespaces": {}}


# Configurations the controller's parser refuses must fail at `helm install` already (schema),
# and those it accepts must pass: (name, config values, field the parser names or None).
AGREEMENT = [
    ("cluster name", {"cluster": "prod-eu"}, None),
    ("offset Z", {"report": {"utc_offset": "Z"}}, None),
    ("offset west", {"report": {"utc_offset": "-05:00"}}, None),
    ("offset +14", {"report": {"utc_offset": "+14:00"}}, None),
    ("gpu kind, no share", {"resources": [{"name": "example.com/gpu", "kind": "gpu"}]}, None),
    ("fractional share", {"resources": [{"name": "nvidia.com/gpucores", "gpus_per_unit": 0.01}]},
     None),
    ("prefix resource", {"resources": [{"name": "amd.com/*", "kind": "fixed",
                                        "gpus_per_unit": 1}]}, None),
    ("rule on presence", {"node_rules": [{"match": {"gpu-cost.io/pool": "*"},
                                          "capacity_type": "reserved"}]}, None),
    ("catalog with notes", {"prices": {"currency": "usd", "prices": [
        {"model": "NVIDIA-H100*", "capacity_type": "spot", "usd_per_gpu_hour": 3.1,
         "note": "kept for people"}]}}, None),
    ("prefixed label key", {"attribution": {"team_label_keys": ["example.com/team"]}}, None),
    ("longest retention", {"report": {"daily_retention_days": 3660,
                                      "weekly_retention_weeks": 520}}, None),
    ("empty cluster", {"cluster": ""}, "cluster"),
    ("long cluster", {"cluster": "c" * 64}, "cluster"),
    ("top_n too big", {"report": {"top_n": 1001}}, "report.top_n"),
    ("offset +15", {"report": {"utc_offset": "+15:00"}}, "report.utc_offset"),
    ("offset :60", {"report": {"utc_offset": "+05:60"}}, "report.utc_offset"),
    ("retention 0", {"report": {"daily_retention_days": 0}}, "report.daily_retention_days"),
    ("weeks 521", {"report": {"weekly_retention_weeks": 521}}, "report.weekly_retention_weeks"),
    ("unknown kind", {"resources": [{"name": "amd.com/gpu", "kind": "vgpu",
                                     "gpus_per_unit": 1}]}, "resources[0].kind"),
    ("name without vendor", {"resources": [{"name": "gpu", "gpus_per_unit": 1}]},
     "resources[0].name"),
    ("share too big", {"resources": [{"name": "amd.com/gpu", "gpus_per_unit": 2e6}]},
     "resources[0].gpus_per_unit"),
    ("empty match", {"node_rules": [{"match": {}, "capacity_type": "reserved"}]},
     "node_rules[0].match"),
    ("rule price too big", {"node_rules": [{"match": {"a": "b"}, "usd_per_gpu_hour": 1e7}]},
     "node_rules[0].usd_per_gpu_hour"),
    ("label key space", {"attribution": {"project_label_keys": ["cost center"]}},
     "attribution.project_label_keys[0]"),
    ("33 label keys", {"attribution": {"team_label_keys": ["k%d" % i for i in range(33)]}},
     "attribution.team_label_keys"),
    ("team not a string", {"attribution": {"namespace_teams": {"ns": 5}}},
     "attribution.namespace_teams"),
    ("empty capacity type", {"default_capacity_type": ""}, "default_capacity_type"),
    ("currency EURO", {"prices": {"currency": "EURO", "prices": [
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": 1}]}}, "prices.currency"),
    ("no prices", {"prices": {"currency": "EUR", "prices": []}}, "prices.prices"),
    ("star inside model", {"prices": {"currency": "EUR", "prices": [
        {"model": "NV*IDIA", "capacity_type": "*", "usd_per_gpu_hour": 1}]}},
     "prices.prices[0].model"),
    ("capacity upper case", {"prices": {"currency": "EUR", "prices": [
        {"model": "*", "capacity_type": "On-Demand", "usd_per_gpu_hour": 1}]}},
     "prices.prices[0].capacity_type"),
    ("catalog price negative", {"prices": {"currency": "EUR", "prices": [
        {"model": "*", "capacity_type": "*", "usd_per_gpu_hour": -1}]}},
     "prices.prices[0].usd_per_gpu_hour"),
]
TCO = {"node_price": 425000, "gpus_per_node": 8, "years": 3, "utilization": 0.8,
       "cluster_gpus": 64, "ftes": 1.5, "fte_cost": 250000, "kw_per_gpu": 0.56, "pue": 1.3,
       "usd_per_kwh": 0.1, "network_per_gpu_hour": 0.1}
AGREEMENT += [
    ("tco", {"tco": TCO}, None),
    ("utilization 1.5", {"tco": dict(TCO, utilization=1.5)}, "tco.utilization"),
    ("utilization 0", {"tco": dict(TCO, utilization=0)}, "tco.utilization"),
    ("pue below 1", {"tco": dict(TCO, pue=0.9)}, "tco.pue"),
    ("no years", {"tco": dict(TCO, years=0)}, "tco.years"),
    ("tco without ftes", {"tco": {k: v for k, v in TCO.items() if k != "ftes"}}, "tco.ftes"),
    ("tco typo", {"tco": dict(TCO, fte_costs=1)}, "tco.fte_costs"),
]

DCGM_ON = {"enabled": True}
PROM_ON = {"enabled": True, "url": "http://prometheus.monitoring:9090"}
AGREEMENT += [
    ("dcgm on, defaults", {"usage": {"dcgm": DCGM_ON}}, None),
    ("dcgm elsewhere", {"usage": {"dcgm": dict(DCGM_ON, namespace="monitoring", port=19400,
                                               label_selector="app.kubernetes.io/name=dcgm,"
                                               "tier!=test", scheme="https")}}, None),
    ("prometheus on", {"usage": {"prometheus": dict(PROM_ON, bearer_token_file="/var/run/t")}},
     None),
    ("both, 90 days at 15m", {"usage": {"dcgm": DCGM_ON, "prometheus": dict(
        PROM_ON, lookback_days=90, step_seconds=900), "retention_days": 366}}, None),
    ("advisor thresholds", {"advisor": {"idle_activity": 0.1, "idle_minutes": 60,
                                        "min_samples": 10, "cheaper_classes": [
                                            {"from": "NVIDIA-H100*", "to": "NVIDIA-L4",
                                             "max_tensor_activity": 0.2}]}}, None),
    ("dcgm via a Service", {"usage": {"dcgm": dict(DCGM_ON, service="nvidia-dcgm-exporter")}},
     None),
    ("service upper case", {"usage": {"dcgm": dict(DCGM_ON, service="DCGM")}},
     "usage.dcgm.service"),
    ("dcgm port 0", {"usage": {"dcgm": dict(DCGM_ON, port=0)}}, "usage.dcgm.port"),
    ("dcgm scheme ftp", {"usage": {"dcgm": dict(DCGM_ON, scheme="ftp")}}, "usage.dcgm.scheme"),
    ("dcgm path relative", {"usage": {"dcgm": dict(DCGM_ON, path="metrics")}},
     "usage.dcgm.path"),
    ("dcgm selector set-based", {"usage": {"dcgm": dict(DCGM_ON, label_selector="app in (a)")}},
     "usage.dcgm.label_selector"),
    ("dcgm typo", {"usage": {"dcgm": dict(DCGM_ON, intervall_seconds=5)}},
     "usage.dcgm.intervall_seconds"),
    ("prometheus /api/v1", {"usage": {"prometheus": dict(PROM_ON, url="http://p:9090/api/v1")}},
     "usage.prometheus.url"),
    ("prometheus trailing /", {"usage": {"prometheus": dict(PROM_ON, url="http://p:9090/")}},
     "usage.prometheus.url"),
    ("lookback 91", {"usage": {"prometheus": dict(PROM_ON, lookback_days=91)}},
     "usage.prometheus.lookback_days"),
    ("retention 0", {"usage": {"retention_days": 0}}, "usage.retention_days"),
    ("usage typo", {"usage": {"dcgm_exporter": {}}}, "usage.dcgm_exporter"),
    ("idle over 1", {"advisor": {"idle_activity": 1.5}}, "advisor.idle_activity"),
    ("samples fractional", {"advisor": {"min_samples": 2.5}}, "advisor.min_samples"),
    ("class without tensor", {"advisor": {"cheaper_classes": [{"from": "A*", "to": "B"}]}},
     "advisor.cheaper_classes[0].max_tensor_activity"),
    ("advisor typo", {"advisor": {"idle_minute": 30}}, "advisor.idle_minute"),
    ("chargeback proportional", {"chargeback": {"mode": "proportional"}}, None),
    ("chargeback weights", {"chargeback": {"mode": "weights", "weights": {"ml": 2, "web": 0.5}}},
     None),
    ("chargeback mode even", {"chargeback": {"mode": "even"}}, "chargeback.mode"),
    ("chargeback weights empty", {"chargeback": {"mode": "weights"}}, "chargeback.weights"),
    ("chargeback weight 0", {"chargeback": {"weights": {"ml": 0}}}, "chargeback.weights.ml"),
    ("chargeback typo", {"chargeback": {"share": "none"}}, "chargeback.share"),
]


BUDGET = {"scope": "team", "name": "ml", "period": "monthly", "amount": 100}
AGREEMENT += [
    ("zone", {"report": {"timezone": "Europe/Berlin"}}, None),
    ("zone at :45", {"report": {"timezone": "Asia/Kathmandu", "monthly_retention_months": 120}},
     None),
    ("zone with ..", {"report": {"timezone": "../etc/passwd"}}, "report.timezone"),
    ("months 121", {"report": {"monthly_retention_months": 121}},
     "report.monthly_retention_months"),
    ("budgets", {"budgets": {"warn_share": 0.9, "events": True,
                             "items": [BUDGET, dict(BUDGET, scope="namespace", period="weekly")]}},
     None),
    ("budget scope", {"budgets": {"items": [dict(BUDGET, scope="cluster")]}},
     "budgets.items[0].scope"),
    ("budget amount", {"budgets": {"items": [dict(BUDGET, amount=-1)]}},
     "budgets.items[0].amount"),
    ("budget period", {"budgets": {"items": [dict(BUDGET, period="yearly")]}},
     "budgets.items[0].period"),
    ("budget field", {"budgets": {"items": [dict(BUDGET, currency="EUR")]}},
     "budgets.items[0].currency"),
    ("warn share", {"budgets": {"warn_share": 1.5}}, "budgets.warn_share"),
]


@pytest.mark.parametrize("name,config,field", AGREEMENT, ids=[a[0] for a in AGREEMENT])
def test_schema_and_parser_agree(name, config, field, tmp_path):
    f = values_file(tmp_path, {"config": config})
    if field is None:
        r = render([f])
        cp = run_cli_config(r.one("ConfigMap", "gpu-cost-config")["data"]["config.json"],
                            tmp_path)
        assert cp.returncode == 0, cp.stderr
        return
    render_fails([f])
    # Past the schema, the controller's own parser refuses it too, naming the field.
    r = render([f], extra=["--skip-schema-validation"])
    cp = run_cli_config(r.one("ConfigMap", "gpu-cost-config")["data"]["config.json"], tmp_path)
    assert cp.returncode == 2, cp.stderr
    assert field in cp.stderr, cp.stderr


def checksum(r):
    return r.deployment()["spec"]["template"]["metadata"]["annotations"]["checksum/config"]


def test_checksum_follows_the_config(default_render):
    base = checksum(default_render)
    assert re.fullmatch(r"[0-9a-f]{64}", base)
    assert checksum(render()) == base  # deterministic
    assert checksum(render(sets=["logLevel=debug", "replicas=3"])) == base  # not config
    changed = {checksum(render(sets=[s])) for s in (
        "config.cluster=prod", "config.report.top_n=20",
        "config.attribution.namespace_teams.batch=platform")}
    assert base not in changed and len(changed) == 3
    cm = default_render.one("ConfigMap", "gpu-cost-config")["data"]["config.json"]
    assert hashlib.sha256(cm.rstrip("\n").encode()).hexdigest() == base


# ---------------------------------------------------------------------------------------------
# Optional objects


def test_optional_objects_off_by_default(default_render):
    assert default_render.kinds() == sorted([
        "ServiceAccount", "ConfigMap", "ClusterRole", "ClusterRoleBinding", "Role",
        "RoleBinding", "Service", "Deployment"])


def test_usage_rendering_and_egress():
    """A source is null in the file until its "enabled"; dcgm on opens egress to its port."""
    got = render().config()
    assert got["usage"] == {"dcgm": None, "prometheus": None, "retention_days": 30}
    assert got["advisor"] == {}
    r = render(sets=["config.usage.dcgm.enabled=true", "config.usage.prometheus.enabled=true",
                     "networkPolicy.enabled=true", "config.usage.dcgm.port=19400"])
    u = r.config()["usage"]
    assert u["dcgm"]["port"] == 19400 and "enabled" not in u["dcgm"]
    assert u["prometheus"]["url"].startswith("http") and "enabled" not in u["prometheus"]
    assert "bearer_token_file" not in u["prometheus"]  # empty: none
    egress = r.one("NetworkPolicy")["spec"]["egress"]
    assert {"ports": [{"port": 19400, "protocol": "TCP"}], "to": [{"namespaceSelector": {
        "matchLabels": {"kubernetes.io/metadata.name": "gpu-operator"}}}]} in egress
    # No grant beyond deploy/rbac.yaml's: listing pods cluster-wide already covers it.
    assert rules_set(r.one("ClusterRole")["rules"]) == rules_set(render().one(
        "ClusterRole")["rules"])
    off = render(sets=["networkPolicy.enabled=true"]).one("NetworkPolicy")["spec"]["egress"]
    assert len(off) == 2
    assert "service" not in u["dcgm"]  # empty: the label selector
    # Through a Service's Endpoints: get on endpoints in that namespace, nothing else.
    r = render(sets=["config.usage.dcgm.enabled=true", "config.usage.dcgm.namespace=dcgm",
                     "config.usage.dcgm.service=nvidia-dcgm-exporter"])
    assert r.config()["usage"]["dcgm"]["service"] == "nvidia-dcgm-exporter"
    role = [o for o in r.all("Role") if o["metadata"]["namespace"] == "dcgm"]
    assert len(role) == 1 and rules_set(role[0]["rules"]) == {("", "endpoints", "get")}
    b = [o for o in r.all("RoleBinding") if o["metadata"]["namespace"] == "dcgm"][0]
    assert b["roleRef"]["name"] == role[0]["metadata"]["name"]
    assert b["subjects"] == [{"kind": "ServiceAccount", "name": "gpu-cost-controller",
                              "namespace": NAMESPACE}]
    assert not [o for o in render(sets=["config.usage.dcgm.service=x"]).all("Role")
                if o["metadata"]["namespace"] != NAMESPACE]  # dcgm off: no grant


def test_servicemonitor_pdb_networkpolicy_dashboard(scenarios):
    r = scenarios["servicemonitor-values.yaml"]
    sm = r.one("ServiceMonitor")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    # /metrics on the probe port (test_servicemonitor_scrape_port), plain HTTP.
    assert sm["spec"]["endpoints"] == [{"port": "probes", "path": "/metrics", "interval": "30s",
                                        "scrapeTimeout": "10s", "honorLabels": False}]
    assert sm["spec"]["selector"]["matchLabels"] == r.deployment()["spec"]["selector"][
        "matchLabels"]
    assert r.one("Service")["spec"]["ports"] == [
        {"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"},
        {"name": "probes", "port": 8081, "targetPort": "probes", "protocol": "TCP"}]

    pdb = r.one("PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"

    np_ = r.one("NetworkPolicy")["spec"]
    assert np_["policyTypes"] == ["Ingress", "Egress"]
    # The monitoring namespace reaches the scrape on the probe port too.
    assert np_["ingress"] == [{"ports": [{"port": "http", "protocol": "TCP"},
                                         {"port": "probes", "protocol": "TCP"}], "from": [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]}]
    api, dns = np_["egress"]
    assert api == {"ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}],
                   "to": [{"ipBlock": {"cidr": "10.0.0.1/32"}}]}
    assert sorted((p["port"], p["protocol"]) for p in dns["ports"]) == [(53, "TCP"), (53, "UDP")]

    cm = r.one("ConfigMap", "gpu-cost-dashboard")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "FinOps"}
    dash = json.loads(cm["data"]["gpu-cost.json"])
    assert dash["uid"] == "gpu-cost" and dash["panels"]
    for p in dash["panels"]:
        for t in p["targets"]:
            assert re.search(r"\b(gpu_cost_[a-z_]+|node_gpu_hourly_cost)\b", t["expr"]), t


def test_pdb_needs_two_replicas():
    assert not render(sets=["podDisruptionBudget.enabled=true", "replicas=1"]).all(
        "PodDisruptionBudget")
    r = render(sets=["podDisruptionBudget.enabled=true"], extra=["--kube-version", "1.26.0"])
    assert "unhealthyPodEvictionPolicy" not in r.one("PodDisruptionBudget")["spec"]


def test_networkpolicy_defaults():
    np_ = render(sets=["networkPolicy.enabled=true"]).one("NetworkPolicy")["spec"]
    # any source, but only the HTTP port; the API server on any address, only its ports
    assert np_["ingress"] == [{"ports": [{"port": "http", "protocol": "TCP"}]}]
    assert "to" not in np_["egress"][0]
    assert np_["egress"][1]["to"][0]["podSelector"]["matchLabels"] == {"k8s-app": "kube-dns"}


def test_kube_version_floor():
    err = render_fails(extra=["--kube-version", "1.24.0"])
    assert "kubeVersion" in err or ">=1.25.0-0" in err


def test_names_follow_the_release():
    r = render(release="finops", namespace="cost")
    assert r.deployment()["metadata"]["name"] == "finops-gpu-cost-controller"
    assert r.one("ClusterRole")["metadata"]["name"] == "finops-gpu-cost-controller"
    assert r.one("ClusterRoleBinding")["subjects"] == [
        {"kind": "ServiceAccount", "name": "finops-gpu-cost-controller", "namespace": "cost"}]
    assert "--lease-name=finops-gpu-cost-controller" in r.container()["args"]
    assert all(o["metadata"].get("namespace", "cost") == "cost" for o in r.objects)


# ---------------------------------------------------------------------------------------------
# deploy/gpu-cost.yaml


def test_rendered_manifests_up_to_date():
    """deploy/gpu-cost.yaml is a comment header, then `helm template gpu-cost charts/gpu-cost
    --namespace gpu-cost --kube-version 1.37.0 --skip-tests`; tests/chart/run.sh --update
    rewrites it."""
    # Helm 4 writes a blank line between documents where Helm 3 writes none; either renders it.
    want = [line for line in helm(*template_args()).stdout.splitlines() if line.strip()]
    lines = (REPO / "deploy" / "gpu-cost.yaml").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line == "---")
    assert all(line.startswith("#") for line in lines[:first])
    assert [line for line in lines[first:] if line.strip()] == want, (
        "deploy/gpu-cost.yaml is stale: run tests/chart/run.sh --update")


# ---- the probe port ----------------------------------------------------------------------------


def test_probe_port():
    """probePort serves the probes apart (--probe-listen, a port named probes, plain HTTP even
    with TLS); 0 puts them back on port http, over HTTPS with TLS; a probe aimed at another
    port is left alone; without a ServiceMonitor the Service stays on port http
    (test_servicemonitor_scrape_port has the scrape)."""
    r = render(sets=["probePort=9095"])
    c = r.container()
    assert "--probe-listen=0.0.0.0:9095" in c["args"]
    assert {"name": "probes", "containerPort": 9095, "protocol": "TCP"} in c["ports"]
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "probes"}
    assert [p["name"] for p in r.one("Service")["spec"]["ports"]] == ["http"]

    tls = ["tls.secretName=gpu-cost-tls"]
    c = render(sets=tls).container()
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "probes"}

    for sets, scheme in (([], {}), (tls, {"scheme": "HTTPS"})):
        c = render(sets=["probePort=0", *sets]).container()
        assert not any(a.startswith("--probe-listen") for a in c["args"])
        assert [p["name"] for p in c["ports"]] == ["http"]
        assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http", **scheme}
        assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http", **scheme}

    c = render(sets=["livenessProbe.httpGet.port=9999"]).container()
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 9999}



SM = "serviceMonitor.enabled=true"
NP = "networkPolicy.enabled=true"
SCRAPE = [
    # (sets, the ServiceMonitor's port, the Service's ports as (name, port, targetPort))
    ([SM], "probes", [("http", 8080, "http"), ("probes", 8081, "probes")]),
    ([SM, "probePort=9095"], "probes", [("http", 8080, "http"), ("probes", 9095, "probes")]),
    ([SM, "probePort=0"], "http", [("http", 8080, "http")]),
    # --auth-delegate: the controller serves /metrics only where the guard asks for a token.
    ([SM, "auth.enabled=true"], "http", [("http", 8080, "http")]),
    # TLS: the scrape stays encrypted rather than move to the plain probe port.
    ([SM, "tls.secretName=gpu-cost-tls"], "http", [("http", 8080, "http")]),
    ([], None, [("http", 8080, "http")]),
]


@pytest.mark.parametrize("sets,port,service", SCRAPE, ids=[
    "default", "probePort 9095", "probePort 0", "auth", "tls", "no ServiceMonitor"])
def test_servicemonitor_scrape_port(sets, port, service):
    """The ServiceMonitor scrapes /metrics on the probe port, apart from the API's load, when
    the controller serves it there plainly: the Service names that port for it and the
    NetworkPolicy admits it; otherwise everything stays on port http."""
    r = render(sets=[*sets, NP])
    got = [(p["name"], p["port"], p["targetPort"]) for p in r.one("Service")["spec"]["ports"]]
    assert got == service
    ingress = [p["port"] for p in r.one("NetworkPolicy")["spec"]["ingress"][0]["ports"]]
    assert ingress == [name for name, _, _ in service]
    if port is None:
        assert not r.all("ServiceMonitor")
        return
    (ep,) = r.one("ServiceMonitor")["spec"]["endpoints"]
    assert ep["port"] == port and ep["path"] == "/metrics"
    if port == "probes":
        # The probe port is plain HTTP with no guard: no scheme, TLS or token to send.
        assert not {"scheme", "tlsConfig", "bearerTokenFile"} & ep.keys(), ep
        assert "--probe-listen=0.0.0.0:%d" % service[1][1] in r.container()["args"]
        assert {"name": "probes", "containerPort": service[1][1], "protocol": "TCP"} in \
            r.container()["ports"]


@pytest.mark.parametrize("value", ["80", "70000", "-1"])
def test_probe_port_schema(value):
    assert "probePort" in render_fails(sets=["probePort=" + value])


# ---------------------------------------------------------------------------------------------
# The `helm test` pod (templates/tests/)


def hook_args(sets=()):
    """template_args without --skip-tests, showing only the test pod."""
    return [a for a in template_args(sets=sets) if a != "--skip-tests"] + [
        "--show-only", "templates/tests/test-api.yaml"]


def render_hook(sets=()):
    return Rendered(helm(*hook_args(sets)).stdout).one("Pod")


def test_helm_test_pod():
    """The controller's image running the CLI against the Service, as the controller's pod runs:
    non-root, read-only root, no token mounted; never behind the Service or the ReplicaSet."""
    dep = render().deployment()["spec"]["template"]
    pod = render_hook()
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert pod["metadata"]["name"] == "gpu-cost-test-api"
    labels = pod["metadata"]["labels"]
    assert labels["app.kubernetes.io/component"] == "test"
    assert not dep["metadata"]["labels"].items() <= labels.items()
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Never" and spec["automountServiceAccountToken"] is False
    assert spec["securityContext"] == dep["spec"]["securityContext"]
    health, c = spec["containers"]
    ctl = dep["spec"]["containers"][0]
    for x in (health, c):
        assert x["image"] == ctl["image"] == "gpu-cost-controller:" + APP_VERSION
        assert x["securityContext"] == ctl["securityContext"]
        assert x["securityContext"]["readOnlyRootFilesystem"] is True
        assert x["command"] == ["/usr/local/bin/gpu-cost"]
    assert health["name"] == "health" and health["args"] == [
        "health", "--server=http://gpu-cost.gpu-cost.svc:8080", "--timeout=20s"]
    assert c["name"] == "api" and c["args"] == [
        "costs", "--server=http://gpu-cost.gpu-cost.svc:8080", "--window=1h", "--timeout=20s"]


def test_helm_test_pod_follows_image_service_and_tls():
    pod = render_hook(sets=["image.repository=registry.example/gc", "image.tag=1.2.3",
                            "service.port=9090", "tls.secretName=gc-tls",
                            "imagePullSecrets[0].name=reg"])
    for c in pod["spec"]["containers"]:
        assert c["image"] == "registry.example/gc:1.2.3"
        assert "--server=https://gpu-cost.gpu-cost.svc:9090" in c["args"]
        assert "--insecure-skip-tls-verify" in c["args"]
    assert pod["spec"]["imagePullSecrets"] == [{"name": "reg"}]


def test_helm_test_pod_not_with_auth():
    """Under delegated auth the API refuses a caller without a grant: no test pod to fail."""
    cp = helm(*hook_args(["auth.enabled=true"]), check=False)
    assert cp.returncode != 0 and "could not find template" in cp.stderr, cp.stderr
    # and --skip-tests leaves it out
    cp = helm(*template_args(), "--show-only", "templates/tests/test-api.yaml", check=False)
    assert cp.returncode != 0 and "could not find template" in cp.stderr, cp.stderr

