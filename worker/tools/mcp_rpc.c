/* mcp_rpc.c - one MCP session as a state machine: initialize, call, list; answers to the server's requests. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "mcp_rpc.h"
#include "mcp_schema.h"
#include "mcp_text.h"

#define MCP_CLIENT_VERSION	"2025-11-25"

enum { ID_INIT, ID_CALL, ID_LIST };

struct mcp_rpc {
	enum mcp_state	 r_state;
	char		*r_tool;
	json_t		*r_args;
	json_t		*r_result;	/* the tools/call result */
	json_t		*r_queue;	/* messages to send, in order */
	int		 r_wait;	/* id we wait for, -1: none */
	bool		 r_whole;
	char		 r_version[32];
	struct buf	 r_text;
};

static const char *const versions[] = { "2024-11-05", "2025-03-26",
	"2025-06-18", "2025-11-25", NULL };

static void
queue(struct mcp_rpc *r, json_t *msg)
{
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	json_array_append_new(r->r_queue, msg);
}

static void
request(struct mcp_rpc *r, int id, const char *method, json_t *params)
{
	json_t	*m = json_pack("{s:i, s:s}", "id", id, "method", method);

	if (params != NULL)
		json_object_set_new(m, "params", params);
	queue(r, m);
	r->r_wait = id;
}

struct mcp_rpc *
mcp_rpc_new(const char *tool, const json_t *args)
{
	struct mcp_rpc	*r = xcalloc(1, sizeof(*r));

	r->r_tool = tool != NULL ? xstrdup(tool) : NULL;
	r->r_args = json_deep_copy(args);
	r->r_queue = json_array();
	buf_init(&r->r_text);
	request(r, ID_INIT, "initialize", json_pack("{s:s, s:{}, s:{s:s, s:s}}",
	    "protocolVersion", MCP_CLIENT_VERSION, "capabilities",
	    "clientInfo", "name", "mcp", "version", "0.1.0"));
	return r;
}

void
mcp_rpc_free(struct mcp_rpc *r)
{
	if (r == NULL)
		return;
	free(r->r_tool);
	json_decref(r->r_args);
	json_decref(r->r_result);
	json_decref(r->r_queue);
	buf_free(&r->r_text);
	free(r);
}

char *
mcp_rpc_next(struct mcp_rpc *r)
{
	char	*s;

	if (json_array_size(r->r_queue) == 0)
		return NULL;
	s = jsonw_dumps(json_array_get(r->r_queue, 0), JSONW_COMPACT);
	json_array_remove(r->r_queue, 0);
	return s;
}

bool
mcp_rpc_queued(const struct mcp_rpc *r)
{
	return json_array_size(r->r_queue) > 0;
}

void
mcp_rpc_fail(struct mcp_rpc *r, const char *cause)
{
	if (r->r_state != MCPS_RUNNING)
		return;
	buf_reset(&r->r_text);
	buf_adds(&r->r_text, cause);
	r->r_state = MCPS_FAILED;
	r->r_wait = -1;
}

void
mcp_rpc_closed(struct mcp_rpc *r)
{
	mcp_rpc_fail(r, "Connection closed");
}

/* A request of the server's: ping gets {}, the rest an error (we
 * declare no capabilities). */
static void
on_request(struct mcp_rpc *r, const json_t *m)
{
	const char	*method;
	json_t		*a = json_pack("{s:O}", "id", json_object_get(m, "id"));

	method = json_string_value(json_object_get(m, "method"));
	if (strcmp(method, "ping") == 0)
		json_object_set_new(a, "result", json_object());
	else
		json_object_set_new(a, "error", json_pack("{s:i, s:s}",
		    "code", -32601, "message", "Method not found"));
	queue(r, a);
}

static void
on_init(struct mcp_rpc *r, const json_t *res)
{
	const char	*v = json_string_value(json_object_get(res,
			    "protocolVersion"));
	struct buf	 why = BUF_INIT;
	size_t		 i;

	if (v == NULL) {
		mcp_rpc_fail(r, "the initialize result has no "
		    "protocolVersion");
		return;
	}
	for (i = 0; versions[i] != NULL && strcmp(versions[i], v) != 0; i++)
		;
	if (versions[i] == NULL) {
		buf_printf(&why, "Unsupported protocol version from the "
		    "server: %s", v);
		mcp_rpc_fail(r, why.b_data);
		buf_free(&why);
		return;
	}
	snprintf(r->r_version, sizeof(r->r_version), "%s", v);
	queue(r, json_pack("{s:s}", "method", "notifications/initialized"));
	if (r->r_tool == NULL)
		request(r, ID_CALL, "tools/list", NULL);
	else
		request(r, ID_CALL, "tools/call", json_pack("{s:s, s:O}",
		    "name", r->r_tool, "arguments", r->r_args));
}

static void
on_call(struct mcp_rpc *r, json_t *res)
{
	if (!json_is_object(res)) {
		mcp_rpc_fail(r, "the tools/call result is not an object");
		return;
	}
	r->r_result = json_incref(res);
	if (json_is_true(json_object_get(res, "isError"))) {
		buf_reset(&r->r_text);
		buf_printf(&r->r_text, "MCP tool '%s' reported an error: ",
		    r->r_tool);
		mcp_text_content(json_object_get(res, "content"), &r->r_text);
		r->r_state = MCPS_FAILED;
		r->r_whole = true;
		r->r_wait = -1;
		return;
	}
	request(r, ID_LIST, "tools/list", NULL);
}

/* The listed tool's output schema, when it declares one, must accept
 * the structured content. */
static void
on_list(struct mcp_rpc *r, const json_t *res)
{
	struct buf	 why = BUF_INIT, reason = BUF_INIT;
	json_t		*tools = json_object_get(res, "tools"), *t = NULL, *sc;
	size_t		 i;

	json_array_foreach(tools, i, t)
		if (json_is_string(json_object_get(t, "name")) && strcmp(
		    json_string_value(json_object_get(t, "name")),
		    r->r_tool) == 0)
			break;
	if (i == json_array_size(tools))
		log_warnx("mcp: tool '%s' is not in the server's tools/list",
		    r->r_tool);
	else if (json_is_object(json_object_get(t, "outputSchema"))) {
		sc = json_object_get(r->r_result, "structuredContent");
		if (sc == NULL || json_is_null(sc))
			buf_printf(&why, "Tool %s has an output schema but "
			    "did not return structured content", r->r_tool);
		else if (mcp_schema_check(json_object_get(t, "outputSchema"),
		    sc, &reason) == -1)
			buf_printf(&why, "Invalid structured content returned "
			    "by tool %s: %s", r->r_tool, reason.b_data);
	}
	buf_free(&reason);
	if (why.b_len > 0) {
		mcp_rpc_fail(r, why.b_data);
		buf_free(&why);
		return;
	}
	buf_reset(&r->r_text);
	mcp_text_result(r->r_result, &r->r_text);
	r->r_state = MCPS_DONE;
	r->r_wait = -1;
}

/* The tools of a tools/list result, named, as OpenAI-style function
 * schemas: {name: {"llm_schema": {...}}}. */
static void
on_listed(struct mcp_rpc *r, const json_t *res)
{
	json_t		*all = json_object(), *t, *d, *p;
	const char	*name;
	size_t		 i;
	char		*def;

	json_array_foreach(json_object_get(res, "tools"), i, t) {
		name = json_string_value(json_object_get(t, "name"));
		if (name == NULL || *name == '\0') {
			log_warnx("mcp: a tool without a name; skipped");
			continue;
		}
		d = json_object_get(t, "description");
		p = json_object_get(t, "inputSchema");
		def = xasprintf("Execute %s", name);
		json_object_set_new(all, name, json_pack("{s:{s:s, s:s, s:o, "
		    "s:o}}", "llm_schema", "type", "function", "name", name,
		    "description", pyfmt_truthy(d) ? json_incref(d) :
		    json_string(def), "parameters", pyfmt_truthy(p) ?
		    json_incref(p) : json_pack("{s:s, s:{}}", "type", "object",
		    "properties")));
		free(def);
	}
	buf_reset(&r->r_text);
	jsonw_dump(&r->r_text, all, JSONW_COMPACT);
	json_decref(all);
	r->r_state = MCPS_DONE;
	r->r_wait = -1;
}

/* An answer to one of our requests. */
static void
on_response(struct mcp_rpc *r, const json_t *m)
{
	json_t		*id = json_object_get(m, "id");
	json_t		*e = json_object_get(m, "error");
	const char	*msg;

	if (!json_is_integer(id) || json_integer_value(id) != r->r_wait)
		return;
	if (e != NULL) {
		msg = json_string_value(json_object_get(e, "message"));
		mcp_rpc_fail(r, msg != NULL ? msg : "error response");
		return;
	}
	switch (r->r_wait) {
	case ID_INIT:
		on_init(r, json_object_get(m, "result"));
		break;
	case ID_CALL:
		if (r->r_tool == NULL)
			on_listed(r, json_object_get(m, "result"));
		else
			on_call(r, json_object_get(m, "result"));
		break;
	default:
		on_list(r, json_object_get(m, "result"));
		break;
	}
}

static void
feed_one(struct mcp_rpc *r, json_t *m)
{
	if (!json_is_object(m) || r->r_state != MCPS_RUNNING)
		return;
	if (json_is_string(json_object_get(m, "method"))) {
		if (json_object_get(m, "id") != NULL)
			on_request(r, m);
		return;
	}
	on_response(r, m);
}

enum mcp_state
mcp_rpc_feed(struct mcp_rpc *r, const char *p, size_t n)
{
	json_t	*m, *e;
	size_t	 i;

	if ((m = json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    NULL)) == NULL) {
		log_debug("mcp: ignoring a message that is not JSON");
		return r->r_state;
	}
	if (json_is_array(m))
		json_array_foreach(m, i, e)
			feed_one(r, e);
	else
		feed_one(r, m);
	json_decref(m);
	return r->r_state;
}

enum mcp_state
mcp_rpc_state(const struct mcp_rpc *r)
{
	return r->r_state;
}

int
mcp_rpc_waiting(const struct mcp_rpc *r)
{
	return r->r_state == MCPS_RUNNING ? r->r_wait : -1;
}

const char *
mcp_rpc_version(const struct mcp_rpc *r)
{
	return r->r_version;
}

const char *
mcp_rpc_text(const struct mcp_rpc *r)
{
	return r->r_text.b_len > 0 ? r->r_text.b_data : "";
}

bool
mcp_rpc_whole(const struct mcp_rpc *r)
{
	return r->r_whole;
}
