/* clean.c - the streaming response cleaner: its life cycle, what it is fed, what comes out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

void
clean_seed_ids(struct cleaner *c, unsigned long long seed)
{
	clean_ids_seed(c, seed);
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
