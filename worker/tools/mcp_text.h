/* mcp_text.h - an MCP tool result as the node's text (addendum A4.6). */
#ifndef SLUICE_MCP_TEXT_H
#define SLUICE_MCP_TEXT_H

#include <jansson.h>

#include "../../common/buf.h"

/* Append a CallToolResult's text to out: its structuredContent as
 * PyJSON when present and not null, else its content blocks. */
void	mcp_text_result(const json_t *result, struct buf *out);

/* Append content blocks with no separator: a block's "text" when it has
 * one, else PyJSON of the block with the SDK model's fields in their
 * order (nulls written). Not a list: nothing. */
void	mcp_text_content(const json_t *content, struct buf *out);

#endif
