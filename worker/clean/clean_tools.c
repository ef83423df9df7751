/* clean_tools.c - cleaner stage 2: tool-call markers in the text become structured tool calls. */
#include <string.h>

#include "../../common/log.h"
#include "clean_int.h"

/*
 * Markers (parseToolCallMarkers, on by default):
 *   <tool_call>BODY</tool_call>       Hermes / Qwen / GLM (clean_toolparse.c
 *                                     reads the body's dialect)
 *   <function=NAME>BODY</function>    Llama 3.x custom tools
 *   <|python_tag|>BODY<|eom_id|>      Llama 3.x built-in tools (or
 *                                     <|eot_id|>)
 * A block still open at the end of the output is a call too (servers
 * often strip the closing marker as a stop sequence). A block whose body
 * names no function is not a call: it goes back into the text as it was
 * written, markers and all, with a warning; as soon as its start shows
 * it can never name one (tool_viable) it is sent on as text at once.
 * "<function=" must be followed by 1-256 characters of [A-Za-z0-9_.:-]
 * and ">", or it is text.
 * Held back: a tail that may become an opener, and an open block (each
 * byte of it may still end up inside a call).
 */

#define TL_NAME_MAX	256

static const struct {
	const char	*o_open;
	enum tl_kind	 o_kind;
} tl_openers[] = {
	{ "<tool_call>", TLK_TOOLCALL },
	{ "<function=", TLK_FUNCTION },
	{ "<|python_tag|>", TLK_PYTHON },
};

static const struct {
	const char	*cl_s;
	enum tl_kind	 cl_kind;
} tl_closers[] = {
	{ "</tool_call>", TLK_TOOLCALL },
	{ "</function>", TLK_FUNCTION },
	{ "<|eom_id|>", TLK_PYTHON },
	{ "<|eot_id|>", TLK_PYTHON },
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

void
tl_init(struct cleaner *c)
{
	struct tl	*l = &c->c_tl;
	size_t		 i;

	memset(l, 0, sizeof(*l));
	pset_init(&l->l_open);
	for (i = 0; i < TLK_NKIND; i++)
		pset_init(&l->l_close[i]);
	buf_init(&l->l_pend);
	buf_init(&l->l_raw);
	l->l_on = c->c_conf.cc_tool_markers;
	if (!l->l_on)
		return;
	for (i = 0; i < NELEM(tl_openers); i++)
		pset_add(&l->l_open, tl_openers[i].o_open,
		    strlen(tl_openers[i].o_open), false,
		    (int)tl_openers[i].o_kind);
	for (i = 0; i < NELEM(tl_closers); i++)
		pset_add(&l->l_close[tl_closers[i].cl_kind], tl_closers[i].cl_s,
		    strlen(tl_closers[i].cl_s), false, 0);
	pset_done(&l->l_open);
	for (i = 0; i < TLK_NKIND; i++)
		pset_done(&l->l_close[i]);
}

void
tl_free(struct tl *l)
{
	size_t	 i;

	pset_free(&l->l_open);
	for (i = 0; i < TLK_NKIND; i++)
		pset_free(&l->l_close[i]);
	buf_free(&l->l_pend);
	buf_free(&l->l_raw);
}

static size_t
tl_out(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct tl	*l = &c->c_tl;
	struct pm	 m;

	pset_scan(&l->l_open, p, n, final, NULL, &m);
	if (m.pm_pos > 0)
		tk_push(c, p, m.pm_pos);
	if (m.pm_kind != PM_FULL)
		return m.pm_pos;
	l->l_kind = (enum tl_kind)l->l_open.ps_pat[m.pm_pat].pt_id;
	l->l_st = l->l_kind == TLK_FUNCTION ? TL_FNAME : TL_IN;
	l->l_namelen = 0;
	l->l_viable = l->l_kind != TLK_TOOLCALL;
	l->l_v1 = l->l_v2 = 0;
	buf_reset(&l->l_raw);
	buf_add(&l->l_raw, p + m.pm_pos, m.pm_len);
	l->l_body = l->l_raw.b_len;
	return m.pm_pos + m.pm_len;
}

static bool
name_char(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == ':' ||
	    ch == '-';
}

/* Not a marker after all: the text so far is text. */
static void
tl_restore(struct cleaner *c)
{
	struct tl	*l = &c->c_tl;

	l->l_st = TL_OUT;
	tk_push(c, l->l_raw.b_data, l->l_raw.b_len);
	buf_reset(&l->l_raw);
}

/* After "<function=": the name up to ">". */
static size_t
tl_fname(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct tl	*l = &c->c_tl;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (p[i] == '>' && l->l_namelen > 0) {
			buf_add(&l->l_raw, p, i + 1);
			l->l_body = l->l_raw.b_len;
			l->l_st = TL_IN;
			return i + 1;
		}
		if (!name_char((unsigned char)p[i]) ||
		    l->l_namelen >= TL_NAME_MAX) {
			buf_add(&l->l_raw, p, i);
			tl_restore(c);
			return i + tl_out(c, p + i, n - i, final);
		}
		l->l_namelen++;
	}
	buf_add(&l->l_raw, p, n);
	return n;
}

/* The block is complete (closer, or NULL at the end of the output). */
static void
tl_close(struct cleaner *c, const char *closer, size_t cn)
{
	struct tl	*l = &c->c_tl;
	const char	*name = NULL;

	if (l->l_kind == TLK_FUNCTION)
		name = l->l_raw.b_data + strlen("<function=");
	if (!tool_parse(c, l->l_kind, name, l->l_namelen,
	    l->l_raw.b_data + l->l_body, l->l_raw.b_len - l->l_body)) {
		log_warnx("tool-call marker without a usable call; "
		    "kept as text");
		buf_add(&l->l_raw, closer, cn);
		tl_restore(c);
		return;
	}
	l->l_st = TL_OUT;
	buf_reset(&l->l_raw);
}

static size_t
tl_in(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct tl	*l = &c->c_tl;
	struct pm	 m;
	enum tool_viab	 v;

	pset_scan(&l->l_close[l->l_kind], p, n, final, NULL, &m);
	buf_add(&l->l_raw, p, m.pm_pos);
	if (m.pm_kind == PM_FULL) {
		tl_close(c, p + m.pm_pos, m.pm_len);
		return m.pm_pos + m.pm_len;
	}
	if (l->l_viable)
		return m.pm_pos;
	v = tool_viable(l->l_raw.b_data + l->l_body, l->l_raw.b_len -
	    l->l_body, &l->l_v1, &l->l_v2);
	if (v == TV_VIABLE)
		l->l_viable = true;
	else if (v == TV_DOOMED) {
		/* It would go back as text when it closes: send it now. */
		log_warnx("tool-call marker without a usable call; kept as "
		    "text");
		l->l_st = TL_DOOMED;
		l->l_sent = 0;
		tk_push(c, l->l_raw.b_data, l->l_raw.b_len);
		buf_reset(&l->l_raw);
	}
	return m.pm_pos;
}

/* A doomed block: text, while its closer is looked for. Bytes of a
 * possible closer are sent at once too (they are text either way) and
 * counted in l_sent so they are not sent twice. */
static size_t
tl_doomed(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct tl	*l = &c->c_tl;
	struct pm	 m;
	size_t		 end, from = l->l_sent;

	pset_scan(&l->l_close[TLK_TOOLCALL], p, n, final, NULL, &m);
	end = m.pm_kind == PM_FULL ? m.pm_pos + m.pm_len : n;
	if (end > from)
		tk_push(c, p + from, end - from);
	if (m.pm_kind == PM_FULL) {
		l->l_sent = 0;
		l->l_st = TL_OUT;
		return end;
	}
	l->l_sent = m.pm_kind == PM_PART ? n - m.pm_pos : 0;
	return m.pm_pos;
}

static size_t
tl_step(struct cleaner *c, const char *p, size_t n, bool final)
{
	switch (c->c_tl.l_st) {
	case TL_FNAME:
		return tl_fname(c, p, n, final);
	case TL_IN:
		return tl_in(c, p, n, final);
	case TL_DOOMED:
		return tl_doomed(c, p, n, final);
	case TL_OUT:
	default:
		return tl_out(c, p, n, final);
	}
}

void
tl_push(struct cleaner *c, const char *p, size_t n)
{
	if (!c->c_tl.l_on)
		tk_push(c, p, n);
	else
		clean_drive(c, &c->c_tl.l_pend, tl_step, p, n, false);
}

void
tl_finish(struct cleaner *c)
{
	struct tl	*l = &c->c_tl;

	if (l->l_on) {
		clean_drive(c, &l->l_pend, tl_step, NULL, 0, true);
		if (l->l_st == TL_FNAME)
			tl_restore(c);
		else if (l->l_st == TL_IN)
			tl_close(c, "", 0);
		l->l_st = TL_OUT;
	}
	if (!c->c_stopped)
		tk_finish(c);
}
