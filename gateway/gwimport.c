/* gwimport.c - sluice-gateway --import-wilmer, --export-wilmer and --backfill-embeddings: run sluice-worker for the offline job and wait for it. */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "../common/conf.h"
#include "../common/log.h"
#include "../common/pyfmt.h"
#include "gwconf.h"
#include "gwimport.h"
#include "wenv.h"

/* The child starts with no signal blocked and the default action for
 * the signals a terminal or a supervisor sends. */
static int
spawn_attrs(posix_spawnattr_t *at)
{
	sigset_t	 none, def;

	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGCHLD);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGHUP);
	if (posix_spawnattr_init(at) != 0)
		return -1;
	posix_spawnattr_setsigmask(at, &none);
	posix_spawnattr_setsigdefault(at, &def);
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	return 0;
}

/* Its exit status, or 128 + the signal that killed it. */
static int
wait_worker(pid_t pid, const char *bin)
{
	int	 st;

	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			log_warn("waitpid %s", bin);
			return EX_SOFTWARE;
		}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	log_warnx("%s (pid %d) was killed by signal %d (%s)", bin, (int)pid,
	    WTERMSIG(st), strsignal(WTERMSIG(st)));
	return 128 + WTERMSIG(st);
}

/* Whether user name's file sets encryptUsingApiKey (a file that cannot
 * be read: no; the import reports what it cannot open anyway). */
static bool
encrypts(const struct gw_conf *c, const char *name)
{
	struct conf_user	*u;
	char			 err[CONF_ERRLEN];
	bool			 yes;

	if (conf_user_load(c->c_config_dir, name, &u, err) == -1) {
		log_warnx("%s", err);
		return false;
	}
	yes = pyfmt_truthy(json_object_get(u->u_file.jf_root,
	    "encryptUsingApiKey"));
	conf_user_free(u);
	return yes;
}

/* The job's own arguments: --backfill-embeddings with the endpoint, the
 * configuration and the user whose endpoints folder names it; or the
 * import or export folder with the key files, the user names keys are
 * derived for, and those of them whose discussions are kept encrypted.
 * Returns the number of entries written. */
static size_t
job_args(const struct gw_conf *c, char **argv)
{
	size_t	 n = 0, i;

	if (c->c_copy_from != NULL) {	/* gwcopy.c */
		argv[n++] = "--copy-store";
		argv[n++] = c->c_copy_from;
		argv[n++] = "--copy-to";
		argv[n++] = c->c_copy_to;
		return n;
	}
	if (c->c_backfill_ep != NULL) {
		argv[n++] = "--backfill-embeddings";
		argv[n++] = c->c_backfill_ep;
		argv[n++] = "--config-dir";
		argv[n++] = c->c_config_dir;
		argv[n++] = "--user";
		argv[n++] = c->c_user;
		if (c->c_backfill_batch != NULL) {
			argv[n++] = "--backfill-batch-size";
			argv[n++] = c->c_backfill_batch;
		}
		return n;
	}
	argv[n++] = c->c_import_dir != NULL ? "--import-wilmer" :
	    "--export-wilmer";
	argv[n++] = c->c_import_dir != NULL ? c->c_import_dir : c->c_export_dir;
	for (i = 0; c->c_import_keys[i] != NULL; i++) {
		argv[n++] = "--import-key-file";
		argv[n++] = c->c_import_keys[i];
	}
	for (i = 0; c->c_users[i] != NULL; i++) {
		argv[n++] = "--import-user";
		argv[n++] = c->c_users[i];
	}
	for (i = 0; c->c_users[i] != NULL; i++)	/* keys may come from env */
		if (encrypts(c, c->c_users[i])) {
			argv[n++] = "--import-encrypt-user";
			argv[n++] = c->c_users[i];
		}
	return n;
}

/* The worker's command line: the job, the database, its parent. */
static void
build_argv(const struct gw_conf *c, char *bin, char *ppid, char **argv)
{
	size_t	 n = 0;

	argv[n++] = bin;
	n += job_args(c, argv + n);
	argv[n++] = "--state-dir";
	argv[n++] = c->c_state_dir;
	argv[n++] = "--db-sync";
	argv[n++] = c->c_db_sync_full ? "full" : "normal";
	argv[n++] = "--parent";
	argv[n++] = ppid;
	if (c->c_log_level >= LOG_LVL_DEBUG)
		argv[n++] = "--verbose";
	argv[n] = NULL;
}

int
gwimport_run(const struct gw_conf *c)
{
	posix_spawnattr_t	 at;
	struct wenv		 we;
	pid_t			 pid;
	char			 bin[4096], ppid[16];
	char			*argv[12 + 2 * (GW_MAX_KEYS + 2 * GW_MAX_USERS)];
	int			 r;

	if (gwconf_worker_path(c, bin, sizeof(bin)) == -1)
		return EX_UNAVAILABLE;
	if (spawn_attrs(&at) == -1) {
		log_warnx("posix_spawnattr_init failed");
		return EX_UNAVAILABLE;
	}
	snprintf(ppid, sizeof(ppid), "%d", (int)getpid());
	build_argv(c, bin, ppid, argv);
	wenv_build(&we, c->c_store_url);
	r = posix_spawn(&pid, bin, NULL, &at, argv, we.we_env);
	wenv_free(&we);
	posix_spawnattr_destroy(&at);
	if (r != 0) {
		errno = r;
		log_warn("cannot run %s", bin);
		return EX_UNAVAILABLE;
	}
	return wait_worker(pid, bin);
}
