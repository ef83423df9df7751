/* check_chunkrag.c - ConversationChunkProcessor (A6.1) and SlowButQualityRAG (A6.2) run on a scratch store, the child workflows a fake engine and the LLM call stubbed. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../../worker/engine/registry.h"
#include "../../worker/memory/memory.h"
#include "../../worker/memory/memstore.h"
#include "../../worker/store/store_lock.h"
#include "../../worker/tools/chunkcur.h"
#include "../testmain.h"
#include "nodectx.h"
#include "stubs_ask.h"

#define CCP	"ConversationChunkProcessor"
#define RAG	"SlowButQualityRAG"
#define SEP14	"\n--------------\n"

static struct nodectx	 C;
static char		 curdir[128];	/* the scratch cursorDirectory */

static void
setup(void)
{
	nodectx_open(&C, "chunkrag");
	C.nc_discussion = "disc1";
	snprintf(curdir, sizeof(curdir), "%s/cursors", C.nc_db.sd_dir);
	fakeask_reset();
}

static void
teardown(void)
{
	fakeask_reset();
	nodectx_close(&C);
}

/* n messages "m<start>".. with alternating roles, replacing the
 * conversation. */
static void
say_n(size_t n, size_t start)
{
	char	 s[32];
	size_t	 i;

	wmsgs_free(&C.nc_msgs);
	for (i = 0; i < n; i++) {
		snprintf(s, sizeof(s), "m%zu", start + i);
		nodectx_say(&C, i % 2 == 0 ? "user" : "assistant", s);
	}
}

static void
hash_of(const char *content, char out[SHA256_HEXLEN])
{
	sha256_hex(content, strlen(content), out);
}

/* The contents of messages "m<a>".."m<b-1>" joined with "\n". Caller
 * frees. */
static char *
joined(size_t a, size_t b)
{
	struct buf	 o = BUF_INIT;
	size_t		 i;

	buf_adds(&o, "");
	for (i = a; i < b; i++)
		buf_printf(&o, "%sm%zu", i > a ? "\n" : "", i);
	return buf_take(&o);
}

/* n with the members of extra (a JSON object text, or NULL) set over
 * its own. */
static json_t *
merged(json_t *n, const char *extra)
{
	json_error_t	 e;
	json_t		*x;

	if (extra != NULL) {
		x = json_loads(extra, 0, &e);
		ck_assert_msg(x != NULL, "%s", e.text);
		json_object_update(n, x);
		json_decref(x);
	}
	return n;
}

/* The node with WilmerAI's test defaults: id keyEvents, chunk 10,
 * lookback 0, the scratch cursor folder; then extra. */
static json_t *
ccp_node(const char *extra)
{
	return merged(nodectx_json("{s:s, s:s, s:s, s:i, s:i, s:s}", "type",
	    CCP, "id", "keyEvents", "workflowName", "KeyEvents_ChunkUpdate",
	    "chunkSize", 10, "lookbackMessages", 0, "cursorDirectory", curdir),
	    extra);
}

static int
run(json_t *node, struct buf *out, struct wresult *res)
{
	const char	*type = json_string_value(json_object_get(node, "type"));
	bool		 streamed;

	return nodectx_run(&C, node_type_find(type), node, out, &streamed,
	    res);
}

/* Run node, which must succeed; its output. Caller frees. */
static char *
ok(json_t *node)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_msg(run(node, &out, &res) == 0, "failed: %s", res.r_message);
	return out.b_data != NULL ? buf_take(&out) : xstrdup("");
}

/* Queue n child outputs. */
static void
replies(size_t n)
{
	while (n-- > 0)
		nodectx_flow_reply(&C, "ignored", 0);
}

static char *
cursor_file(const char *id, const char *disc)
{
	return xasprintf("%s/chunk_cursor_%s_%s.txt", curdir, id, disc);
}

/* The file's text, or NULL when it is not there. Caller frees. */
static char *
slurp(const char *path)
{
	FILE	*fp = fopen(path, "r");
	char	 b[65536];
	size_t	 n;

	if (fp == NULL)
		return NULL;
	n = fread(b, 1, sizeof(b) - 1, fp);
	fclose(fp);
	b[n] = '\0';
	return xstrdup(b);
}

/* The text of keyEvents' cursor for discussion disc1. Caller frees. */
static char *
cursor_text(void)
{
	char	*p = cursor_file("keyEvents", "disc1"), *t = slurp(p);

	free(p);
	return t;
}

/* Write the cursor of keyEvents/disc1: the hashes of m<a>..m<b-1>. */
static void
put_cursor(size_t a, size_t b)
{
	char	*p = cursor_file("keyEvents", "disc1"), h[SHA256_HEXLEN], s[32];
	FILE	*fp;
	size_t	 i;

	mkdir(curdir, 0700);
	ck_assert_ptr_nonnull(fp = fopen(p, "w"));
	for (i = a; i < b; i++) {
		snprintf(s, sizeof(s), "m%zu", i);
		hash_of(s, h);
		fprintf(fp, "%s%s", i > a ? "\n" : "", h);
	}
	fclose(fp);
	free(p);
}

#define ck_str_free(got, want) do {					\
	char	*g_ = (got);						\
	ck_assert_str_eq(g_, want);					\
	free(g_);							\
} while (0)

/* ---- A6.1 ConversationChunkProcessor ----------------------------- */

START_TEST(a6_1_cold_start)
{
	char			 h9[SHA256_HEXLEN], h19[SHA256_HEXLEN], *want;
	const struct nc_flow	*f;
	size_t			 i;

	say_n(25, 0);
	replies(2);
	ck_str_free(ok(ccp_node(NULL)),
	    CCP " 'keyEvents' processed 2 chunk(s).");
	ck_assert_uint_eq(C.nc_nflows, 2);
	for (i = 0; i < 2; i++) {
		f = nodectx_flow(&C, i);
		ck_assert_str_eq(f->nf_name, "KeyEvents_ChunkUpdate");
		ck_assert_str_eq(f->nf_folder, NC_FOLDER);
		ck_assert(!f->nf_deliver && !f->nf_top && f->nf_no_tools);
		ck_assert_uint_eq(f->nf_ninputs, 1);
		want = joined(i * 10, i * 10 + 10);
		ck_assert_str_eq(f->nf_inputs[0], want);
		free(want);
		/* its conversation: copies of the chunk's messages */
		ck_assert(f->nf_own_msgs);
		ck_assert_uint_eq(f->nf_msgs.n, 10);
		ck_assert_str_eq(f->nf_msgs.v[0].m_content,
		    C.nc_msgs.v[i * 10].m_content);
		ck_assert_str_eq(f->nf_msgs.v[1].m_role, "assistant");
		ck_assert_ptr_ne(f->nf_msgs.v[0].m_content,
		    C.nc_msgs.v[i * 10].m_content);
	}
	hash_of("m9", h9);
	hash_of("m19", h19);
	want = xasprintf("%s\n%s", h9, h19);
	ck_str_free(cursor_text(), want);
	free(want);
}
END_TEST

START_TEST(a6_1_fewer_than_chunk)
{
	put_cursor(10, 20);
	say_n(25, 0);
	ck_str_free(ok(ccp_node(NULL)),
	    CCP " 'keyEvents' processed 0 chunk(s).");
	ck_assert_uint_eq(C.nc_nflows, 0);
}
END_TEST

START_TEST(a6_1_one_new_chunk)
{
	char	*want = joined(10, 20);

	put_cursor(0, 10);
	say_n(20, 0);
	replies(1);
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 1);
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_inputs[0], want);
	free(want);
}
END_TEST

START_TEST(a6_1_edited_last_processed)
{
	put_cursor(10, 20);
	say_n(30, 0);
	free(C.nc_msgs.v[19].m_content);
	C.nc_msgs.v[19].m_content = xstrdup("EDITED-19");
	replies(1);
	free(ok(ccp_node(NULL)));
	/* re-anchored on m18: 19..28 is the one chunk, not all three */
	ck_assert_uint_eq(C.nc_nflows, 1);
	ck_assert_ptr_nonnull(strstr(nodectx_flow(&C, 0)->nf_inputs[0],
	    "EDITED-19\nm20\n"));
}
END_TEST

START_TEST(a6_1_identical_resend)
{
	say_n(25, 0);
	replies(2);
	free(ok(ccp_node(NULL)));
	ck_str_free(ok(ccp_node(NULL)),
	    CCP " 'keyEvents' processed 0 chunk(s).");
	ck_assert_uint_eq(C.nc_nflows, 2);
}
END_TEST

START_TEST(a6_1_changed_last_chunk)
{
	char	 s[32];
	size_t	 i;

	say_n(30, 0);
	replies(3);
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 3);
	for (i = 20; i < 30; i++) {
		snprintf(s, sizeof(s), "CHANGED-%zu", i);
		free(C.nc_msgs.v[i].m_content);
		C.nc_msgs.v[i].m_content = xstrdup(s);
	}
	replies(1);
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 4);
	ck_assert_ptr_nonnull(strstr(nodectx_flow(&C, 3)->nf_inputs[0],
	    "CHANGED-20"));
}
END_TEST

START_TEST(a6_1_tilde_path)
{
	char	*old = getenv("HOME") != NULL ? xstrdup(getenv("HOME")) : NULL;
	char	*p;

	setenv("HOME", C.nc_db.sd_dir, 1);
	say_n(25, 0);
	replies(2);
	free(ok(ccp_node("{\"cursorDirectory\": \"~/wilmer_chunk_cursor\"}")));
	p = xasprintf("%s/wilmer_chunk_cursor/chunk_cursor_keyEvents_disc1.txt",
	    C.nc_db.sd_dir);
	ck_assert_int_eq(access(p, R_OK), 0);
	free(p);
	free(ok(ccp_node("{\"cursorDirectory\": \"~/wilmer_chunk_cursor\"}")));
	ck_assert_uint_eq(C.nc_nflows, 2);	/* found it: no rerun */
	if (old != NULL)
		setenv("HOME", old, 1);
	free(old);
}
END_TEST

START_TEST(a6_1_separate_cursors)
{
	char	*p;

	say_n(10, 0);
	replies(4);
	free(ok(ccp_node("{\"id\": \"alpha\"}")));
	free(ok(ccp_node("{\"id\": \"beta\"}")));
	C.nc_discussion = "B";
	free(ok(ccp_node(NULL)));
	C.nc_discussion = "A";
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 4);
	p = cursor_file("alpha", "disc1");
	ck_assert_int_eq(access(p, R_OK), 0);
	free(p);
	p = cursor_file("beta", "disc1");
	ck_assert_int_eq(access(p, R_OK), 0);
	free(p);
	p = cursor_file("keyEvents", "A");
	ck_assert_int_eq(access(p, R_OK), 0);
	free(p);
	p = cursor_file("keyEvents", "B");
	ck_assert_int_eq(access(p, R_OK), 0);
	free(p);
}
END_TEST

START_TEST(a6_1_unreadable_cursor)
{
	char	*p = cursor_file("keyEvents", "disc1");

	mkdir(curdir, 0700);
	ck_assert_int_eq(mkdir(p, 0700), 0);	/* the cursor is a folder */
	say_n(10, 0);
	replies(1);
	ck_str_free(ok(ccp_node(NULL)),		/* the failed write too */
	    CCP " 'keyEvents' processed 1 chunk(s).");
	ck_assert_uint_eq(C.nc_nflows, 1);
	free(p);
}
END_TEST

/* node fails with 500 and exactly this WilmerAI message. */
static void
ck_valueerror(json_t *node, const char *msg)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	ck_assert_int_eq(run(node, &out, &res), -1);
	nodectx_ck_fail(&res, 500, CCP, msg);
	ck_assert_str_eq(strstr(res.r_message, "): ") + 3, msg);
	ck_assert_uint_eq(C.nc_nflows, 0);
	buf_free(&out);
}

START_TEST(a6_1_value_errors)
{
	json_t	*n;

	say_n(10, 0);
	n = ccp_node(NULL);
	json_object_del(n, "id");
	ck_valueerror(n, "A " CCP " node must have a unique 'id'.");
	ck_valueerror(ccp_node("{\"id\": \"  \"}"),
	    "A " CCP " node must have a unique 'id'.");
	ck_valueerror(ccp_node("{\"id\": \"../evil\"}"),
	    CCP " 'id' must contain only letters, digits, '.', '-', or '_'; "
	    "got '../evil'.");
	n = ccp_node(NULL);
	json_object_del(n, "workflowName");
	ck_valueerror(n, CCP " 'keyEvents' must specify a 'workflowName'.");
	ck_valueerror(ccp_node("{\"chunkSize\": 0}"),
	    CCP " 'keyEvents': 'chunkSize' must be an integer >= 1.");
	ck_valueerror(ccp_node("{\"chunkSize\": \"10\"}"),
	    CCP " 'keyEvents': 'chunkSize' must be an integer >= 1.");
	ck_valueerror(ccp_node("{\"chunkSize\": true}"),
	    CCP " 'keyEvents': 'chunkSize' must be an integer >= 1.");
	ck_valueerror(ccp_node("{\"chunkSize\": 2.0}"),
	    CCP " 'keyEvents': 'chunkSize' must be an integer >= 1.");
	ck_valueerror(ccp_node("{\"lookbackMessages\": -1}"),
	    CCP " 'keyEvents': 'lookbackMessages' must be an integer >= 0.");
	n = ccp_node(NULL);
	json_object_del(n, "cursorDirectory");
	ck_valueerror(n, CCP " 'keyEvents' must specify a 'cursorDirectory'.");
	ck_valueerror(ccp_node("{\"cursorDirectory\": \"   \"}"),
	    CCP " 'keyEvents': 'cursorDirectory' resolved to empty.");
	/* the id is stripped before it is checked and named */
	ck_str_free(ok(ccp_node("{\"id\": \" keyEvents \", \"chunkSize\": 20}")),
	    CCP " 'keyEvents' processed 0 chunk(s).");
}
END_TEST

/* Without a discussion only the id is checked. */
START_TEST(a6_1_no_discussion)
{
	json_t	*n;

	C.nc_discussion = "";
	say_n(30, 0);
	ck_str_free(ok(ccp_node("{\"id\": \"../evil\", \"chunkSize\": 0}")),
	    CCP " '../evil' processed 0 chunk(s).");
	ck_assert_uint_eq(C.nc_nflows, 0);
	ck_assert_int_eq(access(curdir, F_OK), -1);
	n = ccp_node(NULL);
	json_object_del(n, "id");
	ck_valueerror(n, "A " CCP " node must have a unique 'id'.");
}
END_TEST

START_TEST(a6_1_scoped_variables)
{
	const struct nc_flow	*f;
	char			*want = joined(0, 10);

	say_n(10, 0);
	replies(1);
	free(ok(ccp_node("{\"scoped_variables\": [\"{name}\", \"static\", 5]}")));
	f = nodectx_flow(&C, 0);
	ck_assert_uint_eq(f->nf_ninputs, 4);
	ck_assert_str_eq(f->nf_inputs[0], want);
	ck_assert_str_eq(f->nf_inputs[1], "Ann");
	ck_assert_str_eq(f->nf_inputs[2], "static");
	ck_assert_str_eq(f->nf_inputs[3], "5");
	free(want);
}
END_TEST

START_TEST(a6_1_return_file)
{
	char	*node;

	say_n(10, 0);
	replies(1);
	nodectx_write(&C, "rec/key_events.md", "EVENT ONE\nEVENT TWO\n");
	node = xasprintf("{\"returnFile\": \"%s/rec/{name}.md\"}",
	    C.nc_db.sd_dir);
	ck_str_free(ok(ccp_node(node)), "");	/* Ann.md is not there */
	free(node);
	node = xasprintf("{\"returnFile\": \"%s/rec/key_events.md\"}",
	    C.nc_db.sd_dir);
	ck_str_free(ok(ccp_node(node)), "EVENT ONE\nEVENT TWO\n");
	free(node);
	nodectx_write(&C, "rec/empty.md", "");
	node = xasprintf("{\"returnFile\": \"%s/rec/empty.md\"}",
	    C.nc_db.sd_dir);
	ck_str_free(ok(ccp_node(node)), "No additional information added");
	free(node);
	ck_assert_uint_eq(C.nc_nflows, 1);
}
END_TEST

START_TEST(a6_1_lookback)
{
	json_t	*n;

	say_n(14, 0);
	replies(1);
	free(ok(ccp_node("{\"lookbackMessages\": 4}")));
	ck_assert_uint_eq(C.nc_nflows, 1);
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_msgs.v[9].m_content, "m9");
	say_n(3, 0);
	ck_str_free(ok(ccp_node("{\"lookbackMessages\": 4}")),
	    CCP " 'keyEvents' processed 0 chunk(s).");
	/* the default lookback is 4 */
	say_n(14, 100);
	replies(1);
	n = ccp_node("{\"id\": \"other\"}");
	json_object_del(n, "lookbackMessages");
	free(ok(n));
	ck_assert_uint_eq(C.nc_nflows, 2);
	ck_assert_str_eq(nodectx_flow(&C, 1)->nf_msgs.v[9].m_content, "m109");
}
END_TEST

/* WilmerAI's head-truncation case: every message fed to a child once. */
START_TEST(a6_1_head_truncated)
{
	struct buf	 all = BUF_INIT;
	size_t		 i, lines = 0;
	char		 s[32], *want;

	say_n(30, 0);
	replies(3);
	free(ok(ccp_node(NULL)));
	say_n(37, 3);			/* 3 oldest trimmed, 10 new */
	replies(1);
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 4);
	want = joined(30, 40);
	ck_assert_str_eq(nodectx_flow(&C, 3)->nf_inputs[0], want);
	free(want);
	say_n(47, 3);
	replies(1);
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 5);
	for (i = 0; i < C.nc_nflows; i++)
		buf_printf(&all, "\n%s\n", nodectx_flow(&C, i)->nf_inputs[0]);
	for (i = 0; i < 50; i++) {
		snprintf(s, sizeof(s), "\nm%zu\n", i);
		ck_assert_msg(strstr(all.b_data, s) != NULL, "m%zu never", i);
	}
	for (i = 0; i < all.b_len; i++)
		lines += all.b_data[i] == 'm';
	ck_assert_uint_eq(lines, 50);
	buf_free(&all);
}
END_TEST

START_TEST(a6_1_child_error_keeps_cursor)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	char		 h9[SHA256_HEXLEN];

	say_n(25, 0);
	nodectx_flow_reply(&C, "fine", 0);
	nodectx_flow_reply(&C, "it broke", -1);
	ck_assert_int_eq(run(ccp_node(NULL), &out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_ERROR);
	ck_assert_ptr_nonnull(strstr(res.r_message, "it broke"));
	hash_of("m9", h9);
	ck_str_free(cursor_text(), h9);
	buf_free(&out);
}
END_TEST

START_TEST(a6_1_cancel_between_chunks)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	char		 h9[SHA256_HEXLEN];

	say_n(30, 0);
	replies(3);
	C.nc_rq.fr_cancel_at = 2;	/* the check before the second chunk */
	ck_assert_int_eq(run(ccp_node(NULL), &out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_eq(C.nc_nflows, 1);
	hash_of("m9", h9);
	ck_str_free(cursor_text(), h9);
	buf_free(&out);
}
END_TEST

/* Another request (any worker) processing the same cursor: this one
 * waits for it, then sees its cursor; a cancel ends the wait. */
START_TEST(a6_1_one_request_at_a_time)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	char		*name = xasprintf("chunk-cursor:%s/chunk_cursor_keyEvents"
			    "_disc1.txt", curdir);

	ck_assert_int_eq(store_lock(C.nc_db.sd_store, name, "other", 600), 1);
	say_n(10, 0);
	replies(1);
	C.nc_rq.fr_cancel_at = 1;
	ck_assert_int_eq(run(ccp_node(NULL), &out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_eq(C.nc_nflows, 0);
	ck_assert_ptr_nonnull(strstr(C.nc_rq.fr_phase, "waiting for another "
	    "request's chunk processing"));
	ck_assert_int_eq(store_unlock(C.nc_db.sd_store, name, "other"), 1);
	C.nc_rq.fr_cancel_at = 0;
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 1);
	/* given back: another owner takes it at once */
	ck_assert_int_eq(store_lock(C.nc_db.sd_store, name, "other", 600), 1);
	free(name);
	buf_free(&out);
}
END_TEST

/* The cursor keeps its newest CHUNKCUR_KEEP distinct hashes, and its
 * folders are made. */
START_TEST(a6_1_cursor_bounded)
{
	struct chunkcur	 c;
	char		*p, *dir, s[32];
	size_t		 i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < CHUNKCUR_KEEP + 40; i++) {
		snprintf(s, sizeof(s), "h%zu", i);
		chunkcur_push(&c, s);
	}
	chunkcur_push(&c, "h100");	/* again: now the newest, once */
	ck_assert_uint_eq(c.cc_n, CHUNKCUR_KEEP);
	ck_assert_str_eq(c.cc_v[0], "h40");
	ck_assert_str_eq(c.cc_v[c.cc_n - 1], "h100");
	ck_assert_str_eq(c.cc_v[c.cc_n - 2], "h295");
	dir = xasprintf("%s/a/b/c", C.nc_db.sd_dir);
	p = chunkcur_path(dir, "x", "d");
	ck_assert_int_eq(chunkcur_write(p, &c), 0);
	chunkcur_clear(&c);
	chunkcur_read("t", p, &c);
	ck_assert_uint_eq(c.cc_n, CHUNKCUR_KEEP);
	ck_assert_str_eq(c.cc_v[c.cc_n - 1], "h100");
	chunkcur_clear(&c);
	ck_assert_ptr_null(chunkcur_path(dir, "x", "a/../../b"));
	ck_assert_ptr_null(chunkcur_path(dir, "x", ""));
	free(p);
	free(dir);
	/* through the node: a stale, full cursor stays bounded */
	mkdir(curdir, 0700);
	p = cursor_file("keyEvents", "disc1");
	nodectx_write(&C, "cursors/chunk_cursor_keyEvents_disc1.txt", "");
	memset(&c, 0, sizeof(c));
	for (i = 0; i < CHUNKCUR_KEEP; i++) {
		snprintf(s, sizeof(s), "stale%zu", i);
		chunkcur_push(&c, s);
	}
	ck_assert_int_eq(chunkcur_write(p, &c), 0);
	chunkcur_clear(&c);
	say_n(10, 0);
	replies(1);
	free(ok(ccp_node(NULL)));
	chunkcur_read("t", p, &c);
	ck_assert_uint_eq(c.cc_n, CHUNKCUR_KEEP);
	ck_assert_str_eq(c.cc_v[0], "stale1");
	chunkcur_clear(&c);
	free(p);
}
END_TEST

/* A cursor larger than the reader takes (a WilmerAI one that grew for
 * years): its newest hashes are read. */
START_TEST(a6_1_cursor_huge)
{
	char		*p = cursor_file("keyEvents", "disc1"), h9[SHA256_HEXLEN];
	struct chunkcur	 c;
	FILE		*fp;
	size_t	 i;

	hash_of("m9", h9);
	mkdir(curdir, 0700);
	ck_assert_ptr_nonnull(fp = fopen(p, "w"));
	for (i = 0; i < 80000; i++)
		fprintf(fp, "%064zx\n", i);
	fputs(h9, fp);
	fclose(fp);
	say_n(20, 0);
	replies(1);
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 1);
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_msgs.v[0].m_content, "m10");
	/* rewritten with its newest hashes only */
	chunkcur_read("t", p, &c);
	ck_assert_uint_eq(c.cc_n, CHUNKCUR_KEEP);
	ck_assert_str_eq(c.cc_v[c.cc_n - 2], h9);
	hash_of("m19", h9);
	ck_assert_str_eq(c.cc_v[c.cc_n - 1], h9);
	chunkcur_clear(&c);
	free(p);
}
END_TEST

/* Lines are stripped and blank ones skipped, as WilmerAI reads them. */
START_TEST(a6_1_cursor_lines)
{
	char	 h9[SHA256_HEXLEN], *text;

	hash_of("m9", h9);
	text = xasprintf("\n  junk \r\n\n %s\t\r\n", h9);
	nodectx_write(&C, "cursors/chunk_cursor_keyEvents_disc1.txt", text);
	free(text);
	say_n(20, 0);
	replies(1);
	free(ok(ccp_node(NULL)));
	ck_assert_uint_eq(C.nc_nflows, 1);	/* m10..m19 only */
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_msgs.v[0].m_content, "m10");
}
END_TEST

/* ---- A6.2 SlowButQualityRAG --------------------------------------- */

static json_t *
rag_node(const char *extra)
{
	return merged(nodectx_json("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
	    "type", RAG, "ragTarget", "my text chunk", "ragType",
	    "RecentMemories", "systemPrompt", "System: [TextChunk]", "prompt",
	    "Prompt: [TextChunk]", "endpointName", "ep", "preset", "pre"),
	    extra);
}

START_TEST(a6_2_no_discussion)
{
	C.nc_discussion = "";
	ck_str_free(ok(rag_node(NULL)), "");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

START_TEST(a6_2_missing_target_type)
{
	json_t	*n = rag_node(NULL);

	json_object_del(n, "ragTarget");
	ck_str_free(ok(n), "No rag target specified in Slow But Quality RAG "
	    "node");
	n = rag_node(NULL);
	json_object_del(n, "ragType");
	ck_str_free(ok(n), "No rag type specified in Slow But Quality RAG "
	    "node");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
}
END_TEST

START_TEST(a6_2_chat_call)
{
	const struct fakeask_call	*c;
	bool				 ledger;
	struct mem_blocks		 mem;

	fakeask_answer("LLM Response");
	ck_str_free(ok(rag_node(NULL)), "LLM Response");
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	c = fakeask_call(0);
	ck_assert_str_eq(c->ac_endpoint, "ep");
	ck_assert_str_eq(c->ac_preset, "pre");
	ck_assert_str_eq(c->ac_system, "System: my text chunk");
	ck_assert_str_eq(c->ac_prompt, "Prompt: my text chunk");
	ck_assert_int_eq(c->ac_max_tokens, 400);
	ck_assert(!c->ac_responder && !c->ac_stream);
	/* the ledger now exists (WilmerAI's memories.json as []) */
	ck_assert_int_eq(memstore_read(C.nc_db.sd_store, "disc1", &mem,
	    &ledger), 0);
	ck_assert(ledger);
	ck_assert_uint_eq(mem.n, 0);
	mem_blocks_free(&mem);
}
END_TEST

START_TEST(a6_2_two_chunks)
{
	const char	*tmpl = "{\"ragTarget\": \"chunk1--ChunkBreak--chunk2\", "
			    "\"systemPrompt\": \"[Memory_file]|[Full_Memory_file]"
			    "|[Chat_Summary]\", \"maxResponseSizeInTokens\": 250}";

	fakeask_answer("summary1");
	fakeask_answer("summary2");
	ck_str_free(ok(rag_node(tmpl)), "summary1summary2");
	ck_assert_uint_eq(fakeask_ncalls(), 2);
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, "Prompt: chunk1");
	ck_assert_str_eq(fakeask_call(1)->ac_prompt, "Prompt: chunk2");
	ck_assert_str_eq(fakeask_call(0)->ac_system,
	    "No preceding memories to show|No preceding memories to show|"
	    "There is not yet a summary file");
	/* the second chunk sees the first answer as a preceding memory */
	ck_assert_str_eq(fakeask_call(1)->ac_system,
	    "summary1|summary1|There is not yet a summary file");
	ck_assert_int_eq(fakeask_call(1)->ac_max_tokens, 250);
}
END_TEST

START_TEST(a6_2_memories_and_summary)
{
	struct store	*s = C.nc_db.sd_store;
	int64_t		 id = 0;
	char		 t[16];
	int		 i;

	for (i = 1; i <= 4; i++) {
		snprintf(t, sizeof(t), " M%d ", i);
		ck_assert_int_gt(id = memstore_append(s, "disc1", id, t, "h"), 0);
	}
	ck_assert_int_eq(memstore_summary_put(s, "disc1", "  the sum  ", "h"), 0);
	fakeask_answer("A");
	free(ok(rag_node("{\"systemPrompt\": \"[Memory_file]#[Full_Memory_file]"
	    "#[Chat_Summary]\"}")));
	ck_assert_str_eq(fakeask_call(0)->ac_system,
	    "M2 " SEP14 " M3 " SEP14 " M4#M1 " SEP14 " M2 " SEP14 " M3 " SEP14
	    " M4#the sum");
}
END_TEST

/* One variable pass: the templates' and ragTarget's variables are
 * filled; braces in the chunk and the memories stay as they are. */
START_TEST(a6_2_variables)
{
	struct store	*s = C.nc_db.sd_store;

	ck_assert_int_gt(memstore_append(s, "disc1", 0, "{name} said", "h"), 0);
	fakeask_answer("x");
	fakeask_answer("y");
	free(ok(rag_node("{\"ragTarget\": \"{name}--ChunkBreak--"
	    "{{literal}}\", \"prompt\": \"{name}: [TextChunk] / [Memory_file]\"}")));
	ck_assert_str_eq(fakeask_call(0)->ac_prompt, "Ann: Ann / {name} said");
	ck_assert_str_eq(fakeask_call(1)->ac_prompt,
	    "Ann: {literal} / {name} said" SEP14 "x");
}
END_TEST

START_TEST(a6_2_workflow)
{
	const struct nc_flow	*f;

	ck_assert_int_eq(memstore_summary_put(C.nc_db.sd_store, "disc1",
	    "S", "h"), 0);
	nodectx_flow_reply(&C, "one", 0);
	nodectx_flow_reply(&C, "two", 0);
	ck_str_free(ok(rag_node("{\"ragTarget\": \"a--ChunkBreak--b\", "
	    "\"fileMemoryWorkflowName\": \"fmw\"}")), "onetwo");
	ck_assert_uint_eq(fakeask_ncalls(), 0);
	ck_assert_uint_eq(C.nc_nflows, 2);
	f = nodectx_flow(&C, 1);
	ck_assert_str_eq(f->nf_name, "fmw");
	ck_assert_str_eq(f->nf_folder, NC_FOLDER);
	ck_assert(!f->nf_deliver && !f->nf_top && !f->nf_own_msgs);
	ck_assert_uint_eq(f->nf_ninputs, 4);
	ck_assert_str_eq(f->nf_inputs[0], "b");
	ck_assert_str_eq(f->nf_inputs[1], "one");
	ck_assert_str_eq(f->nf_inputs[2], "one");
	ck_assert_str_eq(f->nf_inputs[3], "S");
	ck_assert_str_eq(nodectx_flow(&C, 0)->nf_inputs[1],
	    "No preceding memories to show");
}
END_TEST

START_TEST(a6_2_errors)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	fakeask_answer("first");
	fakeask_fail(502, "backend down");
	ck_assert_int_eq(run(rag_node("{\"ragTarget\": \"a--ChunkBreak--b\"}"),
	    &out, &res), -1);
	ck_assert_int_eq(res.r_http, 502);
	ck_assert_ptr_nonnull(strstr(res.r_message, "backend down"));
	buf_free(&out);
}
END_TEST

START_TEST(a6_2_cancel)
{
	struct buf	 out = BUF_INIT;
	struct wresult	 res;

	C.nc_rq.fr_cancel_at = 2;
	fakeask_answer("first");
	ck_assert_int_eq(run(rag_node("{\"ragTarget\": \"a--ChunkBreak--b\"}"),
	    &out, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_eq(fakeask_ncalls(), 1);
	buf_free(&out);
}
END_TEST

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
chunkrag_suite(void)
{
	Suite	*s = suite_create("chunkrag");
	TCase	*tc;

	tc = tcase(s, "a6_1_chunks");
	tcase_add_test(tc, a6_1_cold_start);
	tcase_add_test(tc, a6_1_fewer_than_chunk);
	tcase_add_test(tc, a6_1_one_new_chunk);
	tcase_add_test(tc, a6_1_edited_last_processed);
	tcase_add_test(tc, a6_1_identical_resend);
	tcase_add_test(tc, a6_1_changed_last_chunk);
	tcase_add_test(tc, a6_1_head_truncated);
	tcase_add_test(tc, a6_1_lookback);
	tc = tcase(s, "a6_1_cursor");
	tcase_add_test(tc, a6_1_tilde_path);
	tcase_add_test(tc, a6_1_separate_cursors);
	tcase_add_test(tc, a6_1_unreadable_cursor);
	tcase_add_test(tc, a6_1_cursor_bounded);
	tcase_add_test(tc, a6_1_cursor_lines);
	tcase_add_test(tc, a6_1_cursor_huge);
	tcase_add_test(tc, a6_1_child_error_keeps_cursor);
	tcase_add_test(tc, a6_1_cancel_between_chunks);
	tcase_add_test(tc, a6_1_one_request_at_a_time);
	tc = tcase(s, "a6_1_fields");
	tcase_add_test(tc, a6_1_value_errors);
	tcase_add_test(tc, a6_1_no_discussion);
	tcase_add_test(tc, a6_1_scoped_variables);
	tcase_add_test(tc, a6_1_return_file);
	tc = tcase(s, "a6_2_rag");
	tcase_add_test(tc, a6_2_no_discussion);
	tcase_add_test(tc, a6_2_missing_target_type);
	tcase_add_test(tc, a6_2_chat_call);
	tcase_add_test(tc, a6_2_two_chunks);
	tcase_add_test(tc, a6_2_memories_and_summary);
	tcase_add_test(tc, a6_2_variables);
	tcase_add_test(tc, a6_2_workflow);
	tcase_add_test(tc, a6_2_errors);
	tcase_add_test(tc, a6_2_cancel);
	return s;
}

int
main(void)
{
	return check_main(chunkrag_suite());
}
