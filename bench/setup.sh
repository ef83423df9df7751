# setup.sh - the bench's config folder and request bodies, for bench/run.sh and bench/ab.sh (sourced, POSIX sh).
#
# Uses: TMP, WORKERS, CONV, NGX_PLAIN, NGX_STREAM, PACED_PORT (the last
# three may be unset: their endpoints are then left out).

# The config folder: user "bench" with shared workflows "plain" and
# "stream" (picked by the model field), each one Standard node on the
# nginx port that answers in that shape, and "paced" on the paced
# backend when PACED_PORT is set. $1: more sluice.json members (or
# empty).
write_config() {
	d=$TMP/config
	mkdir -p "$d/Users" "$d/Endpoints/bench" "$d/ApiTypes" \
	    "$d/Presets/OpenAI/bench" "$d/Workflows/bench" \
	    "$d/Workflows/_shared/plain" "$d/Workflows/_shared/stream" \
	    "$d/Workflows/_shared/paced" "$TMP/state"
	printf '{"min_workers": %s, "max_workers": %s%s}\n' \
	    "$WORKERS" "$WORKERS" "${1:+, $1}" >"$d/sluice.json"
	echo '{"currentUser": "bench"}' >"$d/Users/_current-user.json"
	echo '{"customWorkflowOverride": true, "customWorkflow": "Main",
 "allowSharedWorkflows": true,
 "chatCompleteAddUserAssistant": false,
 "chatCompletionAddMissingAssistantGenerator": false,
 "endpointConfigsSubDirectory": "bench", "connectTimeoutInSeconds": 2}' \
	    >"$d/Users/bench.json"
	for ep in Plain:"${NGX_PLAIN:-}" Stream:"${NGX_STREAM:-}" \
	    Paced:"${PACED_PORT:-}"; do
		[ -n "${ep#*:}" ] || continue
		printf '{"endpoint": "http://127.0.0.1:%s", "apiTypeConfigFileName": "Open-AI-API", "modelNameToSendToAPI": "bench-model", "promptTemplate": null, "maxContextTokenSize": 4096}\n' \
		    "${ep#*:}" >"$d/Endpoints/bench/${ep%%:*}.json"
	done
	echo '{"type": "openAIChatCompletion", "presetType": "OpenAI",
 "maxNewTokensPropertyName": "max_tokens", "streamPropertyName": "stream"}' \
	    >"$d/ApiTypes/Open-AI-API.json"
	echo '{"temperature": 0.5}' >"$d/Presets/OpenAI/bench/Bench.json"
	for wf in Workflows/bench/Main.json:Plain \
	    Workflows/_shared/plain/_DefaultWorkflow.json:Plain \
	    Workflows/_shared/stream/_DefaultWorkflow.json:Stream \
	    Workflows/_shared/paced/_DefaultWorkflow.json:Paced; do
		printf '{"nodes": [{"type": "Standard", "endpointName": "%s",
 "preset": "Bench", "systemPrompt": "{chat_system_prompt}", "prompt": "",
 "lastMessagesToSendInsteadOfPrompt": 20, "maxResponseSizeInTokens": 300}]}\n' \
		    "${wf#*:}" >"$d/${wf%%:*}"
	done
}

# $1 messages of a conversation: a system prompt, then user and
# assistant turns of about 200 bytes, ending with a user turn.
messages() {
	awk -v n="$1" 'BEGIN {
		t = "tell me more about the river, the museums and the food of the city, and how the tower was built and by whom, in a few sentences please"
		printf "{\"role\": \"system\", \"content\": \"You are a concise, helpful assistant. Answer in one sentence.\"}"
		for (i = 1; i < n; i++)
			printf ", {\"role\": \"%s\", \"content\": \"turn %d: %s\"}", (n - i) % 2 ? "user" : "assistant", i, t
	}'
}

write_bodies() {
	m="{\"role\": \"system\", \"content\": \"You are a concise, helpful assistant. Answer in one sentence.\"}, {\"role\": \"user\", \"content\": \"What is the capital of France, and what is it known for?\"}"
	printf '{"model": "plain", "max_tokens": 64, "messages": [%s]}\n' "$m" \
	    >"$TMP/body.plain.json"
	printf '{"model": "stream", "max_tokens": 64, "stream": true, "messages": [%s]}\n' \
	    "$m" >"$TMP/body.stream.json"
	printf '{"model": "paced", "max_tokens": 64, "stream": true, "messages": [%s]}\n' \
	    "$m" >"$TMP/body.paced.json"
	for nm in $CONV; do
		printf '{"model": "plain", "max_tokens": 64, "messages": [%s]}\n' \
		    "$(messages "$nm")" >"$TMP/body.conv$nm.json"
	done
}
