/* mcp_schema.h - the part of JSON Schema an MCP tool's outputSchema is checked with. */
#ifndef SLUICE_MCP_SCHEMA_H
#define SLUICE_MCP_SCHEMA_H

#include <jansson.h>

#include "../../common/buf.h"

/* Does v satisfy schema? Checks type (a name or a list), required,
 * properties, items and enum, recursively; other keywords are not
 * checked. Returns 0, or -1 with the first violation appended to why
 * in the jsonschema package's words ("'x' is a required property"). */
int	mcp_schema_check(const json_t *schema, const json_t *v,
	    struct buf *why);

#endif
