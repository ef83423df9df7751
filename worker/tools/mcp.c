/* mcp.c - one MCP tool call: the server's file, a transport, the session, WilmerAI's error texts. */
#include <math.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "mcp.h"
#include "mcp_xport.h"

static void
failed(const struct mcp_call *c, const char *cause, struct buf *out)
{
	buf_printf(out, "MCP call to '%s.%s' failed: %s", c->mc_server,
	    c->mc_tool, cause);
}

static void
timed_out(const struct mcp_call *c, struct buf *out)
{
	buf_printf(out, "MCP call to '%s.%s' timed out after ", c->mc_server,
	    c->mc_tool);
	xf_num_repr(out, &c->mc_timeout);
	buf_adds(out, "s (connect, initialize handshake, or tool call did "
	    "not complete).");
}

static enum mcp_end
run(const struct mcp_server *s, struct mcp_run *r)
{
	switch (s->ms_transport) {
	case MCP_STDIO:
		return mcp_stdio_run(s, r);
	case MCP_SSE:
		return mcp_sse_run(s, r);
	default:
		return mcp_http_run(s, r);
	}
}

/* One session on s: c's tool called, or (list) the tools listed. */
static enum mcp_outcome
session(const struct mcp_call *c, bool list, const struct mcp_server *s,
    const struct transport_hooks *h, struct buf *out)
{
	struct mcp_run	 r;
	double		 ms = ceil(c->mc_timeout.xn_v * 1000.0);
	enum mcp_end	 e;
	bool		 ok;

	r.mr_rpc = mcp_rpc_new(list ? NULL : c->mc_tool, c->mc_args);
	r.mr_timeout_ms = ms > 1e12 ? (long)1e12 : (long)ms;
	r.mr_deadline = clock_mono_ms() + (uint64_t)r.mr_timeout_ms;
	r.mr_hooks = h;
	e = run(s, &r);
	if (e == MCPE_CANCELLED) {
		mcp_rpc_free(r.mr_rpc);
		return MCP_CANCELLED;
	}
	if (e == MCPE_TIMEOUT)
		timed_out(c, out);
	else if (mcp_rpc_state(r.mr_rpc) == MCPS_DONE)
		buf_adds(out, mcp_rpc_text(r.mr_rpc));
	else if (mcp_rpc_whole(r.mr_rpc))
		buf_adds(out, mcp_rpc_text(r.mr_rpc));
	else
		failed(c, mcp_rpc_text(r.mr_rpc), out);
	ok = e == MCPE_ENDED && mcp_rpc_state(r.mr_rpc) == MCPS_DONE;
	mcp_rpc_free(r.mr_rpc);
	return ok ? MCP_OK : MCP_ERROR;
}

static enum mcp_outcome
call(const struct mcp_call *c, bool list, const struct transport_hooks *h,
    struct buf *out)
{
	static const struct transport_hooks	 none = { -1, 0, NULL, NULL };
	struct mcp_server	 s;
	struct buf		 err = BUF_INIT;
	enum mcp_outcome	 o;
	int			 r;

	if ((r = mcp_server_load(c->mc_confdir, c->mc_server, &s, &err)) != 0) {
		if (r == -2)
			failed(c, err.b_data, out);
		else
			buf_adds(out, err.b_data);
		buf_free(&err);
		return MCP_ERROR;
	}
	o = session(c, list, &s, h != NULL ? h : &none, out);
	mcp_server_free(&s);
	if (o == MCP_ERROR)
		log_info("mcp: %.*s", LOG_TEXTN(out->b_data,
		    out->b_len > 300 ? 300 : out->b_len));
	return o;
}

enum mcp_outcome
mcp_call_tool(const struct mcp_call *c, const struct transport_hooks *h,
    struct buf *out)
{
	return call(c, false, h, out);
}

enum mcp_outcome
mcp_list_tools(const struct mcp_call *c, const struct transport_hooks *h,
    struct buf *out)
{
	struct mcp_call	 l = *c;

	l.mc_tool = "list_tools";
	return call(&l, true, h, out);
}
