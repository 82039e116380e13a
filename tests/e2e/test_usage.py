"""Measured GPU use end to end: a week of dcgm-exporter series back-filled into a real Prometheus
(promtool), one dcgm-exporter pod the controller finds through the API and scrapes directly, and
the advisor's findings in /api/v1/recommendations, /metrics and the weekly report ConfigMaps (the
same findings in both).

The expectations are the planted behaviours of dcgm.Scenario, derived from the rules
(docs/advisor.md) by hand, never from the controller's answers: exactly these findings and no
other."""

import json
import os
import re
import time
import urllib.request

import pytest

import dcgm
import harness

pytestmark = pytest.mark.skipif(not dcgm.have_prometheus() and
                                os.environ.get("E2E_REQUIRE") != "1",
                                reason="prometheus and promtool are not installed "
                                       "(scripts/setup.sh installs them)")

# What each planted pod must get: kind and the figure that says why.
EXPECTED = {
    ("idle_gpu", "notebook-idle"),
    ("mig_fit", "infer-small"),
    ("over_requested", "train-8gpu"),
    ("over_requested", "live-2gpu"),
    ("reserve_floor", None),
}
H100_OD, H100_RESERVED, A100_PRICE = 6.88, 4.1, 4.1  # tests/e2e/config.json's catalog
HOURS_PER_MONTH = 730
TEAM_RBAC = harness.HERE / "rbac-team-ml-research.yaml"


def config(tmp_path, prom_url, exporter_port):
    cfg = json.loads(harness.CONFIG.read_text())
    cfg["report"]["team_namespaces"] = {"ml": "ml-research"}
    cfg["usage"] = {
        "dcgm": {"namespace": "gpu-operator", "label_selector": "app=nvidia-dcgm-exporter",
                 "port": exporter_port, "interval_seconds": 1, "timeout_seconds": 1},
        "prometheus": {"url": prom_url, "interval_seconds": 10, "timeout_seconds": 10,
                       "lookback_days": 7, "step_seconds": dcgm.STEP},
    }
    # The live pod is scraped once a second from its binding on: ten samples, a third of its
    # life, are enough here (the defaults, 30 samples and half, would take a minute).
    cfg["advisor"] = {"min_samples": 10, "min_coverage": 0.3}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    return f


def api_get(ctl, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (ctl.port, path), timeout=5) as r:
        body = r.read()
    return body.decode()


def findings_key(doc):
    return {(f["kind"], f["subject"].get("pod")) for f in doc["findings"]}


def test_usage_from_prometheus_and_dcgm_exporter(cluster, controller_bin, tmp_path):
    t0 = time.time()
    sc = dcgm.Scenario(time.time())
    sc.create_namespaces(cluster.api)
    cluster.api.request("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml-research"}})
    cluster.apply(harness.RBAC)  # the controller's own grants, nothing more
    cluster.apply(TEAM_RBAC)
    sc.inject_nodes(cluster.api, cluster.etcd)
    for p in sc.pods:
        sc.create_pod(cluster.api, p, p["bound"])

    # A week of series, back-filled; Prometheus answers from it.
    om = tmp_path / "dcgm-week.om.txt"
    n = sc.openmetrics(om)
    assert n > 10000
    prom = dcgm.Prometheus(tmp_path / "prometheus")
    prom.backfill(om)
    prom.start()
    exporter = dcgm.ExporterStandIn(sc.live_body).start()
    ctl = None
    try:
        doc = prom.query('count(DCGM_FI_PROF_GR_ENGINE_ACTIVE)', sc.now - 3600)
        assert doc["data"]["result"][0]["value"][1] == "14", doc  # 4 + 1 + 1 + 8 devices

        sc.create_exporter_pod(cluster.api, exporter.port)
        sc.live["bound"] = int(time.time())
        sc.create_pod(cluster.api, sc.live, sc.live["bound"])

        cluster.wait_controller_can()
        ctl = harness.Controller(controller_bin, cluster, tmp_path / "controller.log",
                                 config=config(tmp_path, prom.url, exporter.port),
                                 extra=["--no-leader-election", "--snapshot-interval", "1s"])
        ctl.start()
        ctl.wait_ready(timeout=60)

        deadline = time.time() + 90
        got = None
        while time.time() < deadline:
            try:
                got = json.loads(api_get(ctl, "/api/v1/recommendations"))
                if findings_key(got) >= EXPECTED:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(1)
        assert got is not None, harness.tail(ctl.log_path)
        assert findings_key(got) == EXPECTED, (
            json.dumps(got, indent=1)[:6000] + "\n" + harness.tail(ctl.log_path))
        assert exporter.scrapes >= 10

        by = {(f["kind"], f["subject"].get("pod")): f for f in got["findings"]}
        # Every usage finding names its samples and window.
        for key in EXPECTED - {("reserve_floor", None)}:
            ev = by[key]["evidence"]
            assert ev["samples"] >= 10 and ev["coverage"] >= 0.3, (key, ev)
        ev = by[("idle_gpu", "notebook-idle")]["evidence"]
        # idle since an hour after its binding: nearly two days at a stretch
        assert ev["idle_longest_minutes"] >= 46 * 60, ev
        f = by[("over_requested", "train-8gpu")]
        ev = f["evidence"]
        assert (ev["devices_seen"], ev["devices_active"], ev["suggested_gpus"]) == (8, 2, 2)
        # 6 of 8 A100s (4.10 an hour) for the 2 of the window's 7 days it ran, as a month
        assert f["monthly_savings"] == pytest.approx(
            6 * A100_PRICE * 2 / 7 * HOURS_PER_MONTH, rel=0.01), f
        ev = by[("over_requested", "live-2gpu")]["evidence"]
        assert (ev["devices_seen"], ev["devices_active"], ev["suggested_gpus"]) == (2, 1, 1)
        f = by[("mig_fit", "infer-small")]
        assert "nvidia.com/mig-1g.10gb: 1" in f["change"]["stanza"], f
        f = by[("reserve_floor", None)]
        assert f["subject"]["model"] == "NVIDIA-H100-80GB-HBM3"
        # busy-train holds 4 H100s every whole day: reserve 4 (96 GPU-hours a day)
        assert re.search(r"reserve 4(\.0+)? x NVIDIA-H100-80GB-HBM3", f["change"]["stanza"]), f
        # 96 GPU-hours a day at the reserved instead of the on-demand price, over a month
        assert f["monthly_savings"] == pytest.approx(
            96 * (H100_OD - H100_RESERVED) * HOURS_PER_MONTH / 24, abs=0.05), f

        # /api/v1/pods carries the measured use; /metrics the counts and the usage health.
        pods = json.loads(api_get(ctl, "/api/v1/pods"))
        rows = pods.get("pods", pods.get("items", []))
        live = [r for r in rows if r.get("name") == "live-2gpu" or
                r.get("pod") == "live-2gpu"]
        assert live, rows[:3]
        metrics = api_get(ctl, "/metrics")
        assert 'gpu_cost_findings{kind="over_requested",team="ml"} 2' in metrics, metrics
        samples = [line for line in metrics.splitlines()
                   if line.startswith("gpu_cost_usage_samples_total ")]
        assert samples and float(samples[0].split()[1]) > 10000, samples

        # The weekly report of this week carries the Savings (ConfigMaps are rewritten every
        # report interval, 5 s here).
        deadline = time.time() + 30
        rep = None
        while time.time() < deadline:
            cms = cluster.configmaps(selector="gpu-cost.io/kind=report")
            weekly = [c for n_, c in sorted(cms.items())
                      if n_.startswith("gpu-cost-report-weekly-2")]
            if weekly:
                rep = json.loads(weekly[-1]["data"]["report.json"])
                md = weekly[-1]["data"]["report.md"]
                if rep.get("savings") and "live-2gpu" in json.dumps(rep["savings"]):
                    break
            time.sleep(1)
        assert rep and rep.get("savings"), rep
        assert "## Savings" in md
        assert "live-2gpu" in md

        # The team's own copy (the latest complete week, in its namespace) lists its own
        # findings only: none of the cluster's (reserve_floor is the whole cluster's); exactly
        # the ml findings of the cluster's report of the same week. The two ConfigMaps are
        # written one after the other in a round: compared until both stand on the same round.
        def team_copy_mismatches():
            cm = cluster.configmaps(ns="ml-research").get("gpu-cost-report-weekly-latest")
            if not cm:
                return ["no gpu-cost-report-weekly-latest in ml-research"]
            team = json.loads(cm["data"]["report.json"])
            if team.get("team") != "ml" or team.get("savings") is None:
                return ["the team copy is not ml's or has no savings: %s" % team]
            cluster_week = json.loads(cluster.configmaps()["gpu-cost-report-weekly-latest"][
                "data"]["report.json"])
            if cluster_week["period"] != team["period"]:
                return ["periods differ: %s, %s" % (cluster_week["period"], team["period"])]
            want = [(f["kind"], f["subject"].get("pod"))
                    for f in cluster_week["savings"]["findings"] if f["subject"].get("team") == "ml"]
            got = [(f["kind"], f["subject"].get("pod")) for f in team["savings"]["findings"]]
            return [] if got == want else ["team copy %s, the cluster's ml findings %s" % (got, want)]

        bad = harness.settle(team_copy_mismatches)
        assert not bad, bad

        # The weekly ConfigMaps' Savings are the API's: the snapshot's one advisor result serves
        # both (the findings are few, so none is cut). Compared when both stand on the same run,
        # the API's twice the same around the read of the ConfigMaps.
        deadline = time.time() + 30
        seen = {}
        while time.time() < deadline:
            before = json.loads(api_get(ctl, "/api/v1/recommendations"))
            cms = cluster.configmaps(selector="gpu-cost.io/kind=report")
            after = json.loads(api_get(ctl, "/api/v1/recommendations"))
            this_week = sorted(n_ for n_ in cms if n_.startswith("gpu-cost-report-weekly-2"))[-1]
            seen = {n_: json.loads(cms[n_]["data"]["report.json"])["savings"]
                    for n_ in ("gpu-cost-report-weekly-latest", this_week)}
            if before["window"] == after["window"] and \
                    all(sv["window"] == after["window"] for sv in seen.values()):
                break
            time.sleep(0.5)
        assert seen and all(sv["window"] == after["window"] for sv in seen.values()), (
            after["window"], {n_: sv["window"] for n_, sv in seen.items()})
        for n_, sv in seen.items():
            assert sv == after, (n_, json.dumps(sv)[:3000], json.dumps(after)[:3000])

        # A source that stops answering is counted and logged, and nothing else breaks.
        def errors():
            m = api_get(ctl, "/metrics")
            line = [x for x in m.splitlines() if x.startswith("gpu_cost_usage_errors_total ")]
            return float(line[0].split()[1])

        assert errors() == 0
        exporter.stop()
        deadline = time.time() + 20
        while time.time() < deadline and errors() == 0:
            time.sleep(0.5)
        assert errors() > 0
        assert ctl.get("/healthz") == 200 and ctl.get("/readyz") == 200
        assert any(r.get("msg") == "dcgm-exporter scrape failed" for r in ctl.log_records())
    finally:
        if ctl:
            ctl.stop()
        exporter.stop()
        prom.stop()
    print("the usage scenario took %.0f s" % (time.time() - t0))


def test_dcgm_exporter_found_through_a_service(cluster, controller_bin, tmp_path):
    """usage.dcgm.service: the ready addresses of the Service's Endpoints are scraped. The API
    server refuses loopback addresses in Endpoints, so the address here is one of TEST-NET-1
    (192.0.2.0/24, never routed): the controller must find it through the API (with only the
    Role of rbac-dcgm-endpoints.yaml) and try it, and count the failure."""
    sc = dcgm.Scenario(time.time())
    sc.create_namespaces(cluster.api)
    cluster.apply(harness.RBAC)
    cluster.apply(harness.HERE / "rbac-dcgm-endpoints.yaml")
    cluster.api.call("POST", "/api/v1/namespaces/gpu-operator/endpoints", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "nvidia-dcgm-exporter"},
        "subsets": [{"addresses": [{"ip": "192.0.2.10"}],
                     "notReadyAddresses": [{"ip": "192.0.2.11"}],
                     "ports": [{"name": "metrics", "port": 9400}]}]})
    cfg = json.loads(harness.CONFIG.read_text())
    cfg["report"]["team_namespaces"] = {}
    cfg["usage"] = {"dcgm": {"namespace": "gpu-operator", "service": "nvidia-dcgm-exporter",
                             "interval_seconds": 2, "timeout_seconds": 1}}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    cluster.wait_controller_can("/api/v1/namespaces/gpu-operator/endpoints/nvidia-dcgm-exporter")
    ctl = harness.Controller(controller_bin, cluster, tmp_path / "controller.log", config=f,
                             extra=["--no-leader-election", "--snapshot-interval", "1s"]).start()
    try:
        ctl.wait_ready(timeout=60)
        deadline = time.time() + 20
        urls = set()
        while time.time() < deadline and not urls:
            urls = {r.get("url") for r in ctl.log_records()
                    if r.get("msg") == "dcgm-exporter scrape failed"}
            time.sleep(0.5)
        assert urls == {"http://192.0.2.10:9400/metrics"}, harness.tail(ctl.log_path)
        assert not [r for r in ctl.log_records()
                    if r.get("msg") == "cannot find the dcgm-exporter pods"]
        errors = 0
        while time.time() < deadline and errors < 1:
            m = api_get(ctl, "/metrics")
            line = [x for x in m.splitlines() if x.startswith("gpu_cost_usage_errors_total ")]
            errors = float(line[0].split()[1])
            time.sleep(0.5)
        assert errors >= 1
    finally:
        ctl.stop()
