/* nodes.h - the node handlers: one per implemented row of common/nodetypes.def (node_<id>), and node_unsupported for the rest. */
#ifndef SLUICE_NODES_H
#define SLUICE_NODES_H

#include "../core/node.h"

/* Each is defined in its node_*.c; a row without its handler breaks
 * the worker's link. */
#define NODETYPE(name, id, runs)		NODETYPE_##runs(id)
#define NODETYPE_IMPLEMENTED(id)		extern const struct node_type node_##id;
#define NODETYPE_NOT_IMPLEMENTED(id)
#include "../../common/nodetypes.def"
#undef NODETYPE_NOT_IMPLEMENTED
#undef NODETYPE_IMPLEMENTED
#undef NODETYPE

/* The Standard node (node_standard.c, a row like the others) is named
 * here too, because the engine knows it sets its own conversation
 * variables. */
extern const struct node_type node_standard;

/* The handler of every NOT_IMPLEMENTED row of common/nodetypes.def
 * (node_unsupported.c): fails with HTTP 501, code "node_unsupported",
 * "workflow 'W' node N has type 'T', which this version of Sluice does
 * not run". It serves many names: its nt_name is NULL. */
extern const struct node_type node_unsupported;

#endif
