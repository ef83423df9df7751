/* clean.c - the streaming response cleaner: life cycle, the stage driver, special tokens, output. */
#include <sys/random.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "clean_int.h"

/*
 * End-of-turn and header tokens of the common chat templates (ChatML,
 * Llama 3, Phi, Gemma, Cohere, DeepSeek, gpt-oss, Mistral). "<s>" is
 * left out on purpose: it is also HTML's strikethrough tag, and models
 * print it far more often as HTML than as a token; "</s>" is in because
 * Llama 2 and Mistral end turns with it.
 */
const char *const clean_default_tokens[] = {
	"<|im_end|>", "<|im_start|>", "<|endoftext|>",
	"<|eot_id|>", "<|eom_id|>", "<|start_header_id|>",
	"<|end_header_id|>", "<|begin_of_text|>", "<|end_of_text|>",
	"<|python_tag|>", "<|end|>", "<|return|>", "<|call|>",
	"<|assistant|>", "<|user|>", "<|system|>",
	"<end_of_turn>", "<start_of_turn>", "<|END_OF_TURN_TOKEN|>",
	"<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
	"</s>",
	NULL
};

static void
tk_init(struct cleaner *c)
{
	const char *const	*t = c->c_conf.cc_special_tokens;
	struct tk		*k = &c->c_tk;

	pset_init(&k->k_set);
	buf_init(&k->k_pend);
	for (; t != NULL && *t != NULL; t++)
		pset_add(&k->k_set, *t, strlen(*t), false, 0);
	pset_done(&k->k_set);
	k->k_on = k->k_set.ps_n > 0;
}

static void
tk_free(struct tk *k)
{
	pset_free(&k->k_set);
	buf_free(&k->k_pend);
}

static uint64_t
rng_next(uint64_t s[2])
{
	uint64_t	 a = s[0], b = s[1];

	/* xorshift128+ */
	s[0] = b;
	a ^= a << 23;
	s[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
	return s[1] + b;
}

void
clean_seed_ids(struct cleaner *c, unsigned long long seed)
{
	c->c_rng[0] = seed ^ 0x9e3779b97f4a7c15ULL;
	c->c_rng[1] = (seed << 1) | 1;
	(void)rng_next(c->c_rng);
}

static void
rng_seed(struct cleaner *c)
{
	struct timespec	 ts;

	if (getrandom(c->c_rng, sizeof(c->c_rng), GRND_NONBLOCK) ==
	    (ssize_t)sizeof(c->c_rng) && (c->c_rng[0] | c->c_rng[1]) != 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	clean_seed_ids(c, (unsigned long long)ts.tv_nsec ^
	    ((unsigned long long)ts.tv_sec << 20) ^
	    ((unsigned long long)getpid() << 40) ^ (uintptr_t)c);
}

/* "call_" + 24 lower-case hex digits. The generator is seeded on first
 * use (most outputs have no call). */
void
clean_call_id(struct cleaner *c, struct buf *out)
{
	uint64_t	 a, b;

	if ((c->c_rng[0] | c->c_rng[1]) == 0)
		rng_seed(c);
	a = rng_next(c->c_rng);
	b = rng_next(c->c_rng);

	buf_printf(out, "call_%016llx%08llx", (unsigned long long)a,
	    (unsigned long long)(b >> 32));
}

struct cleaner *
clean_new(const struct clean_conf *cc)
{
	struct cleaner	*c;

	c = xcalloc(1, sizeof(*c));
	c->c_conf = *cc;
	buf_init(&c->c_tmp);
	buf_init(&c->c_tmp2);
	th_init(c);
	tl_init(c);
	tk_init(c);
	px_init(c);
	c->c_frun = filter_run_new(cc->cc_filters, FILTER_CONTENT);
	c->c_frun_r = filter_run_new(cc->cc_filters, FILTER_REASONING);
	return c;
}

void
clean_free(struct cleaner *c)
{
	if (c == NULL)
		return;
	th_free(&c->c_th);
	tl_free(&c->c_tl);
	tk_free(&c->c_tk);
	px_free(&c->c_px);
	filter_run_free(c->c_frun);
	filter_run_free(c->c_frun_r);
	buf_free(&c->c_tmp);
	buf_free(&c->c_tmp2);
	free(c);
}

void
clean_drive(struct cleaner *c, struct buf *pend, clean_step_fn step,
    const char *p, size_t n, bool final)
{
	const char	*w;
	size_t		 wn, off = 0, r;
	bool		 own = pend->b_len > 0;

	if (own) {
		buf_add(pend, p, n);
		w = pend->b_data;
		wn = pend->b_len;
	} else {
		w = p;
		wn = n;
	}
	while (off < wn && !c->c_stopped) {
		r = step(c, w + off, wn - off, final);
		if (r == 0)
			break;
		off += r;
	}
	if (c->c_stopped)
		buf_reset(pend);
	else if (own)
		buf_drain(pend, off);
	else if (off < wn)
		buf_add(pend, w + off, wn - off);
}

void
clean_feed(struct cleaner *c, const char *p, size_t n, struct clean_out *out)
{
	if (c->c_finished || c->c_stopped || n == 0)
		return;
	c->c_out = out;
	th_push(c, p, n);
	c->c_out = NULL;
}

void
clean_finish(struct cleaner *c, struct clean_out *out)
{
	if (c->c_finished)
		return;
	c->c_finished = true;
	c->c_out = out;
	if (!c->c_stopped)
		th_finish(c);
	filter_run_finish(c->c_frun, &out->co_text);
	filter_run_finish(c->c_frun_r, &out->co_reasoning);
	c->c_out = NULL;
}

size_t
clean_tool_calls(const struct cleaner *c)
{
	return c->c_ncalls;
}

/* ---- stage 3: special tokens ---------------------------------------- */

static size_t
tk_step(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct pm	 m;

	pset_scan(&c->c_tk.k_set, p, n, final, NULL, &m);
	if (m.pm_pos > 0)
		px_push(c, p, m.pm_pos);
	return m.pm_kind == PM_FULL ? m.pm_pos + m.pm_len : m.pm_pos;
}

void
tk_push(struct cleaner *c, const char *p, size_t n)
{
	if (!c->c_tk.k_on)
		px_push(c, p, n);
	else
		clean_drive(c, &c->c_tk.k_pend, tk_step, p, n, false);
}

void
tk_finish(struct cleaner *c)
{
	if (c->c_tk.k_on)
		clean_drive(c, &c->c_tk.k_pend, tk_step, NULL, 0, true);
	px_finish(c);
}

/* ---- the end of the pipeline ---------------------------------------- */

void
clean_emit(struct cleaner *c, const char *p, size_t n)
{
	if (c->c_stopped || n == 0)
		return;
	if (filter_run_push(c->c_frun, p, n, &c->c_out->co_text)) {
		c->c_stopped = true;
		c->c_out->co_stop = true;
	}
}

/* The hint is cut to CLEAN_HINT_MAX bytes: a shorter hint is still
 * true (the next bytes start with it) and keeps the filters' work per
 * push bounded however much whitespace is held. */
#define CLEAN_HINT_MAX	256

void
clean_emit_hint(struct cleaner *c, const char *p, size_t n)
{
	if (n > CLEAN_HINT_MAX)
		n = CLEAN_HINT_MAX;
	if (!c->c_stopped && n > 0)
		filter_run_hint(c->c_frun, p, n, &c->c_out->co_text);
}

void
clean_reasoning(struct cleaner *c, const char *p, size_t n)
{
	if (c->c_stopped || n == 0)
		return;
	(void)filter_run_push(c->c_frun_r, p, n, &c->c_out->co_reasoning);
}

/* ---- output ---------------------------------------------------------- */

void
clean_out_init(struct clean_out *o)
{
	buf_init(&o->co_text);
	buf_init(&o->co_reasoning);
	buf_init(&o->co_tool_calls);
	o->co_stop = false;
}

void
clean_out_reset(struct clean_out *o)
{
	buf_reset(&o->co_text);
	buf_reset(&o->co_reasoning);
	buf_reset(&o->co_tool_calls);
	o->co_stop = false;
}

void
clean_out_free(struct clean_out *o)
{
	buf_free(&o->co_text);
	buf_free(&o->co_reasoning);
	buf_free(&o->co_tool_calls);
	o->co_stop = false;
}
