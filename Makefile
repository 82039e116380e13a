# gpu-cost: the entry points. `make demo` and `make test` are the README's two commands.
BUILD      ?= build
BUILD_SAN  ?= build-asan
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# Fuzzing, each libFuzzer target after replaying its corpus: `make test` gives each
# FUZZ_TEST_SECONDS (11 targets x 30 s, about 6 minutes), `make fuzz` FUZZ_SECONDS, `make
# fuzz-long` FUZZ_LONG_SECONDS (an hour).
FUZZ_TEST_SECONDS ?= 30
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 3600

.PHONY: all setup build image build-asan demo test unit unit-asan cli-test lint format tidy bench fuzz fuzz-test fuzz-long fuzz-build clean

all: build

setup:
	@./scripts/setup.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD_SAN)/CMakeCache.txt:
	cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DGC_SANITIZE=ON >/dev/null

build-asan: setup $(BUILD_SAN)/CMakeCache.txt
	cmake --build $(BUILD_SAN) -j $(JOBS)

demo: build
	./$(BUILD)/gpu-cost demo

unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

unit-asan: build-asan
	cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS)

# The remote commands' tests run the controller in --demo mode (tests/cli/test_remote.py); the
# Prometheus path's run Debian's prometheus over a promtool back-fill (tests/cli/test_prometheus.py);
# the export's test runs the FinOps Foundation's validator (its 1.2 rules, and the official 1.3 rules
# kept in tests/cli/focus-rules) and checks FOCUS 1.4 against focus-data-toolkit's column list,
# both installed once into a cached venv; the kubectl plugin's test runs the pinned kubectl of the
# e2e tools (built first), and the report delivery's test sends to their pinned Mailpit
# (tests/cli/test_deliver.py).
cli-test: build e2e-tools
	FOCUS_VALIDATOR=$$(./scripts/focus-validator.sh) && export FOCUS_VALIDATOR && \
	GPU_COST=$(abspath $(BUILD))/gpu-cost GPU_COST_CONTROLLER=$(abspath $(BUILD))/gpu-cost-controller \
		GPUUSE_QUERY=$(abspath $(BUILD))/gpuuse_query python3 -m pytest -q tests/cli

# `kubectl gpu-cost ...`: kubectl runs any kubectl-<name> on PATH as a plugin.
PLUGIN_DIR ?= $(HOME)/.local/bin
.PHONY: install-plugin
install-plugin: build
	mkdir -p $(PLUGIN_DIR)
	ln -sf $(abspath $(BUILD))/gpu-cost $(PLUGIN_DIR)/kubectl-gpu_cost

lint: setup
	./scripts/lint.sh

test: unit unit-asan cli-test robustness-test lint fuzz-test chart-test e2e web-test

# The HTTP server under hostile and clumsy clients (slow headers, 1,000 idle connections, a
# reconnect flood, oversized and smuggling-shaped requests, pipelining, expensive answers, then
# /metrics scraped on the probe port with the API port flooded; stalled and garbage TLS
# handshakes on an HTTPS port) against `gpu-cost-controller --demo` on 127.0.0.1; conditions,
# not latencies (those are `make bench`'s); about a minute (tests/robustness, docs/httpd.md).
.PHONY: robustness-test
robustness-test: build
	GPU_COST_CONTROLLER=$(abspath $(BUILD))/gpu-cost-controller PYTHONDONTWRITEBYTECODE=1 \
		timeout 300 python3 -m pytest -q -s -p no:cacheprovider tests/robustness

# The dashboard in headless Chromium against `gpu-cost-controller --demo`, and under delegated
# auth against the pinned kube-apiserver (tests/web/README.md); UPDATE_SCREENSHOTS=1 also
# rewrites docs/dashboard.png and docs/dashboard-narrow.png.
.PHONY: web-test
web-test: build e2e-tools
	GPU_COST=$(abspath $(BUILD))/gpu-cost GPU_COST_CONTROLLER=$(abspath $(BUILD))/gpu-cost-controller \
		E2E_REQUIRE=1 PYTHONDONTWRITEBYTECODE=1 timeout 600 python3 -m pytest -q -p no:cacheprovider tests/web

# The controller image from deploy/Dockerfile, built with podman into a store kept outside the
# repository with its base (scripts/image-build.sh): tagged gpu-cost-controller:<version>, what the
# chart's defaults name; prints its size, ID, digest and build time.
image:
	./scripts/image-build.sh

# The commit built again from a fresh clone with no cached layer, compared with make image's.
.PHONY: image-repro
image-repro: image
	./scripts/image-repro.sh

# The Helm chart: lint, template tests, server-side dry run and helm install against the pinned
# kube-apiserver, the controller under the chart's RBAC, the image run from its root filesystem
# and installed with the chart (tests/chart/README.md).
.PHONY: chart-test
chart-test: build e2e-tools image
	GPU_COST=$(abspath $(BUILD))/gpu-cost GPU_COST_CONTROLLER=$(abspath $(BUILD))/gpu-cost-controller \
		./tests/chart/run.sh

bench: build
	./scripts/bench.sh $(BUILD)

# Only the fuzz targets (and the libraries they drive) are built with clang's instrumentation.
fuzz-build: setup
	cmake -S . -B $(BUILD_FUZZ) -DCMAKE_C_COMPILER=clang -DGC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_targets

fuzz: fuzz-build
	./scripts/fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

fuzz-test: fuzz-build
	./scripts/fuzz.sh $(BUILD_FUZZ) $(FUZZ_TEST_SECONDS)

fuzz-long: fuzz-build
	./scripts/fuzz.sh $(BUILD_FUZZ) $(FUZZ_LONG_SECONDS)

# End-to-end: the pinned etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubectl
# and helm (built once, cached outside the repository), the smoke test of that control plane,
# the kube client's test, then the controller's scenarios (tests/e2e/README.md). E2E_TIMEOUT
# bounds the scenarios (about 25 minutes one at a time on two quiet cores, the 5,000-pod one
# included). KUBE_MINOR=1.35 runs the same suites against the oldest supported minor (its own
# build and cache); CI runs the newest.
E2E_TIMEOUT ?= 2700
# The scenario files run E2E_JOBS at a time, each file its own pytest process with its own
# clusters, temporary directory and port range (tests/e2e/run_parallel.py); they mostly wait on
# the controller and the API server, so two share two cores. E2E_JOBS=1 runs them in turn.
E2E_JOBS ?= 2
KUBE_MINOR ?= 1.37
export KUBE_MINOR
E2E_BIN ?= $(shell KUBE_MINOR=$(KUBE_MINOR) ./scripts/e2e-build.sh --print-bin)
export E2E_BIN
.PHONY: e2e-tools e2e

e2e-tools:
	./scripts/e2e-build.sh

e2e: build build-asan e2e-tools
	./tests/e2e/smoke.sh
	./tests/e2e/kube/run.sh $(abspath $(BUILD))
	E2E_REQUIRE=1 GPU_COST_CONTROLLER=$(abspath $(BUILD))/gpu-cost-controller \
		GPU_COST_CONTROLLER_ASAN=$(abspath $(BUILD_SAN))/gpu-cost-controller \
		python3 tests/e2e/run_parallel.py --jobs $(E2E_JOBS) --timeout $(E2E_TIMEOUT)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_FUZZ)
