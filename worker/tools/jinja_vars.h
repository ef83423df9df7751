/* jinja_vars.h - a node's Jinja2 renderer for its variables (vars_set_renderer): names the template, watches the request's cancellation. */
#ifndef SLUICE_JINJA_VARS_H
#define SLUICE_JINJA_VARS_H

#include <jansson.h>
#include <stdbool.h>

#include "../core/vars.h"
#include "../llm/transport.h"
#include "jinja.h"

/* What the renderer knows of its node; the caller's, borrowed while
 * the renderer is set. */
struct jinja_node {
	json_t				*jn_node;	/* the node's object:
							   its title and the
							   fields a template is
							   found in */
	struct transport_hooks		 jn_hooks;	/* the request's
							   cancellation, or
							   zeroed */
	const struct jinja_limits	*jn_lim;	/* NULL: defaults */
};

/* The renderer: arg is a struct jinja_node. A failure reads "template
 * NAME, line N: cause" (no line when Jinja names none), NAME the
 * node's field the template is ('prompt', 'strings[1]',
 * 'arguments.q'; 'a field' when none matches) and the node's title. */
extern const struct vars_render_ops	 jinja_vars_ops;

/* Does the node ask for Jinja2: its "jinja2" truthy as Python sees it
 * (true, a non-empty string, a non-zero number, ...)? */
bool	jinja_wanted(json_t *node);

#endif
