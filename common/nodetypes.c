/* nodetypes.c - WilmerAI's workflow node types, and which of them Sluice runs. */
#include <stddef.h>
#include <string.h>

#include "nodetypes.h"

/* nodetypes.def, row by row; ti_runs says whether the worker runs it. */
static const struct node_type_info types[] = {
#define NODETYPE(name, id, runs)		NODETYPE_##runs(name)
#define NODETYPE_IMPLEMENTED(name)		{ name, true },
#define NODETYPE_NOT_IMPLEMENTED(name)		{ name, false },
#include "nodetypes.def"
#undef NODETYPE_NOT_IMPLEMENTED
#undef NODETYPE_IMPLEMENTED
#undef NODETYPE
};

const struct node_type_info *
nodetype_find(const char *name)
{
	size_t	 i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i].ti_name, name) == 0)
			return &types[i];
	return NULL;
}
