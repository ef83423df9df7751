/* check_cache.c - the response cache: eligibility by temperature, key stability, TTL with an injected clock, eviction order, clearing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../worker/store/cache.h"
#include "../../worker/store/store_stmt.h"
#include "../testmain.h"
#include "scratchdb.h"

static struct scratchdb	 D;
static struct store	*S;

static void
setup(void)
{
	scratchdb_open(&D, "cache");
	S = D.sd_store;
}

static void
teardown(void)
{
	scratchdb_close(&D);
	S = NULL;
}

static const struct cache_conf	on0 = { true, 3, 60000, 0.0 };

static bool
key_of(const struct cache_conf *c, const char *body, char key[CACHE_KEYLEN])
{
	return cache_key(c, "openAIChatCompletion", "http://h:1", body,
	    "stream", key);
}

/* The seed's three examples, and what has no temperature at all. */
START_TEST(eligible_by_temperature)
{
	struct cache_conf	 c = on0, off = on0;
	char			 k[CACHE_KEYLEN];

	ck_assert(key_of(&c, "{\"temperature\": 0.0, \"messages\": []}", k));
	c.kc_temp = 0.5;
	ck_assert(key_of(&c, "{\"temperature\": 0.3}", k));
	ck_assert(!key_of(&c, "{\"temperature\": 0.8}", k));
	ck_assert(key_of(&c, "{\"temperature\": 0.5}", k));	/* at it */
	/* Ollama keeps it in options */
	ck_assert(key_of(&c, "{\"options\": {\"temperature\": 0}}", k));
	ck_assert(!key_of(&c, "{\"options\": {\"top_k\": 1}}", k));
	ck_assert(!key_of(&c, "{\"temperature\": \"0\"}", k));
	ck_assert(!key_of(&c, "not json", k));
	off.kc_on = false;
	ck_assert(!key_of(&off, "{\"temperature\": 0.0}", k));
}
END_TEST

/* Equal inputs, equal keys: whatever the tool order, the key order,
 * the stream flag or stream_options (which only streams carry); anything
 * else sent makes another key. */
START_TEST(key_stability)
{
	char	 a[CACHE_KEYLEN], b[CACHE_KEYLEN];

	ck_assert(key_of(&on0, "{\"temperature\": 0, \"model\": \"m\", "
	    "\"stream\": true, \"tools\": [{\"type\": \"function\", "
	    "\"function\": {\"name\": \"b\"}}, {\"function\": {\"name\": "
	    "\"a\"}, \"type\": \"function\"}]}", a));
	ck_assert(key_of(&on0, "{\"tools\": [{\"type\": \"function\", "
	    "\"function\": {\"name\": \"a\"}}, {\"type\": \"function\", "
	    "\"function\": {\"name\": \"b\"}}], \"model\": \"m\", "
	    "\"temperature\": 0, \"stream\": false}", b));
	ck_assert_str_eq(a, b);
	ck_assert_uint_eq(strlen(a), 64);
	ck_assert(key_of(&on0, "{\"tools\": [{\"type\": \"function\", "
	    "\"function\": {\"name\": \"a\"}}], \"model\": \"m\", "
	    "\"temperature\": 0}", b));
	ck_assert_str_ne(a, b);
	ck_assert(key_of(&on0, "{\"temperature\": 0, \"model\": \"n\"}", a));
	ck_assert(key_of(&on0, "{\"temperature\": 0, \"model\": \"m\"}", b));
	ck_assert_str_ne(a, b);
	ck_assert(key_of(&on0, "{\"temperature\": 0, \"model\": \"m\", "
	    "\"stream\": true, \"stream_options\": {\"include_usage\": "
	    "true}}", a));
	ck_assert_str_eq(a, b);
	/* another backend, the same body */
	ck_assert(cache_key(&on0, "openAIChatCompletion", "http://h:2",
	    "{\"temperature\": 0, \"model\": \"m\"}", "stream", a));
	ck_assert_str_ne(a, b);
	/* Claude's tools are named at the top */
	ck_assert(key_of(&on0, "{\"temperature\": 0, \"tools\": [{\"name\": "
	    "\"y\"}, {\"name\": \"x\"}]}", a));
	ck_assert(key_of(&on0, "{\"temperature\": 0, \"tools\": [{\"name\": "
	    "\"x\"}, {\"name\": \"y\"}]}", b));
	ck_assert_str_eq(a, b);
}
END_TEST

static void
entry(struct cache_entry *e, const char *text)
{
	memset(e, 0, sizeof(*e));
	e->ce_chunks = json_pack("[s, s]", text, "!");
	snprintf(e->ce_finish, sizeof(e->ce_finish), "stop");
	e->ce_prompt_tokens = 7;
	e->ce_completion_tokens = 2;
}

START_TEST(put_get_ttl)
{
	struct cache_entry	 e, got;
	int64_t			 n = -1;

	entry(&e, "hello");
	e.ce_tools = json_pack("[{s:s}]", "id", "call_1");
	ck_assert_int_eq(cache_put(S, "k1", "Ep", &e, 1000, &on0, &n), 0);
	ck_assert_int_eq(n, 1);
	cache_entry_clear(&e);
	ck_assert_int_eq(cache_get(S, "k1", 2000, 60000, &got), 1);
	ck_assert_str_eq(json_string_value(json_array_get(got.ce_chunks, 0)),
	    "hello");
	ck_assert_int_eq(json_array_size(got.ce_chunks), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    got.ce_tools, 0), "id")), "call_1");
	ck_assert_str_eq(got.ce_finish, "stop");
	ck_assert_int_eq(got.ce_prompt_tokens, 7);
	cache_entry_clear(&got);
	/* the TTL runs from the moment it was kept */
	ck_assert_int_eq(cache_get(S, "k1", 1000 + 59999, 60000, &got), 1);
	cache_entry_clear(&got);
	ck_assert_int_eq(cache_get(S, "k1", 1000 + 60000, 60000, &got), 0);
	ck_assert_int_eq(cache_get(S, "nope", 2000, 60000, &got), 0);
	/* the next put drops what expired */
	entry(&e, "other");
	ck_assert_int_eq(cache_put(S, "k2", "Ep", &e, 70000, &on0, &n), 0);
	ck_assert_int_eq(n, 1);
	cache_entry_clear(&e);
}
END_TEST

/* Above max_entries the oldest go first (a, then c); b, kept again
 * after c, counts from then. */
START_TEST(eviction_order)
{
	struct cache_entry	 e, got;
	const char		*keys[] = { "a", "b", "c", "b", "d", "e" };
	int64_t			 n, t;
	size_t			 i;

	entry(&e, "x");
	for (i = 0, t = 1000; i < 6; i++, t += 10)
		ck_assert_int_eq(cache_put(S, keys[i], "Ep", &e, t, &on0, &n),
		    0);
	cache_entry_clear(&e);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(cache_get(S, "a", t, 60000, &got), 0);
	ck_assert_int_eq(cache_get(S, "c", t, 60000, &got), 0);
	ck_assert_int_eq(cache_get(S, "b", t, 60000, &got), 1);
	cache_entry_clear(&got);
	ck_assert_int_eq(cache_get(S, "d", t, 60000, &got), 1);
	cache_entry_clear(&got);
	ck_assert_int_eq(cache_get(S, "e", t, 60000, &got), 1);
	cache_entry_clear(&got);
	ck_assert_int_eq(cache_count(S), 3);
	ck_assert_int_eq(cache_clear(S), 3);
	ck_assert_int_eq(cache_count(S), 0);
	ck_assert_int_eq(cache_clear(S), 0);
}
END_TEST

/* A row whose JSON was damaged by hand is a miss, not an error. */
START_TEST(damaged_row)
{
	struct cache_entry	 got;

	ck_assert_int_eq(store_exec(S, "INSERT INTO response_cache VALUES "
	    "('k', 'Ep', 5, 'not json', NULL, 'stop', 1, 1)", ""), 1);
	ck_assert_int_eq(cache_get(S, "k", 10, 60000, &got), 0);
	ck_assert_ptr_null(got.ce_chunks);
}
END_TEST

static Suite *
cache_suite(void)
{
	Suite	*s = suite_create("cache");
	TCase	*tc;

	tc = tcase_create("key");
	tcase_add_test(tc, eligible_by_temperature);
	tcase_add_test(tc, key_stability);
	suite_add_tcase(s, tc);
	tc = tcase_create("store");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, put_get_ttl);
	tcase_add_test(tc, eviction_order);
	tcase_add_test(tc, damaged_row);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(cache_suite());
}
