#!/usr/bin/env bash
# Checks deploy/Dockerfile without a container engine: the build stage's COPY list is enough to
# build both programs (its cmake commands are run on a copy holding only those paths), every
# package it names exists in this Debian release, and the runtime stage installs the package of
# every shared library the binaries link (readelf NEEDED; libc6 is in the base image).
#
# Usage: tests/chart/image-check.sh   (on Debian bookworm, with scripts/setup.sh's packages)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
df=${DOCKERFILE:-$root/deploy/Dockerfile}
fail=0
say() { echo "image-check: $*"; }
bad() {
	echo "image-check: FAIL: $*" >&2
	fail=1
}

# shellcheck disable=SC1091
. /etc/os-release
release=$(sed -n 's/^ARG DEBIAN_RELEASE=//p' "$df")
[ "$release" = "${VERSION_CODENAME:-}" ] ||
	say "note: the image is $release, this machine ${VERSION_CODENAME:-unknown}: library packages checked here may differ"

# The Dockerfile with continuation lines joined, one instruction per line.
joined=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$df" | grep -v '^[[:space:]]*#')
build_stage=$(echo "$joined" | awk '/^FROM /{n++} n==1')
run_stage=$(echo "$joined" | awk '/^FROM /{n++} n==2')

packages_of() { # the apt-get install list of a stage
	echo "$1" | grep 'apt-get install' | sed 's/.*--no-install-recommends//; s/&&.*//' | tr -s ' ' '\n' | grep -v '^$'
}
build_pkgs=$(packages_of "$build_stage")
run_pkgs=$(packages_of "$run_stage")
for p in $build_pkgs $run_pkgs; do
	apt-cache show "$p" >/dev/null 2>&1 || bad "package $p is unknown to apt here"
done

# The build stage, repeated on a copy holding only what it COPYs.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
while read -r _ srcs; do
	# shellcheck disable=SC2086 # split on purpose: sources and destination
	set -- $srcs
	dst=${!#}
	for s in "${@:1:$#-1}"; do
		# COPY semantics: a directory's contents go into dst, a file goes into dst/.
		mkdir -p "$tmp/src/$dst"
		if [ -d "$root/$s" ]; then
			cp -r "$root/${s%/}/." "$tmp/src/$dst/"
		else
			cp "$root/$s" "$tmp/src/$dst/"
		fi
		grep -qx "!${s}" "$root/deploy/Dockerfile.dockerignore" ||
			bad "$s is copied but deploy/Dockerfile.dockerignore leaves it out of the context"
	done
done < <(echo "$build_stage" | grep '^COPY ' | grep -v -- '--from')
build_cmd=$(echo "$build_stage" | grep '^RUN cmake' | sed 's/^RUN //; s#/build#'"$tmp"'/build#g')
[ -n "$build_cmd" ] || bad "no RUN cmake in the build stage"
say "building as the image does: $build_cmd"
(cd "$tmp/src" && eval "$build_cmd") >"$tmp/build.log" 2>&1 || {
	tail -30 "$tmp/build.log" >&2
	bad "the build stage's commands fail on its COPY list"
}

# Every library the binaries link comes from a runtime package.
libcache=$(ldconfig -p)
for bin in gpu-cost-controller gpu-cost; do
	f="$tmp/build/$bin"
	[ -x "$f" ] || {
		bad "$bin was not built"
		continue
	}
	echo "$run_stage" | grep -q "/build/$bin" || bad "$bin is not copied into the runtime stage"
	for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(echo "$libcache" | awk -v l="$lib" '$1 == l && !found { print $NF; found = 1 }')
		pkg=$( (dpkg -S "$path" || dpkg -S "$(readlink -f "$path")" || dpkg -S "/usr$path") 2>/dev/null | head -1 | cut -d: -f1)
		case " libc6 ${run_pkgs//$'\n'/ } " in
		*" $pkg "*) say "$bin: $lib from $pkg" ;;
		*) bad "$bin links $lib (package ${pkg:-unknown}), which the runtime stage does not install" ;;
		esac
	done
done

# The programs run; the runtime stage holds no build tools.
"$tmp/build/gpu-cost-controller" --help >/dev/null || bad "gpu-cost-controller --help fails"
demo=$("$tmp/build/gpu-cost" demo || true)
[[ "$demo" == *"Total spend"* ]] || bad "gpu-cost demo fails"
for p in $run_pkgs; do
	case "$p" in
	*-dev | gcc* | cmake | make | pkg-config) bad "the runtime stage installs the build package $p" ;;
	esac
done
# report.timezone reads the system's time-zone database (pkg/tz).
case " ${run_pkgs//$'\n'/ } " in
*" tzdata "*) ;;
*) bad "the runtime stage does not install tzdata (report.timezone reads /usr/share/zoneinfo)" ;;
esac
echo "$run_stage" | grep -qx 'USER 65532:65532' || bad "the runtime stage does not run as 65532"
echo "$run_stage" | grep -q '^ENTRYPOINT \["/usr/local/bin/gpu-cost-controller"\]' ||
	bad "the entrypoint is not the controller"
[ $fail -eq 0 ] && say "ok"
exit $fail
