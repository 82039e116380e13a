#!/usr/bin/env bash
# `make image`: builds the controller image from deploy/Dockerfile with podman, stamped with the
# version (CMakeLists.txt), the revision (the commit) and SOURCE_DATE_EPOCH (the commit's time),
# then prints its size, ID, digest and build time and writes it out as an OCI archive.
#
# Usage: scripts/image-build.sh [--no-cache]
# Environment:
#   IMAGE               tag to build (default gpu-cost-controller:<version>, what the chart's
#                       image.repository and appVersion name)
#   IMAGE_ARCHIVE       OCI archive written after the build (default build/image/gpu-cost-controller.oci.tar;
#                       empty: none)
#   GPU_COST_IMAGE_CACHE  podman store and base image tarball, outside the repository (default
#                       ${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-image)
#   IMAGE_BASE          mmdebstrap (default): the base debian:bookworm is made from Debian's
#                       packages with mmdebstrap and imported, so no image registry is needed;
#                       pull: podman pulls docker.io/library/debian:bookworm instead
#   SOURCE_DATE_EPOCH   overrides the commit's time
#   IMAGE_BUILD_TIMEOUT seconds the podman build may take (default 2700)
#
# The store is podman's, kept under GPU_COST_IMAGE_CACHE with the vfs driver and chroot
# isolation, which work without privileges, overlay or a daemon. scripts/image-podman.sh runs
# podman on that store (e.g. to push: scripts/image-podman.sh push IMAGE docker://REGISTRY/...).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { echo "image: $*" >&2; }
die() {
	echo "image: ERROR: $*" >&2
	exit 1
}

no_cache=()
case "${1:-}" in
"") ;;
--no-cache) no_cache=(--no-cache) ;;
*) die "usage: scripts/image-build.sh [--no-cache]" ;;
esac

# Debian packages this needs; installed like scripts/setup.sh's.
need=()
for p in podman buildah mmdebstrap uidmap; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	say "installing ${need[*]}"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
		--no-install-recommends "${need[@]}" >&2
fi

version=$(sed -n 's/^project(gpu-cost VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[ -n "$version" ] || die "no version in CMakeLists.txt"
IMAGE=${IMAGE:-gpu-cost-controller:$version}
IMAGE_ARCHIVE=${IMAGE_ARCHIVE-build/image/gpu-cost-controller.oci.tar}
release=$(sed -n 's/^ARG DEBIAN_RELEASE=//p' deploy/Dockerfile)

# Version, revision and time of the commit; a tree with changes to what the image is built from
# says so in the revision rather than claim the commit.
revision=unknown
sde=${SOURCE_DATE_EPOCH:-}
if git rev-parse --git-dir >/dev/null 2>&1; then
	revision=$(git rev-parse --short HEAD)
	if [ -n "$(git status --porcelain -- CMakeLists.txt scripts/embed.cmake scripts/embed-web.cmake \
		examples web pkg cmd deploy/Dockerfile deploy/Dockerfile.dockerignore)" ]; then
		revision="$revision-dirty"
	fi
	sde=${sde:-$(git log -1 --format=%ct)}
fi
sde=${sde:-0}
created=$(date -u -d "@$sde" +%Y-%m-%dT%H:%M:%SZ)

# shellcheck disable=SC1091 # pm, pm_args, GPU_COST_IMAGE_CACHE
. "$root/scripts/image-podman.sh"

start=$(date +%s)
base="docker.io/library/debian:$release"
if ! pm image exists "$base"; then
	case "${IMAGE_BASE:-mmdebstrap}" in
	mmdebstrap)
		tarball="$GPU_COST_IMAGE_CACHE/debian-$release-minbase.tar"
		if [ ! -s "$tarball" ]; then
			say "making the base $base from Debian's packages (mmdebstrap, once; cached in $tarball)"
			mkdir -p "$GPU_COST_IMAGE_CACHE"
			mmdebstrap --quiet --variant=minbase --format=tar "$release" "$tarball.tmp" >&2
			mv "$tarball.tmp" "$tarball"
		fi
		pm import --quiet "$tarball" "$base" >/dev/null
		;;
	pull) pm pull "$base" >/dev/null ;;
	*) die "IMAGE_BASE: mmdebstrap or pull, got \"$IMAGE_BASE\"" ;;
	esac
fi
say "base $base ready in $(($(date +%s) - start)) s"

say "building $IMAGE: version $version, revision $revision, SOURCE_DATE_EPOCH $sde ($created)"
t0=$(date +%s)
source_url=$(git config --get remote.origin.url 2>/dev/null | sed -n 's#^\(https://[^@]*\)$#\1#p' || true)
# Reproducible: --timestamp sets the creation time and every file's time in the layers to the
# commit's; --omit-history drops the per-step history, whose entries name intermediate image IDs
# (different after a build from scratch) and keep the time of steps cached from an earlier
# commit; the base annotations, set to the previous stage's intermediate image, are emptied.
build() {
	# Bounded: podman 4.3 was seen to hang after a failed RUN step instead of exiting.
	# shellcheck disable=SC2154 # pm_args: scripts/image-podman.sh
	timeout "${IMAGE_BUILD_TIMEOUT:-2700}" podman "${pm_args[@]}" build --isolation=chroot \
		--pull=never --network=host "${no_cache[@]}" --timestamp "$sde" --omit-history \
		--annotation org.opencontainers.image.base.digest= \
		--annotation org.opencontainers.image.base.name= \
		--ignorefile deploy/Dockerfile.dockerignore \
		--build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
		--build-arg "CREATED=$created" --build-arg "SOURCE=$source_url" \
		-f deploy/Dockerfile "$@" . >&2
}
# The build tools' stage, tagged: it stays the cache of the next build when the untagged
# intermediate images are pruned below (under vfs each is a full copy of its root, ~700 MB).
deps="localhost/gpu-cost-image-deps:$release"
build --target deps -t "$deps"
build -t "$IMAGE"
t1=$(date +%s)
pm image prune --force >/dev/null ||
	say "warning: intermediate images not pruned; a build that was killed leaves its working containers: scripts/image-podman.sh ps -a --external, then rm -f them"

size=$(pm image inspect --format '{{.Size}}' "$IMAGE")
id=$(pm image inspect --format '{{.Id}}' "$IMAGE")
digest=$(pm image inspect --format '{{.Digest}}' "$IMAGE")
if [ -n "$IMAGE_ARCHIVE" ]; then
	mkdir -p "$(dirname "$IMAGE_ARCHIVE")"
	rm -f "$IMAGE_ARCHIVE"
	pm save --quiet --format oci-archive -o "$IMAGE_ARCHIVE" "$IMAGE"
fi
echo "image: $IMAGE"
echo "image: revision $revision, version $version, created $created"
echo "image: size $size bytes ($(((size + 524288) / 1048576)) MiB)"
echo "image: ID $id"
echo "image: digest $digest"
[ -z "$IMAGE_ARCHIVE" ] || echo "image: OCI archive $IMAGE_ARCHIVE ($(stat -c %s "$IMAGE_ARCHIVE") bytes)"
echo "image: build $((t1 - t0)) s (base $((t0 - start)) s)"
