/* check_msgs_norm.c - a request's messages made ready for workflows: the discussion id taken out, WilmerAI's chat-route rewriting. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../worker/core/msgs.h"
#include "../../worker/core/msgs_norm.h"
#include "../testmain.h"

/* role, content, role, content, ... as a NULL-terminated array */
#define PAIRS(...)	((const char *const []){ __VA_ARGS__, NULL })

/* A conversation from role/content pairs. */
static void
conv(struct wmsgs *l, const char *const *pairs)
{
	memset(l, 0, sizeof(*l));
	for (; pairs[0] != NULL; pairs += 2)
		wmsgs_add(l, pairs[0], pairs[1]);
}

/* The conversation as "role|content" lines. Caller frees. */
static char *
lines(const struct wmsgs *l)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < l->n; i++)
		buf_printf(&b, "%s|%s\n", l->v[i].m_role, l->v[i].m_content);
	return buf_take(&b);
}

#define ck_conv(l, want) do {						\
	char	*s_ = lines(l);						\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

/* The id of a conversation of one user message with content c (NULL
 * when none), and that message afterwards into after. */
static char *
id_of_one(const char *c, char **after)
{
	struct wmsgs	 l;
	char		*id;

	conv(&l, PAIRS("user", c));
	id = wmsgs_discussion_id(&l);
	*after = strdup(l.v[0].m_content);
	wmsgs_free(&l);
	return id;
}

/* ---- the discussion id ---- */

/* The first tag's id, and every tag (matched shortest first, as the
 * regular expression) removed from every message. */
START_TEST(id_first_tag_wins_and_all_go)
{
	struct wmsgs	 l;
	char		*id;

	conv(&l, PAIRS("system", "You are kind.",
	    "user", "a[DiscussionId]one[/DiscussionId]b"
	    "[DiscussionId]two[/DiscussionId]c",
	    "assistant", "[DiscussionId]three[/DiscussionId] hi"));
	id = wmsgs_discussion_id(&l);
	ck_assert_str_eq(id, "one");
	ck_conv(&l, "system|You are kind.\nuser|abc\nassistant| hi\n");
	free(id);
	wmsgs_free(&l);
}
END_TEST

/* The id may be in any message; the one seen first, in order, counts. */
START_TEST(id_in_a_later_message)
{
	struct wmsgs	 l;
	char		*id;

	conv(&l, PAIRS("system", "plain", "user", "x [DiscussionId]7a-b c"
	    "[/DiscussionId]"));
	id = wmsgs_discussion_id(&l);
	ck_assert_str_eq(id, "7a-b c");
	ck_conv(&l, "system|plain\nuser|x \n");
	free(id);
	wmsgs_free(&l);
}
END_TEST

/* No tag, or an unclosed one: no id, the contents as they were. */
START_TEST(id_none)
{
	char	*after, *id;

	ck_assert_ptr_null(id_of_one("nothing here", &after));
	ck_assert_str_eq(after, "nothing here");
	free(after);
	id = id_of_one("[DiscussionId]open ended", &after);
	ck_assert_ptr_null(id);
	ck_assert_str_eq(after, "[DiscussionId]open ended");
	free(after);
	id = id_of_one("[/DiscussionId]x[DiscussionId]", &after);
	ck_assert_ptr_null(id);
	ck_assert_str_eq(after, "[/DiscussionId]x[DiscussionId]");
	free(after);
}
END_TEST

/* An id that could leave a folder is no id (spec 1.4 item 2), but its
 * tag still goes. */
START_TEST(id_unsafe_refused)
{
	static const char *const bad[] = { "a/b", "a\\b", "c:d", ".", "..",
	    "", "../up" };
	char		 c[64], *after, *id;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(c, sizeof(c), "hi[DiscussionId]%s[/DiscussionId]!",
		    bad[i]);
		id = id_of_one(c, &after);
		ck_assert_msg(id == NULL, "'%s' taken as an id", bad[i]);
		ck_assert_str_eq(after, "hi!");
		free(after);
	}
	id = id_of_one("[DiscussionId]...[/DiscussionId]", &after);
	ck_assert_str_eq(id, "...");
	free(id);
	free(after);
}
END_TEST

/* The first id decides: an unsafe first id is not replaced by a later
 * safe one (WilmerAI validates the first match only). */
START_TEST(id_unsafe_first_is_not_skipped)
{
	struct wmsgs	 l;

	conv(&l, PAIRS("user", "[DiscussionId]a/b[/DiscussionId]",
	    "user", "[DiscussionId]good[/DiscussionId]"));
	ck_assert_ptr_null(wmsgs_discussion_id(&l));
	ck_conv(&l, "user|\nuser|\n");
	wmsgs_free(&l);
}
END_TEST

/* ---- chat-route rewriting ---- */

START_TEST(rewrite_adds_roles)
{
	struct wmsgs	 l;

	conv(&l, PAIRS("system", "sys", "user", "hi", "assistant", "hello",
	    "tool", "42", "user", ""));
	wmsgs_chat_rewrite(&l, true, false);
	ck_conv(&l, "system|sys\nuser|User: hi\nassistant|Assistant: hello\n"
	    "tool|42\nuser|User: \n");
	wmsgs_free(&l);
}
END_TEST

/* The missing assistant turn is "Assistant:" with roles, "" without;
 * none is added after an assistant's message. */
START_TEST(rewrite_adds_missing_assistant)
{
	struct wmsgs	 l;

	conv(&l, PAIRS("user", "hi"));
	wmsgs_chat_rewrite(&l, true, true);
	ck_conv(&l, "user|User: hi\nassistant|Assistant:\n");
	wmsgs_free(&l);
	conv(&l, PAIRS("user", "hi"));
	wmsgs_chat_rewrite(&l, false, true);
	ck_conv(&l, "user|hi\nassistant|\n");
	wmsgs_free(&l);
	conv(&l, PAIRS("user", "hi", "assistant", "so far"));
	wmsgs_chat_rewrite(&l, false, true);
	ck_conv(&l, "user|hi\nassistant|so far\n");
	wmsgs_free(&l);
	conv(&l, (const char *const []){ NULL });
	wmsgs_chat_rewrite(&l, true, true);
	ck_conv(&l, "assistant|Assistant:\n");
	wmsgs_free(&l);
}
END_TEST

/* Both off: nothing changes. */
START_TEST(rewrite_off)
{
	struct wmsgs	 l;

	conv(&l, PAIRS("user", "hi", "assistant", "a", "user", "b"));
	wmsgs_chat_rewrite(&l, false, false);
	ck_conv(&l, "user|hi\nassistant|a\nuser|b\n");
	wmsgs_free(&l);
}
END_TEST

static Suite *
msgs_norm_suite(void)
{
	Suite	*s = suite_create("msgs_norm");
	TCase	*tc;

	tc = tcase_create("discussion_id");
	tcase_add_test(tc, id_first_tag_wins_and_all_go);
	tcase_add_test(tc, id_in_a_later_message);
	tcase_add_test(tc, id_none);
	tcase_add_test(tc, id_unsafe_refused);
	tcase_add_test(tc, id_unsafe_first_is_not_skipped);
	suite_add_tcase(s, tc);
	tc = tcase_create("chat_rewrite");
	tcase_add_test(tc, rewrite_adds_roles);
	tcase_add_test(tc, rewrite_adds_missing_assistant);
	tcase_add_test(tc, rewrite_off);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(msgs_norm_suite());
}
