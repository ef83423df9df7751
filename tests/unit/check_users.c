/* check_users.c - the model field picks the user and shared workflow (WilmerAI 1.5), one user or several; the models listed. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/buf.h"
#include "../../gateway/gw.h"
#include "../../gateway/users.h"
#include "../testmain.h"

static char		 dir[64];
static struct gw	 G;
static struct gw_user	 U[2] = {
	{ "alice", "_shared", true, false, false, false },
	{ "bob", "bobs", false, true, true, false },
};

static void
mk(const char *rel)
{
	char	 path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_users.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	mk("Workflows");
	mk("Workflows/_shared");
	mk("Workflows/_shared/general");
	mk("Workflows/bobs");
	mk("Workflows/bobs/coder");
	memset(&G, 0, sizeof(G));
	G.g_conf.c_config_dir = dir;
	G.g_users = U;
	G.g_nusers = 1;
}

static int
rm_cb(const char *p, const struct stat *st, int f, struct FTW *w)
{
	return remove(p);
}

static void
teardown(void)
{
	nftw(dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

/* users_select's verdict as "rc user wf". */
static void
pick(const char *model, const char *want)
{
	const struct gw_user	*u;
	char			 wf[NAME_MAX_LEN + 1], got[256];
	int			 rc = users_select(&G, model, &u, wf);

	snprintf(got, sizeof(got), "%d %s %s", rc, rc == 0 ? u->gu_name : "-",
	    rc == 0 && wf[0] ? wf : "-");
	ck_assert_msg(strcmp(got, want) == 0, "model '%s': got '%s', want '%s'",
	    model, got, want);
}

START_TEST(single_user)
{
	pick("general", "0 alice general");
	pick("general:latest", "0 alice general");
	pick("bob:general:latest", "0 alice general");	/* left half ignored */
	pick("other", "0 alice -");
	pick("../_shared/general", "0 alice -");
	pick("", "0 alice -");
	pick("a:b:c", "0 alice -");
	pick("coder", "0 alice -");		/* bob's, not alice's */
}
END_TEST

START_TEST(multi_user)
{
	char	*list;

	G.g_nusers = 2;
	pick("bob", "0 bob -");
	pick("BOB:latest", "0 bob -");
	pick("bob:coder", "0 bob coder");
	pick("bob:general", "0 bob -");		/* not in bob's folder */
	pick("alice:general", "0 alice general");
	pick("general", "-1 - -");		/* a workflow, not a user */
	pick("carol:general", "-1 - -");
	list = users_list(&G);
	ck_assert_str_eq(list, "alice, bob");
	free(list);
}
END_TEST

/* Whose lines are redacted, by the model the gateway echoes: the user
 * named before ':' (any case); with one user, that user; not yet
 * chosen (NULL), nobody. */
START_TEST(redacting_by_echo)
{
	ck_assert(!users_redacting(&G, "bob"));		/* alice alone */
	G.g_nusers = 2;
	ck_assert(users_redacting(&G, "bob"));
	ck_assert(users_redacting(&G, "Bob:coder"));
	ck_assert(!users_redacting(&G, "alice:general"));
	ck_assert(!users_redacting(&G, "carol"));
	ck_assert(!users_redacting(&G, NULL));
	G.g_nusers = 1;
	U[0].gu_redact = true;
	ck_assert(users_redacting(&G, "alice:general"));
	U[0].gu_redact = false;
}
END_TEST

static void
collect(void *arg, const char *id)
{
	struct buf	*b = arg;

	buf_printf(b, "%s%s", b->b_len > 0 ? " " : "", id);
}

/* The one listing /v1/models, /api/tags, /api/ps and /api/show use. */
START_TEST(listed_models)
{
	struct buf	 b = BUF_INIT;

	buf_adds(&b, "");
	users_models(&G, collect, &b);
	ck_assert_str_eq(b.b_data, "alice:general");
	buf_reset(&b);
	buf_adds(&b, "");
	G.g_nusers = 2;		/* bob does not list his workflows */
	users_models(&G, collect, &b);
	ck_assert_str_eq(b.b_data, "alice:general bob");
	buf_free(&b);
	ck_assert_uint_eq(users_model_len("bob:latest"), 3);
	ck_assert_uint_eq(users_model_len("bob"), 3);
	ck_assert_uint_eq(users_model_len(":latest"), 0);
	ck_assert_uint_eq(users_model_len("latest"), 6);
}
END_TEST

static Suite *
users_suite(void)
{
	Suite	*s = suite_create("users");
	TCase	*tc = tcase_create("select");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, single_user);
	tcase_add_test(tc, multi_user);
	tcase_add_test(tc, redacting_by_echo);
	suite_add_tcase(s, tc);
	tc = tcase_create("models");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, listed_models);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(users_suite());
}
