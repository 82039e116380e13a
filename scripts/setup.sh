#!/bin/sh
# Installs the Debian packages the build and the tests need; does nothing when they are present.
set -eu

PKGS="cmake make gcc pkg-config libcjson-dev libcurl4-openssl-dev libyaml-dev libwebsockets-dev libssl-dev
check clang clang-format clang-tidy libclang-rt-14-dev python3-yaml prometheus chromium fonts-dejavu-core wrk tzdata
openssl"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "setup: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
