/* gwconf.c - gateway settings: defaults, sluice.json, user "sluice" section, command line. */
#include <arpa/inet.h>
#include <getopt.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../common/conf.h"
#include "../common/log.h"
#include "../common/names.h"
#include "../common/xmem.h"
#include "gwconf.h"
#include "origin.h"
#include "peerurl.h"
#include "storeconf.h"

enum stype { S_STR, S_UINT, S_MS, S_SIZE, S_LIST, S_LEVEL, S_BOOL, S_CLEVEL,
    S_DBSYNC, S_CACHE, S_STORE };

/* Whether entry may go in a list setting: 0, or -1 with the reason. */
typedef int	(*entry_fn)(const char *entry, char *why, size_t len);

/* One setting: its key in sluice.json, its type and where it lives. A
 * command-line flag that sets the same thing wins over the files. */
struct setting {
	const char	*s_key;
	enum stype	 s_type;
	size_t		 s_off;
	size_t		 s_width;	/* S_UINT / S_SIZE: bytes; S_LIST:
					   entries at most */
	entry_fn	 s_entry;	/* S_LIST */
};

#define SET(key, type, mem)						\
	{ key, type, offsetof(struct gw_conf, mem),			\
	    sizeof(((struct gw_conf *)0)->mem), NULL }

/* A NULL-terminated char *mem[N + 1]: at most N entries. */
#define SET_LIST(key, mem, check)					\
	{ key, S_LIST, offsetof(struct gw_conf, mem),			\
	    sizeof(((struct gw_conf *)0)->mem) / sizeof(char *) - 1, check }

static int	key_entry(const char *, char *, size_t);

static const struct setting settings[] = {
	SET("listen",			S_STR,	c_listen),
	SET("state_dir",		S_STR,	c_state_dir),
	SET("store",			S_STORE, c_store_url),
	SET("db_synchronous",		S_DBSYNC, c_db_sync_full),
	SET("log_level",		S_LEVEL, c_log_level),
	SET("access_log",		S_BOOL,	c_access_log),
	SET_LIST("api_keys",		c_api_keys, key_entry),
	SET_LIST("admin_api_keys",	c_admin_keys, key_entry),
	SET("allow_unauthenticated_remote", S_BOOL, c_allow_open_remote),
	SET_LIST("allowed_hosts",	c_allowed_hosts,
	    origin_check_host_entry),
	SET_LIST("allowed_origins",	c_allowed_origins,
	    origin_check_origin_entry),
	SET("request_timeout_s",	S_MS,	c_request_timeout_ms),
	SET("stream_heartbeat_s",	S_MS,	c_stream_heartbeat_ms),
	SET("concurrency",		S_UINT,	c_concurrency),
	SET("concurrency_timeout_s",	S_MS,	c_concurrency_timeout_ms),
	SET("concurrency_level",	S_CLEVEL, c_concurrency_level),
	SET("min_workers",		S_UINT,	c_sup.min_workers),
	SET("max_workers",		S_UINT,	c_sup.max_workers),
	SET("max_requests",		S_UINT,	c_sup.max_requests),
	SET("max_requests_jitter",	S_UINT,	c_sup.max_requests_jitter),
	SET("queue_max",		S_UINT,	c_sup.queue_max),
	SET("queue_timeout_s",		S_MS,	c_sup.queue_timeout_ms),
	SET("spawn_timeout_s",		S_MS,	c_sup.spawn_timeout_ms),
	SET("hang_timeout_s",		S_MS,	c_sup.hang_timeout_ms),
	SET("cancel_grace_s",		S_MS,	c_sup.cancel_grace_ms),
	SET("kill_grace_s",		S_MS,	c_sup.kill_grace_ms),
	SET("idle_timeout_s",		S_MS,	c_sup.idle_timeout_ms),
	SET("drain_timeout_s",		S_MS,	c_sup.drain_timeout_ms),
	SET("max_body_bytes",		S_SIZE,	c_http.max_body),
	SET("max_header_bytes",		S_SIZE,	c_http.max_header_bytes),
	SET("max_headers",		S_SIZE,	c_http.max_headers),
	SET("max_url_bytes",		S_SIZE,	c_http.max_url),
	SET("header_timeout_s",		S_MS,	c_http.header_timeout_ms),
	SET("body_timeout_s",		S_MS,	c_http.body_timeout_ms),
	SET("keepalive_timeout_s",	S_MS,	c_http.keepalive_timeout_ms),
	SET("max_connections",		S_UINT,	c_http.max_conns),
	SET("max_connections_per_ip",	S_UINT,	c_http.max_conns_per_ip),
	SET("cache",			S_CACHE, c_cache),
	SET("node_name",		S_STR,	c_node_name),
	SET_LIST("peers",		c_peers, peerurl_check_entry),
};
#define NSETTINGS	(sizeof(settings) / sizeof(settings[0]))

/* Which settings the command line gave (bit per settings[] index). */
static uint64_t	 cli_set;

static int
setting_index(const char *key)
{
	size_t	 i;

	for (i = 0; i < NSETTINGS; i++)
		if (strcmp(settings[i].s_key, key) == 0)
			return (int)i;
	return -1;
}

static void
defaults(struct gw_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->c_config_dir = xstrdup("configs");
	c->c_listen = xstrdup("127.0.0.1:5050");
	c->c_state_dir = xstrdup("state");
	c->c_log_level = LOG_LVL_INFO;
	c->c_access_log = true;
	c->c_request_timeout_ms = 3600 * 1000;
	c->c_stream_heartbeat_ms = 1000;
	c->c_concurrency_timeout_ms = 900 * 1000;
	c->c_concurrency_level = GW_CL_REQUEST;
	c->c_cache = (struct gw_cache){ false, 1000, 60, 0.0 };
	http_limits_default(&c->c_http);
	sup_conf_default(&c->c_sup);
	cli_set = 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
"usage: sluice-gateway [options] [config-dir [user]]\n"
"  --config-dir DIR   WilmerAI-layout config folder (default ./configs)\n"
"  --user NAME        user whose workflows run (default: Users/_current-user.json);\n"
"                     repeat for several users: the model field picks one\n"
"  --listen ADDR:PORT address to serve (default 127.0.0.1:5050)\n"
"  --port PORT        port, keeping the address of --listen\n"
"  --workers N        run exactly N workers (min_workers = max_workers = N)\n"
"  --state-dir DIR    database and runtime files (default ./state)\n"
"  --store URL        the shared database on PostgreSQL (postgresql://...;\n"
"                     no password here: PGPASSWORD or PGPASSFILE)\n"
"  --worker-bin PATH  worker binary (default: sluice-worker beside this one)\n"
"  --concurrency N    at most N requests (or backend calls) at once; 0 = no limit\n"
"  --concurrency-timeout S  longest wait for a turn, seconds (default 900)\n"
"  --concurrency-level wilmer|endpoint  gate whole requests (default) or\n"
"                     each endpoint's backend calls\n"
"  --allowed-host HOST  serve requests whose Host names HOST (repeatable)\n"
"  --allowed-origin ORIGIN  let web pages from ORIGIN call (repeatable)\n"
"  --check-config     load and check every configuration file, then exit\n"
"  --import-wilmer DIR  import a WilmerAI DiscussionIds folder (or one\n"
"                     discussion's folder) into the database, then exit\n"
"  --import-key-file F  the API key (first line of F) that opens the\n"
"                     discussions WilmerAI encrypted (repeatable)\n"
"  --export-wilmer DIR  write the database's discussions into DIR in\n"
"                     WilmerAI's DiscussionIds layout, then exit\n"
"  --export-key-file F  the API key that opens encrypted discussions and\n"
"                     encrypts their files (repeatable; same as\n"
"                     --import-key-file)\n"
"  --backfill-embeddings ENDPOINT  embed every vector memory that has no\n"
"                     vector by ENDPOINT's model, then exit\n"
"  --backfill-batch-size N  texts a request for it (default 32)\n"
"  --copy-store FROM TO  copy a store's rows into another and check them,\n"
"                     then exit; each a SQLite file, a state folder or a\n"
"                     postgresql:// URL (no password: PGPASSWORD, ~/.pgpass)\n"
"  -v, --verbose      debug logging\n"
"  --version, --help\n"
"WilmerAI's --ConfigDirectory and --User are accepted as aliases, and\n"
"its --PublicDirectory, --LoggingDirectory, --DiscussionDirectory,\n"
"--UserLevelSqlLiteDirectory and --file-logging (docs/configuration.md).\n"
"Settings files: <config-dir>/sluice.json, then the \"sluice\" object of\n"
"the user file; command-line options win. See docs/configuration.md.\n");
}

static void
replace(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* --port keeps the host of the current listen address. */
static void
set_port(struct gw_conf *c, const char *port)
{
	char	*colon = strrchr(c->c_listen, ':');
	char	*host = colon ? xstrndup(c->c_listen,
		    (size_t)(colon - c->c_listen)) : xstrdup(c->c_listen);

	free(c->c_listen);
	c->c_listen = xasprintf("%s:%s", host, port);
	free(host);
}

/* WilmerAI's --listen takes a bare address; ours takes addr:port. */
static void
set_listen(struct gw_conf *c, const char *v)
{
	const char	*colon = strrchr(v, ':');
	const char	*oldport = strrchr(c->c_listen, ':');

	if (colon != NULL && (v[0] != '[' || colon > strchr(v, ']')))
		replace(&c->c_listen, v);
	else {
		char	*n = xasprintf("%s:%s", v, oldport ? oldport + 1 : "5050");

		free(c->c_listen);
		c->c_listen = n;
	}
}

static int
parse_uint(const char *v, unsigned *out)
{
	char		*end;
	unsigned long	 n = strtoul(v, &end, 10);

	if (*v == '\0' || *end != '\0' || n > 4096)
		return -1;
	*out = (unsigned)n;
	return 0;
}

enum { O_CONFIG = 256, O_USER, O_LISTEN, O_PORT, O_WORKERS, O_STATE,
    O_WBIN, O_CHECK, O_VERSION, O_HELP, O_CONC, O_CONC_TO, O_CONC_LEVEL,
    O_IMPORT, O_IMPORT_KEY, O_AHOST, O_AORIGIN, O_PUBLIC, O_LOGDIR,
    O_DISCDIR, O_SQLDIR, O_FILELOG, O_EXPORT, O_BACKFILL, O_BATCH,
    O_STORE };
enum { O_COPY = 512 };

static const struct option longopts[] = {
	{ "config-dir", required_argument, NULL, O_CONFIG },
	{ "ConfigDirectory", required_argument, NULL, O_CONFIG },
	{ "user", required_argument, NULL, O_USER },
	{ "User", required_argument, NULL, O_USER },
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "port", required_argument, NULL, O_PORT },
	{ "workers", required_argument, NULL, O_WORKERS },
	{ "state-dir", required_argument, NULL, O_STATE },
	{ "store", required_argument, NULL, O_STORE },
	{ "worker-bin", required_argument, NULL, O_WBIN },
	{ "check-config", no_argument, NULL, O_CHECK },
	{ "import-wilmer", required_argument, NULL, O_IMPORT },
	{ "import-key-file", required_argument, NULL, O_IMPORT_KEY },
	{ "export-wilmer", required_argument, NULL, O_EXPORT },
	{ "export-key-file", required_argument, NULL, O_IMPORT_KEY },
	{ "backfill-embeddings", required_argument, NULL, O_BACKFILL },
	{ "backfill-batch-size", required_argument, NULL, O_BATCH },
	{ "copy-store", required_argument, NULL, O_COPY },
	{ "concurrency", required_argument, NULL, O_CONC },
	{ "concurrency-timeout", required_argument, NULL, O_CONC_TO },
	{ "concurrency-level", required_argument, NULL, O_CONC_LEVEL },
	{ "allowed-host", required_argument, NULL, O_AHOST },
	{ "allowed-origin", required_argument, NULL, O_AORIGIN },
	{ "PublicDirectory", required_argument, NULL, O_PUBLIC },
	{ "LoggingDirectory", required_argument, NULL, O_LOGDIR },
	{ "DiscussionDirectory", required_argument, NULL, O_DISCDIR },
	{ "UserLevelSqlLiteDirectory", required_argument, NULL, O_SQLDIR },
	{ "file-logging", no_argument, NULL, O_FILELOG },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, O_VERSION },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Append a copy of v to the NULL-ended list of at most max entries
 * (list has room for max + 1). Returns 0, or -1 when it is full. */
static int
list_push(char **list, size_t max, const char *v)
{
	size_t	 n = 0;

	while (list[n] != NULL)
		n++;
	if (n == max)
		return -1;
	list[n] = xstrdup(v);
	return 0;
}

/* --user is repeatable: more than one serves several users. */
static int
add_user(struct gw_conf *c, const char *name)
{
	if (list_push(c->c_users, GW_MAX_USERS, name) == -1) {
		fprintf(stderr, "sluice-gateway: at most %d users\n",
		    GW_MAX_USERS);
		return -1;
	}
	c->c_user = c->c_users[0];
	return 0;
}

/* "wilmer" is WilmerAI's name for the request gate; "request" says it
 * plainly. */
static int
parse_clevel(const char *v, int *out)
{
	if (strcasecmp(v, "wilmer") == 0 || strcasecmp(v, "request") == 0)
		*out = GW_CL_REQUEST;
	else if (strcasecmp(v, "endpoint") == 0)
		*out = GW_CL_ENDPOINT;
	else
		return -1;
	return 0;
}

/* The concurrency flags, each marking its setting as given. */
static int
apply_conc(struct gw_conf *c, int ch, const char *arg)
{
	char	*end;
	double	 d;

	if (ch == O_CONC) {
		if (parse_uint(arg, &c->c_concurrency) == -1) {
			fprintf(stderr, "sluice-gateway: --concurrency needs a "
			    "number from 0 to 4096\n");
			return -1;
		}
		cli_set |= 1ull << setting_index("concurrency");
	} else if (ch == O_CONC_TO) {
		d = strtod(arg, &end);
		if (*arg == '\0' || *end != '\0' || !(d > 0 && d <= 1e9)) {
			fprintf(stderr, "sluice-gateway: --concurrency-timeout "
			    "needs a positive number of seconds\n");
			return -1;
		}
		c->c_concurrency_timeout_ms = (uint64_t)(d * 1000);
		cli_set |= 1ull << setting_index("concurrency_timeout_s");
	} else {
		if (parse_clevel(arg, &c->c_concurrency_level) == -1) {
			fprintf(stderr, "sluice-gateway: --concurrency-level "
			    "is wilmer (or request) or endpoint\n");
			return -1;
		}
		cli_set |= 1ull << setting_index("concurrency_level");
	}
	return 0;
}

/* Free a list setting's entries, wiping them (some are keys). */
static void
list_clear(char **list)
{
	size_t	 i;

	for (i = 0; list[i] != NULL; i++) {
		xfree_secret(list[i]);
		list[i] = NULL;
	}
}

/* --import-key-file (or --export-key-file) is repeatable: one API key
 * each. */
static int
add_key_file(struct gw_conf *c, const char *path)
{
	if (list_push(c->c_import_keys, GW_MAX_KEYS, path) == -1) {
		fprintf(stderr, "sluice-gateway: at most %d key files\n",
		    GW_MAX_KEYS);
		return -1;
	}
	return 0;
}

/* --allowed-host, --allowed-origin: each adds an entry; once one is
 * given, the files' list is not read. */
static int
add_entry(struct gw_conf *c, const char *key, const char *flag,
    const char *arg)
{
	const struct setting	*s = &settings[setting_index(key)];
	char			**list = (char **)((char *)c + s->s_off);
	char			  why[CONF_ERRLEN];

	if (s->s_entry(arg, why, sizeof(why)) == -1) {
		fprintf(stderr, "sluice-gateway: %s: %s\n", flag, why);
		return -1;
	}
	if (list_push(list, s->s_width, arg) == -1) {
		fprintf(stderr, "sluice-gateway: %s: at most %zu\n", flag,
		    s->s_width);
		return -1;
	}
	cli_set |= 1ull << setting_index(key);
	return 0;
}

static int
apply_opt(struct gw_conf *c, int ch, const char *arg)
{
	unsigned	 n;

	switch (ch) {
	case O_CONFIG:	replace(&c->c_config_dir, arg);
			c->c_wilmer.w_config_given = true; return 0;
	case O_PUBLIC:	wflags_set(&c->c_wilmer.w_public, arg, true); return 0;
	case O_LOGDIR:	wflags_set(&c->c_wilmer.w_logdir, arg, false); return 0;
	case O_DISCDIR:	wflags_set(&c->c_wilmer.w_discussions, arg, true);
			return 0;
	case O_SQLDIR:	wflags_set(&c->c_wilmer.w_sqlite, arg, true); return 0;
	case O_FILELOG:	c->c_wilmer.w_file_logging = true; return 0;
	case O_USER:	return add_user(c, arg);
	case O_STATE:	replace(&c->c_state_dir, arg);
			cli_set |= 1ull << setting_index("state_dir"); return 0;
	case O_STORE:	cli_set |= 1ull << setting_index("store");
			return storeconf_flag(&c->c_store_url, arg);
	case O_WBIN:	replace(&c->c_worker_bin, arg); return 0;
	case O_CONC: case O_CONC_TO: case O_CONC_LEVEL:
			return apply_conc(c, ch, arg);
	case O_CHECK:	c->c_check_only = true; return 0;
	case O_IMPORT:	replace(&c->c_import_dir, arg); return 0;
	case O_EXPORT:	replace(&c->c_export_dir, arg); return 0;
	case O_BACKFILL: replace(&c->c_backfill_ep, arg); return 0;
	case O_COPY:	replace(&c->c_copy_from, arg); return 0;
	case O_BATCH:
		if (parse_uint(arg, &n) == -1 || n == 0) {
			fprintf(stderr, "sluice-gateway: --backfill-batch-size "
			    "needs a number of at least 1\n");
			return -1;
		}
		replace(&c->c_backfill_batch, arg);
		return 0;
	case O_IMPORT_KEY: return add_key_file(c, arg);
	case O_AHOST:	return add_entry(c, "allowed_hosts", "--allowed-host",
			    arg);
	case O_AORIGIN:	return add_entry(c, "allowed_origins",
			    "--allowed-origin", arg);
	case 'v':	c->c_log_level = LOG_LVL_DEBUG;
			cli_set |= 1ull << setting_index("log_level"); return 0;
	case O_LISTEN:	set_listen(c, arg);
			cli_set |= 1ull << setting_index("listen"); return 0;
	case O_PORT:	set_port(c, arg);
			cli_set |= 1ull << setting_index("listen"); return 0;
	case O_WORKERS:
		if (parse_uint(arg, &n) == -1 || n == 0) {
			fprintf(stderr, "sluice-gateway: --workers needs a "
			    "number from 1 to 4096\n");
			return -1;
		}
		c->c_sup.min_workers = c->c_sup.max_workers = n;
		cli_set |= 1ull << setting_index("min_workers");
		cli_set |= 1ull << setting_index("max_workers");
		return 0;
	}
	return -1;
}

/* state_dir from --PublicDirectory: a default sluice.json may
 * change. */
static void
public_state(struct gw_conf *c, const char *dir)
{
	if (!(cli_set & (1ull << setting_index("state_dir"))))
		replace(&c->c_state_dir, dir);
}

/* WilmerAI's folder flags after the command line: its SQLite folder is
 * our state_dir as --state-dir is (which wins), its Public folder
 * gives defaults. */
static void
wflag_dirs(struct gw_conf *c)
{
	int	 st = setting_index("state_dir");

	wflags_defaults(c, public_state);
	if (c->c_wilmer.w_sqlite != NULL && !(cli_set & (1ull << st))) {
		replace(&c->c_state_dir, c->c_wilmer.w_sqlite);
		cli_set |= 1ull << st;
	}
}

int
gwconf_args(struct gw_conf *c, int argc, char **argv)
{
	int	 ch;

	defaults(c);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		if (ch == O_HELP) {
			usage(stdout);
			return 1;
		}
		if (ch == O_VERSION) {
			printf("sluice-gateway %s (build %s, protocol %d)\n",
			    SLUICE_VERSION, SLUICE_BUILD, PROTO_VERSION);
			return 1;
		}
		if (ch == '?' || apply_opt(c, ch, optarg) == -1) {
			usage(stderr);
			return -1;
		}
	}
	if (c->c_copy_from != NULL && optind < argc)	/* --copy-store's TO */
		replace(&c->c_copy_to, argv[optind++]);
	if (c->c_copy_from != NULL && (c->c_copy_to == NULL || optind <
	    argc || c->c_import_dir != NULL || c->c_export_dir != NULL ||
	    c->c_backfill_ep != NULL)) {
		fprintf(stderr, "sluice-gateway: --copy-store takes two "
		    "arguments, FROM and TO, and no other job\n");
		return -1;
	}
	if (optind < argc) {		/* WilmerAI's positional form */
		if (!c->c_wilmer.w_config_given)
			replace(&c->c_config_dir, argv[optind]);
		c->c_wilmer.w_config_given = true;
		optind++;
	}
	if (optind < argc && add_user(c, argv[optind++]) == -1)
		return -1;
	if (optind < argc) {
		fprintf(stderr, "sluice-gateway: unexpected argument '%s'\n",
		    argv[optind]);
		return -1;
	}
	if ((c->c_import_dir != NULL) + (c->c_export_dir != NULL) +
	    (c->c_backfill_ep != NULL) > 1) {
		fprintf(stderr, "sluice-gateway: --import-wilmer, "
		    "--export-wilmer and --backfill-embeddings are separate "
		    "runs: give one\n");
		return -1;
	}
	wflag_dirs(c);
	return 0;
}

/* An API key: never repeated in a message. */
static int
key_entry(const char *key, char *why, size_t len)
{
	if (strlen(key) >= 8)
		return 0;
	snprintf(why, len, "each key must be at least 8 characters long");
	return -1;
}

/* A list setting s from v: strings that s's entry check accepts. The
 * list is replaced only when every entry is good. */
static int
set_list(struct gw_conf *c, const struct setting *s, const struct jfile *jf,
    json_t *v, char err[CONF_ERRLEN])
{
	char	**list = (char **)((char *)c + s->s_off);
	char	  why[CONF_ERRLEN];
	size_t	  i;
	json_t	 *k;

	if (!json_is_array(v) || json_array_size(v) > s->s_width)
		return jfile_err(jf, s->s_key, err, "'%s' must be a list of "
		    "at most %zu strings", s->s_key, s->s_width);
	json_array_foreach(v, i, k) {
		if (!json_is_string(k))
			return jfile_err_elem(jf, v, i, err, "'%s' must be a "
			    "list of strings, not of %s", s->s_key,
			    json_type_desc(k));
		if (s->s_entry(json_string_value(k), why, sizeof(why)) == -1)
			return jfile_err_elem(jf, v, i, err, "'%s': %s",
			    s->s_key, why);
	}
	list_clear(list);
	json_array_foreach(v, i, k)
		list[i] = xstrdup(json_string_value(k));
	return 0;
}

static int
set_level(struct gw_conf *c, const struct jfile *jf, json_t *v,
    char err[CONF_ERRLEN])
{
	static const struct { const char *n; int l; } lv[] = {
		{ "debug", LOG_LVL_DEBUG }, { "info", LOG_LVL_INFO },
		{ "warn", LOG_LVL_WARN }, { "error", LOG_LVL_ERR } };
	size_t	 i;

	for (i = 0; json_is_string(v) && i < 4; i++)
		if (strcasecmp(json_string_value(v), lv[i].n) == 0) {
			c->c_log_level = lv[i].l;
			return 0;
		}
	return jfile_err(jf, "log_level", err,
	    "'log_level' must be one of debug, info, warn, error");
}

static int
set_number(struct gw_conf *c, const struct setting *s, const struct jfile *jf,
    json_t *v, char err[CONF_ERRLEN])
{
	double	 d = json_number_value(v);
	char	*p = (char *)c + s->s_off;

	if (!json_is_number(v) || d < 0 || d > 1e12 ||
	    (s->s_type != S_MS && d != (double)(uint64_t)d))
		return jfile_err(jf, s->s_key, err, "'%s' must be a %s",
		    s->s_key, s->s_type == S_MS ? "number of seconds" :
		    "non-negative integer");
	if (s->s_type == S_MS)
		d *= 1000;
	if (s->s_width == sizeof(uint64_t))
		*(uint64_t *)p = (uint64_t)d;
	else if (d > 4294967295.0)
		return jfile_err(jf, s->s_key, err, "'%s' is too large",
		    s->s_key);
	else
		*(unsigned *)p = (unsigned)d;
	return 0;
}

/* SQLite's synchronous setting for the workers' database: "normal"
 * (safe in WAL mode; a power loss may cost the last commits) or "full". */
static int
set_dbsync(struct gw_conf *c, const struct jfile *jf, json_t *v,
    char err[CONF_ERRLEN])
{
	const char	*s = json_string_value(v);

	if (s != NULL && strcasecmp(s, "normal") == 0)
		c->c_db_sync_full = false;
	else if (s != NULL && strcasecmp(s, "full") == 0)
		c->c_db_sync_full = true;
	else
		return jfile_err(jf, "db_synchronous", err,
		    "'db_synchronous' must be \"normal\" or \"full\"");
	return 0;
}

static const char *const cache_members[] = { "enabled", "max_entries",
    "ttl_minutes", "cacheable_temperature", NULL };

/* cache.<key> of obj, when present: a whole number from 1 to
 * GW_CACHE_MAX, into *out. */
static int
cache_count(const struct jfile *jf, json_t *obj, const char *key,
    unsigned *out, char err[CONF_ERRLEN])
{
	json_t	*v = json_object_get(obj, key);
	double	 d = json_number_value(v);

	if (v == NULL)
		return 0;
	if (!json_is_number(v) || !(d >= 1 && d <= GW_CACHE_MAX) ||
	    d != (double)(unsigned)d)
		return jfile_err_member(jf, obj, key, err, "'cache.%s' must be "
		    "a whole number from 1 to %u", key, GW_CACHE_MAX);
	*out = (unsigned)d;
	return 0;
}

static int
cache_member_check(const struct jfile *jf, json_t *v, char err[CONF_ERRLEN])
{
	const char	*key;
	json_t		*m;
	size_t		 i;

	json_object_foreach(v, key, m) {
		for (i = 0; cache_members[i] != NULL; i++)
			if (strcmp(cache_members[i], key) == 0)
				break;
		if (cache_members[i] == NULL)
			return jfile_err_member(jf, v, key, err, "unknown "
			    "setting 'cache.%s' (known: enabled, max_entries, "
			    "ttl_minutes, cacheable_temperature)", key);
	}
	return 0;
}

/* The "cache" object v, member of settings object parent. Its members
 * override the ones set so far one by one (sluice.json, then the user
 * file); nothing changes on an error. */
static int
set_cache(struct gw_conf *c, const struct jfile *jf, json_t *parent,
    json_t *v, char err[CONF_ERRLEN])
{
	struct gw_cache	 cc = c->c_cache;
	json_t		*m;

	if (!json_is_object(v))
		return jfile_err_member(jf, parent, "cache", err, "'cache' must "
		    "be an object, not %s", json_type_desc(v));
	if (cache_member_check(jf, v, err) == -1)
		return -1;
	if ((m = json_object_get(v, "enabled")) != NULL) {
		if (!json_is_boolean(m))
			return jfile_err_member(jf, v, "enabled", err,
			    "'cache.enabled' must be true or false");
		cc.cc_enabled = json_is_true(m);
	}
	if (cache_count(jf, v, "max_entries", &cc.cc_max_entries, err) == -1 ||
	    cache_count(jf, v, "ttl_minutes", &cc.cc_ttl_min, err) == -1)
		return -1;
	if ((m = json_object_get(v, "cacheable_temperature")) != NULL) {
		if (!json_is_number(m) || !(json_number_value(m) >= 0))
			return jfile_err_member(jf, v, "cacheable_temperature",
			    err, "'cache.cacheable_temperature' must be a "
			    "number, 0 or more");
		cc.cc_temp = json_number_value(m);
	}
	c->c_cache = cc;
	return 0;
}

/* Apply every key of obj (sluice.json or the user's "sluice" object). */
static int
apply_object(struct gw_conf *c, const struct jfile *jf, json_t *obj,
    char err[CONF_ERRLEN])
{
	const char	*key;
	json_t		*v;
	int		 i;

	if (!json_is_object(obj))
		return jfile_err(jf, NULL, err, "settings must be an object");
	json_object_foreach(obj, key, v) {
		if ((i = setting_index(key)) == -1)
			return jfile_err(jf, key, err, "unknown setting '%s' "
			    "(see docs/configuration.md)", key);
		if (cli_set & (1ull << i))
			continue;
		if (settings[i].s_type == S_STR) {
			if (!json_is_string(v))
				return jfile_err(jf, key, err, "'%s' must be "
				    "a string", key);
			replace((char **)((char *)c + settings[i].s_off),
			    json_string_value(v));
		} else if (settings[i].s_type == S_LIST) {
			if (set_list(c, &settings[i], jf, v, err) == -1)
				return -1;
		} else if (settings[i].s_type == S_LEVEL) {
			if (set_level(c, jf, v, err) == -1)
				return -1;
		} else if (settings[i].s_type == S_CLEVEL) {
			if (!json_is_string(v) || parse_clevel(
			    json_string_value(v), &c->c_concurrency_level) == -1)
				return jfile_err(jf, key, err, "'%s' must be "
				    "\"wilmer\" (or \"request\") or \"endpoint\"",
				    key);
		} else if (settings[i].s_type == S_DBSYNC) {
			if (set_dbsync(c, jf, v, err) == -1)
				return -1;
		} else if (settings[i].s_type == S_CACHE) {
			if (set_cache(c, jf, obj, v, err) == -1)
				return -1;
		} else if (settings[i].s_type == S_STORE) {
			if (storeconf_json(&c->c_store_url, jf, obj, v,
			    err) == -1)
				return -1;
		} else if (settings[i].s_type == S_BOOL) {
			if (!json_is_boolean(v))
				return jfile_err(jf, key, err, "'%s' must be "
				    "true or false", key);
			*(bool *)((char *)c + settings[i].s_off) =
			    json_is_true(v);
		} else if (set_number(c, &settings[i], jf, v, err) == -1)
			return -1;
	}
	return 0;
}

static int
resolve_user(struct gw_conf *c, char err[CONF_ERRLEN])
{
	char	 name[NAME_MAX_LEN + 1];
	size_t	 i;

	if (c->c_user == NULL) {
		if (conf_current_user(c->c_config_dir, name, sizeof(name),
		    err) == -1)
			return -1;
		add_user(c, name);
	}
	for (i = 0; c->c_users[i] != NULL; i++)
		if (!name_is_safe(c->c_users[i], strlen(c->c_users[i]))) {
			snprintf(err, CONF_ERRLEN, "invalid user name '%s'",
			    c->c_users[i]);
			return -1;
		}
	return 0;
}

static int
check_sanity(struct gw_conf *c, char err[CONF_ERRLEN])
{
	if (c->c_sup.max_workers == 0)
		c->c_sup.max_workers = 1;
	if (c->c_sup.min_workers > c->c_sup.max_workers) {
		snprintf(err, CONF_ERRLEN, "min_workers (%u) is above "
		    "max_workers (%u)", c->c_sup.min_workers,
		    c->c_sup.max_workers);
		return -1;
	}
	if (c->c_concurrency > 0 && c->c_concurrency_timeout_ms == 0) {
		snprintf(err, CONF_ERRLEN, "concurrency_timeout_s must be "
		    "above 0");
		return -1;
	}
	if (c->c_sup.hang_timeout_ms < 2000) {
		snprintf(err, CONF_ERRLEN, "hang_timeout_s must be at least 2 "
		    "(workers send a heartbeat every second)");
		return -1;
	}
	if (!gwconf_is_loopback(c->c_listen) && c->c_api_keys[0] == NULL &&
	    !c->c_allow_open_remote) {
		snprintf(err, CONF_ERRLEN, "refusing to listen on %s without "
		    "API keys: set \"api_keys\" in sluice.json, listen on "
		    "127.0.0.1, or set \"allow_unauthenticated_remote\": true",
		    c->c_listen);
		return -1;
	}
	return 0;
}

int
gwconf_load(struct gw_conf *c, char err[CONF_ERRLEN])
{
	struct conf_user	*u = NULL;
	struct jfile		 jf;
	char			*path;
	int			 r = -1;

	memset(&jf, 0, sizeof(jf));
	if (resolve_user(c, err) == -1)
		return -1;
	path = xasprintf("%s/sluice.json", c->c_config_dir);
	if (access(path, F_OK) == 0) {
		if (jfile_load(path, &jf, err) == -1 ||
		    apply_object(c, &jf, jf.jf_root, err) == -1)
			goto out;
	}
	if (conf_user_load(c->c_config_dir, c->c_user, &u, err) == -1)
		goto out;
	if (u->u_sluice != NULL &&
	    apply_object(c, &u->u_file, u->u_sluice, err) == -1)
		goto out;
	free(c->c_log_file);
	c->c_log_file = wflags_log_file(c, u);
	r = check_sanity(c, err);
out:
	conf_user_free(u);
	jfile_free(&jf);
	free(path);
	return r;
}

bool
gwconf_is_loopback(const char *addr)
{
	char		 host[64];
	const char	*colon = strrchr(addr, ':');
	size_t		 n = colon ? (size_t)(colon - addr) : strlen(addr);
	struct in_addr	 a4;

	if (n >= sizeof(host))
		return false;
	memcpy(host, addr, n);
	host[n] = '\0';
	if (strcmp(host, "[::1]") == 0 || strcmp(host, "localhost") == 0)
		return true;
	return inet_pton(AF_INET, host, &a4) == 1 &&
	    (ntohl(a4.s_addr) >> 24) == 127;
}

void
gwconf_free(struct gw_conf *c)
{
	size_t	 i;

	free(c->c_config_dir);
	for (i = 0; c->c_users[i] != NULL; i++)
		free(c->c_users[i]);
	free(c->c_listen);
	free(c->c_state_dir);
	xfree_secret(c->c_store_url);
	free(c->c_worker_bin);
	free(c->c_import_dir);
	free(c->c_export_dir);
	free(c->c_backfill_ep);
	free(c->c_backfill_batch);
	free(c->c_copy_from);
	free(c->c_copy_to);
	list_clear(c->c_api_keys);
	list_clear(c->c_admin_keys);
	list_clear(c->c_allowed_hosts);
	list_clear(c->c_allowed_origins);
	list_clear(c->c_import_keys);
	list_clear(c->c_peers);
	free(c->c_node_name);
	wflags_free(&c->c_wilmer);
	free(c->c_log_file);
	memset(c, 0, sizeof(*c));
}

int
gwconf_worker_path(const struct gw_conf *c, char *out, size_t outlen)
{
	char	 self[4096];
	ssize_t	 n;

	if (c->c_worker_bin != NULL)
		snprintf(out, outlen, "%s", c->c_worker_bin);
	else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			log_warn("readlink /proc/self/exe");
			return -1;
		}
		self[n] = '\0';
		snprintf(out, outlen, "%s/sluice-worker", dirname(self));
	}
	if (access(out, X_OK) == -1) {
		log_warn("worker binary %s", out);
		return -1;
	}
	return 0;
}
