#!/usr/bin/env bash
# `make image-repro`: is the image reproducible? Builds the commit HEAD names a second time, from
# a fresh clone and with no cached layer (the build tools installed again from Debian), and
# compares its image ID (the digest of its config, which names the layer's digest) and layer
# digest with those of the image `make image` built. Exit 0 when they are equal.
#
# Usage: scripts/image-repro.sh   (after make image; about as long as a first build)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck disable=SC1091 # pm, GPU_COST_IMAGE_CACHE
. "$root/scripts/image-podman.sh"

version=$(sed -n 's/^project(gpu-cost VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
IMAGE=${IMAGE:-gpu-cost-controller:$version}
pm image exists "$IMAGE" || {
	echo "image-repro: no $IMAGE: run make image first" >&2
	exit 1
}
want_rev=$(pm image inspect --format '{{index .Labels "org.opencontainers.image.revision"}}' "$IMAGE")
[ "$want_rev" = "$(git rev-parse --short HEAD)" ] || {
	echo "image-repro: $IMAGE is of revision $want_rev, HEAD is $(git rev-parse --short HEAD): run make image" >&2
	exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --no-local "$root" "$tmp/src"
git -C "$tmp/src" checkout --quiet "$(git rev-parse HEAD)"
# the source label comes from the origin remote
origin=$(git config --get remote.origin.url || true)
if [ -n "$origin" ]; then git -C "$tmp/src" remote set-url origin "$origin"; fi
(cd "$tmp/src" && IMAGE=gpu-cost-controller:repro IMAGE_ARCHIVE="" ./scripts/image-build.sh --no-cache)

fmt='{{.Id}} {{index .RootFS.Layers 0}}'
a=$(pm image inspect --format "$fmt" "$IMAGE")
b=$(pm image inspect --format "$fmt" gpu-cost-controller:repro)
echo "image-repro: $IMAGE      ID and layer: $a"
echo "image-repro: second build ID and layer: $b"
if [ "$a" = "$b" ]; then
	echo "image-repro: reproducible"
else
	echo "image-repro: DIFFERENT" >&2
	exit 1
fi
