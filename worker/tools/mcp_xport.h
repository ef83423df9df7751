/* mcp_xport.h - what an MCP transport is given and returns (internal to worker/tools/mcp*.c). */
#ifndef SLUICE_MCP_XPORT_H
#define SLUICE_MCP_XPORT_H

#include <stdint.h>

#include "../llm/transport.h"
#include "mcp_conf.h"
#include "mcp_rpc.h"

/* A transport carries the session's messages both ways until the
 * session is no longer running, the deadline passes or the hooks say
 * stop. Its own failures end the session (mcp_rpc_fail) with their
 * cause. It leaves nothing behind: no process, no descriptor. */
struct mcp_run {
	struct mcp_rpc			*mr_rpc;
	uint64_t			 mr_deadline;	/* clock_mono_ms */
	long				 mr_timeout_ms;	/* the node's */
	const struct transport_hooks	*mr_hooks;	/* never NULL */
};

enum mcp_end {
	MCPE_ENDED,		/* see the session's state */
	MCPE_TIMEOUT,
	MCPE_CANCELLED,
};

enum mcp_end	mcp_stdio_run(const struct mcp_server *, struct mcp_run *);
enum mcp_end	mcp_http_run(const struct mcp_server *, struct mcp_run *);
enum mcp_end	mcp_sse_run(const struct mcp_server *, struct mcp_run *);

#endif
