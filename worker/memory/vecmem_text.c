/* vecmem_text.c - vector memory without the database: the FTS5 query, FTS columns of a fact, JSON out of an LLM answer, dates, recency, entity expansion, output. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/buf.h"
#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "kwsearch.h"
#include "vecmem.h"
#include "vecmem_text.h"

/* ---- the MATCH query --------------------------------------------- */

/* Append one term as an FTS5 string: '-' to ' ', stripped again,
 * '"' doubled, in double quotes. Inside an FTS5 string only '"' is
 * special, so nothing of the term can act as syntax. */
static void
add_term(struct buf *b, const char *t, size_t n)
{
	char	*c = xstrndup(t, n), *p;
	size_t	 off, len, i;

	for (p = c; *p != '\0'; p++)
		if (*p == '-')
			*p = ' ';
	pystr_strip(c, n, true, true, &off, &len);
	buf_addc(b, '"');
	for (i = off; i < off + len; i++) {
		if (c[i] == '"')
			buf_addc(b, '"');
		buf_addc(b, c[i]);
	}
	buf_addc(b, '"');
	free(c);
}

char *
vecmem_query(const char *keywords)
{
	struct buf	 b = BUF_INIT;
	const char	*p = keywords, *semi;
	size_t		 n, off, len, terms = 0;

	for (;;) {
		semi = strchr(p, ';');
		n = semi != NULL ? (size_t)(semi - p) : strlen(p);
		pystr_strip(p, n, true, true, &off, &len);
		if (len > 0 && terms < VECMEM_MAX_TERMS) {
			if (terms++ > 0)
				buf_adds(&b, " OR ");
			add_term(&b, p + off, len);
		}
		if (semi == NULL)
			break;
		p = semi + 1;
	}
	return terms > 0 ? buf_take(&b) : NULL;
}

/* ---- facts -------------------------------------------------------- */

/* WilmerAI's format_for_fts: a list's items (str(), '"' removed)
 * joined by spaces; any other value as SQLite would index it ("" for
 * the falsy ones), near enough: a real as repr(), where SQLite writes
 * its own text of the double it is given. */
static char *
fts_text(json_t *v)
{
	struct buf	 b = BUF_INIT, it = BUF_INIT;
	size_t		 i, k;

	buf_adds(&b, "");
	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++) {
			buf_reset(&it);
			pyfmt_str(&it, json_array_get(v, i));
			if (i > 0)
				buf_addc(&b, ' ');
			for (k = 0; k < it.b_len; k++)
				if (it.b_data[k] != '"')
					buf_addc(&b, it.b_data[k]);
		}
	} else if (json_is_true(v))
		buf_adds(&b, "1");
	else if (json_is_string(v) || json_is_number(v) || json_is_object(v))
		pyfmt_str(&b, v);
	buf_free(&it);
	return buf_take(&b);
}

void
vecmem_flatten(json_t *fact, bool topics, struct vecmem_fts *out)
{
	char	*t, *kp;
	size_t	 off, len;

	out->vf_title = fts_text(json_object_get(fact, "title"));
	out->vf_summary = fts_text(json_object_get(fact, "summary"));
	out->vf_entities = fts_text(json_object_get(fact, "entities"));
	out->vf_key_phrases = fts_text(json_object_get(fact, "key_phrases"));
	if (!topics)
		return;
	t = fts_text(json_object_get(fact, "topics"));
	if (*t != '\0') {
		kp = xasprintf("%s %s", out->vf_key_phrases, t);
		pystr_strip(kp, strlen(kp), true, true, &off, &len);
		free(out->vf_key_phrases);
		out->vf_key_phrases = xstrndup(kp + off, len);
		free(kp);
	}
	free(t);
}

void
vecmem_fts_free(struct vecmem_fts *f)
{
	free(f->vf_title);
	free(f->vf_summary);
	free(f->vf_entities);
	free(f->vf_key_phrases);
	memset(f, 0, sizeof(*f));
}

char *
vecmem_fact_text(json_t *fact)
{
	static const char *const need[] = { "title", "summary", "entities",
	    "key_phrases" };
	struct buf	 b = BUF_INIT;
	json_t		*sum;
	size_t		 i;

	if (!json_is_object(fact))
		return NULL;
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (json_object_get(fact, need[i]) == NULL)
			return NULL;
	sum = json_object_get(fact, "summary");
	if (json_is_string(sum))
		return xstrdup(json_string_value(sum));
	if (!json_is_number(sum))
		return NULL;
	pyfmt_str(&b, sum);
	return buf_take(&b);
}

/* ---- JSON in an LLM answer --------------------------------------- */

/* The body of a ```json fence whose marker ends at a[p]: leading
 * whitespace skipped, up to the next ``` less trailing whitespace.
 * False when no ``` follows. */
static bool
fence_body(const char *a, size_t p, size_t *s, size_t *e)
{
	const char	*q;

	while (isspace((unsigned char)a[p]))
		p++;
	if ((q = strstr(a + p, "```")) == NULL)
		return false;
	*s = p;
	*e = (size_t)(q - a);
	while (*e > *s && isspace((unsigned char)a[*e - 1]))
		(*e)--;
	return true;
}

/* The candidate at a[i], as WilmerAI's regular expression would find
 * it there: a fence, or from a brace or bracket to the last closer of
 * its kind in the whole answer. */
static bool
candidate_at(const char *a, size_t i, size_t *s, size_t *e)
{
	const char	*close;

	if (strncmp(a + i, "```json", 7) == 0 && fence_body(a, i + 7, s, e))
		return true;
	if (a[i] != '{' && a[i] != '[')
		return false;
	close = strrchr(a, a[i] == '{' ? '}' : ']');
	if (close == NULL || close <= a + i)
		return false;
	*s = i;
	*e = (size_t)(close - a) + 1;
	return true;
}

json_t *
vecmem_parse(const char *answer)
{
	json_error_t	 je;
	size_t		 i, s, e;

	for (i = 0; answer[i] != '\0'; i++) {
		if (!candidate_at(answer, i, &s, &e))
			continue;
		/* WilmerAI tries the first candidate only; an empty fence
		 * crashes it, Sluice finds nothing. */
		if (e == s)
			return NULL;
		return json_loadb(answer + s, e - s, JSON_DECODE_ANY, &je);
	}
	return NULL;
}

/* ---- dates ---------------------------------------------------------- */

void
vecmem_date(uint64_t ms, char out[VECMEM_DATELEN])
{
	time_t		 t = (time_t)(ms / 1000);
	struct tm	 tm;
	char		 day[32];

	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, VECMEM_DATELEN, "%s.%06u+00:00", day,
	    (unsigned)(ms % 1000) * 1000);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static long
days_from_civil(long y, long m, long d)
{
	long	 era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at *p as a number, *p moved on; -1 when they are not all
 * digits. */
static long
digits(const char **p, int n)
{
	long	 v = 0;
	int	 i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v;
}

/* "[T| ]HH:MM[:SS[.fff]]" at *p into seconds of the day in *t, *p
 * moved on; nothing there is midnight. False when it does not parse. */
static bool
time_of(const char **p, double *t)
{
	long	 h, mi, s = 0;
	double	 f = 0, scale = 0.1;

	*t = 0;
	if (**p != 'T' && **p != 't' && **p != ' ')
		return true;
	(*p)++;
	if ((h = digits(p, 2)) < 0 || h > 23 || *(*p)++ != ':' ||
	    (mi = digits(p, 2)) < 0 || mi > 59)
		return false;
	if (**p == ':') {
		(*p)++;
		if ((s = digits(p, 2)) < 0 || s > 59)
			return false;
		if (**p == '.' || **p == ',')
			for ((*p)++; isdigit((unsigned char)**p); (*p)++) {
				f += (**p - '0') * scale;
				scale /= 10;
			}
	}
	*t = (double)(h * 3600 + mi * 60 + s) + f;
	return true;
}

/* The offset from UTC at p ("", "Z", "+HH:MM", "-HHMM") in seconds into
 * *off. False when it does not parse. */
static bool
offset_of(const char *p, long *off)
{
	long	 h, m, sign;

	*off = 0;
	if (*p == '\0' || ((*p == 'Z' || *p == 'z') && p[1] == '\0'))
		return true;
	if (*p != '+' && *p != '-')
		return false;
	sign = *p++ == '-' ? -1 : 1;
	if ((h = digits(&p, 2)) < 0 || h > 23)
		return false;
	if (*p == ':')
		p++;
	if ((m = digits(&p, 2)) < 0 || m > 59 || *p != '\0')
		return false;
	*off = sign * (h * 3600 + m * 60);
	return true;
}

double
vecmem_recency(const char *date, int64_t now)
{
	const char	*p = date;
	long		 y, mo, d, off;
	double		 t, days;

	if ((y = digits(&p, 4)) < 0 || *p++ != '-' ||
	    (mo = digits(&p, 2)) < 1 || mo > 12 || *p++ != '-' ||
	    (d = digits(&p, 2)) < 1 || d > 31 || !time_of(&p, &t) ||
	    !offset_of(p, &off))
		return 1.0;
	t += (double)days_from_civil(y, mo, d) * 86400.0 - (double)off;
	days = ((double)now - t) / 86400.0;
	if (days < 0)
		days = 0;
	return 1.0 + 1.5 * exp(-0.01 * days);
}

/* ---- rows, entity expansion, output ----------------------------- */

void
vecmem_rows_free(struct vecmem_rows *r)
{
	size_t	 i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].vr_text);
		free(r->v[i].vr_date);
		free(r->v[i].vr_meta);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

void
vecmem_strv_free(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* A term seen so far (lower-cased); adds it when new. True when new. */
static bool
seen_add(char ***seen, size_t *n, const char *term)
{
	char	*l = kw_lower(term);
	size_t	 i;

	for (i = 0; i < *n; i++)
		if (strcmp((*seen)[i], l) == 0) {
			free(l);
			return false;
		}
	*seen = xreallocarray(*seen, *n + 1, sizeof(**seen));
	(*seen)[(*n)++] = l;
	return true;
}

/* The stripped str() of v, added to out (after "; ") when new. */
static void
harvest_one(json_t *v, char ***seen, size_t *nseen, struct buf *out,
    size_t *count)
{
	struct buf	 b = BUF_INIT;
	size_t		 off, len;
	char		*t;

	pyfmt_str(&b, v);
	buf_adds(&b, "");
	pystr_strip(b.b_data, b.b_len, true, true, &off, &len);
	t = xstrndup(b.b_data + off, len);
	if (len > 0 && *count < VECMEM_MAX_TERMS && seen_add(seen, nseen, t)) {
		buf_printf(out, "%s%s", (*count)++ > 0 ? "; " : "", t);
	}
	free(t);
	buf_free(&b);
}

char *
vecmem_harvest(const struct vecmem_rows *base, const char *keywords)
{
	struct buf	 out = BUF_INIT, kw = BUF_INIT;
	char		**seen = NULL, *p, *semi;
	size_t		 nseen = 0, count = 0, i, k, off, len;
	json_t		*meta, *ents;

	buf_adds(&kw, keywords);
	for (p = kw.b_data; p != NULL; p = semi != NULL ? semi + 1 : NULL) {
		if ((semi = strchr(p, ';')) != NULL)
			*semi = '\0';
		pystr_strip(p, strlen(p), true, true, &off, &len);
		p[off + len] = '\0';
		if (len > 0)
			(void)seen_add(&seen, &nseen, p + off);
	}
	for (i = 0; i < base->n && i < VECMEM_SEED_ROWS; i++) {
		meta = base->v[i].vr_meta == NULL ? NULL :
		    json_loads(base->v[i].vr_meta, 0, NULL);
		ents = json_object_get(meta, "entities");
		for (k = 0; json_is_array(ents) && k < json_array_size(ents);
		    k++)
			harvest_one(json_array_get(ents, k), &seen, &nseen,
			    &out, &count);
		json_decref(meta);
	}
	for (i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	buf_free(&kw);
	return count > 0 ? buf_take(&out) : NULL;
}

static bool
has_id(const struct vecmem_rows *r, int64_t id)
{
	size_t	 i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].vr_id == id)
			return true;
	return false;
}

static void
row_drop(struct vecmem_row *r)
{
	free(r->vr_text);
	free(r->vr_date);
	free(r->vr_meta);
}

void
vecmem_blend(struct vecmem_rows *base, struct vecmem_rows *second,
    long limit)
{
	struct vecmem_row	*novel = xcalloc(second->n + 1, sizeof(*novel));
	size_t			 nn = 0, i, res, keep;

	for (i = 0; i < second->n; i++) {
		if (limit > 0 && !has_id(base, second->v[i].vr_id))
			novel[nn++] = second->v[i];
		else
			row_drop(&second->v[i]);
	}
	second->n = 0;
	vecmem_rows_free(second);
	if (nn > 0) {
		res = (size_t)(limit / 3 > 1 ? limit / 3 : 1);
		if (res > nn)
			res = nn;
		if (res > (size_t)(limit - 1))
			res = (size_t)(limit - 1);
		keep = (size_t)limit - res;
		for (i = keep; i < base->n; i++)
			row_drop(&base->v[i]);
		if (base->n > keep)
			base->n = keep;
		base->v = xreallocarray(base->v, base->n + nn + 1,
		    sizeof(*base->v));
		for (i = 0; i < nn; i++) {
			if (base->n < (size_t)limit)
				base->v[base->n++] = novel[i];
			else
				row_drop(&novel[i]);
		}
	}
	free(novel);
}

char *
vecmem_format(const struct vecmem_rows *r, bool dates)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < r->n; i++) {
		if (i > 0)
			buf_adds(&b, VECMEM_SEP);
		if (dates && r->v[i].vr_date != NULL &&
		    *r->v[i].vr_date != '\0')
			buf_printf(&b, "[%.10s] ", r->v[i].vr_date);
		buf_adds(&b, r->v[i].vr_text);
	}
	return buf_take(&b);
}
