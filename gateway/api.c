/* api.c - client request bodies turned into API-neutral REQ_START frames. */
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/base64.h"
#include "../common/jsonw.h"
#include "../common/modelsel.h"
#include "../common/xmem.h"
#include "api.h"

/* Owned storage behind the views of one message. */
struct api_store {
	char	*as_role;
	char	*as_content;
	char	*as_name;
	char	*as_tcid;
	char	*as_tool_calls;
	char	**as_images;
	size_t	 as_nimages;
};

int
api_fail(int *status, char err[API_ERRLEN], int st, const char *msg)
{
	*status = st;
	snprintf(err, API_ERRLEN, "%s", msg);
	return -1;
}

/* Like api_fail, with a printf-style message. */
static int
api_failf(int *status, char err[API_ERRLEN], const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
api_failf(int *status, char err[API_ERRLEN], const char *fmt, ...)
{
	va_list	 ap;

	*status = 400;
	va_start(ap, fmt);
	vsnprintf(err, API_ERRLEN, fmt, ap);
	va_end(ap);
	return -1;
}

/* A member that, when present and not null, must have type t. */
static bool
type_ok(const struct api_mfield *f, json_type t)
{
	return f->mf_type == -1 || f->mf_type == JSON_NULL ||
	    f->mf_type == (int)t;
}

int
api_images_check(const json_t *images, const char *what, int *status,
    char err[API_ERRLEN])
{
	const json_t	*img;
	size_t		 k;

	if (images == NULL || json_is_null(images))
		return 0;
	if (!json_is_array(images))
		return api_failf(status, err, "%s must be a list of base64 "
		    "strings.", what);
	json_array_foreach(images, k, img)
		if (!json_is_string(img) || !base64_valid(json_string_value(img),
		    json_string_length(img)))
			return api_failf(status, err, "%s[%zu] must be a "
			    "base64 string (the raw image bytes, with no "
			    "data: prefix).", what, k);
	return 0;
}

int
api_msg_check(const struct api_mview *mv, size_t i, int api, int *status,
    char err[API_ERRLEN])
{
	const struct api_mfield	*f = mv->mv_f;
	bool			 openai = api == API_OPENAI_CHAT;
	char			 what[48];

	if (!mv->mv_object || f[AMF_ROLE].mf_type != JSON_STRING)
		return api_fail(status, err, 400,	/* WilmerAI's words */
		    "Each message must have a 'role' field.");
	if (openai && f[AMF_CONTENT].mf_type == -1 &&
	    f[AMF_TOOL_CALLS].mf_type == -1)
		return api_fail(status, err, 400,
		    "Each message must have 'content' or 'tool_calls'.");
	if (!type_ok(&f[AMF_CONTENT], JSON_STRING) &&
	    !(openai && f[AMF_CONTENT].mf_type == JSON_ARRAY))
		return api_failf(status, err, "messages[%zu].content must be "
		    "%s.", i, openai ? "a string, a list of content parts or "
		    "null" : "a string");
	if (!type_ok(&f[AMF_TOOL_CALLS], JSON_ARRAY))
		return api_failf(status, err, "messages[%zu].tool_calls must "
		    "be a list.", i);
	if (!type_ok(&f[AMF_NAME], JSON_STRING) ||
	    !type_ok(&f[AMF_TCID], JSON_STRING))
		return api_failf(status, err, "messages[%zu]: 'name' and "
		    "'tool_call_id' must be strings.", i);
	if (openai || f[AMF_IMAGES].mf_type == -1 ||
	    f[AMF_IMAGES].mf_type == JSON_NULL)
		return 0;
	snprintf(what, sizeof(what), "messages[%zu].images", i);
	if (f[AMF_IMAGES].mf_type != JSON_ARRAY)
		return api_failf(status, err, "%s must be a list of base64 "
		    "strings.", what);
	return api_images_check(f[AMF_IMAGES].mf_json, what, status, err);
}

/* Room for one more message, zeroed; returns its index. */
static size_t
msgs_grow(struct api_msgs *am)
{
	if (am->am_n == am->am_cap) {	/* doubling: linear in messages */
		am->am_cap = am->am_cap ? am->am_cap * 2 : 8;
		am->am_pm = xreallocarray(am->am_pm, am->am_cap,
		    sizeof(*am->am_pm));
		am->am_store = xreallocarray(am->am_store, am->am_cap,
		    sizeof(*am->am_store));
	}
	memset(&am->am_store[am->am_n], 0, sizeof(am->am_store[am->am_n]));
	memset(&am->am_pm[am->am_n], 0, sizeof(am->am_pm[am->am_n]));
	return am->am_n++;
}

size_t
api_msgs_add(struct api_msgs *am, const char *role, const char *content,
    size_t len)
{
	size_t			 i = msgs_grow(am);
	struct api_store	*s = &am->am_store[i];

	s->as_role = xstrdup(role);
	s->as_content = xstrndup(content ? content : "", content ? len : 0);
	am->am_pm[i].role = str_from(s->as_role);
	am->am_pm[i].content = str_from(s->as_content);
	return i;
}

size_t
api_msgs_view(struct api_msgs *am, struct str role, struct str content)
{
	size_t	 i = msgs_grow(am);

	am->am_pm[i].role = role;
	am->am_pm[i].content = content.p != NULL ? content : STR_LIT("");
	return i;
}

void
api_msgs_content(struct api_msgs *am, size_t i, const char *content,
    size_t len)
{
	free(am->am_store[i].as_content);
	am->am_store[i].as_content = xstrndup(content ? content : "", len);
	am->am_pm[i].content = (struct str){ am->am_store[i].as_content, len };
}

void
api_msgs_image(struct api_msgs *am, size_t i, const char *uri)
{
	struct api_store	*s = &am->am_store[i];

	s->as_images = xreallocarray(s->as_images, s->as_nimages + 1,
	    sizeof(*s->as_images));
	s->as_images[s->as_nimages++] = xstrdup(uri);
}

void
api_msgs_tool_calls(struct api_msgs *am, size_t i, const json_t *calls)
{
	free(am->am_store[i].as_tool_calls);
	am->am_store[i].as_tool_calls = jsonw_dumps(calls, JSONW_COMPACT);
}

void
api_msgs_extra(struct api_msgs *am, size_t i, const char *name,
    const char *tcid)
{
	if (name != NULL)
		am->am_store[i].as_name = xstrdup(name);
	if (tcid != NULL)
		am->am_store[i].as_tcid = xstrdup(tcid);
	am->am_pm[i].name = str_from(am->am_store[i].as_name);
	am->am_pm[i].tool_call_id = str_from(am->am_store[i].as_tcid);
}

void
api_msgs_extra_view(struct api_msgs *am, size_t i, struct str name,
    struct str tcid)
{
	am->am_pm[i].name = name;
	am->am_pm[i].tool_call_id = tcid;
}

struct str
api_msgs_role(const struct api_msgs *am, size_t i)
{
	return am->am_pm[i].role;
}

void
api_msgs_free(struct api_msgs *am)
{
	size_t	 i, j;

	for (i = 0; i < am->am_n; i++) {
		struct api_store	*s = &am->am_store[i];

		free(s->as_role);
		free(s->as_content);
		free(s->as_name);
		free(s->as_tcid);
		free(s->as_tool_calls);
		for (j = 0; j < s->as_nimages; j++)
			free(s->as_images[j]);
		free(s->as_images);
		free(am->am_pm[i].images);
	}
	free(am->am_pm);
	free(am->am_store);
	memset(am, 0, sizeof(*am));
}

/* Point the views of tool calls and images at their storage. */
static void
bind_views(const struct api_msgs *am)
{
	size_t	 i, j;

	for (i = 0; i < am->am_n; i++) {
		struct proto_message	*pm = &am->am_pm[i];
		struct api_store	*s = &am->am_store[i];

		pm->tool_calls = str_from(s->as_tool_calls);
		free(pm->images);
		pm->images = NULL;
		pm->nimages = s->as_nimages;
		if (s->as_nimages == 0)
			continue;
		pm->images = xcalloc(s->as_nimages, sizeof(struct str));
		for (j = 0; j < s->as_nimages; j++)
			pm->images[j] = str_from(s->as_images[j]);
	}
}

/* About how long REQ_START will be, so the frame is allocated once:
 * the strings, and a generous allowance for keys and headers. */
static size_t
frame_size(const struct api_req *out, const struct api_msgs *am,
    const struct api_limits *lim)
{
	const struct proto_message	*pm;
	size_t				 i, j, n = 512;

	for (i = 0; i < am->am_n; i++) {
		pm = &am->am_pm[i];
		n += 64 + pm->role.n + pm->content.n + pm->name.n +
		    pm->tool_call_id.n + pm->tool_calls.n;
		for (j = 0; j < pm->nimages; j++)
			n += 8 + pm->images[j].n;
	}
	if (out->ar_model != NULL)
		n += strlen(out->ar_model);
	if (lim->api_key != NULL)
		n += strlen(lim->api_key);
	return n;
}

static char *
dump_opt(const json_t *v)
{
	return v != NULL && !json_is_null(v) ? jsonw_dumps(v, JSONW_COMPACT) :
	    NULL;
}

int
api_encode(struct api_req *out, const struct api_msgs *am, const char *rqid,
    const struct api_limits *lim, const json_t *opts, const json_t *tools,
    const json_t *tool_choice, int *status, char err[API_ERRLEN])
{
	struct proto_msg m;
	char		*o = NULL, *t = dump_opt(tools), *tc = dump_opt(tool_choice);
	int		 r = 0;

	if (opts != NULL && json_object_size(opts) > 0)
		o = dump_opt(opts);
	bind_views(am);
	out->ar_secret = lim->api_key != NULL;
	buf_reserve(&out->ar_start, frame_size(out, am, lim) + (o ? strlen(o) :
	    0) + (t ? strlen(t) : 0) + (tc ? strlen(tc) : 0));
	proto_msg_init(&m, PROTO_REQ_START, rqid);
	m.m_u.req_start = (struct proto_req_start){ (uint32_t)out->ar_api,
	    out->ar_stream, str_from(out->ar_model), am->am_pm, am->am_n,
	    str_from(o), str_from(t), str_from(tc), lim->deadline_ms,
	    lim->ep_limit, lim->ep_wait_ms, str_from(lim->user),
	    str_from(lim->workflow), str_from(lim->key_scope),
	    str_from(out->ar_think), str_from(lim->api_key) };
	if (proto_encode(&out->ar_start, &m) == -1)
		r = api_fail(status, err, 413, "The request is too large.");
	free(o);
	free(t);
	free(tc);
	return r;
}

int
api_load(const char *body, size_t len, json_t **root, int *status,
    char err[API_ERRLEN])
{
	json_error_t	 je;

	*root = json_loadb(body, len, 0, &je);
	if (*root != NULL && json_is_object(*root))
		return 0;
	*status = 400;
	if (*root == NULL)
		snprintf(err, API_ERRLEN, "Invalid JSON data: %s (line %d, "
		    "column %d)", je.text, je.line, je.column);
	else
		snprintf(err, API_ERRLEN, "Invalid JSON data: the body must be "
		    "a JSON object");
	json_decref(*root);
	*root = NULL;
	return -1;
}

const char *
api_model(json_t *root)
{
	const char	*m = json_string_value(json_object_get(root, "model"));

	return m != NULL ? m : "";
}

int
api_build(int api, const struct api_body *root, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	int	 r;

	memset(out, 0, sizeof(*out));
	out->ar_api = api;
	switch (api) {
	case API_OPENAI_CHAT:
		r = api_openai_chat(root, rqid, lim, out, status, err);
		break;
	case API_OPENAI_COMPLETION:
		r = api_openai_completion(root, rqid, lim, out, status, err);
		break;
	case API_OLLAMA_CHAT:
		r = api_ollama_chat(root, rqid, lim, out, status, err);
		break;
	default:
		r = api_ollama_generate(root, rqid, lim, out, status, err);
		break;
	}
	if (r == -1)
		api_req_clear(out);
	return r;
}

typedef int (*body_loader)(const char *, size_t, struct api_body **, int *,
    char[API_ERRLEN]);

static int
parse_with(body_loader load, int api, const char *body, size_t len,
    const char *rqid, const struct api_limits *lim, struct api_req *out,
    int *status, char err[API_ERRLEN])
{
	struct api_body	*ab;
	int		 r;

	memset(out, 0, sizeof(*out));
	if (load(body, len, &ab, status, err) == -1)
		return -1;
	if (modelsel_traversal(api_model(api_body_root(ab))))
		r = api_fail(status, err, 400, "Invalid model name: a model "
		    "names a user or workflow, and '.' and '..' are not names.");
	else
		r = api_build(api, ab, rqid, lim, out, status, err);
	api_body_free(ab);
	return r;
}

int
api_parse(int api, const char *body, size_t len, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	return parse_with(api_body_load, api, body, len, rqid, lim, out,
	    status, err);
}

int
api_parse_tree(int api, const char *body, size_t len, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	return parse_with(api_body_load_tree, api, body, len, rqid, lim, out,
	    status, err);
}

void
api_req_clear(struct api_req *a)
{
	free(a->ar_model);
	free(a->ar_think);
	if (a->ar_secret && a->ar_start.b_data != NULL)	/* the API key */
		explicit_bzero(a->ar_start.b_data, a->ar_start.b_len);
	buf_free(&a->ar_start);
	a->ar_model = a->ar_think = NULL;
	a->ar_secret = false;
}

bool
api_thinking_off(const struct api_req *a)
{
	return a->ar_think != NULL && strcmp(a->ar_think, "false") == 0;
}
