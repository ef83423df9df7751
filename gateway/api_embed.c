/* api_embed.c - embeddings request bodies (OpenAI /v1/embeddings, Ollama /api/embed and /api/embeddings) turned into REQ_START frames. */
#include <jansson.h>
#include <string.h>

#include "../common/xmem.h"
#include "api_embed.h"

int
api_embed_api(enum embed_shape shape)
{
	return shape == EMBED_OPENAI ? API_OPENAI_EMBED : API_OLLAMA_EMBED;
}

bool
api_embed_ollama(enum embed_shape shape)
{
	return shape != EMBED_OPENAI;
}

static void
add_text(struct api_msgs *am, const json_t *s)
{
	(void)api_msgs_add(am, "user", json_string_value(s),
	    json_string_length(s));
}

/* Token ids: a list of integers, or a list of such lists. */
static bool
token_ids(const json_t *in)
{
	const json_t	*e = json_array_get(in, 0);

	return json_is_integer(e) || json_is_array(e);
}

/* OpenAI's "input": a string or a non-empty list of strings. */
static int
openai_input(const json_t *in, struct api_msgs *am, int *status,
    char err[API_ERRLEN])
{
	const json_t	*s;
	size_t		 i;

	if (json_is_string(in)) {
		add_text(am, in);
		return 0;
	}
	if (!json_is_array(in))
		return api_fail(status, err, 400, in == NULL ? "The 'input' "
		    "field is required." : "'input' must be a string or a "
		    "list of strings.");
	if (json_array_size(in) == 0)
		return api_fail(status, err, 400, "'input' must not be an "
		    "empty list.");
	if (token_ids(in))
		return api_fail(status, err, 400, "'input' as token ids is not "
		    "supported: Sluice passes texts to the embeddings "
		    "endpoint, whose tokenizer it does not know; send strings.");
	json_array_foreach(in, i, s) {
		if (!json_is_string(s))
			return api_fail(status, err, 400, "'input' must be a "
			    "string or a list of strings.");
		add_text(am, s);
	}
	return 0;
}

/* "encoding_format": "float" (the default) or "base64". */
static int
openai_format(const json_t *root, bool *b64, int *status,
    char err[API_ERRLEN])
{
	const json_t	*f = json_object_get(root, "encoding_format");
	const char	*s = json_string_value(f);

	*b64 = false;
	if (f == NULL || json_is_null(f) || (s != NULL && strcmp(s, "float") ==
	    0))
		return 0;
	if (s != NULL && strcmp(s, "base64") == 0) {
		*b64 = true;
		return 0;
	}
	return api_fail(status, err, 400, "'encoding_format' must be \"float\" "
	    "or \"base64\".");
}

/* Ollama's "input": a string ("" is none), a list of strings, or
 * absent; anything else is Ollama's "invalid input type". */
static int
ollama_input(const json_t *in, struct api_msgs *am, int *status,
    char err[API_ERRLEN])
{
	const json_t	*s;
	size_t		 i;

	if (in == NULL || json_is_null(in))
		return 0;
	if (json_is_string(in)) {
		if (json_string_length(in) > 0)
			add_text(am, in);
		return 0;
	}
	if (!json_is_array(in))
		return api_fail(status, err, 400, "invalid input type");
	json_array_foreach(in, i, s) {
		if (!json_is_string(s))
			return api_fail(status, err, 400, "invalid input type");
		add_text(am, s);
	}
	return 0;
}

/* The legacy route's "prompt": a string ("" is none) or absent. */
static int
legacy_prompt(const json_t *p, struct api_msgs *am, int *status,
    char err[API_ERRLEN])
{
	if (p == NULL || json_is_null(p))
		return 0;
	if (!json_is_string(p))
		return api_fail(status, err, 400, "'prompt' must be a string.");
	if (json_string_length(p) > 0)
		add_text(am, p);
	return 0;
}

static int
texts(enum embed_shape shape, json_t *root, struct api_msgs *am, bool *b64,
    int *status, char err[API_ERRLEN])
{
	const char	*model = json_string_value(json_object_get(root,
			    "model"));

	*b64 = false;
	if (shape == EMBED_OPENAI)
		return openai_format(root, b64, status, err) == -1 ? -1 :
		    openai_input(json_object_get(root, "input"), am, status,
		    err);
	if (model == NULL || *model == '\0')
		return api_fail(status, err, 400, "model is required");
	if (shape == EMBED_OLLAMA)
		return ollama_input(json_object_get(root, "input"), am, status,
		    err);
	return legacy_prompt(json_object_get(root, "prompt"), am, status, err);
}

int
api_embed_build(enum embed_shape shape, json_t *root, const char *rqid,
    const struct api_limits *lim, struct api_req *out, bool *b64,
    int *status, char err[API_ERRLEN])
{
	struct api_msgs	 am;
	int		 r;

	memset(out, 0, sizeof(*out));
	memset(&am, 0, sizeof(am));
	out->ar_api = api_embed_api(shape);
	out->ar_model = xstrdup(api_model(root));
	r = texts(shape, root, &am, b64, status, err);
	if (r == 0)
		r = api_encode(out, &am, rqid, lim, NULL, NULL, NULL, status,
		    err);
	api_msgs_free(&am);
	if (r == -1)
		api_req_clear(out);
	return r;
}
