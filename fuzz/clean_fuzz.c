/* clean_fuzz.c - libFuzzer harness for the response cleaner: no crash, and streamed output equals whole output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../worker/clean/clean.h"
#include "../worker/clean/filter.h"
#include "common.h"

/*
 * Input: 4 header bytes, then the LLM text.
 *   h[0] bits: remove thinking, closing-only, reasoning tags, gpt-oss
 *              channels, tool markers, special tokens, trim, timestamps
 *   h[1]: bits 0-1 reasoning output (3 = drop), bit 2 "Assistant:",
 *         bit 3 workflow prefixes, bit 4 endpoint prefixes, bits 5-7
 *         configured tags / filter chain choice
 *   h[2]: grace period (index into graces[]) and filter chain
 *   h[3]: seed of the random chunking
 * Every input is cleaned whole, in 1-byte pieces and in random pieces;
 * the three results must be identical.
 */

#define NCHAINS	6

static struct filter_chain	*chains[NCHAINS];

static const char *const chain_json[NCHAINS] = {
	"null",
	"[{\"type\": \"redactKeywords\", \"keywords\": [\"secret\", \"se\", "
	    "\"<think>\"]}]",
	"[{\"type\": \"maxLength\", \"maxChars\": 40}]",
	"[{\"type\": \"redactRegex\", \"pattern\": \"[0-9]+|a*\"}]",
	"[{\"type\": \"appendFooter\", \"text\": \" end\"}, {\"type\": "
	    "\"redactKeywords\", \"keywords\": \"end\"}, {\"type\": "
	    "\"maxLength\", \"maxChars\": 0}]",
	"[{\"type\": \"redactRegex\", \"pattern\": \"^x|y$\", \"order\": 1}, "
	    "{\"type\": \"maxLength\", \"maxChars\": 7, \"order\": 2}]",
};

static const char *const wf_pfx[] = { "WF: ", "Assi", "", NULL };
static const char *const ep_pfx[] = { "  EP:  ", " ", NULL };
static const char *const tags[][2] = {
	{ "<think>", "</think>" },
	{ "[[T]]", "[[/T]]" },
	{ "<|channel|>analysis<|message|>",
	    "<|start|>assistant<|channel|>final<|message|>" },
	{ "<think>", "" },
};
static const long graces[] = { 0, 1, 2, 5, 10, 50, 100, -1 };


int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN], text[512];
	size_t		 i;

	log_init(LOG_LVL_ERR);
	for (i = 0; i < NCHAINS; i++) {
		snprintf(text, sizeof(text), "{\"f\": %s}", chain_json[i]);
		if (jfile_parse("fuzz", text, strlen(text), &jf, err) == -1 ||
		    filter_chain_load(&jf, jf.jf_root, "f", &chains[i],
		    err) == -1) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
		jfile_free(&jf);
	}
	return 0;
}

static struct clean_conf
fuzz_conf(const uint8_t *h)
{
	struct clean_conf	 cc;

	memset(&cc, 0, sizeof(cc));
	cc.cc_remove_thinking = h[0] & 1;
	cc.cc_only_closing = h[0] & 2;
	cc.cc_reasoning_tags = h[0] & 4;
	cc.cc_gptoss_channels = h[0] & 8;
	cc.cc_tool_markers = h[0] & 16;
	cc.cc_special_tokens = h[0] & 32 ? clean_default_tokens : NULL;
	cc.cc_trim = h[0] & 64;
	cc.cc_timestamp_prefix = h[0] & 128;
	cc.cc_reasoning = (h[1] & 3) == 3 ? CLEAN_REASONING_DROP :
	    (enum clean_reasoning)(h[1] & 3);
	cc.cc_assistant_prefix = h[1] & 4;
	cc.cc_workflow_prefixes = h[1] & 8 ? wf_pfx : NULL;
	cc.cc_endpoint_prefixes = h[1] & 16 ? ep_pfx : NULL;
	cc.cc_start_tag = tags[(h[1] >> 5) & 3][0];
	cc.cc_end_tag = tags[(h[1] >> 5) & 3][1];
	cc.cc_grace = graces[h[2] & 7];
	cc.cc_filters = chains[(h[2] >> 3) % NCHAINS];
	return cc;
}

/* chunk: 0 whole, 1 bytes, else random pieces from seed. */
static void
clean_run(const struct clean_conf *cc, const char *p, size_t n, int chunk,
    uint32_t seed, struct clean_out *o)
{
	struct cleaner	*c = clean_new(cc);
	size_t		 off = 0, k;

	clean_seed_ids(c, 1);
	clean_out_init(o);
	while (off < n) {
		seed = seed * 1103515245 + 12345;
		k = chunk == 0 ? n : chunk == 1 ? 1 : 1 + (seed >> 16) % 13;
		if (k > n - off)
			k = n - off;
		clean_feed(c, p + off, k, o);
		off += k;
	}
	clean_finish(c, o);
	clean_free(c);
}

static int
buf_cmp(const struct buf *a, const struct buf *b)
{
	if (a->b_len != b->b_len)
		return 1;
	return a->b_len > 0 && memcmp(a->b_data, b->b_data, a->b_len) != 0;
}

static void
same(const struct clean_out *a, const struct clean_out *b, const char *what)
{
	if (buf_cmp(&a->co_text, &b->co_text) ||
	    buf_cmp(&a->co_reasoning, &b->co_reasoning) ||
	    buf_cmp(&a->co_tool_calls, &b->co_tool_calls) ||
	    a->co_stop != b->co_stop) {
		fprintf(stderr, "%s differs from whole:\n  text '%s' / '%s'\n"
		    "  reasoning '%s' / '%s'\n  calls '%s' / '%s'\n", what,
		    a->co_text.b_data, b->co_text.b_data,
		    a->co_reasoning.b_data, b->co_reasoning.b_data,
		    a->co_tool_calls.b_data, b->co_tool_calls.b_data);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct clean_conf	 cc;
	struct clean_out	 whole, o;
	const char		*text;
	size_t			 n;

	if (size < 4)
		return 0;
	cc = fuzz_conf(data);
	text = (const char *)data + 4;
	n = size - 4;
	clean_run(&cc, text, n, 0, 0, &whole);
	clean_run(&cc, text, n, 1, 0, &o);
	same(&whole, &o, "1-byte pieces");
	clean_out_free(&o);
	clean_run(&cc, text, n, 2, data[3], &o);
	same(&whole, &o, "random pieces");
	clean_out_free(&o);
	clean_out_free(&whole);
	return 0;
}
