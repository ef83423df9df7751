/* testmain.h - the main() every Check suite shares. */
#ifndef SLUICE_TESTMAIN_H
#define SLUICE_TESTMAIN_H

#include <check.h>
#include <stdlib.h>

#include "../common/log.h"

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
