#!/usr/bin/env bash
# Builds the pinned end-to-end tools (kube-apiserver, kube-scheduler, kube-controller-manager,
# kubectl, etcd, helm v4 as `helm` and helm v3 as `helm3`) into a cache outside the repository,
# from the wrapper modules in tests/e2e/tools, skipping what is already built.
#
# Usage: scripts/e2e-build.sh [--force | --print-bin]
#   --print-bin  prints the binary directory for KUBE_MINOR and exits (the Makefile's E2E_BIN)
#   KUBE_MINOR   1.37 (default: tests/e2e/tools) or 1.35 (the skew build: tests/e2e/tools/kube-1.35)
#   E2E_BIN      where the binaries go (default ${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-e2e/bin,
#                and .../gpu-cost-e2e/kube-1.35/bin for KUBE_MINOR=1.35)
#
# A group of binaries is rebuilt only when the hash of its wrapper go.mod + go.sum, the build
# flags or the Go version changed (stamp file E2E_BIN/.stamp-<group>), so a warm call takes
# well under a second. Each group is one `go build` of all its programs, so the packages they
# share are compiled once. The first build downloads about 1.5 GB of modules through the Go
# module proxy; the figures measured are in tests/e2e/README.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/tests/e2e/tools"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-e2e
case "${KUBE_MINOR:-1.37}" in
1.37)
	kube_tools="$tools"
	E2E_BIN=${E2E_BIN:-$cache/bin}
	;;
1.35)
	kube_tools="$tools/kube-1.35"
	E2E_BIN=${E2E_BIN:-$cache/kube-1.35/bin}
	;;
*)
	echo "e2e-build: KUBE_MINOR=${KUBE_MINOR} is not built here (1.37, the default, or 1.35)" >&2
	exit 2
	;;
esac
force=0

case "${1:-}" in
"") ;;
--force) force=1 ;;
--print-bin)
	echo "$E2E_BIN"
	exit 0
	;;
-h | --help)
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*)
	echo "e2e-build: unknown argument '$1' (usage: $0 [--force | --print-bin])" >&2
	exit 2
	;;
esac

say() { echo "e2e-build: $*"; }
die() {
	echo "e2e-build: ERROR: $*" >&2
	exit 1
}

command -v go >/dev/null || die "go is not installed (needs the Go versions on the go lines of $tools/go.mod and $tools/helm/go.mod)"
command -v sha256sum >/dev/null || die "sha256sum is not installed"

# Reproducible and offline-safe: the local toolchain only, static binaries, and the committed
# go.sum exactly (-mod=readonly fails instead of silently re-resolving a version).
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
unset GOOS GOARCH

mkdir -p "$E2E_BIN" || die "cannot create $E2E_BIN"
E2E_BIN=$(cd "$E2E_BIN" && pwd)

# One build at a time per cache directory: two concurrent `make e2e` runs would race on the
# same output files.
if command -v flock >/dev/null; then
	exec 9>"$E2E_BIN/.lock"
	if ! flock -n 9; then
		say "another build holds $E2E_BIN/.lock; waiting"
		flock 9
	fi
fi

go_version=$(go env GOVERSION)
say "go ${go_version}, output ${E2E_BIN}"

modver() { (cd "$1" && go list -m -f '{{.Version}}' "$2"); }
k8s_version=$(modver "$kube_tools" k8s.io/kubernetes) || die "cannot read the k8s.io/kubernetes pin in $kube_tools/go.mod"
etcd_version=$(modver "$kube_tools" go.etcd.io/etcd/server/v3) || die "cannot read the etcd pin"
helm_version=$(modver "$tools/helm" helm.sh/helm/v4) || die "cannot read the helm pin in $tools/helm/go.mod"
helm3_version=$(modver "$tools/helm3" helm.sh/helm/v3) || die "cannot read the helm pin in $tools/helm3/go.mod"
k8s_mm=${k8s_version#v}
k8s_major=${k8s_mm%%.*}
k8s_minor=${k8s_mm#*.}
k8s_minor=${k8s_minor%%.*}
say "pins: kubernetes ${k8s_version}, etcd ${etcd_version}, helm ${helm_version} and ${helm3_version}"

cv=k8s.io/component-base/version
kube_ldflags="-s -w -X ${cv}.gitVersion=${k8s_version} -X ${cv}.gitMajor=${k8s_major}"
kube_ldflags+=" -X ${cv}.gitMinor=${k8s_minor} -X ${cv}.gitTreeState=clean"
# helm's own release build stamps its version. Helm 4 derives its default
# Capabilities.KubeVersion (used by `helm template` without --kube-version) from the client-go it
# was built with; helm 3's is set here to the pinned cluster instead of 1.20.
hv=helm.sh/helm/v4/internal/version
helm_ldflags="-s -w -X ${hv}.version=${helm_version} -X ${hv}.metadata= -X ${hv}.gitTreeState=clean"
hv=helm.sh/helm/v3/internal/version
hc=helm.sh/helm/v3/pkg/chartutil
hl=helm.sh/helm/v3/pkg/lint/rules
helm3_ldflags="-s -w -X ${hv}.version=${helm3_version} -X ${hv}.metadata= -X ${hv}.gitTreeState=clean"
helm3_ldflags+=" -X ${hc}.k8sVersionMajor=${k8s_major} -X ${hc}.k8sVersionMinor=${k8s_minor}"
helm3_ldflags+=" -X ${hl}.k8sVersionMajor=${k8s_major} -X ${hl}.k8sVersionMinor=${k8s_minor}"

# stamp_of DIR LDFLAGS: the key a group's binaries were built for.
stamp_of() {
	{
		cat "$1/go.mod" "$1/go.sum"
		echo "ldflags=$2"
		echo "go=${go_version} $(go env GOOS)/$(go env GOARCH) cgo=${CGO_ENABLED}"
	} | sha256sum | cut -d' ' -f1
}

# build_group NAME DIR LDFLAGS "bin=package ...": builds into a temporary directory and moves
# the binaries into place only when all of them built, then writes the stamp.
build_group() {
	local name=$1 dir=$2 ldflags=$3 specs=$4
	local stamp_file="$E2E_BIN/.stamp-$name" want have="" missing=0 spec bin pkg
	want=$(stamp_of "$dir" "$ldflags")
	[ -f "$stamp_file" ] && have=$(cat "$stamp_file")
	for spec in $specs; do
		[ -x "$E2E_BIN/${spec%%=*}" ] || missing=1
	done
	if [ "$force" = 0 ] && [ "$missing" = 0 ] && [ "$have" = "$want" ]; then
		say "$name: up to date (stamp ${want:0:12})"
		return 0
	fi
	if [ "$missing" = 1 ]; then
		say "$name: building (binaries missing)"
	elif [ "$force" = 1 ]; then
		say "$name: building (--force)"
	else
		say "$name: building (pins or flags changed: stamp ${have:0:12} -> ${want:0:12})"
	fi

	local tmp start pkgs=()
	tmp=$(mktemp -d "$E2E_BIN/.build-$name.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	start=$(date +%s)
	# Only the modules these packages import (the full graph holds hundreds more); the
	# first time this is about 1 GB, verified against the committed go.sum.
	for spec in $specs; do pkgs+=("${spec#*=}"); done
	say "$name: downloading the modules ${pkgs[*]} need"
	(cd "$dir" && go list -deps -f '{{.ImportPath}}' "${pkgs[@]}" >/dev/null) ||
		die "$name: resolving the packages failed in $dir (see the go output above)"
	say "$name: modules ready after $(($(date +%s) - start)) s"
	# One go build for every program of the group: the packages they share (most of
	# k8s.io/*) are compiled once, on all cores. `go build -o DIR` names each program after
	# its package path (a major-version suffix is skipped: .../server/v3 -> server), so each
	# lands in its own directory first and is renamed.
	local built=()
	mkdir -p "$tmp/out"
	say "$name: go build ${pkgs[*]}"
	(cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$tmp/out/" "${pkgs[@]}") ||
		die "$name: building ${pkgs[*]} failed (see the go output above)"
	for spec in $specs; do
		bin=${spec%%=*}
		pkg=${spec#*=}
		pkg=${pkg%/v[0-9]*}
		[ -x "$tmp/out/${pkg##*/}" ] || die "$name: go build wrote no ${pkg##*/} for $bin"
		mv -f "$tmp/out/${pkg##*/}" "$tmp/$bin"
		built+=("$bin")
	done
	pkgs=("${built[@]}")
	for bin in "${pkgs[@]}"; do
		mv -f "$tmp/$bin" "$E2E_BIN/$bin"
	done
	echo "$want" >"$stamp_file"
	rm -rf "$tmp"
	trap - EXIT
	say "$name: built ${pkgs[*]} in $(($(date +%s) - start)) s"
}

total_start=$(date +%s)
k=k8s.io/kubernetes/cmd
build_group kube "$kube_tools" "$kube_ldflags" "kube-apiserver=$k/kube-apiserver \
kube-scheduler=$k/kube-scheduler kube-controller-manager=$k/kube-controller-manager \
kubectl=$k/kubectl etcd=go.etcd.io/etcd/server/v3"
# Helm does not depend on the cluster's version: the skew build links the default cache's.
if [ "$kube_tools" = "$tools" ]; then
	build_group helm "$tools/helm" "$helm_ldflags" "helm=helm.sh/helm/v4/cmd/helm"
	build_group helm3 "$tools/helm3" "$helm3_ldflags" "helm3=helm.sh/helm/v3/cmd/helm"
else
	main_bin=$(KUBE_MINOR=1.37 E2E_BIN= "$0" --print-bin)
	KUBE_MINOR=1.37 E2E_BIN="$main_bin" "$0" >/dev/null ||
		die "building helm into $main_bin failed (run KUBE_MINOR=1.37 $0)"
	ln -sfn "$main_bin/helm" "$E2E_BIN/helm"
	ln -sfn "$main_bin/helm3" "$E2E_BIN/helm3"
fi

# Mailpit, the SMTP server the report delivery's CLI test sends to (tests/cli/test_deliver.py).
build_group mailpit "$tools/mailpit" "-s -w -X github.com/axllent/mailpit/config.Version=$(modver "$tools/mailpit" github.com/axllent/mailpit)" \
	"mailpit=github.com/axllent/mailpit"

# Every binary must report the pinned version: a wrong stamp would make /version, kubectl's
# skew check and helm's default kube version lie.
check() {
	local bin=$1 want=$2 out
	shift 2
	out=$("$E2E_BIN/$bin" "$@" 2>&1) || die "$bin $*: failed: $out"
	case "$out" in
	*"$want"*) say "$bin: $(printf '%s' "$out" | head -n1)" ;;
	*) die "$bin $* printed '$out', expected it to contain '$want' (remove $E2E_BIN/.stamp-* and rebuild)" ;;
	esac
}
check kube-apiserver "Kubernetes ${k8s_version}" --version
check kube-scheduler "Kubernetes ${k8s_version}" --version
check kube-controller-manager "Kubernetes ${k8s_version}" --version
check kubectl "${k8s_version}" version --client
check etcd "etcd Version: ${etcd_version#v}" --version
check helm "${helm_version}" version --short
check helm3 "${helm3_version}" version --short
say "done in $(($(date +%s) - total_start)) s: binaries in ${E2E_BIN}"
