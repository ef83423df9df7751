/* node.h - the node registry and what every node handler is given. */
#ifndef SLUICE_NODE_H
#define SLUICE_NODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../rq.h"
#include "msgs.h"
#include "vars.h"

struct wf_run;	/* the workflow run this node is in (the engine's) */

/* Everything a node may look at. All borrowed for the call. */
struct node_ctx {
	struct rq		*nx_rq;		/* the request: phase, output,
						   cancellation, the store,
						   nested workflows */
	json_t			*nx_node;	/* this node's config object */
	const char		*nx_workflow;	/* the workflow's name */
	const struct conf_workflow *nx_wf;	/* its file and keys */
	size_t			 nx_index;	/* 0-based position */
	size_t			 nx_count;	/* nodes in the workflow */
	bool			 nx_responder;	/* its output is the answer */
	bool			 nx_deliver;	/* ...and goes to the client */
	bool			 nx_stream;	/* ...and the client streams */
	bool			 nx_chat_api;	/* the client came through a
						   chat route (OpenAI's or
						   Ollama's /api/chat) */
	const char		*nx_confdir;
	const struct conf_user	*nx_user;
	struct vars		*nx_vars;	/* variables this node sees */
	const struct wmsgs	*nx_msgs;	/* the conversation */
	struct wmsgs		*nx_conv;	/* the same, for a node that
						   changes it for the nodes
						   after it (ImageProcessor) */
	const char		*nx_discussion_id;	/* "" when none */
	struct str		 nx_key_scope;	/* sha256(API key)[:16], or
						   empty: scopes memories */
	const char		*nx_tools;	/* the request's tools (JSON)
						   or NULL */
	const char		*nx_tool_choice;
	const char		*nx_think;	/* the client's Ollama "think"
						   (JSON) or NULL */
	struct wf_run		*nx_run;
	bool			 nx_top;	/* WilmerAI's non_responder None */
	const char		*nx_image;	/* ImageProcessor: the one
						   image this call sends */
	struct vars		*nx_early;	/* "early" variables: workflow
						   keys and agent inputs only
						   (endpointName, preset) */
	json_t			*nx_out_json;	/* set by a handler (a
						   reference the engine takes):
						   what a Jinja2 template sees
						   as its agentNOutput in place
						   of the text (PythonModule's
						   dict or list) */
};

/* A handler writes the node's output (its agentNOutput) to out and
 * returns 0, or -1 with res filled (RQ_ERROR with an HTTP status and a
 * message naming the workflow and node; RQ_CANCELLED when
 * rq_stopped() said so). Handlers that produce text do not talk to
 * the client: when the node is the responder the engine delivers out
 * (as one chunk, or as a word stream for StaticResponse). Handlers
 * that stream themselves (Standard, nested workflows) set *streamed. */
typedef int	(*node_fn)(struct node_ctx *, struct buf *out, bool *streamed,
		    struct wresult *res);

/* A handler's other answer: end the workflow, and the workflows that
 * called it, here, successfully (WilmerAI's EarlyTerminationException,
 * e.g. a WorkflowLock that is held). What the client already has stays
 * its answer; a client with none gets an empty one. */
#define NODE_END	1

struct node_type {
	const char	*nt_name;	/* the "type" string (its row's in
					   common/nodetypes.def) */
	node_fn		 nt_run;
	bool		 nt_word_stream;	/* responder output streamed
						   word by word (StaticResponse) */
};

/* ---- fields of a node-shaped JSON object (NULL: none) ---- */

/* A string field as written (no substitution), or NULL. Borrowed. */
const char *field_raw(json_t *o, const char *key);

/* A string field after substitution with v; "" when absent or not a
 * string. Caller frees. */
char	*field_str(const struct vars *v, json_t *o, const char *key);

/* A numeric field: a number, or a string that becomes a number after
 * substitution; anything else (or nothing) gives def. */
long	 field_long(const struct vars *v, json_t *o, const char *key,
	    long def);
double	 field_double(const struct vars *v, json_t *o, const char *key,
	    double def);

/* A boolean field: true/false only; def otherwise. */
bool	 field_bool(json_t *o, const char *key, bool def);

/* ---- helpers for handlers: the fields of x's node (core/node.c) ---- */

/* A string field after variable substitution; "" when absent or not a
 * string. Caller frees. */
char	*node_str(struct node_ctx *, const char *key);

/* A string field as written (no substitution), or NULL. Borrowed. */
const char *node_raw(struct node_ctx *, const char *key);

/* A numeric field: a number, or a string that becomes a whole number
 * after substitution; anything else (or nothing) gives def. */
long	node_long(struct node_ctx *, const char *key, long def);
double	node_double(struct node_ctx *, const char *key, double def);

/* A boolean field: true/false only; def otherwise. */
bool	node_bool(struct node_ctx *, const char *key, bool def);

/* A list of strings, each substituted; NULL-terminated, caller frees
 * with node_strv_free. Absent or not a list: an empty list. */
char	**node_strv(struct node_ctx *, const char *key);
void	  node_strv_free(char **);

/* Did a Jinja2 render of this node's fields fail, or stop because the
 * request stopped (vars_render_error, vars_render_stopped)? A handler
 * asks before it acts on what it formatted (sends, writes, runs) and
 * returns -1 when so: the engine then fills res with the render's
 * error (addendum A7: the node raises). */
bool	node_render_failed(struct node_ctx *);

/* scoped_variables (CustomWorkflow and its kin), each str()'d then
 * given the variables, after lead slots holding "" that the caller may
 * replace (freeing what was there): a child workflow's agentNInput.
 * NULL-terminated; free with node_strv_free. */
char	**node_scoped_inputs(struct node_ctx *, size_t lead);

/* Fill res for an error of this node: "workflow 'W' node N (TYPE): ..."
 * with HTTP status http. Returns -1. */
int	node_fail(struct node_ctx *, struct wresult *res, int http,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Send text to the client as WilmerAI streams static content: each run
 * of non-space and each run of space its own chunk. */
void	node_emit_words(struct rq *, const char *s, size_t n);

#endif
