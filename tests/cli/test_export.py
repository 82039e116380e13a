"""gpu-cost export: FOCUS 1.3/1.4/1.2 and plain CSV, totals against the report, chargeback, remote.

The 1.3 split-allocation checks are written from the FOCUS 1.3 column text (docs/export.md cites
it): AllocatedMethodDetails is a JSON object whose Elements carry AllocatedRatio (numeric) and
UsageUnit when UsageQuantity is given; the ratios of the allocated charges of one origin charge
sum to 1; AllocatedResourceId is null for the unallocated portion and not null for an allocated
one; AllocatedMethodId is not null for an allocated charge; AllocatedTags is a JSON object that
repeats no key of Tags.
"""

import csv
import io
import json
import socket
import time
import urllib.request
from collections import defaultdict

import subprocess

import pytest

from conftest import REPO
import truth

from test_remote import Demo, _controller_path

WINDOW = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
DUMPS = ["--pods", "examples/pods.json", "--nodes", "examples/nodes.json",
         "--namespaces", "examples/namespaces.json", "--config", "examples/config.json"]


def rows_of(text):
    r = list(csv.DictReader(io.StringIO(text, newline="")))
    assert r, "no rows"
    return r


def num(v):
    return float(v) if v != "" else 0.0


def export(cli, *args):
    return rows_of(cli.ok("export", *DUMPS, "--window", WINDOW, *args).out)


@pytest.fixture(scope="module")
def report(cli):
    return cli.ok("analyze", *DUMPS, "--window", WINDOW, "--by", "team", "--format",
                  "json").json()


DAY = 86400


def days(window=WINDOW):
    """The UTC days of the window, as the export's charge periods."""
    start, end = (truth.parse_time(x) for x in window.split(","))
    return [(d, d + DAY) for d in range(start, end, DAY)]


def test_focus_totals_equal_the_truth_to_the_cent(cli, report, cluster):
    """Usage and idle per team and day equal the independent truth (tests/cli/truth.py, from
    the raw dumps), and the report, to the cent."""
    rows = export(cli, "--focus-version", "1.2")
    usage = sum(num(r["BilledCost"]) for r in rows if r["x_CostKind"] == "usage")
    idle = sum(num(r["BilledCost"]) for r in rows if r["x_CostKind"] == "idle")
    w = cluster.compute(*WINDOW.split(","), by=("team",))
    assert abs(usage - w["total"]["cost_usd"]) < 0.005, (usage, w["total"])
    assert abs(idle - w["idle"]["cost_usd"]) < 0.005, (idle, w["idle"])
    assert round(usage, 2) == round(report["total"]["cost_usd"], 2)
    assert round(idle, 2) == round(report["idle"]["cost_usd"], 2)
    got = defaultdict(float)
    for r in rows:
        if r["x_CostKind"] == "usage":
            got[(r["ChargePeriodStart"][:10], json.loads(r["Tags"])["gpu-cost/team"])] += \
                num(r["BilledCost"])
    want = {}
    for d0, d1 in days():
        for (team,), g in cluster.compute(d0, d1, by=("team",))["groups"].items():
            if g["cost_usd"] > 0:
                want[(time.strftime("%Y-%m-%d", time.gmtime(d0)), team)] = g["cost_usd"]
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    for k, v in want.items():
        assert abs(got[k] - v) < 0.005, (k, got[k], v)
    hours = sum(num(r["ConsumedQuantity"]) for r in rows if r["x_CostKind"] == "usage")
    assert abs(hours - report["total"]["gpu_hours"]) < 1e-4
    for r in rows:  # no discounts: every cost column agrees, and ListCost = price x quantity
        assert r["BilledCost"] == r["EffectiveCost"] == r["ListCost"] == r["ContractedCost"]
        assert r["BillingCurrency"] == report["currency"]
        if r["ListUnitPrice"]:
            assert abs(num(r["ListUnitPrice"]) * num(r["PricingQuantity"]) -
                       num(r["ListCost"])) < 1e-6


def test_plain_csv_totals_and_rfc4180(cli, report):
    raw = subprocess.run([cli.path, "export", *DUMPS, "--window", WINDOW, "--format", "csv"],
                         capture_output=True, check=True, cwd=str(REPO)).stdout
    assert raw.count(b"\r\n") == raw.count(b"\n") > 1, "RFC 4180 lines end in CRLF"
    rows = rows_of(raw.decode())
    usage = sum(num(r["cost"]) for r in rows if r["kind"] == "usage")
    assert round(usage, 2) == round(report["total"]["cost_usd"], 2)
    assert {r["kind"] for r in rows} == {"usage", "idle"}


def test_every_usage_row_names_its_workload(cli):
    """Spend per workload from the export equals analyze --by workload, in CSV and in FOCUS
    (1.2 Tags, 1.3 and 1.4 AllocatedTags)."""
    want = cli.ok("analyze", *DUMPS, "--window", WINDOW, "--by", "workload", "--format",
                  "json").json()
    truth = {g["keys"]["workload"]: g["cost_usd"] for g in want["groups"]}
    got = {"csv": defaultdict(float), "1.2": defaultdict(float), "1.3": defaultdict(float),
           "1.4": defaultdict(float)}
    for r in export(cli, "--format", "csv"):
        if r["kind"] == "usage":
            assert r["workload"], r
            got["csv"][r["workload"]] += num(r["cost"])
    for ver, col in (("1.2", "Tags"), ("1.3", "AllocatedTags"), ("1.4", "AllocatedTags")):
        for r in export(cli, "--focus-version", ver):
            if r["x_CostKind"] == "usage":
                got[ver][json.loads(r[col])["gpu-cost/workload"]] += num(r["BilledCost"])
    assert len(truth) > 5
    for ver, g in got.items():
        assert set(g) == set(truth), ver
        for wl, cost in truth.items():
            assert abs(g[wl] - cost) < 0.005, (ver, wl, g[wl], cost)


@pytest.mark.parametrize("fmt", [["--format", "csv"], ["--focus-version", "1.3"],
                                 ["--focus-version", "1.2"], ["--focus-version", "1.4"]])
def test_proportional_bills_add_up_to_capacity(cli, report, cluster, fmt):
    """Every team's bill with its share of idle and unattributed spend adds up to capacity."""
    rows = rows_of(cli.ok("export", *DUMPS, "--window", WINDOW, "--share-idle",
                          "proportional", *fmt).out)
    kind = "kind" if "kind" in rows[0] else "x_CostKind"
    cost = "cost" if "cost" in rows[0] else "BilledCost"
    bills = defaultdict(float)
    for r in rows:
        assert r[kind] in ("usage", "shared"), r  # nothing left unshared
        team = r.get("team")
        if team is None:
            tags = json.loads(r.get("AllocatedTags") or r["Tags"])
            team = tags["gpu-cost/team"]
        assert team != "__unattributed__"
        bills[team] += num(r[cost])
    assert round(sum(bills.values()), 2) == round(report["capacity"]["cost_usd"], 2)
    assert round(report["total"]["cost_usd"] + report["idle"]["cost_usd"], 2) == \
        round(report["capacity"]["cost_usd"], 2)
    # Proportional, computed here from the truth: each day (a charge period) and node, the
    # node's idle and unattributed cost goes to the teams in proportion to their attributed
    # spend that day (docs/export.md, Chargeback), so a team that spent more pays more of it.
    want = defaultdict(float)
    for d0, d1 in days():
        w = cluster.compute(d0, d1, by=("team",))
        spend = {t: g["cost_usd"] for (t,), g in w["groups"].items()
                 if t != "__unattributed__" and g["cost_usd"] > 0}
        # The pool: idle and the spend no team is known for (a known team with an unknown
        # project pays its own).
        pool = w["idle"]["cost_usd"] + sum(g["cost_usd"] for (t,), g in w["groups"].items()
                                           if t == "__unattributed__")
        for t, v in spend.items():
            want[t] += v + (pool * v / sum(spend.values()) if spend else 0)
    assert set(bills) == set(want)
    for t, v in want.items():
        assert abs(bills[t] - v) < 0.01, (t, bills[t], v)


def test_weights_share_by_fixed_weights(cli, tmp_path, report):
    cfg = json.loads(open("examples/config.json").read())
    teams = sorted(g["keys"]["team"] for g in report["groups"]
                   if g["keys"]["team"] != "__unattributed__")
    cfg["chargeback"] = {"mode": "weights", "weights": {teams[0]: 3, teams[1]: 1}}
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    args = [a if a != "examples/config.json" else str(p) for a in DUMPS]
    rows = rows_of(cli.ok("export", *args, "--window", WINDOW, "--format", "csv").out)
    shared = defaultdict(float)
    for r in rows:
        if r["kind"] == "shared":
            shared[r["team"]] += num(r["cost"])
    assert set(shared) == {teams[0], teams[1]}
    # Every day both spent, so the split is 3:1 overall.
    assert shared[teams[0]] == pytest.approx(3 * shared[teams[1]], rel=1e-9)
    total = sum(num(r["cost"]) for r in rows)
    assert round(total, 2) == round(report["capacity"]["cost_usd"], 2)


def test_focus13_split_allocation_columns(cli):
    for share in ("none", "proportional"):
        rows = export(cli, "--focus-version", "1.3", "--share-idle", share)
        origin = defaultdict(float)
        for r in rows:
            assert r["AllocatedMethodId"], r  # every row is an allocated charge of a node
            d = json.loads(r["AllocatedMethodDetails"])
            assert isinstance(d, dict) and isinstance(d["Elements"], list) and d["Elements"]
            for e in d["Elements"]:
                assert isinstance(e["AllocatedRatio"], (int, float))
                if "UsageQuantity" in e:
                    assert isinstance(e["UsageUnit"], str) and e["UsageUnit"]
            origin[(r["ResourceId"], r["ChargePeriodStart"])] += sum(
                e["AllocatedRatio"] for e in d["Elements"])
            tags = json.loads(r["Tags"])
            if r["x_CostKind"] == "idle":  # the unallocated portion
                assert r["AllocatedResourceId"] == "" and r["AllocatedTags"] == ""
            else:
                assert r["AllocatedResourceId"] and r["AllocatedResourceName"]
                at = json.loads(r["AllocatedTags"])
                assert isinstance(at, dict) and not set(at) & set(tags)
                assert "gpu-cost/team" in at
        for k, v in origin.items():
            assert v == pytest.approx(1.0, abs=1e-6), k


def test_hourly_periods_are_utc_hours_cut_to_the_window(cli):
    out = cli.ok("export", *DUMPS, "--window", "2026-11-20T10:30:00Z,2026-11-20T13:00:00Z",
                 "--granularity", "hourly", "--format", "csv").out
    periods = sorted({(r["period_start"], r["period_end"]) for r in rows_of(out)})
    assert periods == [("2026-11-20T10:30:00Z", "2026-11-20T11:00:00Z"),
                       ("2026-11-20T11:00:00Z", "2026-11-20T12:00:00Z"),
                       ("2026-11-20T12:00:00Z", "2026-11-20T13:00:00Z")]


@pytest.mark.parametrize("args,flag", [
    (["--format", "xlsx"], "--format"),
    (["--granularity", "weekly"], "--granularity"),
    (["--focus-version", "1.5"], "--focus-version"),
    (["--focus-version", "1"], "--focus-version"),
    (["--share-idle", "all"], "--share-idle"),
    (["--share-idle", "weights"], "--share-idle"),  # no weights configured
    (["--format", "csv", "--focus-version", "1.2"], "--focus-version"),
    (["--window", "2026-11-23T00:00:00Z,2026-11-16T00:00:00Z"], "--window"),
])
def test_bad_flags_exit_2_naming_the_flag(cli, args, flag):
    r = cli("export", *DUMPS, "--window", WINDOW, *args)
    assert r.code == 2, r
    assert flag in r.err, r


def test_remote_export_matches_the_api(cli, tmp_path):
    demo = Demo(_controller_path(cli), tmp_path)
    try:
        status, body = demo.get("/api/v1/export/focus", window="7d", focus_version="1.2")
        assert status == 200
        r = cli.ok("export", "--server", demo.url, "--window", "7d", "--focus-version", "1.2")
        assert r.out == body.decode().replace("\r\n", "\n")  # text mode reads CRLF as LF
        # FOCUS 1.4 over the API: ProviderName and PublisherName gone, its own columns there.
        status, body = demo.get("/api/v1/export/focus", window="7d", focus_version="1.4")
        assert status == 200
        header = body.decode().split("\r\n", 1)[0].split(",")
        assert "ProviderName" not in header and "PublisherName" not in header
        assert "InvoiceDetailId" in header and "CommitmentProgramEligibilityDetails" in header
        costs = demo.json("/api/v1/costs", window="7d", by="team")
        rows = rows_of(r.out)
        usage = sum(num(x["BilledCost"]) for x in rows if x["x_CostKind"] == "usage")
        assert round(usage, 2) == round(costs["total"]["cost_usd"], 2)
        # Proportional over the API: every team's bill adds up to the capacity cost.
        status, body = demo.get("/api/v1/export/csv", window="7d", share_idle="proportional")
        assert status == 200
        rows = rows_of(body.decode())
        assert round(sum(num(x["cost"]) for x in rows), 2) == \
            round(costs["capacity"]["cost_usd"], 2)
        for params, name in [({"granularity": "monthly"}, "granularity"),
                             ({"share_idle": "x"}, "share_idle"),
                             ({"focus_version": "2"}, "focus_version"),
                             ({"window": "nonsense"}, "window"),
                             ({"bogus": "1"}, "bogus")]:
            status, body = demo.get("/api/v1/export/focus", **params)
            assert status == 400, (params, body)
            assert json.loads(body)["parameter"] == name
        bad = cli("export", "--server", demo.url, "--granularity", "weekly")
        assert bad.code == 2 and "--granularity" in bad.err
    finally:
        demo.proc.terminate()
        demo.proc.wait(timeout=10)


def test_api_costs_share_idle(cli, tmp_path):
    demo = Demo(_controller_path(cli), tmp_path)
    try:
        plain = demo.json("/api/v1/costs", window="7d", by="team,project")
        assert "chargeback" not in plain and "charged_usd" not in plain["groups"][0]
        for by in ("team", "team,project", "namespace,team"):
            d = demo.json("/api/v1/costs", window="7d", by=by, share_idle="proportional")
            cb = d["chargeback"]
            assert cb["mode"] == "proportional"
            bills = sum(g["charged_usd"] for g in d["groups"])
            assert round(bills, 2) == round(cb["charged_usd"], 2) == \
                round(d["capacity"]["cost_usd"], 2)
            assert round(cb["shared_usd"], 2) == round(
                d["idle"]["cost_usd"] + sum(g["cost_usd"] for g in d["groups"]
                                            if g["keys"]["team"] == "__unattributed__"), 2)
            spent = {}
            for g in d["groups"]:
                if g["keys"]["team"] != "__unattributed__":
                    spent[g["keys"]["team"]] = spent.get(g["keys"]["team"], 0) + g["cost_usd"]
            total = sum(spent.values())
            for g in d["groups"]:  # proportional: shared / cost is the same for every group
                if g["keys"]["team"] != "__unattributed__" and g["cost_usd"] > 0:
                    assert g["shared_usd"] / g["cost_usd"] == pytest.approx(
                        cb["shared_usd"] / total, rel=1e-9)
        stepped = demo.json("/api/v1/costs", window="2d", step="1d", by="team",
                            share_idle="proportional")
        for s in stepped["sets"]:
            assert round(s["chargeback"]["charged_usd"], 2) == round(s["capacity"]["cost_usd"], 2)
        for params in ({"share_idle": "half"}, {"share_idle": "proportional", "by": "model"},
                       {"share_idle": "proportional", "team": "ml"},
                       {"share_idle": "weights"}):
            status, body = demo.get("/api/v1/costs", window="7d", **params)
            assert status == 400, (params, body)
            assert json.loads(body)["parameter"] == "share_idle"
    finally:
        demo.proc.terminate()
        demo.proc.wait(timeout=10)


def test_report_chargeback_section_adds_up(cli):
    plain = cli.ok("demo", "--format", "json").json()
    assert "chargeback" not in plain  # nothing configured: the report is as before
    d = cli.ok("demo", "--format", "json", "--share-idle", "proportional").json()
    cb = d["chargeback"]
    assert cb["mode"] == "proportional"
    assert round(sum(t["charged_usd"] for t in cb["teams"]), 2) == \
        round(cb["capacity_cost_usd"], 2) == round(d["summary"]["capacity"]["cost_usd"], 2)
    md = cli.ok("demo", "--share-idle", "proportional").out
    section = md.split("## Chargeback (proportional)", 1)[1].split("\n## ", 1)[0]
    cells = [[c.strip() for c in line.strip("|").split("|")]
             for line in section.splitlines() if line.startswith("| ")]
    money = lambda s: float(s.strip("*").replace("$", "").replace(",", ""))  # noqa: E731
    body = [c for c in cells[1:] if not c[0].startswith(("**", "-"))]
    total = [c for c in cells if c[0] == "**Total**"][0]
    for col in (1, 2, 3):  # every column adds up to its total line, to the cent
        assert round(sum(money(c[col]) for c in body), 2) == money(total[col])
    assert money(total[3]) == round(cb["capacity_cost_usd"], 2)
    r = cli("demo", "--share-idle", "weights")
    assert r.code == 2 and "--share-idle" in r.err


def test_allocation_share_idle_adds_up_to_capacity(cli, tmp_path):
    """OpenCost's shareIdle on /allocation: every tenant's totalCost adds up to capacity."""
    demo = Demo(_controller_path(cli), tmp_path)
    try:
        costs = demo.json("/api/v1/costs", window="7d", by="team")
        for extra in ({}, {"idleByNode": "true"}):
            d = demo.json("/allocation", window="7d", aggregate="label:team", shareIdle="true",
                          **extra)
            allocs = d["data"][0]
            total = sum(a["totalCost"] for a in allocs.values())
            assert round(total, 2) == round(costs["capacity"]["cost_usd"], 2), extra
            # Idle goes to the tenants; per node, a node no tenant used keeps its own line.
            unshared = [a["totalCost"] for n, a in allocs.items() if n.endswith("__idle__")]
            if not extra:
                assert not unshared
            assert sum(a["gpuCostIdle"] for a in allocs.values()) + sum(unshared) == \
                pytest.approx(costs["idle"]["cost_usd"], abs=0.01)
    finally:
        demo.proc.terminate()
        demo.proc.wait(timeout=10)


def _rss_kib(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _raw_get(port, path):
    """A GET on a socket of its own whose answer is not read (a client that stalls)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
    return s


def test_api_export_is_streamed(cli, tmp_path):
    """The API export is made while it is sent (chunked, by a thread of its own): any window,
    the body equal to what the CLI gets, HEAD computes nothing, clients that stall hold at most
    two exports (a third is a 503 naming the retry) and no memory beyond a few pieces each, and
    a client that goes away frees its export."""
    demo = Demo(_controller_path(cli), tmp_path)
    big = "/api/v1/export/focus?window=400d&granularity=hourly"
    try:
        with urllib.request.urlopen(demo.url + big, timeout=30) as r:
            assert r.status == 200
            assert r.headers.get("Transfer-Encoding") == "chunked"
            assert r.headers.get("Content-Length") is None
            assert r.headers.get("ETag") is None  # made as it is sent: never cached
            body = r.read()
        rows = rows_of(body.decode())
        assert len(rows) > 10000
        again = cli.ok("export", "--server", demo.url, "--window", "400d", "--granularity",
                       "hourly").out
        assert again == body.decode().replace("\r\n", "\n")
        req = urllib.request.Request(demo.url + big, method="HEAD")
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200 and r.headers.get_content_type() == "text/csv"
            assert r.read() == b""

        base = _rss_kib(demo.proc.pid)
        stalled = [_raw_get(demo.port, big) for _ in range(2)]
        time.sleep(1.0)
        status, err = demo.get("/api/v1/export/csv", window="400d", granularity="hourly")
        assert status == 503, (status, err[:200])
        assert "too many exports" in json.loads(err)["error"]
        # Two exports wait on clients that do not read: each holds a few pieces, not its body.
        assert _rss_kib(demo.proc.pid) - base < 4 * 1024, (base, _rss_kib(demo.proc.pid))
        status, _ = demo.get("/api/v1/costs", window="7d")
        assert status == 200  # the server's thread is not held by them
        for s in stalled:
            s.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            status, _ = demo.get("/api/v1/export/csv", window="7d")
            if status == 200:
                break
            time.sleep(0.2)
        assert status == 200, "the exports of closed connections were not released"
    finally:
        demo.proc.terminate()
        demo.proc.wait(timeout=10)


# ---- label dimensions (labels.dimensions) ------------------------------------------------------

# The example week's export with no label keys kept, as it was before label keys reached the
# export: keeping none must leave it byte for byte (a change meant to alter it updates these;
# they were last updated when 1.3 gained the conditional columns the official 1.3 rules check,
# after its 44 columns, which kept their bytes).
NO_KEYS_SHA256 = {
    ("--format", "csv"):
        "47a5e73d9f7d4d94653f8b10defa6191ee25dc47b36e124f3616c48a25b1ae10",
    ("--focus-version", "1.2"):
        "8959d3b7c9cb1aa5a8720fd6fcbe74d7ef3067d2aec793942f5fb8671efa54ce",
    ("--focus-version", "1.3"):
        "f94c0e8e95313ca86329ca4596fa5ce27a07e50a832efcf0ff04df12b6b82230",
    ("--focus-version", "1.4"):
        "e16bea5c11bca5657d1bcd93d64d0ef0bfe1f7cb87504c086d77388848ce5093",
    ("--format", "csv", "--granularity", "hourly", "--share-idle", "proportional"):
        "35ae6b63986455c9c8a6df2ac51b5fbfd276cd760709ced5bf0d190f49945fb9",
}


@pytest.mark.parametrize("args", list(NO_KEYS_SHA256))
def test_no_label_keys_export_is_unchanged(cli, args):
    import hashlib
    raw = subprocess.run([cli.path, "export", *DUMPS, "--window", WINDOW, *args],
                         capture_output=True, check=True, cwd=str(REPO)).stdout
    assert hashlib.sha256(raw).hexdigest() == NO_KEYS_SHA256[args]


LABEL_KEYS = ["cost-center", "app"]


@pytest.fixture(scope="module")
def labelled_config(tmp_path_factory):
    cfg = json.loads((REPO / "examples" / "config.json").read_text())
    cfg["labels"] = {"dimensions": LABEL_KEYS}
    path = tmp_path_factory.mktemp("labels") / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def export_labelled(cli, config, *args):
    dumps = [config if a == "examples/config.json" else a for a in DUMPS]
    return rows_of(cli.ok("export", *dumps, "--window", WINDOW, *args).out)


def test_label_values_per_row_add_up_to_analyze_by_label(cli, labelled_config, report):
    """Each kept key's spend from the export (CSV column label:<key>, 1.2 Tags, 1.3
    AllocatedTags by the key itself) is analyze --by label:<key>'s, and the totals are still the
    report's to the cent."""
    plain_csv = export(cli, "--format", "csv")
    for key in LABEL_KEYS:
        want = cli.ok("analyze", *DUMPS, "--window", WINDOW, "--by", "label:" + key,
                      "--format", "json").json()
        truth = {g["keys"]["label:" + key]: g["cost_usd"] for g in want["groups"]}
        got = {"csv": defaultdict(float), "1.2": defaultdict(float), "1.3": defaultdict(float),
           "1.4": defaultdict(float)}
        rows = export_labelled(cli, labelled_config, "--format", "csv")
        assert list(rows[0])[-2:] == ["label:" + k for k in LABEL_KEYS]
        # Rows split by label values; the example's pods of one workload share their labels,
        # so here no more rows (tests/unit/test_export.c splits one workload's pods).
        assert len(rows) == len(plain_csv)
        for r in rows:
            if r["kind"] == "usage":
                got["csv"][r["label:" + key]] += num(r["cost"])
            else:
                assert r["label:" + key] == ""
        assert round(sum(got["csv"].values()), 2) == round(report["total"]["cost_usd"], 2)
        for ver, col in (("1.2", "Tags"), ("1.3", "AllocatedTags"), ("1.4", "AllocatedTags")):
            frows = export_labelled(cli, labelled_config, "--focus-version", ver)
            usage = 0.0
            for r in frows:
                if r["x_CostKind"] != "usage":
                    continue
                usage += num(r["BilledCost"])
                # A pod without the label carries no tag for it (FOCUS: untagged).
                tags = json.loads(r[col])
                got[ver][tags.get(key, "__unlabelled__")] += num(r["BilledCost"])
                if ver == "1.3":
                    assert not set(tags) & set(json.loads(r["Tags"]))
            assert round(usage, 2) == round(report["total"]["cost_usd"], 2)
        assert "__unlabelled__" in truth and len(truth) > 2
        for ver, g in got.items():
            assert set(g) == set(truth), (ver, key)
            for v, cost in truth.items():
                assert abs(g[v] - cost) < 0.005, (ver, key, v, g[v], cost)


def test_labelled_chargeback_bills_add_up_to_capacity(cli, labelled_config, report):
    rows = export_labelled(cli, labelled_config, "--format", "csv", "--share-idle",
                           "proportional")
    total = sum(num(r["cost"]) for r in rows)
    assert round(total, 2) == round(report["total"]["cost_usd"] + report["idle"]["cost_usd"], 2)
    assert all(r["label:cost-center"] == "" for r in rows if r["kind"] == "shared")


def test_api_export_carries_label_values(cli, tmp_path, labelled_config):
    demo = Demo(_controller_path(cli), tmp_path, extra=["--config", labelled_config])
    try:
        status, body = demo.get("/api/v1/export/csv", window="7d")
        assert status == 200
        rows = rows_of(body.decode())
        assert list(rows[0])[-2:] == ["label:" + k for k in LABEL_KEYS]
        assert any(r["label:cost-center"] not in ("", "__unlabelled__") for r in rows)
        status, body = demo.get("/api/v1/export/focus", window="7d", focus_version="1.2")
        assert status == 200
        assert any("cost-center" in json.loads(r["Tags"]) for r in rows_of(body.decode()))
    finally:
        demo.proc.terminate()
        demo.proc.wait(timeout=10)
