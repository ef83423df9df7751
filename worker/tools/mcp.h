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

#endif
