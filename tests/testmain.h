/* testmain.h - the main() every Check suite shares. */
#ifndef SLUICE_TESTMAIN_H
#define SLUICE_TESTMAIN_H

#include <check.h>
#include <stdlib.h>

#include "../common/log.h"

/* A TCase of its own named name in s (CK_RUN_CASE selects it), with
 * test in it unless NULL, and a timeout of secs (0: Check's default).
 * Returns it, for more tests. */
static inline TCase *
test_case(Suite *s, const char *name, const TTest *test, int secs)
{
	TCase	*tc = tcase_create(name);

	if (secs > 0)
		tcase_set_timeout(tc, secs);
	if (test != NULL)
		tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
	return tc;
}

/* Run suite s with quiet logging; returns the process exit status. */
static inline int
check_main(Suite *s)
{
	SRunner	*sr = srunner_create(s);
	int	 failed;

	log_init(LOG_LVL_ERR);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
