/* filter.c - the ordered response filter chain (max length, redaction, footer), for streams and whole texts. */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "clean_match.h"
#include "filter.h"

enum ftype { FT_MAXLEN, FT_KEYWORDS, FT_REGEX, FT_FOOTER };

struct filter {
	enum ftype	 f_type;
	long		 f_order;
	long		 f_max;		/* maxLength */
	char		*f_text;	/* footer */
	char		*f_repl;	/* redaction replacement */
	char		**f_words;	/* keywords (owned) */
	size_t		 f_nwords;
	struct pset	 f_set;		/* keywords, caseless */
	regex_t		 f_re;
	bool		 f_has_re;
};

struct filter_chain {
	struct filter	**fc_f;		/* in running order */
	size_t		  fc_n;
};

/* One filter's state over one output. */
struct fstate {
	const struct filter	*s_f;
	bool			 s_off;		/* failed, or out of scope */
	bool			 s_cut;		/* maxLength reached */
	size_t			 s_count;	/* code points passed */
	struct buf		 s_pend;	/* keyword tail / regex line */
};

struct filter_run {
	struct fstate	*fr_s;
	size_t		 fr_n;
	struct buf	*fr_out;
	bool		 fr_stopped;
	struct buf	 fr_tmp;
};

static const char *const ftype_names[] = {
	"maxLength", "redactKeywords", "redactRegex", "appendFooter"
};

#define NFTYPES	(sizeof(ftype_names) / sizeof(ftype_names[0]))

static void	fr_pass(struct filter_run *, size_t, const char *, size_t);

/* ---- configuration --------------------------------------------------- */

static void
filter_free(struct filter *f)
{
	size_t	 i;

	if (f == NULL)
		return;
	for (i = 0; i < f->f_nwords; i++)
		free(f->f_words[i]);
	free(f->f_words);
	free(f->f_text);
	free(f->f_repl);
	pset_free(&f->f_set);
	if (f->f_has_re)
		regfree(&f->f_re);
	free(f);
}

void
filter_chain_free(struct filter_chain *fc)
{
	size_t	 i;

	if (fc == NULL)
		return;
	for (i = 0; i < fc->fc_n; i++)
		filter_free(fc->fc_f[i]);
	free(fc->fc_f);
	free(fc);
}

size_t
filter_chain_len(const struct filter_chain *fc)
{
	return fc != NULL ? fc->fc_n : 0;
}

/* A required string member, copied. */
static int
need_str(const struct jfile *jf, json_t *o, const char *key, const char *what,
    char **out, char err[CONF_ERRLEN])
{
	const char	*s;

	if (jget_str(jf, o, key, NULL, &s, err) == -1)
		return -1;
	if (s == NULL)
		return jfile_err_member(jf, o, "type", err,
		    "a %s filter needs \"%s\"", what, key);
	*out = xstrdup(s);
	return 0;
}

static int
load_repl(const struct jfile *jf, json_t *o, struct filter *f,
    char err[CONF_ERRLEN])
{
	const char	*s;

	if (jget_str(jf, o, "replacement", "[REDACTED]", &s, err) == -1)
		return -1;
	f->f_repl = xstrdup(s);
	return 0;
}

static int
load_maxlen(const struct jfile *jf, json_t *o, struct filter *f,
    char err[CONF_ERRLEN])
{
	if (jget_int(jf, o, "maxChars", -1, &f->f_max, err) == -1)
		return -1;
	if (json_object_get(o, "maxChars") == NULL)
		return jfile_err_member(jf, o, "type", err,
		    "a maxLength filter needs \"maxChars\"");
	if (f->f_max < 0)
		return jfile_err_member(jf, o, "maxChars", err,
		    "'maxChars' must be 0 (no limit) or more");
	return 0;
}

static int
load_keywords(const struct jfile *jf, json_t *o, struct filter *f,
    char err[CONF_ERRLEN])
{
	const char	**list;
	json_t		 *arr = json_object_get(o, "keywords");
	size_t		  i;

	if (arr == NULL)
		return jfile_err_member(jf, o, "type", err,
		    "a redactKeywords filter needs \"keywords\"");
	if (jget_strlist(jf, o, "keywords", &list, err) == -1)
		return -1;
	pset_init(&f->f_set);
	for (i = 0; list[i] != NULL; i++) {
		if (*list[i] == '\0') {
			free(list);
			return jfile_err_elem(jf, arr, i, err,
			    "'keywords' item %zu is empty", i + 1);
		}
		f->f_words = xreallocarray(f->f_words, i + 1, sizeof(char *));
		f->f_words[i] = xstrdup(list[i]);
		f->f_nwords = i + 1;
		pset_add(&f->f_set, f->f_words[i], strlen(f->f_words[i]),
		    true, 0);
	}
	free(list);
	pset_done(&f->f_set);
	return load_repl(jf, o, f, err);
}

static int
load_regex(const struct jfile *jf, json_t *o, struct filter *f,
    char err[CONF_ERRLEN])
{
	char	*pat, msg[256];
	bool	 icase;
	int	 rc;

	if (need_str(jf, o, "pattern", "redactRegex", &pat, err) == -1 ||
	    jget_bool(jf, o, "ignoreCase", false, &icase, err) == -1) {
		return -1;
	}
	if (*pat == '\0') {
		free(pat);
		return jfile_err_member(jf, o, "pattern", err,
		    "'pattern' must not be empty");
	}
	rc = regcomp(&f->f_re, pat, REG_EXTENDED | (icase ? REG_ICASE : 0));
	free(pat);
	if (rc != 0) {
		regerror(rc, &f->f_re, msg, sizeof(msg));
		return jfile_err_member(jf, o, "pattern", err,
		    "bad regular expression: %s", msg);
	}
	f->f_has_re = true;
	return load_repl(jf, o, f, err);
}

static int
load_type(const struct jfile *jf, json_t *o, struct filter *f,
    char err[CONF_ERRLEN])
{
	switch (f->f_type) {
	case FT_MAXLEN:
		return load_maxlen(jf, o, f, err);
	case FT_KEYWORDS:
		return load_keywords(jf, o, f, err);
	case FT_REGEX:
		return load_regex(jf, o, f, err);
	case FT_FOOTER:
	default:
		return need_str(jf, o, "text", "appendFooter", &f->f_text,
		    err);
	}
}

static int
filter_load(const struct jfile *jf, json_t *arr, size_t idx,
    struct filter *f, char err[CONF_ERRLEN])
{
	json_t		*o = json_array_get(arr, idx);
	const char	*type;
	size_t		 t;

	if (!json_is_object(o))
		return jfile_err_elem(jf, arr, idx, err, "'responseFilters' "
		    "item %zu must be an object, not %s", idx + 1,
		    json_type_desc(o));
	if (jget_str(jf, o, "type", NULL, &type, err) == -1)
		return -1;
	if (type == NULL)
		return jfile_err_elem(jf, arr, idx, err, "'responseFilters' "
		    "item %zu needs a \"type\"", idx + 1);
	for (t = 0; t < NFTYPES && strcmp(type, ftype_names[t]) != 0; t++)
		;
	if (t == NFTYPES)
		return jfile_err_member(jf, o, "type", err, "unknown filter "
		    "type '%s' (maxLength, redactKeywords, redactRegex or "
		    "appendFooter)", type);
	f->f_type = (enum ftype)t;
	if (jget_int(jf, o, "order", t == FT_MAXLEN ? 10 : 100, &f->f_order,
	    err) == -1)
		return -1;
	return load_type(jf, o, f, err);
}

/* Stable: insertion sort on order. */
static void
chain_sort(struct filter_chain *fc)
{
	struct filter	*f;
	size_t		 i, j;

	for (i = 1; i < fc->fc_n; i++) {
		f = fc->fc_f[i];
		for (j = i; j > 0 && fc->fc_f[j - 1]->f_order > f->f_order; j--)
			fc->fc_f[j] = fc->fc_f[j - 1];
		fc->fc_f[j] = f;
	}
}

int
filter_chain_load(const struct jfile *jf, json_t *obj, const char *key,
    struct filter_chain **out, char err[CONF_ERRLEN])
{
	struct filter_chain	*fc;
	json_t			*arr = json_object_get(obj, key);
	size_t			 i, n;

	*out = NULL;
	if (arr == NULL || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return jfile_err_member(jf, obj, key, err, "'%s' must be a "
		    "list of filters, not %s", key, json_type_desc(arr));
	n = json_array_size(arr);
	fc = xcalloc(1, sizeof(*fc));
	fc->fc_f = xcalloc(n + 1, sizeof(*fc->fc_f));
	for (i = 0; i < n; i++) {
		fc->fc_f[i] = xcalloc(1, sizeof(struct filter));
		fc->fc_n = i + 1;
		pset_init(&fc->fc_f[i]->f_set);
		if (filter_load(jf, arr, i, fc->fc_f[i], err) == -1) {
			filter_chain_free(fc);
			return -1;
		}
	}
	chain_sort(fc);
	*out = fc;
	return 0;
}

/* ---- running ----------------------------------------------------------- */

struct filter_run *
filter_run_new(const struct filter_chain *fc, enum filter_scope scope)
{
	struct filter_run	*fr = xcalloc(1, sizeof(*fr));
	const struct filter	*f;
	size_t			 i;

	fr->fr_n = filter_chain_len(fc);
	fr->fr_s = xcalloc(fr->fr_n + 1, sizeof(*fr->fr_s));
	buf_init(&fr->fr_tmp);
	for (i = 0; i < fr->fr_n; i++) {
		f = fc->fc_f[i];
		fr->fr_s[i].s_f = f;
		buf_init(&fr->fr_s[i].s_pend);
		fr->fr_s[i].s_off = scope == FILTER_REASONING &&
		    (f->f_type == FT_MAXLEN || f->f_type == FT_FOOTER);
	}
	return fr;
}

void
filter_run_free(struct filter_run *fr)
{
	size_t	 i;

	if (fr == NULL)
		return;
	for (i = 0; i < fr->fr_n; i++)
		buf_free(&fr->fr_s[i].s_pend);
	free(fr->fr_s);
	buf_free(&fr->fr_tmp);
	free(fr);
}

/* maxLength: pass up to the limit; the next code point ends it all. */
static void
run_maxlen(struct filter_run *fr, size_t i, const char *p, size_t n)
{
	struct fstate	*s = &fr->fr_s[i];
	size_t		 k;

	if (s->s_cut)
		return;
	if (s->s_f->f_max == 0) {
		fr_pass(fr, i + 1, p, n);
		return;
	}
	for (k = 0; k < n; k++) {
		if (U8_CONT(p[k]))
			continue;
		if (s->s_count == (size_t)s->s_f->f_max) {
			fr_pass(fr, i + 1, p, k);
			fr_pass(fr, i + 1, FILTER_TRUNCATED,
			    strlen(FILTER_TRUNCATED));
			s->s_cut = true;
			fr->fr_stopped = true;
			return;
		}
		s->s_count++;
	}
	fr_pass(fr, i + 1, p, n);
}

/* Keywords over w[0..wn): returns how much is settled. */
static size_t
kw_scan(struct filter_run *fr, size_t i, const char *w, size_t wn,
    bool final)
{
	const struct filter	*f = fr->fr_s[i].s_f;
	struct pm		 m;
	size_t			 off = 0;

	while (off < wn) {
		pset_scan(&f->f_set, w + off, wn - off, final, NULL, &m);
		fr_pass(fr, i + 1, w + off, m.pm_pos);
		if (m.pm_kind != PM_FULL)
			return off + m.pm_pos;
		fr_pass(fr, i + 1, f->f_repl, strlen(f->f_repl));
		off += m.pm_pos + m.pm_len;
	}
	return off;
}

static void
run_keywords(struct filter_run *fr, size_t i, const char *p, size_t n)
{
	struct buf	*pend = &fr->fr_s[i].s_pend;
	size_t		 used;

	if (pend->b_len == 0) {
		used = kw_scan(fr, i, p, n, false);
		buf_add(pend, p + used, n - used);
		return;
	}
	buf_add(pend, p, n);
	used = kw_scan(fr, i, pend->b_data, pend->b_len, false);
	buf_drain(pend, used);
}

/* Replace every match in the line s[0..n) and pass it on. */
static void
re_line(struct filter_run *fr, size_t i, const char *s, size_t n)
{
	struct fstate		*st = &fr->fr_s[i];
	const struct filter	*f = st->s_f;
	regmatch_t		 m;
	size_t			 off = 0, so, cl;
	int			 rc;

	if (s == NULL)
		s = "";
	while (!st->s_off && off <= n) {
		m.rm_so = (regoff_t)off;
		m.rm_eo = (regoff_t)n;
		rc = regexec(&f->f_re, s, 1, &m,
		    REG_STARTEND | (off > 0 ? REG_NOTBOL : 0));
		if (rc == REG_NOMATCH)
			break;
		if (rc != 0) {
			log_warnx("redactRegex filter failed (error %d); "
			    "skipping it", rc);
			st->s_off = true;
			break;
		}
		so = (size_t)m.rm_so;
		fr_pass(fr, i + 1, s + off, so - off);
		fr_pass(fr, i + 1, f->f_repl, strlen(f->f_repl));
		off = (size_t)m.rm_eo;
		if (m.rm_eo > m.rm_so)
			continue;
		/* an empty match: keep one character and look further */
		if (so >= n)
			return;
		for (cl = 1; so + cl < n && U8_CONT(s[so + cl]); cl++)
			;
		fr_pass(fr, i + 1, s + so, cl);
		off = so + cl;
	}
	if (off < n)
		fr_pass(fr, i + 1, s + off, n - off);
}

/* The held line reached FILTER_LINE_MAX bytes: take a piece that does
 * not end inside a character. */
static void
re_piece(struct filter_run *fr, size_t i)
{
	struct buf	*pend = &fr->fr_s[i].s_pend;
	size_t		 cut = pend->b_len, j = cut, want;
	unsigned char	 lead;

	while (j > 0 && cut - j < 3 && U8_CONT(pend->b_data[j - 1]))
		j--;
	if (j > 0) {
		lead = (unsigned char)pend->b_data[j - 1];
		want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ?
		    2 : 1;
		if (cut - (j - 1) < want && j > 1)
			cut = j - 1;
	}
	re_line(fr, i, pend->b_data, cut);
	buf_drain(pend, cut);
}

static void
run_regex(struct filter_run *fr, size_t i, const char *p, size_t n)
{
	struct buf	*pend = &fr->fr_s[i].s_pend;
	const char	*nl;
	size_t		 seg, room;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		seg = nl != NULL ? (size_t)(nl - p) : n;
		room = FILTER_LINE_MAX - pend->b_len;
		if (seg >= room) {
			buf_add(pend, p, room);
			p += room;
			n -= room;
			re_piece(fr, i);
			continue;
		}
		buf_add(pend, p, seg);
		if (nl == NULL)
			return;
		re_line(fr, i, pend->b_data, pend->b_len);
		buf_reset(pend);
		fr_pass(fr, i + 1, "\n", 1);
		p += seg + 1;
		n -= seg + 1;
	}
}

static void
fr_pass(struct filter_run *fr, size_t i, const char *p, size_t n)
{
	struct fstate	*s;

	if (n == 0)
		return;
	if (i == fr->fr_n) {
		buf_add(fr->fr_out, p, n);
		return;
	}
	s = &fr->fr_s[i];
	if (s->s_off && s->s_f->f_type != FT_REGEX) {
		fr_pass(fr, i + 1, p, n);
		return;
	}
	switch (s->s_f->f_type) {
	case FT_MAXLEN:
		run_maxlen(fr, i, p, n);
		break;
	case FT_KEYWORDS:
		run_keywords(fr, i, p, n);
		break;
	case FT_REGEX:
		run_regex(fr, i, p, n);
		break;
	case FT_FOOTER:
	default:
		fr_pass(fr, i + 1, p, n);
		break;
	}
}

bool
filter_run_push(struct filter_run *fr, const char *p, size_t n,
    struct buf *out)
{
	if (fr->fr_stopped)
		return true;
	fr->fr_out = out;
	fr_pass(fr, 0, p, n);
	fr->fr_out = NULL;
	return fr->fr_stopped;
}

/* Settle what the hint decides of keyword filter i's held tail. */
static void
kw_hint(struct filter_run *fr, size_t i, const char *h, size_t hn)
{
	const struct filter	*f = fr->fr_s[i].s_f;
	struct buf		*pend = &fr->fr_s[i].s_pend, *t = &fr->fr_tmp;
	size_t			 plen = pend->b_len, off = 0, pos;
	struct pm		 m;

	buf_reset(t);
	buf_add(t, pend->b_data, plen);
	buf_add(t, h, hn);
	while (off < plen) {
		pset_scan(&f->f_set, t->b_data + off, t->b_len - off, false,
		    NULL, &m);
		pos = off + m.pm_pos;
		if (pos >= plen) {
			fr_pass(fr, i + 1, t->b_data + off, plen - off);
			off = plen;
			break;
		}
		fr_pass(fr, i + 1, t->b_data + off, pos - off);
		off = pos;
		if (m.pm_kind != PM_FULL || pos + m.pm_len > plen)
			break;
		fr_pass(fr, i + 1, f->f_repl, strlen(f->f_repl));
		off += m.pm_len;
	}
	buf_drain(pend, off);
}

void
filter_run_hint(struct filter_run *fr, const char *p, size_t n,
    struct buf *out)
{
	struct fstate	*s;
	size_t		 i;

	if (fr->fr_stopped)
		return;
	fr->fr_out = out;
	/* Only through filters that pass the hint on unchanged and add
	 * nothing at the end: a footer would be what follows at the end. */
	for (i = 0; i < fr->fr_n; i++) {
		s = &fr->fr_s[i];
		if (s->s_off)
			continue;
		if (s->s_f->f_type == FT_MAXLEN && !s->s_cut &&
		    (s->s_f->f_max == 0 || s->s_count + u8_count(p, n) <=
		    (size_t)s->s_f->f_max))
			continue;
		if (s->s_f->f_type == FT_KEYWORDS && s->s_pend.b_len > 0)
			kw_hint(fr, i, p, n);
		break;
	}
	fr->fr_out = NULL;
}

static void
fr_flush(struct filter_run *fr, size_t i)
{
	struct fstate	*s = &fr->fr_s[i];

	switch (s->s_f->f_type) {
	case FT_KEYWORDS:
		(void)kw_scan(fr, i, s->s_pend.b_data, s->s_pend.b_len, true);
		break;
	case FT_REGEX:
		/* the text after the last newline, when there is some */
		if (s->s_pend.b_len > 0)
			re_line(fr, i, s->s_pend.b_data, s->s_pend.b_len);
		break;
	case FT_FOOTER:
		if (!s->s_off)
			fr_pass(fr, i + 1, s->s_f->f_text,
			    strlen(s->s_f->f_text));
		break;
	case FT_MAXLEN:
	default:
		break;
	}
	buf_reset(&s->s_pend);
}

void
filter_run_finish(struct filter_run *fr, struct buf *out)
{
	size_t	 i;

	fr->fr_out = out;
	for (i = 0; i < fr->fr_n; i++)
		fr_flush(fr, i);
	fr->fr_out = NULL;
}
