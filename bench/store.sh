# store.sh - the bench's store scenario: memory nodes on SQLite against PostgreSQL, one gateway against two behind HAProxy (sourced by bench/run.sh).
#
# Uses from run.sh: TMP, O, REPLY, DURATION, WARMUP, TIMEOUT, LOADGEN,
# GATEWAY, and lib.sh. bench/README.md ("The store scenario") says what
# it measures.

if [ -n "${BENCH_SMOKE:-}" ]; then
	ST_CLIENTS=${BENCH_STORE_CLIENTS:-"1 4"}
else
	ST_CLIENTS=${BENCH_STORE_CLIENTS:-"1 4 16"}
fi
ST_STORES=${BENCH_STORE_BACKENDS:-"sqlite postgresql"}
ST_TOPOS=${BENCH_STORE_TOPOLOGIES:-"one haproxy1 haproxy2"}
ST_WORKERS=0
for c in $ST_CLIENTS; do [ "$c" -gt "$ST_WORKERS" ] && ST_WORKERS=$c; done
ST_WORKERS=${BENCH_STORE_WORKERS:-$ST_WORKERS}
ST_MOCK_PID='' ST_PG_PID='' ST_HAP_PID='' ST_A_PID='' ST_B_PID=''
ST_PG_SKIP='' ST_HAP_SKIP='' ST_PG_URL='' ST_PG_DIR='' ST_SEQ=0
ST_SLUICE_PIDS=''

# Stop what the scenario started (run.sh's cleanup calls this).
store_cleanup() {
	stop_pid "$ST_HAP_PID"
	stop_pid "$ST_B_PID"
	stop_pid "$ST_A_PID"
	stop_pid "$ST_MOCK_PID"
	stop_pid "$ST_PG_PID"
	ST_HAP_PID='' ST_B_PID='' ST_A_PID='' ST_MOCK_PID='' ST_PG_PID=''
}

# Say loudly that part $1 of the scenario is skipped, and why ($2).
st_skip() {
	echo "bench: *** store scenario: $1 SKIPPED: $2" >&2
}

# The fast mock LLM; sets ST_MOCK_PORT.
st_mock() {
	"$O/tests/mock-llm" --quiet --listen 127.0.0.1:0 --text "$REPLY" \
	    >"$TMP/smock.out" 2>"$TMP/smock.log" &
	ST_MOCK_PID=$!
	line=$(wait_line "$TMP/smock.out" 'listening on 127\.0\.0\.1:') ||
	    die "mock-llm did not start: $(cat "$TMP/smock.log")"
	ST_MOCK_PORT=${line##*:}
}

# A throwaway PostgreSQL cluster (bench/pgrun: tests/unit/pgtmp.c);
# sets ST_PG_URL, or ST_PG_SKIP with the reason.
st_postgres() {
	if [ ! -x "$O/bench/pgrun" ]; then
		ST_PG_SKIP="$O/bench/pgrun is missing (make bench builds it)"
		return 0
	fi
	"$O/bench/pgrun" >"$TMP/pgrun.out" 2>"$TMP/pgrun.log" &
	ST_PG_PID=$!
	n=0
	while ! grep -q '^url ' "$TMP/pgrun.out" 2>/dev/null; do
		if ! alive "$ST_PG_PID" || [ "$n" -ge 1200 ]; then
			ST_PG_SKIP="no throwaway cluster: $(tr '\n' ' ' \
			    <"$TMP/pgrun.log" | sed -e 's/\*\*\* bench: //' \
			    -e 's/ *$//' | cut -c1-400)"
			stop_pid "$ST_PG_PID"
			ST_PG_PID=''
			return 0
		fi
		sleep 0.1
		n=$((n + 1))
	done
	ST_PG_URL=$(sed -n 's/^url //p' "$TMP/pgrun.out")
	ST_PG_DIR=$(printf '%s' "$ST_PG_URL" | sed -n 's/.*[?&]host=\([^&]*\).*/\1/p')
	ST_PG_VERSION=$(psql --version 2>/dev/null | sed 's/^psql (PostgreSQL) //')
}

# HAProxy's binary (BENCH_HAPROXY, else where tests/it/check_haproxy.c
# looks), or nothing.
st_haproxy_bin() {
	if [ -n "${BENCH_HAPROXY:-}" ]; then
		[ ! -x "$BENCH_HAPROXY" ] || echo "$BENCH_HAPROXY"
		return 0
	fi
	for b in /usr/sbin/haproxy /usr/local/sbin/haproxy /usr/bin/haproxy; do
		[ -x "$b" ] && { echo "$b"; return 0; }
	done
	command -v haproxy 2>/dev/null || true
}

# The config folder $1 for store $2: user "bench", the memory settings,
# the shared workflow "memory" (QualityMemory writes the discussion's
# file-style memories, GetCurrentMemoryFromFile reads them back, a
# Standard node answers with them in its system prompt), all on the
# mock.
st_config() {
	d=$1
	mkdir -p "$d/Users" "$d/Endpoints/bench" "$d/ApiTypes" \
	    "$d/Presets/OpenAI/bench" "$d/Workflows/bench" \
	    "$d/Workflows/_shared/memory"
	if [ "$2" = postgresql ]; then
		st=", \"store\": {\"url\": \"$ST_PG_URL\"}"
	else
		st=''
	fi
	printf '{"min_workers": %s, "max_workers": %s%s}\n' "$ST_WORKERS" \
	    "$ST_WORKERS" "$st" >"$d/sluice.json"
	echo '{"currentUser": "bench"}' >"$d/Users/_current-user.json"
	echo '{"customWorkflowOverride": true, "customWorkflow": "Main",
 "allowSharedWorkflows": true,
 "chatCompleteAddUserAssistant": false,
 "chatCompletionAddMissingAssistantGenerator": false,
 "endpointConfigsSubDirectory": "bench", "connectTimeoutInSeconds": 2,
 "discussionIdMemoryFileWorkflowSettings": "MemSettings"}' \
	    >"$d/Users/bench.json"
	printf '{"endpoint": "http://127.0.0.1:%s", "apiTypeConfigFileName": "Open-AI-API", "modelNameToSendToAPI": "bench-model", "promptTemplate": null, "maxContextTokenSize": 4096}\n' \
	    "$ST_MOCK_PORT" >"$d/Endpoints/bench/Mock.json"
	echo '{"type": "openAIChatCompletion", "presetType": "OpenAI",
 "maxNewTokensPropertyName": "max_tokens", "streamPropertyName": "stream"}' \
	    >"$d/ApiTypes/Open-AI-API.json"
	echo '{"temperature": 0.5}' >"$d/Presets/OpenAI/bench/Bench.json"
	# Chunks of 10 estimated tokens hold one message each; the last
	# two messages are held back: 5 messages make 3 memories.
	# (a heredoc: dash's echo would turn the \n into a newline)
	cat >"$d/Workflows/bench/MemSettings.json" <<'EOF'
{"endpointName": "Mock", "preset": "Bench",
 "maxResponseSizeInTokens": 100,
 "systemPrompt": "Memories so far: [Memory_file]",
 "prompt": "Summarise [TextChunk]\n#mock {\"echo\": true}",
 "chunkEstimatedTokenSize": 10, "maxMessagesBetweenChunks": 2,
 "lookbackStartTurn": 2}
EOF
	echo '{"nodes": [{"type": "QualityMemory"},
 {"type": "GetCurrentMemoryFromFile"},
 {"type": "Standard", "endpointName": "Mock", "preset": "Bench",
  "systemPrompt": "Memories: {agent2Output}", "prompt": "",
  "lastMessagesToSendInsteadOfPrompt": 20, "maxResponseSizeInTokens": 300}]}' \
	    >"$d/Workflows/_shared/memory/_DefaultWorkflow.json"
	cp "$d/Workflows/_shared/memory/_DefaultWorkflow.json" \
	    "$d/Workflows/bench/Main.json"
}

# The body of cell $1: a new discussion per request (loadgen --unique
# numbers the 10 @), five messages of about 11 estimated tokens.
st_body() {
	m=''
	for k in 1 2 3 4 5; do
		if [ $((k % 2)) -eq 1 ]; then r=user; else r=assistant; fi
		m="$m, {\"role\": \"$r\", \"content\": \"Msg $k alpha beta gamma delta epsilon zeta\"}"
	done
	printf '{"model": "memory", "max_tokens": 64, "messages": [{"role": "system", "content": "You are kind. [DiscussionId]%s-@@@@@@@@@@[/DiscussionId]"}%s]}\n' \
	    "$1" "$m" >"$TMP/body.store.json"
}

# Idle workers of the gateway on port $1 (0 when it does not answer).
st_idle() {
	h=$(curl -s -m 2 "http://127.0.0.1:$1/health" || true)
	v=$(printf '%s' "$h" | sed -n 's/.*"idle":\([0-9]*\).*/\1/p')
	echo "${v:-0}"
}

# Start a gateway on config folder $1, state folder $2, log $3 and wait
# until all its workers are idle; sets ST_PID and ST_PORT.
st_gateway() {
	"$GATEWAY" --config-dir "$1" --state-dir "$2" --listen 127.0.0.1:0 \
	    2>"$3" &
	ST_PID=$!
	line=$(wait_line "$3" 'listening on 127\.0\.0\.1:') ||
	    die "gateway did not start: $(tail -5 "$3")"
	ST_PORT=$(printf '%s' "$line" | sed 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/')
	n=0
	while [ "$(st_idle "$ST_PORT")" -lt "$ST_WORKERS" ]; do
		[ "$n" -lt $((300 + 2 * ST_WORKERS)) ] ||
		    die "only $(st_idle "$ST_PORT")/$ST_WORKERS workers idle in $3"
		sleep 0.1
		n=$((n + 1))
	done
}

# deploy/haproxy.cfg as shipped, its servers a and b on ports $1 and $2
# (the same port twice: one gateway behind it), its log in $3; sets
# ST_FRONT (its port).
st_haproxy() {
	ST_FRONT=$(free_port)
	(
		export SLUICE_FRONT="127.0.0.1:$ST_FRONT"
		export SLUICE_A="127.0.0.1:$1" SLUICE_B="127.0.0.1:$2"
		# not root: HAProxy cannot become user haproxy; it stays us
		if [ "$(id -u)" -ne 0 ]; then
			SLUICE_HAPROXY_USER=$(id -un)
			SLUICE_HAPROXY_GROUP=$(id -gn)
			export SLUICE_HAPROXY_USER SLUICE_HAPROXY_GROUP
		fi
		exec "$ST_HAPROXY" -db -f deploy/haproxy.cfg
	) >"$3" 2>&1 &
	ST_HAP_PID=$!
	n=0
	while [ "$(curl -s -o /dev/null -w '%{http_code}' -m 2 \
	    "http://127.0.0.1:$ST_FRONT/health" 2>/dev/null)" != 200 ]; do
		[ "$n" -lt 100 ] || die "HAProxy did not come up: $(tail -5 "$3")"
		sleep 0.1
		n=$((n + 1))
	done
}

# Memory rows in store $1 (SQLite in state folder $2), or "-".
st_rows() {
	if [ "$1" = postgresql ]; then
		v=$(psql "$ST_PG_URL" -Atc 'SELECT count(*) FROM memories' \
		    2>/dev/null || true)
	else
		v=$(python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
print(c.execute("SELECT count(*) FROM memories").fetchone()[0])' \
		    "$2/sluice.db" 2>/dev/null || true)
	fi
	echo "${v:--}"
}

# CPU ticks so far: "sluice postgresql haproxy" (the gateways and
# their workers; the PostgreSQL server and its backends; HAProxy).
st_cpu() {
	pg=''
	if [ -n "$ST_PG_DIR" ] && [ -r "$ST_PG_DIR/data/postmaster.pid" ]; then
		pm=$(head -1 "$ST_PG_DIR/data/postmaster.pid")
		pg="$pm $(children "$pm" | tr '\n' ' ')"
	fi
	# unquoted: no HAProxy is no pid (cpu_ticks "" would read /proc/stat)
	# shellcheck disable=SC2086
	echo "$(cpu_all $ST_SLUICE_PIDS) $(cpu_all $pg) $(cpu_all $ST_HAP_PID)"
}

# A first request through the gateway on port $1: it makes the store's
# schema (the row counts need the table) and must answer 200.
st_prime() {
	st_body prime
	sed 's/@@@@@@@@@@/0000000000/' "$TMP/body.store.json" >"$TMP/body.prime.json"
	code=$(curl -s -o "$TMP/prime.out" -w '%{http_code}' -m "$TIMEOUT" \
	    -H 'Content-Type: application/json' \
	    --data-binary "@$TMP/body.prime.json" \
	    "http://127.0.0.1:$1/v1/chat/completions" || true)
	[ "$code" = 200 ] ||
	    die "store scenario: the first request answered $code: $(cat "$TMP/prime.out")"
}

# One loadgen run: st_cell STORE TOPO CLIENTS PORT STATE. The result in
# $TMP/s.STORE.TOPO.CLIENTS, the memory rows it wrote in the same name
# with .rows appended.
st_cell() {
	ST_SEQ=$((ST_SEQ + 1))
	st_body "c$ST_SEQ"
	key=$1.$2.$3
	r0=$(st_rows "$1" "$5")
	cpu0=$(st_cpu)
	"$LOADGEN" --url "http://127.0.0.1:$4/v1/chat/completions" \
	    --body-file "$TMP/body.store.json" --unique @@@@@@@@@@ \
	    --concurrency "$3" --duration "$DURATION" --warmup "$WARMUP" \
	    --timeout "$TIMEOUT" >"$TMP/lg.out" &
	LG_PID=$!
	rc=0
	wait "$LG_PID" || rc=$?
	LG_PID=
	r=$(cat "$TMP/lg.out")
	[ "$rc" -eq 0 ] && [ -n "$r" ] ||
	    r="{\"count\":0,\"errors\":-1,\"first_error\":\"loadgen exit status $rc\"}"
	# shellcheck disable=SC2086,SC2046
	set -- "$@" $cpu0 $(st_cpu)
	echo "$(($9 - $6)) $((${10} - $7)) $((${11} - $8))" >"$TMP/s.$key.cpu"
	r1=$(st_rows "$1" "$5")
	echo "$r" >"$TMP/s.$key"
	if [ "$r0" = - ] || [ "$r1" = - ]; then
		echo - >"$TMP/s.$key.rows"
	else
		echo $((r1 - r0)) >"$TMP/s.$key.rows"
	fi
	echo "store $1 $2 $r" >>"$ST_RAW"
	printf '  store   %-10s %-8s %3s clients: %8s req/s  p50 %8s ms  p99 %8s ms  rows %s  errors %s\n' \
	    "$1" "$2" "$3" "$(jget "$r" rps)" "$(jget "$r" p50_ms)" \
	    "$(jget "$r" p99_ms)" "$(cat "$TMP/s.$key.rows")" "$(jget "$r" errors)"
}

# The cells of topology $2 on store $1 (state folder $3): one gateway
# straight, one behind HAProxy, two behind HAProxy.
st_topology() {
	case $2 in
	one)	port=$ST_A_PORT ;;
	haproxy1)
		st_haproxy "$ST_A_PORT" "$ST_A_PORT" "$TMP/haproxy.$1.$2.log"
		port=$ST_FRONT ;;
	haproxy2)
		if [ -z "$ST_B_PID" ]; then
			st_gateway "$TMP/sconf.$1" "$3" "$TMP/gw-b.$1.log"
			ST_B_PID=$ST_PID ST_B_PORT=$ST_PORT
			ST_SLUICE_PIDS="$ST_SLUICE_PIDS $ST_PID $(children "$ST_PID" | tr '\n' ' ')"
		fi
		st_haproxy "$ST_A_PORT" "$ST_B_PORT" "$TMP/haproxy.$1.$2.log"
		port=$ST_FRONT ;;
	esac
	for c in $ST_CLIENTS; do
		st_cell "$1" "$2" "$c" "$port" "$3"
	done
	stop_pid "$ST_HAP_PID"
	ST_HAP_PID=''
	[ "$2" = one ] || cp "$TMP/haproxy.$1.$2.log" "$O/bench/"
}

# Every topology on store $1, with fresh gateways and state folder.
st_store() {
	state=$TMP/sstate.$1
	mkdir -p "$state"
	st_config "$TMP/sconf.$1" "$1"
	st_gateway "$TMP/sconf.$1" "$state" "$TMP/gw-a.$1.log"
	ST_A_PID=$ST_PID ST_A_PORT=$ST_PORT
	ST_SLUICE_PIDS="$ST_PID $(children "$ST_PID" | tr '\n' ' ')"
	st_prime "$ST_A_PORT"
	echo "bench: store $1: gateway A on :$ST_A_PORT with $ST_WORKERS workers"
	for t in $ST_TOPOS; do
		case $t in
		haproxy*) [ -z "$ST_HAP_SKIP" ] || continue ;;
		esac
		st_topology "$1" "$t" "$state"
	done
	ST_HEALTH="$ST_HEALTH $1: $(curl -s -m 2 "http://127.0.0.1:$ST_A_PORT/health" || echo unreachable);"
	for g in A B; do
		eval "p=\$ST_${g}_PID"
		[ -n "$p" ] || continue
		alive "$p" || ST_DIED="$ST_DIED gateway $g on $1;"
		stop_pid "$p"
		eval "ST_${g}_PID=''"
		cp "$TMP/gw-$(echo "$g" | tr AB ab).$1.log" "$O/bench/"
	done
}

# The scenario: the mock, PostgreSQL and HAProxy when there, then every
# store.
store_cells() {
	ST_LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
	ST_STAMP=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	ST_HEALTH='' ST_DIED='' ST_RAW=$TMP/raw.store.jsonl
	: >"$ST_RAW"
	mkdir -p "$O/bench"
	st_mock
	case " $ST_STORES " in
	*" postgresql "*) st_postgres ;;
	esac
	[ -z "$ST_PG_SKIP" ] || st_skip "PostgreSQL" "$ST_PG_SKIP"
	ST_HAPROXY=$(st_haproxy_bin)
	if [ -z "$ST_HAPROXY" ]; then
		ST_HAP_SKIP="HAProxy is not installed (${BENCH_HAPROXY:-no /usr/sbin/haproxy}; Debian: apt-get install haproxy; make bench installs it)"
		st_skip "the HAProxy cells" "$ST_HAP_SKIP"
	else
		ST_HAP_VERSION=$("$ST_HAPROXY" -v 2>/dev/null | head -1 |
		    sed 's/^HAProxy version \([^ ]*\).*/\1/')
	fi
	for s in $ST_STORES; do
		[ "$s" != postgresql ] || [ -z "$ST_PG_SKIP" ] || continue
		st_store "$s"
	done
	stop_pid "$ST_MOCK_PID"
	stop_pid "$ST_PG_PID"
	ST_MOCK_PID='' ST_PG_PID=''
	ST_LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
}

# ---- the report ------------------------------------------------------

# Result of cell STORE.TOPO.CLIENTS, or {}.
st_res() {
	cat "$TMP/s.$1" 2>/dev/null || echo '{}'
}

st_topo_name() {
	case $1 in
	one)		echo "1, straight" ;;
	haproxy1)	echo "1, behind HAProxy" ;;
	haproxy2)	echo "2, behind HAProxy" ;;
	esac
}

# One table row: st_row STORE TOPO CLIENTS.
st_row() {
	r=$(st_res "$1.$2.$3")
	o=$(st_res "$1.one.$3")
	rows=$(cat "$TMP/s.$1.$2.$3.rows" 2>/dev/null || echo -)
	done_n=$(sent "$TMP/s.$1.$2.$3")
	# shellcheck disable=SC2046
	set -- "$@" $(cat "$TMP/s.$1.$2.$3.cpu" 2>/dev/null || echo - - -)
	cpu="$(us_per3 "$4" "$done_n") / $(us_per3 "$5" "$done_n") / $(us_per3 "$6" "$done_n")"
	[ "$2" != one ] || cpu="${cpu% / *} / -"
	[ "$1" != sqlite ] || cpu="$(us_per3 "$4" "$done_n") / - /${cpu##*/}"
	rps=$(jget "$r" rps)
	awk -v st="$1" -v tp="$(st_topo_name "$2")" -v c="$3" -v rps="$rps" \
	    -v orps="$(jget "$o" rps)" -v p50="$(jget "$r" p50_ms)" \
	    -v p99="$(jget "$r" p99_ms)" -v rows="$rows" -v n="$done_n" \
	    -v err="$(jget "$r" errors)" -v cpu="$cpu" 'BEGIN {
		x = (rps != "-" && orps != "-" && orps > 0) ? sprintf("%.2f", rps / orps) : "-"
		if (rows != "-" && n > 0) {
			per = sprintf("%.2f", rows / n)
			rs = sprintf("%.0f", rows / n * rps)
		} else {
			per = "-"; rs = "-"
		}
		printf "| %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s |\n",
		    st, tp, c, rps == "-" ? "-" : sprintf("%.0f", rps), x,
		    p50, p99, rs, per, cpu, err
	}'
}

st_header() {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "- Run: $ST_STAMP, \`$(command_line)\`, commit" \
	    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown);" \
	    "$(nproc) CPUs ($cpu), shared with whatever else runs on the" \
	    "machine: load average before / after these cells: $ST_LOAD0 /" \
	    "$ST_LOAD1."
	echo "- Backend: \`build/tests/mock-llm\` (tests/mock_llm.md), one" \
	    "thread, answering at once, so the figures are the gateway's and" \
	    "the store's own costs."
	echo "- Workflow (shared \`memory\`, bench/store.sh): QualityMemory," \
	    "GetCurrentMemoryFromFile, then a Standard node whose system" \
	    "prompt holds the memories. Every request is a new discussion" \
	    "(\`[DiscussionId]\` numbered by \`loadgen --unique\`) of five" \
	    "messages of about 11 estimated tokens, with chunks of 10 and" \
	    "the last two messages held back: QualityMemory takes the" \
	    "discussion's generation lock, makes its ledger and writes 3" \
	    "memories, each from one mock call whose prompt shows the" \
	    "memories before it; GetCurrentMemoryFromFile reads them back;" \
	    "Standard answers (a 4th mock call). Non-streamed."
	echo "- Stores: SQLite: \`state_dir/sluice.db\` (WAL," \
	    "synchronous=NORMAL: no fsync per commit). PostgreSQL" \
	    "${ST_PG_VERSION:-?}: a throwaway cluster from \`bench/pgrun\`" \
	    "(tests/unit/pgtmp.c: initdb into /tmp, the workers on its Unix" \
	    "socket, fsync=off, synchronous_commit=off, shared_buffers=16MB):" \
	    "no fsync per commit either; a production server with fsync on" \
	    "pays a WAL flush per commit."
	echo "- Gateways: each \`{\"min_workers\": $ST_WORKERS, \"max_workers\":" \
	    "$ST_WORKERS}\` plus the store, all warm before its cells; two" \
	    "gateways share the config folder and the store (SQLite: the same" \
	    "state folder), so they have twice the workers. \"1, straight\":" \
	    "loadgen to gateway A. \"1, behind HAProxy\": HAProxy" \
	    "${ST_HAP_VERSION:-?} on deploy/haproxy.cfg as shipped (a new" \
	    "server connection per request, a log line per request), both" \
	    "its server lines on A. \"2, behind HAProxy\": the same on A and" \
	    "B (leastconn)."
	echo "- Load: loadgen, closed loop, one keep-alive connection per" \
	    "client to the first hop; ${DURATION} s measured per cell after" \
	    "${WARMUP} s warm-up; clients $ST_CLIENTS; per-request timeout" \
	    "${TIMEOUT} s. Cells run one after another: per store, each" \
	    "topology, each client count."
	echo "- Memory rows/s = requests/s × rows per request; rows per" \
	    "request = the rows \`memories\` gained during the cell (counted" \
	    "before and after; warm-up and drain included) over the" \
	    "requests that ended in it. 3.00 says every request wrote its" \
	    "three. \"× 1 straight\" is requests/s over the straight cell's" \
	    "at the same store and clients."
	echo "- CPU: utime + stime from /proc/PID/stat before and after each" \
	    "cell (warm-up and drain included) over the requests that ended" \
	    "in it: Sluice = the gateways and all their workers, PostgreSQL =" \
	    "the server and its backends (one per worker), HAProxy = its" \
	    "process. Ticks are 1/$(getconf CLK_TCK) s: at one client the" \
	    "figures are coarse. The mock and loadgen are not counted."
}

st_after() {
	for s in $ST_STORES; do
		if [ "$s" = postgresql ] && [ -n "$ST_PG_SKIP" ]; then
			echo "- **PostgreSQL: SKIPPED**: $ST_PG_SKIP."
		fi
	done
	[ -z "$ST_HAP_SKIP" ] ||
	    echo "- **HAProxy cells: SKIPPED**: $ST_HAP_SKIP."
	echo "- Gateways died: ${ST_DIED:-none}. \`/health\` of gateway A at the" \
	    "end of each store:$(printf '%s' "$ST_HEALTH" | sed 's/;$//')"
	n=$(cat "$O"/bench/gw-[ab].*.log 2>/dev/null | grep -c -E ' (warn|error): ' || true)
	echo "- Gateway logs (\`$O/bench/gw-[ab].STORE.log\`): $(cat \
	    "$O"/bench/gw-[ab].*.log 2>/dev/null | wc -l) lines, ${n:-0} at" \
	    "warn or error level; HAProxy's in \`$O/bench/haproxy.*.log\`."
}

# The section, between markers so that a store-only run (make
# bench-store) can replace it.
store_section() {
	echo "<!-- store:begin: written by bench/run.sh; BENCH_SCENARIOS=store (make bench-store) rewrites only this section -->"
	echo "## Memory nodes on SQLite and PostgreSQL; one gateway and two behind HAProxy"
	echo
	st_header
	echo
	echo "| store | gateways | clients | req/s | × 1 straight | p50 / p99 ms | memory rows/s | rows per request | CPU µs per request: Sluice / PostgreSQL / HAProxy | errors |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for s in $ST_STORES; do
		for t in $ST_TOPOS; do
			for c in $ST_CLIENTS; do
				[ -f "$TMP/s.$s.$t.$c" ] && st_row "$s" "$t" "$c"
			done
		done
	done
	echo
	st_after
	echo
	echo "Raw loadgen output, in run order (store, topology, loadgen's JSON):"
	echo
	echo '```'
	cat "$ST_RAW" 2>/dev/null
	echo '```'
	echo "<!-- store:end -->"
}
