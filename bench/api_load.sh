#!/bin/sh
# The REST API under wrk beside Go's net/http serving the same bytes, in one run (docs/benchmarks.md).
#
#   bench/api_load.sh BUILD_DIR [SECONDS]
#
# bench_api_server builds four weeks of 10,000 GPU pods (folded as the controller folds them)
# and serves one snapshot; the peer (bench/http-peer) serves the body our server answered,
# fetched once. Each server gets, in turn: a paced run at 1,000 requests/s (wrk 4 has no rate
# option: bench/wrk-pace.lua schedules the requests) for SECONDS (default 60), then a short
# run at full speed with 4 connections. RSS is read from /proc before and after the load.
set -eu
BUILD=${1:-build}
SECS=${2:-${BENCH_API_SECONDS:-60}}
RATE=${BENCH_API_RATE:-1000}
PODS=${BENCH_API_PODS:-10000}
URL_PATH='/api/v1/costs?window=7d&by=team,project'
cd "$(dirname "$0")/.."
OUT="$BUILD/bench"
mkdir -p "$OUT"

# A missing tool is a failure (a MISSED line, exit 1) unless BENCH_ALLOW_SKIP=1.
skip() {
	if [ "${BENCH_ALLOW_SKIP:-0}" = 1 ]; then
		echo "skipped (BENCH_ALLOW_SKIP=1): $*"
	else
		echo "MISSED: cannot run: $* (install it, or set BENCH_ALLOW_SKIP=1 to skip)"
		return 1
	fi
}

if ! command -v wrk >/dev/null; then
	skip "the API load: wrk is not installed (scripts/setup.sh installs it)" || exit 1
	exit 0
fi

pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM

# Starts "$@" with its standard output in $2's file; waits for its "listening PORT" line.
port_of() { # file
	i=0
	while [ $i -lt 200 ]; do
		p=$(awk '/^listening /{print $2}' "$1" 2>/dev/null)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
		i=$((i + 1))
	done
	echo "no listening line in $1:" >&2
	cat "$1" >&2
	return 1
}
rss_kib() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM/{print $2}' "/proc/$1/status"; }

# One paced and one full-speed run against a server; prints one key=value line.
load() { # name pid port
	name=$1 pid=$2 port=$3 url="http://127.0.0.1:$3$URL_PATH"
	# Warm: the first request fills the snapshot's response cache (the cold figure is separate).
	wrk -t1 -c1 -d2s "$url" >/dev/null
	rss0=$(rss_kib "$pid")
	wrk -t2 -c32 -d"${SECS}s" --latency -s bench/wrk-pace.lua "$url" -- "$RATE" 2 >"$OUT/wrk-$name-paced.txt"
	rss1=$(rss_kib "$pid")
	wrk -t2 -c4 -d10s --latency "$url" >"$OUT/wrk-$name-max.txt"
	rss2=$(rss_kib "$pid")
	awk -v name="$name" -v rss0="$rss0" -v rss1="$rss1" -v rss2="$rss2" -v hwm="$(hwm_kib "$pid")" '
	function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
	FILENAME ~ /paced/ && $1 == "50%" { p50 = ms($2) }
	FILENAME ~ /paced/ && $1 == "99%" { p99 = ms($2) }
	FILENAME ~ /paced/ && /^Requests\/sec/ { rps = $2 }
	FILENAME ~ /paced/ && /Non-2xx|Socket errors/ { err = err " " $0 }
	FILENAME ~ /max/ && $1 == "50%" { mp50 = ms($2) }
	FILENAME ~ /max/ && $1 == "99%" { mp99 = ms($2) }
	FILENAME ~ /max/ && /^Requests\/sec/ { mrps = $2 }
	END {
		printf "%s: rps=%.0f p50_ms=%.3f p99_ms=%.3f max_rps=%.0f max_p50_ms=%.3f max_p99_ms=%.3f rss_start_kib=%d rss_after_paced_kib=%d rss_end_kib=%d rss_hwm_kib=%d%s\n",
			name, rps, p50, p99, mrps, mp50, mp99, rss0, rss1, rss2, hwm, err
	}' "$OUT/wrk-$name-paced.txt" "$OUT/wrk-$name-max.txt"
}

"$BUILD/bench_api_server" "$PODS" 127.0.0.1:0 >"$OUT/api-server.out" 2>&1 &
ours=$!
pids="$ours"
port=$(port_of "$OUT/api-server.out")
head -1 "$OUT/api-server.out"
python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' \
	"http://127.0.0.1:$port$URL_PATH" >"$OUT/api-body.json"
echo "response: $(wc -c <"$OUT/api-body.json") bytes of JSON"

peer=""
if command -v go >/dev/null; then
	outabs=$(cd "$OUT" && pwd)
	(cd bench/http-peer && GOTOOLCHAIN=local CGO_ENABLED=0 go build -o "$outabs/http-peer" .)
	"$OUT/http-peer" -body "$OUT/api-body.json" -path /api/v1/costs >"$OUT/http-peer.out" 2>&1 &
	peer=$!
	pids="$pids $peer"
	pport=$(port_of "$OUT/http-peer.out")
else
	skip "the net/http peer: go is not installed (bench/http-peer)" || peer_missing=1
fi

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) on $(nproc) cores"
load ours "$ours" "$port" | tee "$OUT/api-ours.txt"
[ -n "$peer" ] && load go-net-http "$peer" "$pport" | tee "$OUT/api-peer.txt"
awk -v rate="$RATE" '{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	printf "p99 at %d requests/s: %.3f ms (target < 5 ms): %s\n", rate, v["p99_ms"], v["p99_ms"] < 5 ? "met" : "MISSED"
}' "$OUT/api-ours.txt"
# Our figures are printed either way; a peer that could not run still fails the run.
[ -z "${peer_missing:-}" ]
