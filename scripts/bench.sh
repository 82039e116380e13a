#!/bin/sh
# Benchmarks with their peers, in one run: figures are printed, and compared with the targets.
set -eu
BUILD=${1:-build}
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."
OUT="$BUILD/bench"
mkdir -p "$OUT"

# The whole run is kept in $OUT/bench.log; a target missed anywhere (a line saying MISSED) makes
# the exit status 1, after every benchmark has run and printed its figures.
if [ -z "${GC_BENCH_INNER:-}" ]; then
	rm -f "$OUT/bench.rc"
	{
		GC_BENCH_INNER=1 sh "$SELF" "$@"
		echo $? >"$OUT/bench.rc"
	} 2>&1 | tee "$OUT/bench.log"
	rc=$(cat "$OUT/bench.rc" 2>/dev/null || echo 1)
	if grep -q MISSED "$OUT/bench.log"; then
		echo "bench: targets missed:"
		grep MISSED "$OUT/bench.log"
		exit 1
	fi
	exit "$rc"
fi

# A benchmark or peer that cannot run because a tool is missing is not a pass: it prints a MISSED
# line (so the run exits 1) unless BENCH_ALLOW_SKIP=1 says skipping is intended.
skip() {
	if [ "${BENCH_ALLOW_SKIP:-0}" = 1 ]; then
		echo "skipped (BENCH_ALLOW_SKIP=1): $*"
	else
		echo "MISSED: cannot run: $* (install it, or set BENCH_ALLOW_SKIP=1 to skip)"
	fi
}
export BENCH_ALLOW_SKIP=${BENCH_ALLOW_SKIP:-0}

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

# The advisor over a 4-week ledger of BENCH_ADVISOR_SLOTS (10,000) GPU pod slots with churn and
# daily folds, plus usage summaries for the pods running at the end (bench/bench_advisor.c).
echo
echo "== advisor over ${BENCH_ADVISOR_SLOTS:-10000} GPU pods x 4 weeks (churn, folded) with usage"
"$BUILD/bench_advisor" "${BENCH_ADVISOR_SLOTS:-10000}" 28 5

# The dcgm-exporter text parser (pkg/promtext) and the usage store (pkg/gpuuse) on generated
# bodies (every default counter, the full label set, 8-GPU nodes) read 64 KiB at a time like a
# network read, beside Prometheus' own expfmt.TextParser (bench/promparse-peer, Go; without it
# the run fails unless BENCH_ALLOW_SKIP=1): one scrape of ~6,700 GPUs (50 MB), one of ~670 GPUs (5 MB), and ten timestamped
# scrapes of those ~670 GPUs (50 MB: the store holds the same devices as at 5 MB).
# BENCH_PROM_MB changes the large size.
PROM_MB=${BENCH_PROM_MB:-50}
echo
echo "== dcgm-exporter bodies: parse and ingest ${PROM_MB} MB, 5 MB, ${PROM_MB} MB of 10 scrapes vs expfmt.TextParser"
for spec in "$PROM_MB 1" "5 1" "$PROM_MB 10"; do
	set -- $spec
	f="$OUT/dcgm-$1x$2.prom"
	[ -f "$f" ] || "$BUILD/bench_promparse" gen "$f" "$1" "$2"
	cat "$f" >/dev/null
done
prom_best() { # best of 3 runs: the line with the smallest total_s
	for _ in 1 2 3; do "$@"; done |
		awk '{for(i=1;i<=NF;i++){split($i,kv,"=");if(kv[1]=="total_s")t=kv[2]}; if(min==""||t<min){min=t;line=$0}} END{print line}'
}
PEER=
if command -v go >/dev/null; then
	PEER=$(cd "$OUT" && pwd)/promparse-peer
	(cd bench/promparse-peer && GOFLAGS=-mod=mod go build -o "$PEER" .)
fi
for spec in "$PROM_MB 1" "5 1" "$PROM_MB 10"; do
	set -- $spec
	f="$OUT/dcgm-$1x$2.prom"
	P=$(prom_best "$BUILD/bench_promparse" parse "$f")
	I=$(prom_best "$BUILD/bench_promparse" ingest "$f")
	echo "$1 MB, $2 scrape(s): parse:  $P"
	echo "$1 MB, $2 scrape(s): ingest: $I"
	if [ -n "$PEER" ]; then
		echo "$1 MB, $2 scrape(s): peer:   $(prom_best "$PEER" "$f")"
	fi
	eval "PARSE_$2_$1=\$P INGEST_$2_$1=\$I"
done
[ -n "$PEER" ] || skip "the expfmt peer: go is not installed"
eval "PL=\$PARSE_1_$PROM_MB IL=\$INGEST_1_$PROM_MB IR=\$INGEST_10_$PROM_MB"
awk -v pl="$(get "$PL" mb_per_s)" -v il="$(get "$IL" mb_per_s)" -v ir="$(get "$IR" mb_per_s)" \
    -v pc="$(get "$PL" mb_per_cpu_s)" -v ic="$(get "$IL" mb_per_cpu_s)" -v irc="$(get "$IR" mb_per_cpu_s)" \
    -v rl="$(get "$PL" peak_rss_kib)" -v rs="$(get "$PARSE_1_5" peak_rss_kib)" \
    -v jl="$(get "$IR" peak_rss_kib)" -v js="$(get "$INGEST_1_5" peak_rss_kib)" '
BEGIN {
	printf "wall clock: parse %.0f MB/s, parse+ingest %.0f and %.0f MB/s (target >= 100): %s\n", pl, il, ir,
		(pl >= 100 && il >= 100 && ir >= 100) ? "met" : "MISSED"
	printf "per CPU second: parse %.0f MB/s, parse+ingest %.0f and %.0f MB/s\n", pc, ic, irc
	printf "peak RSS, parse: %.1f MiB at the large body, %.1f MiB at 5 MB; parse+ingest of the same GPUs: %.1f MiB at the large body, %.1f MiB at 5 MB (target: independent of body size): %s\n",
		rl / 1024, rs / 1024, jl / 1024, js / 1024, (rl <= rs + 1024 && jl <= js + 1024) ? "met" : "MISSED"
}'

# The REST API under wrk (Debian's wrk 4, paced by bench/wrk-pace.lua) beside Go's net/http
# serving the same bytes (bench/http-peer; skipped without Go): /api/v1/costs over four weeks of
# 10,000 GPU pods. BENCH_API_SECONDS (60), BENCH_API_RATE (1000), BENCH_API_PODS (10000).
echo
echo "== REST API: /api/v1/costs?window=7d&by=team,project at ${BENCH_API_RATE:-1000} requests/s, ${BENCH_API_PODS:-10000} GPU pods x 4 weeks, vs Go net/http"
./bench/api_load.sh "$BUILD" || echo "MISSED: bench/api_load.sh failed (exit $?)"

# The HTTP server under hostile and clumsy clients (tests/robustness's attacks): the latency of a
# well-behaved client meanwhile and the probes', plain HTTP and HTTPS, beside Go's net/http (the
# peer bench/api_load.sh built) under the same attacks (bench/attack_latency.py, about 4 minutes).
echo
echo "== the HTTP server under hostile clients: a well-behaved client's latency, vs Go net/http"
python3 bench/attack_latency.py --build "$BUILD" || echo "MISSED: bench/attack_latency.py failed (exit $?)"

# The export's peak memory: a thousand hourly FOCUS rows beside a million over the same ledger,
# each in its own process (bench/bench_export.c); the two peaks should be equal.
echo
echo "== export: 990 FOCUS rows vs 1,001,000 (hourly, 9 h vs 379 days), peak RSS"
"$BUILD/bench_export"

# History over BENCH_HISTORY_DAYS (90) simulated days at BENCH_HISTORY_PODS (50,000) GPU pods a
# day, 35 days kept: our ledger (period history) beside the history earlier builds kept (folded
# hours only) in the same process; RSS, pool and ledger bytes, checkpoint size and encode time,
# and the completed week's report, per simulated week (bench/bench_history.c; about 5 minutes).
# Then the same without sweeping the string pool, as builds before mark and sweep kept it (every
# uid and name ever seen): RSS must be flat once retention is full with the sweep, i.e. the
# largest RSS of the last four weeks at most 15 % over that of weeks 5-8 (the first month after
# the 35 days filled: RSS follows the running month's rows).
echo
echo "== history: ${BENCH_HISTORY_DAYS:-90} days x ${BENCH_HISTORY_PODS:-50000} GPU pods a day, period history beside hourly-only"
"$BUILD/bench_history" "${BENCH_HISTORY_DAYS:-90}" "${BENCH_HISTORY_PODS:-50000}" 35 tuned UTC 35 \
	sweep | tee "$OUT/history-sweep.txt"
echo "-- the same, the string pool never swept (the previous design)"
"$BUILD/bench_history" "${BENCH_HISTORY_DAYS:-90}" "${BENCH_HISTORY_PODS:-50000}" 35 tuned UTC 35 \
	nosweep | tee "$OUT/history-nosweep.txt"
awk -F'[ =]' '/^week=/ { w = $2; rss[w] = $4; n = w }
END {
	if (n < 12) { print "history RSS flat: not judged (fewer than 12 weeks)"; exit }
	for (w = 5; w <= 8; w++) if (rss[w] > a) a = rss[w]
	for (w = n - 3; w <= n; w++) if (rss[w] > b) b = rss[w]
	printf "history RSS flat once retention is full: weeks 5-8 max %.1f MiB, weeks %d-%d max %.1f MiB (%.2fx, target <= 1.15x): %s\n",
		a, n - 3, n, b, b / a, b <= 1.15 * a ? "met" : "MISSED"
}' "$OUT/history-sweep.txt"

# The usage basis (docs/ledger.md): BENCH_USE_PODS (10,000) pods sharing GPUs four to one, every
# BENCH_USE_STEP (15) seconds of BENCH_USE_DAYS (28) days split by measured use, beside a ledger
# fed by allocation alone, both folding hourly as the controller does (bench/bench_usebasis.c).
# The whole span takes long on two cores (about 2 us a split: 403 million of them); the figures
# are the split time, each ledger's bytes at the end and a query of the span in each basis, whose
# totals must agree.
echo
echo "== usage basis: ${BENCH_USE_PODS:-10000} shared GPU pods x ${BENCH_USE_DAYS:-28} days x ${BENCH_USE_STEP:-15} s samples, beside allocation alone"
"$BUILD/bench_usebasis" "${BENCH_USE_PODS:-10000}" "${BENCH_USE_DAYS:-28}" "${BENCH_USE_STEP:-15}" |
	tee "$OUT/usebasis.txt"
grep -q "totals_agree=yes" "$OUT/usebasis.txt" || echo "MISSED: the usage basis's total differs from the allocation basis's"

# The controller's initial sync and RSS against a real kube-apiserver + etcd, beside a client-go
# informer program in the same run (bench/controller_sync.py). Needs Go for the pinned e2e
# tools (scripts/e2e-build.sh: a no-op when its cache is current) and the peer; skipped without
# it, or with BENCH_CONTROLLER=0. BENCH_SYNC_PODS / BENCH_SYNC_GPU_PODS change the cluster.
echo
echo "== controller initial sync of ${BENCH_SYNC_PODS:-10000} pods (${BENCH_SYNC_GPU_PODS:-1000} with GPUs) from kube-apiserver vs a client-go informer"
if [ "${BENCH_CONTROLLER:-1}" = 0 ]; then
	echo "skipped (BENCH_CONTROLLER=0)"
elif ! command -v go >/dev/null; then
	skip "the controller sync bench: go is not installed (needed to build the e2e tools and bench/informer-peer)"
else
	echo "(scripts/e2e-build.sh: builds the pinned tools once, 10-20 minutes cold; log in $OUT/e2e-build.log)"
	./scripts/e2e-build.sh >"$OUT/e2e-build.log" 2>&1 || {
		cat "$OUT/e2e-build.log" >&2
		exit 1
	}
	python3 bench/controller_sync.py --build "$BUILD"
fi
