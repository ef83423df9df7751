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

/* The next value: *has whether it is an integer (json_is_integer),
 * *out its value. */
static int
integer_next(struct jscan *js, bool *has, long long *out)
{
	struct jscan_val	 v;
	char			 text[32];

	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	*has = v.jv_type == JS_INTEGER && v.jv_n < sizeof(text);
	if (!*has)
		return skip(js, &v);
	memcpy(text, v.jv_p, v.jv_n);
	text[v.jv_n] = '\0';
	*out = strtoll(text, NULL, 10);	/* jscan: it fits */
	return SC_OK;
}

/* The next value: *out views it when it is a string, else p is NULL. */
static int
string_next(struct jscan *js, struct str *out)
{
	struct jscan_val	 v;

	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	*out = v.jv_type == JS_STRING ? v.jv_str : STR_NULL;
	return skip(js, &v);
}

/* A member this file reads, by key; any other is passed over. */
struct member {
	const char	*m_key;
	int		(*m_read)(struct jscan *, struct chat_delta *);
};

/* The next value: when it is an object, each member read by its entry
 * of ms[0..n); anything else passed over. A key met twice is read
 * twice, so the last one counts, as in jansson's tree. */
static int
members(struct jscan *js, struct chat_delta *d, const struct member *ms,
    size_t n)
{
	struct jscan_val	 v;
	struct str		 k;
	size_t			 i;
	int			 r, rc;

	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	if (v.jv_type != JS_OBJECT)
		return skip(js, &v);
	while ((r = jscan_member(js, &k)) == 1) {
		for (i = 0; i < n && !key_is(&k, ms[i].m_key); i++)
			;
		rc = i < n ? ms[i].m_read(js, d) : skip_next(js);
		if (rc != SC_OK)
			return rc;
	}
	return r == 0 ? SC_OK : SC_BAD;
}

static int
rd_prompt(struct jscan *js, struct chat_delta *d)
{
	return integer_next(js, &d->cd_has_prompt, &d->cd_prompt);
}

static int
rd_completion(struct jscan *js, struct chat_delta *d)
{
	return integer_next(js, &d->cd_has_completion, &d->cd_completion);
}

static int
rd_usage(struct jscan *js, struct chat_delta *d)
{
	static const struct member	 ms[] = { { "prompt_tokens", rd_prompt },
	    { "completion_tokens", rd_completion } };

	d->cd_has_prompt = d->cd_has_completion = false;
	return members(js, d, ms, sizeof(ms) / sizeof(ms[0]));
}

/* delta.tool_calls: null or [] change nothing; calls are the tree's. */
static int
rd_tool_calls(struct jscan *js, struct chat_delta *d)
{
	struct jscan_val	 v;
	int			 r;

	(void)d;
	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	if (v.jv_type != JS_ARRAY)
		return skip(js, &v);
	if ((r = jscan_element(js)) == -1)
		return SC_BAD;
	return r == 0 ? SC_OK : SC_FULL;
}

static int
rd_content(struct jscan *js, struct chat_delta *d)
{
	return string_next(js, &d->cd_content);
}

static int
rd_delta(struct jscan *js, struct chat_delta *d)
{
	static const struct member	 ms[] = {
	    { "tool_calls", rd_tool_calls }, { "content", rd_content } };

	d->cd_content = STR_NULL;
	return members(js, d, ms, sizeof(ms) / sizeof(ms[0]));
}

static int
rd_finish(struct jscan *js, struct chat_delta *d)
{
	return string_next(js, &d->cd_finish);
}

/* choices[0]: its delta and finish_reason. */
static int
rd_choice(struct jscan *js, struct chat_delta *d)
{
	static const struct member	 ms[] = { { "delta", rd_delta },
	    { "finish_reason", rd_finish } };

	d->cd_choice = true;
	return members(js, d, ms, sizeof(ms) / sizeof(ms[0]));
}

static int
rd_choices(struct jscan *js, struct chat_delta *d)
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
	if ((rc = rd_choice(js, d)) != SC_OK)
		return rc;
	while ((r = jscan_element(js)) == 1)
		if (skip_next(js) != SC_OK)
			return SC_BAD;
	return r == 0 ? SC_OK : SC_BAD;
}

/* "error": null is no error; anything else is the tree's to report. */
static int
rd_error(struct jscan *js, struct chat_delta *d)
{
	struct jscan_val	 v;

	(void)d;
	if (jscan_value(js, &v) == -1)
		return SC_BAD;
	return v.jv_type == JS_NULL ? SC_OK : SC_FULL;
}

int
chat_delta_scan(struct jscan *js, const char *data, size_t n,
    struct chat_delta *d)
{
	static const struct member	 ms[] = { { "choices", rd_choices },
	    { "usage", rd_usage }, { "error", rd_error } };
	size_t				 i = 0;

	memset(d, 0, sizeof(*d));
	jscan_init(js, data, n);
	/* members() passes over a top level that is not an object; here
	 * that is the tree's to report, so look first. */
	while (i < n && (data[i] == ' ' || data[i] == '\t' ||
	    data[i] == '\n' || data[i] == '\r'))
		i++;
	if (i == n || data[i] != '{')
		return 0;
	return members(js, d, ms, sizeof(ms) / sizeof(ms[0])) == SC_OK &&
	    jscan_finish(js) == 0 ? 1 : 0;
}
