#!/bin/bash
# cpureq.sh - CPU per two-message non-streamed request, the gateway's and its workers' apart, against mock-llm (issue 20's 2-message goal).
#
#   bench/cpureq.sh [BUILD_TREE]     # default: this checkout
#
# BUILD_TREE is a checkout with its binaries in BUILD_TREE/build (an old
# commit in a worktree, for a side-by-side reading); the mock and
# loadgen always come from this checkout's build/. Two warm workers,
# one client, three 8 s runs after a 3 s warm-up; CPU is utime + stime
# from /proc/PID/stat before and after each run, divided by the
# requests loadgen counted. Noisy on a shared machine: alternate two
# trees a few times rather than compare two separate runs.
set -e
HERE=$(cd "$(dirname "$0")/.." && pwd)
SRC=${1:-$HERE}
TMP=$(mktemp -d /tmp/sluice-cpureq.XXXXXX)
MOCK=18731
GW=18732
LG=$HERE/build/bench/loadgen
WORKERS=2
CONV=""
NGX_PLAIN=$MOCK
NGX_STREAM=$MOCK
# shellcheck source=bench/setup.sh
. "$HERE/bench/setup.sh"
write_config ""
write_bodies
"$HERE/build/tests/mock-llm" --quiet --listen 127.0.0.1:$MOCK \
    --text "Paris is the capital." &
MP=$!
"$SRC/build/sluice-gateway" --config-dir "$TMP/config" \
    --state-dir "$TMP/state" --listen 127.0.0.1:$GW 2>"$TMP/gw.log" &
GP=$!
trap 'kill $GP $MP 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 2

# utime + stime ticks of pid $1, or of its children when $2 is set
ticks() {
	t=0
	if [ -z "$2" ]; then pids=$1; else pids=$(pgrep -P "$1"); fi
	for p in $pids; do
		# shellcheck disable=SC2046
		set -- $(sed 's/^.*) //' "/proc/$p/stat")
		t=$((t + ${12} + ${13}))
	done
	echo $t
}

url=http://127.0.0.1:$GW/v1/chat/completions
"$LG" --url "$url" --body-file "$TMP/body.plain.json" --concurrency 1 \
    --duration 3 >/dev/null
for run in 1 2 3; do
	g0=$(ticks $GP)
	w0=$(ticks $GP kids)
	out=$("$LG" --url "$url" --body-file "$TMP/body.plain.json" \
	    --concurrency 1 --duration 8)
	g1=$(ticks $GP)
	w1=$(ticks $GP kids)
	n=${out#*\"count\":}
	n=${n%%,*}
	p50=${out#*\"p50_ms\":}
	p50=${p50%%,*}
	echo "run $run: $n requests; CPU per request: gateway" \
	    "$(( (g1 - g0) * 10000 / n )) us, workers" \
	    "$(( (w1 - w0) * 10000 / n )) us; p50" \
	    "$p50 ms"
done
