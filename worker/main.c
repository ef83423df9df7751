/* main.c - sluice-worker: started by the gateway, serves one request at a time on fd 3. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sysexits.h>
#include <unistd.h>

#include "../common/log.h"
#include "../common/logfile.h"
#include "../common/pgurl.h"
#include "../common/xmem.h"
#include "fault.h"
#include "import/copystore.h"
#include "import/export.h"
#include "import/import.h"
#include "memory/vecbackfill.h"
#include "llm/transport.h"
#include "loop/wloop.h"
#include "loop/wloop_store.h"

#define CHAN_FD		3
#define IMPORT_MAX	32	/* key files, user names */

struct wargs {
	const char	*wa_confdir;
	const char	*wa_user;
	unsigned	 wa_slot;
	unsigned	 wa_max_requests;
	pid_t		 wa_parent;
	int		 wa_level;
	const char	*wa_state_dir;	/* the database's folder */
	char		*wa_store;	/* where the database is (store_where) */
	bool		 wa_sync_full;	/* --db-sync full */
	const char	*wa_log_file;	/* --log-file PATH */
	const char	*wa_import;	/* --import-wilmer DIR */
	const char	*wa_export;	/* --export-wilmer DIR */
	const char	*wa_backfill;	/* --backfill-embeddings ENDPOINT */
	long		 wa_batch;	/* --backfill-batch-size N */
	const char	*wa_keys[IMPORT_MAX];	/* --import-key-file, each */
	size_t		 wa_nkeys;
	const char	*wa_users[IMPORT_MAX];	/* --import-user, each */
	size_t		 wa_nusers;
	const char	*wa_sealers[IMPORT_MAX];	/* --import-encrypt-user */
	size_t		 wa_nsealers;
	struct cache_conf wa_cache;	/* --cache-max, -ttl-s, -temp */
	const char	*wa_copy_from;	/* --copy-store FROM */
	const char	*wa_copy_to;	/* --copy-to TO */
};

static const struct option longopts[] = {
	{ "config-dir", required_argument, NULL, 'c' },
	{ "user", required_argument, NULL, 'u' },
	{ "slot", required_argument, NULL, 's' },
	{ "max-requests", required_argument, NULL, 'm' },
	{ "parent", required_argument, NULL, 'p' },
	{ "state-dir", required_argument, NULL, 'd' },
	{ "db-sync", required_argument, NULL, 'y' },
	{ "import-wilmer", required_argument, NULL, 'i' },
	{ "export-wilmer", required_argument, NULL, 'x' },
	{ "backfill-embeddings", required_argument, NULL, 'b' },
	{ "backfill-batch-size", required_argument, NULL, 'B' },
	{ "import-key-file", required_argument, NULL, 'K' },
	{ "import-user", required_argument, NULL, 'U' },
	{ "import-encrypt-user", required_argument, NULL, 'X' },
	{ "log-file", required_argument, NULL, 'L' },
	{ "cache-max", required_argument, NULL, 'M' },
	{ "cache-ttl-s", required_argument, NULL, 'T' },
	{ "cache-temp", required_argument, NULL, 'E' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "copy-store", required_argument, NULL, 'F' },
	{ "copy-to", required_argument, NULL, 'O' },
	{ NULL, 0, NULL, 0 },
};

/* The response cache's settings; on with --cache-max (at least 1). */
static int
cache_arg(struct cache_conf *c, int ch, const char *v)
{
	char	*end;

	errno = 0;
	switch (ch) {
	case 'M':
		c->kc_max = strtol(v, &end, 10);
		c->kc_on = c->kc_max >= 1;
		break;
	case 'T':
		c->kc_ttl_ms = (int64_t)strtoll(v, &end, 10) * 1000;
		break;
	default:
		c->kc_temp = strtod(v, &end);
		break;
	}
	return errno != 0 || end == v || *end != '\0' ? -1 : 0;
}

static int
parse_args(struct wargs *a, int argc, char **argv)
{
	int	 ch;

	memset(a, 0, sizeof(*a));
	a->wa_level = LOG_LVL_INFO;
	a->wa_batch = VECBACKFILL_BATCH;
	while ((ch = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': a->wa_confdir = optarg; break;
		case 'u': a->wa_user = optarg; break;
		case 's': a->wa_slot = (unsigned)strtoul(optarg, NULL, 10);
			  break;
		case 'm': a->wa_max_requests = (unsigned)strtoul(optarg, NULL,
			      10);
			  break;
		case 'p': a->wa_parent = (pid_t)strtol(optarg, NULL, 10); break;
		case 'd': a->wa_state_dir = optarg; break;
		case 'y': if (strcmp(optarg, "full") == 0)
				a->wa_sync_full = true;
			  else if (strcmp(optarg, "normal") != 0)
				return -1;
			  break;
		case 'v': a->wa_level = LOG_LVL_DEBUG; break;
		case 'i': a->wa_import = optarg; break;
		case 'x': a->wa_export = optarg; break;
		case 'b': a->wa_backfill = optarg; break;
		case 'B': if ((a->wa_batch = strtol(optarg, NULL, 10)) < 1)
				return -1;
			  break;
		case 'L': a->wa_log_file = optarg; break;
		case 'K': if (a->wa_nkeys == IMPORT_MAX)
				return -1;
			  a->wa_keys[a->wa_nkeys++] = optarg;
			  break;
		case 'U': if (a->wa_nusers == IMPORT_MAX)
				return -1;
			  a->wa_users[a->wa_nusers++] = optarg;
			  break;
		case 'X': if (a->wa_nsealers == IMPORT_MAX)
				return -1;
			  a->wa_sealers[a->wa_nsealers++] = optarg;
			  break;
		case 'F': a->wa_copy_from = optarg; break;
		case 'O': a->wa_copy_to = optarg; break;
		case 'M': case 'T': case 'E':
			  if (cache_arg(&a->wa_cache, ch, optarg) == -1)
				  return -1;
			  break;
		default: return -1;
		}
	}
	if (a->wa_copy_from != NULL || a->wa_copy_to != NULL)
		return a->wa_copy_from != NULL && a->wa_copy_to != NULL ? 0 : -1;
	if (a->wa_backfill != NULL)
		return a->wa_state_dir != NULL && a->wa_confdir != NULL &&
		    a->wa_user != NULL ? 0 : -1;
	if (a->wa_import != NULL || a->wa_export != NULL)
		return a->wa_state_dir != NULL && (a->wa_import == NULL ||
		    a->wa_export == NULL) ? 0 : -1;
	return a->wa_confdir != NULL && a->wa_user != NULL ? 0 : -1;
}

/*
 * Where the database is: the gateway's "store" URL when it gave one
 * (PGURL_ENV: the environment, which only our own user can
 * read, where a command line is everyone's), else SQLite in the state
 * folder; NULL without either. The variable leaves our environment at
 * once, so no tool's child process inherits a database password.
 * Caller frees with xfree_secret.
 */
static char *
store_where(const char *state_dir)
{
	const char	*url = getenv(PGURL_ENV);
	char		*where = NULL;

	if (url != NULL && *url != '\0')
		where = xstrdup(url);
	else if (state_dir != NULL)
		where = xasprintf("%s/sluice.db", state_dir);
	if (url != NULL)
		unsetenv(PGURL_ENV);
	return where;
}

/* Die with the gateway even if it is killed with SIGKILL. */
static void
tie_to_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		log_warn("prctl(PR_SET_PDEATHSIG)");
	if (parent > 0 && getppid() != parent)
		fatalx_code(0, "gateway already gone");
}

/* sluice-gateway --import-wilmer and --export-wilmer run us this way:
 * no channel, no request; the report on stdout (see import.h and
 * export.h). */
static int
run_import(const struct wargs *a)
{
	struct import_opts	 o = { a->wa_import != NULL ? a->wa_import :
				    a->wa_export, a->wa_store,
				    a->wa_sync_full, a->wa_keys, a->wa_nkeys,
				    a->wa_users, a->wa_nusers, a->wa_sealers,
				    a->wa_nsealers };

	log_procinit(a->wa_import != NULL ? "worker/import" : "worker/export");
	tie_to_parent(a->wa_parent);
	return a->wa_import != NULL ? import_run(&o) : export_run(&o);
}

/* sluice-gateway --backfill-embeddings runs us this way (A9.6). */
static int
run_backfill(const struct wargs *a)
{
	struct backfill_opts	 o = { a->wa_confdir, a->wa_user,
				    a->wa_backfill, a->wa_store,
				    a->wa_sync_full, a->wa_batch };
	int			 r;

	log_procinit("worker/backfill");
	tie_to_parent(a->wa_parent);
	if (transport_init() == -1)
		fatalx("libcurl initialisation failed");
	r = vecbackfill_run(&o);
	transport_cleanup();
	return r;
}

/* sluice-gateway --copy-store runs us this way (copystore.h): the two
 * stores are its arguments, not the state folder's. */
static int
run_copy(const struct wargs *a)
{
	log_procinit("worker/copy");
	tie_to_parent(a->wa_parent);
	return copystore_run(a->wa_copy_from, a->wa_copy_to);
}

/* The worker proper: requests from the gateway on CHAN_FD. */
static int
serve(const struct wargs *a)
{
	struct wctx	 wc;
	char		 role[32];
	int		 r;

	snprintf(role, sizeof(role), "worker/%u", a->wa_slot);
	log_procinit(role);
	memset(&wc, 0, sizeof(wc));
	if (wloop_init(&wc, CHAN_FD) == -1) {
		log_warnx("fd %d is not a socket: sluice-worker is started by "
		    "sluice-gateway", CHAN_FD);
		return EX_USAGE;
	}
	tie_to_parent(a->wa_parent);
	/* Terminal signals belong to the gateway, which stops us cleanly. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	fault_init(CHAN_FD);
	fault_at_start();
	if (transport_init() == -1)
		fatalx("libcurl initialisation failed");
	wc.wc_slot = a->wa_slot;
	wc.wc_confdir = a->wa_confdir;
	wc.wc_user = a->wa_user;
	wc.wc_max_requests = a->wa_max_requests;
	wc.wc_store_at = a->wa_store;
	wc.wc_turns.tu_pg = a->wa_store != NULL && pgurl_is(a->wa_store);
	wc.wc_db_sync_full = a->wa_sync_full;
	wc.wc_cache = a->wa_cache;
	wc.wc_faults = (struct wloop_faults){ fault_on_request,
	    fault_version_skew(), fault_after_ms() };
	r = wloop_run(&wc);
	wloop_store_close(&wc);
	wloop_free(&wc);
	transport_cleanup();
	return r;
}

int
main(int argc, char **argv)
{
	struct wargs	 a;
	int		 r;

	log_init(LOG_LVL_INFO);
	log_procinit("worker");
	if (parse_args(&a, argc, argv) == -1) {
		fprintf(stderr, "sluice-worker is started by sluice-gateway; "
		    "it is not meant to be run by hand\n");
		return EX_USAGE;
	}
	log_init(a.wa_level);
	a.wa_store = store_where(a.wa_state_dir);
	if (a.wa_log_file != NULL && logfile_open(a.wa_log_file) == -1)
		log_warn("cannot write the log file %s", a.wa_log_file);
	if (a.wa_import != NULL || a.wa_export != NULL)
		r = run_import(&a);
	else if (a.wa_backfill != NULL)
		r = run_backfill(&a);
	else if (a.wa_copy_from != NULL)
		r = run_copy(&a);
	else
		r = serve(&a);
	xfree_secret(a.wa_store);
	return r;
}
