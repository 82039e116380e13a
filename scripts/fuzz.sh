#!/bin/sh
# Replays every libFuzzer target's committed corpus, then fuzzes each for a bounded time, printing
# executions, coverage and corpus growth per target. Usage: fuzz.sh BUILD_DIR SECONDS_EACH
# (`make test`: 30 s each; `make fuzz`: 60 s; `make fuzz-long`: an hour). Any crash, leak,
# timeout or sanitizer report fails the run and leaves the input under BUILD_DIR/artifacts/.
set -eu
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-30}
cd "$(dirname "$0")/.."

case "$SECONDS_EACH" in
'' | *[!0-9]*)
	echo "fuzz: SECONDS_EACH must be a whole number of seconds, not '$SECONDS_EACH'" >&2
	exit 2
	;;
esac

# The sources name the targets: a target that failed to build is an error, never skipped.
targets=$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done)
[ -n "$targets" ] || {
	echo "fuzz: no targets in tests/fuzz" >&2
	exit 1
}
mkdir -p "$BUILD/artifacts"
total_runs=0
start=$(date +%s)
printf '%-18s %12s %10s %8s %8s %10s %8s\n' target executions exec/s cov features corpus new
for name in $targets; do
	bin="$BUILD/$name"
	seed="tests/fuzz/corpus/$name"
	work="$BUILD/corpus-$name"
	log="$BUILD/$name.log"
	[ -x "$bin" ] || {
		echo "fuzz: $bin is missing: build the fuzz targets first (make fuzz)" >&2
		exit 1
	}
	[ -d "$seed" ] && [ -n "$(ls "$seed")" ] || {
		echo "fuzz: $seed is missing or empty: every target keeps a corpus" >&2
		exit 1
	}
	mkdir -p "$work"
	opts="-max_len=65536 -rss_limit_mb=2048 -timeout=25 -artifact_prefix=$BUILD/artifacts/$name-"
	# 1. The committed corpus, each input once: a regression there fails before any fuzzing.
	# shellcheck disable=SC2086
	if ! "$bin" $opts -runs=0 "$seed" >"$log" 2>&1; then
		echo "fuzz: $name: the committed corpus fails:" >&2
		tail -40 "$log" >&2
		exit 1
	fi
	# 2. Fuzz from it for the time given; new inputs go to the work corpus, never the repository.
	# shellcheck disable=SC2086
	if ! "$bin" $opts -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
		"$work" "$seed" >"$log" 2>&1; then
		echo "fuzz: $name: FAILED (input saved under $BUILD/artifacts/):" >&2
		tail -60 "$log" >&2
		exit 1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	[ -n "$runs" ] || {
		echo "fuzz: $name: no statistics in $log (did it run?)" >&2
		tail -20 "$log" >&2
		exit 1
	}
	printf '%-18s %12s %10s %8s %8s %10s %8s\n' "$name" "$runs" "${rate:-?}" "${cov:-?}" \
		"${ft:-?}" "${corp:-?}" "${added:-0}"
	total_runs=$((total_runs + runs))
done
echo "fuzz: every target clean: $total_runs executions in $(($(date +%s) - start)) s," \
	"${SECONDS_EACH} s each after its corpus"
