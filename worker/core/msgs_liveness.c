/* msgs_liveness.c - livenessToolCall on the way in: the liveness machinery taken out of the client's conversation, and runs of identical tool calls collapsed (addendum A8.7). */
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/jsonw.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "msgs_edit.h"
#include "msgs_liveness.h"

#define LV_ID_PREFIX	"wilmer_liveness_"
#define LV_MARK		"[Wilmer]"
#define LV_MIN_RUN	3

/* The configured call. */
struct lv {
	const char	*lv_name;
	const json_t	*lv_args;
	char		**lv_ids;	/* ids of the calls taken out */
	size_t		 lv_nids;
};

/* A call's arguments as text: a string as it is, anything else as
 * Python's json.dumps. Caller frees. */
static char *
args_text(const json_t *a)
{
	return json_is_string(a) ? xstrdup(json_string_value(a)) :
	    jsonw_dumps(a != NULL ? a : json_null(), JSONW_PYTHON);
}

/* Is call one of the liveness machinery's? */
static bool
machinery(const struct lv *lv, json_t *call)
{
	json_t	*id = json_object_get(call, "id");
	json_t	*f = json_object_get(call, "function");
	json_t	*a = json_object_get(f, "arguments"), *parsed;
	char	*t;
	bool	 yes;

	if (json_is_string(id) && strncmp(json_string_value(id), LV_ID_PREFIX,
	    sizeof(LV_ID_PREFIX) - 1) == 0)
		return true;
	if (json_is_string(a) || json_is_object(a)) {
		t = args_text(a);
		yes = strstr(t, LV_MARK) != NULL;
		free(t);
		if (yes)
			return true;
	}
	if (!json_is_string(json_object_get(f, "name")) ||
	    strcmp(json_string_value(json_object_get(f, "name")),
	    lv->lv_name) != 0)
		return false;
	if (a == NULL || json_is_null(a))
		return json_object_size(lv->lv_args) == 0;
	parsed = json_is_string(a) ? json_loads(json_string_value(a),
	    JSON_DECODE_ANY, NULL) : json_incref(a);
	yes = parsed != NULL && json_equal(parsed, lv->lv_args);
	json_decref(parsed);
	return yes;
}

static bool
has_machinery(const struct lv *lv, const struct wmsg *m)
{
	json_t	*calls = wmsg_calls(m), *c;
	size_t	 i;
	bool	 yes = false;

	json_array_foreach(calls, i, c)
		yes = yes || machinery(lv, c);
	json_decref(calls);
	return yes;
}

static bool
is(const struct wmsg *m, const char *role)
{
	return strcmp(m->m_role, role) == 0;
}

/* The trailing exchange that answers a liveness call: [*from, *to],
 * or false. */
static bool
trailing(const struct lv *lv, const struct wmsgs *l, size_t *from,
    size_t *to)
{
	size_t	 i = l->n;

	while (i > 0 && wmsg_filler(&l->v[i - 1]))
		i--;
	*to = i;
	while (i > 0 && is(&l->v[i - 1], "tool"))
		i--;
	if (i == 0 || i == *to || !is(&l->v[i - 1], "assistant") ||
	    !has_machinery(lv, &l->v[i - 1]))
		return false;
	*from = i - 1;
	*to -= 1;
	return true;
}

/* Take the machinery calls out of assistant m: how many went (their
 * ids remembered); whether m stays in *keep. */
static size_t
strip_calls(struct lv *lv, struct wmsg *m, bool *keep)
{
	json_t		*calls = wmsg_calls(m), *left, *c, *id;
	size_t		 i, gone = 0;
	const char	*p = m->m_content;
	size_t		 n = strlen(p);

	*keep = true;
	if (calls == NULL)
		return 0;
	left = json_array();
	json_array_foreach(calls, i, c) {
		if (!machinery(lv, c)) {
			json_array_append(left, c);
			continue;
		}
		gone++;
		if (json_is_string(id = json_object_get(c, "id"))) {
			lv->lv_ids = xreallocarray(lv->lv_ids, lv->lv_nids + 1,
			    sizeof(*lv->lv_ids));
			lv->lv_ids[lv->lv_nids++] = xstrdup(json_string_value(id));
		}
	}
	if (gone > 0) {
		free(m->m_tool_calls);
		m->m_tool_calls = json_array_size(left) > 0 ?
		    jsonw_dumps(left, JSONW_COMPACT) : NULL;
		pystr_trim(&p, &n);
		*keep = m->m_tool_calls != NULL || (n > 0 && !(n == 10 &&
		    memcmp(p, "Assistant:", 10) == 0));
	}
	json_decref(left);
	json_decref(calls);
	return gone;
}

static bool
stripped_id(const struct lv *lv, const char *id)
{
	size_t	 i;

	for (i = 0; id != NULL && i < lv->lv_nids; i++)
		if (strcmp(lv->lv_ids[i], id) == 0)
			return true;
	return false;
}

/* Step 3: every message outside [from, to] (none when from > to). */
static void
strip(struct lv *lv, struct wmsgs *l, size_t from, size_t to)
{
	size_t	 i, w = 0, gone, pending = 0;
	bool	 keep;

	for (i = 0; i < l->n; i++) {
		keep = true;
		if (i >= from && i <= to)
			;
		else if (is(&l->v[i], "tool")) {
			if (stripped_id(lv, l->v[i].m_tool_call_id))
				keep = false;
			else if (l->v[i].m_tool_call_id == NULL && pending > 0) {
				pending--;
				keep = false;
			}
		} else {
			pending = 0;
			if (is(&l->v[i], "assistant") &&
			    (gone = strip_calls(lv, &l->v[i], &keep)) > 0 &&
			    l->v[i].m_tool_calls == NULL)
				pending = gone;
		}
		if (keep)
			l->v[w++] = l->v[i];
		else
			wmsg_clear(&l->v[i]);
	}
	l->n = w;
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A copy of v whose objects have their keys sorted (Python's
 * sort_keys). */
static json_t *
sorted(json_t *v)
{
	json_t		*o, *c;
	const char	*k, **keys;
	size_t		 i, n;

	if (json_is_array(v)) {
		o = json_array();
		json_array_foreach(v, i, c)
			json_array_append_new(o, sorted(c));
		return o;
	}
	if (!json_is_object(v))
		return json_incref(v);
	n = json_object_size(v);
	keys = xcalloc(n > 0 ? n : 1, sizeof(*keys));
	i = 0;
	json_object_foreach(v, k, c)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), key_cmp);
	o = json_object();
	for (i = 0; i < n; i++)
		json_object_set_new(o, keys[i], sorted(json_object_get(v,
		    keys[i])));
	free(keys);
	return o;
}

/* "{name}|{arguments}" of an assistant turn with exactly one call (an
 * object's arguments as Python's json.dumps with sorted keys), or
 * NULL. Caller frees. */
static char *
call_sig(const struct wmsg *m)
{
	json_t	*calls = is(m, "assistant") ? wmsg_calls(m) : NULL, *f, *n, *a;
	json_t	*s;
	char	*t = NULL, *at;

	if (json_array_size(calls) != 1) {
		json_decref(calls);
		return NULL;
	}
	f = json_object_get(json_array_get(calls, 0), "function");
	n = json_object_get(f, "name");
	a = json_object_get(f, "arguments");
	if (json_is_string(n) && (json_is_string(a) || json_is_object(a))) {
		s = sorted(a);
		at = args_text(s);
		t = xasprintf("%s|%s", json_string_value(n), at);
		free(at);
		json_decref(s);
	}
	json_decref(calls);
	return t;
}

/* A result's text with whitespace runs made one space, ends trimmed
 * (Python's " ".join(s.split())). Caller frees. */
static char *
result_sig(const struct wmsg *m)
{
	struct buf	 b = BUF_INIT;
	const char	*p = m->m_content, *end = p + strlen(p);
	int		 sp;
	bool		 gap = false;

	buf_adds(&b, "");
	while (p < end) {
		if ((sp = pystr_space(p, (size_t)(end - p))) > 0) {
			gap = b.b_len > 0;
			p += sp;
			continue;
		}
		if (gap)
			buf_addc(&b, ' ');
		gap = false;
		buf_addc(&b, *p++);
	}
	return buf_take(&b);
}

/* Do the pairs (call, result) at i and j say the same? */
static bool
same_pair(const struct wmsgs *l, size_t i, size_t j)
{
	char	*a, *b, *c, *d;
	bool	 same;

	if (j + 1 >= l->n || !is(&l->v[j + 1], "tool"))
		return false;
	a = call_sig(&l->v[i]);
	b = call_sig(&l->v[j]);
	c = result_sig(&l->v[i + 1]);
	d = result_sig(&l->v[j + 1]);
	same = a != NULL && b != NULL && strcmp(a, b) == 0 &&
	    strcmp(c, d) == 0;
	free(a);
	free(b);
	free(c);
	free(d);
	return same;
}

/* Step 4: a run of LV_MIN_RUN or more identical pairs becomes its
 * first, its result noting the count. */
static void
collapse(struct wmsgs *l)
{
	size_t	 i = 0, j, run, k;
	char	*sig, *s;

	while (i + 1 < l->n) {
		sig = call_sig(&l->v[i]);
		if (sig == NULL || !is(&l->v[i + 1], "tool")) {
			free(sig);
			i++;
			continue;
		}
		free(sig);
		for (run = 1, j = i + 2; same_pair(l, i, j); j += 2)
			run++;
		if (run >= LV_MIN_RUN) {
			s = xasprintf("%s\n\n[Wilmer note: this exact tool call "
			    "was made %zu consecutive times and every result was "
			    "identical. Repeating it again will not change the "
			    "outcome; take a different action.]",
			    l->v[i + 1].m_content, run);
			free(l->v[i + 1].m_content);
			l->v[i + 1].m_content = s;
			for (k = i + 2; k < j; k++)
				wmsg_clear(&l->v[k]);
			memmove(&l->v[i + 2], &l->v[j], (l->n - j) *
			    sizeof(l->v[0]));
			l->n -= j - (i + 2);
		}
		i += 2;
	}
}

void
wmsgs_liveness_clean(struct wmsgs *l, const char *name, const json_t *args)
{
	struct lv	 lv = { name, args, NULL, 0 };
	size_t		 from = 1, to = 0, i;

	if (!trailing(&lv, l, &from, &to)) {
		from = 1;
		to = 0;
	}
	strip(&lv, l, from, to);
	collapse(l);
	for (i = 0; i < lv.lv_nids; i++)
		free(lv.lv_ids[i]);
	free(lv.lv_ids);
}
