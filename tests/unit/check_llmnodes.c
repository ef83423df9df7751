/* check_llmnodes.c - the node types that call an LLM or another workflow, or take a lock: Standard, ImageProcessor, CustomWorkflow, ConditionalCustomWorkflow, WorkflowLock; the LLM call stubbed, workflows run by a fake engine. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "../../worker/core/msgs_edit.h"
#include "../../worker/engine/registry.h"
#include "../../worker/store/store_lock.h"
#include "../testmain.h"
#include "nodectx.h"
#include "stubs_ask.h"

#define NO_IMAGES	"There were no images attached to the message"
#define IMG_SEP		"\n-------------\n"

static struct nodectx	 C;
static struct store	*S;

static void
setup(void)
{
	nodectx_open(&C, "llmnodes");
	S = C.nc_db.sd_store;
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
run(json_t *node, struct buf *out, bool *streamed, struct wresult *res)
{
	const char	*type = json_string_value(json_object_get(node,
			    "type"));
	const struct node_type *t = node_type_find(type);

	ck_assert_msg(t != NULL, "no node type %s", type);
	return nodectx_run(&C, t, node, out, streamed, res);
}

/* The output of a node that must succeed without streaming. Caller
 * frees. */
static char *
out_of(json_t *node)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed;

	ck_assert_msg(run(node, &out, &streamed, &res) == 0, "node failed: "
	    "%s", res.r_message);
	ck_assert(!streamed);
	return out.b_data != NULL ? buf_take(&out) : xstrdup("");
}

#define ck_out(node, want) do {						\
	char	*s_ = out_of(node);					\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

static void
ck_node_fails(json_t *node, int http, const char *needle)
{
	char		*type = xstrdup(json_string_value(json_object_get(node,
			    "type")));
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed;

	ck_assert_int_eq(run(node, &out, &streamed, &res), -1);
	nodectx_ck_fail(&res, http, type, needle);
	buf_free(&out);
	free(type);
}

/* The conversation's contents joined by '|', roles first ("user:hi"). */
static char *
conversation(void)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < C.nc_msgs.n; i++)
		buf_printf(&b, "%s%s:%s", i > 0 ? "|" : "",
		    C.nc_msgs.v[i].m_role, C.nc_msgs.v[i].m_content);
	return buf_take(&b);
}

#define ck_conversation(want) do {					\
	char	*c_ = conversation();					\
	ck_assert_str_eq(c_, want);					\
	free(c_);							\
} while (0)

/* ---- Standard -------------------------------------------------------- */

START_TEST(standard_call)
{
	const struct fakeask_call	*c;

	vars_set(C.nc_early, "ep", "early-ep");
	fakeask_answer("the answer");
	ck_out(nodectx_json("{s:s, s:s, s:s, s:s, s:s, s:i}", "type",
	    "Standard", "endpointName", "{ep}", "preset", "pre", "systemPrompt",
	    "S {name}", "prompt", "P {name}", "maxResponseSizeInTokens", 77),
	    "the answer");
	c = fakeask_call(0);
	ck_assert_str_eq(c->ac_endpoint, "early-ep");
	ck_assert_str_eq(c->ac_preset, "pre");
	ck_assert_str_eq(c->ac_system, "S Ann");
	ck_assert_str_eq(c->ac_prompt, "P Ann");
	ck_assert_int_eq(c->ac_max_tokens, 77);
	ck_assert_str_eq(c->ac_type, "Standard");
	ck_assert(!c->ac_stream);
	ck_assert_int_eq(C.nc_rq.fr_emits, 0);
}
END_TEST

/* A streaming responder's answer goes to the client as it comes, and
 * the node says so. */
START_TEST(standard_streams)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed;

	C.nc_responder = C.nc_stream = true;
	fakeask_answer("streamed text");
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type", "Standard",
	    "endpointName", "ep"), &out, &streamed, &res), 0);
	ck_assert(streamed);
	ck_assert(fakeask_call(0)->ac_stream);
	ck_assert_str_eq(out.b_data, "streamed text");
	ck_assert_str_eq(C.nc_rq.fr_text.b_data, "streamed text");
	/* a responder the client does not stream from */
	C.nc_stream = false;
	buf_reset(&out);
	fakeask_answer("whole");
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type", "Standard",
	    "endpointName", "ep"), &out, &streamed, &res), 0);
	ck_assert(!streamed);
	ck_assert(fakeask_call(1)->ac_responder);
	ck_assert_int_eq(C.nc_rq.fr_emits, 1);
	buf_free(&out);
}
END_TEST

START_TEST(standard_error)
{
	fakeask_fail(502, "endpoint 'ep' answered 500");
	ck_node_fails(nodectx_json("{s:s, s:s}", "type", "Standard",
	    "endpointName", "ep"), 502, "endpoint 'ep' answered 500");
	ck_node_fails(nodectx_json("{s:s}", "type", "Standard"), 500,
	    "no endpointName");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
}
END_TEST

/* ---- ImageProcessor -------------------------------------------------- */

static json_t *
imagenode(void)
{
	return nodectx_json("{s:s, s:s, s:s}", "type", "ImageProcessor",
	    "endpointName", "vision", "prompt", "Describe it");
}

/* The conversation: a user message with two images, an answer, a user
 * message with one. */
static void
pictures(void)
{
	nodectx_say(&C, "user", "look at these");
	wmsg_add_image(&C.nc_msgs.v[0], "img-A");
	wmsg_add_image(&C.nc_msgs.v[0], "img-B");
	nodectx_say(&C, "assistant", "nice");
	nodectx_say(&C, "user", "and this");
	wmsg_add_image(&C.nc_msgs.v[2], "img-C");
}

START_TEST(image_none)
{
	nodectx_say(&C, "user", "no pictures");
	ck_out(imagenode(), NO_IMAGES);
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	ck_conversation("user:no pictures");
}
END_TEST

/* One call per image, oldest first, each sending only its image; the
 * descriptions joined, empty ones left out. */
START_TEST(image_per_image)
{
	pictures();
	fakeask_answer("an apple");
	fakeask_answer("");
	fakeask_answer("a cat");
	ck_out(imagenode(), "an apple" IMG_SEP "a cat");
	ck_assert_uint_eq(fakeask_ncalls(), 3);
	ck_assert_str_eq(fakeask_call(0)->ac_image, "img-A");
	ck_assert_str_eq(fakeask_call(1)->ac_image, "img-B");
	ck_assert_str_eq(fakeask_call(2)->ac_image, "img-C");
	ck_assert_str_eq(fakeask_call(0)->ac_endpoint, "vision");
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, "Describe it");
	/* without addAsUserMessage the conversation is left alone */
	ck_conversation("user:look at these|assistant:nice|user:and this");
}
END_TEST

/* visionScanMessageLimit: the images of the last N messages only. */
START_TEST(image_scan_limit)
{
	json_t	*n = imagenode();

	pictures();
	json_object_set_new(n, "visionScanMessageLimit", json_integer(2));
	fakeask_answer("a cat");
	ck_out(n, "a cat");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_assert_str_eq(fakeask_call(0)->ac_image, "img-C");
}
END_TEST

/* Delivered whole even by a streaming responder. */
START_TEST(image_not_streamed)
{
	pictures();
	C.nc_responder = C.nc_stream = true;
	fakeask_answer("one");
	fakeask_answer("two");
	fakeask_answer("three");
	ck_out(imagenode(), "one" IMG_SEP "two" IMG_SEP "three");
	ck_assert(!fakeask_call(0)->ac_stream);
	ck_assert(!fakeask_call(2)->ac_stream);
	ck_assert_int_eq(C.nc_rq.fr_emits, 0);
}
END_TEST

/* addAsUserMessage: the descriptions in the message template, a user
 * message before the last one, for the nodes after this one. */
START_TEST(image_add_as_user_message)
{
	json_t	*n = imagenode();

	pictures();
	json_object_set_new(n, "addAsUserMessage", json_true());
	fakeask_answer("an apple");
	fakeask_answer("a pear");
	fakeask_answer("a cat");
	ck_out(json_incref(n), "an apple" IMG_SEP "a pear" IMG_SEP "a cat");
	ck_conversation("user:look at these|assistant:nice|user:[SYSTEM: The "
	    "user recently added one or more images to the conversation. The "
	    "images have been analyzed by an advanced vision AI, which has "
	    "described them in detail. The descriptions of the images can be "
	    "found below:\n\n<vision_llm_response>\nan apple" IMG_SEP "a pear"
	    IMG_SEP "a cat\n</vision_llm_response>]|user:and this");
	/* the node's own template, its variables filled */
	json_object_set_new(n, "message", json_string("{name}: [IMAGE_BLOCK] "
	    "/ [IMAGE_BLOCK]"));
	json_object_set_new(n, "visionScanMessageLimit", json_integer(1));
	fakeask_answer("a {cat}");
	ck_out(n, "a {cat}");
	ck_assert_str_eq(C.nc_msgs.v[C.nc_msgs.n - 2].m_content,
	    "Ann: a {cat} / a {cat}");
	ck_assert_uint_eq(C.nc_msgs.n, 5);
}
END_TEST

/* A conversation of one message: the description goes after it. */
START_TEST(image_add_to_single_message)
{
	json_t	*n = imagenode();

	nodectx_say(&C, "user", "see");
	wmsg_add_image(&C.nc_msgs.v[0], "img-A");
	json_object_set_new(n, "addAsUserMessage", json_true());
	json_object_set_new(n, "message", json_string("[IMAGE_BLOCK]"));
	fakeask_answer("a dog");
	ck_out(n, "a dog");
	ck_conversation("user:see|user:a dog");
}
END_TEST

/* A failed call fails the node; no message is added. */
START_TEST(image_error)
{
	json_t	*n = imagenode();

	pictures();
	json_object_set_new(n, "addAsUserMessage", json_true());
	fakeask_answer("an apple");
	fakeask_fail(503, "vision endpoint down");
	ck_node_fails(n, 503, "vision endpoint down");
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	ck_assert_uint_eq(C.nc_msgs.n, 3);
}
END_TEST

/* ---- the vision-response cache (addendum A11.4) --------------------- */

static json_t *
cachenode(void)
{
	json_t	*n = imagenode();

	json_object_set_new(n, "saveVisionResponsesToDiscussionId",
	    json_true());
	return n;
}

/* How many descriptions the discussion keeps. */
static void
kept(const char *want)
{
	char	*r = scratchdb_rows(&C.nc_db, "SELECT count(*) FROM "
		    "vision_responses WHERE discussion = 'disc'");

	ck_assert_str_eq(r, want);
	free(r);
}

/* A miss describes each image of a message and keeps the description
 * per message; the same conversation again costs no call; a new
 * message is the only one described; only the last 10 messages'
 * descriptions are the output. */
START_TEST(a11_4_vision_cache)
{
	C.nc_discussion = "disc";
	pictures();
	fakeask_answer("an apple");
	fakeask_answer("a pear");
	fakeask_answer("a cat");
	ck_out(cachenode(), "an apple" IMG_SEP "a pear" IMG_SEP "a cat");
	ck_assert_uint_eq(fakeask_ncalls(), 3);
	kept("2\n");
	fakeask_reset();
	ck_out(cachenode(), "an apple" IMG_SEP "a pear" IMG_SEP "a cat");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	nodectx_say(&C, "user", "and a dog");
	wmsg_add_image(&C.nc_msgs.v[3], "img-D");
	fakeask_answer("a dog");
	ck_out(cachenode(), "an apple" IMG_SEP "a pear" IMG_SEP "a cat"
	    IMG_SEP "a dog");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	ck_assert_str_eq(fakeask_call(0)->ac_image, "img-D");
	kept("3\n");
	fakeask_reset();
	for (int i = 0; i < 8; i++)
		nodectx_say(&C, i % 2 ? "user" : "assistant", "chat");
	/* 12 messages: the first (apple, pear) is out of the last 10 */
	ck_out(cachenode(), "a cat" IMG_SEP "a dog");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

/* The key is role, content and the images sorted: the same picture in
 * another order is a hit, another text a miss; visionScanMessageLimit
 * bounds the scan; no discussion: the uncached path. */
START_TEST(a11_4_vision_keys_and_limits)
{
	json_t	*n;

	C.nc_discussion = "disc";
	nodectx_say(&C, "user", "look");
	wmsg_add_image(&C.nc_msgs.v[0], "img-B");
	wmsg_add_image(&C.nc_msgs.v[0], "img-A");
	fakeask_answer("two");
	fakeask_answer("pictures");
	ck_out(cachenode(), "two" IMG_SEP "pictures");
	free(C.nc_msgs.v[0].m_images[0]);
	free(C.nc_msgs.v[0].m_images[1]);
	C.nc_msgs.v[0].m_images[0] = xstrdup("img-A");
	C.nc_msgs.v[0].m_images[1] = xstrdup("img-B");
	fakeask_reset();
	ck_out(cachenode(), "two" IMG_SEP "pictures");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	nodectx_say(&C, "assistant", "ok");
	nodectx_say(&C, "user", "look");
	wmsg_add_image(&C.nc_msgs.v[2], "img-A");
	n = cachenode();
	json_object_set_new(n, "visionScanMessageLimit", json_integer(1));
	fakeask_answer("one");
	ck_out(n, "one");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	kept("2\n");
	C.nc_discussion = "";
	fakeask_reset();
	fakeask_answer("uncached");
	fakeask_answer("a");
	fakeask_answer("b");
	ck_out(cachenode(), "uncached" IMG_SEP "a" IMG_SEP "b");
	ck_assert_uint_eq(fakeask_ncalls(), 3);
}
END_TEST

/* addAsUserMessage with the cache: each message's description goes
 * right after it; the output holds them all. */
START_TEST(a11_4_vision_per_message)
{
	json_t	*n = cachenode();

	C.nc_discussion = "disc";
	pictures();
	json_object_set_new(n, "addAsUserMessage", json_true());
	json_object_set_new(n, "message", json_string("seen: [IMAGE_BLOCK]"));
	fakeask_answer("an apple");
	fakeask_answer("a pear");
	fakeask_answer("a cat");
	ck_out(n, "an apple" IMG_SEP "a pear" IMG_SEP "a cat");
	ck_conversation("user:look at these|user:seen: an apple" IMG_SEP
	    "a pear|assistant:nice|user:and this|user:seen: a cat");
}
END_TEST

/* ---- CustomWorkflow ------------------------------------------------- */

/* A non-responder runs the child as a non-responder with the scoped
 * variables, str()'d and filled, as its inputs. */
START_TEST(custom_inputs)
{
	const struct nc_flow	*f;

	vars_set(C.nc_vars, "agent1Output", "from node 1");
	nodectx_flow_reply(&C, "child said", 0);
	ck_out(nodectx_json("{s:s, s:s, s:[s, i, b, s, [s, i]]}", "type",
	    "CustomWorkflow", "workflowName", "child", "scoped_variables",
	    "{agent1Output}", 42, 1, "{name} {{x}}", "a", 1), "child said");
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_name, "child");
	ck_assert_str_eq(f->nf_folder, NC_FOLDER);
	ck_assert_uint_eq(f->nf_ninputs, 5);
	ck_assert_str_eq(f->nf_inputs[0], "from node 1");
	ck_assert_str_eq(f->nf_inputs[1], "42");
	ck_assert_str_eq(f->nf_inputs[2], "True");
	ck_assert_str_eq(f->nf_inputs[3], "Ann {x}");
	ck_assert_str_eq(f->nf_inputs[4], "['a', 1]");
	ck_assert(!f->nf_deliver && !f->nf_top);
	ck_assert_ptr_null(f->nf_system);
	ck_assert_ptr_null(f->nf_prompt);
	ck_assert_ptr_eq(f->nf_parent, C.nc_x.nx_run);
	ck_assert_str_eq(C.nc_rq.fr_phase, "wf node 3/5: workflow child");
	/* without scoped_variables: no inputs; without a name: WilmerAI's */
	nodectx_flow_reply(&C, "", 0);
	ck_out(nodectx_json("{s:s}", "type", "CustomWorkflow"), "");
	f = nodectx_flow(&C, 1);
	ck_assert_str_eq(f->nf_name, "No_Workflow_Name_Supplied");
	ck_assert_uint_eq(f->nf_ninputs, 0);
}
END_TEST

START_TEST(custom_folder_override)
{
	nodectx_flow_reply(&C, "", 0);
	nodectx_flow_reply(&C, "", 0);
	ck_out(nodectx_json("{s:s, s:s, s:s}", "type", "CustomWorkflow",
	    "workflowName", "child", "workflowUserFolderOverride", "_common"),
	    "");
	ck_out(nodectx_json("{s:s, s:s, s:s}", "type", "CustomWorkflow",
	    "workflowName", "child", "workflowUserFolderOverride", ""), "");
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_folder, "_common");
	ck_assert_str_eq(nodectx_flow(&C, 1)->nf_folder, NC_FOLDER);
}
END_TEST

/* firstNode*Override when the node has it (even empty: then none),
 * else *Override; null or "" is none; variables filled. */
START_TEST(custom_overrides)
{
	const struct nc_flow	*f;
	int			 i;

	for (i = 0; i < 3; i++)
		nodectx_flow_reply(&C, "", 0);
	ck_out(nodectx_json("{s:s, s:s, s:s, s:s, s:s, s:s}", "type",
	    "CustomWorkflow", "workflowName", "c",
	    "firstNodeSystemPromptOverride", "FS {name}",
	    "systemPromptOverride", "PLAIN S",
	    "firstNodePromptOverride", "FP", "promptOverride", "PLAIN P"), "");
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_system, "FS Ann");
	ck_assert_str_eq(f->nf_prompt, "FP");
	ck_out(nodectx_json("{s:s, s:s, s:s, s:s}", "type", "CustomWorkflow",
	    "workflowName", "c", "systemPromptOverride", "S {name}",
	    "promptOverride", "P"), "");
	f = nodectx_flow(&C, 1);
	ck_assert_str_eq(f->nf_system, "S Ann");
	ck_assert_str_eq(f->nf_prompt, "P");
	ck_out(nodectx_json("{s:s, s:s, s:s, s:s, s:n}", "type",
	    "CustomWorkflow", "workflowName", "c",
	    "firstNodeSystemPromptOverride", "", "systemPromptOverride", "S",
	    "promptOverride"), "");
	f = nodectx_flow(&C, 2);
	ck_assert_ptr_null(f->nf_system);
	ck_assert_ptr_null(f->nf_prompt);
}
END_TEST

/* The streaming responder's child answers the client itself, as the
 * top of its own run. */
START_TEST(custom_streaming_child)
{
	struct buf		 out = BUF_INIT;
	struct wresult		 res;
	bool			 streamed;
	const struct nc_flow	*f;

	C.nc_responder = C.nc_stream = true;
	nodectx_flow_reply(&C, "child streams", 0);
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type",
	    "CustomWorkflow", "workflowName", "child"), &out, &streamed, &res),
	    0);
	f = nodectx_flow(&C, 0);
	ck_assert(f->nf_deliver && f->nf_top);
	ck_assert(streamed);
	ck_assert_str_eq(C.nc_rq.fr_text.b_data, "child streams");
	ck_assert_str_eq(out.b_data, "child streams");
	/* a responder whose client does not stream: a quiet child */
	C.nc_stream = false;
	nodectx_flow_reply(&C, "quiet", 0);
	buf_reset(&out);
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type",
	    "CustomWorkflow", "workflowName", "child"), &out, &streamed, &res),
	    0);
	f = nodectx_flow(&C, 1);
	ck_assert(!f->nf_deliver && !f->nf_top);
	ck_assert(!streamed);
	ck_assert_int_eq(C.nc_rq.fr_emits, 1);
	buf_free(&out);
}
END_TEST

/* The child's end is the node's: an error as the engine wrote it, an
 * early end (a WorkflowLock in the child) passed on. */
START_TEST(custom_child_outcomes)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed;

	nodectx_flow_reply(&C, "no such file", -1);
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type",
	    "CustomWorkflow", "workflowName", "gone"), &out, &streamed, &res),
	    -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_str_eq(res.r_message, "workflow 'gone': no such file");
	nodectx_flow_reply(&C, "", NODE_END);
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type",
	    "CustomWorkflow", "workflowName", "locked"), &out, &streamed, &res),
	    NODE_END);
	nodectx_flow_reply(&C, "", NC_FLOW_CANCEL);
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type",
	    "CustomWorkflow", "workflowName", "slow"), &out, &streamed, &res),
	    -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	C.nc_rq.fr_rq.rq_flow = NULL;
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type",
	    "CustomWorkflow", "workflowName", "c"), &out, &streamed, &res), -1);
	ck_assert_str_eq(res.r_message, "no workflow engine runs this request");
	buf_free(&out);
}
END_TEST

/* ---- ConditionalCustomWorkflow -------------------------------------- */

static json_t *
conditional(const char *key)
{
	return nodectx_json("{s:s, s:s, s:{s:s, s:s, s:s}, s:[s]}", "type",
	    "ConditionalCustomWorkflow", "conditionalKey", key,
	    "conditionalWorkflows", "Yes", "yes-wf", "No", "", "Default",
	    "default-wf", "scoped_variables", "{name}");
}

/* The key resolved, stripped and lower-cased, against keys compared
 * without case; a miss (or "") goes to "default". */
START_TEST(conditional_routes)
{
	const struct nc_flow	*f;

	vars_set(C.nc_vars, "agent1Output", "  YES\n");
	nodectx_flow_reply(&C, "said yes", 0);
	ck_out(conditional("{agent1Output}"), "said yes");
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_name, "yes-wf");
	ck_assert_str_eq(f->nf_inputs[0], "Ann");
	ck_assert(!f->nf_deliver);
	nodectx_flow_reply(&C, "", 0);
	nodectx_flow_reply(&C, "", 0);
	ck_out(conditional("maybe"), "");
	ck_out(conditional("no"), "");
	ck_assert_str_eq(nodectx_flow(&C, 1)->nf_name, "default-wf");
	ck_assert_str_eq(nodectx_flow(&C, 2)->nf_name, "default-wf");
	/* no default either: WilmerAI's name for none */
	nodectx_flow_reply(&C, "", 0);
	ck_out(nodectx_json("{s:s, s:s, s:{s:s}}", "type",
	    "ConditionalCustomWorkflow", "conditionalKey", "b",
	    "conditionalWorkflows", "a", "a-wf"), "");
	ck_assert_str_eq(nodectx_flow(&C, 3)->nf_name,
	    "No_Workflow_Name_Supplied");
}
END_TEST

/* A miss with UseDefaultContentInsteadOfWorkflow: that content, filled,
 * and no workflow; word by word to a streaming client. */
START_TEST(conditional_default_content)
{
	json_t		*n = conditional("maybe");
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed;

	json_object_set_new(n, "UseDefaultContentInsteadOfWorkflow",
	    json_string("Sorry {name}, no."));
	ck_out(json_incref(n), "Sorry Ann, no.");
	ck_assert_uint_eq(C.nc_nflows, 0);
	/* null is none: the default workflow */
	nodectx_flow_reply(&C, "dflt", 0);
	json_object_set_new(n, "UseDefaultContentInsteadOfWorkflow",
	    json_null());
	ck_out(json_incref(n), "dflt");
	/* a number is str()'d */
	json_object_set_new(n, "UseDefaultContentInsteadOfWorkflow",
	    json_integer(7));
	ck_out(json_incref(n), "7");
	C.nc_responder = C.nc_stream = true;
	json_object_set_new(n, "UseDefaultContentInsteadOfWorkflow",
	    json_string("Sorry {name}, no."));
	ck_assert_int_eq(run(n, &out, &streamed, &res), 0);
	ck_assert(streamed);
	ck_assert_str_eq(out.b_data, "Sorry Ann, no.");
	ck_assert_str_eq(C.nc_rq.fr_text.b_data, "Sorry Ann, no.");
	/* "Sorry", " ", "Ann,", " ", "no." */
	ck_assert_int_eq(C.nc_rq.fr_emits, 5);
	ck_assert_uint_eq(C.nc_nflows, 1);
	buf_free(&out);
}
END_TEST

/* routeOverrides of the matched key, and only those (not the node's
 * own firstNode*Override). */
START_TEST(conditional_route_overrides)
{
	json_t			*n = conditional("yes");
	const struct nc_flow	*f;

	json_object_set_new(n, "firstNodeSystemPromptOverride",
	    json_string("NODE"));
	json_object_set_new(n, "routeOverrides", nodectx_json("{s:{s:s, s:s}}",
	    "YES", "systemPromptOverride", "route S {name}",
	    "promptOverride", "route P"));
	nodectx_flow_reply(&C, "", 0);
	nodectx_flow_reply(&C, "", 0);
	ck_out(json_incref(n), "");
	f = nodectx_flow(&C, 0);
	ck_assert_str_eq(f->nf_system, "route S Ann");
	ck_assert_str_eq(f->nf_prompt, "route P");
	json_object_set_new(n, "conditionalKey", json_string("maybe"));
	ck_out(n, "");
	f = nodectx_flow(&C, 1);
	ck_assert_str_eq(f->nf_name, "default-wf");
	ck_assert_ptr_null(f->nf_system);
	ck_assert_ptr_null(f->nf_prompt);
}
END_TEST

START_TEST(conditional_streaming_child)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed;

	C.nc_responder = C.nc_stream = true;
	nodectx_flow_reply(&C, "yes, streamed", 0);
	ck_assert_int_eq(run(conditional("yes"), &out, &streamed, &res), 0);
	ck_assert(streamed);
	ck_assert(nodectx_flow(&C, 0)->nf_deliver);
	ck_assert(nodectx_flow(&C, 0)->nf_top);
	ck_assert_str_eq(C.nc_rq.fr_text.b_data, "yes, streamed");
	buf_free(&out);
}
END_TEST

/* ---- WorkflowLock --------------------------------------------------- */

START_TEST(lock_taken)
{
	ck_out(nodectx_json("{s:s, s:s}", "type", "WorkflowLock",
	    "workflowLockId", "{name}-lock"), "");
	ck_assert_str_eq(C.nc_rq.fr_phase, "wf node 3/5: lock Ann-lock");
	/* it is this request's: others cannot have it, it may again */
	ck_assert_int_eq(store_lock(S, "Ann-lock", "other", 600), 0);
	ck_out(nodectx_json("{s:s, s:s}", "type", "WorkflowLock",
	    "workflowLockId", "Ann-lock"), "");
	ck_assert_int_eq(store_unlock_owner(S, NC_RQID), 1);
	ck_assert_int_eq(store_lock(S, "Ann-lock", "other", 600), 1);
}
END_TEST

/* Held by another run: the workflow ends here, successfully. */
START_TEST(lock_held_ends_workflow)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed;

	ck_assert_int_eq(store_lock(S, "busy", "other", 600), 1);
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type", "WorkflowLock",
	    "workflowLockId", "busy"), &out, &streamed, &res), NODE_END);
	ck_assert_uint_eq(out.b_len, 0);
	ck_assert_int_eq(res.r_status, RQ_OK);
	/* another lock is free */
	ck_assert_int_eq(run(nodectx_json("{s:s, s:s}", "type", "WorkflowLock",
	    "workflowLockId", "idle"), &out, &streamed, &res), 0);
	buf_free(&out);
}
END_TEST

START_TEST(lock_errors)
{
	ck_node_fails(nodectx_json("{s:s}", "type", "WorkflowLock"), 500,
	    "A WorkflowLock node must have a 'workflowLockId'");
	vars_set(C.nc_vars, "empty", "");
	ck_node_fails(nodectx_json("{s:s, s:s}", "type", "WorkflowLock",
	    "workflowLockId", "{empty}"), 500, "'workflowLockId'");
	C.nc_rq.fr_store = NULL;
	ck_node_fails(nodectx_json("{s:s, s:s}", "type", "WorkflowLock",
	    "workflowLockId", "x"), 500, "no database in this test");
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
llmnodes_suite(void)
{
	Suite	*s = suite_create("llmnodes");
	TCase	*tc;

	tc = tcase(s, "standard");
	tcase_add_test(tc, standard_call);
	tcase_add_test(tc, standard_streams);
	tcase_add_test(tc, standard_error);
	tc = tcase(s, "image_processor");
	tcase_add_test(tc, image_none);
	tcase_add_test(tc, image_per_image);
	tcase_add_test(tc, image_scan_limit);
	tcase_add_test(tc, image_not_streamed);
	tcase_add_test(tc, image_add_as_user_message);
	tcase_add_test(tc, image_add_to_single_message);
	tcase_add_test(tc, image_error);
	tcase_add_test(tc, a11_4_vision_cache);
	tcase_add_test(tc, a11_4_vision_keys_and_limits);
	tcase_add_test(tc, a11_4_vision_per_message);
	tc = tcase(s, "custom_workflow");
	tcase_add_test(tc, custom_inputs);
	tcase_add_test(tc, custom_folder_override);
	tcase_add_test(tc, custom_overrides);
	tcase_add_test(tc, custom_streaming_child);
	tcase_add_test(tc, custom_child_outcomes);
	tc = tcase(s, "conditional_workflow");
	tcase_add_test(tc, conditional_routes);
	tcase_add_test(tc, conditional_default_content);
	tcase_add_test(tc, conditional_route_overrides);
	tcase_add_test(tc, conditional_streaming_child);
	tc = tcase(s, "workflow_lock");
	tcase_add_test(tc, lock_taken);
	tcase_add_test(tc, lock_held_ends_workflow);
	tcase_add_test(tc, lock_errors);
	return s;
}

int
main(void)
{
	return check_main(llmnodes_suite());
}
