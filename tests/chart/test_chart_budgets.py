"""The chart's budget objects without a cluster: the report zone and budgets in the rendered
configuration (accepted by the CLI's parser), the schema's refusals, the Role for budget Events
only where configured, and the PrometheusRule's alerts run by `promtool test rules`."""

import json
import shutil
import subprocess

import pytest
import yaml

from conftest import GPU_COST, NAMESPACE, REPO, missing, need, render, render_fails

BUDGETS = [
    {"scope": "team", "name": "ml", "period": "monthly", "amount": 30},
    {"scope": "team", "name": "web", "period": "weekly", "amount": 500},
    {"scope": "namespace", "name": "batch", "period": "monthly", "amount": 1000},
    {"scope": "project", "name": "llm", "period": "monthly", "amount": 2000.5},
    {"scope": "workload", "name": "Deployment/serving/summarizer", "period": "weekly",
     "amount": 400},
]


def budget_values(tmp_path, **extra):
    values = {"config": {"report": {"timezone": "Asia/Kathmandu",
                                    "team_namespaces": {"ml": "team-ml"}},
                         "budgets": {"warn_share": 0.75, "events": True, "items": BUDGETS}}}
    values.update(extra)
    f = tmp_path / "budgets.yaml"
    f.write_text(yaml.safe_dump(values))
    return f


def test_defaults_render_no_budget_objects():
    r = render()
    assert not r.all("PrometheusRule")
    assert not [o for o in r.all("Role") if o["metadata"]["name"].endswith("-budget-events")]
    cfg = r.config()
    assert "timezone" not in cfg["report"] and cfg["report"]["utc_offset"] == "+00:00"
    assert cfg["report"]["monthly_retention_months"] == 12
    assert cfg["budgets"] == {"warn_share": 0.8, "events": False, "items": []}


def test_budgets_and_zone_in_the_configuration(tmp_path):
    r = render([budget_values(tmp_path)])
    cfg = r.config()
    # timezone replaces utc_offset: the parser refuses both
    assert cfg["report"]["timezone"] == "Asia/Kathmandu" and "utc_offset" not in cfg["report"]
    assert cfg["budgets"]["items"] == BUDGETS
    need(GPU_COST, "build it (make build) or set GPU_COST")
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    ex = REPO / "examples"
    cp = subprocess.run([str(GPU_COST), "analyze", "--config", str(f),
                         "--pods", str(ex / "pods.json"), "--nodes", str(ex / "nodes.json"),
                         "--window", "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z", "--format", "json"],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr


def test_event_roles_only_where_events_go(tmp_path):
    r = render([budget_values(tmp_path)])
    roles = {o["metadata"]["namespace"]: o for o in r.all("Role")
             if o["metadata"]["name"].endswith("-budget-events")}
    # ml's team namespace, the namespace budget's own, the workload's, and the release namespace
    # for web (no team namespace) and the project budget
    assert sorted(roles) == sorted(["team-ml", "batch", "serving", NAMESPACE])
    for role in roles.values():
        assert role["rules"] == [{"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}]
    binds = [o for o in r.all("RoleBinding") if o["metadata"]["name"].endswith("-budget-events")]
    assert sorted(b["metadata"]["namespace"] for b in binds) == sorted(roles)
    # events off: no grant at all
    f = tmp_path / "off.yaml"
    f.write_text(yaml.safe_dump({"config": {"budgets": {"events": False, "items": BUDGETS}}}))
    r = render([f])
    assert not [o for o in r.all("Role") if "events" in json.dumps(o.get("rules", []))]


@pytest.mark.parametrize("setting,expect", [
    ('config.budgets.items=[{"scope":"cluster","name":"a","period":"monthly","amount":1}]',
     "scope"),
    ('config.budgets.items=[{"scope":"team","name":"a","period":"daily","amount":1}]', "period"),
    ('config.budgets.items=[{"scope":"team","name":"a","period":"monthly","amount":0}]',
     "amount"),
    ('config.budgets.items=[{"scope":"team","name":"a","period":"monthly"}]', "amount"),
    ('config.budgets.warn_share=1', "warn_share"),
    ('config.report.timezone="Europe/../etc"', "timezone"),
    ('config.report.monthly_retention_months=0', "monthly_retention_months"),
    ('prometheusRule.for="soon"', "for"),
])
def test_schema_refuses(setting, expect):
    err = render_fails(extra=["--set-json", setting])
    assert expect in err, err


PROMTOOL_TESTS = """
rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # ml: 70% used, forecast 95%: nothing; then 80% (warning), forecast 120%
      - series: 'gpu_cost_budget_used_ratio{cluster="c",scope="team",name="ml",period="monthly",currency="USD"}'
        values: '0.7x20 0.8x40'
      - series: 'gpu_cost_budget_forecast_ratio{cluster="c",scope="team",name="ml",period="monthly",currency="USD"}'
        values: '0.95x20 1.2x40'
      # web: over its budget
      - series: 'gpu_cost_budget_used_ratio{cluster="c",scope="team",name="web",period="weekly",currency="USD"}'
        values: '1.05x60'
      - series: 'gpu_cost_budget_forecast_ratio{cluster="c",scope="team",name="web",period="weekly",currency="USD"}'
        values: '1.4x60'
    alert_rule_test:
      - eval_time: 15m
        alertname: GpuCostBudgetWarning
        exp_alerts: []
      - eval_time: 15m
        alertname: GpuCostBudgetForecastExceeded
        exp_alerts: []
      - eval_time: 16m
        alertname: GpuCostBudgetExceeded
        exp_alerts:
          - exp_labels: {severity: critical, team: finance, cluster: c, scope: team, name: web,
                         period: weekly, currency: USD}
            exp_annotations:
              summary: "GPU budget of team web is spent (105%)"
              description: "The weekly GPU budget of team web in cluster c is used up."
      - eval_time: 40m
        alertname: GpuCostBudgetWarning
        exp_alerts:
          - exp_labels: {severity: warning, team: finance, cluster: c, scope: team, name: ml,
                         period: monthly, currency: USD}
            exp_annotations:
              summary: "GPU budget of team ml is 80% used"
              description: "The monthly GPU budget of team ml in cluster c has passed the warning share of 75%."
      - eval_time: 40m
        alertname: GpuCostBudgetForecastExceeded
        exp_alerts:
          - exp_labels: {severity: warning, team: finance, cluster: c, scope: team, name: ml,
                         period: monthly, currency: USD}
            exp_annotations:
              summary: "GPU budget of team ml is forecast at 120%"
              description: "At the average rate so far, the monthly GPU budget of team ml in cluster c will be overspent by the period's end."
      - eval_time: 30m
        alertname: GpuCostBudgetWarning
        exp_alerts: []
"""


def rule_file(r, tmp_path):
    rules = r.one("PrometheusRule")
    f = tmp_path / "rules.yaml"
    f.write_text(yaml.safe_dump(rules["spec"]))
    return f


def test_prometheus_rule_alerts(tmp_path):
    promtool = shutil.which("promtool")
    if not promtool:
        missing("promtool is missing (Debian: prometheus)")
    f = budget_values(tmp_path, prometheusRule={"enabled": True, "labels": {"release": "kps"},
                                                "alertLabels": {"team": "finance"}})
    r = render([f])
    rules = r.one("PrometheusRule")
    assert rules["metadata"]["labels"]["release"] == "kps"
    rule_file(r, tmp_path)
    cp = subprocess.run([promtool, "check", "rules", "rules.yaml"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    (tmp_path / "tests.yaml").write_text(PROMTOOL_TESTS)
    cp = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stdout + cp.stderr
    # and the test can fail: a rule that never fires is caught
    spec = yaml.safe_load((tmp_path / "rules.yaml").read_text())
    spec["groups"][0]["rules"][1]["expr"] = "gpu_cost_budget_used_ratio >= 2"
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(spec))
    cp = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode != 0
