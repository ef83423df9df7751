/* sse.c - incremental Server-Sent Events parser (WHATWG event stream rules). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "sse.h"

#define SSE_DEFAULT_MAX	(1024 * 1024)

static const unsigned char sse_bom[3] = { 0xef, 0xbb, 0xbf };

/*
 * A line that lies wholly inside one fed chunk is parsed where it is; only
 * a line cut by a chunk boundary is gathered in se_line. Each new chunk is
 * scanned once for terminators, so a long line fed in 1-byte pieces costs
 * linear time. A CR ends its line at once; se_skip_lf then swallows an LF
 * that follows, even at the start of the next chunk.
 */
struct sse {
	size_t		 se_max;
	sse_event_cb	 se_cb;
	void		*se_arg;
	struct buf	 se_line;	/* partial line cut by a chunk end */
	struct buf	 se_data;	/* data lines joined with "\n" */
	struct buf	 se_event;	/* "event:" value */
	bool		 se_has_data;	/* a data line came in this event */
	bool		 se_skip_lf;	/* last byte was a CR */
	bool		 se_failed;	/* line too long or callback stop */
	size_t		 se_bom;	/* BOM bytes matched; 3 once settled */
	size_t		 se_comments;
};

/* Where the next CR and LF lie in the chunk being fed (NULL: none left). */
struct sse_scan {
	const char	*sc_end;
	const char	*sc_cr;
	const char	*sc_lf;
};

struct sse *
sse_new(size_t max_line, sse_event_cb cb, void *arg)
{
	struct sse	*s;

	s = xcalloc(1, sizeof(*s));
	s->se_max = max_line ? max_line : SSE_DEFAULT_MAX;
	s->se_cb = cb;
	s->se_arg = arg;
	buf_init(&s->se_line);
	buf_init(&s->se_data);
	buf_init(&s->se_event);
	return s;
}

void
sse_free(struct sse *s)
{
	if (s == NULL)
		return;
	buf_free(&s->se_line);
	buf_free(&s->se_data);
	buf_free(&s->se_event);
	free(s);
}

size_t
sse_comments(const struct sse *s)
{
	return s->se_comments;
}

/* Blank line: hand the event over if it has data, then start afresh. */
static int
sse_dispatch(struct sse *s)
{
	int	 rc = 0;

	if (s->se_has_data && s->se_cb != NULL)
		rc = s->se_cb(s->se_arg,
		    s->se_event.b_data != NULL ? s->se_event.b_data : "",
		    s->se_event.b_len,
		    s->se_data.b_data != NULL ? s->se_data.b_data : "",
		    s->se_data.b_len);
	buf_reset(&s->se_data);
	buf_reset(&s->se_event);
	s->se_has_data = false;
	return rc == -1 ? -1 : 0;
}

static int
sse_add_data(struct sse *s, const char *v, size_t n)
{
	size_t	 sep = s->se_has_data ? 1 : 0;

	if (n > s->se_max || s->se_data.b_len + sep > s->se_max - n)
		return -1;
	if (sep)
		buf_addc(&s->se_data, '\n');
	buf_add(&s->se_data, v, n);
	s->se_has_data = true;
	return 0;
}

/* One complete line, without its terminator. */
static int
sse_line(struct sse *s, const char *l, size_t n)
{
	const char	*colon, *v;
	size_t		 fn, vn;

	if (n == 0)
		return sse_dispatch(s);
	if (l[0] == ':') {
		s->se_comments++;
		return 0;
	}
	colon = memchr(l, ':', n);
	fn = colon != NULL ? (size_t)(colon - l) : n;
	v = colon != NULL ? colon + 1 : l + n;
	vn = n - (size_t)(v - l);
	if (vn > 0 && v[0] == ' ') {
		v++;
		vn--;
	}
	if (fn == 4 && memcmp(l, "data", 4) == 0)
		return sse_add_data(s, v, vn);
	if (fn == 5 && memcmp(l, "event", 5) == 0) {
		buf_reset(&s->se_event);
		buf_add(&s->se_event, v, vn);
	}
	/* "id", "retry" and unknown fields are ignored. */
	return 0;
}

/* Skip a UTF-8 BOM at the very start; it may arrive split. Returns the
 * number of input bytes consumed. */
static size_t
sse_bom_skip(struct sse *s, const unsigned char *p, size_t n)
{
	size_t	 i = 0;

	while (s->se_bom < sizeof(sse_bom) && i < n) {
		if (p[i] != sse_bom[s->se_bom]) {
			/* Not a BOM: what matched so far starts a line. */
			buf_add(&s->se_line, sse_bom, s->se_bom);
			s->se_bom = sizeof(sse_bom);
			return i;
		}
		s->se_bom++;
		i++;
	}
	return i;
}

/* Next line terminator at or after p, or NULL. Each search starts past
 * the previous hit, so a chunk is scanned once per terminator kind. */
static const char *
sse_scan_eol(struct sse_scan *sc, const char *p)
{
	if (sc->sc_cr != NULL && sc->sc_cr < p)
		sc->sc_cr = memchr(p, '\r', (size_t)(sc->sc_end - p));
	if (sc->sc_lf != NULL && sc->sc_lf < p)
		sc->sc_lf = memchr(p, '\n', (size_t)(sc->sc_end - p));
	if (sc->sc_cr == NULL)
		return sc->sc_lf;
	if (sc->sc_lf == NULL || sc->sc_cr < sc->sc_lf)
		return sc->sc_cr;
	return sc->sc_lf;
}

/* The line from p to eol, glued to a partial line held from before. */
static int
sse_end_line(struct sse *s, const char *p, const char *eol)
{
	size_t	 n = (size_t)(eol - p);
	int	 rc;

	if (s->se_line.b_len == 0)
		return n > s->se_max ? -1 : sse_line(s, p, n);
	/* a cut BOM held in se_line may already exceed a tiny cap */
	if (s->se_line.b_len + n > s->se_max)
		return -1;
	buf_add(&s->se_line, p, n);
	rc = sse_line(s, s->se_line.b_data, s->se_line.b_len);
	buf_reset(&s->se_line);
	return rc;
}

static int
sse_lines(struct sse *s, const char *p, const char *end)
{
	struct sse_scan	 sc;
	const char	*eol;

	sc.sc_end = end;
	sc.sc_cr = memchr(p, '\r', (size_t)(end - p));
	sc.sc_lf = memchr(p, '\n', (size_t)(end - p));
	while (p < end) {
		if (s->se_skip_lf) {
			s->se_skip_lf = false;
			if (*p == '\n' && ++p == end)
				break;
		}
		if ((eol = sse_scan_eol(&sc, p)) == NULL) {
			if (s->se_line.b_len + (size_t)(end - p) > s->se_max)
				return -1;
			buf_add(&s->se_line, p, (size_t)(end - p));
			break;
		}
		if (sse_end_line(s, p, eol) == -1)
			return -1;
		s->se_skip_lf = *eol == '\r';
		p = eol + 1;
	}
	return 0;
}

/*
 * Errors are sticky: once a line was too long or the callback said stop,
 * every later sse_feed returns -1 at once.
 */
int
sse_feed(struct sse *s, const void *buf, size_t n)
{
	const char	*p = buf;
	size_t		 used;

	if (s->se_failed)
		return -1;
	if (n == 0)
		return 0;
	used = sse_bom_skip(s, buf, n);
	if (sse_lines(s, p + used, p + n) == -1) {
		s->se_failed = true;
		return -1;
	}
	return 0;
}

/*
 * Drops what is pending and makes the parser ready for a new stream
 * (a BOM is skipped again). After a failed sse_feed it returns 0: the
 * caller already knows the stream was cut.
 */
int
sse_finish(struct sse *s)
{
	int	 dropped;

	dropped = !s->se_failed && (s->se_has_data || s->se_line.b_len > 0 ||
	    (s->se_bom > 0 && s->se_bom < sizeof(sse_bom)));
	buf_reset(&s->se_line);
	buf_reset(&s->se_data);
	buf_reset(&s->se_event);
	s->se_has_data = s->se_skip_lf = s->se_failed = false;
	s->se_bom = 0;
	return dropped;
}
