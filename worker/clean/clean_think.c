/* clean_think.c - cleaner stage 1: reasoning blocks (WilmerAI's think tags, common reasoning tags, gpt-oss channels). */
#include <stdint.h>
#include <string.h>

#include "clean_int.h"

/*
 * Rules (spec 8.1/8.2, case numbers of spec 9):
 *
 * - The configured tags (removeThinking with both tags set) follow
 *   WilmerAI: matched ASCII-caselessly; the opening tag counts only if
 *   it STARTS at code point index <= openingTagGracePeriod (cases 4, 5,
 *   15); the first closing tag after it ends the block (case 8); only
 *   this one block is removed (cases 6, 7); a stray closing tag is text
 *   (case 9). expectOnlyClosingThinkTag: everything up to the first
 *   closing tag is the block (cases 11, 12); without one the text is
 *   unchanged (case 13).
 * - reasoningTags adds <think> <thinking> <reasoning> <reflection>
 *   (caseless, each closed by its own closing tag), anywhere and any
 *   number of times. At one position the configured tag wins.
 * - gptOssChannels: "<|channel|>analysis<|message|>" (optionally after
 *   "<|start|>assistant") opens a block that "<|end|>" or the final
 *   channel header closes; the final channel header
 *   ("<|start|>assistant<|channel|>final<|message|>" or
 *   "<|channel|>final<|message|>") is removed where it stands.
 * - Text inside a block is opaque: nested openers are content.
 *
 * What happens to a block depends on reasoningOutput:
 * - drop (WilmerAI): it is held until it closes, then discarded; still
 *   open at the end, it goes back into the text with its opening tag
 *   as written (cases 10, 32).
 * - field: its content streams to co_reasoning as it arrives; a block
 *   still open at the end was reasoning cut short and stays there. With
 *   closing-only mode the text is held until the tag (it could still
 *   turn out to be an answer) and is text when there is none.
 * - inline: this stage is off; reasoning stays in the text, tags and
 *   all, and later stages see it as ordinary text.
 *
 * Held back: only a tail that may still become a tag (OUT), the block
 * (drop, closing-only), or a tail that may be a closing tag (field).
 */

static const char *const think_tags[][2] = {
	{ "<think>", "</think>" },
	{ "<thinking>", "</thinking>" },
	{ "<reasoning>", "</reasoning>" },
	{ "<reflection>", "</reflection>" },
};

static const char *const oss_open[] = {
	"<|channel|>analysis<|message|>",
	"<|start|>assistant<|channel|>analysis<|message|>",
};

static const char *const oss_final[] = {
	"<|start|>assistant<|channel|>final<|message|>",
	"<|channel|>final<|message|>",
};

static void
add_s(struct pset *ps, const char *s, bool icase, int id)
{
	pset_add(ps, s, strlen(s), icase, id);
}

static void
th_sets(struct th *t, const struct clean_conf *cc, bool w)
{
	size_t	 i;

	if (w && !cc->cc_only_closing) {
		t->t_w_pat = t->t_open.ps_n;
		t->t_has_w = true;
		add_s(&t->t_open, cc->cc_start_tag, true, THK_W);
		t->t_w_armed = cc->cc_grace >= 0;
	}
	if (w)
		add_s(&t->t_close[THK_W], cc->cc_end_tag, true, THK_W);
	for (i = 0; cc->cc_reasoning_tags && i < 4; i++) {
		add_s(&t->t_open, think_tags[i][0], true, (int)(THK_THINK + i));
		add_s(&t->t_close[THK_THINK + i], think_tags[i][1], true,
		    (int)(THK_THINK + i));
	}
	for (i = 0; cc->cc_gptoss_channels && i < 2; i++) {
		add_s(&t->t_open, oss_open[i], false, THK_GPTOSS);
		add_s(&t->t_open, oss_final[i], false, THK_MARKER);
		add_s(&t->t_close[THK_GPTOSS], oss_final[i], false,
		    THK_GPTOSS);
	}
	if (cc->cc_gptoss_channels)
		add_s(&t->t_close[THK_GPTOSS], "<|end|>", false, THK_GPTOSS);
}

void
th_init(struct cleaner *c)
{
	const struct clean_conf	*cc = &c->c_conf;
	struct th		*t = &c->c_th;
	size_t			 k;
	bool			 w;

	memset(t, 0, sizeof(*t));
	pset_init(&t->t_open);
	for (k = 0; k < THK_NKIND; k++)
		pset_init(&t->t_close[k]);
	buf_init(&t->t_pend);
	buf_init(&t->t_body);
	t->t_grace = cc->cc_grace;
	w = cc->cc_remove_thinking && cc->cc_start_tag != NULL &&
	    cc->cc_end_tag != NULL && *cc->cc_start_tag != '\0' &&
	    *cc->cc_end_tag != '\0';
	t->t_on = (w || cc->cc_reasoning_tags || cc->cc_gptoss_channels) &&
	    cc->cc_reasoning != CLEAN_REASONING_INLINE;
	if (!t->t_on)
		return;
	th_sets(t, cc, w);
	pset_done(&t->t_open);
	for (k = 0; k < THK_NKIND; k++)
		pset_done(&t->t_close[k]);
	if (w && cc->cc_only_closing)
		t->t_st = TH_CO;
}

void
th_free(struct th *t)
{
	size_t	 k;

	pset_free(&t->t_open);
	for (k = 0; k < THK_NKIND; k++)
		pset_free(&t->t_close[k]);
	buf_free(&t->t_pend);
	buf_free(&t->t_body);
}

/* Count consumed code points while the configured tag may still come;
 * once the next one would start past the grace period it cannot. */
static void
th_count(struct th *t, const char *p, size_t n)
{
	if (!t->t_w_armed)
		return;
	t->t_chars += u8_count(p, n);
	if (t->t_chars > (size_t)t->t_grace)
		t->t_w_armed = false;
}

/* First offset of p at which the configured tag may no longer start. */
static size_t
w_limit(const struct th *t, const char *p, size_t n)
{
	size_t	 room = (size_t)t->t_grace - t->t_chars, i, k = 0;

	for (i = 0; i < n; i++)
		if (!U8_CONT(p[i]) && ++k > room)
			return i + 1;
	return SIZE_MAX;
}

static bool
th_drop(const struct cleaner *c)
{
	return c->c_conf.cc_reasoning == CLEAN_REASONING_DROP;
}

static void
th_open(struct cleaner *c, int kind, const char *tag, size_t n)
{
	struct th	*t = &c->c_th;

	if (kind == THK_MARKER)
		return;
	t->t_st = TH_IN;
	t->t_kind = (enum th_kind)kind;
	if (kind == THK_W)
		t->t_w_armed = false;
	buf_reset(&t->t_body);
	if (th_drop(c))
		buf_add(&t->t_body, tag, n);
}

static size_t
th_out(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct th	*t = &c->c_th;
	size_t		 lim[16], k, adv;	/* the set has at most 9 */
	const size_t	*limp = NULL;
	struct pm	 m;

	if (t->t_has_w) {
		for (k = 0; k < t->t_open.ps_n && k < 16; k++)
			lim[k] = SIZE_MAX;
		lim[t->t_w_pat] = t->t_w_armed ? w_limit(t, p, n) : 0;
		limp = lim;
	}
	pset_scan(&t->t_open, p, n, final, limp, &m);
	adv = m.pm_kind == PM_FULL ? m.pm_pos + m.pm_len : m.pm_pos;
	if (m.pm_pos > 0)
		tl_push(c, p, m.pm_pos);
	th_count(t, p, adv);
	if (m.pm_kind == PM_FULL)
		th_open(c, t->t_open.ps_pat[m.pm_pat].pt_id, p + m.pm_pos,
		    m.pm_len);
	return adv;
}

/* Content of the open block. */
static void
th_content(struct cleaner *c, const char *p, size_t n)
{
	if (n == 0)
		return;
	if (th_drop(c))
		buf_add(&c->c_th.t_body, p, n);
	else
		clean_reasoning(c, p, n);
}

static size_t
th_in(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct th	*t = &c->c_th;
	struct pm	 m;
	size_t		 adv;

	pset_scan(&t->t_close[t->t_kind], p, n, final, NULL, &m);
	adv = m.pm_kind == PM_FULL ? m.pm_pos + m.pm_len : m.pm_pos;
	th_content(c, p, m.pm_pos);
	th_count(t, p, adv);
	if (m.pm_kind == PM_FULL) {
		t->t_st = TH_OUT;
		buf_reset(&t->t_body);
	}
	return adv;
}

/* Closing-only mode: all is held until the first closing tag. */
static size_t
th_co(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct th	*t = &c->c_th;
	struct pm	 m;

	pset_scan(&t->t_close[THK_W], p, n, final, NULL, &m);
	buf_add(&t->t_body, p, m.pm_pos);
	if (m.pm_kind != PM_FULL)
		return m.pm_pos;
	if (!th_drop(c))
		clean_reasoning(c, t->t_body.b_data, t->t_body.b_len);
	buf_reset(&t->t_body);
	t->t_st = TH_OUT;
	return m.pm_pos + m.pm_len;
}

static size_t
th_step(struct cleaner *c, const char *p, size_t n, bool final)
{
	switch (c->c_th.t_st) {
	case TH_IN:
		return th_in(c, p, n, final);
	case TH_CO:
		return th_co(c, p, n, final);
	case TH_OUT:
	default:
		return th_out(c, p, n, final);
	}
}

void
th_push(struct cleaner *c, const char *p, size_t n)
{
	if (!c->c_th.t_on)
		tl_push(c, p, n);
	else
		clean_drive(c, &c->c_th.t_pend, th_step, p, n, false);
}

void
th_finish(struct cleaner *c)
{
	struct th	*t = &c->c_th;

	if (t->t_on) {
		clean_drive(c, &t->t_pend, th_step, NULL, 0, true);
		/* An unterminated block goes back as text (drop mode), as
		 * does everything in closing-only mode without the tag. */
		if (t->t_st == TH_CO || (t->t_st == TH_IN && th_drop(c)))
			tl_push(c, t->t_body.b_data, t->t_body.b_len);
		buf_reset(&t->t_body);
		t->t_st = TH_OUT;
	}
	if (!c->c_stopped)
		tl_finish(c);
}
