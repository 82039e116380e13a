#!/usr/bin/env bash
# The previous release for the upgrade test (tests/chart/test_chart_upgrade.py), both halves
# taken from the commit in tests/chart/fixtures/previous-release.env: the controller built from
# that commit's sources as its image holds it (GC_TESTS=OFF, its revision stamped), and the
# chart packaged from it (the committed fixture). See tests/chart/README.md.
#
# Usage: tests/chart/prev-release.sh             build build/prev-<version>/gpu-cost-controller
#                                                unless it is there; print its path
#        tests/chart/prev-release.sh --fixture   package the chart of that commit again into
#                                                tests/chart/fixtures/gpu-cost-<version>.tgz
# Environment: E2E_BIN (the helm that packages: Helm 4 gives the committed bytes).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
E2E_BIN=${E2E_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-e2e/bin}
# shellcheck source=fixtures/previous-release.env
. tests/chart/fixtures/previous-release.env
die() {
	echo "prev-release: ERROR: $*" >&2
	exit 1
}

git cat-file -e "$PREV_COMMIT^{commit}" 2>/dev/null ||
	die "commit $PREV_COMMIT is not in this clone (a shallow clone? git fetch --unshallow)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = "--fixture" ]; then
	# git archive stamps every file with the commit's time, so the package is the same bytes
	# each time (helm rewrites Chart.yaml in its own layout).
	git archive "$PREV_COMMIT" charts/gpu-cost | tar -x -C "$tmp"
	"$E2E_BIN/helm" package "$tmp/charts/gpu-cost" -d "$tmp/out" >/dev/null
	[ -f "$tmp/out/gpu-cost-$PREV_VERSION.tgz" ] ||
		die "the chart at $PREV_COMMIT is not version $PREV_VERSION: $(ls "$tmp/out")"
	cp "$tmp/out/gpu-cost-$PREV_VERSION.tgz" tests/chart/fixtures/
	echo "tests/chart/fixtures/gpu-cost-$PREV_VERSION.tgz"
	exit 0
fi
[ $# -eq 0 ] || die "usage: tests/chart/prev-release.sh [--fixture]"

out=build/prev-$PREV_VERSION
if [ -x "$out/gpu-cost-controller" ] && [ "$(cat "$out/commit" 2>/dev/null)" = "$PREV_COMMIT" ]; then
	echo "$root/$out/gpu-cost-controller"
	exit 0
fi
rm -rf "$out"
mkdir -p "$out/src"
# What the image's build context holds (deploy/Dockerfile.dockerignore), built as it builds it.
git archive "$PREV_COMMIT" CMakeLists.txt scripts/embed.cmake scripts/embed-web.cmake examples web \
	pkg cmd | tar -x -C "$out/src"
cmake -S "$out/src" -B "$out/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGC_TESTS=OFF \
	-DGC_REVISION="$(git rev-parse --short "$PREV_COMMIT")" >&2
cmake --build "$out/build" -j"$(nproc)" --target gpu-cost-controller >&2
cp "$out/build/gpu-cost-controller" "$out/"
echo "$PREV_COMMIT" >"$out/commit"
echo "$root/$out/gpu-cost-controller"
