/* pgtmp.h - tests: a throwaway PostgreSQL cluster in a temporary folder, on a Unix socket (and loopback TCP if asked), removed afterwards. */
#ifndef SLUICE_PGTMP_H
#define SLUICE_PGTMP_H

#include <stdbool.h>
#include <stddef.h>

struct pgtmp {
	char	 pt_dir[64];	/* /tmp/sluice-pg.XXXXXX: data/, the socket */
	int	 pt_port;	/* names the socket (.s.PGSQL.<port>) */
	bool	 pt_up;		/* the server runs */
	bool	 pt_tcp;	/* it also listens on 127.0.0.1:pt_port */
	char	 pt_addr[48];	/* or on this address instead, or "" */
	unsigned pt_ndb;	/* databases made so far */
};

/* Start a cluster (initdb, then pg_ctl start) in a fresh folder,
 * listening on a Unix socket in it only, fsync off, and wait until it
 * takes connections. what names the suite in messages. Returns 0; or
 * -1 after saying why on stderr: "*** <what>: PostgreSQL tests SKIPPED:
 * PostgreSQL not installed" when there are no binaries (the caller
 * skips its PostgreSQL variants), or the failure and the server's log. */
int	pgtmp_start(struct pgtmp *, const char *what);

/* pgtmp_start, and the server also listens on TCP, on 127.0.0.1 at a
 * port that was free (pt_port, which names the socket too): for tests
 * of what only TCP connections have (keepalives). */
int	pgtmp_start_tcp(struct pgtmp *, const char *what);

/* pgtmp_start_tcp, listening on addr (an address of this network
 * namespace) instead of 127.0.0.1, and taking TCP clients from any
 * address without a password: for tests with several hosts (network
 * namespaces). pgtmp_newdb's URLs are then
 * postgresql://sluice@ADDR:PORT/NAME. */
int	pgtmp_start_on(struct pgtmp *, const char *what, const char *addr);

/* Stop the server at once (pg_ctl stop -m immediate), keeping its
 * folder and data, as a crash of the database would: 0, or -1 with the
 * reason on stderr. pgtmp_resume starts it again on the same address
 * and port (0, or -1 with the server's log on stderr). Both are no-ops
 * on a cluster already so. Run from the network namespace pgtmp_start
 * ran in. */
int	pgtmp_pause(struct pgtmp *);
int	pgtmp_resume(struct pgtmp *);

/* A new empty database on the cluster; its connection URL
 * (postgresql:///NAME?host=DIR&port=N&user=sluice) into url. 0, or -1
 * with the reason on stderr. */
int	pgtmp_newdb(struct pgtmp *, char *url, size_t len);

/* Drop every database this process made with pgtmp_newdb (connections
 * to them are ended), so a long suite does not fill the disk: each is a
 * copy of template1, some 8 MB. 0, or -1 with the reason on stderr. */
int	pgtmp_dropdbs(struct pgtmp *);

/* Stop the server at once (pg_ctl stop -m immediate) and remove the
 * folder (kept when STORE_KEEP is set). A stopped or never started
 * cluster is a no-op. When the caller and every process forked from it
 * are gone without it (killed), a watchdog that pgtmp_start left does
 * the same. */
void	pgtmp_stop(struct pgtmp *);

#endif
