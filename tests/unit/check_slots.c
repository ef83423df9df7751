/* check_slots.c - per-endpoint slots: limits, FIFO order, timeouts, dead workers. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "../../gateway/slots.h"
#include "../testmain.h"

static struct {
	char	 log[1024];	/* "w1+ w2- ..." grants (+) and refusals (-) */
} G;

static void
grant(void *arg, unsigned wslot, pid_t pid, const char *ep, bool ok)
{
	size_t	 n = strlen(G.log);

	snprintf(G.log + n, sizeof(G.log) - n, "%s%u%s", n ? " " : "", wslot,
	    ok ? "+" : "-");
}

static struct slots *
fresh(void)
{
	memset(&G, 0, sizeof(G));
	return slots_new(grant, NULL);
}

START_TEST(limit_and_fifo)
{
	struct slots	*s = fresh();

	slots_acquire(s, 1, 101, "Fast", 1, 0, 1000);
	slots_acquire(s, 2, 102, "Fast", 1, 0, 1000);
	slots_acquire(s, 3, 103, "Fast", 1, 0, 1000);
	slots_acquire(s, 4, 104, "Other", 1, 0, 1000);	/* independent */
	ck_assert_str_eq(G.log, "1+ 4+");
	slots_release(s, 1, 101, "Fast");
	ck_assert_str_eq(G.log, "1+ 4+ 2+");		/* first come first */
	slots_release(s, 2, 102, "Fast");
	ck_assert_str_eq(G.log, "1+ 4+ 2+ 3+");
	slots_free(s);
}
END_TEST

START_TEST(larger_limit)
{
	struct slots	*s = fresh();

	slots_acquire(s, 1, 1, "E", 2, 0, 1000);
	slots_acquire(s, 2, 2, "E", 2, 0, 1000);
	slots_acquire(s, 3, 3, "E", 2, 0, 1000);
	ck_assert_str_eq(G.log, "1+ 2+");
	slots_release(s, 2, 2, "E");
	ck_assert_str_eq(G.log, "1+ 2+ 3+");
	slots_free(s);
}
END_TEST

START_TEST(waiters_time_out)
{
	struct slots	*s = fresh();

	slots_acquire(s, 1, 1, "E", 1, 0, 1000);
	slots_acquire(s, 2, 2, "E", 1, 100, 500);	/* until 600 */
	slots_acquire(s, 3, 3, "E", 1, 200, 5000);	/* until 5200 */
	ck_assert_uint_eq(slots_tick(s, 599), 600);
	ck_assert_uint_eq(slots_tick(s, 600), 5200);
	ck_assert_str_eq(G.log, "1+ 2-");
	slots_release(s, 1, 1, "E");
	ck_assert_str_eq(G.log, "1+ 2- 3+");
	ck_assert_uint_eq(slots_tick(s, 9999), 0);
	slots_free(s);
}
END_TEST

START_TEST(dead_worker_gives_back)
{
	struct slots	*s = fresh();

	slots_acquire(s, 1, 11, "E", 1, 0, 1000);
	slots_acquire(s, 2, 12, "E", 1, 0, 1000);
	slots_acquire(s, 1, 11, "F", 1, 0, 1000);
	ck_assert_uint_eq(slots_drop_worker(s, 1, 11), 2);
	ck_assert_str_eq(G.log, "1+ 1+ 2+");
	/* Same slot, another process: not confused with the dead one. */
	slots_acquire(s, 1, 21, "E", 1, 0, 1000);
	slots_release(s, 1, 11, "E");			/* stale: no effect */
	ck_assert_str_eq(G.log, "1+ 1+ 2+");
	slots_release(s, 2, 12, "E");
	ck_assert_str_eq(G.log, "1+ 1+ 2+ 1+");
	slots_free(s);
}
END_TEST

START_TEST(cancelled_waiter_leaves_queue)
{
	struct slots	*s = fresh();

	slots_acquire(s, 1, 1, "E", 1, 0, 1000);
	slots_acquire(s, 2, 2, "E", 1, 0, 1000);
	slots_acquire(s, 3, 3, "E", 1, 0, 1000);
	slots_release(s, 2, 2, "E");			/* 2 stops waiting */
	slots_release(s, 1, 1, "E");
	ck_assert_str_eq(G.log, "1+ 3+");
	slots_free(s);
}
END_TEST

static void
count(void *arg, const char *ep, unsigned used, unsigned waiting)
{
	char	*out = arg;
	size_t	 n = strlen(out);

	snprintf(out + n, 256 - n, "%s=%u/%u ", ep, used, waiting);
}

START_TEST(visible_counts)
{
	struct slots	*s = fresh();
	char		 out[256] = "";

	slots_acquire(s, 1, 1, "E", 1, 0, 1000);
	slots_acquire(s, 2, 2, "E", 1, 0, 1000);
	slots_foreach(s, count, out);
	ck_assert_str_eq(out, "E=1/1 ");
	slots_free(s);
}
END_TEST

static Suite *
slots_suite(void)
{
	Suite	*s = suite_create("slots");
	TCase	*tc = tcase_create("slots");

	tcase_add_test(tc, limit_and_fifo);
	tcase_add_test(tc, larger_limit);
	tcase_add_test(tc, waiters_time_out);
	tcase_add_test(tc, dead_worker_gives_back);
	tcase_add_test(tc, cancelled_waiter_leaves_queue);
	tcase_add_test(tc, visible_counts);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(slots_suite());
}
