/* resp.c - the response builder: the one place that knows API response shapes. */
#include <stdio.h>
#include <string.h>

#include "../common/json.h"
#include "resp.h"

/* Sluice's own marker where OpenAI puts a backend fingerprint. */
#define FINGERPRINT	"fp_sluice"

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
	return api == API_OLLAMA_CHAT || api == API_OLLAMA_GENERATE ?
	    "application/x-ndjson" : "text/event-stream";
}

/* The fields every OpenAI chat chunk starts with. */
static void
chunk_head(struct buf *out, const struct resp_ctx *rc)
{
	buf_adds(out, "data: {\"id\":");
	jcstr(out, rc->rc_id);
	buf_printf(out, ",\"object\":\"chat.completion.chunk\",\"created\":%lld,"
	    "\"model\":", (long long)rc->rc_created);
	jcstr(out, rc->rc_model);
	buf_adds(out, ",\"system_fingerprint\":\"" FINGERPRINT "\",");
}

static void
usage(struct buf *out, const struct proto_req_done *d)
{
	long long	 p = d->prompt_tokens > 0 ? d->prompt_tokens : 0;
	long long	 c = d->completion_tokens > 0 ? d->completion_tokens : 0;

	buf_printf(out, "{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,"
	    "\"total_tokens\":%lld}", p, c, p + c);
}

static const char *
finish_reason(const struct proto_req_done *d)
{
	return d->finish.p != NULL && d->finish.n > 0 ? NULL : "stop";
}

static void
finish_json(struct buf *out, const struct proto_req_done *d)
{
	if (finish_reason(d) != NULL)
		jcstr(out, finish_reason(d));
	else
		jstr(out, d->finish.p, d->finish.n);
}

void
resp_stream_open(struct buf *out, const struct resp_ctx *rc)
{
	if (rc->rc_api != API_OPENAI_CHAT)
		return;
	chunk_head(out, rc);
	buf_adds(out, "\"choices\":[{\"index\":0,\"delta\":{\"role\":"
	    "\"assistant\",\"content\":\"\"},\"logprobs\":null,"
	    "\"finish_reason\":null}]}\n\n");
}

void
resp_stream_chunk(struct buf *out, const struct resp_ctx *rc,
    const struct proto_req_chunk *c)
{
	bool	 any = false;

	if (c->content.n == 0 && c->reasoning.n == 0 && c->tool_calls.n == 0)
		return;
	chunk_head(out, rc);
	buf_adds(out, "\"choices\":[{\"index\":0,\"delta\":{");
	if (c->content.n > 0) {
		buf_adds(out, "\"content\":");
		jstr(out, c->content.p, c->content.n);
		any = true;
	}
	if (c->reasoning.n > 0) {
		buf_adds(out, any ? ",\"reasoning_content\":" :
		    "\"reasoning_content\":");
		jstr(out, c->reasoning.p, c->reasoning.n);
		any = true;
	}
	if (c->tool_calls.n > 0) {
		/* Already JSON, produced by our own worker. */
		buf_adds(out, any ? ",\"tool_calls\":" : "\"tool_calls\":");
		buf_add(out, c->tool_calls.p, c->tool_calls.n);
	}
	buf_adds(out, "},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
}

void
resp_stream_close(struct buf *out, const struct resp_ctx *rc,
    const struct proto_req_done *d)
{
	chunk_head(out, rc);
	buf_adds(out, "\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
	    "\"finish_reason\":");
	finish_json(out, d);
	buf_adds(out, "}]}\n\n");
	if (rc->rc_include_usage) {
		chunk_head(out, rc);
		buf_adds(out, "\"choices\":[],\"usage\":");
		usage(out, d);
		buf_adds(out, "}\n\n");
	}
	buf_adds(out, "data: [DONE]\n\n");
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

static void
openai_error_object(struct buf *out, int status, const char *message)
{
	buf_adds(out, "{\"error\":{\"message\":");
	jcstr(out, message);
	buf_printf(out, ",\"type\":\"%s\",\"code\":%d}}", error_type(status),
	    status);
}

void
resp_stream_error(struct buf *out, const struct resp_ctx *rc, int status,
    const char *message)
{
	buf_adds(out, "data: ");
	openai_error_object(out, status, message);
	buf_adds(out, "\n\ndata: [DONE]\n\n");
}

void
resp_stream_heartbeat(struct buf *out, const struct resp_ctx *rc)
{
	buf_adds(out, ":\n\n");
}

void
resp_whole(struct buf *out, const struct resp_ctx *rc, const struct buf *text,
    const struct buf *reasoning, const struct proto_req_done *d)
{
	buf_adds(out, "{\"id\":");
	jcstr(out, rc->rc_id);
	buf_printf(out, ",\"object\":\"chat.completion\",\"created\":%lld,"
	    "\"model\":", (long long)rc->rc_created);
	jcstr(out, rc->rc_model);
	buf_adds(out, ",\"system_fingerprint\":\"" FINGERPRINT "\","
	    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
	    "\"content\":");
	jstr(out, text->b_data, text->b_len);
	if (reasoning->b_len > 0) {
		buf_adds(out, ",\"reasoning_content\":");
		jstr(out, reasoning->b_data, reasoning->b_len);
	}
	buf_adds(out, "},\"logprobs\":null,\"finish_reason\":");
	finish_json(out, d);
	buf_adds(out, "}],\"usage\":");
	usage(out, d);
	buf_adds(out, "}");
}

void
resp_error(struct buf *out, bool ollama, int status, const char *message)
{
	if (ollama) {
		buf_adds(out, "{\"error\":");
		jcstr(out, message);
		buf_adds(out, "}");
	} else
		openai_error_object(out, status, message);
}
