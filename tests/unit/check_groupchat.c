/* check_groupchat.c - the group-chat speaker rule (WilmerAI case 33), whole and in pieces. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/core/groupchat.h"
#include "../testmain.h"

/* Run the pieces (NULL-terminated) through a gchat for prompt. */
static char *
run(const char *prompt, const char *const *pieces)
{
	struct gchat	 g;
	struct buf	 out = BUF_INIT;
	size_t		 i;

	gchat_init(&g, prompt);
	for (i = 0; pieces[i] != NULL; i++)
		gchat_feed(&g, pieces[i], strlen(pieces[i]), &out);
	gchat_finish(&g, &out);
	gchat_free(&g);
	buf_addc(&out, '\0');
	return buf_take(&out);
}

#define RUN_EQ(prompt, want, ...) do {					\
	char *s_ = run(prompt, (const char *const[]){ __VA_ARGS__, NULL });	\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

START_TEST(case_33)
{
	RUN_EQ("Roland:", "Roland: hi", "Rol", "and:", " hi");
	RUN_EQ("Roland:", "Roland: hi!", "hi", "!");
	RUN_EQ("Roland:", "Roland: hi", "Roland: hi");
	/* Empty reply: the prompt and a space, as WilmerAI. */
	RUN_EQ("Roland:", "Roland: ", "");
	/* A colon at the very start is no speaker. */
	RUN_EQ("Roland:", "Roland: :)", ":)");
	/* A colon past the window: the reply had no speaker. */
	RUN_EQ("Ann:", "Ann: well well well: no", "well well well", ": no");
	/* Decided once the window is full, then text flows as it comes. */
	RUN_EQ("Ann:", "Ann: abcdefghijklmnop", "abcdefghijklmn", "op");
	/* Off: everything passes as it is. */
	RUN_EQ(NULL, "  x", "  x");
}
END_TEST

START_TEST(decides_early)
{
	struct gchat	 g;
	struct buf	 out = BUF_INIT;

	gchat_init(&g, "Roland:");
	gchat_feed(&g, "Rol", 3, &out);
	ck_assert_uint_eq(out.b_len, 0);		/* could be a speaker */
	gchat_feed(&g, "and: hello", 10, &out);
	ck_assert_uint_eq(out.b_len, 13);		/* decided at the colon */
	gchat_feed(&g, " there", 6, &out);
	ck_assert_uint_eq(out.b_len, 19);		/* then straight through */
	gchat_free(&g);
	buf_free(&out);
}
END_TEST

START_TEST(prompt_detection)
{
	struct wmsgs	 l = { NULL, 0 };
	char		*p, long_name[128];

	ck_assert_ptr_null(gchat_prompt(&l));
	wmsgs_add(&l, "user", "hello");
	ck_assert_ptr_null(gchat_prompt(&l));
	wmsgs_add(&l, "assistant", "  Roland:\n");
	p = gchat_prompt(&l);
	ck_assert_str_eq(p, "Roland:");
	free(p);
	memset(long_name, 'x', 99);
	long_name[99] = ':';
	long_name[100] = '\0';
	wmsgs_add(&l, "assistant", long_name);	/* 100 characters: too long */
	ck_assert_ptr_null(gchat_prompt(&l));
	wmsgs_free(&l);
}
END_TEST

static Suite *
groupchat_suite(void)
{
	Suite	*s = suite_create("groupchat");
	TCase	*tc = tcase_create("groupchat");

	tcase_add_test(tc, case_33);
	tcase_add_test(tc, decides_early);
	tcase_add_test(tc, prompt_detection);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(groupchat_suite());
}
