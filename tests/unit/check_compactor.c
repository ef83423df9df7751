/* check_compactor.c - ContextCompactor (addendum A5) with the LLM call stubbed: its settings, its windows, when it compacts, its three calls, its stored state and its output. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../../worker/memory/compact_win.h"
#include "../../worker/memory/compactor.h"
#include "../../worker/memory/memstore.h"
#include "../../worker/nodes/nodes.h"
#include "../../worker/store/store_lock.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "nodectx.h"
#include "stubs_ask.h"

#define SYS	"You are a summarization AI."

static struct nodectx	 C;
static struct store	*S;
static struct mem_blocks ST;		/* state() */

static void
setup(void)
{
	nodectx_open(&C, "compactor");
	S = C.nc_db.sd_store;
	C.nc_discussion = "d";
	fakeask_reset();
}

static void
teardown(void)
{
	fakeask_reset();
	mem_blocks_free(&ST);
	nodectx_close(&C);
	S = NULL;
}

/* ---- fixtures --------------------------------------------------------- */

/* Message i: 35 characters, one word: 11 estimated tokens. */
static void
m35(char out[36], size_t i)
{
	int	 n = snprintf(out, 36, "msg%02zu", i);

	memset(out + n, 'x', (size_t)(35 - n));
	out[35] = '\0';
}

/* n messages of 11 tokens each, user and assistant in turn. */
static void
say(size_t from, size_t n)
{
	char	 c[36];
	size_t	 i;

	for (i = from; i < from + n; i++) {
		m35(c, i);
		nodectx_say(&C, i % 2 == 0 ? "user" : "assistant", c);
	}
}

/* The settings file cc.json, named by the user file. */
static void
settings(const char *json)
{
	nodectx_write(&C, "Workflows/" NC_FOLDER "/cc.json", json);
	json_object_set_new(C.nc_user_json, "contextCompactorSettingsFile",
	    json_string("cc"));
}

/* Budgets of two and two messages, nothing skipped. */
#define SMALL	"{\"endpointName\": \"E\", \"recentContextTokens\": 22, " \
		"\"oldContextTokens\": 22, \"lookbackStartTurn\": 0"

static char *
hash_of(size_t i)
{
	char	 h[SHA256_HEXLEN];

	ck_assert_uint_lt(i, C.nc_msgs.n);
	sha256_hex(C.nc_msgs.v[i].m_content, strlen(C.nc_msgs.v[i].m_content),
	    h);
	return xstrdup(h);
}

/* text() of the conversation's messages [from, to), written out here. */
static char *
text_of(size_t from, size_t to)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = from; i < to; i++)
		buf_printf(&b, "%s%s: %s", i > from ? "\n" : "",
		    C.nc_msgs.v[i].m_role, C.nc_msgs.v[i].m_content);
	return buf_take(&b);
}

static int
run(struct buf *out, struct wresult *res)
{
	bool	 streamed;
	int	 rc;

	rc = nodectx_run(&C, &node_compactor, nodectx_json("{s:s}", "type",
	    "ContextCompactor"), out, &streamed, res);
	ck_assert(!streamed);
	return rc;
}

static char *
out_of(void)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_msg(run(&out, &res) == 0, "node failed: %s", res.r_message);
	return out.b_data != NULL ? buf_take(&out) : xstrdup("");
}

/* Queue the answers of the three calls: S<n>, N<n>, U<n>. */
static void
answer3(const char *n)
{
	char	 a[16];

	snprintf(a, sizeof(a), "S%s", n);
	fakeask_answer(a);
	snprintf(a, sizeof(a), "N%s", n);
	fakeask_answer(a);
	snprintf(a, sizeof(a), "U%s", n);
	fakeask_answer(a);
}

/* A run that compacts with those three answers. */
static void
compact3(const char *n)
{
	answer3(n);
	free(out_of());
}

#define ck_out(want) do {						\
	char	*s_ = out_of();					\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

static void
ck_fails_http(int http, const char *needle)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_int_eq(run(&out, &res), -1);
	nodectx_ck_fail(&res, http, "ContextCompactor", needle);
	buf_free(&out);
}

#define ck_fails(needle)	ck_fails_http(500, needle)

/* Section (old/oldest) entry i's text and hash. */
static void
ck_entry(const char *section, size_t n, size_t i, const char *text,
    const char *hash)
{
	struct mem_blocks	 b;

	ck_assert_int_eq(memstore_section(S, "d", section, &b), 0);
	ck_assert_uint_eq(b.n, n);
	if (i < n) {
		ck_assert_str_eq(b.v[i].mb_text, text);
		ck_assert_str_eq(b.v[i].mb_hash, hash);
	}
	mem_blocks_free(&b);
}

static void
block_add(struct mem_blocks *b, const char *text, const char *hash)
{
	b->v = xreallocarray(b->v, b->n + 1, sizeof(*b->v));
	b->v[b->n].mb_id = (int64_t)b->n;
	b->v[b->n].mb_text = xstrdup(text);
	b->v[b->n++].mb_hash = xstrdup(hash);
}

/* An Old state: ("S", recent_hash), (COMPACT_BOUNDARY, boundary);
 * valid until the next call. */

static struct mem_blocks *
state(const char *recent_hash, const char *boundary)
{
	mem_blocks_free(&ST);
	block_add(&ST, "S", recent_hash);
	block_add(&ST, COMPACT_BOUNDARY, boundary);
	return &ST;
}

/* Store the Old state as (text, hash) and the boundary. */
static void
put_old(const char *text, const char *hash, const char *boundary)
{
	struct mem_blocks	 b = { NULL, 0 };

	block_add(&b, text, hash);
	block_add(&b, COMPACT_BOUNDARY, boundary);
	ck_assert_int_eq(memstore_sections_put(S, "d", &b, NULL), 0);
	mem_blocks_free(&b);
}

static void
put_oldest(const char *text, const char *hash)
{
	struct mem_blocks	 b = { NULL, 0 };

	block_add(&b, text, hash);
	ck_assert_int_eq(memstore_sections_put(S, "d", NULL, &b), 0);
	mem_blocks_free(&b);
}

/* ---- A5.1 the settings file ------------------------------------------- */

START_TEST(a5_1_no_settings_answers_empty)
{
	say(0, 8);
	ck_out("");
	json_object_set_new(C.nc_user_json, "contextCompactorSettingsFile",
	    json_string("missing"));
	ck_out("");
	settings("{\"endpointName\": ");		/* not JSON */
	ck_out("");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

START_TEST(a5_1_bad_settings_fail)
{
	say(0, 8);
	settings("[1, 2]");
	ck_fails("the ContextCompactor settings must be a JSON object, not "
	    "a list");
	settings("{\"recentContextTokens\": \"big\"}");
	ck_fails("cc.json: 'recentContextTokens' must be a number, not a "
	    "string");
	settings("{\"lookbackStartTurn\": 2.5}");
	ck_fails("'lookbackStartTurn' must be an integer");
	settings("{\"oldSectionPrompt\": 3}");
	ck_fails("'oldSectionPrompt' must be a string");
	json_object_set_new(C.nc_user_json, "contextCompactorSettingsFile",
	    json_string("../../etc/x"));
	ck_fails("refusing unsafe contextCompactorSettingsFile");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

static struct compact_conf *
conf_of(const char *json)
{
	static struct compact_conf	 cc;
	struct wresult			 res;

	settings(json);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(compact_conf_load(nodectx_ctx(&C, NULL), &cc, &res),
	    1);
	return &cc;
}

START_TEST(a5_1_defaults)
{
	struct compact_conf	*cc = conf_of("{}");

	ck_assert_ptr_null(cc->cc_endpoint);
	ck_assert_str_eq(cc->cc_preset, "");
	ck_assert_int_eq(cc->cc_max_tokens, 750);
	ck_assert_int_eq(cc->cc_recent, 20000);
	ck_assert_int_eq(cc->cc_old, 20000);
	ck_assert_int_eq(cc->cc_lookback, 5);
	ck_assert_str_eq(cc->cc_system[0], SYS);
	ck_assert_str_eq(cc->cc_system[1], SYS);
	ck_assert_str_eq(cc->cc_system[2], SYS);
	ck_assert_str_eq(cc->cc_prompt[0], "[MESSAGES_TO_SUMMARIZE]");
	ck_assert_str_eq(cc->cc_prompt[1], "[MESSAGES_TO_SUMMARIZE]");
	ck_assert_str_eq(cc->cc_prompt[2],
	    "[EXISTING_SUMMARY]\n\n[NEW_CONTENT]");
	compact_conf_free(cc);
	/* Empty strings are kept (no fallback to the default), null is
	 * the default. */
	cc = conf_of("{\"oldSectionSystemPrompt\": \"\", \"preset\": null, "
	    "\"neutralSummaryPrompt\": null}");
	ck_assert_str_eq(cc->cc_system[0], "");
	ck_assert_str_eq(cc->cc_preset, "");
	ck_assert_str_eq(cc->cc_prompt[1], "[MESSAGES_TO_SUMMARIZE]");
	compact_conf_free(cc);
}
END_TEST

START_TEST(a5_1_estimation_level_scales_budgets)
{
	static const struct { const char *lv; long r, o; } t[] = {
		{ "\"conservative\"", 1000, 30 },
		{ "\"balanced\"", 1250, 38 },	/* int(30.9 * 1.25) */
		{ "\" Aggressive \"", 1500, 46 },
		{ "\"xaggressive\"", 1850, 57 },
		{ "\"bogus\"", 1000, 30 },
		{ "7", 1000, 30 },
	};
	struct compact_conf	*cc;
	char			 json[200];
	size_t			 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(json, sizeof(json), "{\"recentContextTokens\": 1000, "
		    "\"oldContextTokens\": 30.9, "
		    "\"wilmerContextEstimationLevel\": %s}", t[i].lv);
		cc = conf_of(json);
		ck_assert_int_eq(cc->cc_recent, t[i].r);
		ck_assert_int_eq(cc->cc_old, t[i].o);
		compact_conf_free(cc);
	}
}
END_TEST

/* The level moves the boundary a real run sees: 30 tokens hold two
 * messages, 37 (balanced) three. */
START_TEST(a5_1_level_moves_boundary)
{
	char	*old;

	say(0, 6);
	settings("{\"endpointName\": \"E\", \"recentContextTokens\": 30, "
	    "\"oldContextTokens\": 1000, \"lookbackStartTurn\": 0, "
	    "\"wilmerContextEstimationLevel\": \"balanced\"}");
	fakeask_answer("S");
	ck_out("<context_compactor_old>S</context_compactor_old>");
	old = text_of(0, 3);
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, old);
	free(old);
}
END_TEST

/* ---- A5.2 the windows --------------------------------------------------- */

static void
bounds(long r, long o, size_t want_recent, size_t want_old)
{
	struct compact_bounds	 b;

	compact_bounds(&C.nc_msgs, r, o, &b);
	ck_assert_uint_eq(b.cb_recent, want_recent);
	ck_assert_uint_eq(b.cb_old, want_old);
}

START_TEST(a5_2_bounds)
{
	bounds(22, 22, 0, 0);			/* no messages */
	say(0, 6);
	bounds(22, 22, 4, 2);
	bounds(22, 1000, 4, 0);
	bounds(1000, 22, 0, 0);			/* all Recent */
	bounds(21, 22, 5, 3);			/* 11 + 11 > 21 */
	bounds(5, 5, 6, 6);			/* the newest does not fit */
	bounds(5, 22, 6, 4);
}
END_TEST

/* Strict '>': a budget the messages fill exactly holds them all. */
START_TEST(a5_2_bounds_strict)
{
	say(0, 3);
	bounds(33, 33, 0, 0);
	bounds(32, 33, 1, 0);
	bounds(5, 33, 3, 0);
}
END_TEST

START_TEST(a5_2_text_format)
{
	struct wmsg	 v[3] = {
		{ .m_role = "user", .m_content = "hi {x}" },
		{ .m_role = NULL, .m_content = "who" },
		{ .m_role = "system", .m_content = "" } };
	struct wmsgs	 w = { v, 3 };
	char		*t;

	t = compact_text(&w, 0, 3);
	ck_assert_str_eq(t, "user: hi {x}\nunknown: who\nsystem: ");
	free(t);
	t = compact_text(&w, 1, 1);
	ck_assert_str_eq(t, "");
	free(t);
	t = compact_boundary(&w, 1);
	ck_assert_str_eq(t, "1:" "6ed0337140bd32b4adc5000f76333bd8"
	    "ca6b2b2c9e0bc354335cf341456290e8");
	free(t);
}
END_TEST

/* Step 5, every row of the truth table. */
START_TEST(a5_2_should_compact)
{
	struct compact_bounds	 b, none;
	struct mem_blocks	 empty = { NULL, 0 };
	char			*h2 = NULL, *h3 = NULL, *h1 = NULL, *bd;

	say(0, 6);
	compact_bounds(&C.nc_msgs, 22, 22, &b);		/* 4, 2 */
	h1 = hash_of(1);
	h2 = hash_of(2);
	h3 = hash_of(3);
	none = b;
	none.cb_old = none.cb_recent;
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &none, &empty),
	    COMPACT_NONE);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, &empty),
	    COMPACT_FIRST);
	bd = xasprintf("2:%s", h2);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, state(h3, bd)),
	    COMPACT_NONE);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, state(h2, bd)),
	    COMPACT_RECENT);
	free(bd);
	bd = xasprintf("1:%s", h1);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, state(h3, bd)),
	    COMPACT_SHIFTED);
	free(bd);
	/* Only the hash after the first ':' counts; a legacy bare hash is
	 * the hash. */
	bd = xasprintf("9:%s", h2);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, state(h3, bd)),
	    COMPACT_NONE);
	free(bd);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, state(h3, h2)),
	    COMPACT_NONE);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, state(h3, h1)),
	    COMPACT_SHIFTED);
	ck_assert_int_eq(compact_decide(&C.nc_msgs, &b, state(h3, "")),
	    COMPACT_SHIFTED);
	free(h1);
	free(h2);
	free(h3);
}
END_TEST

static size_t
prev(const char *boundary)
{
	return compact_prev_start(&C.nc_msgs, state("", boundary));
}

/* Step 7c: the fast idx:hash lookup, a stale index, a hash found
 * nowhere, an index that is not a number, a legacy bare hash. */
START_TEST(a5_2_prev_boundary_lookup)
{
	struct mem_blocks	 empty = { NULL, 0 };
	char			*h3, *h0, *v;

	say(0, 4);
	nodectx_say(&C, "user", C.nc_msgs.v[3].m_content);	/* 4 == 3 */
	say(5, 2);
	h3 = hash_of(3);
	h0 = hash_of(0);
	ck_assert_uint_eq(compact_prev_start(&C.nc_msgs, &empty), 0);
	v = xasprintf("4:%s", h3);	/* fast: 4, not the scan's 3 */
	ck_assert_uint_eq(prev(v), 4);
	free(v);
	v = xasprintf("2:%s", h3);		/* stale index: the scan */
	ck_assert_uint_eq(prev(v), 3);
	free(v);
	v = xasprintf("99:%s", h3);		/* out of range */
	ck_assert_uint_eq(prev(v), 3);
	free(v);
	v = xasprintf("-1:%s", h3);
	ck_assert_uint_eq(prev(v), 3);
	free(v);
	v = xasprintf(" +4 :%s", h3);		/* Python's int() */
	ck_assert_uint_eq(prev(v), 4);
	free(v);
	ck_assert_uint_eq(prev("3:deadbeef"), 0);	/* mismatch */
	v = xasprintf("x:%s", h3);		/* unparsable: whole value */
	ck_assert_uint_eq(prev(v), 0);
	free(v);
	ck_assert_uint_eq(prev(h3), 3);		/* legacy */
	v = xasprintf("0:%s", h0);
	ck_assert_uint_eq(prev(v), 0);
	free(v);
	free(h3);
	free(h0);
}
END_TEST

/* ---- A5.2 the node ------------------------------------------------------ */

START_TEST(a5_2_no_discussion_or_short)
{
	say(0, 8);
	settings(SMALL "}");
	C.nc_discussion = "";
	ck_out("");
	C.nc_discussion = "d";
	wmsgs_free(&C.nc_msgs);
	say(0, 1);
	ck_out("");
	put_old("S", "h", "0:h");
	ck_out("<context_compactor_old>S</context_compactor_old>");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

START_TEST(a5_2_first_compaction_writes_old)
{
	char	*t, *h3, *h0, *b;

	say(0, 6);
	settings(SMALL ", \"oldContextTokens\": 1000}");
	fakeask_answer("S1");
	ck_out("<context_compactor_old>S1</context_compactor_old>");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	t = text_of(0, 4);
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, t);
	ck_assert_str_eq(fakeask_call(0)->ac_system, SYS);
	h3 = hash_of(3);
	h0 = hash_of(0);
	b = xasprintf("0:%s", h0);
	ck_entry("old", 2, 0, "S1", h3);
	ck_entry("old", 2, 1, COMPACT_BOUNDARY, b);
	ck_entry("oldest", 0, 0, NULL, NULL);
	free(t);
	free(h3);
	free(h0);
	free(b);
}
END_TEST

/* A long conversation's first compaction folds its Oldest territory
 * too (there is no previous boundary: from message 0). */
START_TEST(a5_2_first_run_folds_oldest)
{
	char	*t, *h, *b;

	say(0, 6);
	settings(SMALL "}");
	answer3("1");
	ck_out("<context_compactor_old>S1</context_compactor_old>\n"
	    "<context_compactor_oldest>U1</context_compactor_oldest>");
	ck_assert_uint_eq(fakeask_ncalls(), 3);
	t = text_of(2, 4);
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, t);
	free(t);
	t = text_of(0, 2);
	ck_assert_str_eq(fakeask_call(1)->ac_prompt, t);
	free(t);
	ck_assert_str_eq(fakeask_call(2)->ac_prompt, "\n\nN1");
	h = hash_of(2);
	b = xasprintf("2:%s", h);
	free(h);
	h = hash_of(3);
	ck_entry("old", 2, 0, "S1", h);
	ck_entry("old", 2, 1, COMPACT_BOUNDARY, b);
	free(h);
	h = hash_of(0);
	ck_entry("oldest", 1, 0, "U1", h);
	free(h);
	free(b);
}
END_TEST

/* What was written is what the next run finds: nothing to do. */
START_TEST(a5_2_round_trip_no_recompaction)
{
	say(0, 6);
	settings(SMALL "}");
	compact3("1");
	ck_out("<context_compactor_old>S1</context_compactor_old>\n"
	    "<context_compactor_oldest>U1</context_compactor_oldest>");
	ck_assert_uint_eq(fakeask_ncalls(), 3);
}
END_TEST

/* Two more messages move both windows by two: only the two messages
 * that left the Old window are folded into Oldest. */
START_TEST(a5_2_shift_folds_only_new)
{
	char	*t, *h, *b;

	say(0, 6);
	settings(SMALL "}");
	compact3("1");
	say(6, 2);
	answer3("2");
	ck_out("<context_compactor_old>S2</context_compactor_old>\n"
	    "<context_compactor_oldest>U2</context_compactor_oldest>");
	ck_assert_uint_eq(fakeask_ncalls(), 6);
	t = text_of(4, 6);
	ck_assert_str_eq(fakeask_call(3)->ac_prompt, t);
	free(t);
	t = text_of(2, 4);
	ck_assert_str_eq(fakeask_call(4)->ac_prompt, t);
	free(t);
	ck_assert_str_eq(fakeask_call(5)->ac_prompt, "U1\n\nN2");
	h = hash_of(4);
	b = xasprintf("4:%s", h);
	free(h);
	h = hash_of(5);
	ck_entry("old", 2, 0, "S2", h);
	ck_entry("old", 2, 1, COMPACT_BOUNDARY, b);
	free(h);
	free(b);
}
END_TEST

/* The Old window's start stays, its end moves: call 1 only. */
START_TEST(a5_2_recent_change_redoes_old_only)
{
	char	*t;

	say(0, 6);
	settings(SMALL ", \"oldContextTokens\": 1000}");
	fakeask_answer("S1");
	free(out_of());
	say(6, 1);
	fakeask_answer("S2");
	ck_out("<context_compactor_old>S2</context_compactor_old>");
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	t = text_of(0, 5);
	ck_assert_str_eq(fakeask_call(1)->ac_prompt, t);
	free(t);
}
END_TEST

/* QUIRK kept: a boundary found nowhere folds the whole Oldest
 * territory again, on top of the rolling summary. */
START_TEST(a5_2_lost_boundary_refolds)
{
	char	*t, *h3;

	say(0, 6);
	settings(SMALL "}");
	h3 = hash_of(3);
	put_old("S0", h3, "2:0000");
	put_oldest("U0", "x");
	compact3("1");
	t = text_of(0, 2);
	ck_assert_str_eq(fakeask_call(1)->ac_prompt, t);
	ck_assert_str_eq(fakeask_call(2)->ac_prompt, "U0\n\nN1");
	free(t);
	free(h3);
}
END_TEST

/* A legacy boundary (no "idx:") that still matches: no compaction;
 * one that moved: found by the scan. */
START_TEST(a5_2_legacy_boundary)
{
	char	*h2, *h3, *t;

	say(0, 6);
	settings(SMALL "}");
	h2 = hash_of(2);
	h3 = hash_of(3);
	put_old("S0", h3, h2);
	put_oldest("U0", "x");
	ck_out("<context_compactor_old>S0</context_compactor_old>\n"
	    "<context_compactor_oldest>U0</context_compactor_oldest>");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	say(6, 2);
	compact3("1");
	t = text_of(2, 4);
	ck_assert_str_eq(fakeask_call(1)->ac_prompt, t);
	free(t);
	free(h2);
	free(h3);
}
END_TEST

/* Bracket placeholders only, each replaced everywhere, in order; no
 * {variable} is substituted anywhere. */
START_TEST(a5_2_placeholders)
{
	char	*o, *r, *w;

	nodectx_say(&C, "system", "sys {name} [RECENT_MESSAGES]");
	say(1, 5);
	settings(SMALL ", \"oldSectionSystemPrompt\": \"A {name}\", "
	    "\"oldSectionPrompt\": \"<[MESSAGES_TO_SUMMARIZE]|"
	    "[RECENT_MESSAGES]|[MESSAGES_TO_SUMMARIZE]>\", "
	    "\"neutralSummarySystemPrompt\": \"\", "
	    "\"neutralSummaryPrompt\": \"N:[MESSAGES_TO_SUMMARIZE]{name}\", "
	    "\"oldestUpdateSystemPrompt\": \"C\", "
	    "\"oldestUpdatePrompt\": \"[NEW_CONTENT]/[EXISTING_SUMMARY]/"
	    "[NEW_CONTENT]\"}");
	compact3("1");
	o = text_of(2, 4);
	r = text_of(4, 6);
	w = xasprintf("<%s|%s|%s>", o, r, o);
	ck_assert_str_eq(fakeask_call(0)->ac_system, "A {name}");
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, w);
	free(w);
	free(o);
	/* The system message is a message like the others; text put in
	 * for [MESSAGES_TO_SUMMARIZE] that holds [RECENT_MESSAGES] is
	 * replaced too, as WilmerAI's str.replace chain does. */
	o = text_of(0, 2);
	ck_assert_ptr_nonnull(strstr(o, "system: sys {name} [RECENT"));
	ck_assert_str_eq(fakeask_call(1)->ac_system, "");
	w = xasprintf("N:%s{name}", o);
	ck_assert_str_eq(fakeask_call(1)->ac_prompt, w);
	free(w);
	ck_assert_str_eq(fakeask_call(2)->ac_system, "C");
	ck_assert_str_eq(fakeask_call(2)->ac_prompt, "N1//N1");
	free(o);
	free(r);
}
END_TEST

/* Empty or blank answers: call 1 keeps the Old text, call 2 the
 * shifted text, call 3 the Oldest summary it had. */
START_TEST(a5_2_empty_reply_fallbacks)
{
	char	*o, *s, *w;

	say(0, 6);
	settings(SMALL "}");
	put_oldest("U0", "x");
	fakeask_answer(" \n\t");
	fakeask_answer("");
	fakeask_answer("  ");
	o = text_of(2, 4);
	s = text_of(0, 2);
	w = xasprintf("<context_compactor_old>%s</context_compactor_old>\n"
	    "<context_compactor_oldest>U0</context_compactor_oldest>", o);
	ck_out(w);
	free(w);
	w = xasprintf("U0\n\n%s", s);
	ck_assert_str_eq(fakeask_call(2)->ac_prompt, w);
	free(w);
	free(o);
	free(s);
}
END_TEST

/* An empty prompt is not sent: the call counts as answering nothing. */
START_TEST(a5_2_empty_prompt_not_sent)
{
	char	*o, *w;

	say(0, 6);
	settings(SMALL ", \"oldContextTokens\": 1000, \"oldSectionPrompt\": "
	    "\"\"}");
	o = text_of(0, 4);
	w = xasprintf("<context_compactor_old>%s</context_compactor_old>", o);
	ck_out(w);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	free(w);
	free(o);
}
END_TEST

/* The three calls: the settings' endpoint, preset and size, never
 * streamed, never the answer to the client. */
START_TEST(a5_2_call_shape)
{
	const struct fakeask_call *c;
	size_t	 i;

	say(0, 6);
	settings(SMALL ", \"preset\": \"P\", \"maxResponseSizeInTokens\": 99}");
	C.nc_responder = C.nc_stream = true;
	compact3("1");
	ck_assert_uint_eq(fakeask_ncalls(), 3);
	for (i = 0; i < 3; i++) {
		c = fakeask_call(i);
		ck_assert_str_eq(c->ac_endpoint, "E");
		ck_assert_str_eq(c->ac_preset, "P");
		ck_assert_int_eq(c->ac_max_tokens, 99);
		ck_assert_str_eq(c->ac_system, SYS);
		ck_assert(!c->ac_responder && !c->ac_deliver && !c->ac_stream);
	}
	ck_assert_int_eq(C.nc_rq.fr_emits, 0);
}
END_TEST

/* A call that fails fails the node, and nothing is written: the next
 * request tries again. */
START_TEST(a5_2_failed_call_writes_nothing)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	say(0, 6);
	settings(SMALL "}");
	fakeask_answer("S1");
	fakeask_fail(502, "backend down");
	ck_fails_http(502, "backend down");
	ck_entry("old", 0, 0, NULL, NULL);
	fakeask_answer("S1");
	fakeask_cancel();
	ck_assert_int_eq(run(&out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_entry("old", 0, 0, NULL, NULL);
	buf_free(&out);
	/* The lock went back each time. */
	ck_assert_int_eq(store_lock(S, "compactor:d", "other", 600), 1);
}
END_TEST

START_TEST(a5_2_no_endpoint_fails_only_to_compact)
{
	say(0, 6);
	settings("{\"recentContextTokens\": 22, \"oldContextTokens\": 22, "
	    "\"lookbackStartTurn\": 0}");
	ck_fails("cc.json names no endpointName");
	wmsgs_free(&C.nc_msgs);
	say(0, 2);
	ck_out("");
}
END_TEST

/* Another request holds the discussion's compactor lock: the stored
 * summaries answer, nothing is asked. */
START_TEST(a5_2_lock_busy_answers_cached)
{
	say(0, 6);
	settings(SMALL "}");
	ck_assert_int_eq(store_lock(S, "compactor:d", "other", 600), 1);
	ck_out("");
	put_oldest("U0", "x");
	ck_out("<context_compactor_oldest>U0</context_compactor_oldest>");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

/* lookbackStartTurn: the newest n left out when there are more than
 * n; 0, negative or too many: all of them. */
START_TEST(a5_2_lookback)
{
	static const struct { const char *lb; size_t o, r; } t[] = {
		{ "3", 2, 4 }, { "9", 5, 7 }, { "10", 5, 7 }, { "0", 5, 7 },
		{ "-2", 5, 7 } };
	static char	 ids[5][8];
	char		 json[200], *w;
	size_t		 i;

	say(0, 9);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(json, sizeof(json), "{\"endpointName\": \"E\", "
		    "\"recentContextTokens\": 22, \"oldContextTokens\": 1000, "
		    "\"lookbackStartTurn\": %s}", t[i].lb);
		settings(json);
		snprintf(ids[i], sizeof(ids[i]), i == 0 ? "d" : "d%zu", i);
		C.nc_discussion = ids[i];
		fakeask_answer("S");
		free(out_of());
		w = text_of(0, t[i].r);
		ck_assert_str_eq(fakeask_call(i)->ac_prompt, w);
		free(w);
	}
	C.nc_discussion = "d";
	(void)t[0].o;
	/* Too few left after the skip: the stored summaries only. */
	settings("{\"endpointName\": \"E\", \"lookbackStartTurn\": 8}");
	ck_out("<context_compactor_old>S</context_compactor_old>");
	ck_assert_uint_eq(fakeask_ncalls(), 5);
}
END_TEST

/* A5.3: each section replaced as a whole, the other left alone; the
 * state goes with its discussion. */
START_TEST(a5_3_state_rows)
{
	put_old("S", "h", "0:h");
	put_oldest("U", "x");
	put_old("S2", "h2", "1:h2");
	ck_entry("old", 2, 0, "S2", "h2");
	ck_entry("old", 2, 1, COMPACT_BOUNDARY, "1:h2");
	ck_entry("oldest", 1, 0, "U", "x");
	ck_assert_int_eq(store_exec(S, "DELETE FROM discussions WHERE key = "
	    "'d'", ""), 1);
	ck_entry("old", 0, 0, NULL, NULL);
	ck_entry("oldest", 0, 0, NULL, NULL);
}
END_TEST

/* A5.4: old and oldest, each only when not empty. */
START_TEST(a5_4_output)
{
	say(0, 1);
	settings(SMALL "}");
	ck_out("");
	put_oldest("U", "x");
	ck_out("<context_compactor_oldest>U</context_compactor_oldest>");
	put_old("S", "h", "0:h");
	ck_out("<context_compactor_old>S</context_compactor_old>\n"
	    "<context_compactor_oldest>U</context_compactor_oldest>");
	put_oldest("", "x");
	ck_out("<context_compactor_old>S</context_compactor_old>");
	put_old("", "h", "0:h");
	ck_out("");
}
END_TEST

static Suite *
compactor_suite(void)
{
	Suite	*s = suite_create("compactor");
	TCase	*tc;

	tc = test_case(s, "a5_1_settings", NULL, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a5_1_no_settings_answers_empty);
	tcase_add_test(tc, a5_1_bad_settings_fail);
	tcase_add_test(tc, a5_1_defaults);
	tcase_add_test(tc, a5_1_estimation_level_scales_budgets);
	tcase_add_test(tc, a5_1_level_moves_boundary);
	tc = test_case(s, "a5_2_windows", NULL, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a5_2_bounds);
	tcase_add_test(tc, a5_2_bounds_strict);
	tcase_add_test(tc, a5_2_text_format);
	tcase_add_test(tc, a5_2_should_compact);
	tcase_add_test(tc, a5_2_prev_boundary_lookup);
	tc = test_case(s, "a5_2_node", NULL, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a5_2_no_discussion_or_short);
	tcase_add_test(tc, a5_2_first_compaction_writes_old);
	tcase_add_test(tc, a5_2_first_run_folds_oldest);
	tcase_add_test(tc, a5_2_round_trip_no_recompaction);
	tcase_add_test(tc, a5_2_shift_folds_only_new);
	tcase_add_test(tc, a5_2_recent_change_redoes_old_only);
	tcase_add_test(tc, a5_2_lost_boundary_refolds);
	tcase_add_test(tc, a5_2_legacy_boundary);
	tcase_add_test(tc, a5_2_placeholders);
	tcase_add_test(tc, a5_2_empty_reply_fallbacks);
	tcase_add_test(tc, a5_2_empty_prompt_not_sent);
	tcase_add_test(tc, a5_2_call_shape);
	tcase_add_test(tc, a5_2_failed_call_writes_nothing);
	tcase_add_test(tc, a5_2_no_endpoint_fails_only_to_compact);
	tcase_add_test(tc, a5_2_lock_busy_answers_cached);
	tcase_add_test(tc, a5_2_lookback);
	tc = test_case(s, "a5_3_state", a5_3_state_rows, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tc = test_case(s, "a5_4_output", NULL, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a5_4_output);
	return s;
}

int
main(void)
{
	return check_main(compactor_suite());
}
