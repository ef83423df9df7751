/* mcp_rpc.h - the client side of one MCP session, apart from any transport: what to send next, what each answer means (addendum A4.5). */
#ifndef SLUICE_MCP_RPC_H
#define SLUICE_MCP_RPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * initialize (id 0), notifications/initialized, tools/call (id 1),
 * then, when the tool did not report an error, tools/list (id 2) for
 * the tool's output schema. A transport sends every message
 * mcp_rpc_next gives, feeds every message the server sends, and stops
 * once the state is no longer MCPS_RUNNING. Server requests are
 * answered (ping with {}, anything else with "Method not found");
 * notifications are ignored.
 */

enum mcp_state {
	MCPS_RUNNING,
	MCPS_DONE,		/* mcp_rpc_text: the tool's text */
	MCPS_FAILED,		/* mcp_rpc_text: why */
};

struct mcp_rpc;

/* A session calling tool with args (a JSON object, borrowed for the
 * call: copied); with tool NULL, one listing the server's tools instead
 * (tools/list after the handshake; mcp_rpc_text then gives them as
 * addendum A4.8 normalises them, compact JSON). */
struct mcp_rpc	*mcp_rpc_new(const char *tool, const json_t *args);
void		 mcp_rpc_free(struct mcp_rpc *);	/* NULL-safe */

/* The next message to send: compact JSON, no newline; NULL when none
 * is queued. Caller frees. */
char		*mcp_rpc_next(struct mcp_rpc *);

/* Is a message waiting to be sent? */
bool		 mcp_rpc_queued(const struct mcp_rpc *);

/* One message from the server, as text (a batch array is fed member by
 * member). Text that is not JSON is ignored. Returns the state. */
enum mcp_state	 mcp_rpc_feed(struct mcp_rpc *, const char *p, size_t n);

/* The transport closed before the session ended: fails it with the
 * SDK's "Connection closed" when it was still running. */
void		 mcp_rpc_closed(struct mcp_rpc *);

/* A transport failure (cause text) ends a running session. */
void		 mcp_rpc_fail(struct mcp_rpc *, const char *cause);

enum mcp_state	 mcp_rpc_state(const struct mcp_rpc *);

/* The id of our request still unanswered, -1 when none. */
int		 mcp_rpc_waiting(const struct mcp_rpc *);

/* The protocol version the server chose, "" before it answered. */
const char	*mcp_rpc_version(const struct mcp_rpc *);

/* DONE: the result as text (A4.6). FAILED: the cause; when
 * mcp_rpc_whole() says so it is the whole error message (the tool
 * reported an error), else the caller wraps it as "failed: ...". */
const char	*mcp_rpc_text(const struct mcp_rpc *);
bool		 mcp_rpc_whole(const struct mcp_rpc *);

#endif
