#!/bin/sh
# Benchmarks with their peers, in one run: figures are printed, and compared with the targets.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/.."
OUT="$BUILD/bench"
mkdir -p "$OUT"

PODS=${BENCH_PODS:-100000}
PCT=${BENCH_GPU_PCT:-10}
FILE="$OUT/pods-$PODS.json"

echo "== decode + account $PODS pods ($PCT% with GPUs) vs cJSON parsing the same bytes"
[ -f "$FILE" ] || "$BUILD/bench_decode" gen "$FILE" "$PODS" "$PCT"
# Warm the page cache so neither side pays for the disk.
cat "$FILE" >/dev/null

best() { # best of 3 runs of a mode: the line with the smallest time field $2
	mode=$1 field=$2
	for _ in 1 2 3; do "$BUILD/bench_decode" "$mode" "$FILE"; done |
		awk -v f="$field" '{for(i=1;i<=NF;i++){split($i,kv,"=");if(kv[1]==f)t=kv[2]}; if(min==""||t<min){min=t;line=$0}} END{print line}'
}
CJ=$(best cjson parse_s)
DE=$(best decode total_s)
echo "peer:  $CJ"
echo "ours:  $DE"
get() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1==k{print $2}'; }
BYTES=$(get "$DE" bytes)
awk -v cj="$(get "$CJ" parse_s)" -v de="$(get "$DE" total_s)" \
    -v rss="$(get "$DE" peak_rss_kib)" -v cjrss="$(get "$CJ" peak_rss_kib)" -v bytes="$BYTES" '
BEGIN {
	ratio = de / cj; rssx = rss * 1024 / bytes
	printf "time ratio ours/cJSON parse: %.2fx (target <= 1.3x): %s\n", ratio, ratio <= 1.3 ? "met" : "MISSED"
	printf "peak RSS: ours %.0f MiB = %.2fx input (target <= 2x): %s; cJSON %.0f MiB = %.2fx input\n",
		rss / 1024, rssx, rssx <= 2 ? "met" : "MISSED", cjrss / 1024, cjrss * 1024 / bytes
}'
