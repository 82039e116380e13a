"""The Prometheus path against a real Prometheus (Debian's): a day of one-minute dcgm-exporter
samples written as OpenMetrics (timestamps in seconds, `# EOF` last), back-filled with
`promtool tsdb create-blocks-from openmetrics`, then read by pkg/gpuuse's query_range
(tests/cli/gpuuse_query.c drives it). The day must read as a day: about 1,440 samples, coverage
about 1.0, idle all along; and it must equal what the same series give read directly, in either
format (OpenMetrics seconds, or text format 0.0.4 milliseconds)."""

import json
import os
import socket
import subprocess
import time
import urllib.request

import pytest

from test_metrics import series_body

POD, NS = "notebook-0", "research"
STEP = 60


@pytest.fixture(scope="module")
def query_bin():
    path = os.environ.get("GPUUSE_QUERY")
    if not path:
        pytest.fail("GPUUSE_QUERY is not set: it must name build/gpuuse_query. Run `make cli-test`",
                    pytrace=False)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    """prometheus on 127.0.0.1 over a TSDB promtool back-filled."""

    def __init__(self, workdir, openmetrics_file):
        self.dir = workdir
        data = workdir / "data"
        data.mkdir(parents=True)
        cp = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics",
                             str(openmetrics_file), str(data)],
                            capture_output=True, text=True, timeout=300)
        assert cp.returncode == 0, "promtool: %s%s" % (cp.stdout, cp.stderr)
        self.port = free_port()
        cfg = workdir / "prometheus.yml"
        cfg.write_text("global:\n  scrape_interval: 1h\nscrape_configs: []\n")
        self.log = open(workdir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=%s" % cfg, "--storage.tsdb.path=%s" % data,
             "--storage.tsdb.retention.time=30d", "--web.listen-address=127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=self.log, cwd=str(workdir))
        self.url = "http://127.0.0.1:%d" % self.port
        deadline = time.time() + 60
        while time.time() < deadline:
            assert self.proc.poll() is None, (workdir / "prometheus.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise AssertionError("prometheus not ready after 60 s")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def summaries(query_bin, *args):
    cp = subprocess.run([query_bin] + [str(a) for a in args], capture_output=True, text=True,
                        timeout=120)
    assert cp.returncode == 0, cp.stderr
    return {(d["namespace"], d["pod"]): d for d in map(json.loads, cp.stdout.splitlines())}


def test_a_day_of_openmetrics_through_prometheus(query_bin, tmp_path):
    # The day before yesterday, so the blocks sit inside Prometheus' retention whatever the date.
    start = (int(time.time()) // 86400 - 2) * 86400
    end = start + 86400
    om = tmp_path / "day.om"
    om.write_text(series_body(POD, NS, start, 1440, True))
    text = tmp_path / "day.prom"
    text.write_text(series_body(POD, NS, start, 1440, False))

    prom = Prometheus(tmp_path / "prometheus", om)
    try:
        via_prom = summaries(query_bin, "prom", prom.url, start, end, STEP)
    finally:
        prom.stop()
    direct_om = summaries(query_bin, "file", om, start, end, STEP)
    direct_text = summaries(query_bin, "file", text, start, end, STEP)

    (p,) = via_prom.values()
    assert (p["namespace"], p["pod"]) == (NS, POD)
    assert p["samples"] == 1440, p
    assert p["first_at"] == start and p["last_at"] == end - STEP, p
    assert p["coverage"] == pytest.approx(1.0, abs=0.01), p
    assert p["idle_longest_s"] == 86400, p

    # The same series read directly, in either format, give the same summary.
    for d in (direct_om, direct_text):
        q = d[(NS, POD)]
        assert q["samples"] == p["samples"] and q["first_at"] == p["first_at"]
        assert q["last_at"] == p["last_at"]
        for k in ("coverage", "activity_mean", "mem_used_peak_mib", "mem_total_mib"):
            assert q[k] == pytest.approx(p[k], abs=1e-6), (k, q, p)
        assert q["idle_longest_s"] == p["idle_longest_s"], (q, p)
