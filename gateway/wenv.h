/* wenv.h - the environment a worker starts with: the gateway's, less what is the gateway's alone, plus the store's URL. */
#ifndef SLUICE_WENV_H
#define SLUICE_WENV_H

#include "../common/pgurl.h"

/* The variable that tells a worker where the shared database is (the
 * "store" setting's URL). It travels in the environment, which only
 * the worker's own user can read (/proc/PID/environ is mode 0400),
 * never on its command line, which everyone can. */
#define WENV_STORE	PGURL_ENV

struct wenv {
	char	**we_env;	/* NULL-ended, for posix_spawn */
	char	 *we_store;	/* WENV_STORE=url, or NULL (a secret) */
};

/* Build the environment for a worker from environ: without systemd's
 * variables (NOTIFY_SOCKET, LISTEN_FDS, ...: only the gateway talks to
 * systemd) and without any inherited WENV_STORE, with WENV_STORE=url
 * when url is not NULL. The strings are environ's but for we_store;
 * free with wenv_free once the worker is spawned. */
void	wenv_build(struct wenv *, const char *store_url);
void	wenv_free(struct wenv *);

#endif
