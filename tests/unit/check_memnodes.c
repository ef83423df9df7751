/* check_memnodes.c - the memory node types, run through the registry on a scratch store with the LLM call stubbed: reading memories, the summary and the state document back, writing them, the rolling summary, keyword and vector search. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../../worker/engine/registry.h"
#include "../../worker/memory/memstore.h"
#include "../../worker/memory/vecmem.h"
#include "../../worker/memory/vecmem_text.h"
#include "../testmain.h"
#include "nodectx.h"
#include "stubs_ask.h"

#define BRK		"--ChunkBreak--"
#define SUMSEP		"\n------------\n"
#define NO_SUMMARY	"There is not yet a summary file"
#define NO_MEMORIES	"There are not yet any memories"

static struct nodectx	 C;
static struct store	*S;

static void
setup(void)
{
	nodectx_open(&C, "memnodes");
	S = C.nc_db.sd_store;
	C.nc_discussion = "d";
	fakeask_reset();
}

static void
teardown(void)
{
	fakeask_reset();
	nodectx_close(&C);
	S = NULL;
}

/* Run node (the reference is taken) through its registered handler. */
static int
run(json_t *node, struct buf *out, struct wresult *res)
{
	const char	*type = json_string_value(json_object_get(node,
			    "type"));
	const struct node_type *t = node_type_find(type);
	bool		 streamed;
	int		 rc;

	ck_assert_msg(t != NULL, "no node type %s", type);
	rc = nodectx_run(&C, t, node, out, &streamed, res);
	ck_assert(!streamed);
	return rc;
}

/* The output of a node that must succeed. Caller frees. */
static char *
out_of(json_t *node)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_msg(run(node, &out, &res) == 0, "node failed: %s",
	    res.r_message);
	return out.b_data != NULL ? buf_take(&out) : xstrdup("");
}

#define ck_out(node, want) do {						\
	char	*s_ = out_of(node);					\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

/* A node that must fail with http, its message holding needle. */
static void
ck_node_fails(json_t *node, int http, const char *needle)
{
	char		*type = xstrdup(json_string_value(json_object_get(node,
			    "type")));
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_int_eq(run(node, &out, &res), -1);
	nodectx_ck_fail(&res, http, type, needle);
	buf_free(&out);
	free(type);
}

#define N1(type)		nodectx_json("{s:s}", "type", type)
#define N2(type, k, fmt, v)	nodectx_json("{s:s, s:" fmt "}", "type", \
				    type, k, v)

/* Memories t<from>..t<to> of "d", with hashes h<from>..h<to>. */
static void
memories(int from, int to)
{
	struct mem_blocks	 m;
	char			 t[16], h[16];
	int64_t			 last = 0;
	int			 i;

	ck_assert_int_eq(memstore_read(S, "d", &m, NULL), 0);
	if (m.n > 0)
		last = m.v[m.n - 1].mb_id;
	mem_blocks_free(&m);
	for (i = from; i <= to; i++) {
		snprintf(t, sizeof(t), "t%d", i);
		snprintf(h, sizeof(h), "h%d", i);
		ck_assert_int_gt(last = memstore_append(S, "d", last, t, h), 0);
	}
}

/* Messages m<from>..m<to>, users on odd numbers. */
static void
talk(int from, int to)
{
	char	 s[16];
	int	 i;

	for (i = from; i <= to; i++) {
		snprintf(s, sizeof(s), "m%d", i);
		nodectx_say(&C, i % 2 == 1 ? "user" : "assistant", s);
	}
}

/* The summary of "d" and the hash it is made up to ("text@hash"), or
 * "" when there is none. Caller frees. */
static char *
summary(void)
{
	char	*t = NULL, *h = NULL, *r;
	int	 rc = memstore_summary(S, "d", &t, &h);

	ck_assert_int_ne(rc, -1);
	r = rc == 1 ? xasprintf("%s@%s", t, h) : xstrdup("");
	free(t);
	free(h);
	return r;
}

#define ck_summary(want) do {						\
	char	*m_ = summary();					\
	ck_assert_str_eq(m_, want);					\
	free(m_);							\
} while (0)

static void
ck_prompt(size_t i, const char *want)
{
	ck_assert_ptr_nonnull(fakeask_call(i)->ac_prompt);
	ck_assert_str_eq(fakeask_call(i)->ac_prompt, want);
}

/* ---- reading back ---------------------------------------------------- */

/* The latest memories: 3 by default (0 too), -1 all, joined by chunk
 * breaks that customDelimiter replaces. */
START_TEST(recent_memories)
{
	const char	*T = "RecentMemorySummarizerTool";

	ck_out(N1(T), "No memories have been generated yet");
	memories(1, 5);
	ck_out(N1(T), "t3" BRK "t4" BRK "t5");
	ck_out(N2(T, "maxSummaryChunksFromFile", "i", 0), "t3" BRK "t4" BRK
	    "t5");
	ck_out(N2(T, "maxSummaryChunksFromFile", "i", 2), "t4" BRK "t5");
	ck_out(N2(T, "maxSummaryChunksFromFile", "s", "1"), "t5");
	ck_out(N2(T, "maxSummaryChunksFromFile", "i", -1), "t1" BRK "t2" BRK
	    "t3" BRK "t4" BRK "t5");
	ck_out(N2(T, "maxSummaryChunksFromFile", "i", 40), "t1" BRK "t2" BRK
	    "t3" BRK "t4" BRK "t5");
	ck_out(N2(T, "customDelimiter", "s", "\n\n"), "t3\n\nt4\n\nt5");
	ck_out(N2(T, "customDelimiter", "s", ""), "t3t4t5");
	/* the scope of an API key is another discussion */
	C.nc_scope = (struct str){ "0123456789abcdef", 16 };
	ck_out(N1(T), "No memories have been generated yet");
}
END_TEST

/* Without a discussion: the recent messages themselves, role labels
 * removed, the last one and the lookback left out. */
START_TEST(recent_without_discussion)
{
	const char	*T = "RecentMemorySummarizerTool";

	C.nc_discussion = "";
	C.nc_rq.fr_store = NULL;	/* no store is needed */
	talk(1, 2);
	nodectx_say(&C, "user", "User: m3");
	talk(4, 6);
	ck_out(N1(T), "There are no memories to grab yet");
	ck_out(nodectx_json("{s:s, s:i, s:i}", "type", T, "maxTurnsToPull", 4,
	    "lookbackStart", 1), "m2\nm3\nm4");
	ck_out(nodectx_json("{s:s, s:i, s:i}", "type", T, "maxTurnsToPull", 4,
	    "lookbackStart", 6), "There are no memories to grab yet");
}
END_TEST

START_TEST(current_memory)
{
	const char	*T = "GetCurrentMemoryFromFile";

	ck_out(N1(T), NO_MEMORIES);
	memories(1, 3);
	ck_out(N1(T), "t1" BRK "t2" BRK "t3");
	ck_out(N2(T, "customDelimiter", "s", " | "), "t1 | t2 | t3");
	C.nc_discussion = "";
	C.nc_rq.fr_store = NULL;
	ck_out(N1(T), NO_MEMORIES);
}
END_TEST

START_TEST(current_summary)
{
	const char	*T = "GetCurrentSummaryFromFile";

	ck_out(N1(T), NO_SUMMARY);
	ck_assert_int_eq(memstore_summary_put(S, "d", "So far: {x}.", "h1"), 0);
	ck_out(N1(T), "So far: {x}.");
	C.nc_discussion = "";
	ck_out(N1(T), NO_SUMMARY);
}
END_TEST

START_TEST(state_document)
{
	const char	*T = "GetCurrentStateDocument";

	ck_out(N1(T), "No state document has been created yet");
	ck_assert_int_eq(memstore_state_put(S, "d", " \n\t"), 0);
	ck_out(N1(T), "No state document has been created yet");
	ck_assert_int_eq(memstore_state_put(S, "d", "# Now\nAnn is here\n"), 0);
	ck_out(N1(T), "# Now\nAnn is here\n");
	C.nc_discussion = "";
	ck_out(N1(T), "No state document has been created yet");
}
END_TEST

/* The memories the summary does not hold yet. */
START_TEST(summary_gathering)
{
	const char	*T = "ChatSummaryMemoryGatheringTool";

	memories(1, 4);
	ck_out(N1(T), "t1" SUMSEP "t2" SUMSEP "t3" SUMSEP "t4");
	ck_assert_int_eq(memstore_summary_put(S, "d", "sum", "h2"), 0);
	ck_out(N1(T), "t3" SUMSEP "t4");
	ck_assert_int_eq(memstore_summary_put(S, "d", "sum", "h4"), 0);
	ck_out(N1(T), "");
	/* a summary of memories no longer there: all of them */
	ck_assert_int_eq(memstore_summary_put(S, "d", "sum", "gone"), 0);
	ck_out(N1(T), "t1" SUMSEP "t2" SUMSEP "t3" SUMSEP "t4");
	C.nc_discussion = "";
	talk(1, 4);
	/* the three messages before the last, but their own last */
	ck_out(N2(T, "maxTurnsToPull", "i", 3), "m2\nm3");
}
END_TEST

/* Every node that reads the store says which workflow, node and store
 * failed. */
START_TEST(store_errors_name_node)
{
	static const char *const types[] = { "RecentMemorySummarizerTool",
	    "GetCurrentMemoryFromFile", "GetCurrentSummaryFromFile",
	    "GetCurrentStateDocument", "ChatSummaryMemoryGatheringTool",
	    "chatSummarySummarizer", "VectorMemorySearch", NULL };
	size_t	 i;

	C.nc_rq.fr_store = NULL;
	for (i = 0; types[i] != NULL; i++)
		ck_node_fails(N1(types[i]), 500, "the memory store: no "
		    "database in this test");
	ck_node_fails(nodectx_json("{s:s, s:s, s:s}", "type",
	    "MemoryKeywordSearchPerformerTool", "keywords", "x",
	    "searchTarget", "RecentMemories"), 500, "the memory store: ");
	ck_node_fails(nodectx_json("{s:s, s:b}", "type", "FullChatSummary",
	    "isManualConfig", 1), 500, "the memory store: ");
	ck_node_fails(nodectx_json("{s:s, s:s}", "type",
	    "WriteCurrentSummaryToFileAndReturnIt", "input", "x"), 500,
	    "the memory store: ");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

/* ---- the rolling summary --------------------------------------------- */

static json_t *
summarizer(long loop, long min)
{
	json_t	*n = nodectx_json("{s:s, s:s, s:s, s:s, s:s}", "type",
		    "chatSummarySummarizer", "endpointName", "sum-ep", "preset",
		    "sum-pre", "systemPrompt", "SYS {name}",
		    "prompt",
		    "Summary: [CHAT_SUMMARY]\nNew: [LATEST_MEMORIES]");

	if (loop > 0)
		json_object_set_new(n, "loopIfMemoriesExceed",
		    json_integer(loop));
	if (min > 0)
		json_object_set_new(n, "minMemoriesPerSummary",
		    json_integer(min));
	return n;
}

/* Batches of loopIfMemoriesExceed (3); a smaller last batch only from
 * minMemoriesPerSummary (3); each answer the next batch's summary. */
START_TEST(summarizer_batches)
{
	memories(1, 7);
	fakeask_answer("S1 {name}");
	fakeask_answer("S2");
	ck_out(summarizer(0, 0), "S2");
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	ck_assert_str_eq(fakeask_call(0)->ac_endpoint, "sum-ep");
	ck_assert_str_eq(fakeask_call(0)->ac_preset, "sum-pre");
	ck_assert_str_eq(fakeask_call(0)->ac_system, "SYS Ann");
	ck_prompt(0, "Summary: " NO_SUMMARY "\nNew: t1" SUMSEP "t2" SUMSEP
	    "t3");
	/* the summary's braces reach the next prompt as they are */
	ck_prompt(1, "Summary: S1 {name}\nNew: t4" SUMSEP "t5" SUMSEP "t6");
	ck_summary("S2@h6");
	ck_assert_str_eq(C.nc_rq.fr_phase, "wf node 3/5: chat summary");
	/* one left is below three; three are a batch */
	ck_out(summarizer(0, 0), "S2");
	memories(8, 9);
	fakeask_answer("S3");
	ck_out(summarizer(0, 0), "S3");
	ck_prompt(2, "Summary: S2\nNew: t7" SUMSEP "t8" SUMSEP "t9");
	ck_summary("S3@h9");
	ck_assert_uint_eq(fakeask_ncalls(), 3);
}
END_TEST

START_TEST(summarizer_settings)
{
	/* as many as a batch holds, below the minimum: not yet */
	memories(1, 2);
	ck_out(summarizer(2, 3), NO_SUMMARY);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	memories(3, 5);
	fakeask_answer("S12");
	fakeask_answer("S34");
	fakeask_answer("S5");
	ck_out(summarizer(2, 1), "S5");
	ck_prompt(2, "Summary: S34\nNew: t5");
	ck_summary("S5@h5");
	/* loopIfMemoriesExceed below 1 is 1 */
	memories(6, 7);
	fakeask_answer("S6");
	fakeask_answer("S7");
	ck_out(summarizer(0, 0), "S5");	/* two are below three */
	ck_out(nodectx_json("{s:s, s:s, s:s, s:i, s:i}", "type",
	    "chatSummarySummarizer", "endpointName", "e", "prompt",
	    "[LATEST_MEMORIES]", "loopIfMemoriesExceed", 0,
	    "minMemoriesPerSummary", 1), "S7");
	ck_prompt(3, "t6");
	ck_prompt(4, "t7");
}
END_TEST

/* Without either placeholder: one plain call, its answer the summary up
 * to the latest memory. Nothing new: the summary, no call. */
START_TEST(summarizer_plain_and_idle)
{
	json_t	*plain = nodectx_json("{s:s, s:s, s:s}", "type",
		    "chatSummarySummarizer", "endpointName", "e", "prompt",
		    "Summarize {name}");

	memories(1, 2);
	fakeask_answer("All of it");
	ck_out(plain, "All of it");
	ck_prompt(0, "Summarize Ann");
	ck_summary("All of it@h2");
	ck_out(summarizer(0, 0), "All of it");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	C.nc_discussion = "";
	ck_out(summarizer(0, 0), NO_SUMMARY);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
}
END_TEST

START_TEST(summarizer_error)
{
	memories(1, 6);
	fakeask_answer("S1");
	fakeask_fail(500, "backend gone");
	ck_node_fails(summarizer(0, 0), 500, "backend gone");
	ck_summary("S1@h3");	/* the first batch is kept */
}
END_TEST

START_TEST(write_summary)
{
	const char	*T = "WriteCurrentSummaryToFileAndReturnIt";

	ck_node_fails(N1(T), 500, "No 'input' found in config for saving "
	    "summary.");
	ck_node_fails(N2(T, "input", "s", "{name}'s story"), 500,
	    "Cannot save summary without a last hash and no memory chunks "
	    "exist.");
	memories(1, 3);
	ck_out(N2(T, "input", "s", "{name}'s story"), "Ann's story");
	ck_summary("Ann's story@h3");
	C.nc_discussion = "";
	ck_out(N2(T, "input", "s", "no id"), "no id");
	C.nc_discussion = "d";
	ck_summary("Ann's story@h3");
}
END_TEST

/* ---- the nodes that write memories ----------------------------------- */

static void
memory_settings(bool vector)
{
	nodectx_settings(&C, nodectx_json("{s:s, s:i, s:i, s:s, s:b}",
	    "endpointName", "mem-ep", "lookbackStartTurn", 1,
	    "chunkEstimatedTokenSize", 1, "prompt", "chunk=[TextChunk]",
	    "useVectorForQualityMemory", vector));
}

static void
user_says(const char *key, const char *value)
{
	json_object_set_new(C.nc_user_json, key, json_string(value));
}

static char *
ledger(void)
{
	struct mem_blocks	 m;
	struct buf		 b = BUF_INIT;
	size_t			 i;

	ck_assert_int_eq(memstore_read(S, "d", &m, NULL), 0);
	buf_adds(&b, "");
	for (i = 0; i < m.n; i++)
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", m.v[i].mb_text);
	mem_blocks_free(&m);
	return buf_take(&b);
}

#define ck_ledger(want) do {						\
	char	*l_ = ledger();						\
	ck_assert_str_eq(l_, want);					\
	free(l_);							\
} while (0)

START_TEST(quality_memory)
{
	const char	*T = "QualityMemory";

	memory_settings(false);
	talk(1, 3);
	fakeask_answer("A1");
	fakeask_answer("A2");
	ck_out(N1(T), "");
	ck_prompt(0, "chunk=m1");
	ck_ledger("A1|A2");
	/* without a discussion: the user's recentMemoryToolWorkflow */
	C.nc_discussion = "";
	ck_out(N1(T), "No discussionId on this request; memories were not "
	    "generated.");
	user_says("recentMemoryToolWorkflow", "recent-tool");
	nodectx_flow_reply(&C, "from the tool", 0);
	ck_out(N1(T), "from the tool");
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_name, "recent-tool");
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_folder, NC_FOLDER);
	ck_assert_uint_eq(fakeask_ncalls(), 2);
}
END_TEST

/* File-style memories (even when the settings say vectors), then the
 * user's recentMemoryToolWorkflow. */
START_TEST(recent_memory)
{
	const char	*T = "RecentMemory";

	memory_settings(true);
	talk(1, 3);
	user_says("recentMemoryToolWorkflow", "");
	fakeask_answer("A1");
	fakeask_answer("A2");
	ck_node_fails(N1(T), 500, "this node runs the workflow the user "
	    "file's 'recentMemoryToolWorkflow' names, and it names none");
	ck_ledger("A1|A2");
	user_says("recentMemoryToolWorkflow", "recent-tool");
	nodectx_flow_reply(&C, "recent memories", 0);
	ck_out(N1(T), "recent memories");
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	ck_assert_uint_eq(nodectx_flow(&C, 0)->nf_ninputs, 0);
	/* a failed round fails the node before the workflow runs */
	talk(4, 5);
	fakeask_fail(500, "down");
	ck_node_fails(N1(T), 500, "down");
	ck_assert_uint_eq(C.nc_nflows, 1);
}
END_TEST

START_TEST(conversation_memory)
{
	const char	*T = "ConversationMemory";

	ck_node_fails(N1(T), 500, "'conversationMemoryToolWorkflow'");
	user_says("conversationMemoryToolWorkflow", "conv-tool");
	nodectx_flow_reply(&C, "conversation", 0);
	ck_out(N1(T), "conversation");
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_name, "conv-tool");
	C.nc_discussion = "";
	ck_out(N1(T), NO_MEMORIES);
	ck_assert_uint_eq(C.nc_nflows, 1);
}
END_TEST

/* isManualConfig reads the summary as it is; otherwise memories are
 * written first, and more than one new memory (or a summary of
 * unknown memories) runs chatSummaryToolWorkflow. */
START_TEST(full_chat_summary)
{
	const char	*T = "FullChatSummary";
	json_t		*manual = N2(T, "isManualConfig", "b", 1);

	memory_settings(false);
	user_says("chatSummaryToolWorkflow", "sum-tool");
	talk(1, 3);
	ck_out(json_incref(manual), "No summary found");
	ck_assert_int_eq(memstore_summary_put(S, "d", "old summary", "x"), 0);
	ck_out(json_incref(manual), "old summary");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	ck_ledger("");
	/* two memories, the summary's hash unknown: the workflow */
	fakeask_answer("A1");
	fakeask_answer("A2");
	nodectx_flow_reply(&C, "new summary", 0);
	ck_out(N1(T), "new summary");
	ck_ledger("A1|A2");
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_name, "sum-tool");
	/* up to date: the summary as it is */
	ck_assert_int_eq(memstore_summary_put(S, "d", "current", "x"), 0);
	{
		struct mem_blocks	 m;

		ck_assert_int_eq(memstore_read(S, "d", &m, NULL), 0);
		ck_assert_int_eq(memstore_summary_put(S, "d", "current",
		    m.v[1].mb_hash), 0);
		mem_blocks_free(&m);
	}
	ck_out(N1(T), "current");
	/* one new memory is not enough */
	talk(4, 4);
	fakeask_answer("A3");
	ck_out(N1(T), "current");
	ck_assert_uint_eq(C.nc_nflows, 1);
	C.nc_discussion = "";
	ck_out(N1(T), "");
	json_decref(manual);
}
END_TEST

/* ---- keyword search --------------------------------------------------- */

/* A text of about 220 estimated tokens ending with word: a message of
 * it is one conversation chunk. Caller frees. */
static char *
long_text(const char *word)
{
	struct buf	 b = BUF_INIT;
	int		 i;

	for (i = 0; i < 150; i++)
		buf_adds(&b, "lorem ");
	buf_adds(&b, word);
	return buf_take(&b);
}

static void
long_message(const char *role, const char *word)
{
	char	*t = long_text(word);

	nodectx_say(&C, role, t);
	free(t);
}

static json_t *
kw(const char *type, const char *keywords, const char *target)
{
	json_t	*n = N2(type, "keywords", "s", keywords);

	if (target != NULL)
		json_object_set_new(n, "searchTarget", json_string(target));
	return n;
}

START_TEST(kw_no_keywords)
{
	ck_out(N1("ConversationalKeywordSearchPerformerTool"),
	    "No keywords specified in Keyword Search node");
	ck_out(N1("MemoryKeywordSearchPerformerTool"),
	    "No keywords specified in Keyword Search node");
}
END_TEST

/* The conversation but its last message, in chunks: those holding the
 * keywords, best first, joined by chunk breaks. */
START_TEST(kw_conversation)
{
	const char	*T = "ConversationalKeywordSearchPerformerTool";
	char		*d = long_text("dragon"), *c = long_text("castle");
	char		*dc = long_text("dragon castle"), *want;

	long_message("user", "dragon");
	long_message("assistant", "castle");
	long_message("user", "dragon castle");
	long_message("assistant", "dragon castle");	/* the last: not
							   searched */
	ck_out(kw(T, "unicorn", NULL), "");
	/* both words, and near each other, first; then in order */
	vars_set(C.nc_vars, "kwvar", "castle dragon");
	want = xasprintf("%s" BRK "%s" BRK "%s", dc, d, c);
	ck_out(kw(T, "{kwvar}", "CurrentConversation"), want);
	free(want);
	/* MemoryKeywordSearchPerformerTool without a target searches the
	 * conversation too */
	want = xasprintf("%s" BRK "%s", c, dc);
	ck_out(kw("MemoryKeywordSearchPerformerTool", "castle", NULL), want);
	free(want);
	free(d);
	free(c);
	free(dc);
}
END_TEST

/* lookbackStartTurn: only the last messages, when there are more. */
START_TEST(kw_conversation_lookback)
{
	const char	*T = "ConversationalKeywordSearchPerformerTool";
	json_t		*n;
	char		*s;

	long_message("user", "dragon");
	long_message("assistant", "castle");
	long_message("user", "moat");
	n = kw(T, "dragon moat", NULL);
	json_object_set_new(n, "lookbackStartTurn", json_integer(3));
	ck_out(n, "There are no memories. This conversation has not gone "
	    "long enough for there to be memories.");
	/* the last two: the first message is not among them */
	n = kw(T, "dragon moat", NULL);
	json_object_set_new(n, "lookbackStartTurn", json_integer(2));
	s = long_text("moat");
	ck_out(n, s);
	free(s);
}
END_TEST

/* Speakers named in the recent messages are no keywords. */
START_TEST(kw_speakers_not_keywords)
{
	const char	*T = "ConversationalKeywordSearchPerformerTool";

	nodectx_say(&C, "user", "Bob: hello there");
	nodectx_say(&C, "assistant", "Carol: the dragon told bob a secret");
	nodectx_say(&C, "user", "Bob: go on");
	nodectx_say(&C, "assistant", "last");
	ck_out(kw(T, "bob", NULL), "");
	ck_out(kw(T, "Bob secret", NULL), "Bob: hello there\nCarol: the "
	    "dragon told bob a secret\nBob: go on");
}
END_TEST

/* RecentMemories: the discussion's memories but the newest three, those
 * sharing a word with the keywords, in order, labels removed. */
START_TEST(kw_memories)
{
	const char	*T = "MemoryKeywordSearchPerformerTool";
	int64_t		 last = 0;
	static const char *const texts[] = { "User: the dragon sleeps",
	    "a quiet day", "Assistant: dragon fire", "the castle",
	    "dragon again", "more dragon", "newest dragon", NULL };
	size_t		 i;

	for (i = 0; texts[i] != NULL; i++)
		ck_assert_int_gt(last = memstore_append(S, "d", last, texts[i],
		    "h"), 0);
	ck_out(kw(T, "dragon", "RecentMemories"), "the dragon sleeps\n\n"
	    "dragon fire");
	ck_out(kw(T, "castle", "RecentMemories"), "the castle");
	ck_out(kw(T, "castle", "Elsewhere"), "");
	C.nc_discussion = "";
	ck_out(kw(T, "dragon", "RecentMemories"), "");
}
END_TEST

/* ---- vector search ---------------------------------------------------- */

static void
facts(const char *key, const char *json)
{
	json_error_t	 e;
	json_t		*a = json_loads(json, 0, &e), *f[8];
	size_t		 i, n;

	ck_assert_msg(a != NULL, "%s", e.text);
	n = json_array_size(a);
	ck_assert_uint_le(n, 8);
	for (i = 0; i < n; i++)
		f[i] = json_array_get(a, i);
	ck_assert_int_eq(vecmem_store_chunk(S, key, f, n, false, key, 0, 0,
	    clock_wall_ms(), NULL), (long)n);
	json_decref(a);
}

#define FACTS	"[{\"title\": \"Tea\", \"summary\": \"Ann likes green tea\"," \
	" \"entities\": [\"Ann\"], \"key_phrases\": [\"green tea\"]}," \
	"{\"title\": \"Age\", \"summary\": \"Bob is forty\", \"entities\":" \
	" [\"Bob\"], \"key_phrases\": [\"birthday\"]}]"

START_TEST(vector_search)
{
	const char	*T = "VectorMemorySearch";
	char		 date[VECMEM_DATELEN], *want;
	json_t		*n;

	ck_out(N2(T, "input", "s", "tea"), "No relevant memories found in the "
	    "vector database for the given keywords.");
	facts("d", FACTS);
	facts("other", "[{\"title\": \"Tea\", \"summary\": \"Zed hates tea\", "
	    "\"entities\": [], \"key_phrases\": []}]");
	ck_out(N2(T, "input", "s", "tea"), "Ann likes green tea");
	vars_set(C.nc_vars, "q", "tea; Bob");
	/* best first: "bob" is the rarer word */
	ck_out(N2(T, "input", "s", "{q}"), "Bob is forty" VECMEM_SEP
	    "Ann likes green tea");
	n = nodectx_json("{s:s, s:s, s:i}", "type", T, "input", "tea; Bob",
	    "limit", 1);
	ck_out(n, "Bob is forty");
	vecmem_date(clock_wall_ms(), date);
	want = xasprintf("[%.10s] Bob is forty", date);
	ck_out(nodectx_json("{s:s, s:s, s:b}", "type", T, "input", "birthday",
	    "includeDates", 1), want);
	free(want);
	/* weights of the wrong shape and modes Sluice cannot run are set
	 * aside: it still searches by keywords */
	ck_out(nodectx_json("{s:s, s:s, s:[i, i], s:s}", "type", T, "input",
	    "forty", "bm25Weights", 1, 2, "searchMode", "semantic"),
	    "Bob is forty");
	ck_out(nodectx_json("{s:s, s:s, s:[f, f, f, f, f], s:b}", "type", T,
	    "input", "forty", "bm25Weights", 1.0, 2.0, 3.0, 4.0, 5.0,
	    "useRecencyScoring", 1), "Bob is forty");
	C.nc_discussion = "";
	ck_out(N2(T, "input", "s", "tea"), "Cannot perform VectorMemorySearch "
	    "without a discussionId.");
}
END_TEST

/* ---- the suite -------------------------------------------------------- */

static TCase *
tcase(Suite *s, const char *name)
{
	TCase	*tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *
memnodes_suite(void)
{
	Suite	*s = suite_create("memnodes");
	TCase	*tc;

	tc = tcase(s, "recent_memories");
	tcase_add_test(tc, recent_memories);
	tcase_add_test(tc, recent_without_discussion);
	tc = tcase(s, "read_back");
	tcase_add_test(tc, current_memory);
	tcase_add_test(tc, current_summary);
	tcase_add_test(tc, state_document);
	tcase_add_test(tc, summary_gathering);
	tcase_add_test(tc, store_errors_name_node);
	tc = tcase(s, "rolling_summary");
	tcase_add_test(tc, summarizer_batches);
	tcase_add_test(tc, summarizer_settings);
	tcase_add_test(tc, summarizer_plain_and_idle);
	tcase_add_test(tc, summarizer_error);
	tcase_add_test(tc, write_summary);
	tc = tcase(s, "writers");
	tcase_add_test(tc, quality_memory);
	tcase_add_test(tc, recent_memory);
	tcase_add_test(tc, conversation_memory);
	tcase_add_test(tc, full_chat_summary);
	tc = tcase(s, "keyword_search");
	tcase_add_test(tc, kw_no_keywords);
	tcase_add_test(tc, kw_conversation);
	tcase_add_test(tc, kw_conversation_lookback);
	tcase_add_test(tc, kw_speakers_not_keywords);
	tcase_add_test(tc, kw_memories);
	tc = tcase(s, "vector_search");
	tcase_add_test(tc, vector_search);
	return s;
}

int
main(void)
{
	return check_main(memnodes_suite());
}
