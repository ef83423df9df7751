/* check_seal.c - encryptUsingApiKey in the store: discussion rows sealed as Fernet tokens, read back, plain rows migrated, other keys refused (addendum A10), and the worker's key cache. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/fernet.h"
#include "../../common/xmem.h"
#include "../../worker/core/msgs_edit.h"
#include "../../worker/loop/keycache.h"
#include "../../worker/memory/memstore.h"
#include "../../worker/memory/timestamps.h"
#include "../../worker/store/store_seal.h"
#include "../testmain.h"
#include "scratchdb.h"

#define KEY	"d9f1a0f35a24bdc1/chat-1"	/* a discussion */
#define T0	1700000000

static struct scratchdb	 D;
static struct store	*S;
static struct fernet_key K1, K2, K1BOB;	/* k1/alice, k2/alice, k1/bob */

static void
setup(void)
{
	scratchdb_open(&D, "seal");
	S = D.sd_store;
	ck_assert_int_eq(fernet_derive(&K1, "k1", "alice"), 0);
	ck_assert_int_eq(fernet_derive(&K2, "k2", "alice"), 0);
	ck_assert_int_eq(fernet_derive(&K1BOB, "k1", "bob"), 0);
}

static void
teardown(void)
{
	scratchdb_close(&D);
	S = NULL;
	fernet_wipe(&K1);
	fernet_wipe(&K2);
	fernet_wipe(&K1BOB);
}

/* Every value of one column, one a line. */
static char *
raw(const char *sql)
{
	return scratchdb_rows(&D, sql);
}

/* Each line of rows is a token (want true) or none is (false). */
static void
all_tokens(const char *rows, bool want)
{
	const char	*p = rows, *e;

	ck_assert_msg(*p != '\0', "no rows");
	for (; *p != '\0'; p = e + 1) {
		e = strchr(p, '\n');
		ck_assert_msg(fernet_is_token(p, (size_t)(e - p)) == want,
		    "%.*s", (int)(e - p), p);
	}
}

static char *
texts(void)
{
	struct mem_blocks	 m;
	struct buf		 b = BUF_INIT;
	size_t			 i;

	ck_assert_msg(memstore_read(S, KEY, &m, NULL) == 0, "%s",
	    store_err(S));
	buf_adds(&b, "");
	for (i = 0; i < m.n; i++)
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", m.v[i].mb_text);
	mem_blocks_free(&m);
	return buf_take(&b);
}

static void
blocks_of(struct mem_blocks *b, const char *a, const char *c)
{
	b->n = 2;
	b->v = xcalloc(2, sizeof(*b->v));
	b->v[0] = (struct mem_block){ 0, xstrdup(a), xstrdup("h1") };
	b->v[1] = (struct mem_block){ 0, xstrdup(c), xstrdup("h2") };
}

/* A10.4: every row of an encrypted file is a token on disk; hashes and
 * keys stay plain; everything reads back as written. */
START_TEST(a10_4_rows_sealed)
{
	struct mem_blocks	 old, got;
	char			*t, *h, *rows;

	store_seal_key(S, &K1);
	ck_assert_int_gt(memstore_append(S, KEY, 0, "Alice likes tea.",
	    "m1"), 0);
	ck_assert_int_eq(memstore_summary_put(S, KEY, "They talked tea.",
	    "m1"), 0);
	ck_assert_int_eq(memstore_state_put(S, KEY, "# State\nTea."), 0);
	ck_assert_int_eq(memstore_vision_put(S, KEY, "img1", "A teapot."), 0);
	blocks_of(&old, "old one", "old two");
	ck_assert_int_eq(memstore_sections_put(S, KEY, &old, NULL), 0);
	mem_blocks_free(&old);
	ck_assert_int_eq(ts_placeholder(S, KEY, T0), 0);

	rows = raw("SELECT text FROM memories UNION ALL SELECT text FROM "
	    "summaries UNION ALL SELECT text FROM state_documents UNION ALL "
	    "SELECT text FROM vision_responses UNION ALL SELECT text FROM "
	    "compactor_sections UNION ALL SELECT stamp FROM timestamps");
	all_tokens(rows, true);
	ck_assert_ptr_null(strstr(rows, "tea"));
	free(rows);
	rows = raw("SELECT discussion || ' ' || hash FROM memories");
	ck_assert_str_eq(rows, KEY " m1\n");
	free(rows);

	t = texts();
	ck_assert_str_eq(t, "Alice likes tea.");
	free(t);
	ck_assert_int_eq(memstore_summary(S, KEY, &t, &h), 1);
	ck_assert_str_eq(t, "They talked tea.");
	ck_assert_str_eq(h, "m1");
	free(t);
	free(h);
	ck_assert_int_eq(memstore_state(S, KEY, &t), 1);
	ck_assert_str_eq(t, "# State\nTea.");
	free(t);
	ck_assert_int_eq(memstore_vision(S, KEY, "img1", &t), 1);
	ck_assert_str_eq(t, "A teapot.");
	free(t);
	ck_assert_int_eq(memstore_section(S, KEY, "old", &got), 0);
	ck_assert_uint_eq(got.n, 2);
	ck_assert_str_eq(got.v[1].mb_text, "old two");
	ck_assert_str_eq(got.v[1].mb_hash, "h2");
	mem_blocks_free(&got);
}
END_TEST

/* A10.3: an empty text and one with every kind of byte survive. */
START_TEST(a10_3_seal_round_trip)
{
	const char	*v[] = { "", "caf\xc3\xa9 \"q\"\n\ttab", "gAAAAA" };
	char		*tok, *back;
	size_t		 i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		store_seal_key(S, &K1);
		tok = store_seal(S, v[i]);
		ck_assert(fernet_is_token(tok, strlen(tok)));
		ck_assert_int_eq(store_unseal(S, KEY, "memories", tok, &back),
		    0);
		ck_assert_str_eq(back, v[i]);
		free(back);
		free(tok);
		store_seal_key(S, NULL);	/* without a key: as is */
		tok = store_seal(S, v[i]);
		ck_assert_str_eq(tok, v[i]);
		free(tok);
	}
}
END_TEST

/* A10.5: rows written before encryption was on read as they are, and
 * the next write seals them all. */
START_TEST(a10_5_plain_migrates)
{
	char	*t, *rows;

	ck_assert_int_gt(memstore_append(S, KEY, 0, "plain one", "m1"), 0);
	ck_assert_int_eq(memstore_state_put(S, KEY, "plain state"), 0);
	ck_assert_int_eq(ts_placeholder(S, KEY, T0), 0);
	rows = raw("SELECT text FROM memories");
	ck_assert_str_eq(rows, "plain one\n");
	free(rows);

	store_seal_key(S, &K1);
	t = texts();
	ck_assert_str_eq(t, "plain one");
	free(t);
	ck_assert_int_eq(memstore_state(S, KEY, &t), 1);
	ck_assert_str_eq(t, "plain state");
	free(t);

	ck_assert_int_gt(memstore_append(S, KEY, 1, "sealed two", "m2"), 0);
	ck_assert_int_eq(memstore_state_put(S, KEY, "sealed state"), 0);
	ck_assert_int_eq(ts_commit(S, KEY, "an answer", T0 + 5), 0);
	rows = raw("SELECT text FROM memories UNION ALL SELECT text FROM "
	    "state_documents UNION ALL SELECT stamp FROM timestamps");
	all_tokens(rows, true);
	free(rows);
	t = texts();
	ck_assert_str_eq(t, "plain one|sealed two");
	free(t);
}
END_TEST

/* A10.5: a token another API key or another user name sealed is an
 * error naming the discussion, and a write is refused: nothing changes. */
START_TEST(a10_5_other_key_refused)
{
	const struct fernet_key	*other[] = { &K2, &K1BOB, NULL };
	struct mem_blocks	 m;
	char			*before, *after, *t, *h;
	size_t			 i;

	store_seal_key(S, &K1);
	ck_assert_int_gt(memstore_append(S, KEY, 0, "secret", "m1"), 0);
	ck_assert_int_eq(memstore_summary_put(S, KEY, "sum", "m1"), 0);
	ck_assert_int_eq(ts_placeholder(S, KEY, T0), 0);
	before = raw("SELECT text FROM memories UNION ALL SELECT text FROM "
	    "summaries UNION ALL SELECT stamp FROM timestamps");
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		store_seal_key(S, other[i]);
		ck_assert_int_eq(memstore_read(S, KEY, &m, NULL), -1);
		ck_assert_ptr_nonnull(strstr(store_err(S), "discussion '"
		    KEY "'"));
		ck_assert_ptr_nonnull(strstr(store_err(S), "memories"));
		ck_assert_ptr_nonnull(strstr(store_err(S),
		    other[i] != NULL ? "cannot be decrypted" :
		    "brings none"));
		ck_assert_int_eq(memstore_summary(S, KEY, &t, &h), -1);
		ck_assert_int_eq(memstore_append(S, KEY, 1, "mine", "m2"), -1);
		ck_assert_int_eq(memstore_summary_put(S, KEY, "x", "m2"), -1);
		ck_assert_int_eq(ts_placeholder(S, KEY, T0 + 1), -1);
		after = raw("SELECT text FROM memories UNION ALL SELECT text "
		    "FROM summaries UNION ALL SELECT stamp FROM timestamps");
		ck_assert_str_eq(after, before);
		free(after);
	}
	store_seal_key(S, &K1);		/* the right key still opens it */
	t = texts();
	ck_assert_str_eq(t, "secret");
	free(t);
	free(before);
}
END_TEST

/* Timestamps: sealed stamps still prefix the messages they belong to. */
START_TEST(a10_4_timestamps)
{
	const char	*c[] = { "hello", "hi there", "how are you?" };
	struct wmsgs	 l;
	char		*sum, *rows;
	size_t		 i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < 3; i++)
		wmsgs_add(&l, i % 2 == 0 ? "user" : "assistant", c[i]);
	store_seal_key(S, &K1);
	ck_assert_msg(ts_resolve(S, KEY, &l, T0) == 0, "%s", store_err(S));
	rows = raw("SELECT stamp FROM timestamps");
	all_tokens(rows, true);
	free(rows);
	ck_assert_int_eq(ts_decorate(S, KEY, &l, false, T0), 0);
	ck_assert_msg(l.v[0].m_content[0] == '(' &&
	    strstr(l.v[0].m_content, ") hello") != NULL, "%s", l.v[0].m_content);
	ck_assert_int_eq(ts_summary(S, KEY, T0 + 60, &sum), 0);
	ck_assert_ptr_nonnull(strstr(sum, "started"));
	free(sum);
	store_seal_key(S, &K2);
	ck_assert_int_eq(ts_summary(S, KEY, T0 + 60, &sum), -1);
	wmsgs_free(&l);
}
END_TEST

/* A10.2: the worker's cache gives the derived key, one per (API key,
 * user), and keeps KEYCACHE_MAX of them. */
START_TEST(a10_2_key_cache)
{
	struct keycache		*kc = keycache_new();
	const struct fernet_key	*k;
	char			 api[16];
	int			 i;

	k = keycache_get(kc, "k1", "alice");
	ck_assert_ptr_nonnull(k);
	ck_assert_mem_eq(k->fk_bytes, K1.fk_bytes, 32);
	ck_assert_ptr_eq(keycache_get(kc, "k1", "alice"), k);
	k = keycache_get(kc, "k1", "bob");
	ck_assert_mem_eq(k->fk_bytes, K1BOB.fk_bytes, 32);
	k = keycache_get(kc, "k1", "Alice");	/* the name as configured */
	ck_assert(memcmp(k->fk_bytes, K1.fk_bytes, 32) != 0);
	for (i = 0; i < KEYCACHE_MAX; i++) {
		snprintf(api, sizeof(api), "key%d", i);
		ck_assert_ptr_nonnull(keycache_get(kc, api, "alice"));
	}
	k = keycache_get(kc, "k2", "alice");	/* derived again */
	ck_assert_mem_eq(k->fk_bytes, K2.fk_bytes, 32);
	keycache_free(kc);
	keycache_free(NULL);
}
END_TEST

static Suite *
seal_suite(void)
{
	Suite	*s = suite_create("seal");
	TCase	*tc = tcase_create("a10");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a10_4_rows_sealed);
	tcase_add_test(tc, a10_3_seal_round_trip);
	tcase_add_test(tc, a10_5_plain_migrates);
	tcase_add_test(tc, a10_5_other_key_refused);
	tcase_add_test(tc, a10_4_timestamps);
	tcase_add_test(tc, a10_2_key_cache);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(seal_suite());
}
