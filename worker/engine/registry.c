/* node_registry.c - the node types by name (nodes.def). */
#include <string.h>

#include "../core/node.h"

#define NODE(sym)	extern const struct node_type sym;
#include "nodes.def"
#undef NODE

static const struct node_type *const types[] = {
#define NODE(sym)	&sym,
#include "nodes.def"
#undef NODE
	NULL,
};

const struct node_type *
node_type_find(const char *name)
{
	size_t	 i;

	for (i = 0; types[i] != NULL; i++)
		if (strcmp(types[i]->nt_name, name) == 0)
			return types[i];
	return NULL;
}

