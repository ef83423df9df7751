/* mcp.h - call one tool on an MCP server named in MCPServers/: connect, handshake, call, close (addendum A4). */
#ifndef SLUICE_MCP_H
#define SLUICE_MCP_H

#include <jansson.h>

#include "../../common/buf.h"
#include "../llm/transport.h"
#include "xfield.h"

struct mcp_call {
	const char		*mc_confdir;	/* holds MCPServers/ */
	const char		*mc_server;	/* its file's name, no .json */
	const char		*mc_tool;
	const json_t		*mc_args;	/* an object, borrowed */
	struct xnum		 mc_timeout;	/* the whole call's bound */
};

enum mcp_outcome {
	MCP_OK,			/* out: the tool's text */
	MCP_ERROR,		/* out: WilmerAI's MCPToolCallError text */
	MCP_CANCELLED,		/* hooks asked to stop; out untouched */
};

/*
 * One fresh connection (a stdio child, or HTTP requests), one call,
 * then everything closed: nothing is kept between calls. The server's
 * file is read now. hooks (NULL: none) are watched throughout, as
 * transport_perform watches them. Appends to out.
 */
enum mcp_outcome	mcp_call_tool(const struct mcp_call *,
			    const struct transport_hooks *, struct buf *out);

/*
 * WilmerAI's MCPClient.list_tools (addendum A4.8): the same connection
 * and handshake, then tools/list. On MCP_OK out gets, as compact JSON,
 * {name: {"llm_schema": {"type": "function", "name": name,
 * "description": its description or "Execute <name>", "parameters":
 * its inputSchema or {"type": "object", "properties": {}}}}} (tools
 * without a name skipped); errors as mcp_call_tool's, with the
 * operation named "list_tools". c->mc_tool and mc_args are not read.
 * Nothing in Sluice calls it yet: WilmerAI's callers are its agentic
 * PythonModule scripts, which import WilmerAI's own modules.
 */
enum mcp_outcome	mcp_list_tools(const struct mcp_call *,
			    const struct transport_hooks *, struct buf *out);

#endif
