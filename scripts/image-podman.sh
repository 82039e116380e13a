#!/usr/bin/env bash
# podman on the store `make image` builds into (scripts/image-build.sh): kept outside the
# repository, vfs driver, cgroupfs, events to a file, so it needs no daemon, systemd or overlay.
#
# Usage: scripts/image-podman.sh ARGS...   e.g. images, image inspect gpu-cost-controller:0.2.0,
#        push gpu-cost-controller:0.2.0 docker://registry.example.com/gpu-cost-controller:0.2.0
# Sourced, it defines pm(), pm_args and GPU_COST_IMAGE_CACHE for the other image scripts.

GPU_COST_IMAGE_CACHE=${GPU_COST_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-image}

pm_args=(--root "$GPU_COST_IMAGE_CACHE/storage" --runroot "$GPU_COST_IMAGE_CACHE/run"
	--storage-driver vfs --cgroup-manager=cgroupfs --events-backend=file)

pm() {
	podman "${pm_args[@]}" "$@"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	pm "$@"
fi
