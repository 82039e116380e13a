"""`gpu-cost analyze` on shared GPUs (tests/fixtures/dra-share): every way of sharing a GPU that
docs/dra.md prices by what each holder took, against figures worked out by hand here.

The fixture's objects are shaped as their publishers write them:
- share-mem, share-4: NVIDIA's DRA driver v0.5.0 consumable shares
  (kubernetes-sigs/dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin/consumable_shares.go): memory
  81559Mi with a request policy, and in "4 shares" mode a `shares` capacity of 4; the claims'
  results carry consumedCapacity and a shareID as the 1.37 kube-scheduler writes them;
- dyn-mig: dynamic MIG (cmd/gpu-kubelet-plugin/partitions.go): a counter-set slice
  gpu-0-counter-set and a device slice with the full GPU and every 3g.40gb and 1g.10gb placement,
  each consuming counters;
- hami-dra: HAMi-DRA's kubelet plugin (Project-HAMi/k8s-dra-driver v0.1.0,
  cmd/hami-kubelet-plugin/hami_core.go): hami-gpu-0 with cores 100 and memory in bytes;
- hami-node: classic HAMi (Project-HAMi/HAMi v2.10.0): the device plugin's JSON
  hami.io/node-nvidia-register (two H100s split 10 ways: nvidia.com/gpu 20) and the scheduler's
  hami.io/vgpu-devices-allocated on each pod ("UUID,NVIDIA,<MiB>,<cores>:", ';' per container).
"""

import json

import pytest

from conftest import FIXTURES

D = FIXTURES / "dra-share"
DAY = "2026-11-17T00:00:00Z,2026-11-18T00:00:00Z"
MIB = 1024 * 1024
GPU_MEM = 81559 * MIB           # the driver's memory, rounded down to a MiB
HAMI_DRA_MEM = 85520809984      # HAMi-DRA's, in bytes as NVML gives it
PRICE = 4.0                     # prices.json: an H100 hour


def analyze(cli, by, window=DAY):
    r = cli.ok("analyze", "--pods", D / "pods.json", "--nodes", D / "nodes.json",
               "--claims", D / "dra.json", "--slices", D / "dra.json",
               "--prices", D / "prices.json", "--window", window, "--by", by,
               "--format", "json")
    return json.loads(r.out)


# GPU-hours each pod held, by the rule of docs/dra.md: the largest fraction of the device's
# capacities its allocation consumed (a MIG partition its profile's share), times its hours.
WANT = {
    "embed": 2 * 20 * 1024 * MIB / GPU_MEM,              # 20Gi of the memory-mode GPU
    "rank": 2 * 40 * 1024 * MIB / GPU_MEM,               # 40Gi
    "chat-1": 2 * 1 / 4,                                 # 1 of 4 shares (memory 0)
    "chat-2": 2 * 2 / 4,                                 # 2 of 4 shares
    "finetune": 4 * 0.5,                                 # a 3g.40gb carved from an H100
    "hd-serve": 2 * max(30 / 100, 20 * 1024 * MIB / HAMI_DRA_MEM),  # 30 % of the cores
    "hami-a": 2 * max(20000 / 81559, 30 / 100),          # HAMi: 30 % of the cores
    "hami-b": 1 * 2 * max(40780 / 81559, 50 / 100),      # two vGPUs, each half of a GPU
}


def test_each_holder_pays_its_share(cli):
    doc = analyze(cli, "pod")
    got = {g["keys"]["pod"]: g for g in doc["groups"]}
    assert set(got) == set(WANT)
    for pod, hours in WANT.items():
        assert got[pod]["gpu_hours"] == pytest.approx(hours, abs=1e-9), pod
        assert got[pod]["cost_usd"] == pytest.approx(hours * PRICE, abs=1e-6), pod
        assert got[pod]["pods"] == 1, pod
    # 7.2 GPU-hours where a whole GPU per holder would bill 2+2+2+2+4+2+2+2x1 = 18.
    assert doc["total"]["gpu_hours"] == pytest.approx(sum(WANT.values()), abs=1e-9)


def test_capacity_counts_each_gpu_once(cli):
    """One GPU per DRA node (the partitionable GPU once, not once per partition), and HAMi's
    node its two registered GPUs, not its 20 vGPU slots; what holders leave is idle."""
    doc = analyze(cli, "node")
    held = {g["keys"]["node"]: g["gpu_hours"] for g in doc["groups"]}
    idle = {n["node"]: n["gpu_hours"] for n in doc["idle"]["nodes"]}
    gpus = {"share-mem": 1, "share-4": 1, "dyn-mig": 1, "hami-dra": 1, "hami-node": 2}
    assert set(idle) == set(gpus)
    for node, n in gpus.items():
        assert held.get(node, 0) + idle[node] == pytest.approx(24 * n, abs=1e-9), node
    assert doc["capacity"]["gpu_hours"] == pytest.approx(24 * 6, abs=1e-9)
    assert held["share-4"] == pytest.approx(1.5, abs=1e-9)
    assert held["hami-node"] == pytest.approx(WANT["hami-a"] + WANT["hami-b"], abs=1e-9)


def test_hour_by_hour_holders_and_idle_make_one_gpu(cli):
    """Every hour of the day on each shared GPU: held plus idle is the GPU, exactly."""
    for h in range(0, 5):
        w = "2026-11-17T%02d:00:00Z,2026-11-17T%02d:00:00Z" % (h, h + 1)
        doc = analyze(cli, "node", w)
        held = {g["keys"]["node"]: g["gpu_hours"] for g in doc["groups"]}
        for n in doc["idle"]["nodes"]:
            want = 2 if n["node"] == "hami-node" else 1
            assert held.get(n["node"], 0) + n["gpu_hours"] == pytest.approx(want, abs=1e-9), (
                h, n["node"])
