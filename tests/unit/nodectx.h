/* nodectx.h - unit suites of nodes and memory steps: the world a node runs in (a fake request with a scratch store, variables, a user, the conversation, a fake engine for nested workflows) and the node_ctx it is handed. */
#ifndef SLUICE_NODECTX_H
#define SLUICE_NODECTX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../common/conf.h"
#include "../../worker/core/msgs.h"
#include "../../worker/core/node.h"
#include "../../worker/core/vars.h"
#include "fakerq.h"
#include "scratchdb.h"

#define NC_WORKFLOW	"wf"	/* every node is node 3 of 5 of it */
#define NC_FOLDER	"u"	/* the user's workflow folder */
#define NC_RQID		"rq-test"

/* One workflow run through rq_run_flow (the seam's rq_flow), as asked. */
struct nc_flow {
	char		*nf_folder;
	char		*nf_name;
	char		**nf_inputs;	/* a copy, NULL-terminated; NULL none */
	size_t		 nf_ninputs;
	bool		 nf_deliver;
	bool		 nf_top;
	char		*nf_system;	/* the overrides; NULL none */
	char		*nf_prompt;
	bool		 nf_routing;	/* fc_routing was set */
	struct wf_run	*nf_parent;
	struct wmsgs	 nf_msgs;	/* a copy of fc_msgs (empty: NULL) */
	bool		 nf_own_msgs;	/* fc_msgs was set */
	bool		 nf_no_tools;
};

/* How the fake engine answers the next run. */
struct nc_reply {
	char	*nr_text;	/* its output; when the run delivers, also
				   sent to the client as one chunk */
	int	 nr_rc;		/* 0, NODE_END, -1 (an error naming the
				   workflow) or NC_FLOW_CANCEL */
};

#define NC_FLOW_CANCEL	(-2)	/* the run was cancelled: -1, RQ_CANCELLED */

struct nodectx {
	struct scratchdb	 nc_db;		/* the store; its folder is
						   also the config folder */
	struct fakerq		 nc_rq;		/* fr_store is nc_db's */
	struct vars		*nc_vars;	/* name=Ann */
	struct vars		*nc_early;
	json_t			*nc_user_json;	/* the user file */
	struct conf_user	 nc_user;	/* its folder NC_FOLDER */
	struct wmsgs		 nc_msgs;	/* the conversation */
	const char		*nc_discussion;	/* "" none (the default) */
	struct str		 nc_scope;	/* the API key's, empty none */
	bool			 nc_responder;	/* the node's flags */
	bool			 nc_stream;
	char			 nc_parent;	/* nx_run points here */
	struct node_ctx		 nc_x;		/* what nodectx_ctx filled */
	/* the fake engine */
	struct nc_flow		*nc_flows;
	size_t			 nc_nflows;
	struct nc_reply		*nc_replies;
	size_t			 nc_nreplies, nc_taken;
};

/* Open the world for a test named what: a scratch store, no
 * discussion, no messages, an empty user file. nodectx_close frees it
 * all and removes the folder. */
void	nodectx_open(struct nodectx *, const char *what);
void	nodectx_close(struct nodectx *);

/* Append a message to the conversation. */
void	nodectx_say(struct nodectx *, const char *role, const char *content);

/* Write text to path (relative to the config folder), making its
 * folders. */
void	nodectx_write(struct nodectx *, const char *path, const char *text);

/* The memory settings file: settings (the reference is taken) written
 * as Workflows/u/mem.json and named by the user file. */
void	nodectx_settings(struct nodectx *, json_t *settings);

/* nc_x filled for node (borrowed) as node 3 of 5 of NC_WORKFLOW, with
 * the world's current state. */
struct node_ctx *nodectx_ctx(struct nodectx *, json_t *node);

/* Run t's handler on node (the reference is taken). *streamed as the
 * handler set it. */
int	nodectx_run(struct nodectx *, const struct node_type *t, json_t *node,
	    struct buf *out, bool *streamed, struct wresult *res);

/* Queue the fake engine's answer to the next workflow run; a run with
 * nothing queued fails the test. */
void	nodectx_flow_reply(struct nodectx *, const char *text, int rc);

/* A workflow run so far (fails the test past the end). */
const struct nc_flow *nodectx_flow(const struct nodectx *, size_t i);

/* Assert res is a node error with this HTTP status whose message names
 * the workflow and node ("workflow 'wf' node 3 (type): ") and holds
 * needle. */
void	nodectx_ck_fail(const struct wresult *res, int http, const char *type,
	    const char *needle);

/* A node from a json_pack format (fails the test when it does not
 * parse). */
json_t	*nodectx_json(const char *fmt, ...);

#endif
