#!/bin/sh
# ab.sh - two builds of Sluice side by side on one nginx, cells interleaved, to tell a regression from the machine's drift.
#
# Usage: bench/ab.sh OLD_BUILD_DIR NEW_BUILD_DIR
# Environment: AB_ROUNDS (6), AB_DURATION (s per cell, 3), AB_CLIENTS (1),
# AB_BODIES ("plain stream conv100 conv1000"; convN is N messages).
#
# Both gateways run at once on the same config and backend. Each round
# runs every body against both, the order swapped every round, so a
# machine that slows down during the run slows both sides alike. Prints
# one line per cell, then the median p50 of each side and their ratio.
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/peers.sh
. bench/setup.sh

[ $# -eq 2 ] || die "usage: bench/ab.sh OLD_BUILD_DIR NEW_BUILD_DIR"
OLD=$1 NEW=$2
ROUNDS=${AB_ROUNDS:-6}
DURATION=${AB_DURATION:-3}
CLIENTS=${AB_CLIENTS:-1}
BODIES=${AB_BODIES:-"plain stream conv100 conv1000"}
REPLY="The capital of France is Paris, a city known for its museums, its food, its river and the Eiffel Tower."
LOADGEN=$NEW/bench/loadgen
WORKERS=$CLIENTS
CONV=$(echo "$BODIES" | tr ' ' '\n' | sed -n 's/^conv//p' | tr '\n' ' ')
for b in "$OLD/sluice-gateway" "$NEW/sluice-gateway" "$LOADGEN"; do
	[ -x "$b" ] || die "$b missing"
done

TMP=$(mktemp -d /tmp/sluice-ab.XXXXXX)
NGX_PID='' PIDS=''
cleanup() {
	set +e
	for p in $PIDS; do
		for w in $(children "$p"); do kill -KILL "$w" 2>/dev/null; done
		stop_pid "$p"
	done
	stop_pid "$NGX_PID"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Start the gateway of build $1 as side $2; its port goes to $TMP/port.$2.
start_side() {
	mkdir -p "$TMP/state.$2"
	"$1/sluice-gateway" --config-dir "$TMP/config" --state-dir "$TMP/state.$2" \
	    --listen 127.0.0.1:0 2>"$TMP/gateway.$2.log" &
	PIDS="$PIDS $!"
	line=$(wait_line "$TMP/gateway.$2.log" 'listening on 127\.0\.0\.1:') ||
	    die "$2 gateway did not start: $(tail -5 "$TMP/gateway.$2.log")"
	printf '%s' "$line" | sed 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/' >"$TMP/port.$2"
}

# One cell: side $1, body $2, round $3; appends "body side p50" to $TMP/cells.
ab_cell() {
	side=$1 body=$2 round=$3
	set -- --url "http://127.0.0.1:$(cat "$TMP/port.$side")/v1/chat/completions" \
	    --body-file "$TMP/body.$body.json" --concurrency "$CLIENTS" \
	    --duration "$DURATION" --warmup 1 --timeout 10
	[ "$body" != stream ] || set -- "$@" --stream
	r=$("$LOADGEN" "$@")
	p50=$(jget "$r" p50_ms)
	[ "$(jget "$r" errors)" = 0 ] || die "$side $body: errors: $r"
	printf '  round %s  %-9s %-3s p50 %8s ms  %8s req/s\n' "$round" "$body" "$side" "$p50" "$(jget "$r" rps)"
	echo "$body $side $p50" >>"$TMP/cells"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

start_nginx
write_config ""
write_bodies
start_side "$OLD" old
start_side "$NEW" new
sleep 2
: >"$TMP/cells"
i=1
while [ "$i" -le "$ROUNDS" ]; do
	if [ $((i % 2)) -eq 1 ]; then order="old new"; else order="new old"; fi
	for b in $BODIES; do
		for s in $order; do ab_cell "$s" "$b" "$i"; done
	done
	i=$((i + 1))
done
echo "median p50 over $ROUNDS rounds, $CLIENTS client(s), $DURATION s per cell:"
for b in $BODIES; do
	o=$(awk -v b="$b" '$1 == b && $2 == "old" { print $3 }' "$TMP/cells" | median)
	n=$(awk -v b="$b" '$1 == b && $2 == "new" { print $3 }' "$TMP/cells" | median)
	printf '  %-9s old %8s ms  new %8s ms  new/old %s\n' "$b" "$o" "$n" \
	    "$(awk -v o="$o" -v n="$n" 'BEGIN { printf "%.3f", n / o }')"
done
