/* mcp_sse.c - MCP's legacy HTTP+SSE transport: not carried by Sluice yet; the call fails with a message saying so. */
#include "mcp_xport.h"

/*
 * It needs a GET stream kept open while messages are POSTed beside it,
 * and llm/transport runs one transfer at a time. Servers that speak it
 * mostly speak streamable_http too (the MCP spec deprecated HTTP+SSE in
 * 2025-03-26).
 */
enum mcp_end
mcp_sse_run(const struct mcp_server *srv, struct mcp_run *run)
{
	(void)srv;
	mcp_rpc_fail(run->mr_rpc, "the legacy 'sse' transport is not "
	    "supported by Sluice; use 'streamable_http'");
	return MCPE_ENDED;
}
