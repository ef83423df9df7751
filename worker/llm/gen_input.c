/* gen_input.c - WilmerAI's gen_input: the generation parameters a backend request carries. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "../../common/pystr.h"
#include "../../common/uuid.h"
#include "gen_input.h"

/* A key the preset set to null is one the user wants left out. */
static bool
nulled(json_t *gi, const char *key)
{
	return json_is_null(json_object_get(gi, key));
}

json_t *
gen_input_new(const struct node_call *nc)
{
	const struct conf_apitype	*at = nc->nc_at;
	json_t				*gi, *out;

	gi = nc->nc_preset != NULL ? json_deep_copy(nc->nc_preset) :
	    json_object();
	if (at->a_stream_prop[0] != '\0')
		json_object_set_new(gi, at->a_stream_prop,
		    json_boolean(nc->nc_stream));
	if (at->a_truncate_prop[0] != '\0' && nc->nc_ep->e_max_context >= 0 &&
	    !nulled(gi, at->a_truncate_prop))
		json_object_set_new(gi, at->a_truncate_prop,
		    json_integer(nc->nc_ep->e_max_context));
	if (at->a_max_tokens_prop[0] != '\0' &&
	    !nulled(gi, at->a_max_tokens_prop))
		json_object_set_new(gi, at->a_max_tokens_prop,
		    json_integer(nc->nc_max_tokens));
	out = conf_gen_normalize(gi);
	json_decref(gi);
	return out;
}

void
gen_input_apply(json_t *root, const struct node_call *nc)
{
	json_t	*gi = gen_input_new(nc);

	json_object_update(root, gi);
	json_decref(gi);
}

void
gen_input_stream_usage(json_t *root, const struct node_call *nc)
{
	if (!nc->nc_stream || !nc->nc_at->a_stream_usage ||
	    json_object_get(root, "stream_options") != NULL)
		return;
	json_object_set_new(root, "stream_options", json_pack("{s:b}",
	    "include_usage", 1));
}
