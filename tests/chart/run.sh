#!/usr/bin/env bash
# The Helm chart's tests (`make chart-test`): lint and template tests, the chart against a real
# kube-apiserver, and the container image `make image` built (scripts/image-build.sh), run and
# installed with the chart. See tests/chart/README.md.
#
# Usage: tests/chart/run.sh [--update]
#   --update   rewrite deploy/gpu-cost.yaml from the chart first
# Environment: E2E_BIN (helm (Helm 4), helm3, kubectl, the control plane; scripts/e2e-build.sh
# builds them),
# GPU_COST, GPU_COST_CONTROLLER (default build/gpu-cost, build/gpu-cost-controller), IMAGE (default
# gpu-cost-controller:<version>, what make image tags), GPU_COST_CONTROLLER_PREV (default: the
# previous release's controller, built by tests/chart/prev-release.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
E2E_BIN=${E2E_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-e2e/bin}
export E2E_BIN

say() { echo "chart-test: $*"; }

python3 -c 'import yaml, pytest' 2>/dev/null || {
	echo "chart-test: needs Python 3 with PyYAML and pytest (Debian: python3-yaml python3-pytest)" >&2
	exit 1
}
./scripts/e2e-build.sh >/dev/null

if [ "${1:-}" = "--update" ]; then
	{
		echo "# gpu-cost: plain manifests for clusters without Helm, rendered from charts/gpu-cost with"
		echo "# its default values. Do not edit: change the chart and run tests/chart/run.sh --update."
		echo "#"
		echo "#   kubectl create namespace gpu-cost"
		echo "#   kubectl apply -f deploy/gpu-cost.yaml"
		echo "#"
		echo "# helm template gpu-cost charts/gpu-cost --namespace gpu-cost --kube-version 1.37.0 --skip-tests (Helm 4)"
		"$E2E_BIN/helm" template gpu-cost charts/gpu-cost --namespace gpu-cost --kube-version 1.37.0 --skip-tests
	} >deploy/gpu-cost.yaml.tmp
	mv deploy/gpu-cost.yaml.tmp deploy/gpu-cost.yaml
	say "deploy/gpu-cost.yaml rewritten"
fi

say "Helm 4: templates, lint, schema, configuration"
CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_templates.py
say "Helm 3: templates, lint, schema, configuration"
CHART_HELM=helm3 CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_templates.py
say "budgets: configuration, schema, events RBAC, the PrometheusRule under promtool test rules"
CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_budgets.py
say "against kube-apiserver: server-side dry run of every scenario, helm install/upgrade/uninstall, the controller under the chart's RBAC"
CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_cluster.py
say "Helm 3: helm install/upgrade/uninstall against kube-apiserver"
CHART_HELM=helm3 CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_cluster.py
if [ -z "${GPU_COST_CONTROLLER_PREV:-}" ]; then
	say "the previous release's controller, built from its commit (once; tests/chart/prev-release.sh)"
	GPU_COST_CONTROLLER_PREV=$(tests/chart/prev-release.sh)
fi
export GPU_COST_CONTROLLER_PREV
say "upgrade from the previous release (fixtures/gpu-cost-*.tgz) and rollback, the checkpoint read across both"
CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_upgrade.py
say "Helm 3: upgrade from the previous release and rollback"
CHART_HELM=helm3 CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_upgrade.py
say "the image make image built, run from its root filesystem (read-only, uid 65532), and the chart installed with it"
CHART_REQUIRE=1 python3 -m pytest -q tests/chart/test_chart_image.py
say "all passed"
