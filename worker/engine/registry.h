/* registry.h - the handler for each node type of common/nodetypes.def. */
#ifndef SLUICE_REGISTRY_H
#define SLUICE_REGISTRY_H

#include "../core/node.h"

/* The handler for a type name as common/nodetypes.def lists it (the
 * row's node_<id>, or node_unsupported); NULL for a name the list does
 * not have, or NULL. A node without "type" is Standard; an unknown type
 * is reported by the engine. The handler is static: never freed. */
const struct node_type	*node_type_find(const char *name);

#endif
