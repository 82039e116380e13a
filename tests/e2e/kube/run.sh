#!/usr/bin/env bash
# Runs the kube client's end-to-end test (e2e_kube) against a fresh etcd + kube-apiserver.
#
# Usage: tests/e2e/kube/run.sh [BUILD_DIR]     (default: build; needs scripts/e2e-build.sh once)
#   E2E_KUBE_BIN=PATH   the test binary (default BUILD_DIR/e2e_kube)
#   E2E_KEEP=1          leave the cluster running afterwards, in the directory it prints
# Exits with the test binary's status; the cluster is stopped whatever happens.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$root/build}
bin=${E2E_KUBE_BIN:-$build/e2e_kube}
cluster="$root/scripts/e2e-cluster.sh"

if [ ! -x "$bin" ]; then
	echo "e2e-kube: $bin not found; build it: cmake --build $build --target e2e_kube" >&2
	exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/gpu-cost-e2e-kube.XXXXXX")
# shellcheck disable=SC2317 # called by the trap
finish() {
	local rc=$?
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "e2e-kube: cluster left running in $dir" >&2
	else
		"$cluster" stop "$dir" >/dev/null 2>&1 || true
		rm -rf "$dir"
	fi
	exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

"$cluster" start "$dir"
# shellcheck source=/dev/null
. "$dir/env"
export E2E_CLUSTER_SCRIPT="$cluster"

t0=$(date +%s)
set +e
"$bin"
rc=$?
set -e
echo "e2e-kube: exit $rc after $(($(date +%s) - t0)) s" >&2
exit "$rc"
