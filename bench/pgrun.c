/* pgrun.c - bench: a throwaway PostgreSQL cluster (tests/unit/pgtmp.c) held up while the bench runs, its database URL on stdout. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "../tests/unit/pgtmp.h"

/*
 * Usage: pgrun
 *
 * Starts a cluster the way the store's tests do (initdb into
 * /tmp/sluice-pg.XXXXXX, as nobody when root, on a Unix socket in that
 * folder, fsync off), makes one empty database and prints
 *
 *	url postgresql:///NAME?host=DIR&port=N&user=sluice
 *
 * then waits for SIGTERM, SIGINT or SIGHUP, stops the server and
 * removes the folder. Killed with SIGKILL, pgtmp's watchdog does that.
 * Exit status 0; EX_UNAVAILABLE when the cluster could not start, after
 * pgtmp said why on stderr (PostgreSQL not installed, or its log).
 */
int
main(void)
{
	struct pgtmp	 pt;
	char		 url[512];
	sigset_t	 set;
	int		 sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* blocked before the cluster starts: a signal then waits for
	 * sigwait instead of killing us with the cluster up */
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (pgtmp_start(&pt, "bench") == -1)
		return EX_UNAVAILABLE;
	if (pgtmp_newdb(&pt, url, sizeof(url)) == -1) {
		pgtmp_stop(&pt);
		return EX_UNAVAILABLE;
	}
	printf("url %s\n", url);
	fflush(stdout);
	sigwait(&set, &sig);
	pgtmp_stop(&pt);
	return 0;
}
