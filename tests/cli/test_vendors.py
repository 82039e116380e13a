"""`gpu-cost analyze` on AMD Instinct, AWS Trainium/Inferentia, Intel Gaudi and Google TPU nodes
(tests/fixtures/vendors), with no configuration, against the truth recomputed in truth.py and
against figures worked out by hand.

Where the fixtures' labels and resources come from (each vendor's own source):
  - AMD: ROCm/k8s-device-plugin, docs/user-guide/installation.md ("Example labels for an AMD
    MI300X GPU": amd.com/gpu.cu-count=304, device-id=74a1, family=AI,
    product-name=AMD_Instinct_MI300X_OAM, simd-count=1216, vram=192G) and
    cmd/k8s-node-labeller/main.go (the beta.amd.com/ twins, with a .<value>=<count> label each;
    amd.com/gpu.compute-memory-partition, e.g. cpx_nps4; per-value labels such as
    amd.com/gpu.cu-count.38 on a node whose devices differ), tag v1.31.0.9 and main at
    ed764684; docs/user-guide/configuration.md for the resources: "single" reports a CPX node of
    8 GPUs as amd.com/gpu: 64, "mixed" names them amd.com/<compute>_<memory> (amd.com/cpx_nps4,
    amd.com/spx_nps1). ROCm/gpu-operator internal/utils.go (feature.node.kubernetes.io/amd-gpu).
    A partition's compute units: 38 per XCD of an MI300X (ROCm GPU specifications,
    rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html, "304 (38 per XCD)").
  - AWS Neuron: the device plugin's aws.amazon.com/neuron and aws.amazon.com/neuroncore (AWS
    Neuron docs, containers/tutorials/k8s-neuron-device-plugin); devices and cores per instance
    from the Neuron architecture pages (trn1.32xlarge 16 Trainium of 2 NeuronCore-v2,
    inf2.48xlarge 12 Inferentia2 of 2). EKS's node labels (eks.amazonaws.com/capacityType).
  - Intel Gaudi: HabanaAI/habanalabs-k8s-device-plugin main.go ("habana.ai/" + "gaudi", v1.16.0);
    dl1.24xlarge has 8 Gaudi (AWS Compute Blog, "Amazon EC2 DL1 instances Deep Dive").
  - Google TPU: GKE's cloud.google.com/gke-tpu-accelerator and gke-tpu-topology with the
    machine types of AI-Hypercomputer/xpk src/xpk/core/system_characteristics.py (v1.13.0:
    tpu-v5-lite-podslice on ct5lp-hightpu-4t, tpu-v6e-slice on ct6e-standard-4t); google.com/tpu
    counts the chips of the node's VM.
Names, uids and times are invented.

The built-in prices (docs/prices.md), per device-hour:
  - AMD-Instinct-MI300X 1.99: DigitalOcean GPU Droplet list price, docs.digitalocean.com
    products/droplets/details/pricing (validated 2026-05-28): MI300X $1.99 per hour, 8x $15.92;
  - AWS-Trainium1 21.50/16, AWS-Inferentia2 12.98127/12, Intel-Gaudi1 13.10904/8: us-east-1
    on-demand, aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go
    ("generated at 2026-07-20T13:44:30Z for us-east-1");
  - Google-TPU-v5e 1.20 and v6e 2.70 per chip-hour in us-central1: Google's SKU prices as
    skypilot-org/skypilot-catalog catalogs/v7/gcp/vms.csv (commit 017e2502) records them
    (tpu-v5litepod-1 1.2, tpu-v6e-1 2.7).
Spot and reserved have no separate figures: the on-demand price stands for every capacity type.
"""

import copy
import json

import pytest

import truth
from conftest import FIXTURES, analyze_args
from test_cli import assert_idle_equals_truth, assert_summary_equals_truth

VENDORS = FIXTURES / "vendors"
W = "2026-11-16T00:00:00Z,2026-11-23T00:00:00Z"
CUT = "2026-11-17T09:30:00Z,2026-11-19T02:15:00Z"  # cuts running and finished pods
EARLY = "2026-11-01T00:00:00Z,2026-11-02T00:00:00Z"  # before the nodes exist
WINDOWS = {"week": W, "cut": CUT, "early": EARLY}
BYS = ["model", "node", "team,project", "namespace", "capacity_type", "model,capacity_type"]

PRICES = {"AMD-Instinct-MI300X": 1.99, "AWS-Trainium1": 21.50 / 16,
          "AWS-Inferentia2": 1.0818, "Intel-Gaudi1": 1.6386,
          "Google-TPU-v5e": 1.20, "Google-TPU-v6e": 2.70}
# The truth's catalog: the figures above, for any capacity type.
TRUTH_PRICES = {"prices": [{"model": m, "capacity_type": "*", "usd_per_gpu_hour": p}
                           for m, p in PRICES.items()]}


def args(window, by, config=None):
    return analyze_args(window, by=by, namespaces=False, config=config,
                        pods=VENDORS / "pods.json", nodes=VENDORS / "nodes.json")


def vendor_truth(window, by, config=None):
    return truth.Cluster(VENDORS / "pods.json", VENDORS / "nodes.json", None, config,
                         prices=TRUTH_PRICES).compute(*truth.parse_window(window), by=by)


# ---- the truth, checked by hand ---------------------------------------------------------------

def test_truth_matches_hand_figures():
    t = vendor_truth(W, ("node",))
    g = {k[0]: v["gpu_seconds"] / 3600 for k, v in t["groups"].items()}
    # 8 whole MI300X from Nov 17: 6 days.
    assert g["mi300x-spx-0"] == pytest.approx(8 * 144)
    # CPX: 3 partitions (3/8 GPU) for 10 h, then 8 partitions (one GPU) for 5 days.
    assert g["mi300x-cpx-0"] == pytest.approx(3 / 8 * 10 + 1 * 120)
    # mixed: 2 CPX partitions (1/4 GPU) from Nov 18 12:00; one SPX GPU for a day.
    assert g["mi300x-mixed-0"] == pytest.approx(2 / 8 * 108 + 24)
    # Trainium: all 16 devices for a day; 4 NeuronCores (2 devices) for 5 days.
    assert g["ip-10-0-12-7.ec2.internal"] == pytest.approx(16 * 24 + 2 * 120)
    # Inferentia2: 6 NeuronCores, 3 devices, 4 days.
    assert g["ip-10-0-40-19.ec2.internal"] == pytest.approx(3 * 96)
    assert g["ip-10-0-77-3.ec2.internal"] == pytest.approx(8 * 5)
    assert g["gke-tpu-v5e-pool-8a2c-x7"] == pytest.approx(4 * 144)
    assert g["gke-tpu-v6e-pool-3f1d-k2"] == pytest.approx(4 * 48)
    # Capacity is physical devices: 8 + 8 + 8 GPUs, 16 + 12 Neuron devices, 8 Gaudi, 4 + 4
    # chips, over the whole week (the nodes exist from Nov 10).
    assert t["capacity"]["gpu_seconds"] / 3600 == pytest.approx((24 + 28 + 8 + 8) * 168)
    assert t["total"]["cost_usd"] == pytest.approx(
        1.99 * (1152 + 123.75 + 51) + 21.50 / 16 * 624 + 1.0818 * 288 + 1.6386 * 40 +
        1.20 * 576 + 2.70 * 192)


# ---- analyze against the truth ------------------------------------------------------------------

@pytest.mark.parametrize("by", BYS)
@pytest.mark.parametrize("wname", sorted(WINDOWS))
def test_analyze_equals_truth(cli, wname, by):
    doc = cli.ok(*args(WINDOWS[wname], by)).json()
    t = vendor_truth(WINDOWS[wname], tuple(by.split(",")))
    assert_summary_equals_truth(doc, t, by, check_pods=True)
    assert_idle_equals_truth(doc, t)


def test_models_and_capacity_types_without_configuration(cli):
    doc = cli.ok(*args(W, "node,model,capacity_type")).json()
    got = {g["keys"]["node"]: (g["keys"]["model"], g["keys"]["capacity_type"])
           for g in doc["groups"]}
    assert got == {
        "mi300x-spx-0": ("AMD-Instinct-MI300X", "on-demand"),
        "mi300x-cpx-0": ("AMD-Instinct-MI300X", "on-demand"),
        "mi300x-mixed-0": ("AMD-Instinct-MI300X", "on-demand"),
        "ip-10-0-12-7.ec2.internal": ("AWS-Trainium1", "on-demand"),
        "ip-10-0-40-19.ec2.internal": ("AWS-Inferentia2", "spot"),
        "ip-10-0-77-3.ec2.internal": ("Intel-Gaudi1", "on-demand"),
        "gke-tpu-v5e-pool-8a2c-x7": ("Google-TPU-v5e", "on-demand"),
        "gke-tpu-v6e-pool-3f1d-k2": ("Google-TPU-v6e", "spot"),
    }


def test_partitions_are_not_whole_gpus(cli):
    """A CPX node of 8 MI300X advertises 64 amd.com/gpu: its capacity is 8 GPUs, not 64."""
    doc = cli.ok(*args(W, "node")).json()
    idle = {n["node"]: n for n in doc["idle"]["nodes"]}
    used = {g["keys"]["node"]: g["gpu_hours"] for g in doc["groups"]}
    for node in ("mi300x-spx-0", "mi300x-cpx-0", "mi300x-mixed-0"):
        assert used[node] + idle[node]["gpu_hours"] == pytest.approx(8 * 168), node
    trn = "ip-10-0-12-7.ec2.internal"
    assert used[trn] + idle[trn]["gpu_hours"] == pytest.approx(16 * 168)


def test_configured_resources_still_override(cli, tmp_path):
    """A `resources` entry replaces the built-in rule: amd.com/gpu at 1.0 counts every CPX
    partition as a GPU again, and a configured neuroncore is a resource of its own, its units
    added to the devices' as any two configured resources are (docs/configuration.md)."""
    cfg = {"resources": [{"name": "amd.com/gpu", "kind": "fixed", "gpus_per_unit": 1.0},
                         {"name": "aws.amazon.com/neuroncore", "kind": "fixed",
                          "gpus_per_unit": 0.5}]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    doc = cli.ok(*args(W, "node", config=path)).json()
    t = vendor_truth(W, ("node",), config=copy.deepcopy(cfg))
    assert_summary_equals_truth(doc, t, "node", check_pods=True)
    assert_idle_equals_truth(doc, t)
    g = {x["keys"]["node"]: x["gpu_hours"] for x in doc["groups"]}
    assert g["mi300x-cpx-0"] == pytest.approx(3 * 10 + 8 * 120)
    assert g["ip-10-0-12-7.ec2.internal"] == pytest.approx(16 * 24 + 4 * 0.5 * 120)
    idle = {n["node"]: n["gpu_hours"] for n in doc["idle"]["nodes"]}
    assert g["mi300x-cpx-0"] + idle["mi300x-cpx-0"] == pytest.approx(64 * 168)
    assert g["ip-10-0-12-7.ec2.internal"] + idle["ip-10-0-12-7.ec2.internal"] == \
        pytest.approx((16 + 32 * 0.5) * 168)
