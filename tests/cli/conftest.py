"""Shared fixtures for the CLI black-box tests: the binary under test, the examples, the truth."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLES = REPO / "examples"
FIXTURES = REPO / "tests" / "fixtures"

sys.path.insert(0, str(HERE))

import truth  # noqa: E402


class Result:
    def __init__(self, cp):
        self.code = cp.returncode
        self.out = cp.stdout
        self.err = cp.stderr

    def json(self):
        try:
            return json.loads(self.out)
        except ValueError as e:
            raise AssertionError("stdout is not JSON (%s):\n%s\nstderr:\n%s"
                                 % (e, self.out[:2000], self.err[:2000]))

    def __repr__(self):
        return "exit %d\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            self.code, self.out[:3000], self.err[:3000])


class Cli:
    def __init__(self, path):
        self.path = path

    def __call__(self, *args, timeout=120):
        cp = subprocess.run([self.path] + [str(a) for a in args], capture_output=True,
                            text=True, timeout=timeout, cwd=str(REPO))
        return Result(cp)

    def ok(self, *args):
        r = self(*args)
        assert r.code == 0, "gpu-cost %s\n%r" % (" ".join(map(str, args)), r)
        return r


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("GPU_COST")
    if not path:
        pytest.fail("GPU_COST is not set: it must name the gpu-cost binary under test. "
                    "Run `make cli-test`, or GPU_COST=build/gpu-cost python3 -m pytest tests/cli",
                    pytrace=False)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail("GPU_COST=%s is not an executable file" % path, pytrace=False)
    return Cli(os.path.abspath(path))


@pytest.fixture(scope="session")
def examples():
    return EXAMPLES


@pytest.fixture(scope="session")
def cluster():
    """The examples, loaded once by the independent truth."""
    return truth.Cluster(EXAMPLES / "pods.json", EXAMPLES / "nodes.json",
                         EXAMPLES / "namespaces.json", EXAMPLES / "config.json")


def analyze_args(window, by="team,project", fmt="json", namespaces=True, prices=None,
                 config=EXAMPLES / "config.json", pods=EXAMPLES / "pods.json",
                 nodes=EXAMPLES / "nodes.json"):
    args = ["analyze", "--pods", pods, "--nodes", nodes]
    if namespaces:
        args += ["--namespaces", EXAMPLES / "namespaces.json" if namespaces is True else namespaces]
    if config:
        args += ["--config", config]
    if prices:
        args += ["--prices", prices]
    args += ["--window", window, "--by", by, "--format", fmt]
    return args
