/* resp_embed.c - the embeddings routes' answers, shaped from the worker's neutral JSON. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/base64.h"
#include "../common/json.h"
#include "../common/pyfmt.h"
#include "resp_embed.h"

/* The worker's answer, checked: borrowed from its parsed root. */
struct answer {
	const char	*a_model;	/* the echo */
	json_int_t	 a_tokens;
	json_t		*a_vecs;	/* array of arrays of numbers */
};

static int
fail(char err[RESP_EMBED_ERRLEN], const char *why)
{
	snprintf(err, RESP_EMBED_ERRLEN, "the worker's embeddings answer %s",
	    why);
	return -1;
}

static bool
vector_ok(const json_t *v)
{
	const json_t	*x;
	size_t		 i;

	if (!json_is_array(v))
		return false;
	json_array_foreach(v, i, x)
		if (!json_is_number(x) || !isfinite(json_number_value(x)))
			return false;
	return true;
}

static int
check(json_t *root, const struct resp_embed_ctx *rc, struct answer *a,
    char err[RESP_EMBED_ERRLEN])
{
	const json_t	*v, *t = json_object_get(root, "prompt_tokens");
	const char	*m = json_string_value(json_object_get(root, "model"));
	size_t		 i;

	if (!json_is_object(root))
		return fail(err, "is not a JSON object");
	a->a_vecs = json_object_get(root, "embeddings");
	if (!json_is_array(a->a_vecs))
		return fail(err, "has no list of embeddings");
	json_array_foreach(a->a_vecs, i, v)
		if (!vector_ok(v))
			return fail(err, "has a vector that is not a list of "
			    "numbers");
	a->a_tokens = json_is_integer(t) && json_integer_value(t) > 0 ?
	    json_integer_value(t) : 0;
	a->a_model = rc->re_model != NULL && *rc->re_model != '\0' ?
	    rc->re_model : m != NULL ? m : "";
	return 0;
}

static void
put_str(struct buf *out, const char *s)
{
	buf_addc(out, '"');
	json_escape(out, s, strlen(s));
	buf_addc(out, '"');
}

static void
put_floats(struct buf *out, const json_t *v)
{
	const json_t	*x;
	size_t		 i;

	buf_addc(out, '[');
	json_array_foreach(v, i, x) {
		if (i > 0)
			buf_addc(out, ',');
		pyfmt_float(out, json_number_value(x));
	}
	buf_addc(out, ']');
}

/* OpenAI's base64: each number as a little-endian IEEE float32. */
static void
put_base64(struct buf *out, const json_t *v)
{
	struct buf	 raw = BUF_INIT;
	const json_t	*x;
	unsigned char	 le[4];
	uint32_t	 u;
	float		 f;
	size_t		 i;

	json_array_foreach(v, i, x) {
		f = (float)json_number_value(x);
		memcpy(&u, &f, sizeof(u));
		le[0] = u & 0xff;
		le[1] = u >> 8 & 0xff;
		le[2] = u >> 16 & 0xff;
		le[3] = u >> 24 & 0xff;
		buf_add(&raw, le, 4);
	}
	buf_addc(out, '"');
	base64_encode(out, raw.b_data, raw.b_len);
	buf_addc(out, '"');
	buf_free(&raw);
}

static void
openai(struct buf *out, const struct resp_embed_ctx *rc,
    const struct answer *a)
{
	const json_t	*v;
	size_t		 i;

	buf_adds(out, "{\"object\":\"list\",\"data\":[");
	json_array_foreach(a->a_vecs, i, v) {
		buf_printf(out, "%s{\"object\":\"embedding\",\"index\":%zu,"
		    "\"embedding\":", i > 0 ? "," : "", i);
		if (rc->re_b64)
			put_base64(out, v);
		else
			put_floats(out, v);
		buf_addc(out, '}');
	}
	buf_adds(out, "],\"model\":");
	put_str(out, a->a_model);
	buf_printf(out, ",\"usage\":{\"prompt_tokens\":%lld,\"total_tokens\":"
	    "%lld}}", (long long)a->a_tokens, (long long)a->a_tokens);
}

static void
ollama(struct buf *out, const struct resp_embed_ctx *rc,
    const struct answer *a)
{
	const json_t	*v;
	size_t		 i;

	buf_adds(out, "{\"model\":");
	put_str(out, a->a_model);
	buf_adds(out, ",\"embeddings\":[");
	json_array_foreach(a->a_vecs, i, v) {
		if (i > 0)
			buf_addc(out, ',');
		put_floats(out, v);
	}
	buf_printf(out, "],\"total_duration\":%llu,\"load_duration\":0,"
	    "\"prompt_eval_count\":%lld}", (unsigned long long)rc->re_total_ns,
	    (long long)a->a_tokens);
}

int
resp_embed(struct buf *out, const struct resp_embed_ctx *rc,
    const char *text, size_t len, char err[RESP_EMBED_ERRLEN])
{
	json_t		*root = json_loadb(text, len, 0, NULL);
	struct answer	 a;
	json_t		*first;

	if (root == NULL)
		return fail(err, "is not JSON");
	if (check(root, rc, &a, err) == -1) {
		json_decref(root);
		return -1;
	}
	switch (rc->re_shape) {
	case EMBED_OPENAI:
		openai(out, rc, &a);
		break;
	case EMBED_OLLAMA:
		ollama(out, rc, &a);
		break;
	case EMBED_OLLAMA_LEGACY:
		buf_adds(out, "{\"embedding\":");
		first = json_array_get(a.a_vecs, 0);
		if (first != NULL)
			put_floats(out, first);
		else
			buf_adds(out, "[]");
		buf_addc(out, '}');
		break;
	}
	json_decref(root);
	return 0;
}
