/* chat_delta.c - one event of an OpenAI chat stream read without a tree, when it has the common shape. */
#include <stdlib.h>
#include <string.h>

#include "chat_delta.h"

/*
 * A stream brings one small JSON object per token; building jansson's
 * tree of each was a tenth of a worker's CPU per event. jscan reads it
 * in place instead. Whatever this file does not handle (tool calls, an
 * error, anything jscan refuses) goes back to the tree, which is always
 * right: a scan only has to agree with it where it answers.
 */

enum { SC_OK, SC_BAD, SC_FULL };	/* SC_FULL: the tree's job */

static bool
key_is(const struct str *k, const char *s)
{
	size_t	 n = strlen(s);

	return k->n == n && memcmp(k->p, s, n) == 0;
}

/* Pass over the value v just started. */
static int
skip(struct jscan *js, struct jscan_val *v)
{
	return jscan_skip(js, v) == 0 ? SC_OK : SC_BAD;
}

/* Read the next value and pass over it. */
static int
skip_next(struct jscan *js)
{
	struct jscan_val	 v;

	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	return skip(js, &v);
}

/* *has: whether v is an integer, as json_is_integer; *out its value. */
static void
integer(const struct jscan_val *v, bool *has, long long *out)
{
	char	 text[32];

	*has = v->jv_type == JS_INTEGER && v->jv_n < sizeof(text);
	if (!*has)
		return;
	memcpy(text, v->jv_p, v->jv_n);
	text[v->jv_n] = '\0';
	*out = strtoll(text, NULL, 10);	/* jscan: it fits */
}

/* A string value as a view, or p NULL for any other type. */
static struct str
string_of(const struct jscan_val *v)
{
	return v->jv_type == JS_STRING ? v->jv_str : STR_NULL;
}

static int
usage(struct jscan *js, struct chat_delta *d)
{
	struct jscan_val	 v;
	struct str		 k;
	int			 r;

	d->cd_has_prompt = d->cd_has_completion = false;
	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	if (v.jv_type != JS_OBJECT)
		return skip(js, &v);
	while ((r = jscan_member(js, &k)) == 1) {
		if (jscan_value(js, &v) == -1)
			return SC_BAD;
		if (key_is(&k, "prompt_tokens"))
			integer(&v, &d->cd_has_prompt, &d->cd_prompt);
		else if (key_is(&k, "completion_tokens"))
			integer(&v, &d->cd_has_completion, &d->cd_completion);
		if (skip(js, &v) != SC_OK)
			return SC_BAD;
	}
	return r == 0 ? SC_OK : SC_BAD;
}

/* delta.tool_calls: null or [] change nothing; calls are the tree's. */
static int
tool_calls(struct jscan *js)
{
	struct jscan_val	 v;
	int			 r;

	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	if (v.jv_type != JS_ARRAY)
		return skip(js, &v);
	if ((r = jscan_element(js)) == -1)
		return SC_BAD;
	return r == 0 ? SC_OK : SC_FULL;
}

static int
delta(struct jscan *js, struct chat_delta *d)
{
	struct jscan_val	 v;
	struct str		 k;
	int			 r, rc;

	d->cd_content = STR_NULL;
	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	if (v.jv_type != JS_OBJECT)
		return skip(js, &v);
	while ((r = jscan_member(js, &k)) == 1) {
		if (key_is(&k, "tool_calls"))
			rc = tool_calls(js);
		else if (key_is(&k, "content")) {
			if (jscan_value(js, &v) == -1)
				return SC_BAD;
			d->cd_content = string_of(&v);
			rc = skip(js, &v);
		} else
			rc = skip_next(js);
		if (rc != SC_OK)
			return rc;
	}
	return r == 0 ? SC_OK : SC_BAD;
}

/* choices[0]: its delta and finish_reason. */
static int
choice(struct jscan *js, struct chat_delta *d)
{
	struct jscan_val	 v;
	struct str		 k;
	int			 r, rc;

	d->cd_choice = true;
	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	if (v.jv_type != JS_OBJECT)
		return skip(js, &v);
	while ((r = jscan_member(js, &k)) == 1) {
		if (key_is(&k, "delta"))
			rc = delta(js, d);
		else if (key_is(&k, "finish_reason")) {
			if (jscan_value(js, &v) == -1)
				return SC_BAD;
			d->cd_finish = string_of(&v);
			rc = skip(js, &v);
		} else
			rc = skip_next(js);
		if (rc != SC_OK)
			return rc;
	}
	return r == 0 ? SC_OK : SC_BAD;
}

static int
choices(struct jscan *js, struct chat_delta *d)
{
	struct jscan_val	 v;
	int			 r, rc;

	d->cd_choice = false;
	d->cd_content = d->cd_finish = STR_NULL;
	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	if (v.jv_type != JS_ARRAY)
		return skip(js, &v);
	if ((r = jscan_element(js)) != 1)
		return r == 0 ? SC_OK : SC_BAD;
	if ((rc = choice(js, d)) != SC_OK)
		return rc;
	while ((r = jscan_element(js)) == 1)
		if (skip_next(js) != SC_OK)
			return SC_BAD;
	return r == 0 ? SC_OK : SC_BAD;
}

/* "error": null is no error; anything else is the tree's to report. */
static int
error_member(struct jscan *js)
{
	struct jscan_val	 v;

	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	return v.jv_type == JS_NULL ? SC_OK : SC_FULL;
}

int
chat_delta_scan(struct jscan *js, const char *data, size_t n,
    struct chat_delta *d)
{
	struct jscan_val	 v;
	struct str		 k;
	int			 r, rc;

	memset(d, 0, sizeof(*d));
	jscan_init(js, data, n);
	if (jscan_value(js, &v) == -1 || v.jv_type != JS_OBJECT)
		return 0;
	while ((r = jscan_member(js, &k)) == 1) {
		if (key_is(&k, "choices"))
			rc = choices(js, d);
		else if (key_is(&k, "usage"))
			rc = usage(js, d);
		else if (key_is(&k, "error"))
			rc = error_member(js);
		else
			rc = skip_next(js);
		if (rc != SC_OK)
			return 0;
	}
	return r == 0 && jscan_finish(js) == 0 ? 1 : 0;
}
