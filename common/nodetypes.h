/* nodetypes.h - WilmerAI's workflow node types, and which of them Sluice runs. */
#ifndef SLUICE_NODETYPES_H
#define SLUICE_NODETYPES_H

#include <stdbool.h>

struct node_type_info {
	const char	*ti_name;	/* as written in a node's "type" */
	bool		 ti_runs;	/* false: known to WilmerAI, refused
					 * by Sluice with HTTP 501 */
};

/* The entry for type name (case-sensitive, as WilmerAI compares), from
 * nodetypes.def (WilmerAI's VALID_NODE_TYPES, spec section 4; the
 * worker's registry expands the same list); NULL for a name
 * WilmerAI does not know either (it runs such a node as Standard).
 * The entry is static: never freed. */
const struct node_type_info	*nodetype_find(const char *name);

#endif
