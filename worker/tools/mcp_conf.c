/* mcp_conf.c - one MCP server's settings from MCPServers/<name>.json: name check, file, fields. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "mcp_conf.h"

/*
 * WilmerAI checks the name, loads the file and checks the transport
 * outside the SDK: those failures have messages of their own. The
 * other fields are the SDK's (pydantic) parameters: a wrong type fails
 * there, and the cause is wrapped like any failure of the call (-2).
 */

#define MCP_TRANSPORTS	"('stdio', 'sse', 'streamable_http')"

static bool
name_ok(const char *n)
{
	return strpbrk(n, "/\\:") == NULL && strcmp(n, ".") != 0 &&
	    strcmp(n, "..") != 0;
}

/* The file as a JSON object, or NULL with the whole message in err. */
static json_t *
file_load(const char *confdir, const char *name, struct buf *err)
{
	json_error_t	 je;
	json_t		*root;
	char		*path;

	path = xasprintf("%s/MCPServers/%s.json", confdir, name);
	root = json_load_file(path, JSON_DECODE_ANY, &je);
	if (root == NULL && errno == ENOENT &&
	    json_error_code(&je) == json_error_cannot_open_file)
		buf_printf(err, "MCP server config '%s' was not found under "
		    "Public/Configs/MCPServers/.", name);
	else if (root == NULL)
		buf_printf(err, "MCP server config '%s' could not be loaded: "
		    "%s: line %d column %d", name, je.text, je.line,
		    je.column);
	else if (!json_is_object(root)) {
		buf_printf(err, "MCP server config '%s' could not be loaded: "
		    "the file is not a JSON object", name);
		json_decref(root);
		root = NULL;
	}
	free(path);
	return root;
}

static int
transport_of(json_t *root, const char *name, enum mcp_transport *t,
    struct buf *err)
{
	json_t		*v = json_object_get(root, "transport");
	const char	*s = json_string_value(v);

	if (s != NULL && strcmp(s, "stdio") == 0)
		*t = MCP_STDIO;
	else if (s != NULL && strcmp(s, "sse") == 0)
		*t = MCP_SSE;
	else if (s != NULL && strcmp(s, "streamable_http") == 0)
		*t = MCP_HTTP;
	else {
		buf_printf(err, "MCP server '%s' has invalid or missing "
		    "'transport' (must be one of " MCP_TRANSPORTS "; got ",
		    name);
		if (v == NULL)
			buf_adds(err, "None");
		else
			pyfmt_repr(err, v);
		buf_adds(err, ").");
		return -1;
	}
	return 0;
}

/* A NULL-ended vector of n + extra slots, zeroed. */
static char **
strv_new(size_t n)
{
	return xcalloc(n + 1, sizeof(char *));
}

static void
strv_free(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* argv: command (default "") then args (null = []), strings only. */
static int
argv_of(json_t *root, struct mcp_server *s, struct buf *err)
{
	json_t	*cmd = json_object_get(root, "command");
	json_t	*args = json_object_get(root, "args"), *a;
	size_t	 i, n;

	if (cmd != NULL && !json_is_string(cmd)) {
		buf_adds(err, "'command' must be a string");
		return -2;
	}
	if (args != NULL && !json_is_null(args) && !json_is_array(args)) {
		buf_adds(err, "'args' must be a list of strings");
		return -2;
	}
	n = json_array_size(args);
	s->ms_argv = strv_new(n + 1);
	s->ms_argv[0] = xstrdup(cmd != NULL ? json_string_value(cmd) : "");
	json_array_foreach(args, i, a) {
		if (!json_is_string(a)) {
			buf_adds(err, "'args' must be a list of strings");
			return -2;
		}
		s->ms_argv[i + 1] = xstrdup(json_string_value(a));
	}
	return 0;
}

/* Set name=value in the vector envp of *n entries (room for it). */
static void
env_put(char **envp, size_t *n, const char *name, const char *value)
{
	size_t	 i, len = strlen(name);

	for (i = 0; i < *n; i++)
		if (strncmp(envp[i], name, len) == 0 && envp[i][len] == '=')
			break;
	if (i < *n)
		free(envp[i]);
	else
		(*n)++;
	envp[i] = xasprintf("%s=%s", name, value);
}

/* The safe variables of the worker, then the file's env on top. */
static int
envp_of(json_t *root, struct mcp_server *s, struct buf *err)
{
	static const char *const safe[] = MCP_SAFE_ENV;
	json_t		*env = json_object_get(root, "env"), *v;
	const char	*k, *val;
	size_t		 i, n = 0;

	if (env != NULL && !json_is_null(env) && !json_is_object(env)) {
		buf_adds(err, "'env' must be an object of strings");
		return -2;
	}
	s->ms_envp = strv_new(6 + json_object_size(env));
	for (i = 0; safe[i] != NULL; i++)
		if ((val = getenv(safe[i])) != NULL &&
		    strncmp(val, "()", 2) != 0)
			env_put(s->ms_envp, &n, safe[i], val);
	json_object_foreach(env, k, v) {
		if (!json_is_string(v) || strchr(k, '=') != NULL ||
		    *k == '\0') {
			buf_printf(err, "'env' entry '%s' must be a string "
			    "with a name without '='", k);
			return -2;
		}
		env_put(s->ms_envp, &n, k, json_string_value(v));
	}
	return 0;
}

static int
stdio_of(json_t *root, struct mcp_server *s, struct buf *err)
{
	json_t	*cwd = json_object_get(root, "cwd");
	int	 r;

	if ((r = argv_of(root, s, err)) != 0 ||
	    (r = envp_of(root, s, err)) != 0)
		return r;
	if (cwd != NULL && !json_is_null(cwd) && !json_is_string(cwd)) {
		buf_adds(err, "'cwd' must be a string");
		return -2;
	}
	if (json_is_string(cwd))
		s->ms_cwd = xstrdup(json_string_value(cwd));
	return 0;
}

static int
http_of(json_t *root, const char *name, struct mcp_server *s,
    struct buf *err)
{
	json_t		*url = json_object_get(root, "url");
	json_t		*hd = json_object_get(root, "headers"), *v;
	const char	*k;
	size_t		 n = 0;

	if (!pyfmt_truthy(url)) {
		buf_printf(err, "MCP server '%s' (%s) requires a 'url' field.",
		    name, s->ms_transport == MCP_SSE ? "sse" :
		    "streamable_http");
		return -1;
	}
	if (!json_is_string(url)) {
		buf_adds(err, "'url' must be a string");
		return -2;
	}
	s->ms_url = xstrdup(json_string_value(url));
	if (hd != NULL && !json_is_null(hd) && !json_is_object(hd)) {
		buf_adds(err, "'headers' must be an object of strings");
		return -2;
	}
	s->ms_headers = strv_new(json_object_size(hd));
	json_object_foreach(hd, k, v) {
		if (!json_is_string(v)) {
			buf_printf(err, "header '%s' must be a string", k);
			return -2;
		}
		s->ms_headers[n++] = xasprintf("%s: %s", k,
		    json_string_value(v));
	}
	return 0;
}

int
mcp_server_load(const char *confdir, const char *name, struct mcp_server *s,
    struct buf *err)
{
	json_t	*root;
	int	 r;

	memset(s, 0, sizeof(*s));
	if (!name_ok(name)) {
		buf_adds(err, "Invalid MCP server name ");
		pyfmt_repr_str(err, name, strlen(name));
		buf_adds(err, ": must not contain path separators or a "
		    "drive-letter prefix.");
		return -1;
	}
	if ((root = file_load(confdir, name, err)) == NULL)
		return -1;
	if ((r = transport_of(root, name, &s->ms_transport, err)) == 0)
		r = s->ms_transport == MCP_STDIO ? stdio_of(root, s, err) :
		    http_of(root, name, s, err);
	json_decref(root);
	if (r != 0)
		mcp_server_free(s);
	return r;
}

void
mcp_server_free(struct mcp_server *s)
{
	if (s == NULL)
		return;
	strv_free(s->ms_argv);
	strv_free(s->ms_envp);
	strv_free(s->ms_headers);
	free(s->ms_cwd);
	free(s->ms_url);
	memset(s, 0, sizeof(*s));
}
