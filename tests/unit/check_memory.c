/* check_memory.c - file-style memories: the ledger, summary and tracker in the store, chunks and triggers, reading memories back, placeholder filling. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "../../worker/core/msgs_edit.h"
#include "../../worker/memory/mem_chunk.h"
#include "../../worker/memory/mem_read.h"
#include "../../worker/memory/mem_text.h"
#include "../../worker/memory/memgen.h"
#include "../../worker/memory/memstore.h"
#include "../testmain.h"
#include "scratchdb.h"

static struct scratchdb	 D;
static struct store	*S;

static void
setup(void)
{
	scratchdb_open(&D, "mem");
	S = D.sd_store;
}

static void
teardown(void)
{
	scratchdb_close(&D);
	S = NULL;
}

/* The ledger's texts joined by '|'. */
static char *
texts(const char *key)
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

static void
msgs_of(struct wmsgs *l, const char *const *contents)
{
	memset(l, 0, sizeof(*l));
	for (; *contents != NULL; contents++)
		wmsgs_add(l, l->n % 2 == 0 ? "user" : "assistant", *contents);
}

/* ---- the store ------------------------------------------------------ */

START_TEST(test_ledger_append)
{
	struct mem_blocks	 m;
	bool			 existed = true, ledger;
	int64_t			 a, b;
	char			*t;

	ck_assert_int_eq(memstore_touch_ledger(S, "d", &existed), 0);
	ck_assert(!existed);
	ck_assert_int_eq(memstore_touch_ledger(S, "d", &existed), 0);
	ck_assert(existed);
	ck_assert_int_gt(a = memstore_append(S, "d", 0, "one", "h1"), 0);
	/* a second writer that read the empty ledger writes nothing */
	ck_assert_int_eq(memstore_append(S, "d", 0, "dup", "h1"), 0);
	ck_assert_int_gt(b = memstore_append(S, "d", a, "two", "h2"), a);
	ck_assert_int_eq(memstore_append(S, "d", a, "dup", "h2"), 0);
	/* another discussion does not disturb it */
	ck_assert_int_gt(memstore_append(S, "e", 0, "other", "h1"), b);
	ck_assert_int_gt(memstore_append(S, "d", b, "three", "h1"), b);
	t = texts("d");
	ck_assert_str_eq(t, "one|two|three");
	free(t);
	ck_assert_int_eq(memstore_read(S, "none", &m, &ledger), 0);
	ck_assert(m.n == 0 && !ledger);
	ck_assert_int_eq(memstore_read(S, "e", &m, &ledger), 0);
	ck_assert(m.n == 1 && ledger);	/* appending made the ledger */
	ck_assert_str_eq(m.v[0].mb_hash, "h1");
	mem_blocks_free(&m);
}
END_TEST

START_TEST(test_condense_keeps_order)
{
	struct mem_blocks	 m;
	int64_t			 id[5], last = 0;
	char			 h[16], *t = NULL;
	int			 i;

	for (i = 0; i < 5; i++) {
		snprintf(h, sizeof(h), "h%d", i);
		id[i] = last = memstore_append(S, "d", last, h + 1, h);
		ck_assert_int_gt(last, 0);
	}
	/* a run that changed meanwhile is left alone */
	ck_assert_int_eq(memstore_condense(S, "d", id[1], id[3], 2, "x", "h3"),
	    0);
	ck_assert_int_eq(memstore_condense(S, "d", id[1], id[2], 2, "C12",
	    "h2"), 1);
	t = texts("d");
	ck_assert_str_eq(t, "0|C12|3|4");
	free(t);
	ck_assert_int_eq(memstore_tracker(S, "d", &t), 1);
	ck_assert_str_eq(t, "h2");
	free(t);
	/* and appending goes on after the last */
	ck_assert_int_eq(memstore_read(S, "d", &m, NULL), 0);
	ck_assert_int_eq(m.v[1].mb_id, id[1]);
	ck_assert_int_gt(memstore_append(S, "d", m.v[m.n - 1].mb_id, "5", "h5"),
	    0);
	mem_blocks_free(&m);
	t = texts("d");
	ck_assert_str_eq(t, "0|C12|3|4|5");
	free(t);
}
END_TEST

START_TEST(test_summary_tracker)
{
	char	*text = NULL, *hash = NULL;

	ck_assert_int_eq(memstore_summary(S, "d", &text, &hash), 0);
	ck_assert_int_eq(memstore_summary_put(S, "d", "first", "h1"), 0);
	ck_assert_int_eq(memstore_summary_put(S, "d", "second {x}", "h2"), 0);
	ck_assert_int_eq(memstore_summary(S, "d", &text, &hash), 1);
	ck_assert_str_eq(text, "second {x}");
	ck_assert_str_eq(hash, "h2");
	free(text);
	free(hash);
	ck_assert_int_eq(memstore_tracker(S, "d", &text), 0);
	ck_assert_int_eq(memstore_tracker_put(S, "d", "h9"), 0);
	ck_assert_int_eq(memstore_tracker(S, "d", &text), 1);
	ck_assert_str_eq(text, "h9");
	free(text);
}
END_TEST

/* ---- chunks and triggers --------------------------------------------- */

/* Spec 9 case 37: 14-letter messages estimate 4 tokens each; size 10
 * holds two (8 <= 8) counting from the newest. */
START_TEST(test_chunks_hashed)
{
	static const char *const c[] = { "aaaaaaaaaaaaaa", "bbbbbbbbbbbbbb",
	    "cccccccccccccc", NULL };
	struct wmsgs		 l;
	struct mem_chunks	 ch;
	char			 want[65];

	msgs_of(&l, c);
	mem_chunks_make(&l, 0, 3, 10, &ch);
	ck_assert_int_eq(ch.n, 2);
	ck_assert_str_eq(ch.v[0].mc_text, "aaaaaaaaaaaaaa");
	ck_assert_str_eq(ch.v[1].mc_text, "bbbbbbbbbbbbbb\ncccccccccccccc");
	sha256_hex(c[2], strlen(c[2]), want);
	ck_assert_str_eq(ch.v[1].mc_hash, want);
	sha256_hex(c[0], strlen(c[0]), want);
	ck_assert_str_eq(ch.v[0].mc_hash, want);
	mem_chunks_free(&ch);
	/* a sub-range */
	mem_chunks_make(&l, 1, 1, 10, &ch);
	ck_assert_int_eq(ch.n, 1);
	ck_assert_str_eq(ch.v[0].mc_text, "bbbbbbbbbbbbbb");
	mem_chunks_free(&ch);
	mem_chunks_make(&l, 1, 0, 10, &ch);
	ck_assert_int_eq(ch.n, 0);
	mem_chunks_free(&ch);
	wmsgs_free(&l);
}
END_TEST

/* Either threshold: the estimate of the contents joined by "\n" (three
 * 14-letter words: int(max(3*1.35, 44/3.5) * 1.1) = 13), or the count
 * when counting is on. */
START_TEST(test_trigger)
{
	static const char *const c[] = { "aaaaaaaaaaaaaa", "bbbbbbbbbbbbbb",
	    "cccccccccccccc", NULL };
	struct wmsgs	 l;

	msgs_of(&l, c);
	ck_assert(mem_triggered(&l, 0, 3, 13, false, 99));
	ck_assert(!mem_triggered(&l, 0, 3, 14, false, 3));
	ck_assert(mem_triggered(&l, 0, 3, 14, true, 3));
	ck_assert(!mem_triggered(&l, 0, 3, 14, true, 4));
	ck_assert(!mem_triggered(&l, 1, 2, 14, true, 3));
	ck_assert_int_eq(mem_scaled(1000, 1.25), 1250);
	ck_assert_int_eq(mem_scaled(1000, 0), 1000);
	wmsgs_free(&l);
}
END_TEST

/* ---- reading back ------------------------------------------------------ */

START_TEST(test_recent_chat)
{
	static const char *const c[] = { "User: one", "Assistant: two",
	    "User: three", "Assistant: four", "User: five", NULL };
	struct wmsgs	 l;
	char		*t;

	msgs_of(&l, c);
	/* the 3 before the last 1, all but the newest of them */
	t = memread_recent_chat(&l, 3, 1, "#");
	ck_assert_str_eq(t, "two\nthree");
	free(t);
	t = memread_recent_chat(&l, 0, 0, "#");
	ck_assert_str_eq(t, "There are no memories to grab yet");
	free(t);
	t = memread_recent_chat(&l, 2, 5, "#");
	ck_assert_str_eq(t, "There are no memories to grab yet");
	free(t);
	t = memread_recent_chat(&l, 1, 0, "#");
	ck_assert_str_eq(t, "");
	free(t);
	t = memread_unlabel("USER: a ASSISTANT: b systemMes: c SYSTEMMES: d");
	ck_assert_str_eq(t, "a b c d");
	free(t);
	wmsgs_free(&l);
}
END_TEST

static void
blocks(struct mem_blocks *m, const char *const *hashes)
{
	memset(m, 0, sizeof(*m));
	for (; *hashes != NULL; hashes++) {
		m->v = xreallocarray(m->v, m->n + 1, sizeof(*m->v));
		m->v[m->n].mb_id = (int64_t)m->n + 1;
		m->v[m->n].mb_text = xasprintf("m%zu", m->n);
		m->v[m->n++].mb_hash = xstrdup(*hashes);
	}
}

START_TEST(test_new_since_summary)
{
	static const char *const h[] = { "a", "b", "a", "c", NULL };
	struct mem_blocks	 m, none = { NULL, 0 };
	size_t			 first;
	char			*t;

	blocks(&m, h);
	ck_assert_int_eq(memread_new_since(&m, NULL), 4);
	ck_assert_int_eq(memread_new_since(&m, "c"), 0);
	ck_assert_int_eq(memread_new_since(&m, "a"), 1);	/* the last a */
	ck_assert_int_eq(memread_new_since(&m, "z"), -1);
	ck_assert_int_eq(memread_new_since(&none, NULL), -1);
	ck_assert_int_eq(memread_unsummarised(&m, "b", &first), 2);
	ck_assert_int_eq(first, 2);
	ck_assert_int_eq(memread_unsummarised(&m, "z", &first), 4);
	ck_assert_int_eq(first, 0);
	ck_assert_int_eq(memread_unsummarised(&m, "c", &first), 0);
	t = memread_join(&m, 1, 2, "--");
	ck_assert_str_eq(t, "m1--m2");
	free(t);
	mem_blocks_free(&m);
}
END_TEST

/* ---- text helpers --------------------------------------------------- */

START_TEST(test_fill)
{
	char	*t;

	t = memory_fill("{x} [A] [B] [A]", "[A]", "{y}", "[B]", "[A]", (char *)NULL);
	/* braces of the values as sentinels; replaced in order, so a value
	 * that holds a later placeholder is replaced too (Python's chained
	 * str.replace) */
	ck_assert_str_eq(t, "{x} __WILMER_L_CURLY__y__WILMER_R_CURLY__ [A] "
	    "__WILMER_L_CURLY__y__WILMER_R_CURLY__");
	free(t);
	t = memory_strip(" \t\n a b \n");
	ck_assert_str_eq(t, "a b");
	free(t);
	t = memory_replace("aXbXc", "X", "--");
	ck_assert_str_eq(t, "a--b--c");
	free(t);
}
END_TEST

START_TEST(test_hash_images)
{
	struct wmsgs	 l = { NULL, 0 };
	char		 h[MEMORY_HASHLEN], want[65];

	wmsgs_add(&l, "user", "");
	wmsg_add_image(&l.v[0], "zzz");
	wmsg_add_image(&l.v[0], "aaa");
	memory_hash(&l.v[0], h);
	sha256_hex("aaazzz", 6, want);	/* content "" + images sorted */
	ck_assert_str_eq(h, want);
	wmsgs_add(&l, "user", "text");
	wmsg_add_image(&l.v[1], "aaa");
	memory_hash(&l.v[1], h);
	sha256_hex("text", 4, want);	/* text: the content alone */
	ck_assert_str_eq(h, want);
	wmsgs_free(&l);
}
END_TEST

static Suite *
memory_suite(void)
{
	Suite	*s = suite_create("memory");
	TCase	*tc;

	tc = tcase_create("store");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ledger_append);
	tcase_add_test(tc, test_condense_keeps_order);
	tcase_add_test(tc, test_summary_tracker);
	suite_add_tcase(s, tc);
	tc = tcase_create("chunks");
	tcase_add_test(tc, test_chunks_hashed);
	tcase_add_test(tc, test_trigger);
	suite_add_tcase(s, tc);
	tc = tcase_create("read");
	tcase_add_test(tc, test_recent_chat);
	tcase_add_test(tc, test_new_since_summary);
	suite_add_tcase(s, tc);
	tc = tcase_create("text");
	tcase_add_test(tc, test_fill);
	tcase_add_test(tc, test_hash_images);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(memory_suite());
}
