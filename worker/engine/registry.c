/* registry.c - the handler for each node type of common/nodetypes.def. */
#include <stddef.h>
#include <string.h>

#include "../nodes/nodes.h"
#include "registry.h"

struct node_entry {
	const char		*ne_name;	/* the row's "type" string */
	const struct node_type	*ne_type;
};

static const struct node_entry types[] = {
#define NODETYPE(name, id, runs)		NODETYPE_##runs(name, id)
#define NODETYPE_IMPLEMENTED(name, id)		{ name, &node_##id },
#define NODETYPE_NOT_IMPLEMENTED(name, id)	{ name, &node_unsupported },
#include "../../common/nodetypes.def"
#undef NODETYPE_NOT_IMPLEMENTED
#undef NODETYPE_IMPLEMENTED
#undef NODETYPE
};

const struct node_type *
node_type_find(const char *name)
{
	size_t	 i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i].ne_name, name) == 0)
			return types[i].ne_type;
	return NULL;
}
