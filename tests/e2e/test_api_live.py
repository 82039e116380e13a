"""The controller's REST API, OpenCost /allocation and /metrics against a real kube-apiserver:
after the eight-day replay (sim.py), what the API serves must equal the independent truth
(truth.py) to 1e-6 GPU-seconds and to the cent, as the report ConfigMaps do; a standby replica
answers 503.
"""

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import e2e_truth as truth
import harness
import periods
from test_controller import Scenario  # noqa: F401  (the same scenario setup)
from test_auth import auth  # noqa: F401  (pytest fixture: controllers with --auth-delegate)
from test_auth import API, request
from test_controller import today_mismatches
from test_controller import scenario  # noqa: F401  (pytest fixture)

USD_TOL = 0.005


def get(c, path, **params):
    url = "http://127.0.0.1:%d%s" % (c.port, path)
    if params:
        url += "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def get_json(c, path, **params):
    status, body = get(c, path, **params)
    assert status == 200, (path, params, status, body[:400])
    return json.loads(body)


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metrics(c):
    """{name: [(labels dict, value)]} of one /metrics answer."""
    status, body = get(c, "/metrics")
    assert status == 200, body[:400]
    out = {}
    for line in body.decode().splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        labels = dict(LABEL.findall(m.group(2) or ""))
        out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def test_api_equals_truth(scenario):  # noqa: F811
    s = scenario
    c = s.controller(extra=["--snapshot-interval", "1s"]).start()
    c.wait_ready()
    s.replay.run()
    t = s.truth()
    # Every event is applied: the reports and today per team and project equal the truth.
    harness.wait_reports(s.cluster, t, controller=c)
    bad = harness.settle(lambda: today_mismatches(s, c, t, pods=False))
    assert not bad, "\n".join(bad[:20])
    now = time.time()
    periods = t.complete_days(now) + t.complete_weeks(now)
    assert len(periods) >= 8, periods
    bad = []
    for name, start, end in periods:
        doc = get_json(c, "/api/v1/costs", window="%s,%s" % (rfc3339(start), rfc3339(end)),
                       by="team,project")
        bad += harness.compare_summary("/api/v1/costs " + name, doc, t.window(start, end))
    assert not bad, "\n".join(bad[:60])

    # A stepped answer: one summary per day of the last complete week, each equal to its day.
    name, start, end = t.complete_weeks(now)[-1]
    doc = get_json(c, "/api/v1/costs", window="%s,%s" % (rfc3339(start), rfc3339(end)),
                   by="team,project", step="1d")
    assert len(doc["sets"]) == 7
    for d in doc["sets"]:
        ds, de = harness._utc(d["window"]["start"]), harness._utc(d["window"]["end"])
        bad += harness.compare_summary("step " + d["window"]["start"], d, t.window(ds, de))
    assert not bad, "\n".join(bad[:60])

    # OpenCost /allocation: per namespace, the GPU cost of the week adds up to the truth's.
    alloc = get_json(c, "/allocation", window="%s,%s" % (rfc3339(start), rfc3339(end)),
                     aggregate="namespace")
    assert alloc["code"] == 200, alloc
    sets = alloc["data"]
    assert len(sets) == 1
    tw = t.window(start, end)
    got = sum(a["gpuCost"] for k, a in sets[0].items() if k != "__idle__")
    assert abs(got - tw["total"]["cost_usd"]) <= USD_TOL, (got, tw["total"])
    got_h = sum(a["gpuHours"] for k, a in sets[0].items() if k != "__idle__")
    assert abs(got_h * 3600 - tw["total"]["gpu_seconds"]) <= 0.1, (got_h, tw["total"])

    # /metrics: the cost counters, per team and project, count from the moment the counters
    # started (the controller's start) to the snapshot's (pods still running accrue to it).
    # The truth runs to the exact snapshot time the counters stand for, as printed (the
    # controller's snapshots are taken on whole seconds: a fraction would be a finding).
    # Compared until a snapshot agrees: one taken just before a live pod's deletion reached the
    # controller still counts that pod up to the snapshot (the truth ends it at the delete).
    seen = {}

    def metrics_mismatches():
        m = seen["m"] = metrics(c)
        snap = m["gpu_cost_snapshot_timestamp_seconds"][0][1]
        since = m["gpu_cost_counters_start_time_seconds"][0][1]
        assert snap == int(snap) and since == int(since), (snap, since)
        assert abs(snap - time.time()) < 10, snap
        assert since <= snap and abs(since - time.time()) < 600, since
        th = t.window(since, snap, now=snap)
        assert th["total"]["cost_usd"] > 0.01, "pods still run: the counters must have grown"
        cost, hours, out = {}, {}, []
        for labels, v in m.get("gpu_cost_usd_total", []):
            k = (labels.get("team"), labels.get("project"))
            cost[k] = cost.get(k, 0.0) + v
        for labels, v in m.get("gpu_cost_gpu_hours_total", []):
            k = (labels.get("team"), labels.get("project"))
            hours[k] = hours.get(k, 0.0) + v
        for k in sorted(set(cost) | set(th["groups"]), key=str):
            w = th["groups"].get(k, {"gpu_seconds": 0.0, "cost_usd": 0.0})
            if abs(cost.get(k, 0.0) - w["cost_usd"]) > USD_TOL or \
                    abs(hours.get(k, 0.0) * 3600 - w["gpu_seconds"]) > 1e-3:
                out.append("/metrics %s/%s: $%r %r GPU-h, truth $%r %r GPU-h" % (
                    k[0], k[1], cost.get(k), hours.get(k), w["cost_usd"], w["gpu_seconds"] / 3600))
        return out

    bad = harness.settle(metrics_mismatches)
    m = seen["m"]
    assert not bad, "\n".join(bad[:60])
    assert all(lab.get("cluster") == harness_cluster() for lab, _ in m["gpu_cost_usd_total"])
    assert m["gpu_cost_ready"][0][1] == 1 and m["gpu_cost_leader"][0][1] == 1
    assert m["gpu_cost_demo"][0][1] == 0
    assert sum(v for _, v in m["gpu_cost_checkpoint_errors_total"]) == 0
    assert sum(v for _, v in m["gpu_cost_report_writes_total"]) >= len(periods)
    # OpenCost's node_gpu_hourly_cost: every GPU node present, at the truth's price, with the
    # instance type its labels name.
    present = {n.name: n for n in t.nodes.values() if n.deleted_at is None}
    prices = {lab["node"]: (lab, v) for lab, v in m["node_gpu_hourly_cost"]}
    assert set(prices) == set(present), (sorted(prices), sorted(present))
    for name, n in present.items():
        lab, v = prices[name]
        assert abs(v - n.price) < 1e-9, (name, v, n.price)
        it = n.labels.get("node.kubernetes.io/instance-type") or \
            n.labels.get("beta.kubernetes.io/instance-type") or ""
        assert lab.get("instance_type", "") == it, (name, lab, it)
    # One per watched kind that has had an event: the replay's Deployment and Jobs give
    # ReplicaSets and Jobs theirs; no DRA object exists here.
    pods = {lab["resource"]: v for lab, v in m["gpu_cost_last_event_age_seconds"]}
    assert set(pods) == {"namespaces", "nodes", "pods", "replicasets", "jobs"}, pods

    # /api/v1/pods: every pod the ledger still holds by interval, priced as the truth prices it.
    doc = get_json(c, "/api/v1/pods", limit="100000")
    by_name = {u.name: u for u in t.usages}
    assert doc["pods"], doc
    for p in doc["pods"]:
        u = by_name.get("%s/%s" % (p["namespace"], p["name"]))
        assert u is not None, p
        assert (p["team"], p["project"]) == (u.team, u.project), (p, u.team, u.project)
        assert abs(p["usd_per_gpu_hour"] - u.price) < 1e-9, (p, u.price)
        assert abs(p["geq"] - u.geq) < 1e-9, (p, u.geq)
        assert harness._utc(p["start"]) == u.start, (p, u.start)
    assert c.stop() == 0


def test_standby_answers_503(scenario):  # noqa: F811
    """A replica without the lease serves no figures: its API answers 503 like its /readyz
    (the Service sends it no traffic), while /healthz stays 200."""
    s = scenario
    lease = ["--lease-duration", "8s"]
    a = s.controller("gpu-cost-a", lease).start()
    a.wait_ready()
    b = s.controller("gpu-cost-b", lease).start()
    deadline = time.time() + 30
    while time.time() < deadline:
        if any(r.get("msg", "").startswith("standby") for r in b.log_records()):
            break
        time.sleep(0.2)
    else:
        raise AssertionError("b never became a standby:\n%s" % harness.tail(b.log_path))
    deadline = time.time() + 10
    while get(a, "/api/v1/costs")[0] != 200 and time.time() < deadline:
        time.sleep(0.2)
    assert get(a, "/api/v1/costs")[0] == 200
    for path in ("/api/v1/costs", "/metrics", "/allocation?window=1d"):
        status, body = get(b, path)
        assert status == 503, (path, status, body[:300])
    assert get(b, "/readyz")[0] == 503
    assert get(b, "/healthz")[0] == 200


def harness_cluster():
    """The cluster name the e2e configuration gives the controller (metrics' cluster label)."""
    cfg = json.loads(harness.CONFIG.read_text())
    return cfg.get("cluster") or "default"


assert truth  # the registered e2e truth module (conftest.py)


def test_remote_cli_with_delegated_auth(auth, controller_bin, tmp_path):  # noqa: F811
    """`gpu-cost costs --server` against a controller that has the API server check callers
    (resource mode): no token is a 401 with the server's message, a token without the grant a
    403, the reader's token (from a file) the API's answer."""
    cli = os.environ.get("GPU_COST") or str(controller_bin.with_name("gpu-cost"))
    if not os.access(cli, os.X_OK):
        if os.environ.get("E2E_REQUIRE") == "1":
            raise AssertionError("%s is missing: build it or set GPU_COST" % cli)
        import pytest
        pytest.skip("%s is missing" % cli)
    port = auth["res"].port
    url = "http://127.0.0.1:%d" % port
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_COST_")}

    def run(*args):
        return subprocess.run([cli, "costs", "--server", url, "--window", "7d", "--format",
                               "json"] + list(args), capture_output=True, text=True, env=env,
                              timeout=60)

    r = run()
    assert r.returncode == 1 and "401" in r.stderr and "bearer token" in r.stderr, r.stderr
    r = run("--token", auth["outsider"])
    assert r.returncode == 1 and "403" in r.stderr and "forbidden" in r.stderr, r.stderr
    assert auth["outsider"] not in r.stderr
    tok = tmp_path / "token"
    tok.write_text(auth["reader"] + "\n")
    r = run("--token-file", str(tok))
    assert r.returncode == 0, r.stderr
    status, _, body = request(port, API + "?window=7d&by=team%2Cproject", token=auth["reader"])
    assert status == 200
    assert json.loads(r.stdout) == json.loads(body)
    r = subprocess.run([cli, "costs", "--server", url, "--format", "json"], capture_output=True,
                       text=True, timeout=60, env=dict(env, GPU_COST_TOKEN=auth["reader"]))
    assert r.returncode == 0 and json.loads(r.stdout) == json.loads(body), r.stderr


def test_api_by_label_equals_truth(scenario, tmp_path):  # noqa: F811
    """Label dimensions (labels.dimensions): every complete day and week by label:project and
    label:cost-center (the pod's label, else its namespace's, else __unlabelled__) equals the
    truth, folded history included, before and after a restart restores them from the
    checkpoint (version 7/8); /allocation aggregates by the label's real values."""
    s = scenario
    cfg = json.loads(harness.CONFIG.read_text())
    cfg["labels"] = {"dimensions": ["project", "cost-center"]}
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(cfg))

    def controller():
        c = harness.Controller(s.binary, s.cluster, s.logdir / "labels.log", config=path,
                               extra=["--snapshot-interval", "1s"])
        s.controllers.append(c)
        return c.start()

    c = controller()
    c.wait_ready()
    s.replay.run()
    t = s.truth()
    harness.wait_reports(s.cluster, t, controller=c)
    bad = harness.settle(lambda: today_mismatches(s, c, t, pods=False))
    assert not bad, "\n".join(bad[:20])
    record = s.replay.record()

    def truth_by(key, start, end):
        return periods.label_costs(t, record, key, start, end)

    now = time.time()
    complete = t.complete_days(now) + t.complete_weeks(now)
    assert len(complete) >= 8, complete

    def check(c, when):
        """What differs from the truth, label by label, in every complete period."""
        bad = []
        for name, start, end in complete:
            win = "%s,%s" % (rfc3339(start), rfc3339(end))
            for key in ("project", "cost-center"):
                doc = get_json(c, "/api/v1/costs", window=win, by="label:" + key)
                got = {g["keys"]["label:" + key]: g["cost_usd"] for g in doc["groups"]}
                want = truth_by(key, start, end)
                if set(got) != set(want) or any(abs(got[v] - w) > USD_TOL
                                                for v, w in want.items()):
                    bad.append("%s %s by label:%s: %s != %s" % (when, name, key, got, want))
        return bad

    bad = check(c, "live")
    assert not bad, "\n".join(bad[:20])
    # The complete days together: the MIG-single spot node that runs cc-4410's pods joins 2.5
    # days into the replay, so a complete ISO week may hold none of them late in the week,
    # while the complete days always hold all but its last day (test_calendar.py).
    start, end = periods.complete_day_span(t, now)
    alloc = get_json(c, "/allocation", window="%s,%s" % (rfc3339(start), rfc3339(end)),
                     aggregate="label:cost-center")
    (data,) = alloc["data"]
    want = truth_by("cost-center", start, end)
    assert "cc-4410" in want, want
    assert abs(data["cc-4410"]["gpuCost"] - want["cc-4410"]) <= USD_TOL
    assert data["cc-4410"]["properties"]["labels"] == {"cost-center": "cc-4410"}
    status, body = get(c, "/api/v1/costs", by="label:team")
    assert status == 400 and b"kept: project, cost-center" in body, body

    # A restart restores the label values from the checkpoint.
    c.stop()
    c = controller()
    c.wait_ready()
    bad = harness.settle(lambda: check(c, "restored"))
    assert not bad, "\n".join(bad[:20])
