#!/bin/sh
# Runs every libFuzzer target for a while, starting from its committed corpus.
set -eu
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-60}
cd "$(dirname "$0")/.."
for t in "$BUILD"/fuzz_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	work="$BUILD/corpus-$name"
	mkdir -p "$work"
	echo "fuzz: $name for ${SECONDS_EACH}s"
	"$t" -max_total_time="$SECONDS_EACH" -max_len=65536 -rss_limit_mb=2048 \
		"$work" "tests/fuzz/corpus/$name" >"$BUILD/$name.log" 2>&1 ||
		{ tail -40 "$BUILD/$name.log"; exit 1; }
	tail -1 "$BUILD/$name.log"
done
