#!/usr/bin/env bash
# Runs a program of the image's exported root filesystem the way a container runtime would start
# it, where `podman run` cannot (the runtime's setrlimit is refused here): in new mount and PID
# namespaces, the root bind-mounted read-only, a tmpfs /dev holding null, zero, random and
# urandom, /proc, the given files or directories bind-mounted read-only at their paths (as the
# kubelet mounts a ConfigMap or the ServiceAccount token), only the given environment, and the
# image's user 65532:65532. The host's network namespace is kept: servers on 127.0.0.1 are
# reachable both ways.
#
# Usage: tests/chart/image-root.sh ROOT [--bind SRC:DST]... [--env NAME=VALUE]... -- PROGRAM ARGS...
# Needs root (CAP_SYS_ADMIN for the mounts, CAP_SETUID for the user): the image tests run as the
# user `make test` runs as, which installs packages with apt-get. The mount points of /dev, /proc
# and the binds are created in ROOT first, as a runtime creates them in a container's root.
set -euo pipefail

[ $# -ge 3 ] || {
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
root=$(cd "$1" && pwd)
shift
binds=()
envs=(PATH=/usr/local/bin)
while [ $# -gt 0 ]; do
	case "$1" in
	--bind)
		binds+=("$2")
		shift 2
		;;
	--env)
		envs+=("$2")
		shift 2
		;;
	--)
		shift
		break
		;;
	*)
		echo "image-root: unknown argument $1" >&2
		exit 2
		;;
	esac
done
[ $# -ge 1 ] || {
	echo "image-root: no program" >&2
	exit 2
}
[ "$(id -u)" -eq 0 ] || {
	echo "image-root: needs root for the mount and PID namespaces and uid 65532" >&2
	exit 2
}

mkdir -p "$root/dev" "$root/proc"
for b in "${binds[@]}"; do
	src=${b%%:*} dst=${b#*:}
	if [ -d "$src" ]; then
		mkdir -p "$root$dst"
	else
		mkdir -p "$root$(dirname "$dst")"
		[ -e "$root$dst" ] || : >"$root$dst"
	fi
done

# The script run inside the namespaces: $1 root, $2 number of binds, then the binds, then the
# host's chroot, the environment count and entries, then the program.
# shellcheck disable=SC2016 # expanded by the inner shell
inner='set -eu
r=$1
nb=$2
shift 2
mount --bind "$r" "$r"
mount -o remount,bind,ro,nosuid,nodev "$r"
mount -t tmpfs -o mode=0755,nosuid,size=64k tmpfs "$r/dev"
for d in null zero random urandom; do
	: >"$r/dev/$d"
	mount --bind "/dev/$d" "$r/dev/$d"
done
mount -t proc -o nosuid,nodev,noexec proc "$r/proc"
while [ "$nb" -gt 0 ]; do
	src=${1%%:*}
	dst=${1#*:}
	mount --bind "$src" "$r$dst"
	mount -o remount,bind,ro,nosuid,nodev "$r$dst"
	nb=$((nb - 1))
	shift
done
chroot=$1
ne=$2
shift 2
envs=""
i=0
while [ "$i" -lt "$ne" ]; do
	envs="$envs$1
"
	i=$((i + 1))
	shift
done
IFS="
"
# shellcheck disable=SC2086
exec env -i $envs "$chroot" --userspec=65532:65532 --groups=65532 "$r" "$@"'

exec unshare --mount --pid --fork --kill-child=SIGTERM -- \
	sh -c "$inner" sh "$root" "${#binds[@]}" "${binds[@]}" "$(command -v chroot)" "${#envs[@]}" "${envs[@]}" "$@"
