/* mcp_conf.h - one MCP server's settings: <ConfigDir>/MCPServers/<name>.json, read on every call (addendum A4.1, A4.3). */
#ifndef SLUICE_MCP_CONF_H
#define SLUICE_MCP_CONF_H

#include "../../common/buf.h"

enum mcp_transport {
	MCP_STDIO,
	MCP_SSE,
	MCP_HTTP,		/* "streamable_http" */
};

struct mcp_server {
	enum mcp_transport	  ms_transport;
	char			**ms_argv;	/* stdio: command, then args;
						   NULL-ended */
	char			**ms_envp;	/* stdio: the safe variables,
						   the file's env on top */
	char			 *ms_cwd;	/* stdio: NULL = the worker's */
	char			 *ms_url;	/* sse, streamable_http */
	char			**ms_headers;	/* "Name: value", NULL-ended */
};

/* The environment variables a stdio server inherits from the worker
 * (the MCP SDK's default environment). */
#define MCP_SAFE_ENV	{ "HOME", "LOGNAME", "PATH", "SHELL", "TERM", \
			  "USER", NULL }

/*
 * Load server name from confdir/MCPServers/name.json into s (zeroed
 * first; free with mcp_server_free). Returns 0; -1 with WilmerAI's
 * whole MCPToolCallError text in err (a bad name, no file, unreadable
 * or not JSON, a bad transport, no url); -2 with the cause of a
 * malformed field (wrong JSON type) in err, which the caller wraps in
 * "MCP call to 'S.T' failed: ", as WilmerAI's SDK fails there.
 */
int	mcp_server_load(const char *confdir, const char *name,
	    struct mcp_server *s, struct buf *err);

void	mcp_server_free(struct mcp_server *);	/* NULL-safe, idempotent */

#endif
