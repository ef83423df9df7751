/* resp.c - the response builder: the one place that knows API response shapes. */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "../common/clock.h"
#include "../common/json.h"
#include "../common/jsonw.h"
#include "resp.h"

/* Sluice's own marker where OpenAI puts a backend fingerprint. */
#define FINGERPRINT	"fp_sluice"

static bool
is_ollama(int api)
{
	return api == API_OLLAMA_CHAT || api == API_OLLAMA_GENERATE;
}

static void
jstr(struct buf *out, const char *s, size_t n)
{
	buf_addc(out, '"');
	json_escape(out, s ? s : "", s ? n : 0);
	buf_addc(out, '"');
}

static void
jcstr(struct buf *out, const char *s)
{
	jstr(out, s, s ? strlen(s) : 0);
}

const char *
resp_stream_type(int api)
{
	return is_ollama(api) ? "application/x-ndjson" : "text/event-stream";
}

static const char *
finish_of(const struct proto_req_done *d, const json_t *tool_calls)
{
	static char	 f[32];

	if (tool_calls != NULL && json_array_size(tool_calls) > 0)
		return "tool_calls";
	if (d->finish.p == NULL || d->finish.n == 0)
		return "stop";
	snprintf(f, sizeof(f), "%.*s", (int)d->finish.n, d->finish.p);
	return f;
}

static void
usage_object(struct buf *out, const struct proto_req_done *d)
{
	long long	 p = d->prompt_tokens > 0 ? d->prompt_tokens : 0;
	long long	 c = d->completion_tokens > 0 ? d->completion_tokens : 0;

	buf_printf(out, "{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,"
	    "\"total_tokens\":%lld}", p, c, p + c);
}

/* ---- OpenAI chat and completions (SSE) ---------------------------- */

static void
openai_head(struct buf *out, const struct resp_ctx *rc, bool sse)
{
	if (sse)
		buf_adds(out, "data: ");
	buf_adds(out, "{\"id\":");
	jcstr(out, rc->rc_id);
	buf_printf(out, ",\"object\":\"%s\",\"created\":%lld,\"model\":",
	    rc->rc_api == API_OPENAI_CHAT ? (sse ? "chat.completion.chunk" :
	    "chat.completion") : "text_completion", (long long)rc->rc_created);
	jcstr(out, rc->rc_model);
	buf_adds(out, ",\"system_fingerprint\":\"" FINGERPRINT "\",");
}

/* One SSE event with a single choice: a chat delta or completion text. */
static void
openai_event(struct buf *out, const struct resp_ctx *rc, const char *delta,
    const char *finish)
{
	openai_head(out, rc, true);
	if (rc->rc_api == API_OPENAI_CHAT)
		buf_printf(out, "\"choices\":[{\"index\":0,\"delta\":{%s},"
		    "\"logprobs\":null,\"finish_reason\":", delta);
	else
		buf_printf(out, "\"choices\":[{\"text\":%s,\"index\":0,"
		    "\"logprobs\":null,\"finish_reason\":", delta);
	if (finish != NULL)
		jcstr(out, finish);
	else
		buf_adds(out, "null");
	buf_adds(out, "}]}\n\n");
}

static void
openai_chunk(struct buf *out, const struct resp_ctx *rc,
    const struct proto_req_chunk *c)
{
	struct buf	 d = BUF_INIT;

	if (rc->rc_api == API_OPENAI_COMPLETION && c->content.n == 0)
		return;
	buf_adds(&d, "");
	if (rc->rc_api == API_OPENAI_COMPLETION) {
		jstr(&d, c->content.p, c->content.n);
	} else {
		if (c->content.n > 0) {
			buf_adds(&d, "\"content\":");
			jstr(&d, c->content.p, c->content.n);
		}
		if (c->reasoning.n > 0) {
			buf_adds(&d, d.b_len ? ",\"reasoning_content\":" :
			    "\"reasoning_content\":");
			jstr(&d, c->reasoning.p, c->reasoning.n);
		}
		if (c->tool_calls.n > 0) {	/* JSON from our worker */
			buf_adds(&d, d.b_len ? ",\"tool_calls\":" :
			    "\"tool_calls\":");
			buf_add(&d, c->tool_calls.p, c->tool_calls.n);
		}
	}
	if (d.b_len > 0)
		openai_event(out, rc, d.b_data, NULL);
	buf_free(&d);
}

static void
openai_close(struct buf *out, const struct resp_ctx *rc,
    const struct resp_answer *a)
{
	openai_event(out, rc, rc->rc_api == API_OPENAI_CHAT ? "" : "\"\"",
	    finish_of(a->ra_done, a->ra_tool_calls));
	if (rc->rc_include_usage) {
		openai_head(out, rc, true);
		buf_adds(out, "\"choices\":[],\"usage\":");
		usage_object(out, a->ra_done);
		buf_adds(out, "}\n\n");
	}
	buf_adds(out, "data: [DONE]\n\n");
}

/* A whole message's tool calls carry no stream "index". */
static void
whole_tool_calls(struct buf *out, const json_t *calls)
{
	json_t	*copy = json_deep_copy(calls), *c;
	size_t	 i;

	json_array_foreach(copy, i, c)
		json_object_del(c, "index");
	buf_adds(out, ",\"tool_calls\":");
	jsonw_dump(out, copy, JSONW_COMPACT);
	json_decref(copy);
}

static void
openai_whole(struct buf *out, const struct resp_ctx *rc,
    const struct resp_answer *a)
{
	const struct buf *t = a->ra_text;
	bool		 tools = a->ra_tool_calls != NULL &&
			    json_array_size(a->ra_tool_calls) > 0;

	openai_head(out, rc, false);
	if (rc->rc_api == API_OPENAI_COMPLETION) {
		buf_adds(out, "\"choices\":[{\"text\":");
		jstr(out, t->b_data, t->b_len);
		buf_adds(out, ",\"index\":0");
	} else {
		buf_adds(out, "\"choices\":[{\"index\":0,\"message\":{\"role\":"
		    "\"assistant\",\"content\":");
		if (tools && t->b_len == 0)
			buf_adds(out, "null");	/* OpenAI's convention */
		else
			jstr(out, t->b_data, t->b_len);
		if (a->ra_reasoning->b_len > 0) {
			buf_adds(out, ",\"reasoning_content\":");
			jstr(out, a->ra_reasoning->b_data,
			    a->ra_reasoning->b_len);
		}
		if (tools)
			whole_tool_calls(out, a->ra_tool_calls);
		buf_adds(out, "}");
	}
	buf_adds(out, ",\"logprobs\":null,\"finish_reason\":");
	jcstr(out, finish_of(a->ra_done, a->ra_tool_calls));
	buf_adds(out, "}],\"usage\":");
	usage_object(out, a->ra_done);
	buf_adds(out, "}");
}

/* ---- Ollama chat and generate (NDJSON) ---------------------------- */

/* Ollama's RFC 3339 UTC time with microseconds. */
static void
created_at(struct buf *out)
{
	struct timeval	 tv;
	struct tm	 tm;
	char		 s[40];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	buf_printf(out, "\"%s.%06ldZ\"", s, (long)tv.tv_usec);
}

void
resp_owui_tools(struct buf *out, int api, const char *model, int64_t created)
{
	if (api == API_OLLAMA_CHAT) {
		buf_adds(out, "{\"created_at\":");
		created_at(out);
		buf_adds(out, ",\"done\":true,\"done_reason\":\"stop\","
		    "\"eval_count\":0,\"eval_duration\":0,\"load_duration\":0,"
		    "\"message\":{\"content\":\"\",\"role\":\"assistant\"},"
		    "\"model\":");
		jcstr(out, model);
		buf_adds(out, ",\"prompt_eval_count\":0,\"prompt_eval_duration\""
		    ":0,\"total_duration\":0}\n");
		return;
	}
	buf_adds(out, "{\"choices\":[{\"finish_reason\":\"tool_calls\","
	    "\"index\":0,\"logprobs\":null,\"message\":{\"content\":null,"
	    "\"role\":\"assistant\",\"tool_calls\":[]}}],");
	buf_printf(out, "\"created\":%lld,\"id\":\"chatcmpl-opnwui-tool-%lld\","
	    "\"model\":", (long long)created, (long long)created);
	jcstr(out, model);
	buf_adds(out, ",\"object\":\"chat.completion\",\"system_fingerprint\":"
	    "\"wmr_123456789\",\"usage\":{}}\n");
}

static void
ollama_head(struct buf *out, const struct resp_ctx *rc)
{
	buf_adds(out, "{\"model\":");
	jcstr(out, rc->rc_model);
	buf_adds(out, ",\"created_at\":");
	created_at(out);
}

/* The text fields: message {role, content, thinking} for chat, response
 * (and thinking) for generate; no thinking when the client said
 * "think": false. */
static void
ollama_text(struct buf *out, const struct resp_ctx *rc, const char *t,
    size_t tn, const char *r, size_t rn)
{
	bool	 chat = rc->rc_api == API_OLLAMA_CHAT;

	buf_adds(out, chat ? ",\"message\":{\"role\":\"assistant\","
	    "\"content\":" : ",\"response\":");
	jstr(out, t, tn);
	if (rn > 0 && !rc->rc_hide_thinking) {
		buf_adds(out, ",\"thinking\":");
		jstr(out, r, rn);
	}
}

static void
ollama_request_id(struct buf *out, const struct resp_ctx *rc)
{
	buf_adds(out, ",\"request_id\":");
	jcstr(out, rc->rc_request_id);
}

static void
ollama_chunk(struct buf *out, const struct resp_ctx *rc,
    const struct proto_req_chunk *c)
{
	/* Tool-call deltas wait for the end (ollama_final): only then is
	 * every call whole, and Ollama sends whole calls. */
	if (c->content.n == 0 && (c->reasoning.n == 0 ||
	    rc->rc_hide_thinking))
		return;
	ollama_head(out, rc);
	ollama_text(out, rc, c->content.p, c->content.n, c->reasoning.p,
	    c->reasoning.n);
	if (rc->rc_api == API_OLLAMA_CHAT)
		buf_addc(out, '}');
	buf_adds(out, ",\"done\":false");
	ollama_request_id(out, rc);
	buf_adds(out, "}\n");
}

/* Tool calls in Ollama's shape: arguments as an object. */
static void
ollama_tool_calls(struct buf *out, const json_t *calls)
{
	const json_t	*c;
	size_t		 i;

	buf_adds(out, ",\"tool_calls\":[");
	for (i = 0; i < json_array_size(calls); i++) {
		json_t		*fn, *args;
		const char	*a;

		c = json_array_get(calls, i);
		fn = json_object_get(c, "function");
		a = json_string_value(json_object_get(fn, "arguments"));
		args = a != NULL ? json_loads(a, 0, NULL) : NULL;
		buf_adds(out, i ? ",{\"function\":{\"name\":" :
		    "{\"function\":{\"name\":");
		jcstr(out, json_string_value(json_object_get(fn, "name")));
		buf_adds(out, ",\"arguments\":");
		if (json_is_object(args))
			jsonw_dump(out, args, JSONW_COMPACT);
		else
			buf_adds(out, "{}");
		buf_adds(out, "}}");
		json_decref(args);
	}
	buf_addc(out, ']');
}

/* Real durations in nanoseconds, as Ollama reports them. */
static void
ollama_stats(struct buf *out, const struct resp_ctx *rc,
    const struct proto_req_done *d)
{
	uint64_t	 now = clock_mono_ns();
	uint64_t	 first = rc->rc_first_ns ? rc->rc_first_ns : now;
	long long	 p = d->prompt_tokens > 0 ? d->prompt_tokens : 0;
	long long	 c = d->completion_tokens > 0 ? d->completion_tokens : 0;
	const char	*f = finish_of(d, NULL);

	buf_printf(out, ",\"done\":true,\"done_reason\":\"%s\","
	    "\"total_duration\":%llu,\"load_duration\":0,"
	    "\"prompt_eval_count\":%lld,\"prompt_eval_duration\":%llu,"
	    "\"eval_count\":%lld,\"eval_duration\":%llu",
	    strcmp(f, "length") == 0 ? "length" : "stop",
	    (unsigned long long)(now - rc->rc_t0_ns), p,
	    (unsigned long long)(first - rc->rc_t0_ns), c,
	    (unsigned long long)(now - first));
}

/* A stream's tool calls, all of them, on a "done": false line of their
 * own with empty content, as Ollama sends them. */
static void
ollama_calls_line(struct buf *out, const struct resp_ctx *rc,
    const json_t *calls)
{
	ollama_head(out, rc);
	ollama_text(out, rc, "", 0, NULL, 0);
	ollama_tool_calls(out, calls);
	buf_adds(out, "},\"done\":false");
	ollama_request_id(out, rc);
	buf_adds(out, "}\n");
}

/* The end of a stream (the tool calls' line, then the final line), or
 * the whole answer (one object, tool calls in its message). */
static void
ollama_final(struct buf *out, const struct resp_ctx *rc,
    const struct resp_answer *a, bool whole)
{
	const struct buf *t = a->ra_text, *r = a->ra_reasoning;
	bool		 calls = rc->rc_api == API_OLLAMA_CHAT &&
			    a->ra_tool_calls != NULL &&
			    json_array_size(a->ra_tool_calls) > 0;

	if (calls && !whole)
		ollama_calls_line(out, rc, a->ra_tool_calls);
	ollama_head(out, rc);
	if (whole)
		ollama_text(out, rc, t->b_data, t->b_len, r->b_data, r->b_len);
	else
		ollama_text(out, rc, "", 0, NULL, 0);
	if (calls && whole)
		ollama_tool_calls(out, a->ra_tool_calls);
	if (rc->rc_api == API_OLLAMA_CHAT)
		buf_addc(out, '}');
	ollama_stats(out, rc, a->ra_done);
	ollama_request_id(out, rc);
	buf_adds(out, whole ? "}" : "}\n");
}

/* ---- dispatch ------------------------------------------------------ */

void
resp_stream_open(struct buf *out, const struct resp_ctx *rc)
{
	if (rc->rc_api == API_OPENAI_CHAT)
		openai_event(out, rc, "\"role\":\"assistant\",\"content\":\"\"",
		    NULL);
}

void
resp_stream_chunk(struct buf *out, const struct resp_ctx *rc,
    const struct proto_req_chunk *c)
{
	if (is_ollama(rc->rc_api))
		ollama_chunk(out, rc, c);
	else
		openai_chunk(out, rc, c);
}

void
resp_stream_close(struct buf *out, const struct resp_ctx *rc,
    const struct resp_answer *a)
{
	if (is_ollama(rc->rc_api))
		ollama_final(out, rc, a, false);
	else
		openai_close(out, rc, a);
}

void
resp_whole(struct buf *out, const struct resp_ctx *rc,
    const struct resp_answer *a)
{
	if (is_ollama(rc->rc_api))
		ollama_final(out, rc, a, true);
	else
		openai_whole(out, rc, a);
}

static const char *
error_type(int status)
{
	switch (status) {
	case 401:	return "authentication_error";
	case 403:	return "permission_error";
	case 404:	return "not_found_error";
	case 408:
	case 504:	return "timeout_error";
	case 429:	return "rate_limit_error";
	default:	return status < 500 ? "invalid_request_error" :
			    "server_error";
	}
}

void
resp_error(struct buf *out, bool ollama, int status, const char *message)
{
	if (ollama) {
		buf_adds(out, "{\"error\":");
		jcstr(out, message);
		buf_adds(out, "}");
		return;
	}
	buf_adds(out, "{\"error\":{\"message\":");
	jcstr(out, message);
	buf_printf(out, ",\"type\":\"%s\",\"code\":%d}}", error_type(status),
	    status);
}

void
resp_stream_error(struct buf *out, const struct resp_ctx *rc, int status,
    const char *message)
{
	if (is_ollama(rc->rc_api)) {	/* Ollama's mid-stream error line */
		resp_error(out, true, status, message);
		buf_addc(out, '\n');
		return;
	}
	buf_adds(out, "data: ");
	resp_error(out, false, status, message);
	buf_adds(out, "\n\ndata: [DONE]\n\n");
}

void
resp_stream_heartbeat(struct buf *out, const struct resp_ctx *rc)
{
	if (rc->rc_api == API_OLLAMA_CHAT)
		buf_adds(out, "{\"model\":\"\",\"created_at\":\"\",\"message\":"
		    "{\"role\":\"assistant\",\"content\":\"\"},\"done\":false}\n");
	else if (rc->rc_api == API_OLLAMA_GENERATE)
		buf_adds(out, "{\"model\":\"\",\"created_at\":\"\","
		    "\"response\":\"\",\"done\":false}\n");
	else
		buf_adds(out, ":\n\n");
}

static json_t *
find_index(json_t *acc, json_int_t idx)
{
	json_t	*c;
	size_t	 i;

	json_array_foreach(acc, i, c)
		if (json_integer_value(json_object_get(c, "index")) == idx)
			return c;
	return NULL;
}

/* Concatenate a delta's argument fragment onto a known call. */
static void
merge_arguments(json_t *have, json_t *d)
{
	json_t		*hf = json_object_get(have, "function");
	const char	*frag = json_string_value(json_object_get(
			    json_object_get(d, "function"), "arguments"));
	const char	*old = json_string_value(json_object_get(hf,
			    "arguments"));
	struct buf	 b = BUF_INIT;

	if (frag == NULL || hf == NULL)
		return;
	buf_adds(&b, old ? old : "");
	buf_adds(&b, frag);
	json_object_set_new(hf, "arguments", json_string(b.b_data));
	buf_free(&b);
}

void
resp_tool_calls_merge(json_t *acc, const struct str *deltas)
{
	json_t	*a, *d, *have;
	size_t	 i;

	if (deltas->n == 0 ||
	    (a = json_loadb(deltas->p, deltas->n, 0, NULL)) == NULL)
		return;
	json_array_foreach(a, i, d) {
		json_int_t	 idx = json_integer_value(json_object_get(d,
				    "index"));

		if ((have = find_index(acc, idx)) == NULL)
			json_array_append(acc, d);
		else
			merge_arguments(have, d);
	}
	json_decref(a);
}
