/* cleanbench.c - throughput of the response cleaner and its delay to first output; prints one JSON line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../worker/clean/clean.h"

/*
 * Every stage is on (configured think tags, common reasoning tags,
 * gpt-oss channels, tool markers, special tokens, prefixes, trim), as a
 * worst case for plain text. Cases:
 *   plain  - prose without markup;
 *   dense  - think blocks, tool calls, tokens and prefixes every few
 *            dozen bytes;
 * each fed in 1 KiB and 16-byte pieces. first_feed_held_bytes is what
 * the first feed of plain text held back (must be 0).
 */

#define BENCH_BYTES	(8u << 20)

static const char *const wf[] = { "Prefix: ", NULL };
static const char *const ep[] = { "Endpoint: ", NULL };

static struct clean_conf
bench_conf(void)
{
	struct clean_conf	 cc;

	memset(&cc, 0, sizeof(cc));
	cc.cc_remove_thinking = true;
	cc.cc_start_tag = "<think>";
	cc.cc_end_tag = "</think>";
	cc.cc_grace = 100;
	cc.cc_reasoning_tags = true;
	cc.cc_gptoss_channels = true;
	cc.cc_reasoning = CLEAN_REASONING_FIELD;
	cc.cc_tool_markers = true;
	cc.cc_special_tokens = clean_default_tokens;
	cc.cc_workflow_prefixes = wf;
	cc.cc_endpoint_prefixes = ep;
	cc.cc_timestamp_prefix = true;
	cc.cc_assistant_prefix = true;
	cc.cc_trim = true;
	return cc;
}

static void
fill(struct buf *b, const char *const *parts, size_t np)
{
	uint32_t	 r = 12345;

	while (b->b_len < BENCH_BYTES) {
		r = r * 1103515245 + 12345;
		buf_adds(b, parts[(r >> 16) % np]);
	}
}

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* MB/s for cleaning text in pieces of chunk bytes (a fresh cleaner per
 * 64 KiB of input, as outputs are that size or smaller). */
static double
mbps(const struct buf *text, size_t chunk)
{
	struct clean_conf	 cc = bench_conf();
	struct clean_out	 o;
	struct cleaner		*c = clean_new(&cc);
	size_t			 off, k, out = 0;
	double			 t0 = now(), dt;

	clean_out_init(&o);
	for (off = 0; off < text->b_len; off += k) {
		if (off > 0 && off % 65536 == 0) {
			clean_finish(c, &o);
			clean_free(c);
			c = clean_new(&cc);
		}
		k = text->b_len - off < chunk ? text->b_len - off : chunk;
		clean_feed(c, text->b_data + off, k, &o);
		out += o.co_text.b_len + o.co_reasoning.b_len;
		clean_out_reset(&o);
	}
	clean_finish(c, &o);
	clean_free(c);
	clean_out_free(&o);
	dt = now() - t0;
	if (out == 0)
		fprintf(stderr, "cleanbench: no output\n");
	return (double)text->b_len / 1e6 / dt;
}

/* Bytes held back after the first feed of plain text. */
static size_t
first_held(void)
{
	static const char	 in[] = "The quick brown fox jumps over the lazy "
	    "dog; 3 > 2 and 100% sure.";
	struct clean_conf	 cc = bench_conf();
	struct cleaner		*c = clean_new(&cc);
	struct clean_out	 o;
	size_t			 held;

	clean_out_init(&o);
	clean_feed(c, in, strlen(in), &o);
	held = strlen(in) - o.co_text.b_len;
	clean_out_free(&o);
	clean_free(c);
	return held;
}

int
main(void)
{
	static const char *const plain[] = { "The ", "model ", "answers ",
	    "questions, ", "with care. ", "Numbers 1234 ", "and (brackets) ",
	    "as well.\n", "Paragraphs end here.\n\n", "a > b ", "x = y; " };
	static const char *const dense[] = { "<think>let me see</think>",
	    "<thinking>plan</thinking>", "Assistant: ", "<|im_end|>",
	    "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>",
	    "<function=g>{}</function>", "text ", "< not a tag ",
	    "<|channel|>analysis<|message|>hm<|end|>", "</s>", "\n" };
	struct buf	 p = BUF_INIT, d = BUF_INIT;

	log_init(LOG_LVL_ERR);
	fill(&p, plain, sizeof(plain) / sizeof(plain[0]));
	fill(&d, dense, sizeof(dense) / sizeof(dense[0]));
	printf("{\"bench\":\"clean\",\"bytes\":%zu,\"plain_1k_mbps\":%.1f,"
	    "\"plain_16b_mbps\":%.1f,\"dense_1k_mbps\":%.1f,"
	    "\"dense_16b_mbps\":%.1f,\"first_feed_held_bytes\":%zu}\n",
	    p.b_len, mbps(&p, 1024), mbps(&p, 16), mbps(&d, 1024),
	    mbps(&d, 16), first_held());
	buf_free(&p);
	buf_free(&d);
	return 0;
}
