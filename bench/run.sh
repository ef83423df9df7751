#!/bin/sh
# run.sh - benchmark Sluice beside nginx (the backend, straight) and Portkey (a peer gateway) with loadgen; writes bench/RESULTS.md.
#
# Usage: bench/run.sh [BUILD_DIR]          (make bench runs: bench/run.sh build)
# Environment: BENCH_SCENARIOS ("main paced store"; "paced" or "store"
# alone rewrites only its section of BENCH_OUT), BENCH_SMOKE (1: a quick small run into
# BUILD_DIR/bench/RESULTS-smoke.md), BENCH_DURATION (s, default 5),
# BENCH_WARMUP (s, 1), BENCH_CLIENTS ("1 16 64 256"), BENCH_WORKERS (the
# largest client count), BENCH_CONV ("10 100 1000" messages),
# BENCH_CACHE_CLIENTS ("1 16"), BENCH_OUT (bench/RESULTS.md); the paced
# scenario: BENCH_PACED_CLIENTS ("16 256 1024"), BENCH_PACED_WORKERS,
# BENCH_PACED_DURATION (s, 10), BENCH_PACED_WARMUP (s, 3),
# BENCH_PACED_TARGETS ("direct sluice portkey"), BENCH_PACED_TIMEOUT (s,
# 30), BENCH_PACE_FIRST_MS (50), BENCH_PACE_EVENTS (20), BENCH_PACE_GAP_MS
# (10); the store scenario: BENCH_STORE_CLIENTS ("1 4 16"),
# BENCH_STORE_BACKENDS ("sqlite postgresql"), BENCH_STORE_TOPOLOGIES
# ("one haproxy1 haproxy2"), BENCH_STORE_WORKERS, BENCH_HAPROXY. bench/README.md
# explains them.
set -eu

cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/peers.sh
. bench/setup.sh
. bench/report.sh
. bench/store.sh

O=${1:-build}
SCENARIOS=${BENCH_SCENARIOS:-"main paced store"}
if [ -n "${BENCH_SMOKE:-}" ]; then
	# Small and short, and never into bench/RESULTS.md by default.
	DURATION=${BENCH_DURATION:-2}
	WARMUP=${BENCH_WARMUP:-0.5}
	CLIENTS=${BENCH_CLIENTS:-"1 16"}
	CONV=${BENCH_CONV:-"10"}
	CACHE_CLIENTS=${BENCH_CACHE_CLIENTS:-"1"}
	PACED_CLIENTS=${BENCH_PACED_CLIENTS:-"16 64"}
	PACED_DURATION=${BENCH_PACED_DURATION:-2}
	PACED_WARMUP=${BENCH_PACED_WARMUP:-0.5}
	OUT=${BENCH_OUT:-$O/bench/RESULTS-smoke.md}
else
	DURATION=${BENCH_DURATION:-5}
	WARMUP=${BENCH_WARMUP:-1}
	CLIENTS=${BENCH_CLIENTS:-"1 16 64 256"}
	CONV=${BENCH_CONV:-"10 100 1000"}
	CACHE_CLIENTS=${BENCH_CACHE_CLIENTS:-"1 16"}
	PACED_CLIENTS=${BENCH_PACED_CLIENTS:-"16 256 1024"}
	# Longer than the main cells: a stream through a loaded gateway
	# can take seconds at 1,024, and one that starts in the warm-up
	# is not measured.
	PACED_DURATION=${BENCH_PACED_DURATION:-10}
	PACED_WARMUP=${BENCH_PACED_WARMUP:-3}
	OUT=${BENCH_OUT:-bench/RESULTS.md}
fi
PACED_TARGETS=${BENCH_PACED_TARGETS:-"direct sluice portkey"}
PACED_TIMEOUT=${BENCH_PACED_TIMEOUT:-30}
PACE_FIRST_MS=${BENCH_PACE_FIRST_MS:-50}
PACE_EVENTS=${BENCH_PACE_EVENTS:-20}
PACE_GAP_MS=${BENCH_PACE_GAP_MS:-10}
TIMEOUT=10			# per request, seconds
GATEWAY=$O/sluice-gateway
LOADGEN=$O/bench/loadgen
REPLY="The capital of France is Paris, a city known for its museums, its food, its river and the Eiffel Tower."
MAXC=0
for c in $CLIENTS; do [ "$c" -gt "$MAXC" ] && MAXC=$c; done
WORKERS=${BENCH_WORKERS:-$MAXC}
PMAX=0
for c in $PACED_CLIENTS; do [ "$c" -gt "$PMAX" ] && PMAX=$c; done
# A few spare workers: one freed by a stream's end may not be idle yet
# when its client sends the next request.
PACED_WORKERS=${BENCH_PACED_WORKERS:-$((PMAX + PMAX / 32 + 4))}

for b in "$GATEWAY" "$LOADGEN" "$O/sluice-worker" "$O/tests/mock-llm"; do
	[ -x "$b" ] || die "$b missing; run make bench"
done

TMP=$(mktemp -d /tmp/sluice-bench.XXXXXX)
NGX_PID='' PK_PID='' GW_PID='' LG_PID='' SAMPLER_PID='' WPIDS='' MOCK_PID=''
RAW=$TMP/raw.jsonl RPFX=r

cleanup() {
	set +e
	stop_pid "$SAMPLER_PID"
	stop_pid "$LG_PID"
	if alive "$GW_PID"; then
		WPIDS="$WPIDS $(children "$GW_PID")"
		stop_pid "$GW_PID"
	fi
	for w in $WPIDS; do
		grep -q sluice-worker "/proc/$w/cmdline" 2>/dev/null &&
		    kill -KILL "$w" 2>/dev/null
	done
	stop_pid "$PK_PID"
	stop_pid "$NGX_PID"
	stop_pid "$MOCK_PID"
	store_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE

# Idle workers per /health (0 when it does not answer).
idle_workers() {
	h=$(curl -s -m 2 "http://127.0.0.1:$GW_PORT/health" || true)
	v=$(printf '%s' "$h" | sed -n 's/.*"idle":\([0-9]*\).*/\1/p')
	echo "${v:-0}"
}

start_gateway() {
	"$GATEWAY" --config-dir "$TMP/config" --state-dir "$TMP/state" \
	    --listen 127.0.0.1:0 2>"$TMP/gateway.log" &
	GW_PID=$!
	line=$(wait_line "$TMP/gateway.log" 'listening on 127\.0\.0\.1:') ||
	    die "gateway did not start: $(tail -5 "$TMP/gateway.log")"
	GW_PORT=$(printf '%s' "$line" | sed 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/')
	n=0
	# 30 s, and a fifth of a second more per worker: a thousand
	# workers starting at once took 70 s to say HELLO on two busy
	# cores.
	while [ "$(idle_workers)" -lt "$WORKERS" ]; do
		[ "$n" -lt $((300 + 2 * WORKERS)) ] ||
		    die "only $(idle_workers)/$WORKERS workers idle after $(((300 + 2 * WORKERS) / 10)) s"
		sleep 0.1
		n=$((n + 1))
	done
	WPIDS=$(children "$GW_PID" | sort -n | tr '\n' ' ')
}

# SIGTERM the gateway and time its drain; sets SHUTDOWN.
stop_gateway() {
	t0=$(date +%s%N)
	kill -TERM "$GW_PID"
	if wait_gone "$GW_PID" 300; then
		rc=0
		wait "$GW_PID" || rc=$?
		SHUTDOWN="exit status $rc after SIGTERM, in $((($(date +%s%N) - t0) / 1000000)) ms"
	else
		SHUTDOWN="still running 30 s after SIGTERM (killed)"
		kill -KILL "$GW_PID" 2>/dev/null || true
	fi
	GW_PID=
	left=0
	for w in $WPIDS; do
		grep -q sluice-worker "/proc/$w/cmdline" 2>/dev/null && left=$((left + 1))
	done
	SHUTDOWN="$SHUTDOWN; workers left behind: $left"
	mkdir -p "$O/bench"
	cp "$TMP/gateway.log" "$O/bench/gateway.log"
}

# Where a target listens, for mode $2: sets URL and PIDS (the processes
# whose memory is sampled: the main one first), and the loadgen header
# options in "$@" of the caller through HDR_FILE.
target() {
	: >"$TMP/hdrs"
	case $1 in
	direct)
		if [ "$2" = paced ]; then
			URL=http://127.0.0.1:$PACED_PORT/v1/chat/completions
			PIDS=$MOCK_PID
			return
		fi
		if [ "$2" = stream ]; then p=$NGX_STREAM; else p=$NGX_PLAIN; fi
		URL=http://127.0.0.1:$p/v1/chat/completions
		PIDS=$NGX_PID ;;
	sluice)
		URL=http://127.0.0.1:$GW_PORT/v1/chat/completions
		PIDS="$GW_PID $WPIDS" ;;
	portkey)
		case $2 in
		paced) p=$PACED_PORT ;;
		stream) p=$NGX_STREAM ;;
		*) p=$NGX_PLAIN ;;
		esac
		URL=http://127.0.0.1:$PK_PORT/v1/chat/completions
		portkey_headers "$p" >"$TMP/hdrs"
		PIDS=$PK_PID ;;
	esac
}

# One loadgen run: cell TAG TARGET MODE CLIENTS BODY. The result is in
# $TMP/r.TAG.MODE.TARGET.CLIENTS, the memory peaks in $TMP/m.(same).
cell() {
	tag=$1 tg=$2 mode=$3 c=$4 body=$5
	key=$tag.$mode.$tg.$c
	target "$tg" "$mode"
	set -- --url "$URL" --body-file "$body" --concurrency "$c" \
	    --duration "$DURATION" --warmup "$WARMUP" --timeout "$TIMEOUT"
	[ "$mode" = stream ] && set -- "$@" --stream
	# paced: streams, on epoll (a thousand clients), counting events
	# and loadgen's own CPU.
	[ "$mode" = paced ] && set -- "$@" --stream --epoll --count-events --self-cpu
	while IFS= read -r h; do set -- "$@" --header "$h"; done <"$TMP/hdrs"
	# shellcheck disable=SC2086
	mem_sampler "$TMP/m.$key" $PIDS &
	SAMPLER_PID=$!
	# In the background so that a signal stops the run at once.
	"$LOADGEN" "$@" >"$TMP/lg.out" &
	LG_PID=$!
	rc=0
	wait "$LG_PID" || rc=$?
	LG_PID=
	stop_pid "$SAMPLER_PID"
	SAMPLER_PID=
	r=$(cat "$TMP/lg.out")
	[ "$rc" -eq 0 ] && [ -n "$r" ] ||
	    r="{\"count\":0,\"errors\":-1,\"first_error\":\"loadgen exit status $rc\"}"
	echo "$r" >"$TMP/$RPFX.$key"
	echo "$tag $tg $r" >>"$RAW"
	printf '  %-7s %-6s %-7s %3s clients: %8s req/s  p50 %8s ms  p99 %8s ms  errors %s\n' \
	    "$tag" "$mode" "$tg" "$c" "$(jget "$r" rps)" "$(jget "$r" p50_ms)" \
	    "$(jget "$r" p99_ms)" "$(jget "$r" errors)"
	if [ "$tg" = sluice ] && ! alive "$GW_PID"; then
		echo "run.sh: the gateway died during this cell" >&2
		GW_DIED=yes
	fi
}

# The targets that run: direct and sluice, and portkey when installed.
targets() {
	if [ -n "$PK_VERSION" ]; then echo "direct sluice portkey"
	else echo "direct sluice"; fi
}

run_cells() {
	for mode in plain stream; do
		for c in $CLIENTS; do
			for tg in $(targets); do
				[ "$GW_DIED" = no ] || [ "$tg" != sluice ] || continue
				cell main "$tg" "$mode" "$c" "$TMP/body.$mode.json"
			done
		done
	done
}

conv_cells() {
	for nm in $CONV; do
		for tg in $(targets); do
			[ "$GW_DIED" = no ] || [ "$tg" != sluice ] || continue
			cell "conv$nm" "$tg" plain 1 "$TMP/body.conv$nm.json"
		done
	done
}

# The response cache: a gateway with it on, the same body again and
# again. The preset's temperature decides: 0 is cacheable (every
# request after the first is a hit), 0.5 is not (every one a miss, a
# backend call).
cache_cells() {
	write_config '"cache": {"enabled": true, "max_entries": 1000, "ttl_minutes": 60, "cacheable_temperature": 0.0}'
	start_gateway
	for kind in miss hit; do
		if [ "$kind" = hit ]; then t=0; else t=0.5; fi
		echo "{\"temperature\": $t}" >"$TMP/config/Presets/OpenAI/bench/Bench.json"
		for mode in plain stream; do
			for c in $CACHE_CLIENTS; do
				cell "$kind" sluice "$mode" "$c" "$TMP/body.$mode.json"
			done
		done
	done
	CACHE_HDR=$(curl -s -o /dev/null -D - -m 5 -H 'Content-Type: application/json' \
	    --data-binary "@$TMP/body.plain.json" "http://127.0.0.1:$GW_PORT/v1/chat/completions" |
	    tr -d '\r' | sed -n 's/^X-Sluice-Cache: //p')
	CACHE_METRICS=$(curl -s -m 2 "http://127.0.0.1:$GW_PORT/metrics" |
	    grep '^sluice_cache_' | tr '\n' ' ')
	stop_pid "$GW_PID"
	GW_PID=
}

# CPU ticks so far: "gateway workers backend portkey".
paced_cpu() {
	# shellcheck disable=SC2086
	echo "$(cpu_ticks "$GW_PID") $(cpu_all $WPIDS) $(cpu_ticks "$MOCK_PID")" \
	    "$(cpu_ticks "$PK_PID")"
}

# One paced cell: paced_cell TARGET CLIENTS. Its CPU deltas and wall
# time go to $TMP/c.paced.paced.TARGET.CLIENTS as "gateway workers
# backend portkey ms".
paced_cell() {
	pc_tg=$1 pc_c=$2
	pc_0=$(paced_cpu)
	pc_t0=$(date +%s%N)
	cell paced "$pc_tg" paced "$pc_c" "$TMP/body.paced.json"
	pc_t1=$(date +%s%N)
	# shellcheck disable=SC2086,SC2046
	set -- $pc_0 $(paced_cpu)
	echo "$(($5 - $1)) $(($6 - $2)) $(($7 - $3)) $(($8 - $4))" \
	    "$(((pc_t1 - pc_t0) / 1000000))" >"$TMP/c.paced.paced.$pc_tg.$pc_c"
}

# The targets of the paced scenario (portkey only when installed).
paced_targets() {
	for t in $PACED_TARGETS; do
		[ "$t" != portkey ] || [ -n "$PK_VERSION" ] || continue
		echo "$t"
	done
}

# One stream through Sluice from each of the largest cell's clients,
# unmeasured: a worker's first request costs it more (lazy set-up) than
# the next ones, and a thousand such firsts at once would fill the
# first cell's window.
paced_prime() {
	"$LOADGEN" --url "http://127.0.0.1:$GW_PORT/v1/chat/completions" \
	    --body-file "$TMP/body.paced.json" --concurrency "$PMAX" \
	    --duration 0.01 --timeout "$PACED_TIMEOUT" --stream --epoll \
	    >"$TMP/prime.out" &
	LG_PID=$!
	wait "$LG_PID" || true
	LG_PID=
	echo "bench: primed the workers: $(cat "$TMP/prime.out")"
}

# The floor of the relay shape (bench/relayfloor.c): the paced events
# through bare processes, at each stream count, after Sluice's cells.
paced_floor() {
	for c in $PACED_CLIENTS; do
		"$O/bench/relayfloor" "$c" "$PACE_EVENTS" "$PACE_GAP_MS" \
		    "$PACED_DURATION" >"$TMP/floor.$c" 2>/dev/null ||
		    echo '{}' >"$TMP/floor.$c"
	done
}

# The paced scenario (bench/README.md): the paced backend, and a
# gateway of its own with PACED_WORKERS warm workers.
paced_cells() {
	start_paced_backend
	main_workers=$WORKERS main_timeout=$TIMEOUT main_died=$GW_DIED
	main_duration=$DURATION main_warmup=$WARMUP
	WORKERS=$PACED_WORKERS TIMEOUT=$PACED_TIMEOUT GW_DIED=no
	DURATION=$PACED_DURATION WARMUP=$PACED_WARMUP
	RAW=$TMP/raw.paced.jsonl RPFX=p
	: >"$RAW"
	# A thousand workers starting at once on two cores take far
	# longer than the default 5 s to say HELLO (70 s seen), and their
	# thousand first requests at once starve some of them of CPU for
	# longer than the default 5 s between heartbeats (the gateway
	# then kills them as hung); every client comes from 127.0.0.1,
	# past the default 512 connections per address.
	PACED_POOL="\"spawn_timeout_s\": 300, \"hang_timeout_s\": 30, \"max_connections\": $((2 * PACED_WORKERS + 64)), \"max_connections_per_ip\": 0"
	write_config "$PACED_POOL"
	PACED_LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
	start_gateway
	P_GW_MEM0=$(rss_kb "$GW_PID" VmRSS)
	# shellcheck disable=SC2086
	P_WANON0=$(rss_stats RssAnon $WPIDS)
	P_MOCK_MEM0=$(rss_kb "$MOCK_PID" VmRSS)
	paced_prime
	echo "bench: paced backend on :$PACED_PORT (first event after" \
	    "$PACE_FIRST_MS ms, $PACE_EVENTS events $PACE_GAP_MS ms apart)," \
	    "Sluice on :$GW_PORT with $WORKERS workers"
	for c in $PACED_CLIENTS; do
		for tg in $(paced_targets); do
			[ "$GW_DIED" = no ] || [ "$tg" != sluice ] || continue
			paced_cell "$tg" "$c"
		done
	done
	PACED_LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
	paced_floor
	P_SAME_PIDS=no P_HEALTH=unreachable
	if [ "$GW_DIED" = no ]; then
		[ "$(children "$GW_PID" | sort -n | tr '\n' ' ')" != "$WPIDS" ] ||
		    P_SAME_PIDS=yes
		P_HEALTH=$(curl -s -m 2 "http://127.0.0.1:$GW_PORT/health" ||
		    echo unreachable)
		stop_pid "$GW_PID"
	fi
	GW_PID=
	mkdir -p "$O/bench"
	cp "$TMP/gateway.log" "$O/bench/gateway-paced.log"
	PACED_DIED=$GW_DIED
	WORKERS=$main_workers TIMEOUT=$main_timeout GW_DIED=$main_died
	DURATION=$main_duration WARMUP=$main_warmup
	RAW=$TMP/raw.jsonl RPFX=r
}

# Raise the descriptor limit for the largest cell (loadgen, the
# gateway and the backends each hold a socket per stream); NOFILE_NOTE
# says what came of it.
# shellcheck disable=SC3045
raise_nofile() {
	need=$((3 * (PMAX > MAXC ? PMAX : MAXC) + 256))
	was=$(ulimit -n)
	ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
	now=$(ulimit -n)
	if [ "$now" != unlimited ] && [ "$now" -lt "$need" ]; then
		NOFILE_NOTE="ulimit -n is $now (hard limit $(ulimit -Hn)), below the $need descriptors the largest cell may need: raise the hard limit (limits.conf, prlimit) and run again"
		echo "bench: $NOFILE_NOTE" >&2
	else
		NOFILE_NOTE="ulimit -n $now (it was $was; the bench asks for 65536, else the hard limit), enough for the about $need descriptors the largest cell may need"
	fi
}

has() {
	case " $SCENARIOS " in *" $1 "*) return 0 ;; esac
	return 1
}

# Memory and CPU before the load.
snapshot_before() {
	GW_MEM0="$(rss_kb "$GW_PID" VmRSS) $(rss_kb "$GW_PID" RssAnon)"
	# shellcheck disable=SC2086
	WRSS0=$(rss_stats VmRSS $WPIDS)
	# shellcheck disable=SC2086
	WANON0=$(rss_stats RssAnon $WPIDS)
	NGX_MEM0=$(rss_kb "$NGX_PID" VmRSS)
	PK_MEM0=$(rss_kb "$PK_PID" VmRSS)
	GW_CPU0=$(cpu_ticks "$GW_PID")
	# shellcheck disable=SC2086
	W_CPU0=$(cpu_sum $WPIDS)
	PK_CPU0=$(cpu_ticks "$PK_PID")
	NGX_CPU0=$(cpu_ticks "$NGX_PID")
}

snapshot_after() {
	GW_MEM1="$(rss_kb "$GW_PID" VmRSS) $(rss_kb "$GW_PID" RssAnon)"
	# shellcheck disable=SC2086
	WRSS1=$(rss_stats VmRSS $WPIDS)
	# shellcheck disable=SC2086
	WANON1=$(rss_stats RssAnon $WPIDS)
	GW_CPU=$(($(cpu_ticks "$GW_PID") - GW_CPU0))
	# shellcheck disable=SC2086
	W_CPU=$(($(cpu_sum $WPIDS) - W_CPU0))
	PK_CPU=$(($(cpu_ticks "$PK_PID") - PK_CPU0))
	NGX_CPU=$(($(cpu_ticks "$NGX_PID") - NGX_CPU0))
	NOW=$(children "$GW_PID" | sort -n | tr '\n' ' ')
	if [ "$NOW" = "$WPIDS" ]; then SAME_PIDS=yes; else SAME_PIDS=no; fi
	HEALTH=$(curl -s -m 2 "http://127.0.0.1:$GW_PORT/health" || echo unreachable)
}

# The main scenario: nginx's canned answers, then the cache.
main_cells() {
	start_nginx
	write_config ""
	start_gateway
	echo "bench: nginx $NGX_VERSION on :$NGX_PLAIN/:$NGX_STREAM," \
	    "Portkey ${PK_VERSION:-(none)} on :${PK_PORT:-}, Sluice on :$GW_PORT with" \
	    "$WORKERS workers; ${DURATION} s per cell after ${WARMUP} s warm-up"
	snapshot_before
	: >"$TMP/raw.jsonl"
	run_cells
	conv_cells
	LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
	if [ "$GW_DIED" = no ]; then
		snapshot_after
		stop_gateway
		cache_cells
	else
		SHUTDOWN="gateway had died" HEALTH=unreachable SAME_PIDS=no
	fi
	NGX_SERVED=$(nginx_served)
}

main() {
	STAMP=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
	GW_DIED=no PACED_DIED=no
	has main || has paced || has store ||
	    die "BENCH_SCENARIOS='$SCENARIOS': want main, paced, store or some"
	raise_nofile
	if has main || has paced; then
		start_portkey
		write_bodies
	fi
	! has main || main_cells
	! has paced || paced_cells
	! has store || store_cells
	mkdir -p "$(dirname "$OUT")"
	if has main; then
		report >"$TMP/results.md"
		cp "$TMP/results.md" "$OUT"
	else
		if has paced; then
			paced_section >"$TMP/paced.md"
			paced_splice "$TMP/paced.md" "$OUT"
		fi
		if has store; then
			store_section >"$TMP/store.md"
			paced_splice "$TMP/store.md" "$OUT" store
		fi
	fi
	echo
	cat "$OUT"
	echo
	echo "bench: wrote $OUT; gateway logs in $O/bench/"
	errs=$(cat "$TMP"/[rp].*.sluice.* "$TMP"/s.* 2>/dev/null |
	    sed -n 's/.*"errors":\([-0-9]*\).*/\1/p' |
	    awk '{ if ($1 != 0) bad = 1 } END { print bad + 0 }')
	if [ "$GW_DIED" = yes ] || [ "$PACED_DIED" = yes ] || [ "$errs" -ne 0 ] ||
	    [ -n "${ST_DIED:-}" ]; then
		echo "bench: the gateway failed requests or died; see $OUT" >&2
		exit 1
	fi
}

main
