/* output.c - what a call's text becomes: the cleaner, the node's output, the client's stream, the tool calls found in it. */
#include <string.h>

#include "../store/cache.h"
#include "callcache.h"
#include "output.h"

/* Tool calls the cleaner found in the text, kept apart from the
 * backend's own until the end (merge_markers). */
static void
add_marker_calls(struct call_state *cs, const struct buf *calls)
{
	json_t	*a;

	if (calls->b_len == 0 || cs->cs_nc->nc_tool_calls == NULL ||
	    (a = json_loadb(calls->b_data, calls->b_len, 0, NULL)) == NULL)
		return;
	if (cs->cs_markers == NULL)
		cs->cs_markers = json_array();
	json_array_extend(cs->cs_markers, a);
	json_decref(a);
}

/* The end of the output: the calls found in the text join the native
 * ones, numbered after them. */
static void
merge_markers(struct call_state *cs)
{
	json_t	*c;
	size_t	 i, base;

	if (cs->cs_markers == NULL)
		return;
	base = json_array_size(cs->cs_nc->nc_tool_calls);
	json_array_foreach(cs->cs_markers, i, c) {
		json_object_set_new(c, "index", json_integer((json_int_t)(base +
		    i)));
		json_array_append(cs->cs_nc->nc_tool_calls, c);
	}
	json_decref(cs->cs_markers);
	cs->cs_markers = NULL;
}

/* Text that may go out: the node's output, and the client's when this
 * call streams to it. */
static void
take_text(struct call_state *cs, struct str text, struct str why)
{
	const struct node_call	*nc = cs->cs_nc;

	buf_add(&cs->cs_out->no_text, text.p, text.n);
	if (nc->nc_quiet)
		return;
	if (nc->nc_stream)
		rq_emit(cs->cs_rq, text, why);
	else if (nc->nc_deliver)
		rq_emit(cs->cs_rq, STR_NULL, why);
}

/* What the cleaner let through, past the group-chat speaker rule when
 * the node has one (finishing: the end of the output). */
static void
take_clean(struct call_state *cs, bool finishing)
{
	struct clean_out	*co = &cs->cs_co;
	struct gchat		*g = cs->cs_nc->nc_gchat;
	struct buf		 gt = BUF_INIT;
	struct str		 why = { co->co_reasoning.b_data,
				    co->co_reasoning.b_len };

	if (g == NULL)
		take_text(cs, (struct str){ co->co_text.b_data,
		    co->co_text.b_len }, why);
	else {
		gchat_feed(g, co->co_text.b_data, co->co_text.b_len, &gt);
		if (finishing)
			gchat_finish(g, &gt);
		take_text(cs, (struct str){ gt.b_data, gt.b_len }, why);
		buf_free(&gt);
	}
	add_marker_calls(cs, &co->co_tool_calls);
	if (co->co_stop)
		cs->cs_stop = true;
	clean_out_reset(co);
}

void
output_token(struct call_state *cs, const char *p, size_t n)
{
	if (n == 0 || cs->cs_stop)
		return;
	cs->cs_any = true;
	if (cs->cs_cache != NULL)
		callcache_record(cs->cs_cache, p, n);
	if (cs->cs_nc->nc_clean != NULL) {
		clean_feed(cs->cs_nc->nc_clean, p, n, &cs->cs_co);
		take_clean(cs, false);
		return;
	}
	buf_add(&cs->cs_out->no_text, p, n);
	if (cs->cs_nc->nc_stream && !cs->cs_nc->nc_quiet)
		rq_emit(cs->cs_rq, (struct str){ p, n }, STR_NULL);
}

void
output_finish(struct call_state *cs)
{
	if (cs->cs_nc->nc_clean != NULL) {
		clean_finish(cs->cs_nc->nc_clean, &cs->cs_co);
		take_clean(cs, true);
	}
	merge_markers(cs);
}

void
output_replay(struct call_state *cs, const struct cache_entry *e)
{
	struct node_out	*o = cs->cs_out;
	json_t		*c;
	size_t		 i;

	json_array_foreach(e->ce_chunks, i, c)
		output_token(cs, json_string_value(c), json_string_length(c));
	if (e->ce_tools != NULL && cs->cs_nc->nc_tool_calls != NULL)
		json_array_extend(cs->cs_nc->nc_tool_calls, e->ce_tools);
	snprintf(o->no_finish, sizeof(o->no_finish), "%s", e->ce_finish);
	o->no_prompt_tokens = e->ce_prompt_tokens;
	o->no_completion_tokens = e->ce_completion_tokens;
	output_finish(cs);
}
