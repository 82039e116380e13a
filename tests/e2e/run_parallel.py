#!/usr/bin/env python3
"""Runs the e2e scenarios (tests/e2e/test_*.py) in N worker processes side by side, one test file
at a time per worker, the longest first, so that the suite's wall time is about the longest
worker's share rather than the sum. Most scenarios spend their time waiting on the controller's
intervals and the API server, not on the CPU, which is why two workers on two cores finish in
about half the time.

Each file runs as its own pytest process with its own --basetemp (pytest's numbered temporary
directories are not safe between concurrent runs) and E2E_PORT_BASE, the worker's own range of
loopback ports (harness.free_port), and in its own process group, so that a timeout stops all it
started. Each file's output goes to <logs>/<file>.log; the log of every file that failed is
printed at the end, then one line per file: its outcome, its pytest summary and its seconds.

    python3 tests/e2e/run_parallel.py [--jobs N] [--timeout S] [--logs DIR] [pytest args] [files]

Exit status: 0 when every file passed, 1 when one failed, 124 on the timeout (each file still
running is named, with its log's tail). --jobs 1 runs the files one after another.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Seconds each file took in a serial run on two cores (the order matters, not the figures):
# the longest go first, so that no long file is left to start last. A file not named here is
# taken as long and goes first too.
WEIGHTS = {
    "test_scale.py": 600,
    "test_faults.py": 420,
    "test_usage.py": 200,
    "test_dra_share.py": 150,
    "test_controller.py": 150,
    "test_usage_basis.py": 120,
    "test_dra.py": 100,
    "test_api_live.py": 100,
    "test_workloads.py": 90,
    "test_finance.py": 80,
    "test_auth.py": 80,
    "test_rbac.py": 60,
    "test_calendar.py": 60,
    "test_kube_stream.py": 50,
    "test_client_cert.py": 40,
    "test_sim.py": 30,
    "test_truth.py": 20,
}
UNKNOWN_WEIGHT = 10_000
PORT_BASE, PORT_SPAN = 20000, 2000


def summary_line(log):
    """pytest's last line ("3 passed, 1 skipped in 12.3s"), or the log's last line."""
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "(no log)"
    return lines[-1].strip("= ") if lines else "(empty log)"


class Runner:
    def __init__(self, files, jobs, timeout, logs, pytest_args):
        self.queue = sorted(files, key=lambda f: -WEIGHTS.get(f.name, UNKNOWN_WEIGHT))
        self.jobs, self.timeout, self.logs = jobs, timeout, logs
        self.pytest_args = pytest_args
        self.lock = threading.Lock()
        self.running = {}  # file -> (Popen, start)
        self.done = []  # (file, rc, seconds)
        self.stopping = False
        self.t0 = time.monotonic()

    def _next(self):
        with self.lock:
            if self.stopping or not self.queue:
                return None
            return self.queue.pop(0)

    def _worker(self, k):
        env = dict(os.environ, E2E_PORT_BASE=str(PORT_BASE + k * PORT_SPAN), PYTHONUNBUFFERED="1")
        while True:
            f = self._next()
            if f is None:
                return
            log = self.logs / (f.stem + ".log")
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "--basetemp", str(self.logs / ("tmp-" + f.stem))] + self.pytest_args + [str(f)]
            start = time.monotonic()
            with open(log, "wb") as out:
                with self.lock:
                    if self.stopping:
                        return
                    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                         cwd=str(HERE.parent.parent), start_new_session=True)
                    self.running[f] = (p, start)
                rc = p.wait()
            secs = time.monotonic() - start
            with self.lock:
                del self.running[f]
                if self.stopping:  # stopped by the timeout: named as timed out, not failed
                    return
                self.done.append((f, rc, secs))
                print("[%s] %-24s %s (%.0f s, worker %d)" % (
                    time.strftime("%H:%M:%S"), f.name, summary_line(log), secs, k), flush=True)

    def stop_all(self):
        with self.lock:
            self.stopping = True
            for p, _ in self.running.values():
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        time.sleep(5)
        with self.lock:
            for p, _ in self.running.values():
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def run(self):
        threads = [threading.Thread(target=self._worker, args=(k,), daemon=True)
                   for k in range(self.jobs)]
        for t in threads:
            t.start()
        deadline = self.t0 + self.timeout
        timed_out = []
        try:
            for t in threads:
                t.join(max(0.0, deadline - time.monotonic()))
                if t.is_alive():
                    break
        except KeyboardInterrupt:
            self.stop_all()
            raise
        if any(t.is_alive() for t in threads):
            with self.lock:
                timed_out = sorted(self.running, key=lambda f: f.name)
            self.stop_all()
            for t in threads:
                t.join(30)
        return timed_out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (1-8)")
    ap.add_argument("--timeout", type=float, default=2700, help="seconds for the whole suite")
    ap.add_argument("--logs", help="directory for each file's log (default: a new temporary one)")
    args, rest = ap.parse_known_args()
    if not 1 <= args.jobs <= 8:
        ap.error("--jobs must be 1-8")
    if args.timeout <= 0:
        ap.error("--timeout must be positive")
    files = [Path(a).resolve() for a in rest if a.endswith(".py")]
    pytest_args = [a for a in rest if not a.endswith(".py")]
    for f in files:
        if not f.is_file():
            ap.error("%s: no such test file" % f)
    if not files:
        files = sorted(HERE.glob("test_*.py"))
    logs = Path(args.logs) if args.logs else Path(tempfile.mkdtemp(prefix="gpu-cost-e2e-"))
    logs.mkdir(parents=True, exist_ok=True)
    print("e2e: %d files on %d workers, logs in %s" % (len(files), args.jobs, logs), flush=True)

    r = Runner(files, args.jobs, args.timeout, logs, pytest_args)
    timed_out = r.run()
    wall = time.monotonic() - r.t0

    failed = [(f, rc, s) for f, rc, s in r.done if rc != 0]
    for f, rc, _ in sorted(failed, key=lambda x: x[0].name):
        print("\n======== %s failed (pytest exit %d): its log ========" % (f.name, rc))
        sys.stdout.write((logs / (f.stem + ".log")).read_text(errors="replace"))
    for f in timed_out:
        print("\n======== %s still running at the %.0f s timeout: its log's tail ========"
              % (f.name, args.timeout))
        text = (logs / (f.stem + ".log")).read_text(errors="replace")
        sys.stdout.write("\n".join(text.splitlines()[-60:]) + "\n")

    print("\n%-24s %-8s %8s  %s" % ("file", "outcome", "seconds", "pytest"))
    for f, rc, s in sorted(r.done, key=lambda x: -x[2]):
        print("%-24s %-8s %8.0f  %s" % (f.name, "passed" if rc == 0 else "FAILED", s,
                                         summary_line(logs / (f.stem + ".log"))))
    not_run = len(files) - len(r.done) - len(timed_out)
    print("e2e: %d files, %d failed, %d timed out, %d not run; %.0f s on %d workers (%.0f s of "
          "files)" % (len(files), len(failed), len(timed_out), not_run, wall, args.jobs,
                      sum(s for _, _, s in r.done)), flush=True)
    if timed_out or not_run:
        return 124
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
