#!/bin/sh
# Installs the FinOps Foundation's FOCUS validator (focus-validator 2.2.1 from PyPI) into a cached
# virtual environment outside the repository, once, and prints the path of its entry point. The same
# environment gets focus-data-toolkit (no dependencies), whose FOCUS 1.4 column list the 1.4
# export is checked against (tests/cli/test_focus_validator.py).
# 2.2.1 needs Python 3.12 or later (the pyenv one when the system's is older) and numpy 1.26 with
# pyarrow < 16; see docs/export.md. 3.12 is tried first: under 3.13 a dependency has no wheel and
# its source build imports pkg_resources, which current setuptools no longer has (seen on a
# fresh machine with both).
set -eu

VERSION=2.2.1
DIR=${GPU_COST_FOCUS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-focus}
VENV=$DIR/venv
STAMP=$VENV/.focus-validator-$VERSION
TOOLKIT=0.14.1
TOOLKIT_STAMP=$VENV/.focus-data-toolkit-$TOOLKIT

if [ -x "$VENV/bin/focus-validator" ] && [ -f "$STAMP" ]; then
	# An environment from before the toolkit: add it, leaving the validator as it is.
	if [ ! -f "$TOOLKIT_STAMP" ]; then
		"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps \
			"focus-data-toolkit==$TOOLKIT" >&2
		touch "$TOOLKIT_STAMP"
	fi
	echo "$VENV/bin/focus-validator"
	exit 0
fi

PY=
for c in python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3 python3.13 \
	"$HOME"/.pyenv/versions/3.13*/bin/python3 python3; do
	p=$(command -v "$c" 2>/dev/null || true)
	[ -n "$p" ] || continue
	if "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -z "$PY" ]; then
	echo "focus-validator.sh: focus-validator $VERSION needs Python 3.12 or later; none found" >&2
	exit 1
fi

mkdir -p "$DIR"
rm -rf "$VENV"
"$PY" -m venv "$VENV" >&2
"$VENV/bin/pip" install -q --disable-pip-version-check "focus-validator==$VERSION" \
	'numpy==1.26.*' 'pyarrow<16' >&2
"$VENV/bin/pip" install -q --disable-pip-version-check --no-deps "focus-data-toolkit==$TOOLKIT" >&2
touch "$STAMP" "$TOOLKIT_STAMP"
echo "$VENV/bin/focus-validator"
