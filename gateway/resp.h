/* resp.h - the response builder: the one place that knows API response shapes. */
#ifndef SLUICE_RESP_H
#define SLUICE_RESP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../proto/proto.h"

/* What every piece of one response shares. Strings are borrowed. */
struct resp_ctx {
	int		 rc_api;		/* enum proto_api */
	const char	*rc_id;			/* "chatcmpl-..." / "cmpl-..." */
	const char	*rc_model;		/* echoed model */
	int64_t		 rc_created;		/* Unix seconds */
	bool		 rc_include_usage;
	const char	*rc_request_id;		/* Ollama bodies carry it */
	uint64_t	 rc_t0_ns;		/* request start (clock_mono_ns) */
	uint64_t	 rc_first_ns;		/* first content, 0 if none */
	bool		 rc_hide_thinking;	/* Ollama "think": false: no
						   "thinking" goes out */
};

/* The whole answer, for non-streaming replies and stream ends. */
struct resp_answer {
	const struct buf	*ra_text;
	const struct buf	*ra_reasoning;
	const json_t		*ra_tool_calls;	/* OpenAI-shaped array or NULL */
	const struct proto_req_done *ra_done;
};

/* Content type of a stream for this API. */
const char	*resp_stream_type(int api);

/* Streams. Each appends complete wire events (SSE events or NDJSON
 * lines) to out. */
void	resp_stream_open(struct buf *out, const struct resp_ctx *);
void	resp_stream_chunk(struct buf *out, const struct resp_ctx *,
	    const struct proto_req_chunk *);
/* The final event(s); tool calls seen during the stream are in
 * ra_tool_calls (Ollama streams get them whole on a "done": false line
 * just before the final line, as Ollama sends them). */
void	resp_stream_close(struct buf *out, const struct resp_ctx *,
	    const struct resp_answer *);
/* An error after the head was sent, then the end of the stream. */
void	resp_stream_error(struct buf *out, const struct resp_ctx *,
	    int status, const char *message);
/* A keep-alive while the backend is silent. */
void	resp_stream_heartbeat(struct buf *out, const struct resp_ctx *);

/* Whole (non-streaming) answer. */
void	resp_whole(struct buf *out, const struct resp_ctx *,
	    const struct resp_answer *);

/* The answer to Open WebUI's tool-choosing request (owui.h), as
 * WilmerAI sends it whatever "stream" said: one JSON object, keys
 * sorted, with a trailing newline. OpenAI chat: a chat.completion with
 * no tool call, id "chatcmpl-opnwui-tool-<created>", finish_reason
 * "tool_calls"; Ollama chat: an empty, done message for model. */
void	resp_owui_tools(struct buf *out, int api, const char *model,
	    int64_t created);

/* Error body for a route family: ollama true gives {"error": "..."},
 * otherwise the OpenAI object {"error": {"message","type","code"}}. */
void	resp_error(struct buf *out, bool ollama, int status,
	    const char *message);

/* Merge the tool-call deltas of one REQ_CHUNK (a JSON array of OpenAI
 * tool-call objects with "index") into acc, a JSON array owned by the
 * caller: a new index appends, a known one concatenates arguments. */
void	resp_tool_calls_merge(json_t *acc, const struct str *deltas);

#endif
