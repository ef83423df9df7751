/* clean_prefix.c - cleaner stage 4: WilmerAI's start-of-response prefixes, lstrip and trim. */
#include <stdlib.h>
#include <string.h>

#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "clean_int.h"

/*
 * WilmerAI's strip_leading_response_prefixes (spec 8.1 steps 2-7), as a
 * machine that decides each step as soon as the text allows:
 *   lstrip; workflow prefixes (first one the text starts with, exact,
 *   empty entries skipped), then lstrip; endpoint prefixes (entries
 *   .strip()ed, empty skipped; first match), lstrip; "[Sent less than a
 *   minute ago]" (+ a space) when the node adds timestamps, lstrip;
 *   "Assistant:" when the user has both AUA flags, lstrip; with
 *   trimBeginningAndEndLineBreaks a final strip.
 * Whitespace is Python's (str.isspace, Unicode included).
 *
 * A step is decided when the text starts with a candidate and no
 * earlier candidate of the step can still match, or when no candidate
 * can match any more; until then only the undecided start is held (at
 * most the longest candidate). WilmerAI's streaming handler instead
 * buffers up to 100 (200) characters and then decides whatever it has;
 * here there is no such limit: the result is the non-streaming one for
 * every chunking, and the observable results of cases 23-33 are kept.
 *
 * Deliberate differences from WilmerAI's streams (both make streaming
 * equal the non-streaming result): the leading lstrip is always applied
 * (WilmerAI's streams skip it when no prefix option is set), and with
 * trim the END is trimmed too, by holding trailing whitespace until more
 * text comes (then it is sent) or the output ends (then it is dropped).
 *
 * Group-chat reconstruction (a generation prompt such as "Roland:",
 * spec 3.3 and case 33) is not done here: it belongs to the responder
 * (worker/flow), which knows the generation prompt; see the "hook for
 * group-chat reconstruction" note below.
 */

static const char ts_text[] = "[Sent less than a minute ago]";
static const char as_text[] = "Assistant:";

static size_t
nlist(const char *const *l)
{
	size_t	 n = 0;

	while (l != NULL && l[n] != NULL)
		n++;
	return n;
}

static void
px_cands(struct px *x, enum px_phase ph, const char *const *l, bool strip)
{
	size_t		 i, n = nlist(l);
	const char	*s;
	size_t		 sn;

	x->x_cand[ph] = xcalloc(n + 1, sizeof(struct str));
	for (i = 0; i < n; i++) {
		s = l[i];
		sn = strlen(s);
		if (strip)
			pystr_trim(&s, &sn);
		if (sn > 0)
			x->x_cand[ph][x->x_ncand[ph]++] = (struct str){ s, sn };
	}
}

void
px_init(struct cleaner *c)
{
	const struct clean_conf	*cc = &c->c_conf;
	struct px		*x = &c->c_px;
	const char		*ts[2] = { ts_text, NULL };
	const char		*as[2] = { as_text, NULL };

	memset(x, 0, sizeof(*x));
	buf_init(&x->x_pend);
	buf_init(&x->x_ws);
	x->x_skipws = true;
	x->x_trim = cc->cc_trim;
	px_cands(x, PX_WF, cc->cc_workflow_prefixes, false);
	px_cands(x, PX_EP, cc->cc_endpoint_prefixes, true);
	px_cands(x, PX_TS, cc->cc_timestamp_prefix ? ts : NULL, false);
	px_cands(x, PX_AS, cc->cc_assistant_prefix ? as : NULL, false);
}

void
px_free(struct px *x)
{
	size_t	 i;

	for (i = 0; i < PX_BODY; i++)
		free(x->x_cand[i]);
	buf_free(&x->x_pend);
	buf_free(&x->x_ws);
}

/*
 * Hook for group-chat reconstruction (spec 3.3, case 33): not part of
 * the cleaner. A responder that needs it holds the cleaner's first
 * output until WilmerAI's colon rule can be decided and prepends the
 * generation prompt to the cleaned text itself.
 */

/* ---- trailing whitespace (trim) ------------------------------------- */

/* x_ws may end in a character cut short: settle it with p's first
 * bytes. Returns how many bytes of p it took; *done when p is used up. */
static size_t
ws_join(struct cleaner *c, const char *p, size_t n, bool *done)
{
	struct px	*x = &c->c_px;
	size_t		 i = 0, tail, k, take;
	char		 tmp[8];
	int		 w;

	*done = false;
	i = x->x_wsok;
	if (i == x->x_ws.b_len)
		return 0;
	tail = x->x_ws.b_len - i;
	take = n < 4 ? n : 4;
	memcpy(tmp, x->x_ws.b_data + i, tail);
	memcpy(tmp + tail, p, take);
	w = pystr_space(tmp, tail + take);
	if (w < 0) {
		buf_add(&x->x_ws, p, n);
		*done = true;
		return n;
	}
	if (w > 0) {
		k = (size_t)w - tail;
		buf_add(&x->x_ws, p, k);
		x->x_wsok = x->x_ws.b_len;
		return k;
	}
	/* not whitespace: everything held is settled */
	clean_emit(c, x->x_ws.b_data, x->x_ws.b_len);
	buf_reset(&x->x_ws);
	x->x_wsok = 0;
	return 0;
}

static void
px_trim_out(struct cleaner *c, const char *p, size_t n)
{
	struct px	*x = &c->c_px;
	size_t		 i, keep = 0;
	int		 w;
	bool		 done;

	/* The usual case: nothing held and the piece ends in an ASCII
	 * byte that is not whitespace (it cannot belong to a multi-byte
	 * character), so all of it is settled. */
	if (x->x_ws.b_len == 0 && (unsigned char)p[n - 1] < 0x80 &&
	    pystr_space(p + n - 1, 1) == 0) {
		clean_emit(c, p, n);
		return;
	}
	if (x->x_ws.b_len > 0) {
		i = ws_join(c, p, n, &done);
		p += i;
		n -= i;
		if (done)
			goto hint;
	}
	for (i = 0; i < n; ) {
		w = pystr_space(p + i, n - i);
		if (w > 0)
			i += (size_t)w;
		else if (w < 0)
			break;
		else
			keep = ++i;
	}
	if (keep > 0) {
		clean_emit(c, x->x_ws.b_data, x->x_ws.b_len);
		buf_reset(&x->x_ws);
		clean_emit(c, p, keep);
	}
	/* p[keep..i) is whitespace, p[i..n) a character cut short */
	buf_add(&x->x_ws, p + keep, n - keep);
	x->x_wsok = x->x_ws.b_len - (n - i);
hint:
	clean_emit_hint(c, x->x_ws.b_data, x->x_ws.b_len);
}

static void
px_out(struct cleaner *c, const char *p, size_t n)
{
	if (n == 0)
		return;
	if (c->c_px.x_trim)
		px_trim_out(c, p, n);
	else
		clean_emit(c, p, n);
}

/* ---- the start ------------------------------------------------------- */

enum px_verdict { PXV_NONE, PXV_MATCH, PXV_WAIT };

static enum px_verdict
px_decide(const struct px *x, const char *p, size_t n, bool final,
    size_t *mlen)
{
	const struct str	*cd = x->x_cand[x->x_phase];
	size_t			 i, k;

	for (i = 0; i < x->x_ncand[x->x_phase]; i++) {
		k = cd[i].n;
		if (n >= k && memcmp(p, cd[i].p, k) == 0) {
			*mlen = k;
			return PXV_MATCH;
		}
		if (n < k && memcmp(p, cd[i].p, n) == 0 && !final)
			return PXV_WAIT;
	}
	return PXV_NONE;
}

/* Leading whitespace: its length; *more when p ends in a character
 * that may still turn out to be whitespace. */
static size_t
px_skipws(const char *p, size_t n, bool final, bool *more)
{
	size_t	 i = 0;
	int	 w;

	*more = false;
	while (i < n) {
		w = pystr_space(p + i, n - i);
		if (w > 0)
			i += (size_t)w;
		else {
			*more = w < 0 && !final;
			break;
		}
	}
	return i;
}

static size_t
px_step(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct px		*x = &c->c_px;
	size_t			 used = 0, k = 0;
	enum px_verdict		 v;
	bool			 more;

	for (;;) {
		if (x->x_skipws) {
			used += px_skipws(p + used, n - used, final, &more);
			if (more || used == n)
				return used;
			x->x_skipws = false;
		}
		if (x->x_phase == PX_BODY)
			break;
		v = px_decide(x, p + used, n - used, final, &k);
		if (v == PXV_WAIT)
			return used;
		if (v == PXV_MATCH) {
			used += k;
			x->x_skipws = true;
		}
		x->x_phase++;
	}
	px_out(c, p + used, n - used);
	return n;
}

void
px_push(struct cleaner *c, const char *p, size_t n)
{
	if (c->c_px.x_phase == PX_BODY && !c->c_px.x_skipws &&
	    c->c_px.x_pend.b_len == 0)
		px_out(c, p, n);
	else
		clean_drive(c, &c->c_px.x_pend, px_step, p, n, false);
}

void
px_finish(struct cleaner *c)
{
	struct px	*x = &c->c_px;

	clean_drive(c, &x->x_pend, px_step, NULL, 0, true);
	/* trim: trailing whitespace is dropped, unless the held text ends
	 * in a character cut short, which is not whitespace */
	if (x->x_wsok < x->x_ws.b_len)
		clean_emit(c, x->x_ws.b_data, x->x_ws.b_len);
	buf_reset(&x->x_ws);
	x->x_wsok = 0;
}
