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


# ---- the controller's API and the remote CLI ---------------------------------------------------

@pytest.fixture(scope="module")
def labelled_demo(cli, tmp_path_factory):
    """The demo controller keeping cost-center and app (labels.dimensions)."""
    from test_remote import Demo, _controller_path
    tmp = tmp_path_factory.mktemp("labelled")
    cfg = json.loads((EXAMPLES / "config.json").read_text())
    cfg["labels"] = {"dimensions": ["cost-center", "app"]}
    path = tmp / "config.json"
    path.write_text(json.dumps(cfg))
    d = Demo(_controller_path(cli), tmp, extra=["--config", str(path)])
    yield d
    assert d.stop() == 0


def test_api_costs_by_label_is_the_offline_analyzers(cli, labelled_demo):
    doc = labelled_demo.json("/api/v1/costs", window=WINDOW, by="team,label:cost-center")
    want = cli.ok(*analyze_args(WINDOW, by="team,label:cost-center")).json()
    assert doc["by"] == want["by"] == ["team", "label:cost-center"]
    got = {tuple(g["keys"].values()): g["cost_usd"] for g in doc["groups"]}
    exp = {tuple(g["keys"].values()): g["cost_usd"] for g in want["groups"]}
    assert got.keys() == exp.keys()
    for k, v in exp.items():
        assert got[k] == pytest.approx(v, rel=1e-9), k


def test_api_label_filter_and_refusal(cli, labelled_demo):
    doc = labelled_demo.json("/api/v1/costs", window=WINDOW, by="team",
                             **{"label:cost-center": "cc-4410"})
    by_label = labelled_demo.json("/api/v1/costs", window=WINDOW, by="label:cost-center")
    cc = [g for g in by_label["groups"] if g["keys"]["label:cost-center"] == "cc-4410"][0]
    assert doc["total"]["cost_usd"] == pytest.approx(cc["cost_usd"])
    status, body = labelled_demo.get("/api/v1/costs", window=WINDOW, by="label:experiment-id")
    assert status == 400
    err = json.loads(body)["error"]
    assert "(kept: cost-center, app)" in err and "labels.dimensions" in err


def test_allocation_aggregate_by_label_gives_real_values(cli, cluster, labelled_demo):
    doc = labelled_demo.json("/allocation", window=WINDOW, aggregate="label:cost-center")
    (data,) = doc["data"]
    want = label_truth(cluster, "cost-center")
    names = set(data)
    assert "cc-4410" in names and "cc-vision-9" in names
    assert names == {v if v != UNLABELLED else "__unallocated__" for v in want}
    for v, w in want.items():
        a = data[v if v != UNLABELLED else "__unallocated__"]
        assert a["gpuCost"] == pytest.approx(w["cost_usd"], abs=1e-4)
        if v != UNLABELLED:
            assert a["properties"]["labels"] == {"cost-center": v}


def test_remote_costs_by_label_equals_the_offline_table(cli, labelled_demo):
    for fmt in ("table", "markdown"):
        got = cli("costs", "--server", labelled_demo.url, "--window", WINDOW, "--by",
                  "label:cost-center,label:app", "--format", fmt)
        assert got.code == 0, got
        want = cli.ok(*analyze_args(WINDOW, by="label:cost-center,label:app", fmt=fmt))
        assert got.out == want.out
    r = cli("costs", "--server", labelled_demo.url, "--window", WINDOW, "--by", "label:nope")
    assert r.code == 2, r
    assert "not kept" in r.err
