/* research.c - the Offline Researcher client: POST /search, envelope. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "research.h"

/*
 * Where Sluice differs from WilmerAI, on purpose:
 * - Timeouts. WilmerAI gives requests (min(5, T), T): a connect and a
 *   per-read timeout. Here T is the whole call's limit (connect
 *   included), which for a service that answers in one body is the
 *   same bound or a tighter one. timeoutSeconds null means no limit in
 *   WilmerAI; here the connect still has 5 s and the call is bounded by
 *   the request itself: its deadline and the client leaving stop it
 *   (the hooks).
 * - A body over RESEARCH_MAX is not read to the end: transport_error.
 * - A 200 body is parsed by jansson: NaN and Infinity, which Python
 *   takes, are invalid_json here.
 */

#define RESEARCH_MAX		(8u << 20)	/* largest answer read */
#define RESEARCH_CONNECT_S	5.0
#define RESEARCH_MAX_MS		(7L * 24 * 3600 * 1000)	/* a week */

/* The answer as it arrives (2xx only). */
struct sink {
	struct buf	 s_body;
	bool		 s_over;
};

/* str() of a setting, or def when the user file has none. */
static char *
setting(const json_t *user, const char *key, const char *def)
{
	json_t	*v = json_object_get(user, key);

	return v != NULL ? pyfmt_strdup(v) : xstrdup(def);
}

void
research_settings_load(const json_t *user, struct research_settings *s)
{
	s->rs_enabled = pyfmt_truthy(json_object_get(user,
	    "useOfflineResearcherApi"));
	s->rs_host = setting(user, "offlineResearcherApiHost", "127.0.0.1");
	s->rs_port = setting(user, "offlineResearcherApiPort", "8890");
}

void
research_settings_free(struct research_settings *s)
{
	free(s->rs_host);
	free(s->rs_port);
	memset(s, 0, sizeof(*s));
}

char *
research_body(const struct research_call *c)
{
	json_t	*o = json_object();
	char	*s;

	json_object_set_new(o, "query", json_string(c->rc_query));
	json_object_set_new(o, "mode", json_string(c->rc_mode));
	if (c->rc_max_iter != NULL)
		json_object_set_new(o, "max_iterations",
		    json_deep_copy(c->rc_max_iter));
	s = jsonw_dumps(o, JSONW_PYTHON);
	json_decref(o);
	return s;
}

/* WilmerAI's envelope for an outcome without an answer. */
static json_t *
envelope(const char *reason)
{
	return json_pack("{s:s, s:s, s:n, s:b, s:[]}", "status", "error",
	    "reason", reason, "answer", "no_information_found", 0,
	    "sources");
}

static long
to_ms(double s)
{
	double	 ms = ceil(s * 1000);

	return ms > (double)RESEARCH_MAX_MS ? RESEARCH_MAX_MS : (long)ms;
}

/* The connect and total timeouts from timeoutSeconds; -1 where
 * WilmerAI's call raises (requests refuses a boolean, a non-number, or
 * a number not above 0). */
static int
timeouts(const struct research_call *c, long *connect_ms, long *total_ms)
{
	double	 t = c->rc_default_s;

	if (json_is_null(c->rc_timeout)) {
		*connect_ms = to_ms(RESEARCH_CONNECT_S);
		*total_ms = 0;
		return 0;
	}
	if (c->rc_timeout != NULL) {
		if (!json_is_number(c->rc_timeout))
			return -1;
		t = json_number_value(c->rc_timeout);
	}
	if (!(t > 0) || !isfinite(t))
		return -1;
	*connect_ms = to_ms(t < RESEARCH_CONNECT_S ? t : RESEARCH_CONNECT_S);
	*total_ms = to_ms(t);
	return 0;
}

static int
on_data(void *arg, const char *p, size_t n)
{
	struct sink	*s = arg;

	if (s->s_body.b_len + n > RESEARCH_MAX) {
		s->s_over = true;
		return -1;
	}
	buf_add(&s->s_body, p, n);
	return 0;
}

/* A 200 answer: the parsed body as it is, or invalid_json. */
static json_t *
parsed(const struct buf *body)
{
	json_t	*v;

	v = json_loadb(body->b_data != NULL ? body->b_data : "",
	    body->b_len, JSON_DECODE_ANY, NULL);
	return v != NULL ? v : envelope("invalid_json");
}

/* The envelope of a finished transfer. */
static json_t *
judged(const struct transport_result *r, const struct sink *s)
{
	char	 reason[32];

	switch (r->outcome) {
	case XFER_OK:
		if (r->status == 200)
			return parsed(&s->s_body);
		snprintf(reason, sizeof(reason), "http_%ld", r->status);
		return envelope(reason);
	case XFER_TIMEOUT:
		return envelope("timeout");
	default:
		return envelope("transport_error");
	}
}

enum research_end
research_search(const struct research_settings *st,
    const struct research_call *c, const struct transport_hooks *hooks,
    json_t **env)
{
	const char		*hdrs[] = { "Content-Type: application/json",
				    NULL };
	struct transport_call	 call;
	struct transport_result	 r;
	struct sink		 s = { BUF_INIT, false };
	char			*url, *body;
	long			 cms, tms;

	*env = NULL;
	if (!st->rs_enabled) {
		*env = envelope("offline_researcher_disabled");
		return RESEARCH_DONE;
	}
	if (timeouts(c, &cms, &tms) == -1)
		return RESEARCH_RAISED;
	url = xasprintf("http://%s:%s/search", st->rs_host, st->rs_port);
	body = research_body(c);
	call = (struct transport_call){ .url = url, .headers = hdrs,
	    .body = body, .body_len = strlen(body), .connect_timeout_ms = cms,
	    .total_timeout_ms = tms, .on_data = on_data, .arg = &s };
	memset(&r, 0, sizeof(r));
	buf_init(&r.err_body);
	transport_perform(&call, hooks, &r);
	log_debug("researcher %s: outcome %d, HTTP %ld%s %s", c->rc_mode,
	    (int)r.outcome, r.status, s.s_over ? " (answer too large)" : "",
	    r.error);
	if (r.outcome != XFER_CANCELLED)
		*env = judged(&r, &s);
	buf_free(&r.err_body);
	buf_free(&s.s_body);
	free(body);
	free(url);
	return *env != NULL ? RESEARCH_DONE : RESEARCH_CANCELLED;
}

/* str() of member key of o, or def when o has none. */
static void
member(struct buf *out, const json_t *o, const char *key, const char *def)
{
	const json_t	*v = json_object_get(o, key);

	if (v != NULL)
		pyfmt_str(out, v);
	else
		buf_adds(out, def);
}

/* Rules 5 and 6: the sources a line each, when some are objects. */
static void
with_sources(const json_t *env, struct buf *out)
{
	const json_t	*list = json_object_get(env, "sources"), *e;
	size_t		 i, n = 0;

	member(out, env, "answer", "");
	if (!json_is_array(list))
		return;
	json_array_foreach(list, i, e) {
		if (!json_is_object(e))
			continue;
		buf_adds(out, n++ == 0 ? "\n\nSources:\n" : "\n");
		buf_adds(out, "- ");
		member(out, e, "book", "");
		buf_adds(out, " :: ");
		member(out, e, "title", "");
	}
}

void
research_text(const json_t *env, const char *q, bool sources,
    struct buf *out)
{
	const char	*st;

	if (env == NULL) {
		buf_printf(out, "I'm sorry, the offline researcher could not "
		    "be reached for '%s'.", q);
		return;
	}
	st = json_string_value(json_object_get(env, "status"));
	if (st != NULL && strcmp(st, "error") == 0) {
		buf_adds(out, "I'm sorry, the offline researcher returned an "
		    "error (");
		member(out, env, "reason", "unknown");
		buf_printf(out, ") for '%s'.", q);
	} else if (pyfmt_truthy(json_object_get(env,
	    "no_information_found")) ||
	    !pyfmt_truthy(json_object_get(env, "answer")))
		buf_adds(out, "No pertinent information was found in the "
		    "search");
	else if (!sources)
		member(out, env, "answer", "");
	else
		with_sources(env, out);
}
