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
	bool		 ar_secret;		/* ar_start holds the API
						   key: wiped when cleared */
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

/* api_parse through jansson's tree alone (api_body_load_tree): the
 * path before the scanner, for tests that compare the two. */
int	api_parse_tree(int api, const char *body, size_t len,
	    const char *rqid, const struct api_limits *, struct api_req *out,
	    int *status, char err[API_ERRLEN]);

/* Parse the body into *root (a JSON object; caller decrefs), or -1
 * with status 400 and err (jansson's words). For the bodies that are not
 * chats (models, embeddings). */
int	api_load(const char *body, size_t len, json_t **root, int *status,
	    char err[API_ERRLEN]);

/* The model field, "" when absent or not a string. Borrowed from root. */
const char *api_model(json_t *root);

/*
 * A chat or completion body, parsed for api_build (api_body.c): its
 * members as jansson values, except a "messages" list, which is read
 * straight from the text into per-message views (common/jscan.h)
 * without building a tree. A body the scanner refuses is parsed by
 * jansson as a whole instead, so errors read as before.
 */
struct api_body;

/* Parse body[0..len), which must outlive *out (views of it are kept).
 * Returns 0 with *out (api_body_free), or -1 with status 400 and err
 * as api_load words it. */
int	api_body_load(const char *body, size_t len, struct api_body **out,
	    int *status, char err[API_ERRLEN]);

/* The same through jansson's tree alone: the path before the scanner,
 * kept for bodies it refuses and for tests that compare the two. */
int	api_body_load_tree(const char *body, size_t len,
	    struct api_body **out, int *status, char err[API_ERRLEN]);

void	api_body_free(struct api_body *);	/* NULL is a no-op */

/* The body's object; "messages" is in it only when it was not scanned.
 * Borrowed. */
json_t	*api_body_root(const struct api_body *);

/* The type of "messages" (JSON_ARRAY, ...), or -1 when absent. */
int	api_body_msgs_type(const struct api_body *);

/* Number of messages (0 unless "messages" is a list). */
size_t	api_body_nmsgs(const struct api_body *);

/* The members of a message the gateway reads. */
enum { AMF_ROLE, AMF_CONTENT, AMF_TOOL_CALLS, AMF_NAME, AMF_TCID,
	AMF_IMAGES, AMF_N };

struct api_mfield {
	int		 mf_type;	/* json_type, or -1 when absent */
	struct str	 mf_str;	/* JSON_STRING: its text (not always
					   NUL-terminated) */
	json_t		*mf_json;	/* arrays and objects: the
					   value (an owned reference) */
};

/* One message as the checks see it. */
struct api_mview {
	bool			 mv_object;	/* it is a JSON object */
	struct api_mfield	 mv_f[AMF_N];
};

/* View message i (< api_body_nmsgs); strings are borrowed from the
 * body. Release with api_mview_clear. */
void	api_body_msg(const struct api_body *, size_t i, struct api_mview *);
void	api_mview_clear(struct api_mview *);

/* Check the body as a request of kind api and encode its REQ_START.
 * Returns as api_parse. */
int	api_build(int api, const struct api_body *, const char *rqid,
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
/* The same with role and content borrowed: they must outlive
 * api_encode (a NULL content.p reads as ""). */
size_t	api_msgs_view(struct api_msgs *, struct str role,
	    struct str content);
/* A message's name and tool_call_id, borrowed likewise (NULL .p: none). */
void	api_msgs_extra_view(struct api_msgs *, size_t i, struct str name,
	    struct str tool_call_id);
void	api_msgs_content(struct api_msgs *, size_t i, const char *content,
	    size_t len);
void	api_msgs_image(struct api_msgs *, size_t i, const char *uri);
void	api_msgs_tool_calls(struct api_msgs *, size_t i, const json_t *calls);
void	api_msgs_extra(struct api_msgs *, size_t i, const char *name,
	    const char *tool_call_id);
struct str api_msgs_role(const struct api_msgs *, size_t i);
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
int	api_msg_check(const struct api_mview *, size_t i, int api,
	    int *status, char err[API_ERRLEN]);

/* Ollama's "images" (absent, null, or a list of base64 strings, as
 * Ollama's server decodes them); what names the field in err
 * ("messages[2].images"). Returns 0, or -1 with status 400 and err. */
int	api_images_check(const json_t *images, const char *what, int *status,
	    char err[API_ERRLEN]);

/* The per-API parsers. */
int	api_openai_chat(const struct api_body *, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);
int	api_openai_completion(const struct api_body *, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);
int	api_ollama_chat(const struct api_body *, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);
int	api_ollama_generate(const struct api_body *, const char *rqid,
	    const struct api_limits *, struct api_req *, int *status,
	    char err[API_ERRLEN]);

#endif
