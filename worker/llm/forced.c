/* forced.c - an enforcement round (addendum A8.6): the call, one redraw on a miss, the answer read back as the tool call the client demanded. */
#include <stdio.h>

#include "../../common/log.h"
#include "backend.h"
#include "forced.h"

/* One call; a redraw starts from nothing. */
static int
draw(struct node_ctx *x, struct node_call *nc, const struct clean_conf *cc,
    struct node_out *o, struct wresult *res, bool again)
{
	if (again) {
		node_out_free(o);
		node_out_init(o);
		json_array_clear(nc->nc_tool_calls);
		if (nc->nc_clean != NULL) {
			clean_free(nc->nc_clean);
			nc->nc_clean = clean_new(cc);
		}
	}
	return backend_call(x->nx_rq, nc, o, res);
}

/* The answer is the call. */
static void
take_call(struct node_call *nc, struct node_out *o, json_t *call)
{
	if (nc->nc_tool_calls != NULL) {
		json_array_clear(nc->nc_tool_calls);
		json_array_extend(nc->nc_tool_calls, call);
	}
	json_decref(call);
	buf_reset(&o->no_text);
	(void)snprintf(o->no_finish, sizeof(o->no_finish), "tool_calls");
}

/* The text held back goes to a streaming client now. */
static void
release(struct node_ctx *x, const struct node_call *nc,
    const struct node_out *o)
{
	if (nc->nc_stream && o->no_text.b_len > 0 && !rq_stopped(x->nx_rq))
		rq_emit(x->nx_rq, (struct str){ o->no_text.b_data,
		    o->no_text.b_len }, STR_NULL);
}

/* Two misses: the text as it came. */
static void
take_text(struct node_ctx *x, struct node_call *nc, struct node_out *o)
{
	if (rq_stopped(x->nx_rq))
		return;
	log_warnx("[rq %s] workflow '%s' node %zu: %s did not answer with "
	    "the tool call the client demanded, twice; its text is the "
	    "answer", x->nx_rq->rq_id, x->nx_workflow, x->nx_index + 1,
	    nc->nc_ep->e_name);
	release(x, nc, o);
}

int
forced_call(struct node_ctx *x, const struct toolforce *tf,
    struct node_call *nc, const struct clean_conf *cc, struct node_out *o,
    struct wresult *res)
{
	json_t	*call;
	int	 round;

	for (round = 0; round < 2; round++) {
		if (draw(x, nc, cc, o, res, round > 0) == -1)
			return -1;
		if (json_array_size(nc->nc_tool_calls) > 0) {
			release(x, nc, o);
			return 0;
		}
		if ((call = toolforce_parse(tf, o->no_text.b_data,
		    o->no_text.b_len)) != NULL) {
			take_call(nc, o, call);
			return 0;
		}
		if (rq_stopped(x->nx_rq))
			break;
		if (round == 0)
			log_info("[rq %s] workflow '%s' node %zu: the answer is "
			    "not the tool call the client demanded; asking "
			    "once more", x->nx_rq->rq_id, x->nx_workflow,
			    x->nx_index + 1);
	}
	take_text(x, nc, o);
	return 0;
}
