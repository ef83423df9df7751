/* netlab.h - integration tests: hosts of a small network for a cluster test, as network namespaces on a bridge or, without the rights, as loopback addresses; removed afterwards. */
#ifndef SLUICE_IT_NETLAB_H
#define SLUICE_IT_NETLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The hosts: the test's own (the mock, HAProxy), the database and two
 * gateway nodes. */
enum nl_host { NL_HOST, NL_DB, NL_A, NL_B, NL_NHOSTS };

struct netlab {
	bool	 nl_ns;			/* namespaces; false: loopback */
	char	 nl_tag[16];		/* "slc<pid>": names it makes */
	char	 nl_addr[NL_NHOSTS][24];	/* each host's address */
	int	 nl_root;		/* the test's own namespace, or -1 */
	char	 nl_dir[64];		/* its folder: what to remove */
	char	 nl_why[256];		/* why loopback, when it is */
};

/* Make the network: a bridge in the test's namespace (NL_HOST's
 * address) and a namespace on it for each other host, when the test
 * may (root, and every `ip` command works); else loopback addresses
 * 127.0.0.1 to .4, said loudly on stderr with the reason. Leaves a
 * watchdog that kills every process netlab_mark names, removes the
 * namespaces, the bridge and the folders of netlab_own once the
 * caller and its forks are gone (killed by a timeout, say). Fails the
 * test when not even the folder can be made. */
void	 netlab_up(struct netlab *);

/* Undo netlab_up now: the same as its watchdog does. */
void	 netlab_down(struct netlab *);

/* The calling thread's network namespace becomes host's, so the
 * processes it forks next live there (a no-op on loopback); back to
 * the test's own with NL_HOST. Fails the test when it cannot. */
void	 netlab_enter(struct netlab *, enum nl_host);

/* "SLUICE_NETLAB=<tag>-<host>": put it in the environment of each
 * process started for host, so netlab_pids finds it and the cleanup
 * kills it. Static storage, one per host. */
const char	*netlab_mark(const struct netlab *, enum nl_host);

/* Pids of the live processes whose environment holds host's mark, at
 * most max; their count. */
size_t	 netlab_pids(const struct netlab *, enum nl_host, pid_t *,
	    size_t max);

/* Cut host's cable (its veth end on the bridge goes down) or plug it
 * in again, as a machine that vanishes from the network would: its
 * processes live on, and no packet comes or goes. 0, or -1 (always on
 * loopback, where there is no cable). */
int	 netlab_cable(const struct netlab *, enum nl_host, bool up);

/* A folder (made by the test) to remove at the end however it ends. */
void	 netlab_own(struct netlab *, const char *dir);

#endif
