/* api_ollama.c - Ollama /api/chat and /api/generate request bodies. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/jsonw.h"
#include "../common/uuid.h"
#include "../common/xmem.h"
#include "api.h"
#include "begtags.h"

/* Ollama streams unless told otherwise; WilmerAI also takes the
 * strings "true" and "false". */
static int
stream_flag(json_t *root, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t		*v = json_object_get(root, "stream");
	const char	*s = json_string_value(v);

	if (v == NULL || json_is_null(v))
		out->ar_stream = true;
	else if (json_is_boolean(v))
		out->ar_stream = json_is_true(v);
	else if (s != NULL && (strcasecmp(s, "true") == 0 ||
	    strcasecmp(s, "false") == 0))
		out->ar_stream = strcasecmp(s, "true") == 0;
	else
		return api_fail(status, err, 400, "'stream' must be a boolean.");
	return 0;
}

/* Ollama's "think": true, false, or one of the levels some models
 * take; null reads as absent. It goes to the worker as JSON text (Ollama
 * backends get it: worker/llm/adapter_ollama.c) and false keeps
 * reasoning out of the answer. */
static int
think_flag(json_t *root, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t		*v = json_object_get(root, "think");
	const char	*s = json_string_value(v);

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_boolean(v) && (s == NULL || (strcmp(s, "high") != 0 &&
	    strcmp(s, "medium") != 0 && strcmp(s, "low") != 0)))
		return api_fail(status, err, 400, "'think' must be true, false, "
		    "\"high\", \"medium\" or \"low\".");
	out->ar_think = jsonw_dumps(v, JSONW_COMPACT);
	return 0;
}

/* Ollama tool calls {"function": {"name", "arguments": {..}}} in the
 * OpenAI shape every other part of Sluice uses. */
static json_t *
openai_tool_calls(json_t *calls)
{
	json_t		*out = json_array(), *c, *fn, *args;
	char		 id[33], *a;
	size_t		 i;

	json_array_foreach(calls, i, c) {
		fn = json_object_get(c, "function");
		args = json_object_get(fn, "arguments");
		a = json_is_string(args) ? xstrdup(json_string_value(args)) :
		    args != NULL ? jsonw_dumps(args, JSONW_COMPACT) :
		    xstrdup("{}");
		uuid_new_hex(id);
		id[24] = '\0';
		json_array_append_new(out, json_pack("{s:s+,s:s,s:{s:s,s:s}}",
		    "id", "call_", id, "type", "function", "function", "name",
		    json_string_value(json_object_get(fn, "name")) ?
		    json_string_value(json_object_get(fn, "name")) : "",
		    "arguments", a));
		free(a);
	}
	return out;
}

/* One message, checked as Ollama's server checks it (WilmerAI would
 * str() a content that is not a string; Ollama answers 400). */
static int
chat_message(struct api_msgs *am, const struct api_mview *mv, size_t n,
    int *status, char err[API_ERRLEN])
{
	const struct api_mfield	*c = &mv->mv_f[AMF_CONTENT];
	json_t			*tc = mv->mv_f[AMF_TOOL_CALLS].mf_json;
	json_t			*img;
	size_t			 i, k;

	if (api_msg_check(mv, n, API_OLLAMA_CHAT, status, err) == -1)
		return -1;
	i = api_msgs_view(am, mv->mv_f[AMF_ROLE].mf_str, c->mf_str);
	json_array_foreach(mv->mv_f[AMF_IMAGES].mf_json, k, img)
		api_msgs_image(am, i, json_string_value(img));
	if (json_is_array(tc) && json_array_size(tc) > 0) {
		json_t	*oc = openai_tool_calls(tc);

		api_msgs_tool_calls(am, i, oc);
		json_decref(oc);
	}
	api_msgs_extra_view(am, i, mv->mv_f[AMF_NAME].mf_str,
	    mv->mv_f[AMF_TCID].mf_str);
	return 0;
}

static int
model_field(json_t *root, struct api_req *out)
{
	const char	*m = json_string_value(json_object_get(root, "model"));

	if (m == NULL)
		return -1;
	out->ar_model = xstrdup(m);
	return 0;
}

int
api_ollama_chat(const struct api_body *ab, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t		*root = api_body_root(ab);
	struct api_msgs	 am = { NULL, NULL, 0, 0 };
	struct api_mview mv;
	size_t		 i, n = api_body_nmsgs(ab);
	int		 r = -1;

	if (api_body_msgs_type(ab) != JSON_ARRAY ||
	    model_field(root, out) == -1)
		return api_fail(status, err, 400,
		    "Both 'model' and 'messages' fields are required.");
	if (stream_flag(root, out, status, err) == -1 ||
	    think_flag(root, out, status, err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		api_body_msg(ab, i, &mv);
		r = chat_message(&am, &mv, i, status, err);
		api_mview_clear(&mv);
		if (r == -1)
			goto out;
	}
	r = api_encode(out, &am, rqid, lim, json_object_get(root, "options"),
	    json_object_get(root, "tools"), NULL, status, err);
out:
	api_msgs_free(&am);
	return r;
}

/* The images of a generate request go with the last user message, or
 * with a new empty one. */
static void
generate_images(struct api_msgs *am, json_t *images)
{
	json_t	*img;
	size_t	 i, k = am->am_n;

	if (!json_is_array(images) || json_array_size(images) == 0)
		return;
	for (i = am->am_n; i > 0; i--)
		if (str_eq(api_msgs_role(am, i - 1), "user")) {
			k = i - 1;
			break;
		}
	if (k == am->am_n)
		k = api_msgs_add(am, "user", "", 0);
	json_array_foreach(images, i, img)
		api_msgs_image(am, k, json_string_value(img));
}

int
api_ollama_generate(const struct api_body *ab, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	json_t		*root = api_body_root(ab);
	const char	*sys = json_string_value(json_object_get(root, "system"));
	const char	*prompt = json_string_value(json_object_get(root,
			    "prompt"));
	struct api_msgs	 am = { NULL, NULL, 0, 0 };
	struct begtags	 bt;
	char		*text;
	size_t		 i;
	int		 r;

	if (model_field(root, out) == -1)
		return api_fail(status, err, 400,
		    "The 'model' field is required.");
	if (stream_flag(root, out, status, err) == -1 ||
	    think_flag(root, out, status, err) == -1 ||
	    api_images_check(json_object_get(root, "images"), "images", status,
	    err) == -1)
		return -1;
	/* WilmerAI joins system and prompt without a separator. */
	text = xasprintf("%s%s", sys ? sys : "", prompt ? prompt : "");
	begtags_parse(text, strlen(text), &bt);
	free(text);
	for (i = 0; i < bt.bt_n; i++)
		api_msgs_add(&am, bt.bt_msgs[i].bm_role,
		    bt.bt_msgs[i].bm_content, strlen(bt.bt_msgs[i].bm_content));
	begtags_free(&bt);
	generate_images(&am, json_object_get(root, "images"));
	r = api_encode(out, &am, rqid, lim, json_object_get(root, "options"),
	    NULL, NULL, status, err);
	api_msgs_free(&am);
	return r;
}
