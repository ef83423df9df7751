/* check_liveness.c - livenessToolCall on the way in: the machinery taken out of the client's conversation, runs of identical calls collapsed (addendum A8.7, WilmerAI's gateway cases). */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../worker/core/msgs.h"
#include "../../worker/core/msgs_liveness.h"
#include "../testmain.h"

static struct wmsgs	 L;

/* Append a message: calls is the tool_calls JSON or NULL, id the
 * tool_call_id or NULL. */
static void
add(const char *role, const char *content, const char *calls, const char *id)
{
	wmsgs_add(&L, role, content);
	if (calls != NULL)
		L.v[L.n - 1].m_tool_calls = strdup(calls);
	if (id != NULL)
		L.v[L.n - 1].m_tool_call_id = strdup(id);
}

/* A call with this id, name and arguments (JSON text of a string). */
static char *
call(const char *id, const char *name, const char *args)
{
	char	*s;

	if (asprintf(&s, "[{\"id\": \"%s\", \"type\": \"function\", "
	    "\"function\": {\"name\": \"%s\", \"arguments\": %s}}]", id, name,
	    args) == -1)
		abort();
	return s;
}

/* The conversation after cleaning with tool "keep_going" {"n": 1}: one
 * line per message, "role:content", then "+" and each call's id, and
 * "@id" for a result. Caller frees. */
static char *
cleaned(void)
{
	json_t		*args = json_pack("{s:i}", "n", 1), *calls, *c;
	struct buf	 b = BUF_INIT;
	size_t		 i, k;

	wmsgs_liveness_clean(&L, "keep_going", args);
	json_decref(args);
	for (i = 0; i < L.n; i++) {
		buf_printf(&b, "%s:%s", L.v[i].m_role, L.v[i].m_content);
		calls = L.v[i].m_tool_calls != NULL ?
		    json_loads(L.v[i].m_tool_calls, 0, NULL) : NULL;
		json_array_foreach(calls, k, c)
			buf_printf(&b, "+%s", json_string_value(json_object_get(c,
			    "id")));
		json_decref(calls);
		if (L.v[i].m_tool_call_id != NULL)
			buf_printf(&b, "@%s", L.v[i].m_tool_call_id);
		buf_addc(&b, '\n');
	}
	buf_addc(&b, '\0');
	wmsgs_free(&L);
	return buf_take(&b);
}

#define EXPECT(want) do {						\
	char *s_ = cleaned();						\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

/* The injected call and its result go; so does a call recognised by
 * its "[Wilmer]" mark or by name and arguments; other calls stay. */
START_TEST(machinery_taken_out)
{
	char	*a = call("wilmer_liveness_0a1b2c3d", "keep_going", "\"{}\"");
	char	*b = call("x1", "other", "\"{\\\"note\\\": \\\"[Wilmer] ping\\\"}\"");
	char	*c = call("x2", "keep_going", "\"{\\\"n\\\": 1}\"");
	char	*d = call("x3", "keep_going", "\"{\\\"n\\\": 2}\"");

	add("user", "u1", NULL, NULL);
	add("assistant", "", a, NULL);
	add("tool", "ok", NULL, "wilmer_liveness_0a1b2c3d");
	add("assistant", "Working.", b, NULL);
	add("tool", "ok", NULL, "x1");
	add("assistant", "", c, NULL);
	add("tool", "id-less result", NULL, NULL);
	add("assistant", "", d, NULL);
	add("tool", "real", NULL, "x3");
	add("user", "u2", NULL, NULL);
	EXPECT("user:u1\nassistant:Working.\nassistant:+x3\ntool:real@x3\n"
	    "user:u2\n");
	free(a);
	free(b);
	free(c);
	free(d);
}
END_TEST

/* A trailing exchange that answers a liveness call stays as it came
 * (an "Assistant:" filler after it is looked past); one buried earlier
 * goes. */
START_TEST(trailing_exchange_kept)
{
	char	*a = call("wilmer_liveness_1", "keep_going", "\"{}\"");

	add("user", "u1", NULL, NULL);
	add("assistant", "", a, NULL);
	add("tool", "ok", NULL, "wilmer_liveness_1");
	add("assistant", "Assistant:", NULL, NULL);
	EXPECT("user:u1\nassistant:+wilmer_liveness_1\n"
	    "tool:ok@wilmer_liveness_1\nassistant:Assistant:\n");
	add("user", "u1", NULL, NULL);
	add("assistant", "", a, NULL);
	add("tool", "ok", NULL, "wilmer_liveness_1");
	add("user", "u2", NULL, NULL);
	EXPECT("user:u1\nuser:u2\n");
	free(a);
}
END_TEST

/* Three or more identical call/result pairs in a row become one, the
 * result counting them; two stay; differing ones stay. */
START_TEST(identical_runs_collapsed)
{
	char	*a = call("r1", "read", "{\"path\": \"/a\", \"b\": 1}");
	char	*b = call("r2", "read", "{\"b\": 1, \"path\": \"/a\"}");
	char	*c = call("r3", "read", "\"{\\\"b\\\": 1, \\\"path\\\": \\\"/a\\\"}\"");
	char	*d = call("r4", "read", "\"{}\"");
	int	 i;

	add("user", "u", NULL, NULL);
	add("assistant", "", a, NULL);
	add("tool", "same  text", NULL, "r1");
	add("assistant", "", b, NULL);
	add("tool", " same text\n", NULL, "r2");
	add("assistant", "", c, NULL);
	add("tool", "same text", NULL, "r3");
	add("assistant", "", d, NULL);
	add("tool", "other", NULL, "r4");
	EXPECT("user:u\nassistant:+r1\ntool:same  text\n\n[Wilmer note: this "
	    "exact tool call was made 3 consecutive times and every result "
	    "was identical. Repeating it again will not change the outcome; "
	    "take a different action.]@r1\nassistant:+r4\ntool:other@r4\n");
	for (i = 0; i < 2; i++) {
		add("assistant", "", a, NULL);
		add("tool", "x", NULL, "r1");
	}
	add("assistant", "", a, NULL);
	add("tool", "y", NULL, "r1");
	EXPECT("assistant:+r1\ntool:x@r1\nassistant:+r1\ntool:x@r1\n"
	    "assistant:+r1\ntool:y@r1\n");
	free(a);
	free(b);
	free(c);
	free(d);
}
END_TEST

static Suite *
liveness_suite(void)
{
	Suite	*s = suite_create("liveness");

	test_case(s, "strip", machinery_taken_out, 0);
	test_case(s, "trailing", trailing_exchange_kept, 0);
	test_case(s, "collapse", identical_runs_collapsed, 0);
	return s;
}

int
main(void)
{
	return check_main(liveness_suite());
}
