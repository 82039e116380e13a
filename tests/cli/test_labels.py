"""`gpu-cost analyze --by label:<key>`: any pod label as a dimension (the pod's value, else its
namespace's, else __unlabelled__), checked against the examples worked out independently."""

import json

import pytest

from conftest import EXAMPLES, analyze_args

WINDOW = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
UNLABELLED = "__unlabelled__"


def label_truth(cluster, key, window=WINDOW):
    """GPU-seconds and cost by the label's value, from the dumps (not from gpu-cost)."""
    start, end = (cluster_time(t) for t in window.split(","))
    pods = json.loads((EXAMPLES / "pods.json").read_text())["items"]
    nss = json.loads((EXAMPLES / "namespaces.json").read_text())["items"]
    pod_labels = {(p["metadata"]["namespace"], p["metadata"]["name"]):
                  p["metadata"].get("labels") or {} for p in pods}
    ns_labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nss}
    out = {}
    for u in cluster.usages:
        sec = u.seconds(start, end)
        if sec <= 0:
            continue
        v = pod_labels[(u.ns, u.name)].get(key) or ns_labels.get(u.ns, {}).get(key) or UNLABELLED
        g = out.setdefault(v, {"gpu_seconds": 0.0, "cost_usd": 0.0, "pods": 0})
        g["gpu_seconds"] += u.geq * sec
        g["cost_usd"] += u.geq * sec / 3600.0 * u.node.price
        g["pods"] += 1
    return out


def cluster_time(s):
    import truth
    return truth.parse_time(s)


@pytest.mark.parametrize("key", ["cost-center", "app", "team"])
def test_analyze_by_label_matches_truth(cli, cluster, key):
    doc = cli.ok(*analyze_args(WINDOW, by="label:" + key)).json()
    want = label_truth(cluster, key)
    assert doc["by"] == ["label:" + key]
    got = {g["keys"]["label:" + key]: g for g in doc["groups"]}
    assert set(got) == set(want)
    for v, w in want.items():
        assert got[v]["gpu_seconds"] == pytest.approx(w["gpu_seconds"], rel=1e-9), v
        assert got[v]["cost_usd"] == pytest.approx(w["cost_usd"], rel=1e-9), v
        assert got[v]["pods"] == w["pods"], v
    # The values of a key add up to the total.
    assert sum(g["cost_usd"] for g in doc["groups"]) == pytest.approx(doc["total"]["cost_usd"])


def test_analyze_by_label_namespace_fallback(cli, cluster):
    """recsys labels its namespace cost-center=cc-4410: its pods without the label take it."""
    want = label_truth(cluster, "cost-center")
    assert "cc-4410" in want and UNLABELLED in want
    doc = cli.ok(*analyze_args(WINDOW, by="namespace,label:cost-center")).json()
    rows = {(g["keys"]["namespace"], g["keys"]["label:cost-center"]) for g in doc["groups"]}
    assert ("recsys", "cc-4410") in rows
    assert not any(ns == "recsys" and v == UNLABELLED for ns, v in rows)


def test_analyze_by_label_with_others_and_table(cli):
    doc = cli.ok(*analyze_args(WINDOW, by="team,label:cost-center,label:app")).json()
    assert doc["by"] == ["team", "label:cost-center", "label:app"]
    for g in doc["groups"]:
        assert set(g["keys"]) == {"team", "label:cost-center", "label:app"}
    out = cli.ok(*analyze_args(WINDOW, by="label:cost-center", fmt="table")).out
    assert out.splitlines()[0].startswith("LABEL:COST-CENTER")
    assert UNLABELLED in out


def test_analyze_label_keys_from_configuration(cli, tmp_path):
    """labels.dimensions of the configuration are kept too; --by may name any other key."""
    cfg = json.loads((EXAMPLES / "config.json").read_text())
    cfg["labels"] = {"dimensions": ["cost-center"]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    doc = cli.ok(*analyze_args(WINDOW, by="label:app,label:cost-center", config=path)).json()
    assert doc["by"] == ["label:app", "label:cost-center"]


@pytest.mark.parametrize("by,msg", [
    ("label:", "names no label key"),
    ("label:a,label:b,label:c,label:d,label:e", "at most 4 label dimensions"),
    ("label:a,label:a", "duplicate dimension"),
    ("label:bad key", "not a label key"),
    ("labels", "unknown dimension"),
])
def test_analyze_by_label_errors(cli, by, msg):
    r = cli(*analyze_args(WINDOW, by=by))
    assert r.code == 2, r
    assert msg in r.err, r
