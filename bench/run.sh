#!/bin/sh
# run.sh - benchmark the gateway against mock-llm with loadgen and write bench/RESULTS.md.
#
# Usage: bench/run.sh [BUILD_DIR]          (make bench runs: bench/run.sh build)
# Environment: BENCH_DURATION (s, default 5), BENCH_WARMUP (s, 1),
# BENCH_CLIENTS ("1 16 64"), BENCH_WORKERS (64), BENCH_CACHE_CLIENTS ("1 16"),
# BENCH_OUT (bench/RESULTS.md).
set -eu

cd "$(dirname "$0")/.."
O=${1:-build}
DURATION=${BENCH_DURATION:-5}
WARMUP=${BENCH_WARMUP:-1}
CLIENTS=${BENCH_CLIENTS:-"1 16 64"}
WORKERS=${BENCH_WORKERS:-64}
CACHE_CLIENTS=${BENCH_CACHE_CLIENTS:-"1 16"}
OUT=${BENCH_OUT:-bench/RESULTS.md}
TIMEOUT=10			# per request, seconds
GATEWAY=$O/sluice-gateway
MOCK=$O/tests/mock-llm
LOADGEN=$O/bench/loadgen
REPLY="The capital of France is Paris, a city known for its museums, its food, its river and the Eiffel Tower."

die() {
	echo "run.sh: $*" >&2
	exit 1
}

for b in "$GATEWAY" "$MOCK" "$LOADGEN" "$O/sluice-worker"; do
	[ -x "$b" ] || die "$b missing; run make bench"
done

TMP=$(mktemp -d /tmp/sluice-bench.XXXXXX)
MOCK_PID=
GW_PID=
LG_PID=
WORKER_PIDS=

# True while pid is a live process (not gone, not a zombie).
alive() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] &&
	    ! grep -q ') Z ' "/proc/$1/stat" 2>/dev/null
}

# Pids whose parent is $1, from /proc/*/stat (comm may hold spaces).
children() {
	for st in /proc/[0-9]*/stat; do
		line=$(cat "$st" 2>/dev/null) || continue
		rest=${line##*) }
		# shellcheck disable=SC2086
		set -- "$1" $rest
		[ "$2" != Z ] && [ "$3" = "$1" ] && { pid=${st#/proc/}; echo "${pid%/stat}"; }
	done
	return 0
}

# Wait up to $2 tenths of a second for pid $1 to end.
wait_gone() {
	n=0
	while alive "$1" && [ "$n" -lt "$2" ]; do
		sleep 0.1
		n=$((n + 1))
	done
	! alive "$1"
}

# Stop one process we started: SIGTERM, then SIGKILL after 10 s.
stop_pid() {
	alive "$1" || return 0
	kill -TERM "$1" 2>/dev/null || true
	wait_gone "$1" 100 || kill -KILL "$1" 2>/dev/null || true
}

cleanup() {
	set +e
	stop_pid "$LG_PID"
	if alive "$GW_PID"; then
		WORKER_PIDS="$WORKER_PIDS $(children "$GW_PID")"
		stop_pid "$GW_PID"
	fi
	for w in $WORKER_PIDS; do
		grep -q sluice-worker "/proc/$w/cmdline" 2>/dev/null &&
		    kill -KILL "$w" 2>/dev/null
	done
	stop_pid "$MOCK_PID"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Value of key $2 in the one-line JSON object $1 (numbers and booleans);
# "-" when missing.
jget() {
	v=$(printf '%s\n' "$1" | sed -n "s/.*\"$2\":\\([^,}]*\\).*/\\1/p")
	echo "${v:--}"
}

# Wait up to 10 s for a line matching $2 in file $1; print the match.
wait_line() {
	n=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		[ "$n" -lt 100 ] || return 1
		sleep 0.1
		n=$((n + 1))
	done
	grep -m1 "$2" "$1"
}

start_mock() {
	"$MOCK" --listen 127.0.0.1:0 --quiet >"$TMP/mock.out" 2>"$TMP/mock.err" &
	MOCK_PID=$!
	line=$(wait_line "$TMP/mock.out" '^mock-llm listening on ') ||
	    die "mock-llm did not start: $(cat "$TMP/mock.err")"
	MOCK_PORT=${line##*:}
}

# A config folder like tests/it/harness.c it_config(): user "bench" whose
# custom workflow is one Standard node on endpoint "Mock" (the mock).
write_config() {
	d=$TMP/config
	mkdir -p "$d/Users" "$d/Endpoints/bench" "$d/ApiTypes" \
	    "$d/Presets/OpenAI/bench" "$d/Workflows/bench" "$TMP/state"
	printf '{"min_workers": %s, "max_workers": %s}\n' \
	    "$WORKERS" "$WORKERS" >"$d/sluice.json"
	echo '{"currentUser": "bench"}' >"$d/Users/_current-user.json"
	echo '{"customWorkflowOverride": true, "customWorkflow": "Main",
 "chatCompleteAddUserAssistant": false,
 "chatCompletionAddMissingAssistantGenerator": false,
 "endpointConfigsSubDirectory": "bench", "connectTimeoutInSeconds": 2}' \
	    >"$d/Users/bench.json"
	printf '{"endpoint": "http://127.0.0.1:%s", "apiTypeConfigFileName": "Open-AI-API", "modelNameToSendToAPI": "mock-model", "promptTemplate": null, "maxContextTokenSize": 4096}\n' \
	    "$MOCK_PORT" >"$d/Endpoints/bench/Mock.json"
	echo '{"type": "openAIChatCompletion", "presetType": "OpenAI",
 "maxNewTokensPropertyName": "max_tokens", "streamPropertyName": "stream"}' \
	    >"$d/ApiTypes/Open-AI-API.json"
	echo '{"temperature": 0.5}' >"$d/Presets/OpenAI/bench/Mock.json"
	echo '{"nodes": [{"type": "Standard", "endpointName": "Mock",
 "preset": "Mock", "systemPrompt": "{chat_system_prompt}", "prompt": "",
 "lastMessagesToSendInsteadOfPrompt": 20, "maxResponseSizeInTokens": 300}]}' \
	    >"$d/Workflows/bench/Main.json"
}

write_bodies() {
	msgs="\"messages\": [{\"role\": \"system\", \"content\": \"You are a concise, helpful assistant. Answer in one sentence.\"}, {\"role\": \"user\", \"content\": \"What is the capital of France, and what is it known for?\\n#mock {\\\"text\\\": \\\"$REPLY\\\", \\\"delay_ms\\\": 0}\"}]"
	printf '{"model": "sluice", "max_tokens": 64, %s}\n' "$msgs" \
	    >"$TMP/body.json"
	printf '{"model": "sluice", "max_tokens": 64, "stream": true, %s}\n' \
	    "$msgs" >"$TMP/body-stream.json"
}

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
	wait_line "$TMP/gateway.log" 'ready' >/dev/null ||
	    die "no worker became ready: $(tail -5 "$TMP/gateway.log")"
	n=0
	while [ "$(idle_workers)" -lt "$WORKERS" ]; do
		[ "$n" -lt 150 ] || die "only $(idle_workers)/$WORKERS workers idle after 15 s"
		sleep 0.1
		n=$((n + 1))
	done
}

# Field $2 (VmRSS, RssAnon) of /proc/$1/status in kB (0 when gone).
rss_kb() {
	v=$(sed -n "s/^$2:[[:space:]]*\\([0-9]*\\) kB/\\1/p" "/proc/$1/status" 2>/dev/null || true)
	echo "${v:-0}"
}

# utime + stime of pid $1, in clock ticks.
cpu_ticks() {
	line=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	# shellcheck disable=SC2086
	set -- ${line##*) }
	echo $((${12} + ${13}))
}

# "count min median max total" of the workers' field $1 in kB.
worker_rss() {
	for w in $(children "$GW_PID"); do rss_kb "$w" "$1"; done | sort -n |
	    awk '{ v[NR] = $1; t += $1 }
		END { if (NR == 0) { print "0 0 0 0 0"; exit }
		      printf "%d %d %d %d %d\n", NR, v[1], v[int((NR + 1) / 2)], v[NR], t }'
}

worker_cpu() {
	t=0
	for w in $(children "$GW_PID"); do t=$((t + $(cpu_ticks "$w"))); done
	echo "$t"
}

# One loadgen run: target (direct|gateway), mode (plain|stream), clients.
cell() {
	if [ "$1" = direct ]; then port=$MOCK_PORT; else port=$GW_PORT; fi
	if [ "$2" = stream ]; then body=$TMP/body-stream.json; flag=--stream
	else body=$TMP/body.json; flag=; fi
	# In the background so that a signal stops the run at once.
	# shellcheck disable=SC2086
	"$LOADGEN" --url "http://127.0.0.1:$port/v1/chat/completions" \
	    --body-file "$body" --concurrency "$3" --duration "$DURATION" \
	    --warmup "$WARMUP" --timeout "$TIMEOUT" $flag >"$TMP/lg.out" &
	LG_PID=$!
	rc=0
	wait "$LG_PID" || rc=$?
	LG_PID=
	r=$(cat "$TMP/lg.out")
	[ "$rc" -eq 0 ] && [ -n "$r" ] ||
	    r="{\"count\":0,\"errors\":-1,\"first_error\":\"loadgen exit status $rc\"}"
	echo "$r" >"$TMP/r.$2.$1.$3"
	echo "$r" >>"$TMP/raw.jsonl"
	printf '  %-6s %-7s %2s clients: %8s req/s  p50 %8s ms  p99 %8s ms  errors %s\n' \
	    "$2" "$1" "$3" "$(jget "$r" rps)" "$(jget "$r" p50_ms)" \
	    "$(jget "$r" p99_ms)" "$(jget "$r" errors)"
	if [ "$1" = gateway ] && ! alive "$GW_PID"; then
		echo "run.sh: the gateway died during this cell" >&2
		GW_DIED=yes
	fi
}

run_cells() {
	for mode in plain stream; do
		for c in $CLIENTS; do
			cell direct "$mode" "$c"
			[ "$GW_DIED" = yes ] || cell gateway "$mode" "$c"
		done
	done
}

# The response cache: a gateway with it on, the same body again and
# again. The preset's temperature decides: 0 is cacheable (every
# request after the first is a hit), 0.5 is not (every one a miss, a
# backend call). Results in $TMP/c.KIND.MODE.CLIENTS.
cache_cells() {
	d=$TMP/config
	printf '{"min_workers": %s, "max_workers": %s, "cache": {"enabled": true, "max_entries": 1000, "ttl_minutes": 60, "cacheable_temperature": 0.0}}\n' \
	    "$WORKERS" "$WORKERS" >"$d/sluice.json"
	start_gateway
	for kind in miss hit; do
		if [ "$kind" = hit ]; then t=0; else t=0.5; fi
		echo "{\"temperature\": $t}" >"$d/Presets/OpenAI/bench/Mock.json"
		for mode in plain stream; do
			for c in $CACHE_CLIENTS; do
				cell gateway "$mode" "$c"
				mv "$TMP/r.$mode.gateway.$c" "$TMP/c.$kind.$mode.$c"
			done
		done
	done
	CACHE_HDR=$(curl -s -o /dev/null -D - -m 5 -H 'Content-Type: application/json' \
	    --data-binary "@$TMP/body.json" "http://127.0.0.1:$GW_PORT/v1/chat/completions" |
	    tr -d '\r' | sed -n 's/^X-Sluice-Cache: //p')
	CACHE_METRICS=$(curl -s -m 2 "http://127.0.0.1:$GW_PORT/metrics" |
	    grep '^sluice_cache_' | tr '\n' ' ')
	WORKER_PIDS=$(children "$GW_PID")
	stop_pid "$GW_PID"
	GW_PID=
}

cache_table() {
	echo "| mode | clients | misses req/s | misses p50 / p99 ms | hits req/s | hits p50 / p99 ms | hits TTFB p50 / p99 ms | errors (misses / hits) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for mode in plain stream; do
		for c in $CACHE_CLIENTS; do
			m=$(cat "$TMP/c.miss.$mode.$c" 2>/dev/null || echo '{}')
			h=$(cat "$TMP/c.hit.$mode.$c" 2>/dev/null || echo '{}')
			echo "| $mode | $c | $(fmt_rps "$(jget "$m" rps)") | $(jget "$m" p50_ms) / $(jget "$m" p99_ms) | $(fmt_rps "$(jget "$h" rps)") | $(jget "$h" p50_ms) / $(jget "$h" p99_ms) | $(jget "$h" ttfb_p50_ms) / $(jget "$h" ttfb_p99_ms) | $(jget "$m" errors) / $(jget "$h" errors) |"
		done
	done
}

cache_section() {
	echo "## Response cache: hits against misses"
	echo
	echo 'A second gateway (same pool) with `"cache": {"enabled": true,'
	echo '"cacheable_temperature": 0.0}`, the same request body again and'
	echo 'again. Misses: the preset'"'"'s temperature is 0.5, so no call may be'
	echo 'cached and each request goes to the mock. Hits: temperature 0, so'
	echo 'every request after the first is answered from the shared database'
	echo '(the answer replayed through the cleaner, no backend call). The mock'
	echo 'answers in microseconds, so a miss here costs only a local HTTP'
	echo 'call; against a real LLM a miss takes seconds and a hit stays at'
	echo 'these figures.'
	echo
	cache_table
	echo
	echo "- \`X-Sluice-Cache\` of one more request afterwards: \`${CACHE_HDR:-none}\`."
	echo "- Cache metrics afterwards: \`${CACHE_METRICS:-none}\`"
}

# a - b with three decimals (for the added-latency columns).
sub() {
	if [ "$1" = - ] || [ "$2" = - ]; then echo -; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f", a - b }'
}

fmt_rps() {
	if [ "$1" = - ]; then echo -; return; fi
	awk -v a="$1" 'BEGIN { printf "%.0f", a }'
}

table_plain() {
	echo "| clients | direct req/s | direct p50 / p99 ms | gateway req/s | gateway p50 / p99 ms | gateway max ms | added p50 / p99 ms | gateway errors |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
	for c in $CLIENTS; do
		d=$(cat "$TMP/r.plain.direct.$c")
		g=$(cat "$TMP/r.plain.gateway.$c" 2>/dev/null || echo '{}')
		echo "| $c | $(fmt_rps "$(jget "$d" rps)") | $(jget "$d" p50_ms) / $(jget "$d" p99_ms) | $(fmt_rps "$(jget "$g" rps)") | $(jget "$g" p50_ms) / $(jget "$g" p99_ms) | $(jget "$g" max_ms) | $(sub "$(jget "$g" p50_ms)" "$(jget "$d" p50_ms)") / $(sub "$(jget "$g" p99_ms)" "$(jget "$d" p99_ms)") | $(jget "$g" errors) |"
	done
}

table_stream() {
	echo "| clients | direct streams/s | direct TTFB p50 / p99 ms | direct full p50 / p99 ms | gateway streams/s | gateway TTFB p50 / p99 ms | gateway full p50 / p99 ms | added TTFB p50 / p99 ms | added full p50 / p99 ms | gateway errors |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for c in $CLIENTS; do
		d=$(cat "$TMP/r.stream.direct.$c")
		g=$(cat "$TMP/r.stream.gateway.$c" 2>/dev/null || echo '{}')
		echo "| $c | $(fmt_rps "$(jget "$d" rps)") | $(jget "$d" ttfb_p50_ms) / $(jget "$d" ttfb_p99_ms) | $(jget "$d" p50_ms) / $(jget "$d" p99_ms) | $(fmt_rps "$(jget "$g" rps)") | $(jget "$g" ttfb_p50_ms) / $(jget "$g" ttfb_p99_ms) | $(jget "$g" p50_ms) / $(jget "$g" p99_ms) | $(sub "$(jget "$g" ttfb_p50_ms)" "$(jget "$d" ttfb_p50_ms)") / $(sub "$(jget "$g" ttfb_p99_ms)" "$(jget "$d" ttfb_p99_ms)") | $(sub "$(jget "$g" p50_ms)" "$(jget "$d" p50_ms)") / $(sub "$(jget "$g" p99_ms)" "$(jget "$d" p99_ms)") | $(jget "$g" errors) |"
	done
}

# Seconds of CPU from clock ticks.
ticks_s() {
	awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }'
}

mib() {
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

# "name count" of each worker state in /admin/workers.
worker_states() {
	curl -s -m 2 "http://127.0.0.1:$GW_PORT/admin/workers" |
	    grep -o '"state":"[a-z_]*"' | sed 's/"state":"\(.*\)"/\1/' |
	    sort | uniq -c | awk '{ printf "%s%s %s", s, $2, $1; s = ", " }'
}

snapshot_before() {
	GW_RSS0="$(rss_kb "$GW_PID" VmRSS) $(rss_kb "$GW_PID" RssAnon)"
	WRSS0=$(worker_rss VmRSS)
	WANON0=$(worker_rss RssAnon)
	GW_CPU0=$(cpu_ticks "$GW_PID")
	W_CPU0=$(worker_cpu)
	MOCK_CPU0=$(cpu_ticks "$MOCK_PID")
	PIDS0=$(children "$GW_PID" | sort | tr '\n' ' ')
}

snapshot_after() {
	GW_RSS1="$(rss_kb "$GW_PID" VmRSS) $(rss_kb "$GW_PID" RssAnon)"
	WRSS1=$(worker_rss VmRSS)
	WANON1=$(worker_rss RssAnon)
	GW_CPU=$(($(cpu_ticks "$GW_PID") - GW_CPU0))
	W_CPU=$(($(worker_cpu) - W_CPU0))
	MOCK_CPU=$(($(cpu_ticks "$MOCK_PID") - MOCK_CPU0))
	PIDS1=$(children "$GW_PID" | sort | tr '\n' ' ')
	HEALTH=$(curl -s -m 2 "http://127.0.0.1:$GW_PORT/health" || echo unreachable)
	STATES=$(worker_states || true)
	if [ "$PIDS0" = "$PIDS1" ]; then SAME_PIDS=yes; else SAME_PIDS=no; fi
}

# SIGTERM the gateway and time its drain; sets SHUTDOWN.
stop_gateway() {
	WORKER_PIDS=$(children "$GW_PID")
	t0=$(date +%s%N)
	kill -TERM "$GW_PID"
	if wait_gone "$GW_PID" 150; then
		rc=0
		wait "$GW_PID" || rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		SHUTDOWN="exit status $rc after SIGTERM, in $ms ms"
	else
		SHUTDOWN="still running 15 s after SIGTERM (killed)"
		kill -KILL "$GW_PID" 2>/dev/null || true
	fi
	GW_PID=
	left=0
	for w in $WORKER_PIDS; do
		grep -q sluice-worker "/proc/$w/cmdline" 2>/dev/null && left=$((left + 1))
	done
	SHUTDOWN="$SHUTDOWN; workers left behind: $left"
	mkdir -p "$O/bench"
	cp "$TMP/gateway.log" "$O/bench/gateway.log"
}

# The command that produced the results, with any BENCH_* overrides.
command_line() {
	env=
	for v in BENCH_DURATION BENCH_WARMUP BENCH_CLIENTS BENCH_WORKERS \
	    BENCH_CACHE_CLIENTS; do
		eval "x=\${$v:-}"
		[ -z "$x" ] || env="$env$v='$x' "
	done
	if [ -z "${MAKELEVEL:-}" ]; then
		echo "${env}bench/run.sh $O"
	elif [ "$O" = build ]; then
		echo "${env}make bench"
	else
		echo "${env}make bench O=$O"
	fi
}

header() {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	dirty=$(git status --porcelain 2>/dev/null | wc -l)
	echo "# Sluice benchmark results"
	echo
	echo "Generated by \`bench/run.sh\`; do not edit by hand."
	echo
	echo "- Date: $STAMP"
	echo "- Command: \`$(command_line)\` (from the repository root)"
	echo "- Commit: $commit$( [ "$dirty" -eq 0 ] || echo " plus uncommitted changes ($dirty path(s) differ from HEAD; build id $(git describe --always --dirty 2>/dev/null))")"
	echo "- Machine: $(nproc) CPUs ($cpu), $mem RAM, kernel $(uname -srm)"
	echo "- libcurl: $(curl --version 2>/dev/null | head -1 | cut -d' ' -f1-3)"
	echo "- Load average before / after: $LOAD0 / $LOAD1"
	echo "- Settings: ${DURATION} s measured per cell after ${WARMUP} s warm-up;" \
	    "clients $CLIENTS; closed loop (each client sends its next request" \
	    "as soon as the previous one ends), keep-alive, one connection per client;" \
	    "per-request timeout ${TIMEOUT} s."
	echo "- Gateway pool: \`{\"min_workers\": $WORKERS, \"max_workers\": $WORKERS}\`" \
	    "in sluice.json, everything else default: as many warm workers as" \
	    "the largest client count, so the pool is not the bottleneck and no" \
	    "request waits for a spawn (the benchmark waits until /health shows" \
	    "$WORKERS idle workers before it starts)."
	echo "- Request: $(wc -c <"$TMP/body.json") bytes, a system and a user" \
	    "message (\`model\`, \`max_tokens\`; \`stream\` for streams). The" \
	    "user message's \`#mock\` line makes the mock reply with 20 words" \
	    "(${#REPLY} characters), streamed as one SSE event per word with" \
	    "\`delay_ms\` 0. Direct = the same body to mock-llm's own" \
	    "/v1/chat/completions."
}

# One row of the memory table: label, gateway "rss anon", workers'
# VmRSS and RssAnon as "count min median max total".
memory_row() {
	# shellcheck disable=SC2086
	set -- "$1" $2 $3 $4
	# $1 label, $2 $3 gateway, $4-$8 worker VmRSS, $9-${13} RssAnon
	echo "| $1 | $(mib "$2") / $(mib "$3") | $4 | $(mib "$5") / $(mib "$6") / $(mib "$7") | $(mib "${10}") / $(mib "${11}") / $(mib "${12}") | $(mib "$8") / $(mib "${13}") |"
}

memory_table() {
	echo "| | gateway VmRSS / RssAnon MiB | workers | per-worker VmRSS min / median / max MiB | per-worker RssAnon min / median / max MiB | all workers VmRSS / RssAnon MiB |"
	echo "|---|---:|---:|---:|---:|---:|"
	memory_row "before the load" "$GW_RSS0" "$WRSS0" "$WANON0"
	memory_row "after the load" "$GW_RSS1" "$WRSS1" "$WANON1"
	echo
	echo "VmRSS counts the shared libraries (libcurl, OpenSSL, libc, ...) in" \
	    "every process, so the VmRSS sum over-counts; RssAnon is each" \
	    "process's private heap and stack, the memory one more worker costs."
}

# Warnings and errors the gateway logged, at most 20 lines.
log_problems() {
	n=$(grep -c -E ' (warn|error): ' "$TMP/gateway.log" || true)
	echo "Gateway log: $(wc -l <"$TMP/gateway.log") lines, $n at warn or error level."
	if [ "$n" -gt 0 ]; then
		echo
		echo '```'
		grep -E ' (warn|error): ' "$TMP/gateway.log" | head -20
		echo '```'
	fi
}

# Sum of every request loadgen sent (all outcomes, warm-up included) in
# the result files $@.
sent() {
	cat "$@" | sed 's/[{}]//g' | tr ',' '\n' |
	    awk -F: '$1 ~ /^"(count|errors|warmup_count|warmup_errors)"$/ { t += $2 }
		END { printf "%d", t }'
}

# Microseconds of CPU per request: ticks $1 over $2 requests.
us_per() {
	awk -v t="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" \
	    'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e6 / n; else print "?" }'
}

observations() {
	errs=$(cat "$TMP"/r.*.gateway.* | sed -n 's/.*"errors":\([-0-9]*\).*/\1/p' |
	    awk '{ t += $1 } END { print t + 0 }')
	echo "## Health after the load"
	echo
	echo "- Gateway request errors over all cells: $errs" \
	    "(non-2xx, transport errors, timeouts of ${TIMEOUT} s, streams" \
	    "without \`data: [DONE]\` or with an error event)."
	echo "- Gateway died during the run: ${GW_DIED}."
	echo "- \`/health\` after the load: \`$HEALTH\`"
	echo "- Worker states after the load: ${STATES:-unknown}."
	echo "- Same worker pids before and after the load: $SAME_PIDS."
	echo "- mock-llm \`/mock/stats\` after everything: \`$MOCK_STATS\`;" \
	    "loadgen sent $(sent "$TMP"/r.*.direct.*) requests straight to the" \
	    "mock and $(sent "$TMP"/r.*.gateway.*) to the gateway (warm-ups" \
	    "included), so the mock should count their sum," \
	    "$(sent "$TMP"/r.*), when every gateway request made exactly one" \
	    "backend call."
	echo "- Shutdown: $SHUTDOWN."
	echo "- $(log_problems)"
}

notes() {
	cat <<EON
## What limits these numbers

- Everything runs on one $(nproc)-CPU machine: loadgen, mock-llm, the
  gateway and its workers share the same cores, so at 16 and 64 clients
  the numbers measure CPU contention as much as the gateway. Added
  latency is the gateway path minus the direct path measured on the same
  machine minutes apart, not an isolated cost.
- CPU time used over the whole run: gateway $(ticks_s "$GW_CPU") s,
  all workers $(ticks_s "$W_CPU") s, mock-llm $(ticks_s "$MOCK_CPU") s
  (the mock's includes the direct cells). Per gateway request (warm-ups
  included) that is about $(us_per "$GW_CPU" "$(sent "$TMP"/r.*.gateway.*)") us
  in the gateway and $(us_per "$W_CPU" "$(sent "$TMP"/r.*.gateway.*)") us
  in the workers together.
- The mock answers at once, so this is the gateway's overhead per
  request, not an LLM's latency; a real backend adds its own seconds.
- A gateway request goes client -> gateway -> worker (socketpair,
  MessagePack) -> libcurl -> mock and back, with one worker busy per
  request; the direct path is client -> mock only.
- Latency is measured by loadgen with CLOCK_MONOTONIC from handing the
  request to libcurl until libcurl reports it done; TTFB is the first
  body byte (for the gateway, the SSE role chunk). Percentiles are
  nearest-rank over every successful request of the measured window;
  requests/s counts successes only.
- Other processes on the machine (load averages above) add noise;
  differences of a few tenths of a millisecond are within it. Each cell
  is one ${DURATION} s sample with no error bar: on the shared 2-CPU
  development VM, repeated runs of this script differed by up to ~40%
  in requests/s at 16 and 64 clients. Trust the shape over the digits,
  and compare two builds only on a quiet machine.
EON
}

# The response cleaner alone (bench/cleanbench.c): every stage on.
clean_section() {
	line=$("$O/bench/cleanbench" 2>/dev/null || echo '{}')
	echo "## Response cleaner (bench/cleanbench.c, in-process)"
	echo
	echo "Every stage on (think tags, reasoning tags, gpt-oss channels, tool"
	echo "markers, special tokens, prefixes, trim) over $(jget "$line" bytes)"
	echo "bytes of text fed in pieces of the given size. \"Held\" is what the"
	echo "first feed of plain text kept back: 0 means plain text reaches the"
	echo "client in the same feed, so the cleaner adds nothing to the time to"
	echo "the first byte."
	echo
	echo "| text | 1 KiB pieces MB/s | 16-byte pieces MB/s |"
	echo "|---|---:|---:|"
	echo "| plain prose | $(jget "$line" plain_1k_mbps) | $(jget "$line" plain_16b_mbps) |"
	echo "| dense markup | $(jget "$line" dense_1k_mbps) | $(jget "$line" dense_16b_mbps) |"
	echo
	echo "Held after the first plain feed: $(jget "$line" first_feed_held_bytes) bytes."
}

report() {
	header
	echo
	echo "## Non-streaming requests"
	echo
	table_plain
	echo
	echo "## Streaming requests (SSE)"
	echo
	echo "TTFB = time to the first body byte; full = until the stream ended."
	echo
	table_stream
	echo
	echo "## Memory (/proc/PID/status; the workers are the gateway's children)"
	echo
	memory_table
	echo
	clean_section
	echo
	cache_section
	echo
	observations
	echo
	notes
	echo
	echo "## Raw loadgen output"
	echo
	echo "In run order: for each mode, for each client count, direct then gateway;"
	echo "then the cache cells (misses, then hits; each mode, each client count)."
	echo
	echo '```'
	cat "$TMP/raw.jsonl"
	echo '```'
}

main() {
	STAMP=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
	GW_DIED=no
	start_mock
	write_config
	write_bodies
	start_gateway
	echo "bench: mock on :$MOCK_PORT, gateway on :$GW_PORT with $WORKERS workers;" \
	    "${DURATION} s per cell after ${WARMUP} s warm-up"
	snapshot_before
	: >"$TMP/raw.jsonl"
	run_cells
	LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
	MOCK_STATS=$(curl -s -m 2 "http://127.0.0.1:$MOCK_PORT/mock/stats" || echo unreachable)
	if [ "$GW_DIED" = no ]; then
		snapshot_after
		stop_gateway
		cache_cells
	else
		GW_RSS1="0 0" WRSS1="0 0 0 0 0" WANON1="0 0 0 0 0" GW_CPU=0 W_CPU=0 MOCK_CPU=0
		HEALTH=unreachable STATES='' SAME_PIDS=no
		SHUTDOWN="gateway had died"
		mkdir -p "$O/bench"
		cp "$TMP/gateway.log" "$O/bench/gateway.log"
	fi
	report >"$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
	echo
	cat "$OUT"
	echo
	echo "bench: wrote $OUT; gateway log in $O/bench/gateway.log"
	errs=$(cat "$TMP"/r.*.gateway.* "$TMP"/c.* 2>/dev/null |
	    sed -n 's/.*"errors":\([-0-9]*\).*/\1/p' |
	    awk '{ if ($1 != 0) bad = 1 } END { print bad + 0 }')
	if [ "$GW_DIED" = yes ] || [ "$errs" -ne 0 ]; then
		echo "bench: the gateway failed requests or died; see $OUT" >&2
		exit 1
	fi
}

main
