# peers.sh - the fast backend (nginx with canned answers) and the peer gateway (Portkey) for bench/run.sh (sourced).
#
# Uses from run.sh: TMP, REPLY. Sets NGX_PID, NGX_PLAIN, NGX_STREAM (ports),
# PK_PID, PK_PORT, PK_VERSION (empty when Portkey is not installed).

PEERS_DIR=bench/peers
PK_MAIN=$PEERS_DIR/node_modules/@portkey-ai/gateway/build/start-server.js

# The canned answers: an OpenAI chat completion whose content is REPLY,
# and the same as a stream, one SSE event per word between a role event
# and a finish event, then [DONE] (the mock's shape).
canned_bodies() {
	id='"id":"chatcmpl-bench","created":1700000000,"model":"bench-model"'
	printf '{%s,"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50}}' \
	    "$id" "$REPLY" >"$TMP/canned.json"
	ev="data: {$id,\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
	{
		printf '%s"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n' "$ev"
		# shellcheck disable=SC2086
		set -- $REPLY
		while [ $# -gt 0 ]; do
			w=$1
			shift
			[ $# -eq 0 ] || w="$w "
			printf '%s"delta":{"content":"%s"},"finish_reason":null}]}\n\n' "$ev" "$w"
		done
		printf '%s"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' "$ev"
	} >"$TMP/canned.sse"
}

# File $1 as an nginx quoted string body: every line ends in \n.
ngx_string() {
	awk 'BEGIN { ORS = "" } { print $0 "\\n" }' "$1"
}

# nginx, one worker, answering every POST on one port with the JSON and
# on another with the stream; its access log counts the requests.
start_nginx() {
	command -v nginx >/dev/null 2>&1 ||
	    die "nginx not found; make bench installs nginx-light (scripts/deps.sh bench)"
	canned_bodies
	NGX_PLAIN=$(free_port)
	NGX_STREAM=$(free_port)
	[ "$NGX_PLAIN" != "$NGX_STREAM" ] || NGX_STREAM=$((NGX_PLAIN + 1))
	mkdir -p "$TMP/nginx"
	cat >"$TMP/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 4096; }
http {
	access_log $TMP/nginx/access.log combined buffer=256k flush=1s;
	keepalive_requests 100000000;
	keepalive_timeout 75s;
	client_body_temp_path $TMP/nginx/body;
	server {
		listen 127.0.0.1:$NGX_PLAIN;
		location / {
			default_type application/json;
			return 200 '$(cat "$TMP/canned.json")';
		}
	}
	server {
		listen 127.0.0.1:$NGX_STREAM;
		location / {
			default_type text/event-stream;
			return 200 '$(ngx_string "$TMP/canned.sse")';
		}
	}
}
EOF
	nginx -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" \
	    >"$TMP/nginx/out.log" 2>&1 &
	NGX_PID=$!
	if ! wait_port "$NGX_PLAIN" || ! wait_port "$NGX_STREAM"; then
		die "nginx did not start: $(cat "$TMP/nginx/out.log" "$TMP/nginx/error.log" 2>/dev/null)"
	fi
	NGX_VERSION=$(nginx -v 2>&1 | sed 's/.*nginx\///')
}

# Requests nginx served so far (its access log, flushed by a reopen).
nginx_served() {
	kill -USR1 "$NGX_PID" 2>/dev/null && sleep 1.2
	wc -l <"$TMP/nginx/access.log" 2>/dev/null || echo 0
}

# The Portkey AI gateway from bench/peers (npm ci there), when node
# and the package are present; with fetch-shim.mjs preloaded (see it).
start_portkey() {
	PK_VERSION=
	if ! command -v node >/dev/null 2>&1 || [ ! -f "$PK_MAIN" ]; then
		PK_MISSING="not installed (needs node and npm; make bench runs npm ci in $PEERS_DIR)"
		return 0
	fi
	PK_PORT=$(free_port)
	NODE_ENV=production node --import "./$PEERS_DIR/fetch-shim.mjs" \
	    "$PK_MAIN" "--port=$PK_PORT" --headless >"$TMP/portkey.log" 2>&1 &
	PK_PID=$!
	wait_port "$PK_PORT" || die "Portkey did not start: $(tail -c 600 "$TMP/portkey.log")"
	PK_VERSION=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' \
	    "$PEERS_DIR/node_modules/@portkey-ai/gateway/package.json" | head -1)
	PK_NODE=$(node --version)
}

# The headers that make Portkey proxy to nginx's port $1 as OpenAI.
portkey_headers() {
	echo "x-portkey-provider: openai"
	echo "x-portkey-custom-host: http://127.0.0.1:$1/v1"
	echo "Authorization: Bearer sk-bench"
}

# The paced backend: build/tests/mock-llm --pace (one thread, libevent),
# answering every stream with its head at once, the first event
# PACE_FIRST_MS later, PACE_EVENTS word events PACE_GAP_MS apart (the
# role event rides with the first, the finish event and [DONE] with
# the last). Sets MOCK_PID, PACED_PORT.
start_paced_backend() {
	"$O/tests/mock-llm" --quiet --listen 127.0.0.1:0 --text "$REPLY" \
	    --pace "$PACE_FIRST_MS,$PACE_EVENTS,$PACE_GAP_MS" \
	    >"$TMP/mock.out" 2>"$TMP/mock.log" &
	MOCK_PID=$!
	line=$(wait_line "$TMP/mock.out" 'listening on 127\.0\.0\.1:') ||
	    die "mock-llm did not start: $(cat "$TMP/mock.log")"
	PACED_PORT=${line##*:}
}
