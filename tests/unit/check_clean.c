/* check_clean.c - tests for the streaming response cleaner (worker/clean*.c), its filters and its settings. */
#include <sys/stat.h>

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../common/json.h"
#include "../../common/xmem.h"
#include "../../worker/clean/clean.h"
#include "../../worker/clean/clean_conf.h"
#include "../../worker/clean/clean_int.h"
#include "../../worker/clean/filter.h"
#include "../testmain.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define S(b)		((b).b_data != NULL ? (b).b_data : "")

/* ---- helpers ------------------------------------------------------------ */

/* Nothing on: WilmerAI with every flag off (lstrip still applies). */
static struct clean_conf
cc_plain(void)
{
	struct clean_conf	 cc;

	memset(&cc, 0, sizeof(cc));
	cc.cc_start_tag = cc.cc_end_tag = "";
	cc.cc_grace = 100;
	return cc;
}

/* Spec 9's T50. */
static struct clean_conf
cc_t50(void)
{
	struct clean_conf	 cc = cc_plain();

	cc.cc_remove_thinking = true;
	cc.cc_start_tag = "<think>";
	cc.cc_end_tag = "</think>";
	cc.cc_grace = 50;
	return cc;
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Clean in[0..n) into out (one clean_out for the whole run, so it holds
 * the concatenation). chunk 0: one feed; SIZE_MAX: random pieces drawn
 * from seed; else pieces of that size.
 */
static void
run(const struct clean_conf *cc, const char *in, size_t n, size_t chunk,
    uint64_t seed, struct clean_out *out)
{
	struct cleaner	*c = clean_new(cc);
	size_t		 off = 0, k;

	ck_assert_ptr_nonnull(c);
	clean_seed_ids(c, 7);
	clean_out_init(out);
	seed |= 1;
	while (off < n) {
		if (chunk == 0)
			k = n;
		else if (chunk == SIZE_MAX)
			k = 1 + rnd(&seed) % (rnd(&seed) % 4 == 0 ? 64 : 9);
		else
			k = chunk;
		if (k > n - off)
			k = n - off;
		clean_feed(c, in + off, k, out);
		off += k;
	}
	clean_finish(c, out);
	clean_free(c);
}

static void
same_out(const struct clean_out *a, const struct clean_out *b,
    const char *what)
{
	ck_assert_msg(a->co_text.b_len == b->co_text.b_len &&
	    memcmp(S(a->co_text), S(b->co_text), a->co_text.b_len) == 0,
	    "%s: text '%s' != '%s'", what, S(a->co_text), S(b->co_text));
	ck_assert_msg(strcmp(S(a->co_reasoning), S(b->co_reasoning)) == 0,
	    "%s: reasoning '%s' != '%s'", what, S(a->co_reasoning),
	    S(b->co_reasoning));
	ck_assert_msg(strcmp(S(a->co_tool_calls), S(b->co_tool_calls)) == 0,
	    "%s: calls '%s' != '%s'", what, S(a->co_tool_calls),
	    S(b->co_tool_calls));
	ck_assert_msg(a->co_stop == b->co_stop, "%s: stop differs", what);
}

/*
 * Clean whole, then in 1-, 2- and 7-byte pieces and three random
 * chunkings: all must give the same; the whole result goes to *whole
 * (caller frees).
 */
static void
run_all(const struct clean_conf *cc, const char *in, size_t n,
    struct clean_out *whole)
{
	static const size_t	 sizes[] = { 1, 2, 7 };
	struct clean_out	 o;
	char			 what[64];
	size_t			 i;

	run(cc, in, n, 0, 0, whole);
	for (i = 0; i < NELEM(sizes) + 3; i++) {
		if (i < NELEM(sizes)) {
			run(cc, in, n, sizes[i], 0, &o);
			snprintf(what, sizeof(what), "%zu-byte pieces",
			    sizes[i]);
		} else {
			run(cc, in, n, SIZE_MAX, 1000 + i, &o);
			snprintf(what, sizeof(what), "random pieces %zu", i);
		}
		same_out(whole, &o, what);
		clean_out_free(&o);
	}
}

/* The text cleaned every way must be expect. */
static void
expect_text(const char *label, const struct clean_conf *cc, const char *in,
    const char *expect)
{
	struct clean_out	 o;

	run_all(cc, in, strlen(in), &o);
	ck_assert_msg(strcmp(S(o.co_text), expect) == 0,
	    "%s: got '%s', want '%s'", label, S(o.co_text), expect);
	clean_out_free(&o);
}

/* The same with Sluice's own stages (tool markers, special tokens) on
 * as well: WilmerAI's cases must not notice them. */
static void
spec(int no, const struct clean_conf *base, const char *in,
    const char *expect)
{
	struct clean_conf	 cc = *base;
	char			 label[64];

	snprintf(label, sizeof(label), "case %d", no);
	expect_text(label, &cc, in, expect);
	cc.cc_tool_markers = true;
	cc.cc_special_tokens = clean_default_tokens;
	snprintf(label, sizeof(label), "case %d (+markers, tokens)", no);
	expect_text(label, &cc, in, expect);
}

/* Feed the given pieces one by one; events[] are the non-empty outputs
 * of each feed and of the finish, in order, "|"-joined into ev. */
static void
events(const struct clean_conf *cc, const char *const *pieces, size_t np,
    struct buf *ev, struct buf *full)
{
	struct cleaner		*c = clean_new(cc);
	struct clean_out	 o;
	size_t			 i;

	clean_out_init(&o);
	buf_init(ev);
	buf_init(full);
	for (i = 0; i <= np; i++) {
		clean_out_reset(&o);
		if (i < np)
			clean_feed(c, pieces[i], strlen(pieces[i]), &o);
		else
			clean_finish(c, &o);
		if (o.co_text.b_len == 0)
			continue;
		if (ev->b_len > 0)
			buf_addc(ev, '|');
		buf_add(ev, o.co_text.b_data, o.co_text.b_len);
		buf_add(full, o.co_text.b_data, o.co_text.b_len);
	}
	clean_out_free(&o);
	clean_free(c);
}

static void
expect_events(int no, const struct clean_conf *cc, const char *const *pieces,
    size_t np, const char *want_ev, const char *want_full)
{
	struct buf	 ev, full;

	events(cc, pieces, np, &ev, &full);
	if (want_ev != NULL)
		ck_assert_msg(strcmp(S(ev), want_ev) == 0,
		    "case %d: events '%s', want '%s'", no, S(ev), want_ev);
	ck_assert_msg(strcmp(S(full), want_full) == 0,
	    "case %d: text '%s', want '%s'", no, S(full), want_full);
	buf_free(&ev);
	buf_free(&full);
}

static char *
rep(char ch, size_t n, const char *tail)
{
	char	*s = xmalloc(n + strlen(tail) + 1);

	memset(s, ch, n);
	strcpy(s + n, tail);
	return s;
}

/* ---- spec 9, cases 1-15: think removal --------------------------------- */

START_TEST(think_standard)
{
	struct clean_conf	 cc = cc_t50();

	spec(1, &cc, "Prefix. <think>This should be removed.</think> Suffix.",
	    "Prefix.  Suffix.");
	spec(2, &cc, "Hello <THINK>stuff</think> world.", "Hello  world.");
	spec(3, &cc, "A<think>B</think>C", "AC");
	spec(6, &cc, "<think>a</think>mid<think>b</think>end",
	    "mid<think>b</think>end");
	spec(7, &cc, "<think>a</think><think>b</think>end",
	    "<think>b</think>end");
	spec(8, &cc, "<think>a<think>b</think>after", "after");
	spec(9, &cc, "text with a stray </think> close tag",
	    "text with a stray </think> close tag");
	spec(10, &cc, "Here is <think>some unterminated text",
	    "Here is <think>some unterminated text");
	/* WilmerAI's parity battery */
	spec(101, &cc, "<THINK>Reasoning</ThInK>Answer", "Answer");
	spec(102, &cc, "<think>only</think>", "");
	spec(103, &cc, "<think>", "<think>");
	spec(104, &cc, "Intro <think>never closed", "Intro <think>never closed");
	spec(105, &cc, "", "");
	spec(106, &cc, " \n\t ", "");
}
END_TEST

START_TEST(think_grace)
{
	struct clean_conf	 cc = cc_t50();
	char			*a, *b;

	/* case 4: the tag starts at 51 > 50; the leading spaces go to
	 * the (always applied) lstrip, the block stays */
	a = rep(' ', 51, "<think>This should NOT be removed.</think>");
	spec(4, &cc, a, "<think>This should NOT be removed.</think>");
	free(a);
	a = rep('x', 51, "<think>block</think>tail");
	spec(4, &cc, a, a);
	free(a);
	/* case 5: starts at 48, ends past the window: removed */
	a = rep('x', 48, "<think>hidden</think>visible");
	b = rep('x', 48, "visible");
	spec(5, &cc, a, b);
	free(a);
	free(b);
	a = rep('x', 50, "<think>h</think>v");
	b = rep('x', 50, "v");
	spec(5, &cc, a, b);
	free(a);
	free(b);
	a = rep('x', 48, "<think>never closed");
	spec(5, &cc, a, a);
	free(a);
	/* grace counts code points, not bytes */
	a = xstrdup("\xc3\xa9\xc3\xa9\xc3\xa9<think>h</think>v");
	cc.cc_grace = 3;
	spec(5, &cc, a, "\xc3\xa9\xc3\xa9\xc3\xa9v");
	cc.cc_grace = 2;
	spec(5, &cc, a, a);
	free(a);
	cc.cc_grace = -1;
	spec(5, &cc, "<think>h</think>v", "<think>h</think>v");
}
END_TEST

START_TEST(think_closing_only)
{
	struct clean_conf	 cc = cc_t50();

	cc.cc_only_closing = true;
	spec(11, &cc, "This text should be removed.</think>This should be kept.",
	    "This should be kept.");
	spec(12, &cc, "j1</think>mid</think>end", "mid</think>end");
	spec(12, &cc, "case </THINK>Kept", "Kept");
	spec(13, &cc, "Junk text without a tag", "Junk text without a tag");
	spec(13, &cc, "</think>starts with close", "starts with close");
	spec(13, &cc, "", "");
}
END_TEST

static const char case14[] = "<|channel|>analysis<|message|>The user just "
    "spoke to me. I'll say hi.<|start|>assistant<|channel|>final<|message|>"
    "Hello there!";

static struct clean_conf
cc_complex(void)
{
	struct clean_conf	 cc = cc_t50();

	cc.cc_start_tag = "<|channel|>analysis<|message|>";
	cc.cc_end_tag = "<|start|>assistant<|channel|>final<|message|>";
	cc.cc_grace = 100;
	return cc;
}

START_TEST(think_complex_tags)
{
	struct clean_conf	 cc = cc_complex();
	struct clean_out	 o;
	char			*a, *b;

	spec(14, &cc, case14, "Hello there!");
	run(&cc, case14, strlen(case14), 5, 0, &o);
	ck_assert_str_eq(S(o.co_text), "Hello there!");
	clean_out_free(&o);
	a = rep('x', 95, "<|channel|>analysis<|message|>hidden<|start|>"
	    "assistant<|channel|>final<|message|>done");
	b = rep('x', 95, "done");
	spec(14, &cc, a, b);
	free(a);
	free(b);
}
END_TEST

/* case 15: one delta whose tag is past the window comes back whole from
 * that feed; the finish adds nothing. */
START_TEST(think_single_delta)
{
	struct clean_conf	 cc = cc_t50();
	struct cleaner		*c = clean_new(&cc);
	struct clean_out	 o;
	char			*a = rep(' ', 51, "<think>x</think>");

	clean_out_init(&o);
	clean_feed(c, a, strlen(a), &o);
	ck_assert_str_eq(S(o.co_text), "<think>x</think>");
	clean_out_reset(&o);
	clean_finish(c, &o);
	ck_assert_str_eq(S(o.co_text), "");
	clean_out_free(&o);
	clean_free(c);
	free(a);
}
END_TEST

/* ---- spec 9, cases 16-22: post-processing ------------------------------ */

START_TEST(post_full_order)
{
	static const char *const wf[] = { "WorkflowPrefix: ", NULL };
	static const char *const ep[] = { "EndpointPrefix: ", NULL };
	struct clean_conf	 cc = cc_t50();

	cc.cc_workflow_prefixes = wf;
	cc.cc_endpoint_prefixes = ep;
	cc.cc_timestamp_prefix = true;
	cc.cc_assistant_prefix = true;
	cc.cc_trim = true;
	spec(16, &cc, " <think>foo</think> WorkflowPrefix: EndpointPrefix: "
	    "[Sent less than a minute ago] Assistant: Final Text \n",
	    "Final Text");
	/* each step once, in order: a second workflow prefix stays */
	spec(16, &cc, "WorkflowPrefix: WorkflowPrefix: x",
	    "WorkflowPrefix: x");
	/* a later step's text does not reopen an earlier one */
	spec(16, &cc, "Assistant: WorkflowPrefix: x", "WorkflowPrefix: x");
}
END_TEST

START_TEST(post_endpoint_prefixes)
{
	static const char *const e17[] = { "analysis<|message|>", NULL };
	static const char *const e20[] = { "  PrefixToStrip  ", NULL };
	static const char *const e30[] = { "  EP:  ", NULL };
	static const char *const e0[] = { "", "   ", "Real: ", NULL };
	struct clean_conf	 cc = cc_plain();

	cc.cc_endpoint_prefixes = e17;
	spec(17, &cc, "analysis<|message|>Hi how are you?", "Hi how are you?");
	cc.cc_assistant_prefix = true;
	spec(17, &cc, "analysis<|message|> Assistant: Hi how are you?",
	    "Hi how are you?");
	cc = cc_complex();
	cc.cc_assistant_prefix = true;
	spec(18, &cc, "<|channel|>analysis<|message|>The user just spoke to "
	    "me. I'll say hi.<|start|>assistant<|channel|>final<|message|> "
	    "Assistant: Hello there!", "Hello there!");
	cc = cc_plain();
	cc.cc_endpoint_prefixes = e20;
	spec(20, &cc, " PrefixToStrip This is the content.",
	    "This is the content.");
	cc.cc_endpoint_prefixes = e30;
	spec(20, &cc, "EP: hello", "hello");
	/* entries empty once stripped are skipped, not a match */
	cc.cc_endpoint_prefixes = e0;
	spec(20, &cc, "Real: x", "x");
}
END_TEST

START_TEST(post_workflow_ts_assistant)
{
	static const char *const w19[] = { "First: ", "Second: ", NULL };
	static const char *const wlong[] = { "Prefix: Long", "Pre", NULL };
	struct clean_conf	 cc = cc_plain();

	cc.cc_workflow_prefixes = w19;
	spec(19, &cc, "Second: This is the content.", "This is the content.");
	/* first match in list order; an earlier one still possible waits */
	cc.cc_workflow_prefixes = wlong;
	spec(19, &cc, "Prefix: Long text", "text");
	spec(19, &cc, "Prefix: Lo", "fix: Lo");
	cc = cc_plain();
	cc.cc_timestamp_prefix = true;
	spec(21, &cc, "[Sent less than a minute ago] This has a space.",
	    "This has a space.");
	spec(21, &cc, "[Sent less than a minute ago]This has no space.",
	    "This has no space.");
	cc = cc_plain();
	cc.cc_assistant_prefix = true;
	spec(21, &cc, "Assistant: Some text", "Some text");
	spec(21, &cc, "  Assistant:  Hi there", "Hi there");
	spec(21, &cc, "Assistant:", "");
	spec(21, &cc, "Assistan", "Assistan");
	cc.cc_assistant_prefix = false;
	spec(21, &cc, "Assistant: Some text", "Assistant: Some text");
}
END_TEST

START_TEST(post_trim)
{
	struct clean_conf	 cc = cc_plain();
	static const char	 in[] =
	    " \n  Some content surrounded by whitespace. \t\n ";

	cc.cc_trim = true;
	spec(22, &cc, in, "Some content surrounded by whitespace.");
	/* Python's whitespace: NBSP, ideographic space, U+2028 */
	spec(22, &cc, "\xc2\xa0\xe3\x80\x80 x \xe2\x80\xa8\xc2\xa0", "x");
	spec(22, &cc, "a \xe2\x80\x99", "a \xe2\x80\x99");
	cc.cc_trim = false;
	spec(22, &cc, in, "Some content surrounded by whitespace. \t\n ");
	spec(22, &cc, "\xe3\x80\x80x", "x");
}
END_TEST

/* ---- spec 9, cases 23-35: the stream handler's text ---------------------
 * (finish_reason, the final chunk and [DONE] are the gateway's.) The
 * cleaner sends each byte once it is settled, so some events come out
 * earlier than WilmerAI's (case 31); the text is the same. */

START_TEST(stream_plain_and_prefix)
{
	static const char *const p23[] = { "Hello", " world", "!" };
	static const char *const p24[] = { "Prefix: ", "Hel", "lo", " world" };
	static const char *const p25[] = { "Prefix: Short" };
	static const char *const p26[] = { "Zebra", " one", " two" };
	static const char *const p27[] = { "   ", "Prefix: hi" };
	static const char *const wf[] = { "Prefix: ", NULL };
	struct clean_conf	 cc = cc_plain();

	expect_events(23, &cc, p23, 3, "Hello| world|!", "Hello world!");
	cc.cc_workflow_prefixes = wf;
	expect_events(24, &cc, p24, 4, "Hel|lo| world", "Hello world");
	expect_events(25, &cc, p25, 1, "Short", "Short");
	expect_events(26, &cc, p26, 3, "Zebra| one| two", "Zebra one two");
	expect_events(27, &cc, p27, 2, "hi", "hi");
}
END_TEST

START_TEST(stream_trim_ts_strings)
{
	static const char *const p28[] = { " \n", " Hello", " world" };
	static const char *const p29[] = { "[Sent less", " than a minute",
	    " ago] Hello", " world" };
	static const char *const p30[] = { "WF: EP: hi" };
	static const char *const wf[] = { "WF: ", NULL };
	static const char *const ep[] = { "  EP:  ", NULL };
	struct clean_conf	 cc = cc_plain();

	cc.cc_trim = true;
	expect_events(28, &cc, p28, 3, "Hello| world", "Hello world");
	cc = cc_plain();
	cc.cc_timestamp_prefix = true;
	expect_events(29, &cc, p29, 4, "Hello| world", "Hello world");
	cc = cc_plain();
	cc.cc_workflow_prefixes = wf;
	cc.cc_endpoint_prefixes = ep;
	expect_events(30, &cc, p30, 1, "hi", "hi");
}
END_TEST

START_TEST(stream_think_and_prefix)
{
	static const char *const p31[] = { "<thi", "nk>secret plan</thi",
	    "nk>Prefix: Hel", "lo", "" };
	static const char *const p32[] = { "<think>never closed" };
	static const char *const p34[] = { "hi", " there" };
	static const char *const wf[] = { "Prefix: ", NULL };
	struct clean_conf	 cc = cc_t50();
	struct buf		 ev, full;

	cc.cc_workflow_prefixes = wf;
	events(&cc, p31, 5, &ev, &full);
	ck_assert_str_eq(S(full), "Hello");
	ck_assert_ptr_null(strstr(S(ev), "secret"));
	ck_assert_str_eq(S(ev), "Hel|lo");
	buf_free(&ev);
	buf_free(&full);
	cc = cc_t50();
	expect_events(32, &cc, p32, 1, "<think>never closed",
	    "<think>never closed");
	/* 33 (group-chat generation prompt) is the responder's job. */
	cc = cc_plain();
	expect_events(34, &cc, p34, 2, "hi| there", "hi there");
	expect_events(35, &cc, NULL, 0, "", "");
	cc.cc_trim = true;
	cc.cc_tool_markers = true;
	cc.cc_special_tokens = clean_default_tokens;
	expect_events(35, &cc, NULL, 0, "", "");
}
END_TEST

/* Plain text that cannot start any marker is sent in the same feed. */
START_TEST(stream_no_delay)
{
	static const char *const wf[] = { "Prefix: ", NULL };
	struct clean_conf	 cc = cc_t50();
	struct cleaner		*c;
	struct clean_out	 o;
	static const char	 txt[] = "Plain text, 100% ordinary; a > b.";

	cc.cc_reasoning_tags = cc.cc_gptoss_channels = true;
	cc.cc_tool_markers = true;
	cc.cc_special_tokens = clean_default_tokens;
	cc.cc_workflow_prefixes = wf;
	cc.cc_assistant_prefix = true;
	c = clean_new(&cc);
	clean_out_init(&o);
	clean_feed(c, txt, strlen(txt), &o);
	ck_assert_str_eq(S(o.co_text), txt);
	clean_out_reset(&o);
	clean_feed(c, " and <", 6, &o);
	ck_assert_str_eq(S(o.co_text), " and ");
	clean_out_reset(&o);
	clean_feed(c, "b", 1, &o);
	ck_assert_str_eq(S(o.co_text), "<b");
	clean_out_free(&o);
	clean_free(c);
}
END_TEST

/* ---- reasoning: common tags, gpt-oss, output modes ---------------------- */

static void
expect_reasoning(const struct clean_conf *cc, const char *in,
    const char *text, const char *reasoning)
{
	struct clean_out	 o;

	run_all(cc, in, strlen(in), &o);
	ck_assert_msg(strcmp(S(o.co_text), text) == 0, "'%s': text '%s', "
	    "want '%s'", in, S(o.co_text), text);
	ck_assert_msg(strcmp(S(o.co_reasoning), reasoning) == 0, "'%s': "
	    "reasoning '%s', want '%s'", in, S(o.co_reasoning), reasoning);
	clean_out_free(&o);
}

START_TEST(reasoning_tags)
{
	struct clean_conf	 cc = cc_plain();

	cc.cc_reasoning_tags = true;
	expect_reasoning(&cc, "<thinking>plan</thinking>Answer", "Answer", "");
	expect_reasoning(&cc, "A<think>1</think>B<REASONING>2</reasoning>C"
	    "<reflection>3</reflection>D", "ABCD", "");
	expect_reasoning(&cc, "x <think>a</thinking> y", "x <think>a</thinking> y",
	    "");
	/* with WilmerAI's tags too: the first block is theirs, the rest ours */
	cc.cc_remove_thinking = true;
	cc.cc_start_tag = "<think>";
	cc.cc_end_tag = "</think>";
	expect_reasoning(&cc, "<think>a</think>mid<think>b</think>end", "midend",
	    "");
	cc.cc_reasoning = CLEAN_REASONING_FIELD;
	expect_reasoning(&cc, "<think>a</think>mid<think>b</think>end", "midend",
	    "ab");
	expect_reasoning(&cc, "Hi <thinking>cut short", "Hi ", "cut short");
	cc.cc_reasoning = CLEAN_REASONING_INLINE;
	expect_reasoning(&cc, "<think>a</think>mid", "<think>a</think>mid", "");
	/* drop: an unterminated common block goes back as text too */
	cc.cc_reasoning = CLEAN_REASONING_DROP;
	expect_reasoning(&cc, "ok <thinking>cut", "ok <thinking>cut", "");
}
END_TEST

START_TEST(reasoning_field_streams)
{
	struct clean_conf	 cc = cc_t50();
	struct cleaner		*c;
	struct clean_out	 o;

	cc.cc_reasoning = CLEAN_REASONING_FIELD;
	c = clean_new(&cc);
	clean_out_init(&o);
	clean_feed(c, "<think>Let me", 13, &o);
	ck_assert_str_eq(S(o.co_reasoning), "Let me");
	clean_feed(c, " see</th", 8, &o);
	ck_assert_str_eq(S(o.co_reasoning), "Let me see");
	clean_feed(c, "ink>Yes.", 8, &o);
	ck_assert_str_eq(S(o.co_reasoning), "Let me see");
	ck_assert_str_eq(S(o.co_text), "Yes.");
	clean_finish(c, &o);
	clean_out_free(&o);
	clean_free(c);
	/* closing-only: held until the tag, text without one */
	cc.cc_only_closing = true;
	expect_reasoning(&cc, "plan</think>Answer", "Answer", "plan");
	expect_reasoning(&cc, "no tag", "no tag", "");
}
END_TEST

START_TEST(reasoning_gptoss)
{
	struct clean_conf	 cc = cc_plain();
	static const char	 in[] = "<|channel|>analysis<|message|>We should "
	    "greet.<|end|><|start|>assistant<|channel|>final<|message|>Hi!";

	cc.cc_gptoss_channels = true;
	expect_reasoning(&cc, in, "Hi!", "");
	expect_reasoning(&cc, case14, "Hello there!", "");
	cc.cc_reasoning = CLEAN_REASONING_FIELD;
	expect_reasoning(&cc, in, "Hi!", "We should greet.");
	expect_reasoning(&cc, "<|channel|>final<|message|>Only final.",
	    "Only final.", "");
	/* with <|end|> also a special token: outside a block it goes */
	cc.cc_special_tokens = clean_default_tokens;
	expect_reasoning(&cc, "<|channel|>analysis<|message|>r<|end|>a<|end|>",
	    "a", "r");
}
END_TEST

/* ---- special tokens ---------------------------------------------------- */

START_TEST(special_tokens)
{
	static const char *const mine[] = { "<|x|>", "<|xy|>", "[END]", NULL };
	struct clean_conf	 cc = cc_plain();

	cc.cc_special_tokens = clean_default_tokens;
	expect_text("tokens", &cc, "Hello<|im_end|>", "Hello");
	expect_text("tokens", &cc, "<|im_start|>assistant\nHi<|eot_id|></s>",
	    "assistant\nHi");
	expect_text("tokens", &cc, "a<|im_en", "a<|im_en");
	expect_text("tokens", &cc, "<s>strike</s> out", "<s>strike out");
	expect_text("tokens", &cc, "x<|end|>y<|endoftext|>z", "xyz");
	cc.cc_special_tokens = mine;
	expect_text("tokens", &cc, "a<|x|>b<|xy|>c[END]<|im_end|>",
	    "abc<|im_end|>");
	cc.cc_special_tokens = NULL;
	expect_text("tokens", &cc, "Hello<|im_end|>", "Hello<|im_end|>");
}
END_TEST

/* ---- tool-call markers -------------------------------------------------- */

/* Clean in every way; the text must be text and the calls, with ids
 * checked and then blanked to "call_X", must be calls. */
static void
expect_calls(const struct clean_conf *cc, const char *in, const char *text,
    const char *calls)
{
	struct clean_out	 o;
	struct buf		 b = BUF_INIT;
	const char		*p, *q;
	size_t			 i;

	run_all(cc, in, strlen(in), &o);
	ck_assert_msg(strcmp(S(o.co_text), text) == 0, "'%s': text '%s', "
	    "want '%s'", in, S(o.co_text), text);
	for (p = S(o.co_tool_calls); (q = strstr(p, "\"id\":\"call_")) != NULL;
	    p = q + 35) {
		buf_add(&b, p, (size_t)(q - p));
		buf_adds(&b, "\"id\":\"call_X\"");
		for (i = 0; i < 24; i++)
			ck_assert_msg(strchr("0123456789abcdef", q[11 + i]) !=
			    NULL && q[11 + i] != '\0', "bad id in %s", q);
		ck_assert_int_eq(q[35], '"');
		q++;
	}
	buf_adds(&b, p);
	ck_assert_msg(strcmp(S(b), calls) == 0, "'%s': calls\n  %s\nwant\n  %s",
	    in, S(b), calls);
	buf_free(&b);
	clean_out_free(&o);
}

#define CALL(i, name, args) "{\"index\":" #i ",\"id\":\"call_X\",\"type\":" \
	"\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":\"" \
	args "\"}}"

static struct clean_conf
cc_tools(void)
{
	struct clean_conf	 cc = cc_plain();

	cc.cc_tool_markers = true;
	cc.cc_special_tokens = clean_default_tokens;
	return cc;
}

START_TEST(tools_hermes)
{
	struct clean_conf	 cc = cc_tools();

	expect_calls(&cc, "Let me check.<tool_call>\n{\"name\": \"get_weather\", "
	    "\"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>",
	    "Let me check.", "[" CALL(0, "get_weather",
	    "{\\\"city\\\":\\\"Paris\\\",\\\"days\\\":2}") "]");
	/* two calls, the second unclosed at the end of the output */
	expect_calls(&cc, "<tool_call>{\"name\":\"a\",\"arguments\":{}}"
	    "</tool_call>\n<tool_call>{\"name\":\"b\",\"parameters\":{\"x\":"
	    "[1,2.5,null]}}", "", "[" CALL(0, "a", "{}") "," CALL(1, "b",
	    "{\\\"x\\\":[1,2.5,null]}") "]");
	/* arguments given as a JSON string; a list of calls */
	expect_calls(&cc, "<tool_call>[{\"name\":\"a\",\"arguments\":"
	    "\"{\\\"k\\\": 1}\"},{\"function\":{\"name\":\"b\"}}]</tool_call>ok",
	    "ok", "[" CALL(0, "a", "{\\\"k\\\":1}") "," CALL(1, "b", "{}") "]");
	/* cut short: the name is found, the arguments kept as written */
	expect_calls(&cc, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1",
	    "", "[" CALL(0, "f", "{\\\"a\\\": 1") "]");
	/* no name: not a call, the text stays */
	expect_calls(&cc, "see <tool_call>hello</tool_call> here",
	    "see <tool_call>hello</tool_call> here", "");
	expect_calls(&cc, "trailing <tool_call>", "trailing <tool_call>", "");
	cc.cc_tool_markers = false;
	expect_calls(&cc, "<tool_call>{\"name\":\"a\"}</tool_call>",
	    "<tool_call>{\"name\":\"a\"}</tool_call>", "");
}
END_TEST

START_TEST(tools_llama_function)
{
	struct clean_conf	 cc = cc_tools();

	expect_calls(&cc, "<function=get_time>{\"tz\": \"UTC\"}</function>",
	    "", "[" CALL(0, "get_time", "{\\\"tz\\\":\\\"UTC\\\"}") "]");
	expect_calls(&cc, "A<function=f.g-h></function>B", "AB",
	    "[" CALL(0, "f.g-h", "{}") "]");
	/* invalid JSON arguments are kept as they are */
	expect_calls(&cc, "<function=f>{not json}</function>", "",
	    "[" CALL(0, "f", "{not json}") "]");
	expect_calls(&cc, "<function=f>{\"a\":1}", "",
	    "[" CALL(0, "f", "{\\\"a\\\":1}") "]");
	/* not a name: text */
	expect_calls(&cc, "x <function=a b>{}</function>",
	    "x <function=a b>{}</function>", "");
	expect_calls(&cc, "<function=>x", "<function=>x", "");
	expect_calls(&cc, "<function=ab", "<function=ab", "");
}
END_TEST

START_TEST(tools_python_tag)
{
	struct clean_conf	 cc = cc_tools();

	expect_calls(&cc, "<|python_tag|>brave_search.call(query=\"weather in "
	    "SF\", count=3)<|eom_id|>", "", "[" CALL(0, "brave_search",
	    "{\\\"query\\\":\\\"weather in SF\\\",\\\"count\\\":3}") "]");
	expect_calls(&cc, "<|python_tag|>wolfram_alpha.call('2+2', x=[1, "
	    "'a\\n', True, None], y={'k': 2.5}, z=a + b)", "",
	    "[" CALL(0, "wolfram_alpha", "{\\\"x\\\":[1,\\\"a\\\\n\\\",true,"
	    "null],\\\"y\\\":{\\\"k\\\":2.5},\\\"z\\\":\\\"a + b\\\","
	    "\\\"args\\\":[\\\"2+2\\\"]}") "]");
	expect_calls(&cc, "<|python_tag|>import math\nprint(math.pi)<|eom_id|>",
	    "", "[" CALL(0, "code_interpreter", "{\\\"code\\\":\\\"import "
	    "math\\\\nprint(math.pi)\\\"}") "]");
	expect_calls(&cc, "<|python_tag|>{\"name\": \"get\", \"parameters\": "
	    "{\"id\": 7}}<|eot_id|>", "", "[" CALL(0, "get",
	    "{\\\"id\\\":7}") "]");
	/* an empty body is no call; the tag is then a special token */
	expect_calls(&cc, "hi<|python_tag|>", "hi", "");
	cc.cc_special_tokens = NULL;
	expect_calls(&cc, "hi<|python_tag|> ", "hi<|python_tag|> ", "");
}
END_TEST

START_TEST(tools_glm_qwen)
{
	struct clean_conf	 cc = cc_tools();

	expect_calls(&cc, "<tool_call><name>search</name><arguments>{\"q\": "
	    "\"x\"}</arguments></tool_call>", "", "[" CALL(0, "search",
	    "{\\\"q\\\":\\\"x\\\"}") "]");
	expect_calls(&cc, "<tool_call><name>search</name></tool_call>", "",
	    "[" CALL(0, "search", "{}") "]");
	expect_calls(&cc, "<tool_call>get_weather\n<arg_key>city</arg_key>\n"
	    "<arg_value>Paris</arg_value>\n<arg_key>n</arg_key><arg_value>3"
	    "</arg_value></tool_call>", "", "[" CALL(0, "get_weather",
	    "{\\\"city\\\":\\\"Paris\\\",\\\"n\\\":3}") "]");
	expect_calls(&cc, "<tool_call>\n<function=get_weather>\n<parameter=city>"
	    "\nSF\n</parameter>\n</function>\n</tool_call>", "",
	    "[" CALL(0, "get_weather", "{\\\"city\\\":\\\"SF\\\"}") "]");
	expect_calls(&cc, "<tool_call>lookup\n{\"id\": 1}</tool_call>", "",
	    "[" CALL(0, "lookup", "{\\\"id\\\":1}") "]");
}
END_TEST

/* Arguments that are not JSON are passed on as written, with a
 * warning in the log. */
START_TEST(tools_warns_bad_json)
{
	struct clean_conf	 cc = cc_tools();
	char			 path[] = "/tmp/check_clean_log.XXXXXX", got[512];
	int			 fd = mkstemp(path), saved = dup(2);
	ssize_t			 n;

	ck_assert_int_ge(fd, 0);
	log_init(LOG_LVL_WARN);
	ck_assert_int_eq(dup2(fd, 2), 2);
	expect_calls(&cc, "<function=f>{bad}</function>", "",
	    "[" CALL(0, "f", "{bad}") "]");
	dup2(saved, 2);
	n = pread(fd, got, sizeof(got) - 1, 0);
	ck_assert_int_gt(n, 0);
	got[n] = '\0';
	ck_assert_msg(strstr(got, "not valid JSON") != NULL, "log: %s", got);
	close(fd);
	close(saved);
	unlink(path);
	log_init(LOG_LVL_ERR);
}
END_TEST

/* Ids differ, index counts from 0, the count is kept, and a call in a
 * think block is not a call. */
START_TEST(tools_ids_and_count)
{
	struct clean_conf	 cc = cc_tools();
	struct cleaner		*c = clean_new(&cc);
	struct clean_out	 o;
	static const char	 in[] = "<function=a>{}</function><function=b>{}"
	    "</function>";
	json_t			*v;

	clean_out_init(&o);
	clean_feed(c, in, strlen(in), &o);
	clean_finish(c, &o);
	ck_assert_uint_eq(clean_tool_calls(c), 2);
	v = json_loads(S(o.co_tool_calls), 0, NULL);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(json_array_size(v), 2);
	ck_assert_str_ne(json_string_value(json_object_get(json_array_get(v,
	    0), "id")), json_string_value(json_object_get(json_array_get(v,
	    1), "id")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(v,
	    1), "index")), 1);
	json_decref(v);
	clean_out_free(&o);
	clean_free(c);
	cc.cc_remove_thinking = true;
	cc.cc_start_tag = "<think>";
	cc.cc_end_tag = "</think>";
	expect_calls(&cc, "<think><tool_call>{\"name\":\"x\"}</tool_call></think>"
	    "done", "done", "");
}
END_TEST

/* ---- filters ------------------------------------------------------------ */

/* A chain from JSON text (the value of "responseFilters"). */
static struct filter_chain *
chain(const char *json, char err[CONF_ERRLEN])
{
	struct jfile		 jf;
	struct filter_chain	*fc = NULL;
	char			*text = xasprintf("{\"responseFilters\": %s}", json);

	if (jfile_parse("user.json", text, strlen(text), &jf, err) == 0 &&
	    filter_chain_load(&jf, jf.jf_root, "responseFilters", &fc,
	    err) == -1)
		fc = NULL;
	jfile_free(&jf);
	free(text);
	return fc;
}

static void
expect_filtered(const char *filters, const char *in, const char *want,
    bool stop)
{
	struct clean_conf	 cc = cc_plain();
	struct clean_out	 o;
	char			 err[CONF_ERRLEN] = "";
	struct filter_chain	*fc = chain(filters, err);

	ck_assert_msg(fc != NULL, "%s", err);
	cc.cc_filters = fc;
	run_all(&cc, in, strlen(in), &o);
	ck_assert_msg(strcmp(S(o.co_text), want) == 0, "%s on '%s': '%s', "
	    "want '%s'", filters, in, S(o.co_text), want);
	ck_assert_int_eq(o.co_stop, stop);
	clean_out_free(&o);
	filter_chain_free(fc);
}

START_TEST(filters_maxlen)
{
	const char	*f = "[{\"type\": \"maxLength\", \"maxChars\": 5}]";

	expect_filtered(f, "Hello world", "Hello" FILTER_TRUNCATED, true);
	expect_filtered(f, "Hello", "Hello", false);
	expect_filtered(f, "h\xc3\xa9llo w\xc3\xb6rld",
	    "h\xc3\xa9llo" FILTER_TRUNCATED, true);
	expect_filtered("[{\"type\": \"maxLength\", \"maxChars\": 0}]",
	    "Hello world", "Hello world", false);
	/* order: the footer (100) before the limit (200) counts */
	expect_filtered("[{\"type\": \"maxLength\", \"maxChars\": 4, \"order\": "
	    "200}, {\"type\": \"appendFooter\", \"text\": \"!!\"}]", "abc",
	    "abc!" FILTER_TRUNCATED, false);
	/* default orders: maxLength (10) first, then the footer */
	expect_filtered("[{\"type\": \"appendFooter\", \"text\": \"!!\"}, "
	    "{\"type\": \"maxLength\", \"maxChars\": 2}]", "abc",
	    "ab" FILTER_TRUNCATED "!!", true);
}
END_TEST

/* On a stream the limit stops the output in that feed; later feeds and
 * tool calls are ignored. */
START_TEST(filters_maxlen_stream)
{
	struct clean_conf	 cc = cc_tools();
	char			 err[CONF_ERRLEN];
	struct filter_chain	*fc = chain("[{\"type\": \"maxLength\", "
	    "\"maxChars\": 3}]", err);
	struct cleaner		*c;
	struct clean_out	 o;

	cc.cc_filters = fc;
	c = clean_new(&cc);
	clean_out_init(&o);
	clean_feed(c, "ab", 2, &o);
	ck_assert_str_eq(S(o.co_text), "ab");
	ck_assert(!o.co_stop);
	clean_out_reset(&o);
	clean_feed(c, "cd<function=f>{}</function>", 27, &o);
	ck_assert_str_eq(S(o.co_text), "c" FILTER_TRUNCATED);
	ck_assert(o.co_stop);
	clean_out_reset(&o);
	clean_feed(c, "more", 4, &o);
	clean_finish(c, &o);
	ck_assert_str_eq(S(o.co_text), "");
	ck_assert_uint_eq(clean_tool_calls(c), 0);
	clean_out_free(&o);
	clean_free(c);
	filter_chain_free(fc);
}
END_TEST

START_TEST(filters_redact)
{
	expect_filtered("[{\"type\": \"redactKeywords\", \"keywords\": "
	    "[\"secret\", \"pass word\"]}]", "The SECRET code, my Pass Word, "
	    "secre.", "The [REDACTED] code, my [REDACTED], secre.", false);
	expect_filtered("[{\"type\": \"redactKeywords\", \"keywords\": \"ab\", "
	    "\"replacement\": \"*\"}]", "aab abab", "a* **", false);
	expect_filtered("[{\"type\": \"redactRegex\", \"pattern\": "
	    "\"[0-9]{16}\"}]", "card 1234567812345678 ok\nnext 12345678 "
	    "1111222233334444", "card [REDACTED] ok\nnext 12345678 [REDACTED]",
	    false);
	expect_filtered("[{\"type\": \"redactRegex\", \"pattern\": \"^x+$\", "
	    "\"ignoreCase\": true}]", "xX\naxa\n\nX", "[REDACTED]\naxa\n\n"
	    "[REDACTED]", false);
	/* empty matches advance one character at a time */
	expect_filtered("[{\"type\": \"redactRegex\", \"pattern\": \"z*\", "
	    "\"replacement\": \"-\"}]", "ab\xc3\xa9", "-a-b-\xc3\xa9-", false);
	expect_filtered("[{\"type\": \"appendFooter\", \"text\": \"\\n-- Sluice"
	    "\"}]", "Hi", "Hi\n-- Sluice", false);
	expect_filtered("[]", "same", "same", false);
}
END_TEST

/* Keyword redaction holds back only a tail that may become a keyword;
 * with trim, trailing spaces held by the prefix stage settle it. */
START_TEST(filters_holdback)
{
	struct clean_conf	 cc = cc_plain();
	char			 err[CONF_ERRLEN];
	struct filter_chain	*fc = chain("[{\"type\": \"redactKeywords\", "
	    "\"keywords\": [\"secret\"]}]", err);
	struct cleaner		*c;
	struct clean_out	 o;

	cc.cc_filters = fc;
	cc.cc_trim = true;
	c = clean_new(&cc);
	clean_out_init(&o);
	clean_feed(c, "The sec", 7, &o);
	ck_assert_str_eq(S(o.co_text), "The ");
	clean_feed(c, " ", 1, &o);
	ck_assert_str_eq(S(o.co_text), "The sec");
	clean_feed(c, "secr", 4, &o);
	ck_assert_str_eq(S(o.co_text), "The sec ");
	clean_feed(c, "et!", 3, &o);
	ck_assert_str_eq(S(o.co_text), "The sec [REDACTED]!");
	clean_finish(c, &o);
	clean_out_free(&o);
	clean_free(c);
	filter_chain_free(fc);
	/* a footer ahead of the keywords is what follows at the end */
	fc = chain("[{\"type\": \"appendFooter\", \"text\": \"X\", "
	    "\"order\": 1}, {\"type\": \"redactKeywords\", \"keywords\": "
	    "\"sX\"}]", err);
	cc.cc_filters = fc;
	expect_text("footer first", &cc, "a s \n", "a [REDACTED]");
	filter_chain_free(fc);
}
END_TEST

START_TEST(filters_config_errors)
{
	static const struct {
		const char	*json;
		const char	*msg;
	} bad[] = {
		{ "{}", "user.json:1:2: 'responseFilters' must be a list" },
		{ "[3]", "user.json:1:22: 'responseFilters' item 1 must be an "
		    "object" },
		{ "[{\"order\": 1}]", "needs a \"type\"" },
		{ "[{\"type\": \"nope\"}]", "user.json:1:23: unknown filter "
		    "type 'nope'" },
		{ "[{\"type\": \"maxLength\"}]", "needs \"maxChars\"" },
		{ "[{\"type\": \"maxLength\", \"maxChars\": -2}]",
		    "'maxChars' must be 0" },
		{ "[{\"type\": \"redactRegex\", \"pattern\": \"a(\"}]",
		    "user.json:1:46: bad regular expression" },
		{ "[{\"type\": \"redactKeywords\", \"keywords\": [\"\"]}]",
		    "'keywords' item 1 is empty" },
		{ "[{\"type\": \"appendFooter\"}]", "needs \"text\"" },
		{ "[{\"type\": \"maxLength\", \"maxChars\": 1, \"order\": \"x\"}]",
		    "'order' must be" },
	};
	char		 err[CONF_ERRLEN];
	size_t		 i;

	for (i = 0; i < NELEM(bad); i++) {
		err[0] = '\0';
		ck_assert_ptr_null(chain(bad[i].json, err));
		ck_assert_msg(strstr(err, bad[i].msg) != NULL, "%s: '%s' lacks "
		    "'%s'", bad[i].json, err, bad[i].msg);
	}
	ck_assert_ptr_null(chain("null", err));
	ck_assert_uint_eq(filter_chain_len(NULL), 0);
}
END_TEST

/* ---- settings from the configuration files ------------------------------ */

static void
put(const char *dir, const char *rel, const char *text)
{
	char	*path = xasprintf("%s/%s", dir, rel), *slash;
	FILE	*f;

	for (slash = strchr(path + strlen(dir) + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		(void)mkdir(path, 0700);
		*slash = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

struct confs {
	char			 dir[64];
	struct conf_endpoint	*ep;
	struct conf_user	*u;
	struct conf_workflow	*wf;
};

static void
confs_load(struct confs *k, const char *ep, const char *user, const char *wf)
{
	char	 err[CONF_ERRLEN];

	strcpy(k->dir, "/tmp/check_clean.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(k->dir));
	put(k->dir, "Endpoints/ep.json", ep);
	put(k->dir, "Users/u.json", user);
	put(k->dir, "Workflows/u/wf.json", wf);
	ck_assert_msg(conf_endpoint_load(k->dir, "", "ep", &k->ep, err) == 0,
	    "%s", err);
	ck_assert_msg(conf_user_load(k->dir, "u", &k->u, err) == 0, "%s", err);
	ck_assert_msg(conf_workflow_load(k->dir, "u", "wf", &k->wf, err) == 0,
	    "%s", err);
}

static int
confs_build(struct confs *k, struct clean_setup *cs, char err[CONF_ERRLEN])
{
	struct clean_src	 src;

	src.sr_ep = k->ep;
	src.sr_wf_file = &k->wf->w_file;
	src.sr_node = json_array_get(k->wf->w_nodes, 0);
	src.sr_wf_vars = k->wf->w_vars;
	src.sr_user = k->u;
	return clean_conf_build(cs, &src, err);
}

static void
confs_free(struct confs *k)
{
	char	*cmd = xasprintf("rm -rf '%s'", k->dir);

	conf_endpoint_free(k->ep);
	conf_user_free(k->u);
	conf_workflow_free(k->wf);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}

static const char user_json[] = "{\"chatCompleteAddUserAssistant\": true,\n"
    " \"chatCompletionAddMissingAssistantGenerator\": true,\n"
    " \"responseFilters\": [{\"type\": \"appendFooter\", \"text\": \"U\"}]}";

START_TEST(conf_build)
{
	struct confs		 k;
	struct clean_setup	 cs;
	char			 err[CONF_ERRLEN];

	confs_load(&k, "{\"endpoint\": \"http://x\", \"apiTypeConfigFileName\": "
	    "\"Open-AI-API\", \"removeThinking\": true, \"startThinkTag\": "
	    "\"<think>\", \"endThinkTag\": \"</think>\", "
	    "\"openingTagGracePeriod\": 7, \"trimBeginningAndEndLineBreaks\": "
	    "true, \"removeCustomTextFromResponseStartEndpointWide\": true, "
	    "\"responseStartTextToRemoveEndpointWide\": \" EP: \", "
	    "\"reasoningTags\": true, \"reasoningOutput\": \"field\", "
	    "\"removeSpecialTokens\": [\"<x>\"], \"parseToolCallMarkers\": "
	    "false}", user_json, "{\"nodes\": [{\"type\": \"Standard\", "
	    "\"removeCustomTextFromResponseStart\": true, "
	    "\"responseStartTextToRemove\": \"WF: \", "
	    "\"addDiscussionIdTimestampsForLLM\": true}], \"responseFilters\": "
	    "[{\"type\": \"appendFooter\", \"text\": \"W\"}]}");
	ck_assert_msg(confs_build(&k, &cs, err) == 0, "%s", err);
	ck_assert(cs.su_conf.cc_remove_thinking && cs.su_conf.cc_trim);
	ck_assert_int_eq(cs.su_conf.cc_grace, 7);
	ck_assert(cs.su_conf.cc_reasoning_tags && !cs.su_conf.cc_gptoss_channels);
	ck_assert_int_eq(cs.su_conf.cc_reasoning, CLEAN_REASONING_FIELD);
	ck_assert(!cs.su_conf.cc_tool_markers);
	ck_assert_str_eq(cs.su_conf.cc_special_tokens[0], "<x>");
	ck_assert_str_eq(cs.su_conf.cc_workflow_prefixes[0], "WF: ");
	ck_assert_str_eq(cs.su_conf.cc_endpoint_prefixes[0], " EP: ");
	ck_assert(cs.su_conf.cc_timestamp_prefix && cs.su_conf.cc_assistant_prefix);
	ck_assert_uint_eq(filter_chain_len(cs.su_conf.cc_filters), 1);
	expect_text("conf", &cs.su_conf, "WF: EP: <think>r</think> Assistant: "
	    "hi<x> \n", "hiW");
	clean_conf_free(&cs);
	clean_conf_free(&cs);
	confs_free(&k);
}
END_TEST

START_TEST(conf_defaults)
{
	struct confs		 k;
	struct clean_setup	 cs;
	char			 err[CONF_ERRLEN];

	confs_load(&k, "{\"endpoint\": \"http://x\", \"apiTypeConfigFileName\": "
	    "\"Open-AI-API\"}", user_json, "[{\"type\": \"Standard\", "
	    "\"responseStartTextToRemove\": \"ignored when the flag is off\"}]");
	ck_assert_msg(confs_build(&k, &cs, err) == 0, "%s", err);
	ck_assert(!cs.su_conf.cc_remove_thinking && !cs.su_conf.cc_trim);
	ck_assert_int_eq(cs.su_conf.cc_grace, 100);
	ck_assert(cs.su_conf.cc_tool_markers);
	ck_assert_int_eq(cs.su_conf.cc_reasoning, CLEAN_REASONING_DROP);
	ck_assert_ptr_eq(cs.su_conf.cc_special_tokens, clean_default_tokens);
	ck_assert_ptr_null(cs.su_conf.cc_workflow_prefixes);
	ck_assert_ptr_null(cs.su_conf.cc_endpoint_prefixes);
	/* the user's filters when the workflow has none */
	expect_text("defaults", &cs.su_conf, "hi", "hiU");
	clean_conf_free(&cs);
	confs_free(&k);
}
END_TEST

START_TEST(conf_errors)
{
	struct confs		 k;
	struct clean_setup	 cs;
	char			 err[CONF_ERRLEN];

	confs_load(&k, "{\"endpoint\": \"http://x\", \"apiTypeConfigFileName\": "
	    "\"Open-AI-API\",\n \"reasoningOutput\": \"loud\"}", user_json,
	    "{\"nodes\": [], \"responseFilters\": [{\"type\": \"redactRegex\","
	    "\n  \"pattern\": \"(\"}]}");
	ck_assert_int_eq(confs_build(&k, &cs, err), -1);
	ck_assert_msg(strstr(err, "Endpoints/ep.json:2:2: 'reasoningOutput' "
	    "must be") != NULL, "%s", err);
	conf_endpoint_free(k.ep);
	k.ep = NULL;
	ck_assert_int_eq(confs_build(&k, &cs, err), -1);
	ck_assert_msg(strstr(err, "Workflows/u/wf.json:2:3: bad regular "
	    "expression") != NULL, "%s", err);
	confs_free(&k);
}
END_TEST

/* ---- property: stream == whole, and nothing held that is settled -------- */

static const char *const vocab[] = {
	"<think>", "</think>", "<THINK>", "<thinking>", "</thinking>",
	"<reasoning>", "</reasoning>", "<reflection>", "</reflection>",
	"[[T]]", "[[/T]]", "<|channel|>analysis<|message|>",
	"<|start|>assistant<|channel|>final<|message|>",
	"<|channel|>final<|message|>", "<|end|>", "<tool_call>",
	"</tool_call>", "{\"name\":\"f\",\"arguments\":{\"a\":1}}", "{\"name\":",
	"<function=get_x>", "<function=", "</function>", "{}",
	"<|python_tag|>", "f(a=1)", "<|eom_id|>", "<name>g</name>",
	"<arguments>{}</arguments>", "<arg_key>k</arg_key>",
	"<arg_value>v</arg_value>", "<|im_end|>", "<|eot_id|>", "</s>",
	"<|endoftext|>", "Assistant:", "WF: ", "EP:",
	"[Sent less than a minute ago]", " ", "  ", "\n", "\t", "\xc2\xa0",
	"\xe3\x80\x80", "a", "Hello", "x", "secret", "sec", "SECRET", "<", ">",
	"/", "|", "1234", "\xc3\xa9", "Z",
};

/* Constructs a held tail may belong to: an opener (or prefix, token,
 * keyword), what completes it from the end of the opener into something
 * the cleaner removes, and, for blocks, what closes one already open. */
enum { K_R = 1, K_WT = 2, K_WB = 4, K_G = 8, K_TOOL = 16, K_TOK = 32,
    K_PFX = 64, K_KW = 128, K_WS = 256 };

struct cons {
	unsigned	 c_kind;	/* the K_ settings it needs */
	const char	*c_open;
	bool		 c_icase;
	const char	*c_fill;
	const char	*c_close[4];
};

static const struct cons cons_fixed[] = {
	{ K_R | K_WT, "<think>", true, "x</think>", { "</think>" } },
	{ K_R, "<thinking>", true, "x</thinking>", { "</thinking>" } },
	{ K_R, "<reasoning>", true, "x</reasoning>", { "</reasoning>" } },
	{ K_R, "<reflection>", true, "x</reflection>", { "</reflection>" } },
	{ K_WB, "[[T]]", true, "x[[/T]]", { "[[/T]]" } },
	{ K_G, "<|channel|>analysis<|message|>", false, "x<|end|>",
	    { "<|end|>", "<|start|>assistant<|channel|>final<|message|>" } },
	{ K_G, "<|start|>assistant<|channel|>analysis<|message|>", false,
	    "x<|end|>", { "<|end|>" } },
	{ K_TOOL, "<tool_call>", false, "{\"name\":\"f\"}</tool_call>",
	    { "</tool_call>", "\"name\":\"f\"}</tool_call>",
	    "<arg_key>k</arg_key></tool_call>",
	    "{\"name\":\"f\"}</tool_call>" } },
	{ K_TOOL, "<function=", false, "f>{}</function>", { "f>{}</function>",
	    ">{}</function>", "</function>" } },
	{ K_TOOL, "<|python_tag|>", false, "f()<|eom_id|>", { "f()<|eom_id|>",
	    "<|eom_id|>", "<|eot_id|>" } },
	{ K_G, "<|start|>assistant<|channel|>final<|message|>", false, "",
	    { NULL } },
	{ K_G, "<|channel|>final<|message|>", false, "", { NULL } },
	{ K_WT, "</think>", true, "", { NULL } },
	{ K_WB, "[[/T]]", true, "", { NULL } },
	{ K_PFX, "Assistant:", false, "", { NULL } },
	{ K_PFX, "Assi", false, "", { NULL } },
	{ K_PFX, "WF: ", false, "", { NULL } },
	{ K_PFX, "EP:", false, "", { NULL } },
	{ K_PFX, "[Sent less than a minute ago]", false, "", { NULL } },
	{ K_KW, "secret", true, "", { NULL } },
	{ K_KW, "end", true, "", { NULL } },
	{ K_WS, "\xc2\xa0", false, "", { NULL } },
	{ K_WS, "\xe3\x80\x80", false, "", { NULL } },
	{ K_WS, "\xe2\x80\x80", false, "", { NULL } },
};

static struct cons	 cons[NELEM(cons_fixed) + 32];
static size_t		 ncons;

/* The constructs the configuration uses (others cannot hold a byte
 * back), the default special tokens among them. */
static void
cons_init(const struct clean_conf *cc)
{
	unsigned	 k = K_WS;
	size_t		 i;
	bool		 on = cc->cc_reasoning != CLEAN_REASONING_INLINE;

	if (on && cc->cc_reasoning_tags)
		k |= K_R;
	if (on && cc->cc_remove_thinking)
		k |= strcmp(cc->cc_start_tag, "<think>") == 0 ? K_WT : K_WB;
	if (on && cc->cc_gptoss_channels)
		k |= K_G;
	if (cc->cc_tool_markers)
		k |= K_TOOL;
	if (cc->cc_special_tokens != NULL)
		k |= K_TOK;
	if (cc->cc_workflow_prefixes != NULL || cc->cc_endpoint_prefixes !=
	    NULL || cc->cc_timestamp_prefix || cc->cc_assistant_prefix)
		k |= K_PFX;
	if (cc->cc_filters != NULL)
		k |= K_KW;
	ncons = 0;
	for (i = 0; i < NELEM(cons_fixed); i++)
		if (cons_fixed[i].c_kind & k)
			cons[ncons++] = cons_fixed[i];
	for (i = 0; (k & K_TOK) && clean_default_tokens[i] != NULL &&
	    ncons < NELEM(cons); i++) {
		memset(&cons[ncons], 0, sizeof(cons[ncons]));
		cons[ncons].c_open = clean_default_tokens[i];
		cons[ncons++].c_fill = "";
	}
}

/* Witness continuations; gathering stops at WSET_MAX. */
#define WSET_MAX	800
struct wset {
	char	**w_s;
	size_t	  w_n;
	bool	  w_full;
	uint32_t *w_h;		/* hashes, to skip most strcmp calls */
};

static void
wset_add(struct wset *ws, const struct buf *b, const char *tail)
{
	char		*s;
	size_t		 i;
	uint32_t	 h;

	if (ws->w_n >= WSET_MAX) {
		ws->w_full = true;
		return;
	}
	s = xasprintf("%s%s", S(*b), tail);
	for (i = 0, h = 2166136261u; s[i] != '\0'; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	for (i = 0; i < ws->w_n; i++) {
		if (ws->w_h[i] == h && strcmp(ws->w_s[i], s) == 0) {
			free(s);
			return;
		}
	}
	ws->w_s = xreallocarray(ws->w_s, ws->w_n + 1, sizeof(char *));
	ws->w_h = xreallocarray(ws->w_h, ws->w_n + 1, sizeof(uint32_t));
	ws->w_h[ws->w_n] = h;
	ws->w_s[ws->w_n++] = s;
}

static bool
eqi(const char *a, const char *b, size_t n, bool icase)
{
	return icase ? strncasecmp(a, b, n) == 0 : memcmp(a, b, n) == 0;
}

static void	gen(const char *, size_t, int, const struct buf *,
		    struct wset *);

/* Completions of constructs that end at end (their open tag cut at
 * any point, or whole tokens skipped), chained up to three deep: a tail
 * held in one stage may sit right after one held in another. */
static void
gen_cons(const char *p, size_t end, int depth, const struct buf *acc,
    struct wset *ws, const struct cons *c)
{
	size_t		 ol = strlen(c->c_open), k;
	struct buf	 w;

	for (k = 1; k <= ol && k <= end; k++) {
		if (!eqi(p + end - k, c->c_open, k, c->c_icase))
			continue;
		buf_init(&w);
		buf_adds(&w, S(*acc));
		buf_adds(&w, c->c_open + k);
		buf_adds(&w, c->c_fill);
		wset_add(ws, &w, "");
		/* a whole token or prefix just goes: no new witness text */
		gen(p, end - k, k == ol && *c->c_fill == '\0' ? depth :
		    depth + 1, &w, ws);
		buf_free(&w);
	}
}

static void
gen(const char *p, size_t end, int depth, const struct buf *acc,
    struct wset *ws)
{
	size_t	 i;

	if (depth >= 3 || ws->w_full)
		return;
	for (i = 0; i < ncons; i++)
		gen_cons(p, end, depth, acc, ws, &cons[i]);
}

static void
wset_free(struct wset *ws)
{
	size_t	 i;

	for (i = 0; i < ws->w_n; i++)
		free(ws->w_s[i]);
	free(ws->w_s);
	free(ws->w_h);
}

static char *
gen_text(uint64_t *r, size_t *lenp)
{
	struct buf	 b = BUF_INIT;
	size_t		 n = rnd(r) % 15, i, k;
	const char	*v;

	buf_adds(&b, "");
	for (i = 0; i < n; i++) {
		v = vocab[rnd(r) % NELEM(vocab)];
		k = strlen(v);
		if (rnd(r) % 5 == 0 && k > 1)
			k = 1 + rnd(r) % (k - 1);
		buf_add(&b, v, k);
	}
	*lenp = b.b_len;
	return buf_take(&b);
}

struct pchains {
	struct filter_chain	*pc_f[5];	/* [0] is NULL: no filters */
};

static const char *const wf_pfx[] = { "WF: ", "Assi", NULL };
static const char *const ep_pfx[] = { "  EP:  ", NULL };

/* A random configuration; *exact is false when it has a filter that
 * buffers more than the minimum (regex lines). */
static struct clean_conf
gen_conf(uint64_t *r, const struct pchains *pc, bool *exact)
{
	struct clean_conf	 cc = cc_plain();
	static const long	 graces[] = { 0, 2, 10, 100 };
	unsigned		 w = rnd(r) % 3, f = rnd(r) % 6;

	cc.cc_remove_thinking = w != 0;
	cc.cc_start_tag = w == 2 ? "[[T]]" : "<think>";
	cc.cc_end_tag = w == 2 ? "[[/T]]" : "</think>";
	cc.cc_grace = graces[rnd(r) % 4];
	cc.cc_only_closing = rnd(r) % 6 == 0;
	cc.cc_reasoning_tags = rnd(r) % 2;
	cc.cc_gptoss_channels = rnd(r) % 3 == 0;
	cc.cc_reasoning = rnd(r) % 2 ? CLEAN_REASONING_DROP :
	    (enum clean_reasoning)(1 + rnd(r) % 2);
	cc.cc_tool_markers = rnd(r) % 2;
	cc.cc_special_tokens = rnd(r) % 2 ? clean_default_tokens : NULL;
	cc.cc_workflow_prefixes = rnd(r) % 3 == 0 ? wf_pfx : NULL;
	cc.cc_endpoint_prefixes = rnd(r) % 3 == 0 ? ep_pfx : NULL;
	cc.cc_timestamp_prefix = rnd(r) % 4 == 0;
	cc.cc_assistant_prefix = rnd(r) % 3 == 0;
	cc.cc_trim = rnd(r) % 2;
	cc.cc_filters = f < 5 ? pc->pc_f[f] : NULL;
	*exact = f != 4;
	return cc;
}

/* Text of the whole-text cleaning of p[0..n) + x. */
static void
whole_text(const struct clean_conf *cc, const char *p, size_t n,
    const char *x, struct buf *out)
{
	struct clean_out	 o;
	char			*t = xmalloc(n + strlen(x) + 1);

	memcpy(t, p, n);
	strcpy(t + n, x);
	run(cc, t, n + strlen(x), 0, 0, &o);
	buf_reset(out);
	buf_add(out, S(o.co_text), o.co_text.b_len);
	clean_out_free(&o);
	free(t);
}

/* Closers of the block the reasoning stage (c1) and the tool stage (c2)
 * hold open. White-box: the stages' states only choose witnesses; what
 * is compared is the output. "" is in both. */
static void
open_closers(const struct cleaner *c, struct wset *c1, struct wset *c2)
{
	static const char *const th_close[] = { NULL, "</think>",
	    "</thinking>", "</reasoning>", "</reflection>", "<|end|>" };
	static const char *const tl_close[][4] = {
		{ "</tool_call>", "\"name\":\"f\"}</tool_call>",
		    "{\"name\":\"f\"}</tool_call>",
		    "<arg_key>k</arg_key></tool_call>" },
		{ "</function>" },
		{ "<|eom_id|>", "f()<|eom_id|>" },
	};
	struct buf	 e = BUF_INIT;
	size_t		 i;

	wset_add(c1, &e, "");
	wset_add(c2, &e, "");
	if (c->c_th.t_st == TH_CO || (c->c_th.t_st == TH_IN &&
	    c->c_th.t_kind == THK_W))
		wset_add(c1, &e, c->c_conf.cc_end_tag);
	else if (c->c_th.t_st == TH_IN)
		wset_add(c1, &e, th_close[c->c_th.t_kind]);
	if (c->c_th.t_st == TH_IN && c->c_th.t_kind == THK_GPTOSS)
		wset_add(c1, &e, "<|channel|>final<|message|>");
	if (c->c_tl.l_st == TL_FNAME) {
		wset_add(c2, &e, ">{}</function>");
		wset_add(c2, &e, "f>{}</function>");
	} else if (c->c_tl.l_st == TL_DOOMED)
		wset_add(c2, &e, "</tool_call>");
	for (i = 0; c->c_tl.l_st == TL_IN && i < 4 &&
	    tl_close[c->c_tl.l_kind][i] != NULL; i++)
		wset_add(c2, &e, tl_close[c->c_tl.l_kind][i]);
}

/* Where a block that is open may have started: the last place of each
 * opener, and the first one after that opener's last closer. */
static void
block_starts(const char *p, size_t n, const char *open, const char *close,
    bool icase, size_t *at, size_t *nat)
{
	size_t	 ol = strlen(open), cl = strlen(close), j, from = 0, last;

	for (j = 0; j + cl <= n; j++)
		if (eqi(p + j, close, cl, icase))
			from = j + cl;
	last = SIZE_MAX;
	for (j = from; j + ol <= n; j++) {
		if (!eqi(p + j, open, ol, icase))
			continue;
		if (last == SIZE_MAX && *nat < 16)
			at[(*nat)++] = j;
		last = j;
	}
	for (j = n; j >= ol && *nat < 16; j--) {
		if (eqi(p + j - ol, open, ol, icase)) {
			at[(*nat)++] = j - ol;
			break;
		}
	}
}

/* Completions (G) of tails held in front of p[0..n) or of its whole
 * text, and in front of each block start. */
static void
completions(const struct clean_conf *cc, const struct cleaner *c,
    const char *p, size_t n, struct wset *g)
{
	static const char *const tool_open[][2] = { { "<tool_call>",
	    "</tool_call>" }, { "<function=", "</function>" },
	    { "<|python_tag|>", "<|eom_id|>" } };
	static const char *const th_open[][2] = { { NULL, NULL },
	    { "<think>", "</think>" }, { "<thinking>", "</thinking>" },
	    { "<reasoning>", "</reasoning>" },
	    { "<reflection>", "</reflection>" },
	    { "<|channel|>analysis<|message|>", "<|end|>" } };
	struct buf	 acc = BUF_INIT, o = BUF_INIT;
	struct clean_conf nof;
	size_t		 at[16], nat = 0, i;

	at[nat++] = n;
	for (i = 0; c->c_tl.l_st != TL_OUT && i < 3; i++)
		block_starts(p, n, tool_open[i][0], tool_open[i][1], false, at,
		    &nat);
	if (c->c_th.t_st == TH_IN)
		block_starts(p, n, c->c_th.t_kind == THK_W ? cc->cc_start_tag :
		    th_open[c->c_th.t_kind][0], c->c_th.t_kind == THK_W ?
		    cc->cc_end_tag : th_open[c->c_th.t_kind][1], true, at, &nat);
	nof = *cc;
	nof.cc_filters = NULL;
	wset_add(g, &acc, "");
	for (i = 0; i < nat; i++) {
		gen(p, at[i], 0, &acc, g);
		whole_text(cc, p, at[i], "", &o);
		gen(S(o), o.b_len, 0, &acc, g);
		whole_text(&nof, p, at[i], "", &o);
		gen(S(o), o.b_len, 0, &acc, g);
	}
	buf_free(&o);
}

/* Completions of a reasoning-stage tag cut at the end of p[0..n). */
static void
completions1(const char *p, size_t n, struct wset *g1)
{
	struct buf	 w = BUF_INIT;
	size_t		 i, k, ol;

	for (i = 0; i < ncons; i++) {
		if (!(cons[i].c_kind & (K_R | K_WT | K_WB | K_G)))
			continue;
		ol = strlen(cons[i].c_open);
		for (k = 1; k < ol && k <= n; k++) {
			if (!eqi(p + n - k, cons[i].c_open, k, cons[i].c_icase))
				continue;
			buf_reset(&w);
			buf_adds(&w, cons[i].c_open + k);
			buf_adds(&w, cons[i].c_fill);
			wset_add(g1, &w, "");
		}
	}
	buf_free(&w);
}

/* The longest prefix of the output no witness continuation changes;
 * false when there were too many witnesses to try them all. c is the
 * cleaner that was fed p[0..n). */
static bool
settled(const struct clean_conf *cc, const struct cleaner *c, const char *p,
    size_t n, struct buf *lcp, size_t *tried)
{
	struct wset	 c1 = { NULL, 0, false, NULL }, c2 = { NULL, 0, false, NULL };
	struct wset	 g = { NULL, 0, false, NULL }, ws = { NULL, 0, false, NULL };
	struct buf	 w = BUF_INIT, o = BUF_INIT;
	size_t		 i, j, k, t;
	static const char *const plain[] = { "Z", " Z", "\n", "</" };
	bool		 all;

	for (i = 0; i < NELEM(plain); i++)
		wset_add(&ws, &w, plain[i]);
	/* [close or complete the reasoning stage's] [close the tool
	 * stage's] [complete the tails of the later stages] */
	open_closers(c, &c1, &c2);
	completions1(p, n, &c1);
	completions(cc, c, p, n, &g);
	for (i = 0; i < c1.w_n; i++)
		for (j = 0; j < c2.w_n; j++)
			for (k = 0; k < g.w_n; k++) {
				buf_reset(&w);
				buf_adds(&w, c1.w_s[i]);
				buf_adds(&w, c2.w_s[j]);
				buf_adds(&w, g.w_s[k]);
				wset_add(&ws, &w, "");
				wset_add(&ws, &w, "Z");
			}
	whole_text(cc, p, n, "", lcp);
	for (t = 0; t < ws.w_n; t++) {
		whole_text(cc, p, n, ws.w_s[t], &o);
		for (k = 0; k < lcp->b_len && k < o.b_len &&
		    lcp->b_data[k] == o.b_data[k]; k++)
			;
		lcp->b_len = k;
	}
	*tried += ws.w_n;
	all = !ws.w_full && !g.w_full;
	wset_free(&ws);
	wset_free(&c1);
	wset_free(&c2);
	wset_free(&g);
	buf_free(&o);
	buf_free(&w);
	return all;
}

static void
conf_desc(const struct clean_conf *cc, char *s, size_t n)
{
	snprintf(s, n, "W=%d(%s,%ld%s) R=%d G=%d mode=%d tools=%d toks=%d "
	    "wf=%d ep=%d ts=%d as=%d trim=%d filters=%zu",
	    cc->cc_remove_thinking, cc->cc_start_tag, cc->cc_grace,
	    cc->cc_only_closing ? ",CO" : "", cc->cc_reasoning_tags,
	    cc->cc_gptoss_channels, (int)cc->cc_reasoning, cc->cc_tool_markers,
	    cc->cc_special_tokens != NULL, cc->cc_workflow_prefixes != NULL,
	    cc->cc_endpoint_prefixes != NULL, cc->cc_timestamp_prefix,
	    cc->cc_assistant_prefix, cc->cc_trim,
	    filter_chain_len(cc->cc_filters));
}

/* Feed in random pieces; after each, what came out must be exactly what
 * no continuation can change any more. Returns witnesses tried. */
static size_t
check_settled(const struct clean_conf *cc, const char *in, size_t n,
    uint64_t *r)
{
	struct cleaner		*c = clean_new(cc);
	struct clean_out	 o;
	struct buf		 lcp = BUF_INIT;
	size_t			 off = 0, k, tried = 0;
	char			 desc[256];
	bool			 exact;

	cons_init(cc);
	clean_seed_ids(c, 7);
	clean_out_init(&o);
	while (off < n) {
		k = 1 + rnd(r) % 12;
		if (k > n - off)
			k = n - off;
		clean_feed(c, in + off, k, &o);
		off += k;
		exact = settled(cc, c, in, off, &lcp, &tried);
		if ((exact && lcp.b_len != o.co_text.b_len) ||
		    lcp.b_len < o.co_text.b_len || memcmp(S(lcp),
		    S(o.co_text), o.co_text.b_len) != 0) {
			conf_desc(cc, desc, sizeof(desc));
			buf_addc(&lcp, '\0');
			ck_abort_msg("fed '%.*s' [%s]: sent '%s', settled '%s'",
			    (int)off, in, desc, S(o.co_text), S(lcp));
		}
	}
	clean_finish(c, &o);
	clean_out_free(&o);
	clean_free(c);
	buf_free(&lcp);
	return tried;
}

static void
pchains_init(struct pchains *pc)
{
	static const char *const f[] = {
		"[{\"type\": \"redactKeywords\", \"keywords\": [\"secret\"]}]",
		"[{\"type\": \"maxLength\", \"maxChars\": 12}]",
		("[{\"type\": \"redactKeywords\", \"keywords\": \"end\"}, "
		    "{\"type\": \"appendFooter\", \"text\": \"-- end\", "
		    "\"order\": 200}]"),
		"[{\"type\": \"redactRegex\", \"pattern\": \"[0-9]+|a\"}]",
	};
	char		 err[CONF_ERRLEN];
	size_t		 i;

	pc->pc_f[0] = NULL;
	for (i = 0; i < NELEM(f); i++) {
		pc->pc_f[i + 1] = chain(f[i], err);
		ck_assert_msg(pc->pc_f[i + 1] != NULL, "%s", err);
	}
}

/* Seeds of 2,500 texts each. The sanitizer build runs one: it is there
 * to catch memory errors on the same paths, and four took 98 s of the
 * 15 minutes make check may take (17 s in the normal build). */
#if defined(__SANITIZE_ADDRESS__)
#define PROPERTY_SEEDS	1
#else
#define PROPERTY_SEEDS	4
#endif

START_TEST(property_random_texts)
{
	struct pchains		 pc;
	struct clean_conf	 cc;
	struct clean_out	 w, o;
	uint64_t		 r = 0x9e3779b97f4a7c15ULL + (uint64_t)_i;
	const char		*seed = getenv("CLEAN_PROP_SEED");
	size_t			 t, n, tried = 0, exact_runs = 0;
	char			*text, desc[256];
	bool			 exact;

	/* CLEAN_PROP_SEED=n explores other texts */
	if (seed != NULL)
		r += strtoull(seed, NULL, 10) * 7919;
	pchains_init(&pc);
	for (t = 0; t < 2500; t++) {
		text = gen_text(&r, &n);
		cc = gen_conf(&r, &pc, &exact);
		conf_desc(&cc, desc, sizeof(desc));
		run(&cc, text, n, 0, 0, &w);
		run(&cc, text, n, 1, 0, &o);
		same_out(&w, &o, text);
		clean_out_free(&o);
		run(&cc, text, n, SIZE_MAX, rnd(&r), &o);
		same_out(&w, &o, desc);
		clean_out_free(&o);
		clean_out_free(&w);
		if (exact) {
			tried += check_settled(&cc, text, n, &r);
			exact_runs++;
		}
		free(text);
	}
	ck_assert_uint_gt(exact_runs, 1500);
	ck_assert_uint_gt(tried, 10000);
	for (t = 0; t < NELEM(pc.pc_f); t++)
		filter_chain_free(pc.pc_f[t]);
}
END_TEST

/* ---- suite --------------------------------------------------------------- */

static Suite *
clean_suite(void)
{
	Suite	*s = suite_create("clean");
	TCase	*tc;

	tc = tcase_create("think");
	tcase_add_test(tc, think_standard);
	tcase_add_test(tc, think_grace);
	tcase_add_test(tc, think_closing_only);
	tcase_add_test(tc, think_complex_tags);
	tcase_add_test(tc, think_single_delta);
	suite_add_tcase(s, tc);
	tc = tcase_create("post_process");
	tcase_add_test(tc, post_full_order);
	tcase_add_test(tc, post_endpoint_prefixes);
	tcase_add_test(tc, post_workflow_ts_assistant);
	tcase_add_test(tc, post_trim);
	suite_add_tcase(s, tc);
	tc = tcase_create("stream");
	tcase_add_test(tc, stream_plain_and_prefix);
	tcase_add_test(tc, stream_trim_ts_strings);
	tcase_add_test(tc, stream_think_and_prefix);
	tcase_add_test(tc, stream_no_delay);
	suite_add_tcase(s, tc);
	tc = tcase_create("reasoning");
	tcase_add_test(tc, reasoning_tags);
	tcase_add_test(tc, reasoning_field_streams);
	tcase_add_test(tc, reasoning_gptoss);
	suite_add_tcase(s, tc);
	tc = tcase_create("tokens_and_tools");
	tcase_add_test(tc, special_tokens);
	tcase_add_test(tc, tools_hermes);
	tcase_add_test(tc, tools_llama_function);
	tcase_add_test(tc, tools_python_tag);
	tcase_add_test(tc, tools_glm_qwen);
	tcase_add_test(tc, tools_warns_bad_json);
	tcase_add_test(tc, tools_ids_and_count);
	suite_add_tcase(s, tc);
	tc = tcase_create("filters");
	tcase_add_test(tc, filters_maxlen);
	tcase_add_test(tc, filters_maxlen_stream);
	tcase_add_test(tc, filters_redact);
	tcase_add_test(tc, filters_holdback);
	tcase_add_test(tc, filters_config_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("conf");
	tcase_add_test(tc, conf_build);
	tcase_add_test(tc, conf_defaults);
	tcase_add_test(tc, conf_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("property");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, property_random_texts, 0, PROPERTY_SEEDS);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(clean_suite());
}
