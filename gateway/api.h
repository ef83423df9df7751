/* api.h - client request bodies turned into API-neutral REQ_START frames. */
#ifndef SLUICE_API_H
#define SLUICE_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../proto/proto.h"

#define API_ERRLEN	256

/* A parsed client request. */
struct api_req {
	int		 ar_api;		/* enum proto_api */
	bool		 ar_stream;
	bool		 ar_include_usage;	/* stream_options.include_usage */
	char		*ar_model;		/* client's model field, "" if none */
	char		*ar_think;		/* Ollama's "think" as JSON text
						   (true, false, "high", ...),
						   NULL when not sent */
	struct buf	 ar_start;		/* encoded REQ_START frame */
};

/* What the gateway's settings add to every REQ_START. */
struct api_limits {
	uint64_t	 deadline_ms;	/* the request's budget, 0 = none */
	uint32_t	 ep_limit;	/* per-endpoint calls at once, 0 = none */
	uint64_t	 ep_wait_ms;	/* longest wait for such a slot */
	const char	*user;		/* the user the model field chose,
					   or NULL: the worker's default */
	const char	*workflow;	/* its shared workflow, or NULL */
	const char	*key_scope;	/* sha256(Bearer key)[:16], or NULL */
	const char	*api_key;	/* the Bearer key when the user
					   encrypts with it, else NULL */
};

/* Parse a request body of the given API kind and encode its REQ_START
 * for request rqid with the given limits. Returns 0, or -1 with
 * *status (400/413) and err set to the message the client should see
 * (WilmerAI's wording where it has one). out is cleared on failure. */
int	api_parse(int api, const char *body, size_t len, const char *rqid,
	    const struct api_limits *, struct api_req *out, int *status,
	    char err[API_ERRLEN]);

/* The three steps of api_parse, for a caller that must look at the
 * model field before the frame is encoded: parse the body into *root (a
 * JSON object; caller decrefs), or -1 with status 400 and err. */
int	api_load(const char *body, size_t len, json_t **root, int *status,
	    char err[API_ERRLEN]);

/* The model field, "" when absent or not a string. Borrowed from root. */
const char *api_model(json_t *root);

/* Check root as a request of kind api and encode its REQ_START. Returns
 * as api_parse. */
int	api_build(int api, json_t *root, const char *rqid,
	    const struct api_limits *, struct api_req *out, int *status,
	    char err[API_ERRLEN]);

void	api_req_clear(struct api_req *);	/* frees members, reusable */

/* True when the client said "think": false: its answer carries no
 * reasoning. */
bool	api_thinking_off(const struct api_req *);

/* ---- shared by the per-API parsers (api_openai.c, api_ollama.c) ---- */

/* Messages being built, with the storage behind their views. */
struct api_msgs {
	struct proto_message	*am_pm;
	struct api_store	*am_store;
	size_t			 am_n;
	size_t			 am_cap;	/* room in both arrays */
};

/* Append a message; role and the other strings are copied. Returns the
 * index. */
size_t	api_msgs_add(struct api_msgs *, const char *role, const char *content,
	    size_t len);
void	api_msgs_content(struct api_msgs *, size_t i, const char *content,
	    size_t len);
void	api_msgs_image(struct api_msgs *, size_t i, const char *uri);
void	api_msgs_tool_calls(struct api_msgs *, size_t i, const json_t *calls);
void	api_msgs_extra(struct api_msgs *, size_t i, const char *name,
	    const char *tool_call_id);
const char *api_msgs_role(const struct api_msgs *, size_t i);
void	api_msgs_free(struct api_msgs *);

/* Encode REQ_START for out->ar_* and msgs, with the request's optional
 * generation options (object), tools and tool_choice (NULL if absent). */
int	api_encode(struct api_req *out, const struct api_msgs *, const char *rqid,
	    const struct api_limits *, const json_t *opts, const json_t *tools,
	    const json_t *tool_choice, int *status, char err[API_ERRLEN]);

/* Set *status/err; returns -1. */
int	api_fail(int *status, char err[API_ERRLEN], int st, const char *msg);

/* Check message i of a chat request of kind api (API_OPENAI_CHAT or
 * API_OLLAMA_CHAT) against its route's rules, which live only here:
 * an object with a string "role"; "content" a string or null, on the
 * OpenAI route also a list of content parts, and there "content" or
 * "tool_calls" is required (WilmerAI); "tool_calls" a list; "name"
 * and "tool_call_id" strings; on the Ollama route "images" a list of
 * base64 strings (api_images_check). Returns 0, or -1 with status 400
 * and err saying which message is wrong and how. */
int	api_msg_check(const json_t *jm, size_t i, int api, int *status,
	    char err[API_ERRLEN]);

/* Ollama's "images" (absent, null, or a list of base64 strings, as
 * Ollama's server decodes them); what names the field in err
 * ("messages[2].images"). Returns 0, or -1 with status 400 and err. */
int	api_images_check(const json_t *images, const char *what, int *status,
	    char err[API_ERRLEN]);

/* The per-API parsers; root is the parsed body object. */
int	api_openai_chat(json_t *root, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);
int	api_openai_completion(json_t *root, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);
int	api_ollama_chat(json_t *root, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);
int	api_ollama_generate(json_t *root, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);

#endif
