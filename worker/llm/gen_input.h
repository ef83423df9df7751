/* gen_input.h - WilmerAI's gen_input and the small helpers every backend adapter shares. */
#ifndef SLUICE_GEN_INPUT_H
#define SLUICE_GEN_INPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

/* WilmerAI's set_gen_input: nc's resolved preset as written, then the
 * api type's stream property (always), its context-size property (when
 * the endpoint sets maxContextTokenSize) and its max-new-tokens property
 * (node maxResponseSizeInTokens), each of the last two unless the
 * preset set it to null; then conf_gen_normalize (nulls dropped,
 * "__wilmer_null__" sent as null). Keys keep their first insertion
 * order, as a Python dict does. A new object (caller owns it). */
json_t		*gen_input_new(const struct node_call *nc);

/* root.update(gen_input): the gen_input's keys set on root (an object
 * the caller owns), replacing values in place, new keys at the end. */
void		 gen_input_apply(json_t *root, const struct node_call *nc);

/* Ask an OpenAI-compatible server to end a stream with its usage: sets
 * "stream_options": {"include_usage": true} on root (an object the
 * caller owns) when nc streams and its api type's streamIncludeUsage
 * is on, unless the preset set stream_options itself. WilmerAI never
 * sends it (docs/migrating-from-wilmer.md). */
void		 adapter_stream_usage(json_t *root, const struct node_call *nc);

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
