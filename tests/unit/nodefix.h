/* nodefix.h - unit tests of worker/llm: one node of workflow "wf" in a scratch config folder, with fakerq as its request. */
#ifndef SLUICE_NODEFIX_H
#define SLUICE_NODEFIX_H

#include <jansson.h>
#include <stdbool.h>

#include "../../worker/core/node.h"
#include "../it/harness.h"
#include "fakerq.h"

/*
 * it_config's folder: user "it" (endpoints in Endpoints/it/), endpoint
 * "Mock" (OpenAI chat, api type "Open-AI-API", preset "Mock" at
 * temperature 0.5), and the "turns" prompt template. The node is node 3
 * of 5 of workflow "wf", of type Standard, the streaming responder of
 * the top-level workflow; its variables (nf_vars, also its early ones)
 * hold name=Ann.
 */
struct nodefix {
	struct it		 nf_it;
	struct fakerq		 nf_rq;
	struct conf_user	*nf_user;
	struct vars		*nf_vars;
	struct wmsgs		 nf_msgs;	/* the conversation */
	json_t			*nf_node;
	struct node_ctx		 nf_x;		/* hand &nf_x to the code */
	char			 nf_url[64];	/* where endpoints point */
};

/* Set it up, with tests/mock-llm started for it (mock) or with every
 * endpoint pointing where nothing answers. Fails the test on error. */
void	nodefix_init(struct nodefix *, bool mock);

/* Stop the mock, remove the folder, free everything. */
void	nodefix_free(struct nodefix *);

/* Set member key of the user's file to value (reference taken) and
 * load the user again. */
void	nodefix_user(struct nodefix *, const char *key, json_t *value);

/* Endpoint name at nf_url with its own api type (ApiTypes/<name>.json,
 * type type, at_extra) and the "turns" template; each extra is "" or
 * ", \"key\": value, ...". */
void	nodefix_backend(struct nodefix *, const char *name, const char *type,
	    const char *at_extra, const char *ep_extra);

/* Set members of the node from a json_pack format. */
void	nodefix_set(struct nodefix *, const char *fmt, ...);

/* Append to the conversation: role, content pairs up to a NULL role. */
void	nodefix_conv(struct nodefix *, const char *role, ...);

/* A node failure: RQ_ERROR, status http, the message naming the node
 * ("workflow 'wf' node 3 (Standard): ") and holding needle. */
void	nodefix_ck_fail(const struct wresult *, int http, const char *needle);

#endif
