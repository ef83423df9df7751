/* confcheck_vars.c - --check-config: {variables} in endpoint and preset names, resolved where the configuration fixes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/pyfmt.h"
#include "../common/xmem.h"
#include "confcheck_int.h"

/*
 * The worker formats endpointName and preset with its "early" table
 * (the workflow's top-level keys, then agentNInput), and scoped_variables
 * with everything (user-wide variables, the clock, workflow keys, the
 * discussion id, agentNInput, the conversation, agentNOutput). Template
 * values (workflow keys, user-wide variables) are expanded once where
 * they are inserted; "{{" and "}}" are literal braces; an unknown
 * {name} stays as written (worker/vars.c). This file does the same with
 * what the configuration fixes, and gives up on the rest.
 */

#define NAME_MAX_CK	128

/* Set per request, never by configuration (spec 5). */
static const char *const request_vars[] = {
	"todays_date_pretty", "todays_date_iso", "YYYY_MM_DD",
	"current_time_12h", "current_time_24h", "current_month_full",
	"current_day_of_week", "current_day_of_month", "Discussion_Id",
	"time_context_summary", "messages", NULL
};
static const char *const request_prefixes[] = { "chat_", "templated_",
	"category", NULL };

enum look {
	L_VALUE,	/* *val is its value */
	L_REQUEST,	/* set only when a request runs */
	L_NONE		/* not a variable here: stays "{name}" */
};

struct rs {
	const struct ck_scope	*r_sc;
	bool			 r_early;
	struct buf		 r_out;
	char			*r_why;		/* the first name without value */
};

/* N for "agent<N><suffix>" (N >= 1), else 0. */
static size_t
agent_index(const char *name, const char *suffix)
{
	const char	*p;
	size_t		 i = 0;

	if (strncmp(name, "agent", 5) != 0)
		return 0;
	for (p = name + 5; *p >= '0' && *p <= '9' && i < 100000; p++)
		i = i * 10 + (size_t)(*p - '0');
	if (p == name + 5 || strcmp(p, suffix) != 0)
		return 0;
	return i;
}

static bool
is_request_var(const char *name)
{
	size_t	 i;

	for (i = 0; request_vars[i] != NULL; i++)
		if (strcmp(name, request_vars[i]) == 0)
			return true;
	for (i = 0; request_prefixes[i] != NULL; i++)
		if (strncmp(name, request_prefixes[i],
		    strlen(request_prefixes[i])) == 0)
			return true;
	return false;
}

/* Python's str() of a JSON value, for the kinds that could name a
 * file; NULL for lists, objects and reals. Caller frees. */
static char *
py_str(json_t *v)
{
	if (json_is_array(v) || json_is_object(v) || json_is_real(v))
		return NULL;
	return pyfmt_strdup(v);
}

static void
set_why(struct rs *r, char *why)
{
	if (r->r_why == NULL)
		r->r_why = why;
	else
		free(why);
}

/* agentNInput: what the caller passes (*val, caller frees), or why
 * nothing is known. */
static enum look
look_input(struct rs *r, const char *name, size_t i, char **val)
{
	const struct ck_inputs	*in = r->r_sc->sc_in;

	if (in == NULL || i > in->in_n)
		return L_NONE;
	if (in->in_val[i - 1] != NULL) {
		*val = xstrdup(in->in_val[i - 1]);
		return L_VALUE;
	}
	set_why(r, xasprintf("{%s} is the caller's scoped_variables entry "
	    "%zu (%s)", name, i, in->in_why[i - 1]));
	return L_REQUEST;
}

/* The value of name in this scope (*val, caller frees), or why it has
 * none. *tmpl: a template value (expanded once). */
static enum look
lookup(struct rs *r, const char *name, char **val, bool *tmpl)
{
	const struct ck_scope	*sc = r->r_sc;
	json_t			*v;
	enum look		 l;
	size_t			 i;

	*tmpl = false;
	if ((i = agent_index(name, "Input")) > 0 &&
	    (l = look_input(r, name, i, val)) != L_NONE)
		return l;
	if (!r->r_early && agent_index(name, "Output") > 0) {
		set_why(r, xasprintf("{%s} is a node's output", name));
		return L_REQUEST;
	}
	if (!r->r_early && is_request_var(name)) {
		set_why(r, xasprintf("{%s} is set when a request runs", name));
		return L_REQUEST;
	}
	v = strcmp(name, "nodes") != 0 ? json_object_get(sc->sc_wvars, name) :
	    NULL;
	if (v == NULL && !r->r_early)
		v = json_object_get(sc->sc_uvars, name);
	if (v != NULL && (*val = py_str(v)) != NULL) {
		*tmpl = true;
		return L_VALUE;
	}
	return L_NONE;
}

/* Why {name} stays as written. Caller frees. */
static char *
why_none(const struct rs *r, const char *name)
{
	const struct ck_inputs	*in = r->r_sc->sc_in;
	size_t			 i = agent_index(name, "Input");

	if (i > 0 && in == NULL)
		return xasprintf("{%s} is not set: the workflow runs with no "
		    "scoped_variables here", name);
	if (i > 0)
		return xasprintf("{%s} is not set: the caller passes %zu "
		    "scoped_variables", name, in->in_n);
	if (r->r_early && (json_object_get(r->r_sc->sc_uvars, name) != NULL ||
	    is_request_var(name) || agent_index(name, "Output") > 0))
		return xasprintf("{%s} is not seen here: endpointName and "
		    "preset see only the workflow's top-level keys and "
		    "agentNInput", name);
	if (json_object_get(r->r_sc->sc_wvars, name) != NULL ||
	    json_object_get(r->r_sc->sc_uvars, name) != NULL)
		return xasprintf("{%s} is a list, an object or a real "
		    "number", name);
	return xasprintf("there is no variable {%s}", name);
}

static void	expand(struct rs *r, const char *t, int depth);

/* {name} (n bytes at p): its value, or the text as written. */
static void
substitute(struct rs *r, const char *p, size_t n, int depth)
{
	char		 name[NAME_MAX_CK], *val = NULL;
	bool		 tmpl = false;
	enum look	 l = L_NONE;

	if (n < sizeof(name)) {
		memcpy(name, p, n);
		name[n] = '\0';
		l = lookup(r, name, &val, &tmpl);
	} else
		snprintf(name, sizeof(name), "%.*s...", 60, p);
	if (l == L_VALUE && tmpl && depth == 0)
		expand(r, val, 1);
	else if (l == L_VALUE)
		buf_adds(&r->r_out, val);
	else {
		if (l == L_NONE)
			set_why(r, why_none(r, name));
		buf_addc(&r->r_out, '{');
		buf_add(&r->r_out, p, n);
		buf_addc(&r->r_out, '}');
	}
	free(val);
}

static void
expand(struct rs *r, const char *t, int depth)
{
	size_t	 run, k;

	for (;;) {
		run = strcspn(t, "{}");
		buf_add(&r->r_out, t, run);
		t += run;
		if (*t == '\0')
			return;
		if (t[1] == t[0] || t[0] == '}') {	/* {{ }} or lone } */
			buf_addc(&r->r_out, t[0]);
			t += t[1] == t[0] ? 2 : 1;
			continue;
		}
		k = strcspn(t + 1, "{}");
		if (t[1 + k] != '}') {			/* lone { */
			buf_addc(&r->r_out, '{');
			t++;
			continue;
		}
		substitute(r, t + 1, k, depth);
		t += k + 2;
	}
}

char *
ck_resolve(const struct ck_scope *sc, const char *t, bool early, char **why)
{
	struct rs	 r;

	memset(&r, 0, sizeof(r));
	r.r_sc = sc;
	r.r_early = early;
	*why = NULL;
	buf_adds(&r.r_out, "");
	expand(&r, t, 0);
	if (r.r_why != NULL) {
		*why = r.r_why;
		buf_free(&r.r_out);
		return NULL;
	}
	return buf_take(&r.r_out);
}

void
ck_inputs_make(const struct ck_scope *sc, json_t *node, struct ck_inputs *in)
{
	json_t	*a = json_object_get(node, "scoped_variables"), *e;
	char	*s;
	size_t	 i, n = json_is_array(a) ? json_array_size(a) : 0;

	in->in_n = n;
	in->in_val = xcalloc(n + 1, sizeof(*in->in_val));
	in->in_why = xcalloc(n + 1, sizeof(*in->in_why));
	for (i = 0; i < n; i++) {
		e = json_array_get(a, i);
		if ((s = py_str(e)) == NULL) {
			in->in_why[i] = xstrdup("a list, an object or a real");
			continue;
		}
		in->in_val[i] = ck_resolve(sc, s, false, &in->in_why[i]);
		free(s);
	}
}

void
ck_inputs_free(struct ck_inputs *in)
{
	size_t	 i;

	for (i = 0; i < in->in_n; i++) {
		free(in->in_val[i]);
		free(in->in_why[i]);
	}
	free(in->in_val);
	free(in->in_why);
	memset(in, 0, sizeof(*in));
}

char *
ck_inputs_key(const struct ck_inputs *in)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; in != NULL && i < in->in_n; i++) {
		/* \x1f between values; \x1e for one not known */
		if (in->in_val[i] != NULL)
			buf_adds(&b, in->in_val[i]);
		else
			buf_addc(&b, '\x1e');
		buf_addc(&b, '\x1f');
	}
	return buf_take(&b);
}
