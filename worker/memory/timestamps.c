/* timestamps.c - WilmerAI's per-discussion message timestamps in the shared database: when each message was first seen, as text. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/log.h"
#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../core/groupchat.h"
#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "timestamps.h"

static const char *const day_names[7] = { "Sunday", "Monday", "Tuesday",
    "Wednesday", "Thursday", "Friday", "Saturday" };

/* ---- text -------------------------------------------------------------- */

int64_t
ts_wall(time_t t)
{
	struct tm	 tm;

	if (localtime_r(&t, &tm) == NULL)
		return (int64_t)t;
	return (int64_t)timegm(&tm);
}

void
ts_format(int64_t w, char out[TS_LEN])
{
	time_t		 t = (time_t)w;
	struct tm	 tm;

	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	snprintf(out, TS_LEN, "(%s, %04d-%02d-%02d %02d:%02d:%02d)",
	    day_names[tm.tm_wday % 7], tm.tm_year + 1900, tm.tm_mon + 1,
	    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Python's %A: a full day name, else a three-letter one, any case. */
static const char *
parse_day(const char *p)
{
	size_t	 i, n;

	for (i = 0; i < 7; i++) {
		n = strlen(day_names[i]);
		if (strncasecmp(p, day_names[i], n) == 0)
			return p + n;
	}
	for (i = 0; i < 7; i++)
		if (strncasecmp(p, day_names[i], 3) == 0)
			return p + 3;
	return NULL;
}

/* min to max digits at p, the value at most lim; the end, or NULL. */
static const char *
parse_num(const char *p, int min, int max, int lim, int *v)
{
	int	 k;

	*v = 0;
	if (p == NULL)
		return NULL;
	for (k = 0; k < max && isdigit((unsigned char)p[k]); k++)
		*v = *v * 10 + (p[k] - '0');
	return k < min || *v > lim ? NULL : p + k;
}

/* A format space matches one or more spaces (Python's \s+). */
static const char *
parse_space(const char *p)
{
	if (p == NULL || !isspace((unsigned char)*p))
		return NULL;
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static const char *
parse_sep(const char *p, char c)
{
	return p != NULL && *p == c ? p + 1 : NULL;
}

static bool
date_ok(int y, int m, int d)
{
	static const int	 mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31,
				    30, 31, 30, 31 };
	bool			 leap = (y % 4 == 0 && y % 100 != 0) ||
				    y % 400 == 0;

	if (y < 1 || m < 1 || m > 12 || d < 1)
		return false;
	return d <= mdays[m - 1] + (m == 2 && leap ? 1 : 0);
}

/* "Saturday, 2025-09-20 16:30:05" exactly, into tm. */
static int
parse_fields(const char *p, const char *end, struct tm *tm)
{
	int	 y, mo, d, h, mi, s;

	p = parse_space(parse_sep(parse_day(p), ','));
	p = parse_num(p, 4, 4, 9999, &y);
	p = parse_num(parse_sep(p, '-'), 1, 2, 12, &mo);
	p = parse_num(parse_sep(p, '-'), 1, 2, 31, &d);
	p = parse_num(parse_space(p), 1, 2, 23, &h);
	p = parse_num(parse_sep(p, ':'), 1, 2, 59, &mi);
	p = parse_num(parse_sep(p, ':'), 1, 2, 59, &s);
	if (p != end || !date_ok(y, mo, d))
		return -1;
	memset(tm, 0, sizeof(*tm));
	tm->tm_year = y - 1900;
	tm->tm_mon = mo - 1;
	tm->tm_mday = d;
	tm->tm_hour = h;
	tm->tm_min = mi;
	tm->tm_sec = s;
	return 0;
}

int
ts_parse(const char *s, int64_t *w)
{
	const char	*end;
	struct tm	 tm;

	if (s == NULL)
		return -1;
	/* Python's strip("() ") */
	while (*s == '(' || *s == ')' || *s == ' ')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == '(' || end[-1] == ')' || end[-1] == ' '))
		end--;
	if (end == s || parse_fields(s, end, &tm) == -1)
		return -1;
	*w = (int64_t)timegm(&tm);
	return 0;
}

void
ts_ago(int64_t secs, char out[TS_AGO_LEN])
{
	static const char *const unit[3] = { "day", "hour", "minute" };
	int64_t			 v[3];
	size_t			 i, n = 0;

	if (secs < 0)
		secs = 0;
	v[0] = secs / 86400;
	v[1] = secs % 86400 / 3600;
	v[2] = secs % 3600 / 60;
	out[0] = '\0';
	for (i = 0; i < 3; i++) {
		if (v[i] <= 0 || n >= TS_AGO_LEN)
			continue;
		snprintf(out + n, TS_AGO_LEN - n, "%s%lld %s%s", n > 0 ?
		    ", " : "", (long long)v[i], unit[i], v[i] > 1 ? "s" : "");
		n = strlen(out);
	}
	if (n == 0)
		snprintf(out, TS_AGO_LEN, "less than a minute");
}

void
ts_sent_ago(const char *stamp, time_t now, char *out, size_t outlen)
{
	char	 ago[TS_AGO_LEN];
	int64_t	 w;

	if (ts_parse(stamp, &w) == -1) {
		if (outlen > 0)
			out[0] = '\0';
		return;
	}
	ts_ago(ts_wall(now) - w, ago);
	snprintf(out, outlen, "[Sent %s ago]", ago);
}

bool
ts_gen_prompt(const struct wmsg *m)
{
	struct wmsg	 copy = *m;	/* shallow: a list of one */
	struct wmsgs	 one = { &copy, 1 };
	char		*p = gchat_prompt(&one);

	free(p);
	return p != NULL;
}

/* ---- the database ------------------------------------------------------- */

static void
msg_hash(const char *content, char out[SHA256_HEXLEN])
{
	sha256_hex(content, strlen(content), out);
}

static bool
role_is(const struct wmsg *m, const char *role)
{
	return m->m_role != NULL && strcasecmp(m->m_role, role) == 0;
}

static bool
is_system(const struct wmsg *m)
{
	return role_is(m, "system") || role_is(m, "systemmes");
}

/* The last message, when it is a generation prompt, has no stamp. */
static bool
skipped(const struct wmsgs *l, size_t i)
{
	return i + 1 == l->n && ts_gen_prompt(&l->v[i]);
}

/* The stamp of hash: 1 with *out (caller frees), 0 none, -1 error. */
static int
stamp_get(struct store *s, const char *key, const char *hash, char **out)
{
	struct store_q	*st = store_stmt(s, "SELECT stamp FROM timestamps "
			    "WHERE discussion = ? AND msg_hash = ?");
	int		 r;

	*out = NULL;
	if (st == NULL || store_bind(s, st, "tt", key, hash) == -1 ||
	    (r = store_step(s, st)) == -1)
		return -1;
	if (r == 1) {
		if (store_unseal(s, key, "timestamps",
		    store_col_text(st, 0), out) == -1)
			r = -1;
		store_end(st);
	}
	return r;
}

static int
stamp_put(struct store *s, const char *key, const char *hash,
    const char *stamp)
{
	char	*tok = store_seal(s, stamp);
	int	 r;

	if (tok == NULL)
		return -1;
	r = store_exec(s, "INSERT INTO timestamps (discussion, msg_hash, "
	    "stamp) VALUES (?, ?, ?) ON CONFLICT (discussion, msg_hash) DO "
	    "UPDATE SET stamp = excluded.stamp", "ttt", key, hash, tok);
	free(tok);
	return r == -1 ? -1 : 0;
}

static int
stamp_del(struct store *s, const char *key, const char *hash)
{
	return store_exec(s, "DELETE FROM timestamps WHERE discussion = ? AND "
	    "msg_hash = ?", "tt", key, hash) == -1 ? -1 : 0;
}

/* The discussion's row, the parent of its stamps; and its stamps
 * ready for this request's key (store_seal_prepare). */
static int
discussion_add(struct store *s, const char *key, time_t now)
{
	if (store_exec(s, "INSERT INTO discussions (key, created_at) VALUES "
	    "(?, ?) ON CONFLICT DO NOTHING", "ti", key, (int64_t)now) == -1)
		return -1;
	return store_seal_prepare(s, "timestamps", key);
}

/* Commit after rc 0, else roll back (store_err kept). */
static int
finish(struct store *s, int rc)
{
	char	 err[STORE_ERRLEN];

	if (rc == 0)
		return store_commit(s);
	snprintf(err, sizeof(err), "%s", store_err(s));
	(void)store_rollback(s);
	log_debug("timestamps: rolled back: %s", err);
	return -1;
}

/* Phase 0: the previous answer's placeholder goes to the newest
 * assistant message, unless that one has a stamp; then it is gone. */
static int
place_pending(struct store *s, const char *key, const struct wmsgs *l)
{
	char	*pending, *have = NULL, h[SHA256_HEXLEN];
	size_t	 i;
	int	 r;

	if ((r = stamp_get(s, key, TS_PLACEHOLDER, &pending)) != 1)
		return r;
	for (i = l->n; i > 0; i--) {
		if (!role_is(&l->v[i - 1], "assistant") || skipped(l, i - 1))
			continue;
		msg_hash(l->v[i - 1].m_content, h);
		if ((r = stamp_get(s, key, h, &have)) == 0)
			r = stamp_put(s, key, h, pending);
		free(have);
		break;
	}
	if (i == 0)
		log_debug("timestamps: no assistant message for the pending "
		    "placeholder of '%s'", key);
	if (r != -1)
		r = stamp_del(s, key, TS_PLACEHOLDER);
	free(pending);
	return r == -1 ? -1 : 0;
}

/* *anchor (allocated) one second earlier; unchanged when it is not a
 * stamp (WilmerAI warns and carries on). */
static void
step_back(char **anchor)
{
	int64_t	 w;

	if (ts_parse(*anchor, &w) == -1) {
		log_warnx("timestamps: cannot step back from '%s'", *anchor);
		return;
	}
	free(*anchor);
	*anchor = xmalloc(TS_LEN);
	ts_format(w - 1, *anchor);
}

/* Phase 1: newest to oldest, a known stamp becomes the anchor, a new
 * message gets the anchor; one second back per message. */
static int
backfill(struct store *s, const char *key, const struct wmsgs *l, time_t now)
{
	char	*anchor = xmalloc(TS_LEN), *have, h[SHA256_HEXLEN];
	size_t	 i;
	int	 r, rc = 0;

	ts_format(ts_wall(now), anchor);
	for (i = l->n; i > 0 && rc == 0; i--) {
		if (is_system(&l->v[i - 1]) || skipped(l, i - 1))
			continue;
		msg_hash(l->v[i - 1].m_content, h);
		if ((r = stamp_get(s, key, h, &have)) == -1)
			rc = -1;
		else if (r == 1) {
			free(anchor);
			anchor = have;
		} else
			rc = stamp_put(s, key, h, anchor);
		if (rc == 0)
			step_back(&anchor);
	}
	free(anchor);
	return rc;
}

int
ts_resolve(struct store *s, const char *key, const struct wmsgs *l,
    time_t now)
{
	int	 rc;

	if (store_begin(s) == -1)
		return -1;
	rc = discussion_add(s, key, now);
	if (rc == 0)
		rc = place_pending(s, key, l);
	if (rc == 0)
		rc = backfill(s, key, l, now);
	return finish(s, rc);
}

/* "<p> " before m's content unless it starts with p already. */
static void
prefix(struct wmsg *m, const char *p)
{
	char	*c;

	if (strncmp(m->m_content, p, strlen(p)) == 0)
		return;
	c = xasprintf("%s %s", p, m->m_content);
	free(m->m_content);
	m->m_content = c;
}

int
ts_decorate(struct store *s, const char *key, struct wmsgs *l, bool relative,
    time_t now)
{
	char	*have, h[SHA256_HEXLEN], rel[TS_AGO_LEN + 16];
	size_t	 i;
	int	 r;

	for (i = 0; i < l->n; i++) {
		if (is_system(&l->v[i]) || skipped(l, i))
			continue;
		msg_hash(l->v[i].m_content, h);
		if ((r = stamp_get(s, key, h, &have)) == -1)
			return -1;
		if (r == 0)
			continue;
		if (relative)
			ts_sent_ago(have, now, rel, sizeof(rel));
		prefix(&l->v[i], relative ? rel : have);
		free(have);
	}
	return 0;
}

int
ts_placeholder(struct store *s, const char *key, time_t now)
{
	char	 stamp[TS_LEN];
	int	 rc;

	ts_format(ts_wall(now), stamp);
	if (store_begin(s) == -1)
		return -1;
	rc = discussion_add(s, key, now);
	if (rc == 0)
		rc = stamp_put(s, key, TS_PLACEHOLDER, stamp);
	return finish(s, rc);
}

/* Inside the transaction of ts_commit. */
static int
commit_locked(struct store *s, const char *key, const char *content,
    time_t now)
{
	char	*pending, stamp[TS_LEN], h[SHA256_HEXLEN];
	int	 r;

	if (discussion_add(s, key, now) == -1 ||
	    (r = stamp_get(s, key, TS_PLACEHOLDER, &pending)) == -1)
		return -1;
	if (r == 1 && stamp_del(s, key, TS_PLACEHOLDER) == -1)
		r = -1;
	else if (*content != '\0') {
		if (r == 0)
			log_debug("timestamps: an answer of '%s' without a "
			    "placeholder: stamped now", key);
		ts_format(ts_wall(now), stamp);
		msg_hash(content, h);
		r = stamp_put(s, key, h, pending != NULL ? pending : stamp);
	}
	free(pending);
	return r == -1 ? -1 : 0;
}

int
ts_commit(struct store *s, const char *key, const char *content, time_t now)
{
	if (store_begin(s) == -1)
		return -1;
	return finish(s, commit_locked(s, key, content, now));
}

static char *
summary_text(int64_t lo, int64_t hi, time_t now)
{
	char	 a[TS_AGO_LEN], b[TS_AGO_LEN];
	int64_t	 w = ts_wall(now);

	ts_ago(w - lo, a);
	if (lo == hi)
		return xasprintf("[Time Context: The conversation started %s "
		    "ago.]", a);
	ts_ago(w - hi, b);
	return xasprintf("[Time Context: This conversation started %s ago. "
	    "The most recent message was sent %s ago.]", a, b);
}

int
ts_summary(struct store *s, const char *key, time_t now, char **out)
{
	struct store_q	*st = store_stmt(s, "SELECT stamp FROM timestamps "
			    "WHERE discussion = ? AND msg_hash <> ?");
	int64_t		 w, lo = 0, hi = 0;
	size_t		 n = 0;
	char		*t;
	int		 r, rc;

	*out = NULL;
	if (st == NULL || store_bind(s, st, "tt", key, TS_PLACEHOLDER) == -1)
		return -1;
	while ((r = store_step(s, st)) == 1) {
		if (store_unseal(s, key, "timestamps",
		    store_col_text(st, 0), &t) == -1) {
			store_end(st);
			return -1;
		}
		rc = ts_parse(t, &w);
		free(t);
		if (rc == -1)
			continue;
		if (n == 0 || w < lo)
			lo = w;
		if (n == 0 || w > hi)
			hi = w;
		n++;
	}
	if (r == -1)
		return -1;
	*out = n == 0 ? xstrdup("") : summary_text(lo, hi, now);
	return 0;
}
