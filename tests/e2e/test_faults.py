"""Faults with churn during the outage, against a real kube-apiserver: nothing is held back.

While the controller is down (SIGKILL), or has died half-way through a checkpoint write, the
replay goes on: pods are created, finish, are deleted while running and after finishing, and
some live their whole life inside the outage. On restart the controller restores the newest
complete checkpoint generation and resumes each watch from the resourceVersion stored with it
(docs/checkpoint.md), so the API server replays what happened: the reports of every complete
day and week, and today's costs per team and project and per pod through the API, equal the
truth (truth.py) computed from what the replay wrote, never from the controller.

--fold-after is longer than the replay's eight back-dated days: a pod first seen after the
fold horizon counts only from it (docs/ledger.md), and this replay writes history days old.
"""

import collections
import json
import signal
import time

import dra_objects
import e2e_truth as truth
import harness
import sim
from tcpproxy import TcpProxy
from test_controller import Scenario, check_documents, check_logs  # noqa: F401
from test_controller import check_exact, check_names_in_api, check_reports_api, _get_json
from test_controller import scenario  # noqa: F401  (the fixture)
from test_controller import wait_checkpoint

FLAGS = ["--fold-after", "240h", "--snapshot-interval", "1s"]


def outage_churn(replay, first, last):
    """What the replay wrote while the controller could not see it: counts by kind, and pods
    whose whole life (creation and deletion) fell inside."""
    ev = replay.events[first:last]
    kinds = collections.Counter(e.kind for e in ev)
    created = {e.pod.name for e in ev if e.kind == "create"}
    deleted = {e.pod.name for e in ev if e.kind == "delete"}
    kinds["whole_lifetimes"] = len(created & deleted)
    return dict(kinds)


def records(c, msg):
    return [r for r in c.log_records() if r.get("msg") == msg]


# ---- SIGKILL, churn while down, restart: the watches resume and replay the outage ------------

def test_sigkill_restart_replays_the_outage(scenario):  # noqa: F811
    s = scenario
    state = {}
    c = s.controller(extra=FLAGS).start()
    c.wait_ready()

    def kill(r):
        assert wait_checkpoint(s.cluster)  # one written with what came before
        c.kill(signal.SIGKILL)
        state["first"] = r.done
        # Running pods deleted while nobody watches, on top of the plan's own churn.
        state["victims"] = r.running_pods()[:3]
        for v in state["victims"]:
            r.delete_pod_now(v)

    def restart(r):
        state["last"] = r.done
        t0 = time.time()
        state["c2"] = s.controller(extra=FLAGS).start()
        state["c2"].wait_ready()
        print("restart: ready after %.1f s" % (time.time() - t0))

    s.replay.run(hooks=[(0.33, kill), (0.45, restart)])
    churn = outage_churn(s.replay, state["first"], state["last"])
    print("churn during the outage: %s, and %d running pods deleted" % (
        churn, len(state["victims"])))
    for kind in ("create", "finish", "delete", "whole_lifetimes"):
        assert churn.get(kind, 0) > 0, "the outage saw no %s: %s" % (kind, churn)
    assert len(state["victims"]) == 3
    c2 = state["c2"]
    assert records(c2, "resuming the watch from the checkpoint"), harness.tail(c2.log_path)
    t = check_exact(s, c2)
    # Pods, Deployments, Jobs and the CronJob by name, and the reports through the API.
    check_names_in_api(c2, t)
    check_reports_api(c2, t)
    assert not records(c2, "blind span"), "resumed within the event window: no blind span"
    # Nothing rests on an estimate: the deletions were replayed, not guessed.
    for r in harness.read_reports(s.cluster).values():
        est = ((r.json or {}).get("summary", {}).get("total", {}) or {}).get("estimates", 0)
        assert not est, "%s: %s estimates after a resumed watch" % (r.name, est)
    check_logs(s)


# ---- owners and nodes gone while the controller is down ---------------------------------------

def test_owners_and_nodes_gone_while_down_keep_their_pods_costs(scenario):  # noqa: F811
    """While the controller is down, a CronJob is deleted with its Job and pods (as its history
    limit deletes old runs), a Job with its pod, and the pods of the spot node the replay
    deleted at its end go (deleted here as the pod GC deletes them some 40 s after their node).
    On restart nothing lists those owners or that node any more, but the pods' deletions the
    resumed watch replays must not move their costs from the workload they had (CronJob/...,
    Job/...) to a fallback, nor re-price them at the catalog's fallback: what the controller
    knew before stands."""
    s = scenario
    c = s.controller(extra=FLAGS).start()
    c.wait_ready()
    s.replay.run()
    assert wait_checkpoint(s.cluster)
    c.kill(signal.SIGKILL)
    api = s.cluster.api
    recs = s.replay.record()["pods"]
    spot = [r for r in recs if r["node"] == "p4d-a100-spot-0" and not r["deleted"]]
    assert spot, "no pod left on the deleted spot node"
    grace0 = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    for r in spot:
        # They finished at the reclaim: their ends stay their finishedAt. (The pod GC may
        # have been first.)
        api.request("DELETE", "/api/v1/namespaces/%s/pods/%s" % (r["namespace"], r["name"]),
                    grace0)
        r["deleted"] = True
    gone = [r for r in recs if (r.get("workload") or "").startswith(
        ("CronJob/nlp/nightly-eval", "Job/nlp/train-0003")) and not r["deleted"]]
    assert len(gone) == 4, [r["name"] for r in gone]
    background = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
    api.call("DELETE", "/apis/batch/v1/namespaces/nlp/cronjobs/nightly-eval", background)
    api.call("DELETE", "/apis/batch/v1/namespaces/nlp/jobs/train-0003", background)
    deadline = time.time() + 60
    while any(api.exists("/api/v1/namespaces/%s/pods/%s" % (r["namespace"], r["name"]))
              for r in gone + spot):
        assert time.time() < deadline, "the garbage collector left the pods"
        time.sleep(0.2)
    for r in gone:
        r["deleted"] = True  # finished before: their ends stay their finishedAt
    c2 = s.controller(extra=FLAGS).start()
    c2.wait_ready()
    assert records(c2, "resuming the watch from the checkpoint"), harness.tail(c2.log_path)
    t = check_exact(s, c2)
    check_names_in_api(c2, t)
    check_reports_api(c2, t)
    check_logs(s)


# ---- a checkpoint write killed after chunk k of n ---------------------------------------------

def _checkpoint_generations(s):
    """{slot name: (generation, chunks)} of the checkpoint generations' chunk 0 now."""
    out = {}
    for name, cm in s.cluster.configmaps(selector="gpu-cost.io/kind=checkpoint").items():
        if name not in ("gpu-cost-checkpoint", "gpu-cost-checkpoint-g1"):
            continue
        doc = json.loads(cm["data"]["checkpoint.json"])
        out[name] = (doc.get("generation", 0), doc["of"])
    return out


def test_checkpoint_write_killed_midway_restores_the_previous_generation(scenario):  # noqa: F811
    s = scenario
    flags = FLAGS + ["--checkpoint-chunk-bytes", "16384"]
    state = {"kills": []}
    c = s.controller(extra=flags).start()
    c.wait_ready()

    def crash(r):
        # Two complete generations, the newer written after the replay got this far (under
        # load the last write may date from early on, when one or two ConfigMaps held it all).
        deadline = time.time() + 40
        while time.time() < deadline:
            gens = _checkpoint_generations(s)
            if len(gens) >= 2 and max(of for _, of in gens.values()) >= 3:
                break
            time.sleep(0.5)
        c.kill(signal.SIGKILL)
        state["first"] = r.done
        gens = _checkpoint_generations(s)
        assert len(gens) == 2, "two complete generations expected, found %s" % gens
        state["newest"] = max(g for g, _ in gens.values())
        n = max(of for _, of in gens.values())
        assert n >= 3, "the checkpoint should span several ConfigMaps: %d" % n
        # After the first chunk, after half, after all but chunk 0 (which goes last).
        for i, k in enumerate(sorted({1, n // 2, n - 1})):
            # churn between the crashes too
            victims = r.running_pods()[:1]
            for v in victims:
                r.delete_pod_now(v)
            cx = s.controller("gpu-cost-0", flags + [
                "--test-kill-after-checkpoint-chunks", str(k)]).start()
            rc = cx.wait_exit(90)
            assert rc == -signal.SIGKILL, "controller killed after %d chunks exited %r:\n%s" % (
                k, rc, harness.tail(cx.log_path))
            assert records(cx, "test: killing myself mid-checkpoint"), harness.tail(cx.log_path)
            restored = records(cx, "checkpoint restored")
            assert restored and "generation %d " % state["newest"] in restored[-1]["records"], \
                "crash %d: restored %s, newest complete generation %d" % (
                    i, restored, state["newest"])
            state["kills"].append(k)

    def restart(r):
        state["last"] = r.done
        state["c2"] = s.controller(extra=flags).start()
        state["c2"].wait_ready()

    s.replay.run(hooks=[(0.85, crash), (0.93, restart)])
    print("writes killed after %s chunks; churn: %s" % (
        state["kills"], outage_churn(s.replay, state["first"], state["last"])))
    c2 = state["c2"]
    restored = records(c2, "checkpoint restored")
    assert restored and "generation %d " % state["newest"] in restored[-1]["records"], restored
    check_exact(s, c2)
    check_logs(s)


# ---- report writes stalled past the lease duration: leadership holds ---------------------------

def test_stalled_report_writes_keep_the_lease(scenario):  # noqa: F811
    """Every round of the leader's report writes hangs 20 s, more than twice its 8 s lease,
    with a standby waiting: the lease is renewed on a thread of its own, so it stays the
    leader's and the standby never takes over."""
    s = scenario
    lease = ["--lease-duration", "8s"]
    a = s.controller("gpu-cost-a", lease + ["--test-stall-report-writes", "20s"]).start()
    a.wait_ready()
    b = s.controller("gpu-cost-b", lease).start()
    s.replay.run(stop=100)
    holders, t0 = set(), time.time()
    while time.time() < t0 + 30:
        holders.add((s.cluster.lease() or {}).get("spec", {}).get("holderIdentity"))
        assert a.alive(), "the leader exited:\n" + harness.tail(a.log_path)
        time.sleep(0.5)
    stalls = records(a, "test: stalling report writes")
    assert stalls, "the report writes were not stalled:\n" + harness.tail(a.log_path)
    assert holders == {"gpu-cost-a"}, holders
    assert not records(b, "became the leader"), harness.tail(b.log_path)
    assert records(b, "standby: another replica holds the lease"), harness.tail(b.log_path)
    check_logs(s)


# ---- the resume point past the event window: a blind span, named with its bound ---------------

def test_resume_point_past_the_event_window_names_the_blind_span(scenario):  # noqa: F811
    """SIGKILL, churn, then etcd compacted past the checkpoint's resourceVersions (and
    kube-apiserver restarted, so its watch cache forgets them too): the restart's resume gets
    410, and what happened in between is a blind span. Pods running at the checkpoint and
    deleted meanwhile are estimates; the span is named in the log, /metrics and the reports;
    every complete day and week is still exact. The bound is compared with what the test hid
    in the span: the running pods it deleted in real time (check_blind_bound). The plan's own
    deletions wait: this replay back-dates its pods by days, so what they would hide lies
    outside the span's real-time window."""
    s = scenario
    state = {}
    c = s.controller(extra=FLAGS).start()
    c.wait_ready()

    def kill(r):
        assert wait_checkpoint(s.cluster)  # one written with what came before
        c.kill(signal.SIGKILL)
        # The plan's deletions wait for the restart, on purpose: a pod the blind span hides the
        # deletion of ends as an estimate at the checkpoint's real time, which for this replay's
        # back-dated pods is days after their recorded end (no real cluster has that). The
        # running pods deleted here, in real time, are the estimate case; creations and
        # finishes go on.
        r.hold_back("delete")
        state["victims"] = r.running_pods()[:2]
        time.sleep(4)  # into the span: their time after its start is what the bound must cover
        for v in state["victims"]:
            r.delete_pod_now(v)

    def expire_and_restart(r):
        rv = harness.expire_watches(s.cluster)
        state["answer"] = harness.watch_answer(s.cluster, "/api/v1/pods", rv)
        state["c2"] = s.controller(extra=FLAGS).start()
        state["c2"].wait_ready()
        r.release()

    s.replay.run(hooks=[(0.33, kill), (0.38, expire_and_restart)])
    assert state["answer"] == "410", "the server still replays from the old resourceVersion"
    c2 = state["c2"]
    blind = records(c2, "blind span")
    assert blind, "no blind span logged:\n" + harness.tail(c2.log_path)
    t = s.truth()
    check_blind_bound(c2, blind[-1], t, state["victims"])
    deadline = time.time() + 60
    while True:
        reps = harness.read_reports(s.cluster)
        today = reps.get(truth.day_name(truth.floor_day(time.time())))
        md = today.md if today else ""
        if "Blind span" in md or time.time() > deadline:
            break
        time.sleep(1)
    assert "Blind span" in md, "today's report does not name the blind span:\n%s" % md[-2000:]
    est = (today.json or {}).get("summary", {}).get("total", {}).get("estimates", 0)
    assert est >= 1, "the pods deleted while running in the blind span are not estimates"
    m = _get_json_text(c2, "/metrics")
    assert any(line.startswith("gpu_cost_blind_span_seconds") and float(line.split()[-1]) > 0
               for line in m.splitlines()), "gpu_cost_blind_span_seconds is not > 0"
    # Complete periods are exact.
    harness.wait_reports(s.cluster, t, controller=c2)
    # Today: never above the truth, short by at most the victims' time after the span's start,
    # once the controller has caught up with the replay's last events (the held deletions, the
    # pods after the restart). Checked once, right after the reports, this was seen above the
    # truth in 2 of 8 runs: the controller had not yet read the finishes written a moment before.
    check_today_after_span(c2, t, truth.utc(blind[-1]["from"]), state["victims"])
    check_logs(s)


def test_partition_past_the_event_window_names_the_blind_span(scenario, tmp_path):  # noqa: F811
    """The controller keeps running while a partition (tcpproxy.py cut) keeps it from
    kube-apiserver for longer than the event window (forced: etcd compacted and kube-apiserver
    restarted meanwhile), with creations, finishes and running pods deleted during it. When the
    partition heals, the watch's resume gets 410: the pods gone meanwhile are ended where last
    known (the partition's start), as estimates, and the span is named with its bound in the
    log, /metrics and today's report. Complete periods stay exact; today never counts more than
    the truth, and falls short by no more than the deleted pods' unseen time."""
    s = scenario
    proxy = TcpProxy(int(s.cluster.env["E2E_APISERVER_PORT"]))
    via = tmp_path / "via-proxy.kubeconfig"
    via.write_text(open(s.cluster.controller_kubeconfig).read().replace(
        s.cluster.env["E2E_SERVER"], "https://127.0.0.1:%d" % proxy.port))
    via.chmod(0o600)
    # A lease longer than the partition: this test is about the watch, not leadership.
    c = harness.Controller(s.binary, s.cluster, s.logdir / "partition.log",
                           extra=FLAGS + ["--lease-duration", "180s"], kubeconfig=via)
    s.controllers.append(c)
    c.start()
    c.wait_ready()
    state = {}

    def cut(r):
        time.sleep(3)  # a snapshot with what came before
        state["cut_at"] = int(time.time())
        proxy.cut()
        # The plan's deletions wait for the heal, as in the restart case above and for the
        # same reason: a deletion hidden by the span ends its pod where it was last known,
        # which for this replay's back-dated finished pods is days after their recorded end.
        # The running pods deleted here, in real time, are the estimate case.
        r.hold_back("delete")
        state["victims"] = r.running_pods()[:2]
        time.sleep(4)  # into the span, as above
        for v in state["victims"]:
            r.delete_pod_now(v)

    def expire_and_heal(r):
        rv = harness.expire_watches(s.cluster)
        state["answer"] = harness.watch_answer(s.cluster, "/api/v1/pods", rv)
        proxy.heal()
        deadline = time.time() + 60
        while not records(c, "blind span") and time.time() < deadline and c.alive():
            time.sleep(0.5)
        r.release()

    try:
        s.replay.run(hooks=[(0.33, cut), (0.38, expire_and_heal)])
        assert state["answer"] == "410", "the server still replays from the old resourceVersion"
        assert c.alive(), "the controller exited during the partition:\n" + harness.tail(
            c.log_path)
        blind = records(c, "blind span")
        assert blind, "no blind span logged:\n" + harness.tail(c.log_path)
        since = truth.utc(blind[-1]["from"])
        assert state["cut_at"] - 5 <= since <= state["cut_at"] + 2, (blind[-1], state)
        t = s.truth()
        check_blind_bound(c, blind[-1], t, state["victims"])
        harness.wait_reports(s.cluster, t, controller=c)
        deadline = time.time() + 60
        while True:
            reps = harness.read_reports(s.cluster)
            today = reps.get(truth.day_name(truth.floor_day(time.time())))
            md = today.md if today else ""
            if "Blind span" in md or time.time() > deadline:
                break
            time.sleep(1)
        assert "Blind span" in md, "today's report does not name the blind span:\n" + md[-2000:]
        est = (today.json or {}).get("summary", {}).get("total", {}).get("estimates", 0)
        assert est >= 1, "the pods deleted during the partition are not estimates"
        m = _get_json_text(c, "/metrics")
        assert any(line.startswith("gpu_cost_blind_span_seconds") and float(line.split()[-1]) > 0
                   for line in m.splitlines()), "gpu_cost_blind_span_seconds is not > 0"
        # Today: never above the truth; short by at most the victims' time after `since`. The
        # replay's last events (the held deletions, the pods after the heal) reach the controller
        # through its resumed watch a moment after the test wrote them: compared until it has
        # caught up (as check_exact does), then asserted.
        check_today_after_span(c, t, since, state["victims"])
        check_logs(s)
    finally:
        proxy.cut()


# ---- fencing: a live leader partitioned past its lease stops writing before the next one starts -

FENCE_LEASE_S = 8
WRITER = "gpu-cost.io/written-by"


def _meta_only(obj):
    return {"metadata": obj["metadata"], "spec": obj.get("spec")}


def writes_in_order(recorders):
    """Every write the test's own watches saw, as (resourceVersion, what, writer), in the API
    server's order. A Lease version's writer is its holder; a ConfigMap's, the annotation the
    controller sets on each write. Deletions name no writer and are left out."""
    out = []
    for kind, rec in recorders:
        deleted = rec.deleted
        for uid, versions in rec.all_versions().items():
            for i, v in enumerate(versions):
                if uid in deleted and i == len(versions) - 1:
                    continue
                md = v["metadata"]
                if kind == "lease":
                    who = (v.get("spec") or {}).get("holderIdentity")
                else:
                    who = (md.get("annotations") or {}).get(WRITER)
                out.append((int(md["resourceVersion"]), "%s/%s" % (kind, md["name"]), who))
    return sorted(set(out))


def test_partitioned_leader_stops_writing_before_the_new_one_starts(scenario, tmp_path):  # noqa: F811,E501
    """Leader A reaches kube-apiserver through a proxy the test cuts for longer than the Lease
    while the replay goes on; standby B, connected directly, takes the Lease over. The test's
    own watches on the Lease and the controller's ConfigMaps order every write by
    resourceVersion: A's last write (Lease renewal, report, checkpoint chunk) comes before B's
    first (its acquisition), even though the partition heals the moment B holds the Lease, when
    a leader that had not stopped would write again. A exits saying so, comes back as a
    standby, and B's figures equal the truth, completed periods and today per pod and team."""
    s = scenario
    lease = ["--lease-duration", "%ds" % FENCE_LEASE_S]
    proxy = TcpProxy(int(s.cluster.env["E2E_APISERVER_PORT"]))
    via = tmp_path / "via-proxy.kubeconfig"
    via.write_text(open(s.cluster.controller_kubeconfig).read().replace(
        s.cluster.env["E2E_SERVER"], "https://127.0.0.1:%d" % proxy.port))
    via.chmod(0o600)

    def replica_a():
        c = harness.Controller(s.binary, s.cluster, s.logdir / "fence-a.log", ident="gpu-cost-a",
                               extra=FLAGS + lease, kubeconfig=via)
        s.controllers.append(c)
        return c.start()

    recs = [("lease", dra_objects.Recorder(
                s.cluster, "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % harness.NS,
                keep=_meta_only).start()),
            ("configmap", dra_objects.Recorder(
                s.cluster, "/api/v1/namespaces/%s/configmaps" % harness.NS,
                keep=_meta_only).start())]
    a = replica_a()
    a.wait_ready()
    b = s.controller("gpu-cost-b", FLAGS + lease).start()
    state = {}

    def standby(c, after=0):
        return any(r.get("msg") == "standby: another replica holds the lease"
                   for r in c.log_records()[after:])

    def cut(r):
        # A has written reports and a checkpoint, and B is a warm standby.
        deadline = time.time() + 30
        while not standby(b) and time.time() < deadline:
            time.sleep(0.2)
        assert standby(b), harness.tail(b.log_path)
        assert wait_checkpoint(s.cluster), "leader A wrote no checkpoint"
        state["first"] = r.done
        proxy.cut()

    def heal(r):
        # Nothing is held back: the churn since the cut reached B, not A.
        deadline = time.time() + FENCE_LEASE_S + 30
        while time.time() < deadline:
            if (s.cluster.lease() or {}).get("spec", {}).get("holderIdentity") == "gpu-cost-b":
                break
            time.sleep(0.1)
        state["a_alive_at_heal"] = a.alive()
        proxy.heal()  # a leader that had not fenced itself would write again from here
        state["a_rc"] = a.wait_exit(30)
        state["last"] = r.done
        n = len(a.log_records())
        a2 = replica_a()
        deadline = time.time() + 30
        while not standby(a2, n) and time.time() < deadline and a2.alive():
            time.sleep(0.2)
        state["a2_standby"] = standby(a2, n)

    try:
        s.replay.run(hooks=[(0.4, cut), (0.45, heal)])
        churn = outage_churn(s.replay, state["first"], state["last"])
        print("churn while A was cut off: %s; A alive when the partition healed: %s" % (
            churn, state["a_alive_at_heal"]))
        assert churn.get("create", 0) > 0 and churn.get("finish", 0) > 0, churn
        assert state["a_rc"] not in (None, 0), "A kept running after losing its lease:\n" + \
            harness.tail(a.log_path)
        assert records(a, "lost the leader lease: exiting so that only one replica writes"), \
            harness.tail(a.log_path)
        assert state["a2_standby"], "A did not come back as a standby:\n" + harness.tail(
            a.log_path)
        t = check_exact(s, b)
        assert (s.cluster.lease() or {}).get("spec", {}).get("holderIdentity") == "gpu-cost-b"
        writes = writes_in_order(recs)
        took = min((rv for rv, what, who in writes
                    if what.startswith("lease/") and who == "gpu-cost-b"), default=None)
        assert took is not None, "the watch saw no Lease held by B"
        by_a = [(rv, what) for rv, what, who in writes if who == "gpu-cost-a"]
        assert any(w.startswith("configmap/gpu-cost-checkpoint") for _, w in by_a) and \
            any(w.startswith("configmap/") and "checkpoint" not in w for _, w in by_a), \
            "A's reports and checkpoint were not seen: the order below proves nothing"
        late = [(rv, w) for rv, w in by_a if rv > took]
        assert not late, "A wrote after B took the Lease (resourceVersion %d): %s" % (
            took, late[:10])
        assert any(rv > took and who == "gpu-cost-b" and w.startswith("configmap/")
                   for rv, w, who in writes), "B wrote no ConfigMap after taking over"
        print("A's last write at resourceVersion %d, B took the Lease at %d" % (
            max(rv for rv, _ in by_a), took))
        check_names_in_api(b, t)
        check_logs(s)
    finally:
        proxy.cut()
        for _, rec in recs:
            rec.stop()


def check_blind_bound(c, rec, t, victims):
    """A blind span's bound (the GPUs free on the nodes in it, as the controller saw them,
    priced; the log says it to the cent, /metrics in full) against what the test hid in it: at
    least the cost of the victims' time in the span (running pods deleted while nobody watched,
    a few seconds into it), which must be more than nothing for this to mean anything, and at
    most the cost of every GPU in the span (docs/controller.md)."""
    start, end = truth.utc(rec["from"]), truth.utc(rec["to"])
    logged = float(rec["bound"].split()[0])
    m = [line for line in _get_json_text(c, "/metrics").splitlines()
         if line.startswith("gpu_cost_blind_span_bound_cost")]
    assert m, "no gpu_cost_blind_span_bound_cost in /metrics"
    bound = float(m[-1].split()[-1])
    assert abs(bound - logged) <= 0.005 + 1e-9, (bound, rec)
    assert end > start, rec
    hidden = sum(u.geq * max(0, min(u.end, end) - max(u.start, start)) / 3600.0 * u.price
                 for u in t.usages
                 if u.name.split("/", 1)[1] in victims and u.end is not None)
    tw = t.window(start, end)
    cap, idle = tw["capacity"]["cost_usd"], tw["idle"]["cost_usd"]
    print("blind span %s..%s (%d s): bound %.6f, hidden %.6f, truth's idle %.6f, capacity %.6f"
          % (rec["from"], rec["to"], end - start, bound, hidden, idle, cap))
    assert hidden > 0, "the victims' deletions fell outside the span: %s, %s" % (rec, victims)
    assert bound >= hidden * (1 - 1e-9), "the bound %.6f is below what the span hid, %.6f" % (
        bound, hidden)
    assert bound <= cap * (1 + 1e-9), "the bound %.6f is above every GPU in the span, %.6f" % (
        bound, cap)


def check_today_after_span(c, t, since, victims, timeout=30):
    """Today, once the controller has caught up (compared until then, at most `timeout` s):
    never above the truth, and short by at most the victims' time after `since`."""
    deadline = time.time() + timeout
    while True:
        over, short, unseen = _today_after_span(c, t, since, victims)
        if (not over and -1e-6 <= short <= unseen + 1e-6) or time.time() > deadline:
            break
        time.sleep(1)
    assert not over, "\n".join(over)
    assert -1e-6 <= short <= unseen + 1e-6, (short, unseen, victims)


def _today_after_span(c, t, since, victims):
    """Today so far against the truth: the groups above it, how much the total is short, and
    the victims' time after `since` (what the blind span may hide)."""
    end = int(time.time()) - 3
    start = truth.floor_day(end)
    doc = _get_json(c, "/api/v1/costs?window=%s,%s&by=team,project" % (
        sim.rfc3339(start), sim.rfc3339(end)))
    tw = t.window(start, end)
    over = []
    for g in doc.get("groups", []):
        k = (g["keys"].get("team"), g["keys"].get("project"))
        want = tw["groups"].get(k, {"gpu_seconds": 0.0})["gpu_seconds"]
        if g["gpu_seconds"] > want + 1e-6 * max(1.0, want):
            over.append("today %s: %r GPU-s, truth %r" % (k, g["gpu_seconds"], want))
    unseen = sum(u.geq * max(0, min(u.end, end) - max(since, start))
                 for u in t.usages if u.name.split("/", 1)[1] in victims and u.end is not None)
    return over, tw["total"]["gpu_seconds"] - doc["total"]["gpu_seconds"], unseen


def _get_json_text(c, path):
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (c.port, path), timeout=10) as r:
        return r.read().decode()


# ---- no complete generation: loud, never silent ------------------------------------------------

def test_no_complete_generation_is_loud(scenario):  # noqa: F811
    """Both generation slots hold a chunk 0 whose other chunks are gone (two writes cut short,
    as far as a restore can tell): the controller starts with an empty ledger and says so in
    an error log line, in /readyz's body, in gpu_cost_checkpoint_lost and in the reports."""
    s = scenario
    s.replay.run(stop=150)
    for name in ("gpu-cost-checkpoint", "gpu-cost-checkpoint-g1"):
        chunk0 = {"version": 1, "write": "0123456789abcdef", "chunk": 0, "of": 2,
                  "written_at": "2026-11-20T09:15:03Z", "controller": "gone", "horizon": None,
                  "counts": {"usage": 0, "capacity": 0, "rollups": 0, "capacity_rollups": 0},
                  "generation": 7, "strings": [], "usage": [], "capacity": [], "rollups": [],
                  "capacity_rollups": []}
        s.cluster.api.call("POST", "/api/v1/namespaces/%s/configmaps" % harness.NS, {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "gpu-cost",
                                                  "gpu-cost.io/kind": "checkpoint"}},
            "data": {"checkpoint.json": json.dumps(chunk0)}})
    c = s.controller(extra=FLAGS).start()
    c.wait_ready()
    lost = records(c, "checkpoint lost: starting with an empty ledger")
    assert lost and lost[0]["level"] == "error", harness.tail(c.log_path)
    assert "slot 0" in lost[0]["error"] and "slot 1" in lost[0]["error"], lost
    body = _get_json_text(c, "/readyz")
    assert body.startswith("ok\n") and "checkpoint: no complete checkpoint generation" in body, \
        body
    deadline = time.time() + 30
    while True:
        m = _get_json_text(c, "/metrics")
        if "gpu_cost_checkpoint_lost 1\n" in m or time.time() > deadline:
            break
        time.sleep(1)
    assert "gpu_cost_checkpoint_lost 1\n" in m
    deadline = time.time() + 60
    while True:
        today = harness.read_reports(s.cluster).get(truth.day_name(truth.floor_day(time.time())))
        if (today and "no complete checkpoint generation" in today.md) or time.time() > deadline:
            break
        time.sleep(1)
    assert today and "no complete checkpoint generation" in today.md, \
        "today's report does not say the history was lost"
    check_logs(s)
