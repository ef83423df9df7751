/* api_openai.c - OpenAI chat completions request bodies to REQ_START frames. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/jsonw.h"
#include "../common/xmem.h"
#include "../proto/proto.h"
#include "api.h"

/* Generation fields a client may send. WilmerAI ignores them (presets
 * decide); they travel to the worker as "opts" so that later workflow
 * features can honour them. */
static const char *const option_keys[] = {
	"temperature", "top_p", "max_tokens", "max_completion_tokens", "stop",
	"seed", "presence_penalty", "frequency_penalty", "n", "user", NULL,
};

/* Owned storage behind the views of one encoded message. */
struct msg_store {
	struct buf	 ms_text;
	char		**ms_images;
	size_t		 ms_nimages;
	char		*ms_tool_calls;
};

static int
fail(int *status, char err[API_ERRLEN], int st, const char *msg)
{
	*status = st;
	snprintf(err, API_ERRLEN, "%s", msg);
	return -1;
}

static void
add_image(struct msg_store *ms, char *uri)
{
	ms->ms_images = xreallocarray(ms->ms_images, ms->ms_nimages + 1,
	    sizeof(*ms->ms_images));
	ms->ms_images[ms->ms_nimages++] = uri;
}

/* An image part: OpenAI {"image_url": {"url"}} or a bare string, or an
 * Anthropic-style {"source": {"type": "base64"|"url", ...}}. */
static void
image_part(struct msg_store *ms, json_t *part)
{
	json_t		*iu = json_object_get(part, "image_url");
	json_t		*src = json_object_get(part, "source");
	const char	*t, *mt, *data;

	if (json_is_string(iu))
		add_image(ms, xstrdup(json_string_value(iu)));
	else if (json_is_string(json_object_get(iu, "url")))
		add_image(ms, xstrdup(json_string_value(
		    json_object_get(iu, "url"))));
	else if (json_is_object(src)) {
		t = json_string_value(json_object_get(src, "type"));
		mt = json_string_value(json_object_get(src, "media_type"));
		data = json_string_value(json_object_get(src, "data"));
		if (t != NULL && strcmp(t, "base64") == 0 && data != NULL)
			add_image(ms, xasprintf("data:%s;base64,%s",
			    mt ? mt : "image/png", data));
		else if (t != NULL && strcmp(t, "url") == 0 &&
		    json_is_string(json_object_get(src, "url")))
			add_image(ms, xstrdup(json_string_value(
			    json_object_get(src, "url"))));
	}
}

/* List content: text parts joined with "\n", images collected. */
static int
content_parts(struct msg_store *ms, json_t *c)
{
	size_t		 i;
	json_t		*part;
	const char	*type;
	bool		 first = true;

	json_array_foreach(c, i, part) {
		if (json_is_string(part)) {
			if (!first)
				buf_addc(&ms->ms_text, '\n');
			buf_adds(&ms->ms_text, json_string_value(part));
			first = false;
			continue;
		}
		type = json_string_value(json_object_get(part, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0 &&
		    json_is_string(json_object_get(part, "text"))) {
			if (!first)
				buf_addc(&ms->ms_text, '\n');
			buf_adds(&ms->ms_text, json_string_value(
			    json_object_get(part, "text")));
			first = false;
		} else if (strcmp(type, "image_url") == 0 ||
		    strcmp(type, "image") == 0)
			image_part(ms, part);
	}
	return 0;
}

static int
one_message(json_t *jm, struct proto_message *pm, struct msg_store *ms,
    int *status, char err[API_ERRLEN])
{
	json_t	*role = json_object_get(jm, "role");
	json_t	*c = json_object_get(jm, "content");
	json_t	*tc = json_object_get(jm, "tool_calls");

	if (!json_is_object(jm) || !json_is_string(role))
		return fail(status, err, 400,
		    "Each message must have a 'role' field.");
	if (c == NULL && tc == NULL)
		return fail(status, err, 400,
		    "Each message must have 'content' or 'tool_calls'.");
	buf_adds(&ms->ms_text, "");
	if (json_is_string(c))
		buf_add(&ms->ms_text, json_string_value(c),
		    json_string_length(c));
	else if (json_is_array(c))
		content_parts(ms, c);
	else if (c != NULL && !json_is_null(c))
		return fail(status, err, 400, "A message 'content' must be a "
		    "string, a list of content parts or null.");
	pm->role = (struct str){ json_string_value(role),
	    json_string_length(role) };
	pm->content = (struct str){ ms->ms_text.b_data, ms->ms_text.b_len };
	pm->name = str_from(json_string_value(json_object_get(jm, "name")));
	pm->tool_call_id = str_from(json_string_value(
	    json_object_get(jm, "tool_call_id")));
	if (json_is_array(tc) && json_array_size(tc) > 0) {
		ms->ms_tool_calls = jsonw_dumps(tc, JSONW_COMPACT);
		pm->tool_calls = str_from(ms->ms_tool_calls);
	}
	return 0;
}

static void
store_free(struct msg_store *ms, size_t n)
{
	size_t	 i, j;

	for (i = 0; i < n; i++) {
		buf_free(&ms[i].ms_text);
		for (j = 0; j < ms[i].ms_nimages; j++)
			free(ms[i].ms_images[j]);
		free(ms[i].ms_images);
		free(ms[i].ms_tool_calls);
	}
	free(ms);
}

static char *
options_json(json_t *root)
{
	json_t	*o = json_object();
	char	*s;
	size_t	 i;

	for (i = 0; option_keys[i] != NULL; i++) {
		json_t	*v = json_object_get(root, option_keys[i]);

		if (v != NULL && !json_is_null(v))
			json_object_set(o, option_keys[i], v);
	}
	s = json_object_size(o) > 0 ? jsonw_dumps(o, JSONW_COMPACT) : NULL;
	json_decref(o);
	return s;
}

static int
check_flags(json_t *root, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t	*stream = json_object_get(root, "stream");
	json_t	*model = json_object_get(root, "model");
	json_t	*so = json_object_get(root, "stream_options");

	if (stream != NULL && !json_is_null(stream) && !json_is_boolean(stream))
		return fail(status, err, 400, "'stream' must be a boolean.");
	if (model != NULL && !json_is_null(model) && !json_is_string(model))
		return fail(status, err, 400, "'model' must be a string.");
	out->ar_stream = json_is_true(stream);
	out->ar_include_usage = json_is_true(json_object_get(so,
	    "include_usage"));
	out->ar_model = xstrdup(json_is_string(model) ?
	    json_string_value(model) : "");
	return 0;
}

/* Encode the frame while every view is alive. */
static int
encode_start(json_t *root, json_t *msgs, const char *rqid, uint64_t dl,
    struct api_req *out, int *status, char err[API_ERRLEN])
{
	size_t			 n = json_array_size(msgs), i;
	struct proto_message	*pm = xcalloc(n ? n : 1, sizeof(*pm));
	struct msg_store	*ms = xcalloc(n ? n : 1, sizeof(*ms));
	struct proto_msg	 m;
	char			*opts = options_json(root), *tools = NULL;
	char			*tchoice = NULL;
	int			 r = -1;

	for (i = 0; i < n; i++) {
		if (one_message(json_array_get(msgs, i), &pm[i], &ms[i],
		    status, err) == -1)
			goto out;
		pm[i].images = NULL;
		pm[i].nimages = ms[i].ms_nimages;
	}
	for (i = 0; i < n; i++)		/* struct str views of the images */
		if (ms[i].ms_nimages > 0) {
			size_t	 j;

			pm[i].images = xcalloc(ms[i].ms_nimages,
			    sizeof(struct str));
			for (j = 0; j < ms[i].ms_nimages; j++)
				pm[i].images[j] = str_from(ms[i].ms_images[j]);
		}
	if (json_is_array(json_object_get(root, "tools")))
		tools = jsonw_dumps(json_object_get(root, "tools"),
		    JSONW_COMPACT);
	if (json_object_get(root, "tool_choice") != NULL)
		tchoice = jsonw_dumps(json_object_get(root, "tool_choice"),
		    JSONW_COMPACT);
	proto_msg_init(&m, PROTO_REQ_START, rqid);
	m.m_u.req_start = (struct proto_req_start){ out->ar_api,
	    out->ar_stream, str_from(out->ar_model), pm, n, str_from(opts),
	    str_from(tools), str_from(tchoice), dl };
	if (proto_encode(&out->ar_start, &m) == -1)
		r = fail(status, err, 413, "The request is too large.");
	else
		r = 0;
out:
	for (i = 0; i < n; i++)
		free(pm[i].images);
	free(pm);
	store_free(ms, n);
	free(opts);
	free(tools);
	free(tchoice);
	return r;
}

int
api_openai_chat(const char *body, size_t len, const char *rqid,
    uint64_t deadline_ms, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_error_t	 je;
	json_t		*root, *msgs;
	int		 r = -1;

	memset(out, 0, sizeof(*out));
	out->ar_api = API_OPENAI_CHAT;
	root = json_loadb(body, len, 0, &je);
	if (root == NULL || !json_is_object(root)) {
		*status = 400;
		if (root == NULL)
			snprintf(err, API_ERRLEN, "Invalid JSON data: %s "
			    "(line %d, column %d)", je.text, je.line,
			    je.column);
		else
			snprintf(err, API_ERRLEN, "Invalid JSON data: the body "
			    "must be a JSON object");
		goto out;
	}
	msgs = json_object_get(root, "messages");
	if (msgs == NULL || json_is_null(msgs))
		r = fail(status, err, 400, "The 'messages' field is required.");
	else if (!json_is_array(msgs))
		r = fail(status, err, 400, "The 'messages' field must be a "
		    "list.");
	else if (check_flags(root, out, status, err) == 0)
		r = encode_start(root, msgs, rqid, deadline_ms, out, status,
		    err);
out:
	json_decref(root);
	if (r == -1)
		api_req_clear(out);
	return r;
}

void
api_req_clear(struct api_req *a)
{
	free(a->ar_model);
	buf_free(&a->ar_start);
	a->ar_model = NULL;
}
