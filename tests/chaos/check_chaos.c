/* check_chaos.c - the chaos suite: workers killed, stopped, crashing and rogue, a trickling backend, a killed gateway. */
#include <check.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdlib.h>

#include "../testmain.h"
#include "chaos.h"

/*
 * make check runs the short versions, make chaos (CHAOS_FULL=1) the long
 * ones. Every scenario prints its figures on lines starting "chaos: ";
 * docs/chaos.md has them with the commands.
 */
static Suite *
chaos_suite(void)
{
	Suite	*s = suite_create("chaos");

	chaos_add_storm(s);
	chaos_add_hang(s);
	chaos_add_rogue(s);
	chaos_add_crashloop(s);
	chaos_add_deadline(s);
	chaos_add_gwkill(s);
	return s;
}

int
main(void)
{
	return it_main(chaos_suite());
}
