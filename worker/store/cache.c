/* cache.c - the response cache in the shared database: which LLM calls may be cached, their key, and the entries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/sha256.h"
#include "../../common/xmem.h"
#include "cache.h"
#include "store_stmt.h"

/* The temperature the body sends, or -1 when it sends none. */
static double
body_temperature(json_t *body)
{
	json_t	*t = json_object_get(body, "temperature");

	if (t == NULL)
		t = json_object_get(json_object_get(body, "options"),
		    "temperature");
	return json_is_number(t) ? json_number_value(t) : -1;
}

/* A tool's name: OpenAI and Ollama {"function": {"name"}}, Claude
 * {"name"}; "" when it has none. */
static const char *
tool_name(json_t *t)
{
	const char	*n = json_string_value(json_object_get(
			    json_object_get(t, "function"), "name"));

	if (n == NULL)
		n = json_string_value(json_object_get(t, "name"));
	return n != NULL ? n : "";
}

/* One tool to sort: by name, then (two tools of one name) by its
 * whole text, so that any order of the same tools sorts alike. */
struct tool_ent {
	json_t	*te_tool;
	char	*te_text;
};

static int
by_name(const void *a, const void *b)
{
	const struct tool_ent	*x = a, *y = b;
	int			 c = strcmp(tool_name(x->te_tool),
				    tool_name(y->te_tool));

	return c != 0 ? c : strcmp(x->te_text, y->te_text);
}

/* body's "tools" in that order. */
static void
sort_tools(json_t *body)
{
	json_t		*tools = json_object_get(body, "tools"), *sorted;
	struct tool_ent	*v;
	size_t		 n = json_array_size(tools), i;
	char		*t;

	if (n < 2)
		return;
	v = xcalloc(n, sizeof(*v));
	for (i = 0; i < n; i++) {
		v[i].te_tool = json_array_get(tools, i);
		t = json_dumps(v[i].te_tool, JSON_SORT_KEYS | JSON_COMPACT |
		    JSON_ENCODE_ANY);
		v[i].te_text = t != NULL ? t : xstrdup("");
	}
	qsort(v, n, sizeof(*v), by_name);
	sorted = json_array();
	for (i = 0; i < n; i++) {
		json_array_append(sorted, v[i].te_tool);
		free(v[i].te_text);
	}
	json_object_set_new(body, "tools", sorted);
	free(v);
}

bool
cache_key(const struct cache_conf *conf, const char *dialect,
    const char *base_url, const char *body, const char *stream_prop,
    char key[CACHE_KEYLEN])
{
	json_t		*j;
	char		*canon;
	struct buf	 b = BUF_INIT;
	double		 temp;

	if (conf == NULL || !conf->kc_on ||
	    (j = json_loads(body, 0, NULL)) == NULL)
		return false;
	temp = body_temperature(j);
	if (temp < 0 || temp > conf->kc_temp) {
		json_decref(j);
		return false;
	}
	if (stream_prop != NULL && *stream_prop != '\0')
		json_object_del(j, stream_prop);
	json_object_del(j, "stream");
	json_object_del(j, "stream_options");	/* only on streams */
	sort_tools(j);
	canon = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	buf_printf(&b, "sluice-cache-1\n%s\n%s\n%s", dialect, base_url,
	    canon != NULL ? canon : "");
	sha256_hex(b.b_data, b.b_len, key);
	buf_free(&b);
	free(canon);
	json_decref(j);
	return true;
}

void
cache_entry_clear(struct cache_entry *e)
{
	json_decref(e->ce_chunks);
	json_decref(e->ce_tools);
	memset(e, 0, sizeof(*e));
}

/* The row of st as an entry; -1 when its JSON does not parse. */
static int
row_entry(struct store_q *st, struct cache_entry *e)
{
	const char	*chunks = store_col_text(st, 0);
	const char	*tools = store_col_text(st, 1);
	const char	*fin = store_col_text(st, 2);

	memset(e, 0, sizeof(*e));
	e->ce_chunks = chunks != NULL ? json_loads(chunks, 0, NULL) : NULL;
	e->ce_tools = tools != NULL ? json_loads(tools, 0, NULL) : NULL;
	snprintf(e->ce_finish, sizeof(e->ce_finish), "%s", fin ? fin : "");
	e->ce_prompt_tokens = store_col_int(st, 3);
	e->ce_completion_tokens = store_col_int(st, 4);
	if (!json_is_array(e->ce_chunks) ||
	    (tools != NULL && !json_is_array(e->ce_tools))) {
		cache_entry_clear(e);
		return -1;
	}
	return 0;
}

int
cache_get(struct store *s, const char *key, int64_t now_ms, int64_t ttl_ms,
    struct cache_entry *out)
{
	struct store_q	*st = store_stmt(s, "SELECT chunks, tool_calls, "
			    "finish, prompt_tokens, completion_tokens FROM "
			    "response_cache WHERE key = ? AND created_ms > ?");
	int		 r;

	if (st == NULL || store_bind(s, st, "ti", key, now_ms - ttl_ms) == -1)
		return -1;
	if ((r = store_step(s, st)) != 1)
		return r;
	r = row_entry(st, out) == 0 ? 1 : 0;	/* a damaged row: a miss */
	store_end(st);
	return r;
}

/* In the transaction: the expired entries, then the oldest above max. */
static int
evict(struct store *s, const struct cache_conf *conf, int64_t now_ms)
{
	int64_t	 n;

	if (store_exec(s, "DELETE FROM response_cache WHERE created_ms <= ?",
	    "i", now_ms - conf->kc_ttl_ms) == -1 || (n = cache_count(s)) == -1)
		return -1;
	/* rowid: the older of two written in the same millisecond;
	 * PostgreSQL has none, and breaks such a tie by key */
	if (n > conf->kc_max && store_exec(s, store_is_pg(s) ? "DELETE FROM "
	    "response_cache WHERE key IN (SELECT key FROM response_cache "
	    "ORDER BY created_ms, key LIMIT ?)" : "DELETE FROM response_cache "
	    "WHERE key IN (SELECT key FROM response_cache ORDER BY "
	    "created_ms, rowid LIMIT ?)", "i", n - conf->kc_max) == -1)
		return -1;
	return 0;
}

static int
put_locked(struct store *s, const char *key, const char *endpoint,
    const struct cache_entry *e, int64_t now_ms, const struct cache_conf *conf)
{
	char	*chunks = json_dumps(e->ce_chunks, JSON_COMPACT);
	char	*tools = e->ce_tools != NULL && json_array_size(e->ce_tools) > 0 ?
		    json_dumps(e->ce_tools, JSON_COMPACT) : NULL;
	int	 r = -1;

	if (chunks != NULL && store_exec(s, "INSERT INTO response_cache (key, "
	    "endpoint, created_ms, chunks, tool_calls, finish, prompt_tokens, "
	    "completion_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT "
	    "(key) DO UPDATE SET endpoint = excluded.endpoint, created_ms = "
	    "excluded.created_ms, chunks = excluded.chunks, tool_calls = "
	    "excluded.tool_calls, finish = excluded.finish, prompt_tokens = "
	    "excluded.prompt_tokens, completion_tokens = "
	    "excluded.completion_tokens", "ttitttii", key, endpoint, now_ms, chunks, tools,
	    e->ce_finish, e->ce_prompt_tokens, e->ce_completion_tokens) == 1)
		r = evict(s, conf, now_ms);
	free(chunks);
	free(tools);
	return r;
}

int
cache_put(struct store *s, const char *key, const char *endpoint,
    const struct cache_entry *e, int64_t now_ms, const struct cache_conf *conf,
    int64_t *entries)
{
	int64_t	 n = 0;

	if (store_begin(s) == -1)
		return -1;
	if (put_locked(s, key, endpoint, e, now_ms, conf) == -1 ||
	    (n = cache_count(s)) == -1) {
		(void)store_rollback(s);
		return -1;
	}
	if (store_commit(s) == -1)
		return -1;
	if (entries != NULL)
		*entries = n;
	return 0;
}

int64_t
cache_clear(struct store *s)
{
	int64_t	 n;

	if (store_begin(s) == -1)
		return -1;
	if ((n = cache_count(s)) == -1 ||
	    store_exec(s, "DELETE FROM response_cache", "") == -1) {
		(void)store_rollback(s);
		return -1;
	}
	return store_commit(s) == -1 ? -1 : n;
}

int64_t
cache_count(struct store *s)
{
	struct store_q	*st = store_stmt(s, "SELECT count(*) FROM "
			    "response_cache");
	int64_t		 n;

	if (st == NULL || store_step(s, st) != 1)
		return -1;
	n = store_col_int(st, 0);
	store_end(st);
	return n;
}
