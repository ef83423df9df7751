/* wiki.c - the OfflineWikipediaTextApi client: one GET, its answer turned into WilmerAI's strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "wiki.h"

#define WIKI_DISABLED	"No additional information provided"
#define WIKI_NOT_IN_DB	"The information may not be available in the " \
			"offline database."
#define WIKI_ART_SEP	"\n\n--- END ARTICLE ---\n\n"
#define WIKI_SUM_SEP	"\n\n--- END SUMMARY ---\n\n"
#define WIKI_BODY_MAX	(64u << 20)	/* a 200 body larger fails */

static const char *const wiki_paths[] = {
	"/articles", "/top_article", "/top_n_articles", "/summaries"
};

/* A setting as WilmerAI interpolates it: a string verbatim, anything
 * else as Python's str(); def when absent. */
static void
wiki_setting(struct buf *b, const json_t *root, const char *key,
    const char *def)
{
	const json_t	*v = json_object_get(root, key);

	if (v == NULL)
		buf_adds(b, def);
	else
		pyfmt_str(b, v);
}

void
wiki_conf_load(struct wiki_conf *c, const json_t *root)
{
	struct buf	 b = BUF_INIT;

	memset(c, 0, sizeof(*c));
	c->wc_use = pyfmt_truthy(json_object_get(root, "useOfflineWikiApi"));
	buf_adds(&b, "http://");
	wiki_setting(&b, root, "offlineWikiApiHost", "127.0.0.1");
	buf_addc(&b, ':');
	wiki_setting(&b, root, "offlineWikiApiPort", "5728");
	c->wc_base = buf_take(&b);
	c->wc_connect_ms = 5000;
	c->wc_read_ms = 60000;
}

void
wiki_conf_free(struct wiki_conf *c)
{
	if (c == NULL)
		return;
	free(c->wc_base);
	c->wc_base = NULL;
}

/* Python's quote_plus of s. */
static void
wiki_quote(struct buf *b, const char *s)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("_.-~", *p) != NULL)
			buf_addc(b, (char)*p);
		else if (*p == ' ')
			buf_addc(b, '+');
		else
			buf_printf(b, "%%%02X", *p);
	}
}

char *
wiki_url(const struct wiki_conf *c, const struct wiki_query *q)
{
	struct buf	 b = BUF_INIT;

	buf_printf(&b, "%s%s?prompt=", c->wc_base, wiki_paths[q->q_kind]);
	wiki_quote(&b, q->q_prompt);
	buf_adds(&b, "&percentile=");
	wiki_quote(&b, q->q_percentile);
	buf_printf(&b, "&num_results=%ld", q->q_num_results);
	if (q->q_kind == WIKI_TOPN)
		buf_printf(&b, "&num_top_articles=%ld", q->q_top_n);
	return buf_take(&b);
}

/* Python's str() of member key of o, or def when o lacks it. */
static void
wiki_member(struct buf *out, const json_t *o, const char *key,
    const char *def)
{
	const json_t	*v = json_object_get(o, key);

	if (v == NULL)
		buf_adds(out, def);
	else if (json_is_string(v))
		buf_add(out, json_string_value(v), json_string_length(v));
	else
		pyfmt_str(out, v);
}

/* "Title: {title}\n{text}" of one article or summary. */
static void
wiki_titled(struct buf *out, const json_t *o, const char *untitled)
{
	buf_adds(out, "Title: ");
	wiki_member(out, o, "title", untitled);
	buf_addc(out, '\n');
	wiki_member(out, o, "text", "No text available.");
}

/* /articles: the first article's text. */
static int
wiki_full(const struct wiki_query *q, const json_t *v, struct buf *out)
{
	const json_t	*first;

	if (!json_is_array(v))
		return -1;
	if (json_array_size(v) == 0) {
		buf_printf(out, "No article found for '%s'.", q->q_prompt);
		return 0;
	}
	first = json_array_get(v, 0);
	if (!json_is_object(first))
		return -1;
	wiki_member(out, first, "text", "No text element found");
	return 0;
}

/* /top_article: the one article's text. */
static int
wiki_best(const json_t *v, struct buf *out)
{
	if (!json_is_object(v))
		return -1;
	wiki_member(out, v, "text", "No text element found");
	return 0;
}

/* /top_n_articles: every article, or (QUIRK) an object's keys. */
static int
wiki_topn(const struct wiki_query *q, json_t *v, struct buf *out)
{
	const char	*key;
	json_t		*e;
	size_t		 i, n = 0;

	if (!json_is_array(v) && !json_is_object(v))
		return -1;
	if (json_is_object(v)) {
		json_object_foreach(v, key, e)
			buf_printf(out, "%s%s", n++ ? WIKI_ART_SEP : "", key);
	} else {
		json_array_foreach(v, i, e) {
			if (i > 0)
				buf_adds(out, WIKI_ART_SEP);
			if (json_is_object(e))
				wiki_titled(out, e, "Untitled Article");
			else
				pyfmt_str(out, e);
		}
		n = i;
	}
	if (n == 0)
		buf_printf(out, "No articles found for '%s' in the offline "
		    "database.", q->q_prompt);
	return 0;
}

/* /summaries: every summary; a non-object among them raises. */
static int
wiki_partial(const struct wiki_query *q, const json_t *v, struct buf *out)
{
	const json_t	*e;
	size_t		 i, start = out->b_len;

	if (!json_is_array(v) || json_array_size(v) == 0) {
		buf_printf(out, "No summary found for '%s'.", q->q_prompt);
		return 0;
	}
	json_array_foreach(v, i, e) {
		if (!json_is_object(e)) {
			out->b_len = start;
			return -1;
		}
		if (i > 0)
			buf_adds(out, WIKI_SUM_SEP);
		wiki_titled(out, e, "Untitled Summary");
	}
	return 0;
}

/* The 404 answer of each search. */
static void
wiki_not_found(const struct wiki_query *q, struct buf *out)
{
	static const char *const head[] = {
		"No articles found for", "No article found for",
		"No articles found for", "Title: Not Found\nNo summaries "
		"found for"
	};

	buf_printf(out, "%s '%s'. %s", head[q->q_kind], q->q_prompt,
	    WIKI_NOT_IN_DB);
}

int
wiki_answer(const struct wiki_query *q, long status, const char *body,
    size_t len, struct buf *out)
{
	json_t		*v;
	json_error_t	 je;
	int		 r = -1;

	if (status == 404) {
		wiki_not_found(q, out);
		return 0;
	}
	if (status != 200 || (v = json_loadb(body, len, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, &je)) == NULL)
		return -1;
	switch (q->q_kind) {
	case WIKI_FULL:
		r = wiki_full(q, v, out);
		break;
	case WIKI_BEST:
		r = wiki_best(v, out);
		break;
	case WIKI_TOPN:
		r = wiki_topn(q, v, out);
		break;
	case WIKI_PARTIAL:
		r = wiki_partial(q, v, out);
		break;
	}
	json_decref(v);
	return r;
}

/* The body of a 200 answer, kept whole up to WIKI_BODY_MAX. */
static int
wiki_on_data(void *arg, const char *p, size_t n)
{
	struct buf	*b = arg;

	if (b->b_len + n > WIKI_BODY_MAX)
		return -1;
	buf_add(b, p, n);
	return 0;
}

/* One GET; the status and body (2xx or not) into *status and body.
 * Returns 0, -1 on a transport failure, 1 when cancelled. */
static int
wiki_get(const struct wiki_conf *c, const char *url,
    const struct transport_hooks *hooks, long *status, struct buf *body)
{
	struct transport_call	 call;
	struct transport_result	 tr;

	memset(&call, 0, sizeof(call));
	call.url = url;
	call.connect_timeout_ms = c->wc_connect_ms;
	call.read_timeout_ms = c->wc_read_ms;
	call.on_data = wiki_on_data;
	call.arg = body;
	memset(&tr, 0, sizeof(tr));
	transport_perform(&call, hooks, &tr);
	*status = tr.status;
	if (tr.outcome == XFER_OK && (tr.status < 200 || tr.status > 299))
		buf_add(body, tr.err_body.b_data, tr.err_body.b_len);
	buf_free(&tr.err_body);
	if (tr.outcome == XFER_CANCELLED)
		return 1;
	if (tr.outcome != XFER_OK) {
		log_warnx("offline wiki: %s", tr.error);
		return -1;
	}
	return 0;
}

int
wiki_search(const struct wiki_conf *c, const struct wiki_query *q,
    const struct transport_hooks *hooks, struct buf *out)
{
	struct buf	 body = BUF_INIT;
	char		*url;
	long		 status = 0;
	int		 r;

	if (!c->wc_use) {
		buf_adds(out, q->q_kind == WIKI_PARTIAL ? "Title: Offline Wiki "
		    "Disabled\n" WIKI_DISABLED : WIKI_DISABLED);
		return 0;
	}
	url = wiki_url(c, q);
	r = wiki_get(c, url, hooks, &status, &body);
	free(url);
	if (r == 0 && wiki_answer(q, status, body.b_data, body.b_len,
	    out) != 0) {
		log_warnx("offline wiki: HTTP %ld, an answer that is not "
		    "one (%zu bytes)", status, body.b_len);
		r = -1;
	}
	if (r == -1)
		buf_printf(out, "I'm sorry, I couldn't find any Wikipedia "
		    "information about '%s'.", q->q_prompt);
	buf_free(&body);
	return r == 1 ? 1 : 0;
}
