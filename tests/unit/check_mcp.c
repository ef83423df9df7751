/* check_mcp.c - the MCPToolCall node against scripted MCP servers (tests/mcp/fake_server.py), hostile ones, and @modelcontextprotocol/server-everything. */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../worker/llm/transport.h"
#include "../../worker/tools/mcp.h"
#include "../../worker/nodes/nodes.h"
#include "../testmain.h"
#include "nodefix.h"

/* Every test (each in its own process) has an MCPToolCall node in a
 * scratch config folder (nodefix.h, variable name=Ann) whose server
 * "fake" is tests/mcp/fake_server.py over stdio. */
static struct nodefix	 F;
static char		 fake[640];	/* the script's path */
static char		 python[640];	/* python3 itself, not a shim
					   (pyenv's adds variables) */
static pid_t		 mock_pid = -1;
static int		 mock_port;

static void
setup(void)
{
	char	 cwd[512];
	FILE	*p;

	nodefix_init(&F, false);
	ck_assert_int_eq(transport_init(), 0);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	snprintf(fake, sizeof(fake), "%s/tests/mcp/fake_server.py", cwd);
	ck_assert_ptr_nonnull(p = popen("python3 -c 'import sys; "
	    "print(sys.executable)'", "r"));
	ck_assert_ptr_nonnull(fgets(python, sizeof(python), p));
	python[strcspn(python, "\n")] = '\0';
	pclose(p);
	nodefix_set(&F, "{s:s, s:s, s:s}", "type", "MCPToolCall", "server",
	    "fake", "tool", "echo");
}

static void
teardown(void)
{
	if (mock_pid != -1)
		it_double_stop(mock_pid);
	nodefix_free(&F);
	transport_cleanup();
}

/* MCPServers/name.json holding text. */
static void
server_file(const char *name, const char *text)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/MCPServers", F.nf_it.it_dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/MCPServers/%s.json", F.nf_it.it_dir,
	    name);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* Server "fake": the script over stdio with extra arguments (a JSON
 * list's members, "" for none) and extra fields ("" or ", ..."). */
static void
fake_stdio(const char *args, const char *extra)
{
	char	 t[8192];

	snprintf(t, sizeof(t), "{\"transport\": \"stdio\", \"command\": "
	    "\"%s\", \"args\": [\"%s\"%s%s]%s}", python, fake,
	    *args ? ", " : "", args, extra);
	server_file("fake", t);
}

/* Run the node; its output into out. */
static int
run(struct buf *out, struct wresult *res)
{
	bool	 streamed = false;

	memset(res, 0, sizeof(*res));
	buf_reset(out);
	return node_mcp.nt_run(&F.nf_x, out, &streamed, res);
}

/* The node succeeds with output want. */
static void
ck_output(const char *want)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_msg(run(&out, &res) == 0, "%s", res.r_message);
	buf_addc(&out, '\0');
	ck_assert_str_eq(out.b_data, want);
	buf_free(&out);
}

/* The node fails (HTTP 500) with want as its message after the node's
 * name; with onError "return" the same text is its output. */
static void
ck_error(const char *want)
{
	const char	*head = "workflow 'wf' node 3 (MCPToolCall): ";
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_int_eq(res.r_http, 500);
	ck_assert_msg(strncmp(res.r_message, head, strlen(head)) == 0,
	    "message: %s", res.r_message);
	ck_assert_str_eq(res.r_message + strlen(head), want);
	buf_free(&out);
}

static void
ck_error_both(const char *want)
{
	ck_error(want);
	nodefix_set(&F, "{s:s}", "onError", "return");
	ck_output(want);
	nodefix_set(&F, "{s:s}", "onError", "raise");
}

/* A ValueError: fails whatever onError says. */
static void
ck_value_error(const char *want)
{
	ck_error(want);
	nodefix_set(&F, "{s:s}", "onError", "return");
	ck_error(want);
	json_object_del(F.nf_node, "onError");
}

/* ---- A4.2: the node's fields ---- */

START_TEST(fields)
{
	json_object_del(F.nf_node, "server");
	ck_value_error("MCPToolCall node requires a 'server' field.");
	nodefix_set(&F, "{s:s}", "server", "");
	ck_value_error("MCPToolCall node requires a 'server' field.");
	nodefix_set(&F, "{s:s, s:i}", "server", "fake", "tool", 0);
	ck_value_error("MCPToolCall node requires a 'tool' field.");
	nodefix_set(&F, "{s:s, s:i}", "tool", "echo", "timeout", 0);
	ck_value_error("MCPToolCall 'timeout' must be a positive number of "
	    "seconds; got 0.");
	nodefix_set(&F, "{s:b}", "timeout", 1);
	ck_value_error("MCPToolCall 'timeout' must be a number of seconds; "
	    "got True.");
	nodefix_set(&F, "{s:s}", "timeout", "soon");
	ck_value_error("MCPToolCall 'timeout' must be a number of seconds; "
	    "got 'soon'.");
	json_object_del(F.nf_node, "timeout");
	nodefix_set(&F, "{s:s}", "onError", "ignore");
	ck_error("MCPToolCall 'onError' must be one of ('raise', 'return'); "
	    "got 'ignore'.");
	nodefix_set(&F, "{s:s, s:[i]}", "onError", "return", "arguments", 1);
	ck_error("MCPToolCall 'arguments' must be a JSON object.");
	ck_assert(node_mcp.nt_word_stream);
}
END_TEST

/* Every string at any depth is filled in; keys, numbers, booleans and
 * null are not. */
START_TEST(arguments)
{
	fake_stdio("", "");
	nodefix_set(&F, "{s:{s:s, s:i, s:[s, {s:s}], s:b, s:n, s:f}}",
	    "arguments", "a", "{name}", "n", 5, "l", "x {name}", "{name}",
	    "{name}", "b", 1, "z", "r", 1.5);
	ck_output("{\"a\": \"Ann\", \"b\": true, \"l\": [\"x Ann\", "
	    "{\"{name}\": \"Ann\"}], \"n\": 5, \"r\": 1.5, \"z\": null}");
	nodefix_set(&F, "{s:n}", "arguments");
	ck_output("{}");
	json_object_del(F.nf_node, "arguments");
	ck_output("{}");
	nodefix_set(&F, "{s:s, s:s}", "server", "{name}", "tool", "x{name}");
	server_file("Ann", "{\"transport\": \"sse\"}");
	ck_error("MCP server 'Ann' (sse) requires a 'url' field.");
}
END_TEST

/* ---- A4.3: the server's name and file ---- */

START_TEST(names)
{
	static const char *const bad[] = { "../secrets", "dir/server",
		"dir\\server", ".", "..", "C:evil", "C:", NULL };
	char		 want[256];
	size_t		 i;

	for (i = 0; bad[i] != NULL; i++) {
		nodefix_set(&F, "{s:s}", "server", bad[i]);
		snprintf(want, sizeof(want), "Invalid MCP server name '%s': "
		    "must not contain path separators or a drive-letter "
		    "prefix.", strcmp(bad[i], "dir\\server") == 0 ?
		    "dir\\\\server" : bad[i]);
		ck_error_both(want);
	}
}
END_TEST

START_TEST(files)
{
	nodefix_set(&F, "{s:s}", "server", "nowhere");
	ck_error_both("MCP server config 'nowhere' was not found under "
	    "Public/Configs/MCPServers/.");
	server_file("fake", "{\"transport\": ");
	nodefix_set(&F, "{s:s}", "server", "fake");
	ck_error_both("MCP server config 'fake' could not be loaded: "
	    "unexpected token near end of file: line 1 column 14");
	server_file("fake", "{}");
	ck_error_both("MCP server 'fake' has invalid or missing 'transport' "
	    "(must be one of ('stdio', 'sse', 'streamable_http'); got "
	    "None).");
	server_file("fake", "{\"transport\": \"STDIO\"}");
	ck_error_both("MCP server 'fake' has invalid or missing 'transport' "
	    "(must be one of ('stdio', 'sse', 'streamable_http'); got "
	    "'STDIO').");
	server_file("fake", "{\"transport\": \"streamable_http\", "
	    "\"url\": \"\"}");
	ck_error_both("MCP server 'fake' (streamable_http) requires a 'url' "
	    "field.");
	server_file("fake", "{\"transport\": \"stdio\", \"args\": 3}");
	ck_error_both("MCP call to 'fake.echo' failed: 'args' must be a list "
	    "of strings");
}
END_TEST

/* ---- A4.5, A4.6 over stdio ---- */

START_TEST(results)
{
	fake_stdio("", "");
	nodefix_set(&F, "{s:s}", "tool", "two");
	ck_output("hello world");
	nodefix_set(&F, "{s:s}", "tool", "empty");
	ck_output("");
	nodefix_set(&F, "{s:s}", "tool", "structured");
	ck_output("{\"n\": 1, \"s\": \"\\u00e9\"}");
	nodefix_set(&F, "{s:s}", "tool", "image");
	ck_output("{\"type\": \"image\", \"data\": \"iVBO\", \"mimeType\": "
	    "\"image/png\", \"annotations\": null, \"meta\": null}");
}
END_TEST

START_TEST(failures)
{
	fake_stdio("", "");
	nodefix_set(&F, "{s:s}", "tool", "fail");
	ck_error_both("MCP tool 'fail' reported an error: boom");
	nodefix_set(&F, "{s:s}", "tool", "badstruct");
	ck_error_both("MCP call to 'fake.badstruct' failed: Invalid "
	    "structured content returned by tool badstruct: 'n' is a "
	    "required property");
	nodefix_set(&F, "{s:s}", "tool", "nostruct");
	ck_error_both("MCP call to 'fake.nostruct' failed: Tool nostruct has "
	    "an output schema but did not return structured content");
	nodefix_set(&F, "{s:s}", "tool", "rpcerror");
	ck_error_both("MCP call to 'fake.rpcerror' failed: Unknown tool: "
	    "rpcerror");
	nodefix_set(&F, "{s:s}", "tool", "crash");
	ck_error_both("MCP call to 'fake.crash' failed: Connection closed");
	fake_stdio("\"--version\", \"1999-01-01\"", "");
	nodefix_set(&F, "{s:s}", "tool", "echo");
	ck_error_both("MCP call to 'fake.echo' failed: Unsupported protocol "
	    "version from the server: 1999-01-01");
}
END_TEST

/* The server's requests are answered: ping with {}, the rest with an
 * error; its notifications are ignored. */
START_TEST(server_requests)
{
	fake_stdio("", "");
	nodefix_set(&F, "{s:s}", "tool", "ping");
	ck_output("[{\"id\": \"srv-1\", \"jsonrpc\": \"2.0\", \"result\": {}}, "
	    "{\"error\": {\"code\": -32601, \"message\": \"Method not "
	    "found\"}, \"id\": \"srv-2\", \"jsonrpc\": \"2.0\"}]");
}
END_TEST

START_TEST(spawn_failure)
{
	server_file("fake", "{\"transport\": \"stdio\", \"command\": "
	    "\"/nonexistent/mcp-server\"}");
	nodefix_set(&F, "{s:s}", "onError", "return");
	{
		struct buf	 out = BUF_INIT;
		struct wresult	 res;

		ck_assert_int_eq(run(&out, &res), 0);
		buf_addc(&out, '\0');
		ck_assert_msg(strncmp(out.b_data, "MCP call to 'fake.echo' "
		    "failed: ", 32) == 0 && out.b_len > 33, "%s", out.b_data);
		buf_free(&out);
	}
}
END_TEST

/* ---- A4.1: what a stdio server inherits ---- */

/* One of the variables a stdio server gets from the worker? */
static bool
safe_var(const char *k)
{
	static const char *const safe[] = { "HOME", "LOGNAME", "PATH",
		"SHELL", "TERM", "USER", NULL };
	size_t			 i;

	for (i = 0; safe[i] != NULL; i++)
		if (strcmp(k, safe[i]) == 0)
			return true;
	return false;
}

START_TEST(environment)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*v, *env, *e;
	const char	*k;

	setenv("SLUICE_SECRET", "s3cret", 1);
	setenv("SHELL", "() { :; }", 1);
	setenv("USER", "tester", 1);
	fake_stdio("", ", \"env\": {\"EXTRA\": \"x\", \"HOME\": \"/nowhere\"}, "
	    "\"cwd\": \"/tmp\"");
	nodefix_set(&F, "{s:s}", "tool", "env");
	ck_assert_msg(run(&out, &res) == 0, "%s", res.r_message);
	buf_addc(&out, '\0');
	ck_assert_ptr_nonnull(v = json_loads(out.b_data, 0, NULL));
	ck_assert_str_eq(json_string_value(json_object_get(v, "cwd")), "/tmp");
	env = json_object_get(v, "env");
	json_object_foreach(env, k, e)
		ck_assert_msg(safe_var(k) || strcmp(k, "EXTRA") == 0 ||
		    strcmp(k, "LC_CTYPE") == 0, "the server saw %s", k);
	ck_assert_str_eq(json_string_value(json_object_get(env, "HOME")),
	    "/nowhere");
	ck_assert_str_eq(json_string_value(json_object_get(env, "USER")),
	    "tester");
	ck_assert_str_eq(json_string_value(json_object_get(env, "EXTRA")), "x");
	ck_assert_ptr_null(json_object_get(env, "SHELL"));
	json_decref(v);
	buf_free(&out);
}
END_TEST

/* ---- hostile servers: bounded in time and memory, nothing left ---- */

START_TEST(hang_handshake)
{
	uint64_t	 t0 = clock_mono_ms();

	fake_stdio("\"--hang\"", "");
	nodefix_set(&F, "{s:i}", "timeout", 2);
	ck_error_both("MCP call to 'fake.echo' timed out after 2s (connect, "
	    "initialize handshake, or tool call did not complete).");
	ck_assert_uint_lt(clock_mono_ms() - t0, 2 * 3500);
	nodefix_set(&F, "{s:f}", "timeout", 0.5);
	ck_error("MCP call to 'fake.echo' timed out after 0.5s (connect, "
	    "initialize handshake, or tool call did not complete).");
}
END_TEST

START_TEST(flood)
{
	fake_stdio("\"--flood\"", "");
	ck_error_both("MCP call to 'fake.echo' failed: a line of the server's "
	    "output is longer than 16 MiB");
}
END_TEST

/* Is pid gone: no such process, or a zombie of someone else's? */
static bool
gone(pid_t pid)
{
	char	 path[64], st = '?';
	FILE	*f;
	int	 i;

	for (i = 0; i < 50; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((f = fopen(path, "r")) == NULL)
			return true;
		if (fscanf(f, "%*d (%*[^)]) %c", &st) != 1)
			st = '?';
		fclose(f);
		if (st == 'Z' || st == 'X')
			return true;
		usleep(20000);
	}
	return false;
}

/* It ignores its stdin's end and SIGTERM, and so does its child: both
 * are SIGKILLed with their group, and the server is reaped. */
START_TEST(stubborn)
{
	char	 pidfile[600], args[700];
	int	 pid = 0, kid = 0;
	FILE	*f;

	snprintf(pidfile, sizeof(pidfile), "%s/pids", F.nf_it.it_dir);
	snprintf(args, sizeof(args), "\"--stubborn\", \"%s\"", pidfile);
	fake_stdio(args, "");
	nodefix_set(&F, "{s:i}", "timeout", 1);
	ck_error("MCP call to 'fake.echo' timed out after 1s (connect, "
	    "initialize handshake, or tool call did not complete).");
	ck_assert_ptr_nonnull(f = fopen(pidfile, "r"));
	ck_assert_int_eq(fscanf(f, "%d %d", &pid, &kid), 2);
	fclose(f);
	ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	ck_assert(gone(pid));
	ck_assert(gone(kid));
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
}
END_TEST

/* No descriptor is left open after calls that succeed and fail. */
START_TEST(no_leaks)
{
	int	 before, after;

	fake_stdio("", "");
	before = dup(0);
	close(before);
	ck_output("{}");
	nodefix_set(&F, "{s:s}", "tool", "crash");
	ck_error("MCP call to 'fake.crash' failed: Connection closed");
	after = dup(0);
	close(after);
	ck_assert_int_eq(before, after);
}
END_TEST

/* A request cancelled mid-call ends the node at once, the child with it. */
START_TEST(cancel)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	uint64_t	 t0 = clock_mono_ms();

	fake_stdio("", "");
	nodefix_set(&F, "{s:s}", "tool", "slow");
	F.nf_rq.fr_cancel_at = 3;
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_lt(clock_mono_ms() - t0, 3000);
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	buf_free(&out);
}
END_TEST

/* ---- streamable HTTP against the script ---- */

static json_t *
mock_log(void)
{
	struct it_resp	 r;
	char		 url[128];
	json_t		*v;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/_log", mock_port);
	ck_assert_int_eq(it_request_url("GET", url, NULL, NULL, &r), 0);
	v = it_json(r.r_body.b_data);
	it_resp_free(&r);
	return v;
}

/* Server "fake" at path of the script over HTTP (mode: --json, --sse
 * or --legacy, which is the "sse" transport). */
static void
fake_http(const char *mode, const char *path)
{
	const char	*args[] = { "--http", mode, NULL };
	char		 t[256];

	mock_pid = it_double_start("mock-mcp", args, &mock_port);
	snprintf(t, sizeof(t), "{\"transport\": \"%s\", \"url\": "
	    "\"http://127.0.0.1:%d%s\", \"headers\": {\"Authorization\": "
	    "\"Bearer t\"}}", strcmp(mode, "--legacy") == 0 ? "sse" :
	    "streamable_http", mock_port, path);
	server_file("fake", t);
}

static const char *
hdr(json_t *req, const char *name)
{
	const char	*v = json_string_value(json_object_get(json_object_get(
			    req, "headers"), name));

	return v != NULL ? v : "";
}

static void
http_call(const char *mode)
{
	json_t	*log, *r;
	size_t	 i;

	fake_http(mode, "/mcp");
	nodefix_set(&F, "{s:{s:s}}", "arguments", "q", "{name}");
	ck_output("{\"q\": \"Ann\"}");
	log = mock_log();
	ck_assert_int_eq(json_array_size(log), 5);
	json_array_foreach(log, i, r) {
		ck_assert_str_eq(json_string_value(json_object_get(r,
		    "method")), i < 4 ? "POST" : "DELETE");
		ck_assert_str_eq(hdr(r, "authorization"), "Bearer t");
		ck_assert_str_eq(hdr(r, "mcp-session-id"), i == 0 ? "" :
		    "sess-42");
		ck_assert_str_eq(hdr(r, "mcp-protocol-version"), i == 0 ? "" :
		    "2025-06-18");
		if (i < 4) {
			ck_assert_str_eq(hdr(r, "accept"),
			    "application/json, text/event-stream");
			ck_assert_str_eq(hdr(r, "content-type"),
			    "application/json");
		}
	}
	ck_assert(strstr(json_string_value(json_object_get(json_array_get(log,
	    1), "body")), "notifications/initialized") != NULL);
	json_decref(log);
}

START_TEST(http_json)
{
	http_call("--json");
}
END_TEST

START_TEST(http_sse)
{
	http_call("--sse");
	nodefix_set(&F, "{s:s}", "tool", "structured");
	ck_output("{\"n\": 1, \"s\": \"\\u00e9\"}");
}
END_TEST

START_TEST(http_errors)
{
	char	 t[128];

	fake_http("--json", "/denied");
	snprintf(t, sizeof(t), "MCP call to 'fake.echo' failed: HTTP 401 "
	    "from POST http://127.0.0.1:%d/denied", mock_port);
	ck_error_both(t);
	snprintf(t, sizeof(t), "{\"transport\": \"streamable_http\", \"url\": "
	    "\"http://127.0.0.1:%d/mcp\"}", it_dead_port());
	server_file("fake", t);
	nodefix_set(&F, "{s:s}", "onError", "return");
	{
		struct buf	 out = BUF_INIT;
		struct wresult	 res;

		ck_assert_int_eq(run(&out, &res), 0);
		buf_addc(&out, '\0');
		ck_assert_msg(strstr(out.b_data, "MCP call to 'fake.echo' "
		    "failed: ") == out.b_data, "%s", out.b_data);
		buf_free(&out);
	}
}
END_TEST

/* A slow tool over HTTP: the deadline and a cancel end the call. */
START_TEST(http_slow)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	uint64_t	 t0;
	int		 i;

	for (i = 0; i < 2; i++) {
		fake_http(i == 0 ? "--json" : "--legacy", i == 0 ? "/mcp" :
		    "/sse");
		nodefix_set(&F, "{s:s, s:i}", "tool", "slow", "timeout", 1);
		t0 = clock_mono_ms();
		ck_error("MCP call to 'fake.slow' timed out after 1s (connect, "
		    "initialize handshake, or tool call did not complete).");
		ck_assert_uint_lt(clock_mono_ms() - t0, 2500);
		json_object_del(F.nf_node, "timeout");
		F.nf_rq.fr_cancel_at = F.nf_rq.fr_wakes + F.nf_rq.fr_stops + 4;
		t0 = clock_mono_ms();
		ck_assert_int_eq(run(&out, &res), -1);
		ck_assert_int_eq(res.r_status, RQ_CANCELLED);
		ck_assert_uint_lt(clock_mono_ms() - t0, 2500);
		F.nf_rq.fr_cancel_at = 0;
		it_double_stop(mock_pid);
		mock_pid = -1;
	}
	buf_free(&out);
}
END_TEST

/* The legacy HTTP+SSE transport: a GET stream, POSTs beside it. */
START_TEST(legacy_sse)
{
	json_t	*log, *r;
	size_t	 i;

	fake_http("--legacy", "/sse");
	nodefix_set(&F, "{s:{s:s}}", "arguments", "q", "{name}");
	ck_output("{\"q\": \"Ann\"}");
	log = mock_log();
	ck_assert_int_eq(json_array_size(log), 5);
	json_array_foreach(log, i, r) {
		ck_assert_str_eq(json_string_value(json_object_get(r, "path")),
		    i == 0 ? "/sse" : "/messages?session_id=s1");
		ck_assert_str_eq(hdr(r, "authorization"), "Bearer t");
	}
	ck_assert_str_eq(hdr(json_array_get(log, 0), "accept"),
	    "text/event-stream");
	json_decref(log);
	nodefix_set(&F, "{s:s}", "tool", "structured");
	ck_output("{\"n\": 1, \"s\": \"\\u00e9\"}");
	nodefix_set(&F, "{s:s}", "tool", "fail");
	ck_error_both("MCP tool 'fail' reported an error: boom");
	nodefix_set(&F, "{s:s}", "tool", "crash");
	ck_error_both("MCP call to 'fake.crash' failed: Connection closed");
}
END_TEST

START_TEST(legacy_sse_origin)
{
	fake_http("--legacy", "/evil");
	ck_error_both("MCP call to 'fake.echo' failed: Endpoint origin does "
	    "not match connection origin: http://127.0.0.2:1/messages");
}
END_TEST

/* ---- A4.8: list_tools ---- */

/* The server's tools as mcp_list_tools gives them, or its error. */
static enum mcp_outcome
list_tools(const char *server, struct buf *out)
{
	struct mcp_call	 c = { F.nf_it.it_dir, server, NULL, NULL,
			    { 5, true } };

	buf_reset(out);
	return mcp_list_tools(&c, NULL, out);
}

START_TEST(list_tools_fake)
{
	struct buf	 out = BUF_INIT;
	json_t		*v;

	fake_stdio("", "");
	ck_assert_int_eq(list_tools("fake", &out), MCP_OK);
	buf_addc(&out, '\0');
	ck_assert_ptr_nonnull(v = json_loads(out.b_data, 0, NULL));
	ck_assert_uint_eq(json_object_size(v), 12);
	json_decref(v);
	ck_assert_ptr_nonnull(strstr(out.b_data, "\"echo\":{\"llm_schema\":"
	    "{\"type\":\"function\",\"name\":\"echo\",\"description\":"
	    "\"Echo the arguments\",\"parameters\":{\"type\":\"object\"}}}"));
	ck_assert_ptr_nonnull(strstr(out.b_data, "\"two\":{\"llm_schema\":"
	    "{\"type\":\"function\",\"name\":\"two\",\"description\":"
	    "\"Execute two\",\"parameters\":{\"type\":\"object\","
	    "\"properties\":{}}}}"));
	ck_assert_int_eq(list_tools("nowhere", &out), MCP_ERROR);
	buf_addc(&out, '\0');
	ck_assert_str_eq(out.b_data, "MCP server config 'nowhere' was not "
	    "found under Public/Configs/MCPServers/.");
	fake_stdio("\"--hang\"", "");
	ck_assert_int_eq(list_tools("fake", &out), MCP_ERROR);
	buf_addc(&out, '\0');
	ck_assert_str_eq(out.b_data, "MCP call to 'fake.list_tools' timed out "
	    "after 5s (connect, initialize handshake, or tool call did not "
	    "complete).");
	buf_free(&out);
}
END_TEST

/* ---- the reference server, when node and the package are there ---- */

/* Server "everything" over stdio; false (test skipped) without it. */
static bool
everything(void)
{
	char	 cwd[512], js[1024], t[2048];

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	snprintf(js, sizeof(js), "%s/tests/clients/node_modules/"
	    "@modelcontextprotocol/server-everything/dist/index.js", cwd);
	if (access(js, R_OK) != 0 || system("node --version >/dev/null "
	    "2>&1") != 0) {
		fprintf(stderr, "check_mcp: SKIPPED: node or "
		    "@modelcontextprotocol/server-everything is missing (run "
		    "npm ci in tests/clients)\n");
		return false;
	}
	snprintf(t, sizeof(t), "{\"transport\": \"stdio\", \"command\": "
	    "\"node\", \"args\": [\"%s\", \"stdio\"]}", js);
	server_file("everything", t);
	nodefix_set(&F, "{s:s}", "server", "everything");
	return true;
}

/* server-everything listening over HTTP (mode "streamableHttp" or
 * "sse") on a free port; its pid, or -1 (skipped) without it. */
static pid_t
everything_listen(const char *mode, int *port)
{
	char		 js[1024], cwd[512], ps[16];
	struct it_resp	 r;
	char		 url[64];
	pid_t		 pid;
	int		 i;
	bool		 up;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	snprintf(js, sizeof(js), "%s/tests/clients/node_modules/"
	    "@modelcontextprotocol/server-everything/dist/index.js", cwd);
	if (!everything())
		return -1;
	*port = it_dead_port();
	snprintf(ps, sizeof(ps), "%d", *port);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL ||
		    freopen("/dev/null", "w", stderr) == NULL)
			_exit(126);
		setenv("PORT", ps, 1);
		execlp("node", "node", js, mode, (char *)NULL);
		_exit(127);
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", *port);
	for (i = 0; i < 100; i++) {
		up = it_request_url("GET", url, NULL, NULL, &r) == 0;
		it_resp_free(&r);
		if (up)
			return pid;
		usleep(100000);
	}
	ck_abort_msg("server-everything did not listen");
	return -1;
}

static void
everything_end(pid_t pid)
{
	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

static void
everything_http_call(const char *mode, const char *transport,
    const char *path)
{
	char	 t[256];
	int	 port;
	pid_t	 pid;

	if ((pid = everything_listen(mode, &port)) == -1)
		return;
	snprintf(t, sizeof(t), "{\"transport\": \"%s\", \"url\": "
	    "\"http://127.0.0.1:%d%s\"}", transport, port, path);
	server_file("everything", t);
	nodefix_set(&F, "{s:{s:s}}", "arguments", "message", "hi {name}");
	ck_output("Echo: hi Ann");
	nodefix_set(&F, "{s:s, s:{s:i, s:i}}", "tool", "get-sum", "arguments",
	    "a", 2, "b", 3);
	ck_output("The sum of 2 and 3 is 5.");
	everything_end(pid);
}

/* The major version of node on PATH, 0 when there is none. */
static int
node_major(void)
{
	FILE	*p = popen("node --version 2>/dev/null", "r");
	int	 major = 0;

	if (p == NULL)
		return 0;
	if (fscanf(p, "v%d", &major) != 1)
		major = 0;
	pclose(p);
	return major;
}

START_TEST(everything_http)
{
	/* Under Debian 12's Node 18 server-everything answers its
	 * streamable-HTTP initialize with HTTP 400 (its stdio and SSE
	 * transports work there); the transport is tested against
	 * tests/mcp/fake_server.py either way. */
	if (node_major() < 20) {
		fprintf(stderr, "check_mcp: SKIPPED: server-everything's "
		    "streamable HTTP needs Node 20 or later here\n");
		return;
	}
	everything_http_call("streamableHttp", "streamable_http", "/mcp");
}
END_TEST

START_TEST(everything_sse)
{
	everything_http_call("sse", "sse", "/sse");
}
END_TEST

START_TEST(everything_tools)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	if (!everything())
		return;
	nodefix_set(&F, "{s:{s:s}}", "arguments", "message", "hi {name}");
	ck_output("Echo: hi Ann");
	nodefix_set(&F, "{s:s, s:{s:i, s:f}}", "tool", "get-sum", "arguments",
	    "a", 2, "b", 3.5);
	ck_output("The sum of 2 and 3.5 is 5.5.");
	nodefix_set(&F, "{s:s, s:{s:s}}", "tool", "get-structured-content",
	    "arguments", "location", "New York");
	ck_assert_int_eq(run(&out, &res), 0);
	buf_addc(&out, '\0');
	ck_assert_msg(strncmp(out.b_data, "{\"temperature\": ", 16) == 0,
	    "%s", out.b_data);
	nodefix_set(&F, "{s:s, s:{}}", "tool", "get-tiny-image", "arguments");
	ck_assert_int_eq(run(&out, &res), 0);
	buf_addc(&out, '\0');
	ck_assert_msg(strstr(out.b_data, "{\"type\": \"image\", "
	    "\"data\": \"") != NULL && strstr(out.b_data, "\"mimeType\": "
	    "\"image/png\", \"annotations\": null, \"meta\": null}") != NULL,
	    "%s", out.b_data);
	ck_assert_int_eq(list_tools("everything", &out), MCP_OK);
	buf_addc(&out, '\0');
	ck_assert_ptr_nonnull(strstr(out.b_data, "\"get-sum\":{\"llm_schema\":"
	    "{\"type\":\"function\",\"name\":\"get-sum\","));
	nodefix_set(&F, "{s:s}", "tool", "no-such-tool");
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_msg(strstr(res.r_message, "MCP ") != NULL, "%s",
	    res.r_message);
	buf_free(&out);
}
END_TEST

START_TEST(everything_env)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	json_t		*v, *e;
	const char	*k;

	if (!everything())
		return;
	setenv("SLUICE_SECRET", "s3cret", 1);
	nodefix_set(&F, "{s:s}", "tool", "get-env");
	ck_assert_msg(run(&out, &res) == 0, "%s", res.r_message);
	buf_addc(&out, '\0');
	ck_assert_ptr_nonnull(v = json_loads(out.b_data, 0, NULL));
	json_object_foreach(v, k, e)
		ck_assert_msg(safe_var(k), "the server saw %s", k);
	json_decref(v);
	buf_free(&out);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "fields", fields },
		{ "arguments", arguments },
		{ "names", names },
		{ "files", files },
		{ "results", results },
		{ "failures", failures },
		{ "server_requests", server_requests },
		{ "spawn_failure", spawn_failure },
		{ "environment", environment },
		{ "hang_handshake", hang_handshake },
		{ "flood", flood },
		{ "stubborn", stubborn },
		{ "no_leaks", no_leaks },
		{ "cancel", cancel },
		{ "http_json", http_json },
		{ "http_sse", http_sse },
		{ "http_errors", http_errors },
		{ "http_slow", http_slow },
		{ "legacy_sse", legacy_sse },
		{ "legacy_sse_origin", legacy_sse_origin },
		{ "everything_http", everything_http },
		{ "everything_sse", everything_sse },
		{ "list_tools_fake", list_tools_fake },
		{ "everything_tools", everything_tools },
		{ "everything_env", everything_env },
	};

	return it_main(it_suite_fixture("mcp", cases,
	    sizeof(cases) / sizeof(cases[0]), 40, setup, teardown));
}
