/* check_vecmem.c - vector memory and keyword search: the FTS5 query against hostile keywords, FTS columns, JSON in LLM answers, storage, BM25 weights, recency, entity expansion, search_utils. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "../../worker/memory/kwsearch.h"
#include "../../worker/memory/vecmem.h"
#include "../../worker/memory/vecmem_text.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "scratchdb.h"

static struct scratchdb	 D;
static struct store	*S;

static void
setup(void)
{
	scratchdb_open(&D, "vecmem");
	S = D.sd_store;
}

static void
teardown(void)
{
	scratchdb_close(&D);
	S = NULL;
}

static json_t *
J(const char *text)
{
	json_error_t	 je;
	json_t		*j = json_loads(text, JSON_DECODE_ANY, &je);

	ck_assert_msg(j != NULL, "bad test JSON: %s", je.text);
	return j;
}

static int64_t
q_int(const char *sql)
{
	struct store_q	*st = store_stmt(S, sql);
	int64_t		 v;

	ck_assert_msg(st != NULL, "%s", store_err(S));
	ck_assert_int_eq(store_step(S, st), 1);
	v = store_col_int(st, 0);
	ck_assert_int_eq(store_step(S, st), 0);
	return v;
}

static char *
q_text(const char *sql)
{
	struct store_q	*st = store_stmt(S, sql);
	char		*v;

	ck_assert_msg(st != NULL, "%s", store_err(S));
	ck_assert_int_eq(store_step(S, st), 1);
	v = xstrdup(store_col_text(st, 0));
	ck_assert_int_eq(store_step(S, st), 0);
	return v;
}

/* Store a fact of discussion key dated date; its id. */
static int64_t
add(const char *key, const char *fact, const char *date)
{
	json_t	*j = J(fact);
	int64_t	 id = vecmem_add(S, key, j, false, date);

	ck_assert_msg(id > 0, "vecmem_add: %s", store_err(S));
	json_decref(j);
	return id;
}

/* Store a fact with this title and summary and no lists. */
static int64_t
add_simple(const char *key, const char *title, const char *summary,
    const char *date)
{
	char	 fact[256];

	snprintf(fact, sizeof(fact), "{\"title\": \"%s\", \"summary\": "
	    "\"%s\", \"entities\": [], \"key_phrases\": []}", title,
	    summary);
	return add(key, fact, date);
}

/* ---- the MATCH query ------------------------------------------- */

static void
query_is(const char *in, const char *want)
{
	char	*q = vecmem_query(in);

	if (want == NULL)
		ck_assert_msg(q == NULL, "'%s' gave '%s'", in, q);
	else {
		ck_assert_msg(q != NULL, "'%s' gave no query", in);
		ck_assert_str_eq(q, want);
	}
	free(q);
}

START_TEST(query_builds)
{
	query_is("a; b ; c", "\"a\" OR \"b\" OR \"c\"");
	query_is("  dog  ", "\"dog\"");
	query_is(" ; ;  x ;", "\"x\"");
	query_is("", NULL);
	query_is(" ;\t; \n", NULL);
	query_is("well-known", "\"well known\"");
	query_is("-", "\"\"");
	query_is("- x -", "\"x\"");
	query_is("say \"hi\"", "\"say \"\"hi\"\"\"");
	query_is("a\"b", "\"a\"\"b\"");
	query_is("New York; Bob's cat", "\"New York\" OR \"Bob's cat\"");
}
END_TEST

START_TEST(query_keeps_sixty_terms)
{
	struct buf	 b = BUF_INIT;
	char		*q, *p;
	int		 i, ors = 0;

	for (i = 0; i < 75; i++)
		buf_printf(&b, "t%d;", i);
	q = vecmem_query(b.b_data);
	for (p = q; (p = strstr(p, " OR ")) != NULL; p += 4)
		ors++;
	ck_assert_int_eq(ors, VECMEM_MAX_TERMS - 1);
	ck_assert_ptr_nonnull(strstr(q, "\"t59\""));
	ck_assert_ptr_null(strstr(q, "\"t60\""));
	free(q);
	buf_free(&b);
}
END_TEST

/* MATCH count of the query built from keywords, or -1 when FTS5
 * refused it. */
static long
match_count(const char *keywords)
{
	char		*q = vecmem_query(keywords);
	struct store_q	*st;
	long		 n;

	if (q == NULL)
		return 0;
	st = store_stmt(S, "SELECT count(*) FROM vector_fts WHERE vector_fts "
	    "MATCH ?");
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(store_bind(S, st, "t", q), 0);
	if (store_step(S, st) != 1) {
		free(q);
		return -1;
	}
	n = (long)store_col_int(st, 0);
	ck_assert_int_eq(store_step(S, st), 0);
	free(q);
	return n;
}

static const char *const hostile[] = {
	"\"", "\"\"", "\"\"\"", "*", "a*", "*a", "NEAR", "NEAR(a b)",
	"NEAR(apple banana, 5)", "-", "--", "-apple", "^", "^apple",
	"apple:banana", "title: apple", "{title summary}: apple", ":", "(",
	")", "((apple)", "apple)", "AND", "OR", "NOT", "apple AND banana",
	"apple OR", "OR apple", "NOT apple", "apple NOT banana", "!!!", "...",
	"+", "a + b", "\x01\x02\x7f", "\xff\xfe\xc3", "apple\" OR \"banana",
	"\" OR rowid=1 --", "'; DROP TABLE vector_fts; --", "\\\"", "\t\n",
	"apple;\"banana", "\xc3\xa9; \xc3\xbc; \xe6\x97\xa5\xe6\x9c\xac",
	"\xf0\x9f\x99\x82", "a\"*\"b", "\"a\" NEAR \"b\"",
	"apple;;;banana;;", "- - -", "\"-\"", "0", "rowid", "vector_fts",
};

/* Every query built from hostile keywords runs, and matches only as
 * the quoted words: no operator of the user's works. */
START_TEST(query_hostile_runs)
{
	struct buf	 big = BUF_INIT;
	size_t		 i;
	int		 k;

	add("d", "{\"title\": \"fruit\", \"summary\": \"apple banana\","
	    " \"entities\": [], \"key_phrases\": []}", "2025-01-01T00:00:00");
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		ck_assert_msg(match_count(hostile[i]) != -1, "FTS5 refused the "
		    "query of '%s': %s", hostile[i], store_err(S));
	for (k = 0; k < 2000; k++)
		buf_adds(&big, k % 7 == 0 ? "\"*^-:() " : "NEAR AND ");
	ck_assert_int_ne(match_count(big.b_data), -1);
	buf_free(&big);
	ck_assert_int_eq(match_count("apple; banana"), 1);
	ck_assert_int_eq(match_count("NEAR(apple banana)"), 0);
	ck_assert_int_eq(match_count("app*"), 0);
	ck_assert_int_eq(match_count("apple\" OR \"banana"), 0);
	ck_assert_int_eq(match_count("NOT apple"), 0);
	ck_assert_int_eq(match_count("summary: apple"), 0);
	ck_assert_int_eq(match_count("^apple"), 1);	/* ^ is punctuation */
	ck_assert_int_eq(match_count("apple-banana"), 1);
}
END_TEST

/* Random strings over FTS5's special characters and words. */
START_TEST(query_random_runs)
{
	static const char *const bits[] = { "\"", "*", "-", "^", ":", "(",
	    ")", ";", " ", "NEAR", "AND", "OR", "NOT", "apple", "+", ",",
	    "{", "}", "\t", "\xc3\xa9", "\xff", "0" };
	struct buf	 b = BUF_INIT;
	unsigned	 seed = 12345;
	int		 k, n, i;

	add("d", "{\"title\": \"t\", \"summary\": \"apple\", \"entities\": [],"
	    " \"key_phrases\": []}", "2025-01-01T00:00:00");
	for (k = 0; k < 3000; k++) {
		buf_reset(&b);
		buf_adds(&b, "");
		n = (int)(rand_r(&seed) % 12) + 1;
		for (i = 0; i < n; i++)
			buf_adds(&b, bits[rand_r(&seed) % (sizeof(bits) /
			    sizeof(bits[0]))]);
		ck_assert_msg(match_count(b.b_data) != -1, "FTS5 refused the "
		    "query of '%s': %s", b.b_data, store_err(S));
	}
	buf_free(&b);
}
END_TEST

/* ---- facts ---------------------------------------------------------- */

START_TEST(flatten_fields)
{
	struct vecmem_fts	 f;
	json_t			*j;

	j = J("{\"title\": \"Rex\", \"summary\": \"The user has a dog.\","
	    " \"entities\": [\"Rex\", \"Dr \\\"Who\\\"\"], \"key_phrases\":"
	    " [\"dog\", \"pet care\"], \"topics\": [\"pets\", \"home\"]}");
	vecmem_flatten(j, false, &f);
	ck_assert_str_eq(f.vf_title, "Rex");
	ck_assert_str_eq(f.vf_summary, "The user has a dog.");
	ck_assert_str_eq(f.vf_entities, "Rex Dr Who");
	ck_assert_str_eq(f.vf_key_phrases, "dog pet care");
	vecmem_fts_free(&f);
	vecmem_flatten(j, true, &f);
	ck_assert_str_eq(f.vf_key_phrases, "dog pet care pets home");
	vecmem_fts_free(&f);
	json_decref(j);

	j = J("{\"title\": null, \"summary\": 5, \"entities\": \"Bob\","
	    " \"key_phrases\": [], \"topics\": [1, 2.5, true, null]}");
	vecmem_flatten(j, true, &f);
	ck_assert_str_eq(f.vf_title, "");
	ck_assert_str_eq(f.vf_summary, "5");
	ck_assert_str_eq(f.vf_entities, "Bob");
	ck_assert_str_eq(f.vf_key_phrases, "1 2.5 True None");
	vecmem_fts_free(&f);
	json_decref(j);

	/* Items are str(item): Python's shortest float (1/3 once came out
	 * as 0.33333333333333331) and Python's repr of containers. */
	j = json_pack("{s:[f, {s:s}, [i, s], f], s:[]}", "entities", 1.0 / 3,
	    "k", "it's \"q\"", 1, "x", 1e16, "key_phrases");
	vecmem_flatten(j, false, &f);
	ck_assert_str_eq(f.vf_entities, "0.3333333333333333 {'k': 'it\\'s q'} "
	    "[1, 'x'] 1e+16");
	vecmem_fts_free(&f);
	json_decref(j);
}
END_TEST

START_TEST(fact_text_needs_fields)
{
	static const struct { const char *in, *want; } c[] = {
		{ "{\"title\": 1, \"summary\": \"s\", \"entities\": 1,"
		  " \"key_phrases\": 1}", "s" },
		{ "{\"title\": 1, \"summary\": 7, \"entities\": 1,"
		  " \"key_phrases\": 1}", "7" },
		{ "{\"title\": 1, \"summary\": \"s\", \"entities\": 1}", NULL },
		{ "{\"summary\": \"s\", \"entities\": 1, \"key_phrases\": 1}",
		  NULL },
		{ "{\"title\": 1, \"summary\": null, \"entities\": 1,"
		  " \"key_phrases\": 1}", NULL },
		{ "[\"title\", \"summary\", \"entities\", \"key_phrases\"]",
		  NULL },
		{ "\"summary\"", NULL },
	};
	size_t	 i;
	json_t	*j;
	char	*t;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		j = J(c[i].in);
		t = vecmem_fact_text(j);
		if (c[i].want == NULL)
			ck_assert_msg(t == NULL, "%s gave %s", c[i].in, t);
		else
			ck_assert_str_eq(t, c[i].want);
		free(t);
		json_decref(j);
	}
}
END_TEST

/* The JSON text of what vecmem_parse found in answer, or NULL. */
static char *
parsed(const char *answer)
{
	json_t	*j = vecmem_parse(answer);
	char	*t;

	if (j == NULL)
		return NULL;
	t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
	return t;
}

START_TEST(parse_llm_answers)
{
	static const struct { const char *in, *want; } c[] = {
		{ "```json\n[{\"a\": 1}]\n```", "[{\"a\":1}]" },
		{ "Sure!\n```json  {\"a\": 1}  \n```\nBye", "{\"a\":1}" },
		{ "Here: {\"a\": {\"b\": 2}} thanks", "{\"a\":{\"b\":2}}" },
		{ "list [1, 2, 3] done", "[1,2,3]" },
		{ "```json\n{\"x\": 1}\n``` and {\"y\": 2}", "{\"x\":1}" },
		/* the first candidate only, greedy to the last closer */
		{ "[note] {\"a\": 1}", NULL },
		{ "{\"a\": 1} and {\"b\": 2}", NULL },
		{ "```json\n\n```", NULL },
		{ "```json\n{\"a\": 1}", "{\"a\":1}" },	/* no fence end */
		{ "no json here", NULL },
		{ "{ broken", NULL },
		{ "", NULL },
		{ "```JSON\n{\"a\": 1}\n```", "{\"a\":1}" },
		{ "```json\n\"just a string\"\n```", "\"just a string\"" },
	};
	size_t	 i;
	char	*t;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		t = parsed(c[i].in);
		if (c[i].want == NULL)
			ck_assert_msg(t == NULL, "'%s' gave %s", c[i].in, t);
		else {
			ck_assert_msg(t != NULL, "'%s' gave nothing", c[i].in);
			ck_assert_str_eq(t, c[i].want);
		}
		free(t);
	}
}
END_TEST

/* ---- the store ---------------------------------------------------- */

START_TEST(add_stores_rows)
{
	json_t	*j;
	int64_t	 id;
	char	*t;

	j = J("{\"title\": \"Pet\", \"summary\": \"The user's dog is Rex.\","
	    " \"entities\": [\"Rex\"], \"key_phrases\": [\"dog\"],"
	    " \"topics\": [\"pets\"], \"extra\": \"\\u00e9\"}");
	id = vecmem_add(S, "k1", j, true, "2025-09-20T16:30:05.000000+00:00");
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(q_int("SELECT count(*) FROM discussions WHERE key = "
	    "'k1'"), 1);
	t = q_text("SELECT memory_text || '|' || date_added || '|' || "
	    "discussion FROM vector_memories");
	ck_assert_str_eq(t, "The user's dog is Rex.|2025-09-20T16:30:05.000000"
	    "+00:00|k1");
	free(t);
	t = q_text("SELECT metadata_json FROM vector_memories");
	ck_assert_str_eq(t, "{\"title\": \"Pet\", \"summary\": \"The user's "
	    "dog is Rex.\", \"entities\": [\"Rex\"], \"key_phrases\": "
	    "[\"dog\"], \"topics\": [\"pets\"], \"extra\": \"\\u00e9\"}");
	free(t);
	t = q_text("SELECT title || '|' || summary || '|' || entities || '|' "
	    "|| key_phrases || '|' || memory_text_unweighted FROM vector_fts");
	ck_assert_str_eq(t, "Pet|The user's dog is Rex.|Rex|dog pets|The "
	    "user's dog is Rex.");
	free(t);
	ck_assert_int_eq(q_int("SELECT rowid FROM vector_fts"), id);
	json_decref(j);

	j = J("{\"title\": \"no summary\", \"entities\": [], "
	    "\"key_phrases\": []}");
	ck_assert_int_eq(vecmem_add(S, "k1", j, false, "x"), 0);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_memories"), 1);
	json_decref(j);
	/* deleting the discussion deletes its facts and their index */
	ck_assert_int_eq(store_exec(S, "PRAGMA foreign_keys = ON", ""), 0);
	ck_assert_int_eq(store_exec(S, "DELETE FROM discussions", ""), 1);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_memories"), 0);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_fts"), 0);
}
END_TEST

START_TEST(hash_log)
{
	char	**h, hash[16];
	size_t	  n;
	int64_t	  last, id = 0;
	int	  i;

	ck_assert_int_eq(vecmem_hashes(S, "k", &h, &n, &last), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(last, 0);
	vecmem_strv_free(h);
	for (i = 1; i <= 12; i++) {
		snprintf(hash, sizeof(hash), "h%d", i);
		id = vecmem_log_hash(S, "k", hash, 1000 + i);
		ck_assert_int_gt(id, 0);
	}
	ck_assert_int_gt(vecmem_log_hash(S, "other", "h12", 5), 0);
	ck_assert_int_eq(vecmem_hashes(S, "k", &h, &n, &last), 0);
	ck_assert_uint_eq(n, VECMEM_HISTORY);
	ck_assert_str_eq(h[0], "h12");
	ck_assert_str_eq(h[9], "h3");
	ck_assert_ptr_null(h[10]);
	ck_assert_int_eq(last, id);
	vecmem_strv_free(h);
	ck_assert_int_eq(vecmem_logged_since(S, "k", "h12", 0), 1);
	ck_assert_int_eq(vecmem_logged_since(S, "k", "h12", id), 0);
	ck_assert_int_eq(vecmem_logged_since(S, "k", "h5", id - 1), 0);
	ck_assert_int_eq(vecmem_logged_since(S, "k", "nope", 0), 0);
	ck_assert_int_eq(q_int("SELECT logged_at FROM vector_hash_log WHERE "
	    "message_hash = 'h1'"), 1001);
}
END_TEST

START_TEST(by_ids_in_order)
{
	struct vecmem_rows	 r = { NULL, 0 };
	int64_t			 a, b, c, ids[4];

	a = add_simple("k", "t", "one", "2025-01-01");
	b = add_simple("k", "t", "two", "2025-01-02");
	c = add_simple("other", "t", "three", "2025-01-03");
	ids[0] = b;
	ids[1] = 999;
	ids[2] = a;
	ids[3] = c;
	ck_assert_int_eq(vecmem_by_ids(S, "k", ids, 4, &r), 0);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].vr_text, "two");
	ck_assert_str_eq(r.v[1].vr_text, "one");
	ck_assert_str_eq(r.v[1].vr_date, "2025-01-01");
	vecmem_rows_free(&r);
}
END_TEST

/* A chunk logged by another worker after the caller read the log is
 * not stored again; the caller's own repeats are; a bad fact rolls the
 * whole chunk back. */
START_TEST(store_chunk_once)
{
	json_t	*f[3];
	int64_t	 since, ids[2];
	char	**h;
	size_t	 n;

	f[0] = J("{\"title\": \"a\", \"summary\": \"A.\", \"entities\": [],"
	    " \"key_phrases\": []}");
	f[1] = J("{\"title\": \"b\", \"summary\": \"B.\", \"entities\": [],"
	    " \"key_phrases\": []}");
	f[2] = J("{\"title\": \"c\", \"entities\": [], \"key_phrases\": []}");
	ck_assert_int_eq(vecmem_log_hash(S, "k", "h0", 1), 1);
	ck_assert_int_eq(vecmem_hashes(S, "k", &h, &n, &since), 0);
	vecmem_strv_free(h);
	ck_assert_int_eq(vecmem_store_chunk(S, "k", f, 2, false, "h1", since,
	    0, 1758385805123ULL, ids), 2);
	ck_assert_int_eq(ids[0], q_int("SELECT min(id) FROM vector_memories"));
	ck_assert_int_eq(ids[1], ids[0] + 1);
	/* a second worker that read the log at the same time */
	ck_assert_int_eq(vecmem_store_chunk(S, "k", f, 2, false, "h1", since,
	    0, 1758385806000ULL, NULL), 0);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_memories"), 2);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_hash_log WHERE "
	    "message_hash = 'h1'"), 1);
	/* the same worker's next chunk ends with an equal message */
	ck_assert_int_eq(vecmem_store_chunk(S, "k", f, 1, false, "h1", since,
	    1, 1758385807000ULL, NULL), 1);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_hash_log WHERE "
	    "message_hash = 'h1'"), 2);
	ck_assert_int_eq(vecmem_store_chunk(S, "k", f, 3, false, "h2", since,
	    0, 1758385808000ULL, NULL), -1);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_memories"), 3);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_fts"), 3);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_hash_log WHERE "
	    "message_hash = 'h2'"), 0);
	ck_assert_int_eq(q_int("SELECT logged_at FROM vector_hash_log WHERE "
	    "id = 2"), 1758385805);
	ck_assert_int_eq(q_int("SELECT count(*) FROM vector_memories WHERE "
	    "date_added = '2025-09-20T16:30:05.123000+00:00'"), 2);
	json_decref(f[0]);
	json_decref(f[1]);
	json_decref(f[2]);
}
END_TEST

/* ---- search ------------------------------------------------------- */

/* The search's memory texts joined by '|'. */
static char *
found(const char *key, const struct vecmem_search *q)
{
	struct vecmem_rows	 r = { NULL, 0 };
	struct buf		 b = BUF_INIT;
	size_t			 i;

	ck_assert_msg(vecmem_search(S, key, q, &r) == 0, "search: %s",
	    store_err(S));
	buf_adds(&b, "");
	for (i = 0; i < r.n; i++)
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", r.v[i].vr_text);
	vecmem_rows_free(&r);
	return buf_take(&b);
}

static struct vecmem_search
kw(const char *keywords, long limit)
{
	struct vecmem_search	 q;

	memset(&q, 0, sizeof(q));
	q.vs_keywords = keywords;
	q.vs_limit = limit;
	return q;
}

static void
found_is(const char *key, const struct vecmem_search *q, const char *want)
{
	char	*t = found(key, q);

	ck_assert_str_eq(t, want);
	free(t);
}

START_TEST(search_keywords)
{
	struct vecmem_search	 q = kw("dog", 5);

	add("k", "{\"title\": \"Pet\", \"summary\": \"The user has a dog.\","
	    " \"entities\": [], \"key_phrases\": []}", "2025-01-01");
	add("k", "{\"title\": \"Car\", \"summary\": \"The user drives a"
	    " truck.\", \"entities\": [], \"key_phrases\": [\"vehicle\"]}",
	    "2025-01-01");
	add("other", "{\"title\": \"Pet\", \"summary\": \"Another dog.\","
	    " \"entities\": [], \"key_phrases\": []}", "2025-01-01");
	found_is("k", &q, "The user has a dog.");
	q = kw("dogs", 5);		/* porter: dogs -> dog */
	found_is("k", &q, "The user has a dog.");
	q = kw("vehicle; dog", 5);
	found_is("k", &q, "The user drives a truck.|The user has a dog.");
	q = kw("vehicle; dog", 1);
	found_is("k", &q, "The user drives a truck.");
	q = kw("cat", 5);
	found_is("k", &q, "");
	q = kw(" ; ", 5);
	found_is("k", &q, "");
	q = kw("dog", 5);
	found_is("nobody", &q, "");
}
END_TEST

/* "zebra" is in A's title, and in B's summary and body: the column
 * weights decide which comes first. */
START_TEST(search_bm25_weights)
{
	static const double	 title_heavy[] = { 10, 0.1, 0.1, 0.1, 0.1 };
	static const double	 body_heavy[] = { 0.1, 10, 1, 1, 10 };
	struct vecmem_search	 q = kw("zebra", 5);
	char			*plain;

	add("k", "{\"title\": \"zebra\", \"summary\": \"an animal seen on a "
	    "trip to the savanna last year\", \"entities\": [], "
	    "\"key_phrases\": []}", "2025-01-01");
	add("k", "{\"title\": \"trip\", \"summary\": \"a zebra\", \"entities\":"
	    " [], \"key_phrases\": []}", "2025-01-01");
	q.vs_weights = title_heavy;
	found_is("k", &q, "an animal seen on a trip to the savanna last year|"
	    "a zebra");
	q.vs_weights = body_heavy;
	found_is("k", &q, "a zebra|an animal seen on a trip to the savanna "
	    "last year");
	q.vs_weights = NULL;
	plain = found("k", &q);
	ck_assert_str_eq(plain, "a zebra|an animal seen on a trip to the "
	    "savanna last year");
	free(plain);
}
END_TEST

START_TEST(recency_values)
{
	const int64_t	 t0 = 1735689600;	/* 2025-01-01T00:00:00Z */

	ck_assert_double_eq_tol(vecmem_recency("2025-01-01T00:00:00+00:00",
	    t0), 2.5, 1e-9);
	ck_assert_double_eq_tol(vecmem_recency("2025-01-01T00:00:00", t0),
	    2.5, 1e-9);
	ck_assert_double_eq_tol(vecmem_recency("2024-09-23T00:00:00.123456Z",
	    t0), 1 + 1.5 * exp(-0.01 * (100 - 0.123456 / 86400)), 1e-9);
	ck_assert_double_eq_tol(vecmem_recency("2024-12-31", t0),
	    1 + 1.5 * exp(-0.01), 1e-9);
	/* 02:00 at +02:00 is midnight UTC */
	ck_assert_double_eq_tol(vecmem_recency("2024-12-22T02:00:00+02:00",
	    t0), 1 + 1.5 * exp(-0.1), 1e-9);
	ck_assert_double_eq_tol(vecmem_recency("2030-01-01T00:00:00", t0),
	    2.5, 1e-9);		/* the future counts as new */
	ck_assert_double_eq(vecmem_recency("yesterday", t0), 1.0);
	ck_assert_double_eq(vecmem_recency("2025-13-01", t0), 1.0);
	ck_assert_double_eq(vecmem_recency("2025-01-01T25:00", t0), 1.0);
	ck_assert_double_eq(vecmem_recency("2025-01-01T10:00:00+bad", t0),
	    1.0);
	ck_assert_double_eq(vecmem_recency("", t0), 1.0);
}
END_TEST

/* Equal matches: without recency the older (lower id) comes first;
 * with it the newer, at the injected time. */
START_TEST(search_recency_order)
{
	struct vecmem_search	 q = kw("coffee", 5);
	struct store_tally	 t;

	add_simple("k", "Drink", "Ann likes coffee",
	    "2020-01-01T00:00:00+00:00");
	add_simple("k", "Drink", "Bob likes coffee",
	    "2025-06-01T00:00:00+00:00");
	add_simple("k", "Drink", "Cid likes coffee", "not a date");
	found_is("k", &q, "Ann likes coffee|Bob likes coffee|Cid likes coffee");
	q.vs_recency = true;
	q.vs_now = 1748822400;			/* 2025-06-02 */
	found_is("k", &q, "Bob likes coffee|Ann likes coffee|Cid likes coffee");
	/* at a time before both dates both count as new: a tie again */
	q.vs_now = 1546300800;			/* 2019-01-01 */
	found_is("k", &q, "Ann likes coffee|Bob likes coffee|Cid likes coffee");
	/* sluice_recency was registered, not found missing: no failure
	 * for /health to count */
	store_tally(S, &t);
	ck_assert_uint_eq(t.st_fails, 0);
}
END_TEST

/* ---- entity expansion ---------------------------------------------- */

static void
row(struct vecmem_rows *r, int64_t id, const char *text, const char *meta)
{
	r->v = xreallocarray(r->v, r->n + 1, sizeof(*r->v));
	r->v[r->n].vr_id = id;
	r->v[r->n].vr_text = xstrdup(text);
	r->v[r->n].vr_date = NULL;
	r->v[r->n++].vr_meta = meta != NULL ? xstrdup(meta) : NULL;
}

static void
texts_are(const struct vecmem_rows *r, const char *want)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < r->n; i++)
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", r->v[i].vr_text);
	ck_assert_str_eq(b.b_data, want);
	buf_free(&b);
}

START_TEST(harvest_entities)
{
	struct vecmem_rows	 b = { NULL, 0 };
	struct buf		 many = BUF_INIT;
	char			*h;
	int			 i;

	row(&b, 1, "a", "{\"entities\": [\"Sarah\", \" sarah \", \"Job\","
	    " \"Mercy General\", 7, \"\"]}");
	row(&b, 2, "b", "{not json");
	row(&b, 3, "c", "{\"entities\": \"just a string\"}");
	row(&b, 4, "d", NULL);
	row(&b, 5, "e", "[\"entities\"]");
	row(&b, 6, "f", "{\"entities\": [\"Tom\", \"MERCY GENERAL\"]}");
	h = vecmem_harvest(&b, "sister; job ;");
	ck_assert_str_eq(h, "Sarah; Mercy General; 7; Tom");
	free(h);
	ck_assert_ptr_null(vecmem_harvest(&b, "sarah; job; mercy general; 7;"
	    " tom"));
	vecmem_rows_free(&b);
	/* only the first VECMEM_SEED_ROWS rows, at most 60 terms */
	for (i = 0; i < 11; i++)
		row(&b, i, "x", i == 10 ? "{\"entities\": [\"Late\"]}" : "{}");
	ck_assert_ptr_null(vecmem_harvest(&b, "x"));
	vecmem_rows_free(&b);
	buf_adds(&many, "{\"entities\": [\"Dup\", \"dup\"");
	for (i = 0; i < 70; i++)
		buf_printf(&many, ", \"E%d\"", i);
	buf_adds(&many, "]}");
	row(&b, 1, "x", many.b_data);
	h = vecmem_harvest(&b, "kw");
	ck_assert(strncmp(h, "Dup; E0; ", 9) == 0);
	ck_assert_ptr_nonnull(strstr(h, "; E58"));
	ck_assert_ptr_null(strstr(h, "; E59"));
	free(h);
	vecmem_rows_free(&b);
	buf_free(&many);
}
END_TEST

START_TEST(blend_reserves_slots)
{
	struct vecmem_rows	 b = { NULL, 0 }, s = { NULL, 0 };
	int			 i;

	/* limit 3: one slot for the novel hit, the weakest base row yields */
	row(&b, 1, "one", NULL);
	row(&b, 2, "two", NULL);
	row(&b, 3, "three", NULL);
	row(&s, 4, "four", NULL);
	vecmem_blend(&b, &s, 3);
	texts_are(&b, "one|two|four");
	ck_assert_uint_eq(s.n, 0);
	vecmem_rows_free(&b);
	/* room under the limit: every novel hit fits */
	row(&b, 1, "base", NULL);
	row(&s, 1, "base", NULL);
	row(&s, 2, "n1", NULL);
	row(&s, 3, "n2", NULL);
	row(&s, 4, "n3", NULL);
	vecmem_blend(&b, &s, 5);
	texts_are(&b, "base|n1|n2|n3");
	vecmem_rows_free(&b);
	/* limit 1 keeps the best direct match */
	row(&b, 1, "best", NULL);
	row(&s, 9, "other", NULL);
	vecmem_blend(&b, &s, 1);
	texts_are(&b, "best");
	vecmem_rows_free(&b);
	/* nothing novel */
	row(&b, 1, "only", NULL);
	row(&s, 1, "only", NULL);
	vecmem_blend(&b, &s, 5);
	texts_are(&b, "only");
	vecmem_rows_free(&b);
	/* limit 9: three reserved, base cut to six */
	for (i = 1; i <= 9; i++)
		row(&b, i, "b", NULL);
	for (i = 10; i <= 14; i++)
		row(&s, i, "n", NULL);
	vecmem_blend(&b, &s, 9);
	texts_are(&b, "b|b|b|b|b|b|n|n|n");
	vecmem_rows_free(&b);
}
END_TEST

START_TEST(search_entity_expansion)
{
	struct vecmem_search	 q = kw("sister", 5);

	add("k", "{\"title\": \"Family\", \"summary\": \"The user's sister is"
	    " Sarah.\", \"entities\": [\"Sarah\"], \"key_phrases\":"
	    " [\"sister\"]}", "2025-01-01");
	add("k", "{\"title\": \"Work\", \"summary\": \"Sarah is a nurse at"
	    " Mercy General.\", \"entities\": [\"Sarah\", \"Mercy General\"],"
	    " \"key_phrases\": [\"nurse\"]}", "2025-01-01");
	add("k", "{\"title\": \"Hospital\", \"summary\": \"Mercy General is"
	    " downtown.\", \"entities\": [\"Mercy General\"], \"key_phrases\":"
	    " []}", "2025-01-01");
	found_is("k", &q, "The user's sister is Sarah.");
	q.vs_expand = true;
	found_is("k", &q, "The user's sister is Sarah.|Sarah is a nurse at "
	    "Mercy General.");
	q.vs_limit = 1;
	found_is("k", &q, "The user's sister is Sarah.");
	q = kw("nurse", 5);
	q.vs_expand = true;
	found_is("k", &q, "Sarah is a nurse at Mercy General.|Mercy General is "
	    "downtown.|The user's sister is Sarah.");
}
END_TEST

START_TEST(format_dates)
{
	struct vecmem_rows	 r = { NULL, 0 };
	char			*t;

	row(&r, 1, "Fact one.", NULL);
	row(&r, 2, "Fact two.", NULL);
	row(&r, 3, "Undated.", NULL);
	r.v[0].vr_date = xstrdup("2024-03-15T10:30:00+00:00");
	r.v[1].vr_date = xstrdup("2026-07-01T08:00:00.000000+00:00");
	t = vecmem_format(&r, true);
	ck_assert_str_eq(t, "[2024-03-15] Fact one.\n\n---\n\n[2026-07-01] "
	    "Fact two.\n\n---\n\nUndated.");
	free(t);
	t = vecmem_format(&r, false);
	ck_assert_str_eq(t, "Fact one.\n\n---\n\nFact two.\n\n---\n\nUndated.");
	free(t);
	vecmem_rows_free(&r);
	{
		char	 d[VECMEM_DATELEN];

		vecmem_date(1758385805123ULL, d);
		ck_assert_str_eq(d, "2025-09-20T16:30:05.123000+00:00");
	}
}
END_TEST

/* ---- keyword search (search_utils) ------------------------------- */

static char *
joined(char **v)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; v[i] != NULL; i++)
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", v[i]);
	kw_free(v);
	return buf_take(&b);
}

START_TEST(kw_words)
{
	char	*t;
	size_t	 n;

	t = joined(kw_tokens("Hello, world_1! \xc3\x89T\xc3\x89: x-ray 42",
	    false, &n));
	ck_assert_str_eq(t, "Hello|world_1|\xc3\x89T\xc3\x89|x|ray|42");
	ck_assert_uint_eq(n, 6);
	free(t);
	t = joined(kw_tokens("Hello \xc3\x89T\xc3\x89 \xe2\x80\x94 Stra\xc3\x9f"
	    "e", true, NULL));
	ck_assert_str_eq(t, "hello|\xc3\xa9t\xc3\xa9|stra\xc3\x9f" "e");
	free(t);
	t = joined(kw_tokens(" ... ", true, &n));
	ck_assert_str_eq(t, "");
	ck_assert_uint_eq(n, 0);
	free(t);
	t = kw_lower("AbC \xc3\x89\xff");
	ck_assert_str_eq(t, "abc \xc3\xa9\xff");
	free(t);
}
END_TEST

START_TEST(kw_speakers)
{
	const char	*c[] = { "Bob: hi there", "Alice: yo", "no speaker" };
	char		*t;

	t = kw_filter_speakers(c, 3, "Bob (cats) Alice: dogs ( )");
	ck_assert_str_eq(t, "(cats) dogs");
	free(t);
	t = kw_filter_speakers(c, 3, "bob ALICE carol");
	ck_assert_str_eq(t, "carol");
	free(t);
	t = kw_filter_speakers(c, 3, "cats AND (dogs OR bob)");
	ck_assert_str_eq(t, "cats AND (dogs OR)");
	free(t);
	t = kw_filter_speakers(c, 0, "  Bob,  hi!  ");
	ck_assert_str_eq(t, "Bob hi");
	free(t);
	t = kw_filter_speakers(c, 3, "(( ))");
	ck_assert_str_eq(t, "()");
	free(t);
}
END_TEST

static char *
hits(const size_t *h, size_t n)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < n; i++)
		buf_printf(&b, "%s%zu", i > 0 ? "," : "", h[i]);
	return buf_take(&b);
}

START_TEST(kw_scored)
{
	const char	*c[] = { "cats and dogs", "Bob: I like cats",
	    "cats cats dogs", "nothing here", "Cats: hello",
	    "dogs far away one two three four five six cats" };
	size_t		*h, n;
	char		*t;

	h = kw_search_scored(c, 6, "Cats dogs", 10, 5, &n);
	t = hits(h, n);
	/* 2: 2+1 words, 2 close pairs; 0: 2 words, 1 pair; 5: 2 words,
	 * none close; 1: 1 word; 4: only its speaker */
	ck_assert_str_eq(t, "2,0,5,1");
	free(t);
	free(h);
	h = kw_search_scored(c, 6, "Cats dogs", 2, 5, &n);
	t = hits(h, n);
	ck_assert_str_eq(t, "2,0");
	free(t);
	free(h);
	h = kw_search_scored(c, 6, "cats", 10, 5, &n);
	t = hits(h, n);
	ck_assert_str_eq(t, "2,0,1,5");	/* ties: earlier first */
	free(t);
	free(h);
	ck_assert_ptr_null(kw_search_scored(c, 6, "", 10, 5, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(kw_search_scored(c, 6, "zebra", 10, 5, &n));
}
END_TEST

START_TEST(kw_plain)
{
	const char	*c[] = { "Cats nap", "dogs bark", "a cat", "CATS!",
	    "birds" };
	size_t		*h, n;
	char		*t;

	h = kw_search_plain(c, 5, "cats; birds", 0, &n);
	t = hits(h, n);
	ck_assert_str_eq(t, "0,3,4");
	free(t);
	free(h);
	h = kw_search_plain(c, 5, "cats birds", 2, &n);
	t = hits(h, n);
	ck_assert_str_eq(t, "0,3");
	free(t);
	free(h);
	ck_assert_ptr_null(kw_search_plain(c, 5, "...", 0, &n));
	ck_assert_ptr_null(kw_search_plain(c, 0, "cats", 0, &n));
}
END_TEST

static Suite *
vecmem_suite(void)
{
	Suite	*s = suite_create("vecmem");
	TCase	*tc;

	tc = tcase_create("query");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, query_builds);
	tcase_add_test(tc, query_keeps_sixty_terms);
	tcase_add_test(tc, query_hostile_runs);
	tcase_add_test(tc, query_random_runs);
	suite_add_tcase(s, tc);

	tc = tcase_create("facts");
	tcase_add_test(tc, flatten_fields);
	tcase_add_test(tc, fact_text_needs_fields);
	tcase_add_test(tc, parse_llm_answers);
	tcase_add_test(tc, format_dates);
	suite_add_tcase(s, tc);

	tc = tcase_create("store");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, add_stores_rows);
	tcase_add_test(tc, hash_log);
	tcase_add_test(tc, by_ids_in_order);
	tcase_add_test(tc, store_chunk_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("search");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, search_keywords);
	tcase_add_test(tc, search_bm25_weights);
	tcase_add_test(tc, recency_values);
	tcase_add_test(tc, search_recency_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("expansion");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, harvest_entities);
	tcase_add_test(tc, blend_reserves_slots);
	tcase_add_test(tc, search_entity_expansion);
	suite_add_tcase(s, tc);

	tc = tcase_create("kwsearch");
	tcase_add_test(tc, kw_words);
	tcase_add_test(tc, kw_speakers);
	tcase_add_test(tc, kw_scored);
	tcase_add_test(tc, kw_plain);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(vecmem_suite());
}
