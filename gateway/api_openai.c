/* api_openai.c - OpenAI chat and legacy completion request bodies. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/xmem.h"
#include "api.h"
#include "begtags.h"

/* Generation fields a client may send. WilmerAI ignores them (presets
 * decide); they travel to the worker as "opts" so that later workflow
 * features can honour them. */
static const char *const option_keys[] = {
	"temperature", "top_p", "max_tokens", "max_completion_tokens", "stop",
	"seed", "presence_penalty", "frequency_penalty", "n", "user", NULL,
};

static json_t *
options(json_t *root)
{
	json_t	*o = json_object();
	size_t	 i;

	for (i = 0; option_keys[i] != NULL; i++) {
		json_t	*v = json_object_get(root, option_keys[i]);

		if (v != NULL && !json_is_null(v))
			json_object_set(o, option_keys[i], v);
	}
	return o;
}

/* An image part: OpenAI {"image_url": {"url"}} or a bare string, or an
 * Anthropic-style {"source": {"type": "base64"|"url", ...}}. */
static void
image_part(struct api_msgs *am, size_t i, json_t *part)
{
	json_t		*iu = json_object_get(part, "image_url");
	json_t		*src = json_object_get(part, "source");
	const char	*t, *mt, *data;
	char		*uri;

	if (json_is_string(iu))
		api_msgs_image(am, i, json_string_value(iu));
	else if (json_is_string(json_object_get(iu, "url")))
		api_msgs_image(am, i, json_string_value(json_object_get(iu,
		    "url")));
	else if (json_is_object(src)) {
		t = json_string_value(json_object_get(src, "type"));
		mt = json_string_value(json_object_get(src, "media_type"));
		data = json_string_value(json_object_get(src, "data"));
		if (t != NULL && strcmp(t, "base64") == 0 && data != NULL) {
			uri = xasprintf("data:%s;base64,%s",
			    mt ? mt : "image/png", data);
			api_msgs_image(am, i, uri);
			free(uri);
		} else if (t != NULL && strcmp(t, "url") == 0 &&
		    json_is_string(json_object_get(src, "url")))
			api_msgs_image(am, i, json_string_value(
			    json_object_get(src, "url")));
	}
}

/* List content: text parts joined with "\n", images collected. */
static void
content_parts(struct api_msgs *am, size_t i, json_t *c, struct buf *text)
{
	size_t		 k;
	json_t		*part;
	const char	*type, *s = NULL;

	json_array_foreach(c, k, part) {
		type = json_string_value(json_object_get(part, "type"));
		if (json_is_string(part))
			s = json_string_value(part);
		else if (type != NULL && strcmp(type, "text") == 0)
			s = json_string_value(json_object_get(part, "text"));
		else if (type != NULL && (strcmp(type, "image_url") == 0 ||
		    strcmp(type, "image") == 0)) {
			image_part(am, i, part);
			continue;
		} else
			continue;
		if (s == NULL)
			continue;
		if (text->b_len > 0)
			buf_addc(text, '\n');
		buf_adds(text, s);
	}
}

static int
chat_message(struct api_msgs *am, const struct api_mview *mv, size_t k,
    int *status, char err[API_ERRLEN])
{
	const struct api_mfield	*c = &mv->mv_f[AMF_CONTENT];
	json_t			*tc = mv->mv_f[AMF_TOOL_CALLS].mf_json;
	struct buf		 text = BUF_INIT;
	size_t			 i;

	if (api_msg_check(mv, k, API_OPENAI_CHAT, status, err) == -1)
		return -1;
	i = api_msgs_view(am, mv->mv_f[AMF_ROLE].mf_str, c->mf_str);
	if (json_is_array(c->mf_json)) {
		content_parts(am, i, c->mf_json, &text);
		api_msgs_content(am, i, text.b_data, text.b_len);
		buf_free(&text);
	}
	if (json_is_array(tc) && json_array_size(tc) > 0)
		api_msgs_tool_calls(am, i, tc);
	api_msgs_extra_view(am, i, mv->mv_f[AMF_NAME].mf_str,
	    mv->mv_f[AMF_TCID].mf_str);
	return 0;
}

/* stream, model and stream_options, common to both OpenAI routes. */
static int
flags(json_t *root, bool stream_default, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t	*stream = json_object_get(root, "stream");
	json_t	*model = json_object_get(root, "model");
	json_t	*so = json_object_get(root, "stream_options");

	if (stream != NULL && !json_is_null(stream) && !json_is_boolean(stream))
		return api_fail(status, err, 400, "'stream' must be a boolean.");
	if (model != NULL && !json_is_null(model) && !json_is_string(model))
		return api_fail(status, err, 400, "'model' must be a string.");
	out->ar_stream = json_is_boolean(stream) ? json_is_true(stream) :
	    stream_default;
	out->ar_include_usage = json_is_true(json_object_get(so,
	    "include_usage"));
	out->ar_model = xstrdup(json_is_string(model) ?
	    json_string_value(model) : "");
	return 0;
}

int
api_openai_chat(const struct api_body *ab, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t		*root = api_body_root(ab), *o;
	int		 mt = api_body_msgs_type(ab);
	struct api_msgs	 am = { NULL, NULL, 0, 0 };
	struct api_mview mv;
	size_t		 i, n = api_body_nmsgs(ab);
	int		 r = -1;

	if (mt == -1 || mt == JSON_NULL)
		return api_fail(status, err, 400,
		    "The 'messages' field is required.");
	if (mt != JSON_ARRAY)
		return api_fail(status, err, 400,
		    "The 'messages' field must be a list.");
	if (flags(root, false, out, status, err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		api_body_msg(ab, i, &mv);
		r = chat_message(&am, &mv, i, status, err);
		api_mview_clear(&mv);
		if (r == -1)
			goto out;
	}
	o = options(root);
	r = api_encode(out, &am, rqid, lim, o, json_object_get(root, "tools"),
	    json_object_get(root, "tool_choice"), status, err);
	json_decref(o);
out:
	api_msgs_free(&am);
	return r;
}

/* A legacy completion prompt: a string, or a list holding one. */
static const char *
prompt_of(json_t *root)
{
	json_t	*p = json_object_get(root, "prompt");

	if (json_is_array(p) && json_array_size(p) == 1)
		p = json_array_get(p, 0);
	return json_string_value(p);
}

int
api_openai_completion(const struct api_body *ab, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t		*root = api_body_root(ab);
	const char	*prompt = prompt_of(root);
	struct api_msgs	 am = { NULL, NULL, 0, 0 };
	struct begtags	 bt;
	json_t		*o;
	size_t		 i;
	int		 r;

	if (prompt == NULL)
		return api_fail(status, err, 400, "The 'prompt' field is "
		    "required and must be a string.");
	/* The OpenAI spec's default, not WilmerAI's (which streams): the
	 * official clients read a missing stream as false. */
	if (flags(root, false, out, status, err) == -1)
		return -1;
	begtags_parse(prompt, strlen(prompt), &bt);
	for (i = 0; i < bt.bt_n; i++)
		api_msgs_add(&am, bt.bt_msgs[i].bm_role,
		    bt.bt_msgs[i].bm_content, strlen(bt.bt_msgs[i].bm_content));
	begtags_free(&bt);
	o = options(root);
	r = api_encode(out, &am, rqid, lim, o, NULL, NULL, status, err);
	json_decref(o);
	api_msgs_free(&am);
	return r;
}
