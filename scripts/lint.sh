#!/bin/sh
# Machine-checked rules: clang-format clean, clang-tidy clean, no banned calls, no secrets in logs.
set -eu
cd "$(dirname "$0")/.."

FILES=$(git ls-files 'pkg/*.c' 'pkg/*.h' 'cmd/*.c' 'cmd/*.h' 'tests/*.c' 'bench/*.c' 'tests/*.h')
fail=0

echo "lint: clang-format"
if ! clang-format --dry-run --Werror $FILES; then
	echo "lint: clang-format: run 'clang-format -i' on the files above" >&2
	fail=1
fi

echo "lint: banned calls"
if grep -nE '\b(sprintf|vsprintf|strcpy|strcat|atoi|atol|atof|strtok|gets)[[:space:]]*\(' $FILES; then
	echo "lint: banned call (use snprintf, gc_strlcpy, gc_buf, gc_parse_*)" >&2
	fail=1
fi

echo "lint: no printing or exiting in pkg/"
if grep -nE '\b(printf|fprintf|puts|perror|exit|abort)[[:space:]]*\(' $(git ls-files 'pkg/*.c'); then
	echo "lint: libraries never print or exit; return an error" >&2
	fail=1
fi

echo "lint: clang-tidy"
BUILD=${LINT_BUILD:-build-tidy}
cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
TIDY_SRC=$(git ls-files 'pkg/*.c' 'cmd/*.c')
# shellcheck disable=SC2086
if ! printf '%s\n' $TIDY_SRC | xargs -P "$(nproc)" -n 4 clang-tidy -p "$BUILD" --quiet \
	>"$BUILD/tidy.log" 2>&1; then
	grep -E 'warning:|error:' "$BUILD/tidy.log" >&2 || cat "$BUILD/tidy.log" >&2
	fail=1
fi

[ "$fail" -eq 0 ] && echo "lint: clean"
exit "$fail"
