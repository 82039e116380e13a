"""`gpu-cost analyze --metrics` and the demo's Savings section, against expectations written
from the rules (docs/advisor.md) and the behaviours scripts/gen-examples.py plants in
examples/metrics.prom, not from the advisor's own output:

  - research/jupyter-hana-*: busy two hours, then idle (activity 0) for eight while it holds 70%
    of its 1g.10gb MIG slice: idle_gpu;
  - vision/detr-finetune-*: 8 A100s requested, 2 busy, 6 never touched: over_requested, ask 2;
  - platform-inference/intent-classifier-*: a whole H100, 5 GiB of 80 at most, under 10% busy:
    mig_fit, the smallest H100 slice (1g.10gb: 9856 MiB, a seventh of the compute).

Two more pods share a time-sliced T4 (research/jupyter-omar-*, barely busy, and
recsys/feature-backfill-*, busy): they are there for the usage basis (tests/cli/test_usage_basis.py
checks the rule), and no rule may find anything about them from a few percent of a quarter GPU.
No other pod has a measurement, so no other pod may get a usage finding.
"""

import json
import os
import re

import pytest

import truth
from conftest import EXAMPLES, analyze_args

W47 = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
METRICS = EXAMPLES / "metrics.prom"
USAGE_KINDS = {"idle_gpu", "over_requested", "mig_fit", "cheaper_class"}
PLANTED = {"jupyter-hana-": "idle_gpu", "detr-finetune-": "over_requested",
           "intent-classifier-": "mig_fit"}
SHARED = ("jupyter-omar-", "feature-backfill-")  # measured for the usage basis, no finding
HOURS_PER_MONTH = 730


def usage_findings(savings):
    out = {}
    for f in savings["findings"]:
        if f["kind"] in USAGE_KINDS:
            out.setdefault(f["subject"]["pod"], []).append(f)
    return out


def planted_prefix(pod):
    return next((p for p in PLANTED if pod.startswith(p)), None)


def pod_by_prefix(prefix):
    doc = json.loads((EXAMPLES / "pods.json").read_text())
    return next(p for p in doc["items"] if p["metadata"]["name"].startswith(prefix))


def test_metrics_file_is_a_series_of_the_planted_pods():
    text = METRICS.read_text()
    pods = set(re.findall(r'pod="([^"]+)"', text))
    assert {planted_prefix(p) for p in pods if not p.startswith(SHARED)} == set(PLANTED), pods
    assert {p.split("-")[0] for p in pods if p.startswith(SHARED)} == {"jupyter", "feature"}
    times = {int(m) for m in re.findall(r"\} \S+ (\d+)$", text, re.M)}
    # one scrape every 10 minutes inside the demo week, timestamps in milliseconds
    start, end = truth.parse_window(W47)
    assert all(start * 1000 <= t < end * 1000 and t % 600000 == 0 for t in times)
    assert len(times) >= 60


def test_analyze_json_has_exactly_the_planted_findings(cli, cluster):
    doc = cli.ok(*analyze_args(W47), "--metrics", METRICS).json()
    assert "groups" in doc and "total" in doc  # the cost summary is still there
    sv = doc["savings"]
    got = usage_findings(sv)
    assert {planted_prefix(p) for p in got} == set(PLANTED), sorted(got)
    for pod, fs in got.items():
        want = PLANTED[planted_prefix(pod)]
        assert want in [f["kind"] for f in fs], (pod, [f["kind"] for f in fs])
    assert sv["usage"]["pods_measured"] == 3 + len(SHARED)

    start, end = truth.parse_window(W47)
    window_h = (end - start) / 3600.0
    for pod, fs in got.items():
        f = next(x for x in fs if x["kind"] == PLANTED[planted_prefix(pod)])
        ev = f["evidence"]
        # every usage finding names the samples and the window it stands on
        assert ev["samples"] >= 30 and ev["coverage"] >= 0.5, ev
        assert truth.parse_time(ev["window"]["start"]) >= start
        assert truth.parse_time(ev["window"]["end"]) <= end
        if f["kind"] == "over_requested":
            assert ev["devices_seen"] == 8 and ev["devices_active"] == 2
            assert ev["suggested_gpus"] == 2
            assert "nvidia.com/gpu: 2" in f["change"]["stanza"]
            # 6 of its 8 GPUs: three quarters of what it cost in the window, at a month's rate
            u = next(x for x in cluster.usages if x.name == pod)
            cost = u.geq * u.seconds(start, end) / 3600.0 * u.node.price
            assert f["monthly_savings"] == pytest.approx(
                cost * 6 / 8 * HOURS_PER_MONTH / window_h, abs=0.01)
        elif f["kind"] == "mig_fit":
            assert "1g.10gb" in json.dumps(f)
            assert "nvidia.com/mig-1g.10gb: 1" in f["change"]["stanza"]
            assert ev["mem_used_peak_mib"] <= 5200
            assert 0 < f["monthly_savings"]
        else:
            # idle for about 8 hours at a stretch, far past the 30-minute rule
            assert ev["idle_longest_minutes"] >= 7 * 60, ev
            assert f["monthly_savings"] > 0
            # a seventh of an H100 of the capacity block (reserved, 5.25 an hour), a day
            u = next(x for x in cluster.usages if x.name == pod)
            assert u.geq == pytest.approx(1 / 7)
            assert ev["cost_per_day"] == pytest.approx(u.geq * u.node.price * 24, abs=0.01)


def test_analyze_without_metrics_has_no_savings(cli):
    doc = cli.ok(*analyze_args(W47)).json()
    assert "savings" not in doc


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_analyze_text_prints_the_savings_section(cli, fmt):
    r = cli.ok(*analyze_args(W47, fmt=fmt), "--metrics", METRICS)
    assert "## Savings" in r.out
    head, savings = r.out.split("## Savings", 1)
    assert "research" in head  # the cost summary first
    for prefix in PLANTED:
        assert prefix in savings, prefix


def test_demo_shows_the_savings(cli):
    md = cli.ok("demo").out
    assert "## Savings" in md
    savings = md.split("## Savings", 1)[1].split("\n## Notes", 1)[0]
    for prefix, kind in PLANTED.items():
        assert re.search(r"%s.*%s|%s.*%s" % (kind, prefix, prefix, kind), savings), (prefix, kind)
    doc = cli.ok("demo", "--format", "json").json()
    assert {planted_prefix(p) for p in usage_findings(doc["savings"])} == set(PLANTED)


MONEY = r"\$\d{1,3}(?:,\d{3})*\.\d\d"  # as pkg/report writes USD: $1,234.56


def test_demo_savings_write_money_as_the_report_does(cli):
    """One report, one way of writing money: the Savings section's total, table and sentences
    write "$119,928.64" as the spend tables above it do, never "119928.64 USD"."""
    md = cli.ok("demo").out
    head, savings = md.split("## Savings", 1)
    assert re.search(r"\*\*Total spend: %s\*\*" % MONEY, head), head[:600]
    assert re.search(r"Estimated savings: \*\*%s a month\*\*" % MONEY, savings), savings[:400]
    assert "USD" not in savings and not re.search(r"\d\.\d\d [A-Z]{3}\b", savings), savings
    rows = [r for r in savings.splitlines() if re.match(r"\| \d+ \|", r)]
    assert rows and all(re.search(r"\| %s \|" % MONEY, r) for r in rows), rows
    changes = re.findall(r"^\d+\. \*\*\w+\*\* \((\S+) a month\)", savings, re.M)
    assert changes and all(re.fullmatch(MONEY, c) for c in changes), changes


def test_demo_idle_capacity_names_whole_nodes(cli):
    """"scale it down by 1 node(s) of 8.57 GPUs" was no advice: a node holds whole GPUs. Each
    idle_capacity finding names the nodes to take out, from the example's nodes, in the pool it
    is about, with their GPUs and what each costs a month; its saving is what they cost."""
    nodes = {n["metadata"]["name"]: n for n in
             json.loads((EXAMPLES / "nodes.json").read_text())["items"]}
    doc = cli.ok("demo", "--format", "json").json()
    found = [f for f in doc["savings"]["findings"] if f["kind"] == "idle_capacity"]
    assert found
    for f in found:
        ev, summary = f["evidence"], f["change"]["summary"]
        names = ev["nodes_to_remove"].split()
        assert len(names) == ev["nodes_idle"] >= 1, ev
        assert not re.search(r"\d\.\d+ GPUs(?! idle on average)", summary), summary
        assert "node(s)" not in summary, summary
        total = 0.0
        for name in names:
            assert name in nodes, name
            m = re.search(r"%s \((\d+) GPUs?|%s \(([\d.]+) GPU-equivalents" % (
                re.escape(name), re.escape(name)), summary)
            assert m, (name, summary)
            cost = re.search(re.escape(name) + r" \([^,]+, (%s) a month\)" % MONEY, summary)
            assert cost, summary
            total += float(cost.group(1)[1:].replace(",", ""))
            assert name in f["change"]["stanza"]
        assert f["monthly_savings"] == pytest.approx(total, abs=0.01 * len(names))


UUID = "GPU-00000000-1111-2222-3333-444444444444"


def scrape_body(pod, ns, used_mib, total_mib, activity, uuid=UUID):
    """One dcgm-exporter scrape of one MIG device, without timestamps (as served)."""
    lab = ('gpu="5",UUID="%s",device="nvidia5",modelName="NVIDIA H100 80GB HBM3",'
           'Hostname="ip-10-0-33-117.ec2.internal",GPU_I_PROFILE="1g.10gb",GPU_I_ID="9",'
           'container="notebook",namespace="%s",pod="%s"' % (uuid, ns, pod))
    return ("# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.\n"
            "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{%s} %f\n"
            "DCGM_FI_DEV_FB_USED{%s} %d\n"
            "DCGM_FI_DEV_FB_FREE{%s} %d\n" % (lab, activity, lab, used_mib, lab,
                                              total_mib - used_mib))


def series_body(pod, ns, t0, minutes, openmetrics, used_mib=6890, total_mib=9856, activity=0.0):
    """One sample a minute of one MIG device for `minutes` from t0: OpenMetrics (timestamps in
    seconds, a fraction on every other one, `# EOF` last, as promtool reads) or text format
    0.0.4 (milliseconds)."""
    lab = ('gpu="5",UUID="%s",device="nvidia5",modelName="NVIDIA H100 80GB HBM3",'
           'Hostname="ip-10-0-33-117.ec2.internal",GPU_I_PROFILE="1g.10gb",GPU_I_ID="9",'
           'container="notebook",namespace="%s",pod="%s"' % (UUID, ns, pod))
    out = []
    for name, val in (("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "%f" % activity),
                      ("DCGM_FI_DEV_FB_USED", "%d" % used_mib),
                      ("DCGM_FI_DEV_FB_FREE", "%d" % (total_mib - used_mib))):
        out.append("# TYPE %s gauge\n" % name)
        for i in range(minutes):
            t = t0 + 60 * i
            ts = ("%d.25" % t if i % 2 else "%d" % t) if openmetrics else "%d" % (t * 1000 + 250 * (i % 2))
            out.append("%s{%s} %s %s\n" % (name, lab, val, ts))
    if openmetrics:
        out.append("# EOF\n")
    return "".join(out)


DAY = "2026-11-22T15:00:00Z,2026-11-23T15:00:00Z"


@pytest.mark.parametrize("openmetrics", [True, False], ids=["openmetrics", "text"])
def test_a_day_of_one_minute_samples_in_either_format(cli, tmp_path, openmetrics):
    """A day of one-minute samples of the notebook sitting idle on its slice, saved as an
    OpenMetrics file (seconds) or as text format 0.0.4 (milliseconds): the pod holds its slice
    the whole day, so the samples cover all of it and it is idle for all of it."""
    pod = pod_by_prefix("jupyter-hana-")["metadata"]["name"]
    start, end = truth.parse_window(DAY)
    f = tmp_path / ("day.%s" % ("om" if openmetrics else "prom"))
    f.write_text(series_body(pod, "research", start, (end - start) // 60, openmetrics))
    doc = cli.ok(*analyze_args(DAY), "--metrics", f).json()
    got = usage_findings(doc["savings"])
    assert list(got) == [pod], (got, doc["savings"]["notes"])
    (fd,) = got[pod]
    assert fd["kind"] == "idle_gpu"
    ev = fd["evidence"]
    assert ev["samples"] == 1440
    assert ev["coverage"] == pytest.approx(1.0, abs=0.01), ev
    assert ev["idle_longest_minutes"] >= 23 * 60, ev
    assert truth.parse_time(ev["window"]["start"]) == start
    assert truth.parse_time(ev["window"]["end"]) >= end - 60


def test_openmetrics_and_text_files_give_the_same_savings(cli, tmp_path):
    """The example's week of series (milliseconds) rewritten as OpenMetrics (seconds, `# EOF`):
    the same findings to the cent."""
    om = tmp_path / "metrics.om"
    lines = []
    for line in METRICS.read_text().splitlines():
        m = re.match(r"^(\S.*\}) (\S+) (\d+)$", line)
        if m and not line.startswith("#"):
            ms = int(m.group(3))
            line = "%s %s %d.%03d" % (m.group(1), m.group(2), ms // 1000, ms % 1000)
        lines.append(line)
    om.write_text("\n".join(lines) + "\n# EOF\n")
    a = cli.ok(*analyze_args(W47), "--metrics", METRICS).json()["savings"]
    b = cli.ok(*analyze_args(W47), "--metrics", om).json()["savings"]
    assert a == b


def test_untimestamped_files_form_a_series_by_mtime(cli, tmp_path):
    """40 saved scrapes, one a minute (their modification times), of the notebook while it sits
    idle: an hour's window, 40 minutes measured (coverage 2/3), idle 40 minutes >= 30."""
    pod = pod_by_prefix("jupyter-hana-")["metadata"]["name"]
    t0 = truth.parse_time("2026-11-22T18:00:00Z")
    files = []
    for i in range(40):
        f = tmp_path / ("scrape-%02d.prom" % i)
        f.write_text(scrape_body(pod, "research", 6890, 9856, 0.0))
        os.utime(f, (t0 + 60 * i, t0 + 60 * i))
        files += ["--metrics", f]
    win = "2026-11-22T18:00:00Z,2026-11-22T19:00:00Z"
    doc = cli.ok(*analyze_args(win), "--scrape-interval", "60s", *files).json()
    got = usage_findings(doc["savings"])
    assert list(got) == [pod], got
    assert [f["kind"] for f in got[pod]] == ["idle_gpu"]
    assert got[pod][0]["evidence"]["samples"] == 40

    # Busy instead: measured, no finding.
    for i, f in enumerate(sorted(tmp_path.glob("scrape-*.prom"))):
        f.write_text(scrape_body(pod, "research", 6890, 9856, 0.7))
        os.utime(f, (t0 + 60 * i, t0 + 60 * i))
    doc = cli.ok(*analyze_args(win), "--scrape-interval", "60s", *files).json()
    assert usage_findings(doc["savings"]) == {}
    assert doc["savings"]["usage"]["pods_measured"] == 1


def test_one_scrape_is_too_little_to_judge(cli, tmp_path):
    pod = pod_by_prefix("jupyter-hana-")["metadata"]["name"]
    f = tmp_path / "one.prom"
    f.write_text(scrape_body(pod, "research", 6890, 9856, 0.0))
    win = "2026-11-22T18:00:00Z,2026-11-22T19:00:00Z"
    doc = cli.ok(*analyze_args(win), "--metrics", f, "--now", "2026-11-22T18:30:00Z").json()
    assert usage_findings(doc["savings"]) == {}
    # and it says so, naming the pod
    assert any(pod in n for n in doc["savings"]["notes"]), doc["savings"]["notes"]


def test_malformed_lines_are_skipped_with_a_warning(cli, tmp_path):
    f = tmp_path / "bad.prom"
    f.write_text(METRICS.read_text() + 'DCGM_FI_DEV_FB_USED{pod="x" 12\n')
    r = cli.ok(*analyze_args(W47), "--metrics", f)
    assert "malformed" in r.err and str(f) in r.err
    assert {planted_prefix(p) for p in usage_findings(r.json()["savings"])} == set(PLANTED)


@pytest.mark.parametrize("extra,expect", [
    (["--now", "2026-11-22T18:30:00Z"], "--now: only with --metrics"),
    (["--metrics", "/nonexistent/metrics.prom"], "/nonexistent/metrics.prom"),
    (["--metrics", METRICS, "--now", "yesterday"], "--now"),
    (["--metrics", METRICS, "--scrape-interval", "0s"], "--scrape-interval"),
])
def test_bad_flags(cli, extra, expect):
    r = cli(*analyze_args(W47), *extra)
    assert r.code == 2, r
    assert expect in r.err, r
