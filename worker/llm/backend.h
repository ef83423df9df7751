/* backend.h - one LLM call of a node: adapter choice, transport, errors that name the endpoint. */
#ifndef SLUICE_BACKEND_H
#define SLUICE_BACKEND_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../clean/clean.h"
#include "../core/groupchat.h"
#include "../core/msgs.h"
#include "../../common/conf.h"
#include "../rq.h"

/* Everything one call needs; all borrowed. */
struct node_call {
	const struct conf_user		*nc_user;
	const struct conf_endpoint	*nc_ep;
	const struct conf_apitype	*nc_at;
	json_t				*nc_preset;	/* resolved, or NULL */
	const struct wmsgs		*nc_msgs;	/* what to send */
	long				 nc_max_tokens;	/* maxResponseSizeInTokens */
	bool				 nc_stream;	/* stream to the client */
	const char			*nc_tools;	/* JSON text or NULL */
	const char			*nc_tool_choice;
	/* The client's Ollama "think" (JSON text: true, false, "high",
	 * ...) for a call whose answer goes to the client, else NULL.
	 * Only the Ollama adapters send it, over the preset's. */
	const char			*nc_think;
	/* Completion backends (openAIV1Completion, koboldCppGenerate,
	 * ollamaApiGenerate): the whole prompt text as prompt.c builds it
	 * (prompt_completion). NULL for chat backends; a completion
	 * adapter sends "" when it is NULL. nc_msgs is then only read for
	 * the images of its user messages (KoboldCpp). */
	const char			*nc_prompt;
	/* When not NULL, a JSON array (owned by the caller) that receives
	 * the tool calls of the reply in OpenAI shape ({"id", "type":
	 * "function", "function": {"name", "arguments": text}}; streamed
	 * calls also carry "index"). Ollama chat and Claude fill it;
	 * NULL drops them. */
	json_t				*nc_tool_calls;
	/* The response cleaner for this call (clean.h), or NULL to pass
	 * the backend's text as it is. Its tool calls join nc_tool_calls
	 * (when not NULL); its reasoning reaches the client when nc_stream
	 * or nc_deliver. */
	struct cleaner			*nc_clean;
	struct gchat			*nc_gchat;	/* group-chat speaker
							   rule after the
							   cleaner, or NULL */
	bool				 nc_deliver;	/* a non-streamed answer:
							   reasoning is sent as
							   chunks the gateway
							   keeps */
};

/* What came back. */
struct node_out {
	struct buf	 no_text;
	char		 no_finish[32];
	int64_t		 no_prompt_tokens;	/* -1 unless reported */
	int64_t		 no_completion_tokens;
};

void	node_out_init(struct node_out *);
void	node_out_free(struct node_out *);

/* Run the call. With nc_stream every token is emitted to the client as
 * it arrives (rq_emit). Returns 0, or -1 with res filled: RQ_CANCELLED
 * when the gateway cancelled, RQ_ERROR otherwise with a message naming
 * the endpoint and the client's HTTP status as docs/api.md's table of
 * backend errors has it (400, 429, 502, 503, 504; 501 for an api type
 * without adapter). When the backend answered with an error status,
 * r_upstream is that status and r_retry_after its Retry-After ("" when
 * it sent none). */
int	backend_call(struct rq *, const struct node_call *,
	    struct node_out *, struct wresult *res);

/* ---- adapters (one per api type; see backend_adapters.c) ---- */

struct call_cache;

/* Parsing state shared by the transport and an adapter. */
struct call_state {
	struct rq		*cs_rq;
	const struct node_call	*cs_nc;
	struct node_out		*cs_out;
	bool			 cs_done;	/* end marker seen */
	bool			 cs_any;	/* some token arrived */
	char			 cs_error[512];	/* backend-reported error */
	bool			 cs_stop;	/* a filter ended the output */
	struct clean_out	 cs_co;		/* the cleaner's output */
	json_t			*cs_markers;	/* tool calls the cleaner
						   found in the text, joined
						   to nc_tool_calls after the
						   native ones at the end */
	struct call_cache	*cs_cache;	/* records the raw text for
						   the response cache, or NULL */
};

/* How a streamed reply is cut into events. */
enum ad_framing {
	AD_SSE = 0,	/* text/event-stream: ad_event(event name, data) */
	AD_NDJSON,	/* one JSON object per line: ad_event(NULL, line) */
};

struct adapter {
	enum conf_apitype_kind	 ad_type;
	const char		*ad_name;
	enum ad_framing		 ad_framing;
	/* URL path after the endpoint base, e.g. "/v1/chat/completions" */
	const char		*(*ad_path)(bool stream);
	/* The request body as JSON text (caller frees). */
	char			*(*ad_body)(const struct node_call *);
	/* Append the authentication header lines, each ending in '\n'
	 * ("Authorization: Bearer ...\n"); NULL means the default Bearer
	 * header when the endpoint has an apiKey. */
	void			 (*ad_auth)(const struct node_call *,
				    struct buf *lines);
	/* One streamed event: with AD_SSE the event name ("" when the
	 * event had none) and its data; with AD_NDJSON event is NULL and
	 * data is one line. 0, or -1 with cs_error. */
	int			 (*ad_event)(struct call_state *, const char *event,
				    const char *data, size_t n);
	/* The whole response body (non-streaming). 0, or -1 with cs_error. */
	int			 (*ad_whole)(struct call_state *, const char *body,
				    size_t n);
	/* The dialect has no end marker: a stream that closes cleanly is
	 * complete (KoboldCpp), not truncated. */
	bool			 ad_ends_on_close;
};

/* The adapter for an api type, or NULL when it is not supported. */
const struct adapter	*adapter_for(enum conf_apitype_kind);

/* Hand a token to the node output (and to the client when streaming),
 * through the call's cleaner when it has one. */
void	call_token(struct call_state *, const char *p, size_t n);

/* The adapters (worker/llm_*.c), for backend.c's table and the tests. */
extern const struct adapter	adapter_openai_chat;		/* openAIChatCompletion */
extern const struct adapter	adapter_openai_completion;	/* openAIV1Completion */
extern const struct adapter	adapter_ollama_chat;		/* ollamaApiChat */
extern const struct adapter	adapter_ollama_generate;	/* ollamaApiGenerate */
extern const struct adapter	adapter_kobold;			/* koboldCppGenerate */
extern const struct adapter	adapter_claude;			/* claudeMessages */

#endif
