/* check_memgen.c - writing memories with the LLM call stubbed: the discussion key, the settings file, memory LLM calls and helper workflows, the generation lock, the file-style ledger, condensation, the state document, the vector path. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/sha256.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "../../worker/memory/mem_condense.h"
#include "../../worker/memory/mem_state.h"
#include "../../worker/memory/memgen.h"
#include "../../worker/memory/memory.h"
#include "../../worker/memory/memstore.h"
#include "../../worker/memory/vecmem.h"
#include "../../worker/memory/vecmem_text.h"
#include "../../worker/store/store_lock.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "nodectx.h"
#include "stubs_ask.h"

#define NO_PRECEDING	"No preceding memories to show"
#define NO_SUMMARY	"There is not yet a summary file"
#define SEP		"\n--------------\n"
#define LOCK		"memory:d"

static struct nodectx	 C;
static struct store	*S;

static void
setup(void)
{
	nodectx_open(&C, "memgen");
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

/* The settings most tests start from: one memory per message (chunks
 * of one estimated token), the last two messages left out. */
static json_t *
settings(void)
{
	return nodectx_json("{s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:s}",
	    "endpointName", "mem-ep", "preset", "mem-pre",
	    "maxResponseSizeInTokens", 222, "lookbackStartTurn", 2,
	    "chunkEstimatedTokenSize", 1, "maxMessagesBetweenChunks", 5,
	    "systemPrompt", "S {name}",
	    "prompt", "chunk=[TextChunk]|recent=[Memory_file]|"
	    "all=[Full_Memory_file]|sum=[Chat_Summary]");
}

/* settings() with one more member (the reference to v is taken). */
static json_t *
settings_with(const char *key, json_t *v)
{
	json_t	*s = settings();

	json_object_set_new(s, key, v);
	return s;
}

/* A node of type for the memory calls to belong to. */
static json_t *
node_of(const char *type)
{
	return nodectx_json("{s:s}", "type", type);
}

/* memory_generate as a QualityMemory node runs it. */
static int
gen(bool force_file, struct wresult *res)
{
	json_t	*node = node_of("QualityMemory");
	int	 rc;

	memset(res, 0, sizeof(*res));
	rc = memory_generate(nodectx_ctx(&C, node), force_file, res);
	json_decref(node);
	return rc;
}

static void
gen_ok(bool force_file)
{
	struct wresult	 res;

	ck_assert_msg(gen(force_file, &res) == 0, "memory_generate: %s",
	    res.r_message);
}

/* The ledger of key: texts joined by '|'. */
static char *
ledger_of(const char *key)
{
	struct mem_blocks	 m;
	struct buf		 b = BUF_INIT;
	size_t			 i;

	ck_assert_int_eq(memstore_read(S, key, &m, NULL), 0);
	buf_adds(&b, "");
	for (i = 0; i < m.n; i++)
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", m.v[i].mb_text);
	mem_blocks_free(&m);
	return buf_take(&b);
}

#define ck_ledger(want) do {						\
	char	*l_ = ledger_of("d");					\
	ck_assert_str_eq(l_, want);					\
	free(l_);							\
} while (0)

/* The hash of memory i of "d" is that of message content. */
static void
ck_memory_hash(size_t i, const char *content)
{
	struct mem_blocks	 m;
	char			 h[SHA256_HEXLEN];

	sha256_hex(content, strlen(content), h);
	ck_assert_int_eq(memstore_read(S, "d", &m, NULL), 0);
	ck_assert_uint_gt(m.n, i);
	ck_assert_str_eq(m.v[i].mb_hash, h);
	mem_blocks_free(&m);
}

/* Memory i of "d" with hash "h<i+1>" and text "t<i+1>", appended. */
static void
seed_ledger(int n)
{
	struct mem_blocks	 m;
	char			 t[16], h[16];
	int64_t			 last = 0;
	int			 i;

	ck_assert_int_eq(memstore_read(S, "d", &m, NULL), 0);
	if (m.n > 0)
		last = m.v[m.n - 1].mb_id;
	mem_blocks_free(&m);
	for (i = 1; i <= n; i++) {
		snprintf(t, sizeof(t), "t%d", i);
		snprintf(h, sizeof(h), "h%d", i);
		ck_assert_int_gt(last = memstore_append(S, "d", last, t, h), 0);
	}
}

/* The prompt of LLM call i holds needle. */
static void
ck_prompt_has(size_t i, const char *needle)
{
	const struct fakeask_call	*c = fakeask_call(i);

	ck_assert_ptr_nonnull(c->ac_prompt);
	ck_assert_msg(strstr(c->ac_prompt, needle) != NULL,
	    "prompt %zu '%s' lacks '%s'", i, c->ac_prompt, needle);
}

/* ---- the discussion key --------------------------------------------- */

START_TEST(key_of_discussion)
{
	struct str	 none = { NULL, 0 }, scope = { "abcd1234", 8 };
	json_t		*node = node_of("QualityMemory");
	char		*k;

	ck_assert_ptr_null(memory_key_of(NULL, scope));
	ck_assert_ptr_null(memory_key_of("", scope));
	k = memory_key_of("camp-7", none);
	ck_assert_str_eq(k, "camp-7");
	free(k);
	k = memory_key_of("camp-7", scope);
	ck_assert_str_eq(k, "abcd1234/camp-7");
	free(k);
	C.nc_scope = scope;
	k = memory_key(nodectx_ctx(&C, node));
	ck_assert_str_eq(k, "abcd1234/d");
	free(k);
	C.nc_discussion = "";
	ck_assert_ptr_null(memory_key(nodectx_ctx(&C, node)));
	json_decref(node);
}
END_TEST

/* ---- the settings file ---------------------------------------------- */

static int
load(struct memory_settings *ms, struct wresult *res)
{
	json_t	*node = node_of("QualityMemory");
	int	 rc;

	memset(res, 0, sizeof(*res));
	rc = memory_settings_load(nodectx_ctx(&C, node), ms, res);
	json_decref(node);
	return rc;
}

START_TEST(settings_defaults)
{
	struct memory_settings	 ms;
	struct wresult		 res;

	ck_assert_int_eq(load(&ms, &res), 0);
	ck_assert_ptr_null(ms.ms_endpoint);
	ck_assert_ptr_null(ms.ms_preset);
	ck_assert_int_eq(ms.ms_max_tokens, 400);
	ck_assert_int_eq(ms.ms_lookback, 3);
	ck_assert_str_eq(ms.ms_system, "");
	ck_assert_str_eq(ms.ms_prompt, "");
	ck_assert_ptr_null(ms.ms_file_workflow);
	ck_assert_int_eq(ms.ms_chunk_tokens, 1000);
	ck_assert_int_eq(ms.ms_max_between, 5);
	ck_assert(!ms.ms_use_vector);
	ck_assert_int_eq(ms.ms_vector_max_tokens, 1024);
	ck_assert_int_eq(ms.ms_vector_chunk_tokens, 1000);
	ck_assert_int_eq(ms.ms_vector_max_between, 5);
	ck_assert(!ms.ms_vector_topics);
	ck_assert(!ms.ms_condense);
	ck_assert_int_eq(ms.ms_condense_count, 0);
	ck_assert_int_eq(ms.ms_condense_buffer, 0);
	ck_assert_int_eq(ms.ms_condense_lock_s, 600);
	ck_assert(ms.ms_level == 1.0);
	ck_assert_str_eq(memory_setting_str(&ms, "anything", "dflt"), "dflt");
	ck_assert_int_eq(memory_setting_long(&ms, "anything", 7), 7);
	memory_settings_free(&ms);
}
END_TEST

START_TEST(settings_read)
{
	static const struct { const char *name; double f; } lv[] = {
		{ "conservative", 1.0 }, { "Balanced", 1.25 },
		{ "AGGRESSIVE", 1.5 }, { "xaggressive", 1.85 },
		{ "reckless", 1.0 } };
	struct memory_settings	 ms;
	struct wresult		 res;
	size_t			 i;

	nodectx_settings(&C, nodectx_json("{s:s, s:s, s:i, s:f, s:b, s:b, "
	    "s:s, s:i, s:i, s:i, s:s, s:i, s:s, s:s}", "endpointName", "ep",
	    "preset", "", "lookbackStartTurn", 4,
	    "chunkEstimatedTokenSize", 512.9, "useVectorForQualityMemory", 1,
	    "condenseMemories", 1, "fileMemoryWorkflowName", "fmw",
	    "memoriesBeforeCondensation", 6, "memoryCondensationBuffer", 2,
	    "condensationLockTimeoutSeconds", 0, "stateDocumentWorkflowName",
	    "sw", "vectorMemoryMaxMessagesBetweenChunks", 9,
	    "vectorMemoryWorkflowName", "vw", "useStateDocument", "yes"));
	ck_assert_int_eq(load(&ms, &res), 0);
	ck_assert_str_eq(ms.ms_endpoint, "ep");
	ck_assert_ptr_null(ms.ms_preset);	/* "" is none */
	ck_assert_int_eq(ms.ms_lookback, 4);
	ck_assert_int_eq(ms.ms_chunk_tokens, 512);
	ck_assert(ms.ms_use_vector);
	ck_assert(ms.ms_condense);
	ck_assert_str_eq(ms.ms_file_workflow, "fmw");
	ck_assert_int_eq(ms.ms_condense_count, 6);
	ck_assert_int_eq(ms.ms_condense_buffer, 2);
	ck_assert_int_eq(ms.ms_condense_lock_s, 0);
	ck_assert_int_eq(ms.ms_vector_max_between, 9);
	ck_assert_str_eq(ms.ms_vector_workflow, "vw");
	ck_assert_str_eq(memory_setting_str(&ms, "stateDocumentWorkflowName",
	    NULL), "sw");
	ck_assert_int_eq(memory_setting_long(&ms, "lookbackStartTurn", 0), 4);
	ck_assert(memory_setting_double(&ms, "chunkEstimatedTokenSize", 0) ==
	    512.9);
	/* a string is no boolean */
	ck_assert(!memory_setting_bool(&ms, "useStateDocument", false));
	ck_assert(memory_setting_bool(&ms, "condenseMemories", false));
	memory_settings_free(&ms);
	for (i = 0; i < sizeof(lv) / sizeof(lv[0]); i++) {
		nodectx_settings(&C, nodectx_json("{s:s}",
		    "wilmerContextEstimationLevel", lv[i].name));
		ck_assert_int_eq(load(&ms, &res), 0);
		ck_assert_msg(ms.ms_level == lv[i].f, "%s: %g", lv[i].name,
		    ms.ms_level);
		memory_settings_free(&ms);
	}
}
END_TEST

START_TEST(settings_errors)
{
	struct memory_settings	 ms;
	struct wresult		 res;

	json_object_set_new(C.nc_user_json,
	    "discussionIdMemoryFileWorkflowSettings", json_string("../x"));
	ck_assert_int_eq(load(&ms, &res), -1);
	nodectx_ck_fail(&res, 500, "QualityMemory",
	    "refusing unsafe memory settings name '../x'");
	memory_settings_free(&ms);
	json_object_set_new(C.nc_user_json,
	    "discussionIdMemoryFileWorkflowSettings", json_string("absent"));
	ck_assert_int_eq(load(&ms, &res), -1);
	nodectx_ck_fail(&res, 500, "QualityMemory", "memory settings: ");
	ck_assert_msg(strstr(res.r_message, "absent.json") != NULL, "%s",
	    res.r_message);
	memory_settings_free(&ms);
	nodectx_settings(&C, json_pack("[i]", 1));
	ck_assert_int_eq(load(&ms, &res), -1);
	nodectx_ck_fail(&res, 500, "QualityMemory",
	    "the memory settings must be a JSON object");
	/* the defaults are there all the same */
	ck_assert_int_eq(ms.ms_lookback, 3);
	memory_settings_free(&ms);
}
END_TEST

/* ---- memory LLM calls and helper workflows -------------------------- */

START_TEST(llm_call_shape)
{
	json_t		*node = node_of("QualityMemory");
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	char		*pr = memory_fill("P {name}: [TextChunk]",
			    "[TextChunk]", "Bob said {name} and {{x}}",
			    (char *)NULL);

	fakeask_answer("the memory");
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_llm(nodectx_ctx(&C, node), "mem-ep", NULL,
	    "Sys {name}", pr, 123, &out, &res), 0);
	ck_assert_str_eq(out.b_data, "the memory");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_assert_str_eq(fakeask_call(0)->ac_endpoint, "mem-ep");
	ck_assert_str_eq(fakeask_call(0)->ac_preset, "");
	ck_assert_int_eq(fakeask_call(0)->ac_max_tokens, 123);
	ck_assert_str_eq(fakeask_call(0)->ac_system, "Sys Ann");
	/* the template's variables are filled, the memory text's braces
	 * stay as they are */
	ck_assert_str_eq(fakeask_call(0)->ac_prompt,
	    "P Ann: Bob said {name} and {{x}}");
	free(pr);
	buf_free(&out);
	json_decref(node);
}
END_TEST

/* A memory step of the responder is not streamed to the client. */
START_TEST(llm_quiet_for_responder)
{
	json_t		*node = node_of("FullChatSummary");
	struct node_ctx	*x;
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	C.nc_responder = C.nc_stream = true;
	x = nodectx_ctx(&C, node);
	x->nx_image = "aW1n";
	fakeask_answer("quiet");
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_llm(x, "ep", "pre", "", "p", 10, &out, &res),
	    0);
	ck_assert(!fakeask_call(0)->ac_responder);
	ck_assert(!fakeask_call(0)->ac_deliver);
	ck_assert(!fakeask_call(0)->ac_stream);
	ck_assert_ptr_null(fakeask_call(0)->ac_image);
	ck_assert_str_eq(fakeask_call(0)->ac_preset, "pre");
	ck_assert_int_eq(C.nc_rq.fr_emits, 0);
	/* the node itself is left as it was */
	ck_assert(x->nx_stream && x->nx_responder);
	ck_assert_str_eq(x->nx_image, "aW1n");
	buf_free(&out);
	json_decref(node);
}
END_TEST

START_TEST(llm_errors)
{
	json_t		*node = node_of("QualityMemory");
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_llm(nodectx_ctx(&C, node), NULL, "p", "s",
	    "p", 10, &out, &res), -1);
	nodectx_ck_fail(&res, 500, "QualityMemory",
	    "the memory settings name no endpointName");
	ck_assert_int_eq(memory_llm(nodectx_ctx(&C, node), "", "p", "s",
	    "p", 10, &out, &res), -1);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	fakeask_fail(502, "backend down");
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_llm(nodectx_ctx(&C, node), "ep", "p", "s",
	    "p", 10, &out, &res), -1);
	nodectx_ck_fail(&res, 502, "QualityMemory", "backend down");
	buf_free(&out);
	json_decref(node);
}
END_TEST

/* The node's own endpoint and fields, its prompts replaced. */
START_TEST(llm_node_call)
{
	json_t		*node = nodectx_json("{s:s, s:s, s:s, s:s, s:s, s:i}",
			    "type", "chatSummarySummarizer", "endpointName",
			    "{ep}", "preset", "np", "systemPrompt", "NODE SYS",
			    "prompt", "NODE PROMPT", "maxResponseSizeInTokens",
			    321);
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	vars_set(C.nc_early, "ep", "summary-ep");
	fakeask_answer("done");
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_llm_node(nodectx_ctx(&C, node), "MY SYS {name}",
	    "MY PROMPT", &out, &res), 0);
	ck_assert_str_eq(out.b_data, "done");
	ck_assert_str_eq(fakeask_call(0)->ac_endpoint, "summary-ep");
	ck_assert_str_eq(fakeask_call(0)->ac_preset, "np");
	ck_assert_int_eq(fakeask_call(0)->ac_max_tokens, 321);
	ck_assert_str_eq(fakeask_call(0)->ac_system, "MY SYS Ann");
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, "MY PROMPT");
	ck_assert(!fakeask_call(0)->ac_stream);
	buf_free(&out);
	json_decref(node);
}
END_TEST

START_TEST(workflow_call)
{
	json_t		*node = node_of("RecentMemory");
	char		*in[] = { "one", "two {name}", NULL };
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	const struct nc_flow *f;

	nodectx_flow_reply(&C, "helper said", 0);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_workflow(nodectx_ctx(&C, node), "helper", in,
	    &out, &res), 0);
	ck_assert_str_eq(out.b_data, "helper said");
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_folder, NC_FOLDER);
	ck_assert_str_eq(f->nf_name, "helper");
	ck_assert_uint_eq(f->nf_ninputs, 2);
	ck_assert_str_eq(f->nf_inputs[0], "one");
	ck_assert_str_eq(f->nf_inputs[1], "two {name}");
	ck_assert(!f->nf_deliver && !f->nf_top);
	ck_assert_ptr_null(f->nf_system);
	ck_assert_ptr_null(f->nf_prompt);
	ck_assert_ptr_eq(f->nf_parent, C.nc_x.nx_run);
	ck_assert_int_eq(C.nc_rq.fr_emits, 0);
	buf_free(&out);
	json_decref(node);
}
END_TEST

START_TEST(workflow_errors)
{
	json_t		*node = node_of("RecentMemory");
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	nodectx_flow_reply(&C, "it broke", -1);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_workflow(nodectx_ctx(&C, node), "helper",
	    NULL, &out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_str_eq(res.r_message, "workflow 'helper': it broke");
	ck_assert_ptr_null(nodectx_flow(&C, 0)->nf_inputs);
	C.nc_rq.fr_rq.rq_flow = NULL;
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memory_workflow(nodectx_ctx(&C, node), "helper",
	    NULL, &out, &res), -1);
	ck_assert_str_eq(res.r_message, "no workflow engine runs this request");
	buf_free(&out);
	json_decref(node);
}
END_TEST

/* ---- the generation lock -------------------------------------------- */

static int
gen_lock(long wait_s, struct wresult *res)
{
	json_t	*node = node_of("QualityMemory");
	int	 rc;

	memset(res, 0, sizeof(*res));
	rc = memory_gen_lock(nodectx_ctx(&C, node), "d", wait_s, res);
	json_decref(node);
	return rc;
}

START_TEST(lock_taken_and_given_back)
{
	json_t		*node = node_of("QualityMemory");
	struct wresult	 res;

	ck_assert_int_eq(gen_lock(5, &res), 1);
	/* another request cannot have it, its owner takes it again */
	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 0);
	ck_assert_int_eq(gen_lock(5, &res), 1);
	memory_gen_renew(nodectx_ctx(&C, node), "d");
	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 0);
	memory_gen_unlock(nodectx_ctx(&C, node), "d");
	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 1);
	/* and a lock of another discussion is another lock */
	ck_assert_int_eq(store_lock(S, "memory:e", NC_RQID, 600), 1);
	json_decref(node);
}
END_TEST

/* Held by another request past the wait: this round is skipped. */
START_TEST(lock_held_skips_round)
{
	struct wresult	 res;

	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 1);
	ck_assert_int_eq(gen_lock(1, &res), 0);
	ck_assert_int_eq(res.r_status, RQ_OK);
	ck_assert_int_gt(C.nc_rq.fr_phases, 0);
	ck_assert_str_eq(C.nc_rq.fr_phase, "wf node 3/5: waiting for another "
	    "request's memory generation");
	/* and so is memory generation */
	nodectx_settings(&C, settings_with("condensationLockTimeoutSeconds",
	    json_integer(1)));
	talk(1, 6);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	ck_ledger("");
	ck_assert_int_eq(store_unlock(S, LOCK, "other"), 1);
	fakeask_answer("A1");
	fakeask_answer("A2");
	fakeask_answer("A3");
	fakeask_answer("A4");
	gen_ok(false);
	ck_ledger("A1|A2|A3|A4");
}
END_TEST

START_TEST(lock_cancelled_while_waiting)
{
	struct wresult	 res;

	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 1);
	C.nc_rq.fr_cancel_at = 3;
	ck_assert_int_eq(gen_lock(0, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_int_eq(C.nc_rq.fr_stops, 3);	/* it waited, asking */
	ck_assert_int_ge(C.nc_rq.fr_phases, 3);
}
END_TEST

START_TEST(lock_without_store)
{
	struct wresult	 res;

	C.nc_rq.fr_store = NULL;
	ck_assert_int_eq(gen_lock(1, &res), -1);
	nodectx_ck_fail(&res, 500, "QualityMemory",
	    "the memory store: no database in this test");
}
END_TEST

/* ---- when memories are written -------------------------------------- */

START_TEST(gen_needs_discussion)
{
	nodectx_settings(&C, settings());
	talk(1, 8);
	C.nc_discussion = "";
	C.nc_rq.fr_store = NULL;	/* it does not even open the store */
	gen_ok(false);
	gen_ok(true);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

START_TEST(gen_needs_three_messages)
{
	struct wresult	 res;

	nodectx_settings(&C, settings_with("lookbackStartTurn",
	    json_integer(0)));
	talk(1, 2);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	ck_ledger("");
	json_object_set_new(C.nc_user_json,
	    "discussionIdMemoryFileWorkflowSettings", json_string("gone"));
	talk(3, 3);
	ck_assert_int_eq(gen(false, &res), -1);
	nodectx_ck_fail(&res, 500, "QualityMemory", "memory settings: ");
}
END_TEST

/* All but the last lookbackStartTurn messages, system messages left
 * out, one memory a chunk, each with the hash of its last message. */
START_TEST(file_lookback)
{
	nodectx_settings(&C, settings());
	nodectx_say(&C, "system", "You are a helpful assistant");
	talk(1, 6);
	fakeask_answer("A1");
	fakeask_answer("A2");
	fakeask_answer("A3");
	fakeask_answer("A4");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 4);
	ck_prompt_has(0, "chunk=m1|");
	ck_prompt_has(3, "chunk=m4|");
	ck_ledger("A1|A2|A3|A4");
	ck_memory_hash(0, "m1");
	ck_memory_hash(3, "m4");
	ck_assert_str_eq(fakeask_call(0)->ac_endpoint, "mem-ep");
	ck_assert_str_eq(fakeask_call(0)->ac_preset, "mem-pre");
	ck_assert_int_eq(fakeask_call(0)->ac_max_tokens, 222);
	ck_assert_str_eq(fakeask_call(0)->ac_system, "S Ann");
	ck_assert_str_eq(C.nc_rq.fr_phase, "wf node 3/5: memory 4/4");
}
END_TEST

/* The next round starts after the message the last memory ended with:
 * no message is made into a memory twice. */
START_TEST(file_resumes_after_last_memory)
{
	nodectx_settings(&C, settings());
	talk(1, 6);
	fakeask_answer("A1");
	fakeask_answer("A2");
	fakeask_answer("A3");
	fakeask_answer("A4");
	gen_ok(false);
	/* the same conversation again: nothing new */
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 4);
	talk(7, 8);
	fakeask_answer("A5");
	fakeask_answer("A6");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 6);
	ck_prompt_has(4, "chunk=m5|");
	ck_prompt_has(5, "chunk=m6|");
	ck_ledger("A1|A2|A3|A4|A5|A6");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 6);
}
END_TEST

/* maxMessagesBetweenChunks counts only once the ledger exists (WilmerAI:
 * memories.json exists); the first look makes it. */
START_TEST(file_count_trigger_needs_ledger)
{
	json_t	*s = settings();

	json_object_set_new(s, "chunkEstimatedTokenSize", json_integer(100000));
	nodectx_settings(&C, s);
	talk(1, 7);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	fakeask_answer("A1-5");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_prompt_has(0, "chunk=m1\nm2\nm3\nm4\nm5|");
	ck_ledger("A1-5");
	ck_memory_hash(0, "m5");
	/* four new messages are below five */
	talk(8, 11);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
}
END_TEST

/* chunkEstimatedTokenSize, scaled by wilmerContextEstimationLevel,
 * triggers and cuts the chunks. */
START_TEST(file_token_trigger)
{
	const char	*joined = "m1\nm2\nm3\nm4";
	long		 est = tokens_estimate(joined, strlen(joined),
			    TOKENS_MARGIN);
	json_t		*s = settings();

	ck_assert_int_ge(est, 3);
	json_object_set_new(s, "chunkEstimatedTokenSize", json_integer(est));
	json_object_set_new(s, "maxMessagesBetweenChunks", json_integer(100));
	json_object_set_new(s, "wilmerContextEstimationLevel",
	    json_string("aggressive"));
	nodectx_settings(&C, json_deep_copy(s));
	talk(1, 6);
	gen_ok(false);		/* est < est * 1.5 */
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	json_object_set_new(s, "wilmerContextEstimationLevel",
	    json_string("conservative"));
	nodectx_settings(&C, s);
	fakeask_answer("A");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_prompt_has(0, "chunk=m1\nm2\nm3\nm4|");
}
END_TEST

/* Chunks of about chunkEstimatedTokenSize: each message estimates at
 * one token, and a chunk of 3 holds two (2 <= 3 * 0.8 < 3). */
START_TEST(file_chunks_grouped)
{
	nodectx_settings(&C, settings_with("chunkEstimatedTokenSize",
	    json_integer(3)));
	talk(1, 6);
	fakeask_answer("A12");
	fakeask_answer("A34");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	ck_prompt_has(0, "chunk=m1\nm2|");
	ck_prompt_has(1, "chunk=m3\nm4|");
	ck_ledger("A12|A34");
	ck_memory_hash(0, "m2");
	ck_memory_hash(1, "m4");
}
END_TEST

/* [Memory_file] the last three memories, [Full_Memory_file] all of
 * them, [Chat_Summary] the summary, stripped; texts braces kept. */
START_TEST(file_prompt_placeholders)
{
	json_t	*s = settings();

	json_object_set_new(s, "systemPrompt", json_string("S {name} "
	    "[Chat_Summary]"));
	nodectx_settings(&C, s);
	seed_ledger(4);
	ck_assert_int_eq(memstore_summary_put(S, "d", "  the summary \n",
	    "h4"), 0);
	nodectx_say(&C, "user", "m1 {name} {{x}}");
	talk(2, 3);
	fakeask_answer("A");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, "chunk=m1 {name} {{x}}|"
	    "recent=t2" SEP "t3" SEP "t4|all=t1" SEP "t2" SEP "t3" SEP "t4|"
	    "sum=the summary");
	ck_assert_str_eq(fakeask_call(0)->ac_system, "S Ann the summary");
	ck_ledger("t1|t2|t3|t4|A");
	ck_memory_hash(4, "m1 {name} {{x}}");
}
END_TEST

/* Each memory is stored before the next chunk's call, which shows it. */
START_TEST(file_prompt_sees_previous)
{
	nodectx_settings(&C, settings());
	talk(1, 4);
	fakeask_answer("  A1 \n");
	fakeask_answer("A2");
	gen_ok(false);
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, "chunk=m1|recent="
	    NO_PRECEDING "|all=" NO_PRECEDING "|sum=" NO_SUMMARY);
	ck_assert_str_eq(fakeask_call(1)->ac_prompt, "chunk=m2|recent=A1|"
	    "all=A1|sum=" NO_SUMMARY);
}
END_TEST

/* fileMemoryWorkflowName: the chunk, the last three memories, all of
 * them and the summary as the workflow's inputs; no LLM call. */
START_TEST(file_workflow)
{
	const struct nc_flow	*f;

	nodectx_settings(&C, settings_with("fileMemoryWorkflowName",
	    json_string("memwf")));
	seed_ledger(1);
	talk(1, 3);
	nodectx_flow_reply(&C, "W1", 0);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_name, "memwf");
	ck_assert_str_eq(f->nf_folder, NC_FOLDER);
	ck_assert(!f->nf_deliver);
	ck_assert_uint_eq(f->nf_ninputs, 4);
	ck_assert_str_eq(f->nf_inputs[0], "m1");
	ck_assert_str_eq(f->nf_inputs[1], "t1");
	ck_assert_str_eq(f->nf_inputs[2], "t1");
	ck_assert_str_eq(f->nf_inputs[3], NO_SUMMARY);
	ck_ledger("t1|W1");
}
END_TEST

/* An empty answer is not stored and stops the round: its messages are
 * new again next time. */
START_TEST(file_empty_answer)
{
	nodectx_settings(&C, settings());
	talk(1, 4);
	fakeask_answer(" \n\t");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_ledger("");
	fakeask_answer("A1");
	fakeask_answer("A2");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 3);
	ck_prompt_has(1, "chunk=m1|");
	ck_ledger("A1|A2");
}
END_TEST

/* A failed call fails the node; the memories before it are kept, and
 * the lock is given back. */
START_TEST(file_llm_error)
{
	struct wresult	 res;

	nodectx_settings(&C, settings());
	talk(1, 5);
	fakeask_answer("A1");
	fakeask_fail(503, "backend down");
	ck_assert_int_eq(gen(false, &res), -1);
	nodectx_ck_fail(&res, 503, "QualityMemory", "backend down");
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	ck_ledger("A1");
	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 1);
}
END_TEST

START_TEST(file_cancelled)
{
	struct wresult	 res;

	nodectx_settings(&C, settings());
	talk(1, 4);
	fakeask_cancel();
	ck_assert_int_eq(gen(true, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_ledger("");
	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 1);
}
END_TEST

static void
other_writer(size_t call, void *arg)
{
	if (call == 0)
		ck_assert_int_gt(memstore_append(S, "d", 0, "theirs", "hx"), 0);
}

/* Another request wrote the ledger meanwhile: this one stops, writing
 * nothing behind its back. */
START_TEST(file_other_writer)
{
	nodectx_settings(&C, settings());
	talk(1, 4);
	fakeask_hook(other_writer, NULL);
	fakeask_answer("A1");
	fakeask_answer("A2");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_ledger("theirs");
}
END_TEST

/* Discussions of different API keys are kept apart. */
START_TEST(file_scoped_by_key)
{
	nodectx_settings(&C, settings());
	talk(1, 3);
	C.nc_scope = (struct str){ "0123456789abcdef", 16 };
	fakeask_answer("scoped");
	gen_ok(false);
	ck_ledger("");
	{
		char	*l = ledger_of("0123456789abcdef/d");

		ck_assert_str_eq(l, "scoped");
		free(l);
	}
}
END_TEST

/* ---- condensation ---------------------------------------------------- */

static int
condense(json_t *settings_json, struct wresult *res)
{
	struct memory_settings	 ms;
	json_t			*node = node_of("QualityMemory");
	int			 rc;

	nodectx_settings(&C, settings_json);
	ck_assert_int_eq(load(&ms, res), 0);
	memset(res, 0, sizeof(*res));
	rc = memory_condense(nodectx_ctx(&C, node), &ms, "d", res);
	memory_settings_free(&ms);
	json_decref(node);
	return rc;
}

static void
condense_ok(json_t *settings_json)
{
	struct wresult	 res;

	ck_assert_msg(condense(settings_json, &res) == 0, "%s", res.r_message);
}

static json_t *
condensing(int n, int buffer)
{
	json_t	*s = settings();

	json_object_set_new(s, "condenseMemories", json_true());
	json_object_set_new(s, "memoriesBeforeCondensation", json_integer(n));
	json_object_set_new(s, "memoryCondensationBuffer",
	    json_integer(buffer));
	return s;
}

static void
ck_tracker(const char *want)
{
	char	*t = NULL;

	if (want == NULL) {
		ck_assert_int_eq(memstore_tracker(S, "d", &t), 0);
		return;
	}
	ck_assert_int_eq(memstore_tracker(S, "d", &t), 1);
	ck_assert_str_eq(t, want);
	free(t);
}

/* The oldest memoriesBeforeCondensation new memories become one, with
 * WilmerAI's prompts and the main endpoint when the settings name no
 * condense* ones; the tracker moves to the last of them. */
START_TEST(condense_oldest_new)
{
	const struct fakeask_call	*c;

	seed_ledger(5);
	fakeask_answer("C12");
	condense_ok(condensing(2, 0));
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_ledger("C12|t3|t4|t5");
	ck_tracker("h2");
	c = fakeask_call(0);
	ck_assert_str_eq(c->ac_endpoint, "mem-ep");
	ck_assert_str_eq(c->ac_preset, "mem-pre");
	ck_assert_int_eq(c->ac_max_tokens, 222);
	ck_assert_ptr_nonnull(strstr(c->ac_system, "expert summarizer"));
	ck_prompt_has(0, "<memories_to_condense>\nt1" SEP "t2\n"
	    "</memories_to_condense>");
	ck_prompt_has(0, "<preceding_memories>\n" NO_PRECEDING "\n"
	    "</preceding_memories>");
	ck_assert_str_eq(C.nc_rq.fr_phase,
	    "wf node 3/5: condensing 2 memories");
}
END_TEST

/* After the tracker, past the buffer; up to three memories before them
 * shown; the condense* settings. */
START_TEST(condense_after_tracker)
{
	json_t				*s = condensing(2, 1);
	const struct fakeask_call	*c;

	json_object_set_new(s, "condenseMemoriesEndpointName",
	    json_string("c-ep"));
	json_object_set_new(s, "condenseMemoriesPreset", json_string("c-pre"));
	json_object_set_new(s, "condenseMemoriesMaxResponseSizeInTokens",
	    json_integer(99));
	json_object_set_new(s, "condenseMemoriesSystemPrompt",
	    json_string("CS {name} [Memories_Before_Memories_to_Condense]"));
	json_object_set_new(s, "condenseMemoriesPrompt",
	    json_string("CP [MemoriesToCondense] / [TextChunk]"));
	seed_ledger(7);
	ck_assert_int_eq(memstore_tracker_put(S, "d", "h4"), 0);
	fakeask_answer("C56");
	condense_ok(s);
	c = fakeask_call(0);
	ck_assert_str_eq(c->ac_endpoint, "c-ep");
	ck_assert_str_eq(c->ac_preset, "c-pre");
	ck_assert_int_eq(c->ac_max_tokens, 99);
	ck_assert_str_eq(c->ac_system, "CS Ann t2" SEP "t3" SEP "t4");
	ck_assert_str_eq(c->ac_prompt, "CP t5" SEP "t6 / t5" SEP "t6");
	ck_ledger("t1|t2|t3|t4|C56|t7");
	ck_tracker("h6");
}
END_TEST

START_TEST(condense_thresholds)
{
	json_t	*s;

	seed_ledger(6);
	/* off */
	s = settings();
	json_object_set_new(s, "memoriesBeforeCondensation", json_integer(2));
	condense_ok(s);
	/* on, without a count */
	condense_ok(condensing(0, 0));
	/* two new after the tracker, below 2 + 1 */
	ck_assert_int_eq(memstore_tracker_put(S, "d", "h4"), 0);
	condense_ok(condensing(2, 1));
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	ck_ledger("t1|t2|t3|t4|t5|t6");
	/* a tracker whose memory is gone: all of them are new */
	ck_assert_int_eq(memstore_tracker_put(S, "d", "gone"), 0);
	fakeask_answer("C12");
	condense_ok(condensing(2, 1));
	ck_ledger("C12|t3|t4|t5|t6");
	ck_tracker("h2");
}
END_TEST

START_TEST(condense_empty_answer)
{
	seed_ledger(3);
	fakeask_answer("  \n");
	condense_ok(condensing(2, 0));
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_ledger("t1|t2|t3");
	ck_tracker(NULL);
}
END_TEST

/* In a round: a ledger made from scratch seeds the tracker with its
 * last memory (nothing to condense yet); later memories are condensed
 * once there are enough. */
START_TEST(condense_in_round)
{
	json_t	*s = condensing(2, 0);
	char	 h[SHA256_HEXLEN];

	json_object_set_new(s, "lookbackStartTurn", json_integer(0));
	nodectx_settings(&C, s);
	talk(1, 3);
	fakeask_answer("A1");
	fakeask_answer("A2");
	fakeask_answer("A3");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 3);
	sha256_hex("m3", 2, h);
	ck_tracker(h);
	talk(4, 5);
	fakeask_answer("A4");
	fakeask_answer("A5");
	fakeask_answer("C45");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 6);
	ck_prompt_has(5, "<memories_to_condense>\nA4" SEP "A5\n");
	ck_prompt_has(5, "<preceding_memories>\nA1" SEP "A2" SEP "A3\n");
	ck_ledger("A1|A2|A3|C45");
	sha256_hex("m5", 2, h);
	ck_tracker(h);
}
END_TEST

/* A round from scratch that stops early (an empty answer) seeds the
 * tracker with the last memory it stored, so what it made is not
 * condensed at once. */
START_TEST(condense_seed_after_short_round)
{
	json_t	*s = condensing(2, 0);
	char	 h[SHA256_HEXLEN];

	json_object_set_new(s, "lookbackStartTurn", json_integer(0));
	nodectx_settings(&C, s);
	talk(1, 4);
	fakeask_answer("A1");
	fakeask_answer("A2");
	fakeask_answer("A3");
	fakeask_answer(" ");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 4);
	ck_ledger("A1|A2|A3");
	sha256_hex("m3", 2, h);
	ck_tracker(h);
	/* the chunk left is made next time; one new memory is not two */
	fakeask_answer("A4");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 5);
	ck_ledger("A1|A2|A3|A4");
	ck_tracker(h);
}
END_TEST

/* ---- the state document ---------------------------------------------- */

static int
state(json_t *settings_json, char *const *facts, size_t n,
    struct wresult *res)
{
	struct memory_settings	 ms;
	struct wresult		 lres;
	json_t			*node = node_of("QualityMemory");
	int			 rc;

	nodectx_settings(&C, settings_json);
	ck_assert_int_eq(load(&ms, &lres), 0);
	rc = memory_state_update(nodectx_ctx(&C, node), &ms, "d", facts, n,
	    res);
	memory_settings_free(&ms);
	json_decref(node);
	return rc;
}

static json_t *
stating(double ratio)
{
	json_t	*s = settings();

	json_object_set_new(s, "useStateDocument", json_true());
	json_object_set_new(s, "stateDocumentWorkflowName",
	    json_string("statewf"));
	if (ratio >= 0)
		json_object_set_new(s, "stateDocumentMinRetentionRatio",
		    json_real(ratio));
	return s;
}

static void
ck_state(const char *want)
{
	char	*t = NULL;

	ck_assert_int_eq(memstore_state(S, "d", &t), want != NULL ? 1 : 0);
	if (want != NULL)
		ck_assert_str_eq(t, want);
	free(t);
}

static char *
repeat(char c, size_t n)
{
	char	*s = xmalloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return s;
}

START_TEST(state_merge)
{
	char			*facts[] = { "Ann likes tea", "Bob is 40",
				    NULL };
	const struct nc_flow	*f;
	struct wresult		 res;

	nodectx_flow_reply(&C, "  # State\nAnn likes tea \n", 0);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(state(stating(-1), facts, 2, &res), 0);
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_name, "statewf");
	ck_assert_uint_eq(f->nf_ninputs, 2);
	ck_assert_str_eq(f->nf_inputs[0], "- Ann likes tea\n- Bob is 40");
	ck_assert_str_eq(f->nf_inputs[1], "");
	ck_state("# State\nAnn likes tea");
	nodectx_flow_reply(&C, "# State\nAnn likes coffee", 0);
	ck_assert_int_eq(state(stating(-1), facts + 1, 1, &res), 0);
	f = nodectx_flow(&C, 1);
	ck_assert_str_eq(f->nf_inputs[0], "- Bob is 40");
	ck_assert_str_eq(f->nf_inputs[1], "# State\nAnn likes tea");
	ck_state("# State\nAnn likes coffee");
}
END_TEST

START_TEST(state_off)
{
	char		*facts[] = { "fact", NULL };
	struct wresult	 res;
	json_t		*s = stating(-1);

	memset(&res, 0, sizeof(res));
	json_object_set_new(s, "useStateDocument", json_false());
	ck_assert_int_eq(state(s, facts, 1, &res), 0);
	s = stating(-1);
	json_object_del(s, "stateDocumentWorkflowName");
	ck_assert_int_eq(state(s, facts, 1, &res), 0);
	ck_assert_int_eq(state(stating(-1), facts, 0, &res), 0);
	ck_assert_uint_eq(C.nc_nflows, 0);
	ck_state(NULL);
}
END_TEST

/* An empty answer, or one that shrinks a document of over 500
 * characters below the ratio, leaves the document as it was. */
START_TEST(state_refusals)
{
	char		*facts[] = { "fact", NULL };
	char		*big = repeat('a', 600), *b200 = repeat('b', 200);
	char		*b300 = repeat('c', 300), *b500 = repeat('d', 500);
	struct wresult	 res;

	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(memstore_state_put(S, "d", big), 0);
	nodectx_flow_reply(&C, " \n ", 0);
	nodectx_flow_reply(&C, b200, 0);
	ck_assert_int_eq(state(stating(-1), facts, 1, &res), 0);
	ck_assert_int_eq(state(stating(-1), facts, 1, &res), 0);
	ck_state(big);
	nodectx_flow_reply(&C, b300, 0);
	ck_assert_int_eq(state(stating(-1), facts, 1, &res), 0);
	ck_state(b300);		/* half of 600 is kept */
	/* 300 characters may shrink freely */
	nodectx_flow_reply(&C, "tiny", 0);
	ck_assert_int_eq(state(stating(-1), facts, 1, &res), 0);
	ck_state("tiny");
	/* the ratio is the settings' */
	ck_assert_int_eq(memstore_state_put(S, "d", big), 0);
	nodectx_flow_reply(&C, b500, 0);
	ck_assert_int_eq(state(stating(0.9), facts, 1, &res), 0);
	ck_state(big);
	nodectx_flow_reply(&C, b200, 0);
	ck_assert_int_eq(state(stating(0), facts, 1, &res), 0);
	ck_state(b200);
	ck_assert_int_eq(res.r_status, RQ_OK);
	free(big);
	free(b200);
	free(b300);
	free(b500);
}
END_TEST

/* Best effort: a failed merge is logged, res is left as it was. */
START_TEST(state_failure_is_quiet)
{
	char		*facts[] = { "fact", NULL };
	struct wresult	 res;

	ck_assert_int_eq(memstore_state_put(S, "d", "old"), 0);
	nodectx_flow_reply(&C, "merge broke", -1);
	memset(&res, 0, sizeof(res));
	snprintf(res.r_message, sizeof(res.r_message), "before");
	ck_assert_int_eq(state(stating(-1), facts, 1, &res), 0);
	ck_assert_int_eq(res.r_status, RQ_OK);
	ck_assert_str_eq(res.r_message, "before");
	ck_state("old");
	nodectx_flow_reply(&C, "", NC_FLOW_CANCEL);
	ck_assert_int_eq(state(stating(-1), facts, 1, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_state("old");
}
END_TEST

/* ---- the vector path ------------------------------------------------- */

#define FACT_A	"{\"title\": \"Tea\", \"summary\": \"Ann likes green tea\", " \
		"\"entities\": [\"Ann\"], \"key_phrases\": [\"green tea\"]}"
#define FACT_NOKP "{\"title\": \"Odd\", \"summary\": \"no key phrases\", " \
		"\"entities\": []}"
#define FACT_C	"{\"title\": \"Bob\", \"summary\": \"Bob is forty\", " \
		"\"entities\": [\"Bob\"], \"key_phrases\": [\"age\"]}"

static json_t *
vector_settings(void)
{
	json_t	*s = settings();

	json_object_set_new(s, "useVectorForQualityMemory", json_true());
	json_object_set_new(s, "vectorMemoryEndpointName",
	    json_string("vec-ep"));
	json_object_set_new(s, "vectorMemoryPreset", json_string("vec-pre"));
	json_object_set_new(s, "vectorMemoryChunkEstimatedTokenSize",
	    json_integer(1));
	json_object_set_new(s, "lookbackStartTurn", json_integer(1));
	return s;
}

/* The facts of "d": memory texts joined by '|'. */
static char *
facts_of(void)
{
	struct store_q	*st = store_stmt(S, "SELECT memory_text FROM "
			    "vector_memories WHERE discussion = ? ORDER BY id");
	struct buf	 b = BUF_INIT;
	int		 r;

	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(store_bind(S, st, "t", "d"), 0);
	buf_adds(&b, "");
	while ((r = store_step(S, st)) == 1)
		buf_printf(&b, "%s%s", b.b_len > 0 ? "|" : "",
		    store_col_text(st, 0));
	ck_assert_int_eq(r, 0);
	return buf_take(&b);
}

#define ck_facts(want) do {						\
	char	*f_ = facts_of();					\
	ck_assert_str_eq(f_, want);					\
	free(f_);							\
} while (0)

/* The logged chunk hashes, newest first, as the contents they are of
 * ("m2|m1"); "?" for an unknown one. */
static char *
logged(const char *const *contents)
{
	char		**hist, h[SHA256_HEXLEN];
	size_t		  n, i, k;
	int64_t		  last;
	struct buf	  b = BUF_INIT;

	ck_assert_int_eq(vecmem_hashes(S, "d", &hist, &n, &last), 0);
	buf_adds(&b, "");
	for (i = 0; i < n; i++) {
		const char	*name = "?";

		for (k = 0; contents[k] != NULL; k++) {
			sha256_hex(contents[k], strlen(contents[k]), h);
			if (strcmp(h, hist[i]) == 0)
				name = contents[k];
		}
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", name);
	}
	vecmem_strv_free(hist);
	return buf_take(&b);
}

static const char *const M[] = { "m1", "m2", "m3", "m4", "m5", "m6", NULL };

#define ck_logged(want) do {						\
	char	*g_ = logged(M);					\
	ck_assert_str_eq(g_, want);					\
	free(g_);							\
} while (0)

/* Facts from a fenced array or a bare object; a fact without the four
 * fields is skipped; each chunk's hash logged; no file-style memory. */
START_TEST(vector_facts)
{
	const struct fakeask_call	*c;

	nodectx_settings(&C, vector_settings());
	talk(1, 3);
	fakeask_answer("```json\n[" FACT_A ", " FACT_NOKP "]\n```");
	fakeask_answer("Sure! " FACT_C " Hope that helps.");
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	c = fakeask_call(0);
	ck_assert_str_eq(c->ac_endpoint, "vec-ep");
	ck_assert_str_eq(c->ac_preset, "vec-pre");
	ck_assert_int_eq(c->ac_max_tokens, 1024);
	ck_assert_ptr_nonnull(strstr(c->ac_system, "structured JSON"));
	ck_prompt_has(0, "\nMemory Text:\nm1\nJSON Output:");
	ck_prompt_has(1, "\nMemory Text:\nm2\nJSON Output:");
	ck_facts("Ann likes green tea|Bob is forty");
	ck_logged("m2|m1");
	ck_ledger("");
	ck_assert_str_eq(C.nc_rq.fr_phase, "wf node 3/5: vector memory 2/2");
}
END_TEST

START_TEST(vector_settings_fallback)
{
	json_t	*s = vector_settings();

	json_object_del(s, "vectorMemoryEndpointName");
	json_object_del(s, "vectorMemoryPreset");
	json_object_set_new(s, "vectorMemoryMaxResponseSizeInTokens",
	    json_integer(77));
	nodectx_settings(&C, s);
	talk(1, 2);
	nodectx_say(&C, "user", "m3");
	fakeask_answer(FACT_A);
	fakeask_answer(FACT_C);
	gen_ok(false);
	ck_assert_str_eq(fakeask_call(0)->ac_endpoint, "mem-ep");
	ck_assert_str_eq(fakeask_call(0)->ac_preset, "mem-pre");
	ck_assert_int_eq(fakeask_call(1)->ac_max_tokens, 77);
}
END_TEST

/* A chunk without facts is not logged: it is asked again next turn. */
START_TEST(vector_no_facts_not_logged)
{
	nodectx_settings(&C, vector_settings());
	talk(1, 3);
	fakeask_answer("nothing worth remembering");
	fakeask_answer(FACT_NOKP);
	gen_ok(false);
	ck_facts("");
	ck_logged("");
	fakeask_answer(FACT_A);
	fakeask_answer(FACT_C);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 4);
	ck_prompt_has(2, "Memory Text:\nm1\n");
	ck_facts("Ann likes green tea|Bob is forty");
	ck_logged("m2|m1");
}
END_TEST

/* The next round starts after the newest logged hash. */
START_TEST(vector_resumes_after_logged)
{
	nodectx_settings(&C, vector_settings());
	talk(1, 3);
	fakeask_answer(FACT_A);
	fakeask_answer(FACT_C);
	gen_ok(false);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	talk(4, 5);
	fakeask_answer("[]");
	fakeask_answer(FACT_A);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 4);
	ck_prompt_has(2, "Memory Text:\nm3\n");
	ck_prompt_has(3, "Memory Text:\nm4\n");
	ck_logged("m4|m2|m1");
}
END_TEST

/* vectorMemoryMaxMessagesBetweenChunks triggers at once (no ledger
 * gate), the chunk size from vectorMemoryChunkEstimatedTokenSize. */
START_TEST(vector_count_trigger)
{
	json_t	*s = vector_settings();

	json_object_set_new(s, "vectorMemoryChunkEstimatedTokenSize",
	    json_integer(100000));
	json_object_set_new(s, "vectorMemoryMaxMessagesBetweenChunks",
	    json_integer(3));
	nodectx_settings(&C, s);
	talk(1, 3);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	talk(4, 4);
	fakeask_answer(FACT_A);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_prompt_has(0, "Memory Text:\nm1\nm2\nm3\nJSON");
	ck_logged("m3");
}
END_TEST

/* vectorMemoryWorkflowName: the chunk as its one input. */
START_TEST(vector_workflow)
{
	const struct nc_flow	*f;
	json_t			*s = vector_settings();

	json_object_set_new(s, "vectorMemoryWorkflowName",
	    json_string("vecwf"));
	nodectx_settings(&C, s);
	talk(1, 2);
	nodectx_say(&C, "user", "m3");
	nodectx_flow_reply(&C, "[" FACT_C "]", 0);
	nodectx_flow_reply(&C, "no facts", 0);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_name, "vecwf");
	ck_assert_uint_eq(f->nf_ninputs, 1);
	ck_assert_str_eq(f->nf_inputs[0], "m1");
	ck_assert_str_eq(nodectx_flow(&C, 1)->nf_inputs[0], "m2");
	ck_facts("Bob is forty");
	ck_logged("m1");
}
END_TEST

/* After a chunk's facts are stored, the state document merges them. */
START_TEST(vector_state_document)
{
	json_t			*s = vector_settings();
	const struct nc_flow	*f;

	json_object_set_new(s, "useStateDocument", json_true());
	json_object_set_new(s, "stateDocumentWorkflowName",
	    json_string("statewf"));
	json_object_set_new(s, "lookbackStartTurn", json_integer(2));
	nodectx_settings(&C, s);
	talk(1, 3);
	fakeask_answer("[" FACT_A ", " FACT_NOKP ", " FACT_C "]");
	nodectx_flow_reply(&C, "Ann: green tea. Bob: 40.", 0);
	gen_ok(false);
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_name, "statewf");
	ck_assert_str_eq(f->nf_inputs[0], "- Ann likes green tea\n"
	    "- Bob is forty");
	ck_state("Ann: green tea. Bob: 40.");
}
END_TEST

/* RecentMemory and FullChatSummary write the file-style ledger even when
 * the settings say vectors. */
START_TEST(vector_not_when_forced_file)
{
	nodectx_settings(&C, vector_settings());
	talk(1, 3);
	fakeask_answer("A1");
	fakeask_answer("A2");
	gen_ok(true);
	ck_ledger("A1|A2");
	ck_facts("");
	ck_prompt_has(0, "chunk=m1|");
}
END_TEST

static void
other_logger(size_t call, void *arg)
{
	char	 h[SHA256_HEXLEN];

	if (call == 0) {
		sha256_hex("m1", 2, h);
		ck_assert_int_gt(vecmem_log_hash(S, "d", h, 1), 0);
	}
}

/* A chunk another request stored meanwhile is not stored again. */
START_TEST(vector_other_writer)
{
	nodectx_settings(&C, vector_settings());
	talk(1, 3);
	fakeask_hook(other_logger, NULL);
	fakeask_answer(FACT_A);
	fakeask_answer(FACT_C);
	gen_ok(false);
	ck_facts("Bob is forty");
	ck_logged("m2|m1");
}
END_TEST

/* Two chunks of one round may end with equal messages: the second is
 * this round's own, not another request's. */
START_TEST(vector_repeated_message)
{
	static const char *const said[] = { "hi", "fine", NULL };
	char	*g;

	nodectx_settings(&C, vector_settings());
	nodectx_say(&C, "user", "hi");
	nodectx_say(&C, "assistant", "fine");
	nodectx_say(&C, "user", "hi");
	nodectx_say(&C, "assistant", "bye");
	fakeask_answer(FACT_A);
	fakeask_answer("[]");
	fakeask_answer(FACT_C);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 3);
	ck_facts("Ann likes green tea|Bob is forty");
	g = logged(said);
	ck_assert_str_eq(g, "hi|hi");
	free(g);
}
END_TEST

START_TEST(vector_lock_held)
{
	json_t	*s = vector_settings();

	json_object_set_new(s, "condensationLockTimeoutSeconds",
	    json_integer(1));
	nodectx_settings(&C, s);
	talk(1, 3);
	ck_assert_int_eq(store_lock(S, LOCK, "other", 600), 1);
	gen_ok(false);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	ck_facts("");
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
memgen_suite(void)
{
	Suite	*s = suite_create("memgen");
	TCase	*tc;

	tc = tcase(s, "key");
	tcase_add_test(tc, key_of_discussion);
	tc = tcase(s, "settings");
	tcase_add_test(tc, settings_defaults);
	tcase_add_test(tc, settings_read);
	tcase_add_test(tc, settings_errors);
	tc = tcase(s, "llm_calls");
	tcase_add_test(tc, llm_call_shape);
	tcase_add_test(tc, llm_quiet_for_responder);
	tcase_add_test(tc, llm_errors);
	tcase_add_test(tc, llm_node_call);
	tc = tcase(s, "helper_workflows");
	tcase_add_test(tc, workflow_call);
	tcase_add_test(tc, workflow_errors);
	tc = tcase(s, "generation_lock");
	tcase_add_test(tc, lock_taken_and_given_back);
	tcase_add_test(tc, lock_held_skips_round);
	tcase_add_test(tc, lock_cancelled_while_waiting);
	tcase_add_test(tc, lock_without_store);
	tc = tcase(s, "when_to_write");
	tcase_add_test(tc, gen_needs_discussion);
	tcase_add_test(tc, gen_needs_three_messages);
	tcase_add_test(tc, file_lookback);
	tcase_add_test(tc, file_resumes_after_last_memory);
	tcase_add_test(tc, file_count_trigger_needs_ledger);
	tcase_add_test(tc, file_token_trigger);
	tcase_add_test(tc, file_chunks_grouped);
	tcase_add_test(tc, file_scoped_by_key);
	tc = tcase(s, "file_prompts");
	tcase_add_test(tc, file_prompt_placeholders);
	tcase_add_test(tc, file_prompt_sees_previous);
	tcase_add_test(tc, file_workflow);
	tc = tcase(s, "file_failures");
	tcase_add_test(tc, file_empty_answer);
	tcase_add_test(tc, file_llm_error);
	tcase_add_test(tc, file_cancelled);
	tcase_add_test(tc, file_other_writer);
	tc = tcase(s, "condensation");
	tcase_add_test(tc, condense_oldest_new);
	tcase_add_test(tc, condense_after_tracker);
	tcase_add_test(tc, condense_thresholds);
	tcase_add_test(tc, condense_empty_answer);
	tcase_add_test(tc, condense_in_round);
	tcase_add_test(tc, condense_seed_after_short_round);
	tc = tcase(s, "state_document");
	tcase_add_test(tc, state_merge);
	tcase_add_test(tc, state_off);
	tcase_add_test(tc, state_refusals);
	tcase_add_test(tc, state_failure_is_quiet);
	tc = tcase(s, "vector");
	tcase_add_test(tc, vector_facts);
	tcase_add_test(tc, vector_settings_fallback);
	tcase_add_test(tc, vector_no_facts_not_logged);
	tcase_add_test(tc, vector_resumes_after_logged);
	tcase_add_test(tc, vector_count_trigger);
	tcase_add_test(tc, vector_workflow);
	tcase_add_test(tc, vector_state_document);
	tcase_add_test(tc, vector_not_when_forced_file);
	tcase_add_test(tc, vector_other_writer);
	tcase_add_test(tc, vector_repeated_message);
	tcase_add_test(tc, vector_lock_held);
	return s;
}

int
main(void)
{
	return check_main(memgen_suite());
}
