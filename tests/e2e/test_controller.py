"""The controller against a real kube-apiserver: an eight-day replay (sim.py) and the ground
truth computed from it (truth.py), under disruption.

Each scenario gets a fresh cluster (the controller's totals are cluster-wide), applies
deploy/rbac.yaml and runs build/gpu-cost-controller as a subprocess with the controller's own
kubeconfig (the ServiceAccount's token, bound only by the shipped roles), checkpoint and report
intervals of 5 s. Its logs (JSON lines) go to <tmp>/<identity>.log, printed on failure.

Every complete UTC day and ISO week must be reported exactly as the truth says: per team and
project to 1e-6 GPU-seconds and to the cent, plus totals, unattributed, capacity and idle per
node. (Pods deleted in real time all end today, so complete periods never depend on a
deletion's exact moment.)
"""

import json
import os
import signal
import time
import urllib.error
import urllib.request

import pytest

import e2e_truth as truth
import harness
import periods
import sim

CFG = json.loads(harness.CONFIG.read_text())
TEAM_RBAC = harness.HERE / "rbac-team-ml-research.yaml"
LEASE_S = 8          # --lease-duration in the two-replica scenario
TAKEOVER_MARGIN = 6  # a renewal or observation period (2 s each) and scheduling slack


class Scenario:
    def __init__(self, cluster, binary, logdir):
        self.cluster, self.binary, self.logdir = cluster, binary, logdir
        self.replay = sim.Replay(cluster.api, cluster.etcd)
        self.replay.setup()  # namespaces (gpu-cost included) and nodes
        cluster.apply(harness.RBAC)
        cluster.apply(TEAM_RBAC)
        cluster.wait_controller_can()
        self.controllers = []

    def controller(self, ident="gpu-cost-0", extra=(), config=harness.CONFIG):
        c = harness.Controller(self.binary, self.cluster, self.logdir / (ident + ".log"),
                               ident=ident, extra=extra, config=config)
        self.controllers.append(c)
        return c

    def truth(self, exclude=None):
        return truth.Truth(self.replay.record(), CFG, exclude)

    def close(self):
        for c in self.controllers:
            c.stop(timeout=10)


@pytest.fixture
def scenario(cluster, controller_bin, tmp_path):
    s = Scenario(cluster, controller_bin, tmp_path)
    yield s
    s.close()
    for c in s.controllers:
        print("controller log %s (last lines):\n%s" % (c.log_path, harness.tail(c.log_path, 30)))
    print("cluster: %s" % cluster.dir)


def wait_checkpoint(cluster, timeout=20):
    """Waits until the controller writes its checkpoint afresh, a second from now (so what
    happened before is in it). False on timeout. Writes alternate between two generations'
    ConfigMaps (docs/checkpoint.md): either one changing counts."""
    time.sleep(1.0)

    def rv():
        out = []
        for name in ("gpu-cost-checkpoint", "gpu-cost-checkpoint-g1"):
            status, doc = cluster.api.request(
                "GET", "/api/v1/namespaces/%s/configmaps/%s" % (harness.NS, name))
            out.append(doc["metadata"]["resourceVersion"] if status == 200 else None)
        return tuple(out) if any(out) else None

    rv0 = rv()
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = rv()
        if r is not None and r != rv0:
            return True
        time.sleep(0.25)
    return False


def check_documents(s, t, reports):
    """Every report parses and stays under 1 MiB; complete periods' report.md names the
    total; the -latest copies equal the newest complete period's report."""
    now = reports.now  # the periods that were complete when the reports were checked
    for r in reports.values():
        assert r.size < harness.MIB, "%s: %d bytes" % (r.name, r.size)
        assert r.error is None, (r.name, r.error)
        assert r.md, "%s: no report.md" % r.name
    for name, start, end in t.complete_days(now) + t.complete_weeks(now):
        r = reports[name]
        total = r.json["summary"]["total"]["cost_usd"]
        assert harness.money(total) in r.md, "%s: report.md does not name the total %s" % (
            name, harness.money(total))
        assert r.json.get("kind") in ("daily", "weekly"), name
    days, weeks = t.complete_days(now), t.complete_weeks(now)
    want = {"gpu-cost-report-daily-latest": days[-1][0]}
    if weeks:
        want["gpu-cost-report-weekly-latest"] = weeks[-1][0]
    deadline = time.time() + 30
    while True:
        reports = harness.read_reports(s.cluster)
        diff = [k for k, v in want.items()
                if k not in reports or reports[k].json != reports[v].json]
        if not diff or time.time() > deadline:
            break
        time.sleep(1)
    assert not diff, "-latest copies differ from %s" % {k: want[k] for k in diff}


def check_team_copy(s, t):
    """report.team_namespaces maps vision -> ml-research: the weekly-latest copy there holds
    vision's groups of the newest complete week, exactly."""
    weeks = t.complete_weeks(time.time())
    if not weeks:
        return
    name, start, end = weeks[-1]
    deadline = time.time() + 30
    while True:
        rep = harness.read_reports(s.cluster, "ml-research").get("gpu-cost-report-weekly-latest")
        bad = ["missing"] if rep is None else (
            [rep.error] if rep.error else
            harness.compare_summary("ml-research copy of " + name, rep.json["summary"],
                                    t.window(start, end), only_team="vision"))
        if not bad or time.time() > deadline:
            break
        time.sleep(1)
    assert not bad, "\n".join(bad)
    teams = {g["keys"].get("team") for g in rep.json["summary"]["groups"]}
    assert teams == {"vision"}, teams
    assert rep.size < harness.MIB


def check_logs(s):
    """JSON lines, and never a token."""
    env = s.cluster.env
    for c in s.controllers:
        text = c.log_path.read_text(errors="replace")
        for tok in (env["E2E_CONTROLLER_TOKEN"], env["E2E_ADMIN_TOKEN"]):
            assert tok not in text, "%s: a bearer token is in the log" % c.log_path
        assert c.log_records(), "%s: no JSON log lines" % c.log_path


def _get_json(c, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (c.port, path), timeout=10) as r:
        return json.loads(r.read())


def today_mismatches(s, c, t, pods=True):
    """Today so far (up to a moment the latest snapshot has passed), per team and project and
    (unless `pods` is false) per pod, through /api/v1/costs, against the truth. Per pod from
    the whole hour five hours back at most: pods that ended longer ago than --fold-after
    (6 h by default) are folded into hourly rows, which name only the costliest pods, and
    whether today reaches that far depends on the hour the test runs."""
    end = int(time.time()) - 3
    start = truth.floor_day(end)
    if end - start < 600:  # just past midnight: take yesterday too
        start -= truth.DAY
    win = "%s,%s" % (sim.rfc3339(start), sim.rfc3339(end))
    bad = harness.compare_summary("today", _get_json(
        c, "/api/v1/costs?window=%s&by=team,project" % win), t.window(start, end))
    if not pods:
        return bad
    start = max(start, (end - 5 * 3600) // 3600 * 3600)
    win = "%s,%s" % (sim.rfc3339(start), sim.rfc3339(end))
    want = {}
    for u in t.usages:
        e = end if u.end is None else min(u.end, end)
        sec = max(0, e - max(u.start, start))
        if sec > 0:
            want[u.name] = want.get(u.name, 0.0) + u.geq * sec
    got = {}
    doc = _get_json(c, "/api/v1/costs?window=%s&by=namespace,pod" % win)
    for g in doc.get("groups", []):
        k = g.get("keys", {})
        got["%s/%s" % (k.get("namespace"), k.get("pod"))] = g.get("gpu_seconds", 0.0)
    for name in sorted(set(got) | set(want)):
        if not harness._gs_ok(got.get(name, 0.0), want.get(name, 0.0)):
            bad.append("pod %s: %r GPU-s, truth %r" % (name, got.get(name), want.get(name)))
    return bad


def check_exact(s, c):
    t = s.truth()
    reports = harness.wait_reports(s.cluster, t, controller=c)
    check_documents(s, t, reports)
    bad = harness.settle(lambda: today_mismatches(s, c, t))
    assert not bad, "\n".join(bad[:40])
    return t


# What kube-controller-manager made for the replay (sim.py): the workloads of its pods.
KCM_KINDS = periods.KCM_KINDS


def check_names_in_api(c, t, keep=harness.HISTORY_TOP_N):
    """by=pod and by=workload over every complete day and week name, with the truth's figures,
    the costliest pods and workloads that ran in it, as many as period history keeps (100
    here, `keep`), and sum the rest under __folded__ with exactly the truth's remainder: folded
    history keeps names (docs/ledger.md, period history); a named workload with its pod count.
    Among them the Deployment, Jobs and CronJob kube-controller-manager made for the replay, and
    their pods, by the names they resolve to; the complete weeks hold all three kinds. With
    `keep` above a period's pods, every pod and workload that ran in it is named."""
    now = time.time()
    complete = t.complete_weeks(now) + t.complete_days(now)
    assert complete, "no complete period to ask about"
    kcm_pods = {u.name for u in t.usages if u.workload.startswith(KCM_KINDS)}
    for name, start, end in complete:
        tw = t.window(start, end)
        kcm = {k for k, v in tw["workloads"].items()
               if k.startswith(KCM_KINDS) and v["gpu_seconds"] > 0}
        for by, want, key in (("namespace,pod", tw["pods"],
                               lambda k: "%s/%s" % (k["namespace"], k["pod"])),
                              ("workload", tw["workloads"], lambda k: k["workload"])):
            want = {k: v for k, v in want.items() if v["gpu_seconds"] > 0}
            url = "http://127.0.0.1:%d/api/v1/costs?window=%d,%d&by=%s" % (c.port, start, end, by)
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    doc = json.loads(r.read())
            except urllib.error.HTTPError as e:
                raise AssertionError("%s: %d %s" % (url, e.code, e.read().decode()))
            got = {key(g["keys"]): g for g in doc["groups"]}
            rest = [g for k, g in got.items() if "__folded__" in k]
            named = {k: g for k, g in got.items() if "__folded__" not in k}
            ranked = sorted(want, key=lambda k: -want[k]["cost_usd"])
            # Pods not folded yet (the last hours) are named beside the period's top ones.
            assert min(len(want), keep) <= len(named) <= len(want), (
                name, by, len(named), len(want))
            for k, g in named.items():
                assert k in want, (name, by, k)
                assert harness._gs_ok(g["gpu_seconds"], want[k]["gpu_seconds"]) and \
                    harness._usd_ok(g["cost_usd"], want[k]["cost_usd"]), (name, k, g, want[k])
            if len(ranked) > keep:
                # Nothing left out costs more than the cheapest named (ties either way).
                assert want[ranked[keep]]["cost_usd"] <= \
                    min(g["cost_usd"] for g in named.values()) + harness.USD_ABS, (name, by)
            left = sum(want[k]["cost_usd"] for k in want if k not in named)
            got_left = sum(g["cost_usd"] for g in rest)
            assert abs(got_left - left) <= harness.USD_ABS * max(1, len(want)), (
                name, by, got_left, left)
            if keep >= len(want):
                assert set(named) == set(want) and not rest, (
                    name, by, sorted(set(want) - set(named))[:10], [g["keys"] for g in rest])
            # What kube-controller-manager made, by the names it resolves to, as ranked.
            must = {k for k in ranked[:keep] if k in kcm or k in kcm_pods}
            missing = sorted(must - set(named))
            assert not missing, "%s by=%s: not named: %s" % (name, by, missing)
            if by == "workload":
                for k, g in named.items():
                    assert g.get("pods") == want[k]["pods"], (name, k, g, want[k])
    # The replay starts each kind within its first day, which every set of complete weeks
    # holds whatever the weekday (test_calendar.py).
    week_kinds = periods.week_workload_kinds(t, now)
    assert week_kinds == {"Deployment", "Job", "CronJob"}, week_kinds


def check_reports_api(c, t, top_n=harness.REPORT_TOP_N):
    """/api/v1/reports/{daily,weekly}/<id> of every complete day and week: equal to the truth as
    the ConfigMaps are (harness.check_reports), pod counts, top pods and workloads included."""
    now = time.time()
    bad = []
    for name, start, end in t.complete_days(now) + t.complete_weeks(now):
        if "-daily-" in name:
            path = "/api/v1/reports/daily/" + name.rsplit("-daily-", 1)[1]
        else:
            path = "/api/v1/reports/weekly/" + name.rsplit("-weekly-", 1)[1].upper()
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (c.port, path),
                                        timeout=10) as r:
                doc = json.loads(r.read())
        except urllib.error.HTTPError as e:
            bad.append("%s: %d %s" % (path, e.code, e.read().decode()[:200]))
            continue
        tw = t.window(start, end)
        bad += harness.compare_summary(path, doc.get("summary") or {}, tw)
        bad += harness.compare_names(path, doc, tw, top_n)
    assert not bad, "\n".join(bad[:60])


# ---- (a) the whole week, live ------------------------------------------------------------------

def test_live_replay_reports_equal_truth(scenario):
    s = scenario
    c = s.controller().start()
    c.wait_ready()
    s.replay.run()
    t = s.truth()
    reports = harness.wait_reports(s.cluster, t, controller=c)
    check_documents(s, t, reports)
    check_team_copy(s, t)
    check_names_in_api(c, t)
    check_reports_api(c, t)
    cps = s.cluster.configmaps(selector="gpu-cost.io/kind=checkpoint")
    assert "gpu-cost-checkpoint" in cps, sorted(cps)
    assert c.stop() == 0, "SIGTERM must checkpoint and exit 0"
    check_logs(s)


def test_every_pod_and_workload_named_and_after_restart(scenario, tmp_path):
    """With report.top_n above the pods of any period, period history keeps every pod by name:
    for every complete day and week, by=pod and by=workload name every pod and workload that
    ran in it (the Deployment, Jobs and CronJob kube-controller-manager made included) with the
    truth's figures and pod counts, and the reports (ConfigMaps and /api/v1/reports) list them
    all as the truth ranks them. Then SIGKILL, a running pod of each of the Deployment and a
    Job deleted while it is down, and a restart from the checkpoint: the same, exactly."""
    s = scenario
    top_n = 1000
    cfg = json.loads(harness.CONFIG.read_text())
    cfg["report"]["top_n"] = top_n
    config = tmp_path / "config-top-n.json"
    config.write_text(json.dumps(cfg))
    c = s.controller(config=config).start()
    c.wait_ready()
    s.replay.run()
    t = s.truth()
    harness.wait_reports(s.cluster, t, controller=c, top_n=top_n)
    check_names_in_api(c, t, keep=top_n)
    check_reports_api(c, t, top_n)
    assert wait_checkpoint(s.cluster)
    c.kill(signal.SIGKILL)
    running = s.replay.running_pods()
    victims = [next(n for n in running if n.startswith(prefix))
               for prefix in ("triton-", "train-")]
    for v in victims:
        s.replay.delete_pod_now(v)
    s.replay.settle()
    c2 = s.controller(config=config).start()
    c2.wait_ready()
    t = s.truth()
    harness.wait_reports(s.cluster, t, controller=c2, top_n=top_n)
    check_names_in_api(c2, t, keep=top_n)
    check_reports_api(c2, t, top_n)
    assert c2.stop() == 0
    check_logs(s)


# ---- a week of history already in the cluster when the controller starts -----------------------

def test_initial_sync_of_a_week_of_history(scenario):
    s = scenario
    # The reclaimed spot node's deletion waits until the controller watches, so that it knows
    # the node its pods ran on.
    s.replay.hold_back("node_delete")
    s.replay.run(release=False)
    started = time.time()
    c = s.controller().start()
    c.wait_ready()
    assert s.replay.release() == 1
    # Pods deleted before the controller first listed them are beyond its knowledge.
    t = s.truth(exclude=lambda p: p["deleted"])
    print("initial sync: ready %.1f s after start" % (time.time() - started))
    reports = harness.wait_reports(s.cluster, t, controller=c)
    check_documents(s, t, reports)
    check_logs(s)


# ---- (b) SIGKILL mid-replay, restart -----------------------------------------------------------

# In test_faults.py: the replay goes on while the controller is down (creations, finishes,
# deletions of running and finished pods, whole lifetimes), and the restart resumes its watches
# from the checkpoint, so every one of those is exact, per team and project and per pod.


# ---- (c) kube-apiserver restart mid-replay ------------------------------------------------------

# kube-apiserver does not exit on SIGTERM while watches are open: e2e-cluster.sh kills it after
# 15 s, so a restart keeps the API away for about 20 s. With the default 15 s lease the
# controller then gives up leadership and exits, as client-go's leader election does (a
# Deployment would restart it; scenario (b) covers that path). These two scenarios are about
# surviving the outage in one process (watches resumed or re-listed), so their lease outlasts it.
OUTAGE_LEASE = ["--lease-duration", "60s"]


def test_apiserver_restart_mid_replay(scenario):
    s = scenario
    state = {}
    c = s.controller(extra=OUTAGE_LEASE).start()
    c.wait_ready()

    def restart(r):
        t0 = state["t0"] = time.time()
        s.cluster.restart_apiserver()
        state["t1"] = time.time()
        state["outage_s"] = state["t1"] - t0
        # Nothing is held back: the replay goes on at once, before the controller has
        # watched again (its watches resume from the resourceVersions they had reached).

    def resync(r):
        state["watching"] = s.cluster.wait_watchers(1, alive=c.alive)

    s.replay.run(hooks=[(0.5, restart), (0.6, resync)])
    print("kube-apiserver restart: %.1f s" % state["outage_s"])
    assert c.alive(), "the controller exited (status %s) over a kube-apiserver restart:\n%s" % (
        c.proc.returncode, harness.tail(c.log_path, 12))
    assert state["watching"], "the controller did not watch pods, nodes and namespaces again"
    # Completed periods and today, per pod and per team: deletions during the outage end
    # their pods at the moment written, not when the controller watched again.
    t = check_exact(s, c)
    # The span the restart is named with (the table in docs/controller.md says why): within
    # the outage as the test timed it, and bounded by every GPU in it; nothing stays an
    # estimate once the replay has brought the deletions.
    blind = [r for r in c.log_records() if r.get("msg") == "blind span"]
    for rec in blind:
        a, b = truth.utc(rec["from"]), truth.utc(rec["to"])
        assert state["t0"] - 2 <= a <= b <= state["t1"] + 30, (rec, state)
        cap = t.window(a, b)["capacity"]["cost_usd"]
        assert 0 <= float(rec["bound"].split()[0]) <= cap + 0.005, (rec, cap)
    print("blind spans named over the restart: %s" % [(r["from"], r["to"], r["bound"])
                                                      for r in blind])
    est = [(r.name, (r.json or {}).get("summary", {}).get("total", {}).get("estimates", 0))
           for r in harness.read_reports(s.cluster).values()]
    assert not [e for e in est if e[1]], "estimates left after the replay: %s" % est
    assert c.get("/healthz") == 200 and c.get("/readyz") == 200
    check_logs(s)


# ---- (d) forced watch expiry (410) --------------------------------------------------------------

def test_forced_watch_expiry_relists(scenario):
    s = scenario
    state = {}
    c = s.controller(extra=OUTAGE_LEASE).start()
    c.wait_ready()

    def expire(r):
        # Held back on purpose: past a 410 the controller cannot know what happened between
        # the expiry and its new LIST (a pod deleted in that gap ends when the LIST no longer
        # shows it, not at its deletionTimestamp); that blind span is what the reports name
        # (docs/controller.md), which an exact comparison cannot check.
        r.hold_back("create", "delete")
        time.sleep(1)
        state["rv"] = harness.expire_watches(s.cluster)
        state["answer"] = harness.watch_answer(s.cluster, "/api/v1/pods", state["rv"])

    def resync(r):
        state["watching"] = s.cluster.wait_watchers(1, alive=c.alive)
        time.sleep(1)
        r.release()

    s.replay.run(hooks=[(0.5, expire), (0.6, resync)])
    assert state["answer"] == "410", "the server still replays from the old resourceVersion"
    assert c.alive(), "the controller exited (status %s) after the forced 410:\n%s" % (
        c.proc.returncode, harness.tail(c.log_path, 12))
    assert state["watching"], "the controller did not watch pods, nodes and namespaces again"
    check_exact(s, c)
    # The relist is the controller's own count: a streaming list is a watch, not a LIST.
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % c.port, timeout=10) as resp:
        relists = [float(line.split()[-1]) for line in resp.read().decode().splitlines()
                   if line.startswith('gpu_cost_relists_total{resource="pods"}')]
    assert relists and relists[0] >= 1, "pods not listed again after the 410: %s" % relists
    check_logs(s)


# ---- (e) two replicas: one writer, fail-over --------------------------------------------------

def test_two_replicas_one_writer_and_takeover(scenario):
    s = scenario
    state = {"violations": []}
    lease = ["--lease-duration", "%ds" % LEASE_S]
    a = s.controller("gpu-cost-a", lease).start()
    a.wait_ready()
    b = s.controller("gpu-cost-b", lease).start()
    deadline = time.time() + 20
    while time.time() < deadline and not any(
            "standby" in json.dumps(r).lower() for r in b.log_records()):
        time.sleep(0.5)
    assert any("standby" in json.dumps(r).lower() for r in b.log_records()), \
        "the second replica does not log that it is standby:\n" + harness.tail(b.log_path)
    holder = (s.cluster.lease() or {}).get("spec", {}).get("holderIdentity")
    assert holder == "gpu-cost-a", holder

    def kill(r):
        # The replay goes on while nobody leads: nothing is held back. The new leader restores
        # the checkpoint and resumes the watches from it, so the API server replays the rest.
        state["checkpointed"] = wait_checkpoint(s.cluster)
        state["t_kill"] = time.time()
        a.kill(signal.SIGKILL)
        time.sleep(0.5)  # a write the leader had in flight lands
        state["snap"] = {n: cm["metadata"]["resourceVersion"]
                         for n, cm in s.cluster.configmaps().items()}
        state["first"] = r.done

    def takeover(r):
        state["last"] = r.done
        t_kill, snap = state["t_kill"], state["snap"]
        while time.time() < t_kill + LEASE_S + TAKEOVER_MARGIN + 10:
            cms = s.cluster.configmaps()
            holder = (s.cluster.lease() or {}).get("spec", {}).get("holderIdentity")
            if holder == "gpu-cost-b":
                state["takeover_s"] = time.time() - t_kill
                break
            # read before the Lease still held by the dead leader: nobody may have written
            changed = sorted(n for n, cm in cms.items()
                             if snap.get(n) != cm["metadata"]["resourceVersion"])
            if changed:
                state["violations"].append(changed)
            time.sleep(0.2)
        b.wait_ready(timeout=60)
        state["b_checkpointed"] = wait_checkpoint(s.cluster)

    s.replay.run(hooks=[(0.5, kill), (0.53, takeover)])
    ev = s.replay.events[state["first"]:state["last"]]
    print("while nobody led: %d events (%s)" % (len(ev), sorted({e.kind for e in ev})))
    assert any(e.kind == "create" for e in ev) and any(e.kind == "delete" for e in ev), \
        "no churn while nobody led"

    assert state["checkpointed"]
    assert not state["violations"], "ConfigMaps changed while nobody held the lease: %s" % \
        state["violations"][:3]
    assert "takeover_s" in state, "the standby did not take the lease over"
    print("takeover after %.1f s" % state["takeover_s"])
    assert state["takeover_s"] <= LEASE_S + TAKEOVER_MARGIN, state["takeover_s"]
    assert state["b_checkpointed"], "the new leader wrote no checkpoint"
    # A warm standby: it restored and watched before the takeover, and did not restore again.
    recs = b.log_records()
    msgs = [r.get("msg") for r in recs]
    assert "became the leader" in msgs, msgs
    took = msgs.index("became the leader")
    assert "initial sync done" in msgs[:took], "the standby did not watch before the takeover"
    assert "checkpoint restored" not in msgs[took:], "the new leader restored the checkpoint " \
        "again instead of continuing from its live ledger"
    check_exact(s, b)
    assert (s.cluster.lease() or {}).get("spec", {}).get("holderIdentity") == "gpu-cost-b"
    check_logs(s)


# ---- (f) RBAC: a verb taken away fails loudly ---------------------------------------------------

def test_missing_watch_on_pods_fails_loudly(scenario):
    """Without watch on pods the controller cannot keep its state: it exits non-zero with an
    error line naming the grant, and writes no report of zero. (Without list but with watch it
    runs: kube-apiserver authorizes a streaming list as a watch; test_kube_stream.py.)"""
    s = scenario
    s.replay.run(stop=200)  # GPU pods exist: a report of zero would be a lie
    path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/gpu-cost-controller"
    cr = s.cluster.api.get(path)
    cr["rules"] = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
                   {"apiGroups": [""], "resources": ["nodes", "namespaces"],
                    "verbs": ["list", "watch"]},
                   {"apiGroups": ["resource.k8s.io"],
                    "resources": ["resourceslices", "resourceclaims", "deviceclasses"],
                    "verbs": ["list", "watch"]},
                   {"apiGroups": ["apps"], "resources": ["replicasets"],
                    "verbs": ["list", "watch"]},
                   {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["list", "watch"]}]
    s.cluster.api.call("PUT", path, cr)
    s.cluster.wait_controller_can("/api/v1/pods?watch=1&timeoutSeconds=1", want=403)
    s.cluster.wait_controller_can("/api/v1/nodes?limit=1", want=200)
    c = s.controller().start()
    rc = c.wait_exit(60)
    assert rc is not None, "the controller kept running without watch on pods"
    assert rc != 0, "the controller exited 0 without watch on pods"
    recs = c.log_records()
    named = [r for r in recs if "list" in json.dumps(r).lower() and "pods" in json.dumps(r).lower()
             and str(r.get("level", "")).lower() in ("error", "fatal")]
    assert named, "no error log line names the refused grant (list/watch) and pods:\n" + \
        harness.tail(c.log_path)
    for r in harness.read_reports(s.cluster).values():
        total = (r.json or {}).get("summary", {}).get("total", {})
        assert total.get("gpu_seconds", 0) > 0, "%s: a zero report was written" % r.name
    check_logs(s)


def test_missing_owner_rbac_runs_on(scenario):
    """Without list/watch on ReplicaSets and Jobs the workloads fall back to names and labels
    (docs/workloads.md): the controller says so once, in an error line, and prices as before.
    The Deployment's pods still resolve to it by their pod-template-hash; the CronJob's, which
    nothing but its Job names, resolve to that Job."""
    s = scenario
    path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/gpu-cost-controller"
    cr = s.cluster.api.get(path)
    cr["rules"] = [r for r in cr["rules"] if not set(r["apiGroups"]) & {"apps", "batch"}]
    s.cluster.api.call("PUT", path, cr)
    s.cluster.wait_controller_can("/apis/batch/v1/jobs?limit=1", want=403)
    c = s.controller().start()
    c.wait_ready(timeout=120)
    s.replay.run()
    record = json.loads(json.dumps(s.replay.record()))
    for p in record["pods"]:
        if (p.get("workload") or "").startswith("CronJob/"):
            p["workload"] = "Job/%s/%s" % (p["namespace"], p["owner"].split("/", 1)[1])
    t = truth.Truth(record, CFG)
    reports = harness.wait_reports(s.cluster, t, controller=c)
    check_documents(s, t, reports)
    assert c.alive()
    recs = c.log_records()
    named = [r for r in recs if str(r.get("level", "")).lower() == "error"
             and r.get("resource") in ("replicasets", "jobs")]
    assert {r["resource"] for r in named} == {"replicasets", "jobs"}, harness.tail(c.log_path)
    assert c.stop() == 0
    check_logs(s)


# ---- folded history at its row bound -------------------------------------------------------------

def test_history_row_bound_is_loud_and_stays_exact(scenario):
    """With --max-history-rows far below what a week of folded hours needs, folds stop at the
    bound: the intervals stay unfolded, so every report still equals the truth, and the
    controller says so in an error log line, a report note and
    gpu_cost_ledger_fold_failures_total (docs/ledger.md)."""
    s = scenario
    c = s.controller(extra=["--max-history-rows", "1000"]).start()
    c.wait_ready()
    s.replay.run()
    t = s.truth()
    reports = harness.wait_reports(s.cluster, t, controller=c)
    check_documents(s, t, reports)
    full = [r for r in c.log_records() if r.get("msg", "").startswith("folded history is full")]
    assert full and full[0]["level"] == "error" and full[0]["bound"] == "1000", \
        harness.tail(c.log_path)
    # /metrics serves the snapshot's copy of the counter: a snapshot after the failure has it.
    deadline = time.time() + 30
    while True:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % c.port, timeout=10) as r:
            m = r.read().decode()
        fails = [float(line.split()[-1]) for line in m.splitlines()
                 if line.startswith("gpu_cost_ledger_fold_failures_total")]
        if (fails and fails[0] > 0) or time.time() > deadline:
            break
        time.sleep(1)
    assert fails and fails[0] > 0, "gpu_cost_ledger_fold_failures_total is not > 0"
    deadline = time.time() + 30
    while True:
        latest = harness.read_reports(s.cluster).get("gpu-cost-report-daily-latest")
        if (latest and "Folded history is at its bound" in latest.md) or time.time() > deadline:
            break
        time.sleep(1)
    assert latest and "Folded history is at its bound of 1000 rows" in latest.md, \
        (latest.md[-1500:] if latest else "no daily-latest report")
    check_logs(s)


# ---- history that coarsens with age ---------------------------------------------------------------

def test_coarsened_history_answers_every_period(scenario):
    """With --hourly-history 1h, folded hours older than an hour keep only what whole days,
    weeks and months need (docs/ledger.md, "Coarsening"): every complete day's and week's
    report still equals the truth, idle included, and by=pod and by=workload still name what
    ran; a window that is no period over those hours is refused with a 400 that says why. Then
    SIGKILL, running pods deleted while it is down, and a restart from the checkpoint (which
    carries the coarsened history): the same, exactly."""
    s = scenario
    flags = ["--hourly-history", "1h", "--checkpoint-interval", "5s"]
    c = s.controller(extra=flags).start()
    c.wait_ready()
    s.replay.run()
    t = s.truth()
    reports = harness.wait_reports(s.cluster, t, controller=c)
    check_documents(s, t, reports)
    check_names_in_api(c, t)
    check_reports_api(c, t)
    days = t.complete_days(time.time())
    assert len(days) >= 3, days
    _, start, end = days[1]
    for path, param in (("/api/v1/costs?window=%d,%d&by=team" % (start + 3600, end + 3600),
                         "window"),
                        ("/api/v1/costs?window=%d,%d&by=team&step=1h" % (start, end), "step"),
                        ("/allocation?window=%d,%d&aggregate=namespace" % (start + 3600,
                                                                         end + 3600), "window")):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (c.port, path), timeout=10):
                raise AssertionError("%s: not refused" % path)
        except urllib.error.HTTPError as e:
            body = e.read().decode()
            assert e.code == 400 and "whole local day" in body and param in body, (path, body)
    # The day itself answers; /metrics says from when windows must be whole periods.
    with urllib.request.urlopen("http://127.0.0.1:%d/api/v1/costs?window=%d,%d&by=team" % (
            c.port, start, end), timeout=10) as r:
        assert r.status == 200
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % c.port, timeout=10) as r:
        since = [float(line.split()[-1]) for line in r.read().decode().splitlines()
                 if line.startswith("gpu_cost_ledger_hourly_since_timestamp_seconds ")]
    assert since and end <= since[0] <= time.time() - 3600, since
    assert wait_checkpoint(s.cluster)  # one written with the coarsened history
    c.kill(signal.SIGKILL)
    victims = s.replay.running_pods()[:3]
    for v in victims:
        s.replay.delete_pod_now(v)
    c2 = s.controller(extra=flags).start()
    c2.wait_ready()
    t = s.truth()
    reports = harness.wait_reports(s.cluster, t, controller=c2)
    check_documents(s, t, reports)
    check_names_in_api(c2, t)
    check_reports_api(c2, t)
    assert c2.stop() == 0
    check_logs(s)


def _metric(c, name):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % c.port, timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
    raise AssertionError("/metrics has no %s" % name)


def _wait_metric(c, name, at_least, timeout=30):
    deadline = time.time() + timeout
    while True:
        v = _metric(c, name)
        if v >= at_least or time.time() > deadline:
            return v
        time.sleep(0.5)


def _asan_controller(scenario, monkeypatch):
    """The controller built with AddressSanitizer (make build-asan) when the suite is told where
    (GPU_COST_CONTROLLER_ASAN, as `make e2e` does): a string freed under its holder is then a
    crash with a report, not a quiet wrong answer. Else the release build."""
    p = os.environ.get("GPU_COST_CONTROLLER_ASAN")
    if p and os.access(p, os.X_OK):
        monkeypatch.setenv("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1:abort_on_error=0")
        monkeypatch.setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        scenario.binary = p
        return True
    if os.environ.get("CI") == "true":
        raise AssertionError("GPU_COST_CONTROLLER_ASAN is not set or not executable: %r" % p)
    return False


def test_string_sweeps_lose_nothing(scenario, monkeypatch):
    """The string pool frees what nothing holds any more (docs/architecture.md, "Memory"):
    with --test-sweep-strings it sweeps at every snapshot, while the week is replayed, folded
    and coarsened (--hourly-history 1h), the API is read from other threads and the reports
    are written. Every complete day and week still equals the truth, by=pod and by=workload
    still name what ran, sweeps did free strings, and the AddressSanitizer build (in `make
    e2e`) saw no string read after it was freed. Then SIGKILL, running pods deleted while it
    is down, and a restart that sweeps as it restores: the same."""
    s = scenario
    asan = _asan_controller(s, monkeypatch)
    flags = ["--test-sweep-strings", "--hourly-history", "1h", "--snapshot-interval", "1s"]
    c = s.controller(extra=flags).start()
    c.wait_ready(timeout=180 if asan else 60)
    s.replay.run()
    t = s.truth()
    reports = harness.wait_reports(s.cluster, t, controller=c)
    check_documents(s, t, reports)
    check_names_in_api(c, t)
    _, start, end = t.complete_days(time.time())[-1]
    for path in ("/api/v1/pods", "/allocation?window=%d,%d&aggregate=namespace" % (start, end),
                 "/api/v1/costs?window=lastweek&by=team,workload", "/api/v1/recommendations"):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (c.port, path),
                                        timeout=30) as r:
                assert r.status == 200, path
        except urllib.error.HTTPError as e:
            raise AssertionError("%s: %d %s" % (path, e.code, e.read().decode()))
    assert _wait_metric(c, "gpu_cost_pool_sweeps_total", 5) >= 5
    assert _metric(c, "gpu_cost_pool_freed_strings_total") > 0
    c.kill(signal.SIGKILL)
    for v in s.replay.running_pods()[:3]:
        s.replay.delete_pod_now(v)
    c2 = s.controller(extra=flags).start()
    c2.wait_ready(timeout=180 if asan else 60)
    t = s.truth()
    reports = harness.wait_reports(s.cluster, t, controller=c2)
    check_documents(s, t, reports)
    check_names_in_api(c2, t)
    assert _wait_metric(c2, "gpu_cost_pool_sweeps_total", 5) >= 5
    check_names_in_api(c2, t)
    assert c2.stop(timeout=60) == 0
    for ctl in s.controllers:
        text = ctl.log_path.read_text(errors="replace")
        for bad in ("AddressSanitizer", "runtime error:", "LeakSanitizer"):
            assert bad not in text, "%s: %s\n%s" % (ctl.log_path, bad, harness.tail(
                ctl.log_path, 60))
    check_logs(s)
