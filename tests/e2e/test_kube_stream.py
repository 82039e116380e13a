"""The pod watch's initial sync as a streaming list (WatchList, KEP-3157) against a real
kube-apiserver, and its fallback to paged LISTs when the server refuses one.

One cluster, one back-dated replay (sim.py), two controllers in turn, each from an empty state
(no checkpoint): the first against kube-apiserver as shipped (WatchList on), the second after
kube-apiserver restarted with --feature-gates=WatchList=false, which answers a watch with
sendInitialEvents 422. The audit log (E2E_AUDIT=1) shows which requests each made; the pods
each controller then knows (/api/v1/pods) must be the same.

kube-apiserver's flags come from scripts/e2e-cluster.sh, which takes none from a test: the
gate is set by a wrapper, a kube-apiserver in a directory of its own (E2E_BIN for this cluster,
the other tools linked) that adds the flag while a file beside it exists.
"""

import json
import os
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import harness
import sim

WRAPPER = """#!/bin/bash
if [ -e "$(dirname "$0")/watchlist-off" ]; then
\texec -a "$0" %(real)s --feature-gates=WatchList=false "$@"
fi
exec -a "$0" %(real)s "$@"
"""
# What a pod is in /api/v1/pods, apart from the figures that grow with the clock.
KEYS = ("uid", "namespace", "name", "node", "team", "project", "model", "capacity_type",
        "controller_kind", "controller", "workload", "gpus_requested", "geq", "start", "end",
        "running")


@pytest.fixture
def gated_cluster(e2e_bin, tmp_path, monkeypatch):
    """A cluster whose kube-apiserver runs with WatchList off while bin/watchlist-off exists."""
    b = tmp_path / "bin"
    b.mkdir()
    for tool in ("etcd", "kube-scheduler", "kube-controller-manager", "kubectl"):
        os.symlink(Path(e2e_bin) / tool, b / tool)
    real = str(Path(e2e_bin).resolve() / "kube-apiserver")
    (b / "kube-apiserver").write_text(WRAPPER % {"real": real})
    (b / "kube-apiserver").chmod(0o755)
    monkeypatch.setenv("E2E_BIN", str(b))
    monkeypatch.setenv("E2E_AUDIT", "1")
    c = harness.Cluster(tmp_path / "cluster")
    c.start()
    yield c, b / "watchlist-off"
    c.stop()


def pods_known(ctl, timeout=60):
    """The controller's pods once two reads two seconds apart agree (it has synced)."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        with urllib.request.urlopen(
                "http://127.0.0.1:%d/api/v1/pods?limit=100000" % ctl.port, timeout=10) as r:
            doc = json.loads(r.read())
        now = sorted(tuple(p.get(k) for k in KEYS) for p in doc["pods"])
        if now and now == last:
            return now
        last = now
        time.sleep(2)
    raise AssertionError("the controller's pods did not settle: %d" % len(last or []))


def pod_requests(cluster, since):
    """(verb, requestURI, status) of the controller's pod requests received since `since`, one
    per request (the audit log has a line per stage), from its user agent (the test's own
    requests use the controller's token too)."""
    out = {}
    with open(cluster.dir / "audit.log") as f:
        for line in f:
            ev = json.loads(line)
            ref = ev.get("objectRef") or {}
            if ref.get("resource") != "pods" or ref.get("subresource"):
                continue
            if not ev.get("userAgent", "").startswith("gpu-cost/"):
                continue
            if harness._utc(ev.get("requestReceivedTimestamp", "")) < since:
                continue
            out[ev["auditID"]] = (ev["verb"], ev["requestURI"],
                                  (ev.get("responseStatus") or {}).get("code"))
    return list(out.values())


def listed_pods(ctl):
    return [r.get("detail", "") for r in ctl.log_records()
            if r.get("msg") == "listed" and r.get("resource") == "pods"]


def drop_checkpoint(cluster):
    """The second controller must sync from the API alone, not from the first's checkpoint."""
    status, doc = cluster.api.request("GET", "/api/v1/namespaces/%s/configmaps" % harness.NS)
    assert status == 200, doc
    for cm in doc["items"]:
        name = cm["metadata"]["name"]
        if name.startswith("gpu-cost-checkpoint"):
            cluster.api.request("DELETE", "/api/v1/namespaces/%s/configmaps/%s" % (
                harness.NS, urllib.parse.quote(name)))


def test_streaming_list_and_its_fallback(gated_cluster, controller_bin, tmp_path):
    cluster, gate_off = gated_cluster
    replay = sim.Replay(cluster.api, cluster.etcd)
    replay.setup()
    cluster.apply(harness.RBAC)
    cluster.wait_controller_can()
    replay.run()
    extra = ["--log-level", "debug", "--no-leader-election", "--snapshot-interval", "1s"]

    # WatchList on: the pods come as a streaming list, never a LIST.
    since = int(time.time()) - 1
    a = harness.Controller(controller_bin, cluster, tmp_path / "streamed.log", extra=extra)
    try:
        a.start().wait_ready()
        streamed = pods_known(a)
        reqs = pod_requests(cluster, since)
        listed = listed_pods(a)
    finally:
        a.stop()
        print("streamed controller log (last lines):\n%s" % harness.tail(a.log_path, 20))
    assert len(streamed) >= 5, streamed
    assert [d for d in listed if d.endswith(", streamed")], listed
    assert any(v == "watch" and "sendInitialEvents=true" in u and
               "resourceVersionMatch=NotOlderThan" in u and s == 200
               for v, u, s in reqs), reqs
    assert not [r for r in reqs if r[0] == "list"], reqs

    # WatchList off: the stream is refused (422), the pods come by paged LISTs, and what the
    # controller knows is the same.
    drop_checkpoint(cluster)
    gate_off.write_text("")
    cluster.restart_apiserver()
    cluster.wait_controller_can()
    since = int(time.time()) - 1
    b = harness.Controller(controller_bin, cluster, tmp_path / "paged.log", extra=extra)
    try:
        b.start().wait_ready()
        paged = pods_known(b)
        reqs = pod_requests(cluster, since)
        listed = listed_pods(b)
        refused = [r.get("detail", "") for r in b.log_records()
                   if r.get("resource") == "pods" and "streaming list" in r.get("detail", "")]
    finally:
        b.stop()
        print("paged controller log (last lines):\n%s" % harness.tail(b.log_path, 20))
    assert any(v == "watch" and "sendInitialEvents=true" in u and s == 422
               for v, u, s in reqs), reqs
    assert any(v == "list" and s == 200 for v, u, s in reqs), reqs
    # Refused once: every later (re)list of this run is paged.
    assert sum(1 for v, u, s in reqs if "sendInitialEvents=true" in u) == 1, reqs
    assert refused and all("LISTing in pages" in d for d in refused), refused
    assert listed and not [d for d in listed if d.endswith(", streamed")], listed
    assert paged == streamed
