/* adapter.h - what a backend adapter is given and gives back, and the helpers every adapter shares. */
#ifndef SLUICE_ADAPTER_H
#define SLUICE_ADAPTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../clean/clean.h"
#include "../core/groupchat.h"
#include "../core/msgs.h"
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
	json_t				*nc_schema;	/* the node's
							   structuredOutputFile
							   schema (borrowed),
							   or NULL; the chat
							   adapters attach it
							   (structured.h) */
	bool				 nc_deliver;	/* a non-streamed answer:
							   reasoning is sent as
							   chunks the gateway
							   keeps */
	/* An enforcement round (forced.h): the backend streams when
	 * nc_stream says so, but nothing reaches the client (text nor
	 * reasoning) and the response cache is neither read nor filled;
	 * the caller decides what the answer becomes. */
	bool				 nc_quiet;
};

/* What came back. */
struct node_out {
	struct buf	 no_text;
	char		 no_finish[32];
	int64_t		 no_prompt_tokens;	/* -1 unless reported */
	int64_t		 no_completion_tokens;
};


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



/* The adapters (adapter_<api>.c), for backend.c's table and the tests. */
extern const struct adapter	adapter_openai_chat;		/* openAIChatCompletion */
extern const struct adapter	adapter_openai_completion;	/* openAIV1Completion */
extern const struct adapter	adapter_ollama_chat;		/* ollamaApiChat */
extern const struct adapter	adapter_ollama_generate;	/* ollamaApiGenerate */
extern const struct adapter	adapter_kobold;			/* koboldCppGenerate */
extern const struct adapter	adapter_claude;			/* claudeMessages */

void	node_out_init(struct node_out *);
void	node_out_free(struct node_out *);

/* ---- helpers every adapter shares (adapter.c) ---- */

/* Serialise a request body byte for byte as WilmerAI's
 * requests.post(json=...) does, and release root. Caller frees. */
char		*adapter_dump(json_t *root);

/* Parse one reply object: a streamed event, an NDJSON line or a whole
 * body (text need not be NUL-terminated). A new reference, or NULL with
 * cs_error set when it is not a JSON object or is a backend error
 * ({"error": "..."} or {"error": {"message": ...}}); what names the
 * text in the message ("the response"). */
json_t		*adapter_reply(struct call_state *, const char *text, size_t n,
		    const char *what);

/* The message of a backend's error body (body[0..n), not NUL-
 * terminated) in any dialect's shape: {"error": "..."} (Ollama),
 * {"error": {"message"}} (OpenAI, Claude), {"detail": {"msg"}}
 * (KoboldCpp), {"detail": "..."} or {"detail": [{"msg"}]} (FastAPI
 * servers). Written to out on one line (line breaks become spaces), cut
 * to len - 1 bytes. Returns false, out untouched, when the body is not
 * JSON or carries no message. */
bool		 adapter_error_message(const char *body, size_t n, char *out,
		    size_t len);

/* True when text[0..n) holds only ASCII whitespace (WilmerAI skips
 * such lines and events). */
bool		 adapter_blank(const char *text, size_t n);

/* Record the finish reason (truncated to fit). */
void		 adapter_finish(struct call_state *, const char *reason);
/* The same for reason[0..n) (not NUL-terminated). */
void		 adapter_finish_n(struct call_state *, const char *reason,
		    size_t n);

/* Record reported token counts; either may be NULL or not an integer,
 * which leaves that count alone. */
void		 adapter_usage(struct call_state *, const json_t *prompt,
		    const json_t *completion);

/* img without a leading "data:<type>;base64," (borrowed; img itself
 * when it has none): the raw base64 Ollama and KoboldCpp expect. */
const char	*adapter_raw_image(const char *img);

/* Append call (reference stolen) to nc_tool_calls, or drop it when the
 * caller did not ask for tool calls. */
void		 adapter_tool_call(struct call_state *, json_t *call);

/* A new OpenAI-shape tool call {"id", "type": "function", "function":
 * {"name", "arguments"}}, with "index" first when index >= 0. id NULL
 * makes "call_" and 24 random hex digits. arguments is the JSON text. */
json_t		*adapter_openai_call(long index, const char *id,
		    const char *name, const char *arguments);

#endif
