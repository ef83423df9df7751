/* vars.c - workflow variables: the table, {name} substitution, clock and discussion variables. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "msgs.h"
#include "vars.h"
#include "vars_jinja.h"

/*
 * The table is an array in the order names were first set (for
 * vars_dump) with an open-addressing hash index over it, so a lookup
 * costs the name's length whatever the number of variables.
 *
 * Substitution, and why it has two kinds of value: WilmerAI formats a
 * prompt with str.format, then, when the result still holds a '{', a
 * second time (its KeyError ignored). Message contents and agent
 * inputs/outputs have their braces swapped for sentinels first, so the
 * second pass only reaches values that are themselves templates
 * (workflow keys, userWideWorkflowVariables) - and, as a side effect,
 * the "{{x}}" the first pass turned into "{x}". We keep the intent, not
 * the side effect: a template value is expanded once where it is
 * inserted, data never, and "{{" stays a literal brace.
 *
 * A lazy value (vars_set_lazy) has no text until it is first read:
 * every read goes through resolve(), which asks its maker for it. The
 * reads take a const table, as a lazy value is the same value made
 * later; resolve is the one place that writes through such a pointer.
 */

#define DUMP_MAX	200

struct var {
	char		*v_name;
	size_t		 v_nlen;
	char		*v_value;
	uint64_t	 v_hash;
	bool		 v_tmpl;
	json_t		*v_json;	/* what Jinja sees, or NULL */
	struct vars_lazy *v_lazy;	/* its maker while v_value is NULL */
};

/* The renderer and its sticky outcome (apart, so that vars_format
 * keeps taking a const table). */
struct vars_rnd {
	const struct vars_render_ops	*r_ops;
	void				*r_arg;
	char				*r_err;
	bool				 r_stopped;
};

struct vars {
	struct var	*vs_v;
	size_t		 vs_n;
	size_t		 vs_cap;
	size_t		*vs_slot;	/* index + 1 into vs_v; 0 = empty */
	size_t		 vs_nslot;	/* a power of 2, at least 2 * vs_n */
	struct vars_rnd	*vs_rnd;
};

static uint64_t
name_hash(const char *p, size_t n)
{
	uint64_t	 h = 14695981039346656037ULL;	/* FNV-1a */
	size_t		 i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

struct vars *
vars_new(void)
{
	struct vars	*vs = xcalloc(1, sizeof(*vs));

	vs->vs_nslot = 64;
	vs->vs_slot = xcalloc(vs->vs_nslot, sizeof(*vs->vs_slot));
	vs->vs_rnd = xcalloc(1, sizeof(*vs->vs_rnd));
	return vs;
}

static void
lazy_drop(struct vars_lazy *lz)
{
	if (lz != NULL && --lz->vl_refs == 0)
		lz->vl_free(lz);
}

void
vars_free(struct vars *vs)
{
	size_t	 i;

	if (vs == NULL)
		return;
	for (i = 0; i < vs->vs_n; i++) {
		free(vs->vs_v[i].v_name);
		free(vs->vs_v[i].v_value);
		json_decref(vs->vs_v[i].v_json);
		lazy_drop(vs->vs_v[i].v_lazy);
	}
	free(vs->vs_rnd->r_err);
	free(vs->vs_rnd);
	free(vs->vs_v);
	free(vs->vs_slot);
	free(vs);
}

/* The variable named name[0..n), or NULL. */
static struct var *
lookup(const struct vars *vs, const char *name, size_t n)
{
	uint64_t	 h = name_hash(name, n);
	size_t		 mask = vs->vs_nslot - 1, i = (size_t)h & mask;
	struct var	*v;

	for (; vs->vs_slot[i] != 0; i = (i + 1) & mask) {
		v = &vs->vs_v[vs->vs_slot[i] - 1];
		if (v->v_hash == h && v->v_nlen == n &&
		    memcmp(v->v_name, name, n) == 0)
			return v;
	}
	return NULL;
}

static void
slot_put(struct vars *vs, size_t idx)
{
	size_t	 mask = vs->vs_nslot - 1;
	size_t	 i = (size_t)vs->vs_v[idx].v_hash & mask;

	while (vs->vs_slot[i] != 0)
		i = (i + 1) & mask;
	vs->vs_slot[i] = idx + 1;
}

static void
grow(struct vars *vs)
{
	size_t	 i;

	if (vs->vs_n == vs->vs_cap) {
		vs->vs_cap = vs->vs_cap ? vs->vs_cap * 2 : 32;
		vs->vs_v = xreallocarray(vs->vs_v, vs->vs_cap,
		    sizeof(*vs->vs_v));
	}
	if ((vs->vs_n + 1) * 2 <= vs->vs_nslot)
		return;
	free(vs->vs_slot);
	vs->vs_nslot *= 2;
	vs->vs_slot = xcalloc(vs->vs_nslot, sizeof(*vs->vs_slot));
	for (i = 0; i < vs->vs_n; i++)
		slot_put(vs, i);
}

/* name's entry, emptied of its value; a new one at the end if none. */
static struct var *
entry(struct vars *vs, const char *name)
{
	size_t		 n = strlen(name);
	struct var	*v = lookup(vs, name, n);
	struct vars_lazy *lz;

	if (v == NULL) {
		grow(vs);
		v = &vs->vs_v[vs->vs_n];
		v->v_name = xstrdup(name);
		v->v_nlen = n;
		v->v_hash = name_hash(name, n);
		v->v_value = NULL;
		v->v_json = NULL;
		v->v_lazy = NULL;
		slot_put(vs, vs->vs_n++);
	}
	json_decref(v->v_json);
	v->v_json = NULL;
	free(v->v_value);
	v->v_value = NULL;
	lz = v->v_lazy;
	v->v_lazy = NULL;
	lazy_drop(lz);		/* may free what made the value being set */
	return v;
}

static void
set_kind(struct vars *vs, const char *name, const char *value, bool tmpl)
{
	struct var	*v = entry(vs, name);

	v->v_value = xstrdup(value);
	v->v_tmpl = tmpl;
}

void
vars_set_lazy(struct vars *vs, const char *name, struct vars_lazy *lz)
{
	struct var	*v = entry(vs, name);

	lz->vl_refs++;
	v->v_lazy = lz;
	v->v_tmpl = false;
}

/* Entry i with its value made, if it was lazy. */
static const struct var *
resolve(const struct vars *cvs, size_t i)
{
	struct vars	*vs = (struct vars *)(uintptr_t)cvs;
	struct var	*v = &vs->vs_v[i];
	struct vars_lazy *lz = v->v_lazy;
	char		*name;

	if (lz == NULL)
		return v;
	name = xstrdup(v->v_name);
	lz->vl_refs++;		/* alive while it fills */
	lz->vl_fill(vs, lz, name);
	lazy_drop(lz);
	v = &vs->vs_v[i];	/* the fill may have moved the array */
	if (v->v_value == NULL && v->v_lazy != NULL)
		vars_set(vs, name, "");		/* a maker that failed */
	free(name);
	return &vs->vs_v[i];
}

/* The variable named name[0..n) with its value made, or NULL. */
static const struct var *
lookup_value(const struct vars *vs, const char *name, size_t n)
{
	const struct var	*v = lookup(vs, name, n);

	return v != NULL ? resolve(vs, (size_t)(v - vs->vs_v)) : NULL;
}

void
vars_set(struct vars *vs, const char *name, const char *value)
{
	set_kind(vs, name, value, false);
}

void
vars_set_template(struct vars *vs, const char *name, const char *value)
{
	set_kind(vs, name, value, true);
}

const char *
vars_get(const struct vars *vs, const char *name, size_t n)
{
	const struct var	*v = lookup_value(vs, name, n);

	return v != NULL ? v->v_value : NULL;
}

/*
 * Append t formatted. Each byte is looked at a bounded number of times:
 * plain runs are copied whole, and the search for a name's closing
 * brace stops at the next brace of either kind, so no position is
 * scanned by two searches. A template value is expanded at depth 0
 * only (WilmerAI's second pass).
 */
static void
expand(const struct vars *vs, struct buf *b, const char *t, int depth)
{
	const struct var	*v;
	size_t			 run, k;

	for (;;) {
		run = strcspn(t, "{}");
		buf_add(b, t, run);
		t += run;
		if (*t == '\0')
			return;
		if (t[1] == t[0] || t[0] == '}') {	/* {{ }} or lone } */
			buf_addc(b, t[0]);
			t += t[1] == t[0] ? 2 : 1;
			continue;
		}
		k = strcspn(t + 1, "{}");
		if (t[1 + k] != '}' ||
		    (v = lookup_value(vs, t + 1, k)) == NULL) {
			run = t[1 + k] == '}' ? k + 2 : 1;
			buf_add(b, t, run);	/* literal "{name}" or '{' */
			t += run;
			continue;
		}
		if (v->v_tmpl && depth == 0)
			expand(vs, b, v->v_value, 1);
		else
			buf_adds(b, v->v_value);
		t += k + 2;
	}
}

char *
vars_format_plain(const struct vars *vs, const char *t)
{
	struct buf	 b = BUF_INIT;

	buf_reserve(&b, strlen(t));
	expand(vs, &b, t, 0);
	if (b.b_len > 0 && memmem(b.b_data, b.b_len, "__WILMER_", 9) != NULL)
		vars_sentinel_restore(&b);	/* as WilmerAI's format */
	return buf_take(&b);
}

/* t rendered by the renderer; "" once a render of this node failed. */
static char *
render(const struct vars *vs, const char *t)
{
	struct vars_rnd	*r = vs->vs_rnd;
	struct buf	 out = BUF_INIT, err = BUF_INIT;
	json_t		*ctx;
	int		 rc;

	if (r->r_err != NULL || r->r_stopped)
		return xstrdup("");
	ctx = vars_jinja_context(vs, t);
	rc = r->r_ops->vr_render(r->r_arg, t, ctx, &out, &err);
	json_decref(ctx);
	if (rc == 0) {
		buf_free(&err);
		vars_sentinel_restore(&out);
		return buf_take(&out);
	}
	if (rc == 1)
		r->r_stopped = true;
	else
		r->r_err = err.b_len > 0 ? buf_take(&err) :
		    xstrdup("the template could not be rendered");
	buf_free(&out);
	buf_free(&err);
	return xstrdup("");
}

char *
vars_format(const struct vars *vs, const char *t)
{
	if (vs->vs_rnd->r_ops != NULL)
		return render(vs, t);
	return vars_format_plain(vs, t);
}

void
vars_set_renderer(struct vars *vs, const struct vars_render_ops *ops,
    void *arg)
{
	struct vars_rnd	*r = vs->vs_rnd;

	free(r->r_err);
	r->r_err = NULL;
	r->r_stopped = false;
	r->r_ops = ops;
	r->r_arg = ops != NULL ? arg : NULL;
}

bool
vars_rendering(const struct vars *vs)
{
	return vs->vs_rnd->r_ops != NULL;
}

const char *
vars_render_error(const struct vars *vs)
{
	return vs->vs_rnd->r_err;
}

bool
vars_render_stopped(const struct vars *vs)
{
	return vs->vs_rnd->r_stopped;
}

void
vars_set_jinja(struct vars *vs, const char *name, json_t *jv)
{
	const struct var *cv = lookup_value(vs, name, strlen(name));
	struct var	*v;

	if (cv == NULL)
		return;
	v = &vs->vs_v[cv - vs->vs_v];
	json_decref(v->v_json);
	v->v_json = json_incref(jv);
}

bool
vars_each(const struct vars *vs, size_t *i, const char **name,
    const char **value, json_t **jv, bool *tmpl)
{
	const struct var	*v;

	if (*i >= vs->vs_n)
		return false;
	v = resolve(vs, (*i)++);
	*name = v->v_name;
	*value = v->v_value;
	*jv = v->v_json;
	*tmpl = v->v_tmpl;
	return true;
}

static void
dump_value(struct buf *b, const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			buf_adds(b, "\\n");
		else if (c == '\t')
			buf_adds(b, "\\t");
		else if (c == '\\')
			buf_adds(b, "\\\\");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\x%02x", c);
		else
			buf_addc(b, (char)c);
	}
}

void
vars_dump(const struct vars *vs, struct buf *b)
{
	const struct var	*v;
	size_t			 i, len;

	for (i = 0; i < vs->vs_n; i++) {
		v = resolve(vs, i);
		len = strlen(v->v_value);
		buf_printf(b, "%s %s ", v->v_name, v->v_tmpl ? ":=" : "=");
		dump_value(b, v->v_value, len > DUMP_MAX ? DUMP_MAX : len);
		if (len > DUMP_MAX)
			buf_printf(b, "... (%zu bytes)", len);
		buf_addc(b, '\n');
	}
}

void
vars_clock(struct vars *vs, time_t now)
{
	struct tm	 tm;
	char		 s[64];
	int		 h;

	localtime_r(&now, &tm);
	strftime(s, sizeof(s), "%B %d, %Y", &tm);
	vars_set(vs, "todays_date_pretty", s);
	strftime(s, sizeof(s), "%Y-%m-%d", &tm);
	vars_set(vs, "todays_date_iso", s);
	strftime(s, sizeof(s), "%Y_%m_%d", &tm);
	vars_set(vs, "YYYY_MM_DD", s);
	h = tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12;
	snprintf(s, sizeof(s), "%d:%02d %s", h, tm.tm_min,
	    tm.tm_hour < 12 ? "AM" : "PM");
	vars_set(vs, "current_time_12h", s);
	strftime(s, sizeof(s), "%H:%M", &tm);
	vars_set(vs, "current_time_24h", s);
	strftime(s, sizeof(s), "%B", &tm);
	vars_set(vs, "current_month_full", s);
	strftime(s, sizeof(s), "%A", &tm);
	vars_set(vs, "current_day_of_week", s);
	strftime(s, sizeof(s), "%d", &tm);
	vars_set(vs, "current_day_of_month", s);
}

void
vars_discussion(struct vars *vs, const char *id, const char *summary)
{
	vars_set(vs, "Discussion_Id", id != NULL ? id : "");
	vars_set(vs, "time_context_summary", summary != NULL ? summary : "");
}

char *
vars_format_value(const struct vars *vs, const json_t *v)
{
	char	*raw = pyfmt_strdup(v), *s;

	s = vars_format(vs, raw);
	free(raw);
	return s;
}
