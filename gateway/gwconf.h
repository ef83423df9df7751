/* gwconf.h - gateway settings: defaults, sluice.json, user "sluice" section, command line. */
#ifndef SLUICE_GWCONF_H
#define SLUICE_GWCONF_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/json.h"
#include "http.h"
#include "sup.h"
#include "wflags.h"

#define GW_MAX_KEYS	32
#define GW_MAX_USERS	32
#define GW_MAX_ALLOWED	64	/* allowed_hosts, allowed_origins */
#define GW_MAX_PEERS	16	/* peers */

/* What --concurrency limits (WilmerAI's --concurrency-level). */
enum gw_clevel {
	GW_CL_REQUEST,		/* "wilmer": whole requests, in the gateway */
	GW_CL_ENDPOINT,		/* each backend call, per endpoint */
};

/* The response cache ("cache" in sluice.json). The workers keep it in
 * the shared database; the gateway only passes these on (worker
 * arguments) and reports (X-Sluice-Cache, metrics). */
struct gw_cache {
	bool			 cc_enabled;	/* false: workers never cache */
	unsigned		 cc_max_entries;	/* >= 1: 1000 */
	unsigned		 cc_ttl_min;	/* >= 1 minute: 60 */
	double			 cc_temp;	/* cacheable_temperature >= 0: 0 */
};

/* Bounds of the cache's integer members (the minimum is 1). */
#define GW_CACHE_MAX	1000000000u

struct gw_conf {
	char			*c_config_dir;	/* WilmerAI-layout folder */
	char			*c_user;	/* the first (default) user: c_users[0] */
	char			*c_users[GW_MAX_USERS + 1];	/* --user, each; NULL-
						   terminated. More than one:
						   WilmerAI's multi-user mode */
	char			*c_listen;	/* "127.0.0.1:5050" */
	char			*c_state_dir;	/* database and runtime files */
	char			*c_store_url;	/* "store": {"url"}, --store: the
						   database on PostgreSQL; NULL:
						   SQLite in c_state_dir */
	bool			 c_db_sync_full;	/* db_synchronous "full" */
	char			*c_worker_bin;	/* NULL: next to the gateway */
	int			 c_log_level;
	uint64_t		 c_request_timeout_ms;
	uint64_t		 c_stream_heartbeat_ms;
	unsigned		 c_concurrency;	/* 0 = unlimited */
	uint64_t		 c_concurrency_timeout_ms;
	int			 c_concurrency_level;	/* enum gw_clevel */
	struct http_limits	 c_http;
	struct sup_conf		 c_sup;
	char			*c_api_keys[GW_MAX_KEYS + 1];	/* NULL-terminated */
	char			*c_admin_keys[GW_MAX_KEYS + 1];	/* admin routes */
	bool			 c_allow_open_remote;	/* no key, not loopback */
	char			*c_allowed_hosts[GW_MAX_ALLOWED + 1];	/* Host
						   values to serve besides our
						   own (origin.h); NULL-ended */
	char			*c_allowed_origins[GW_MAX_ALLOWED + 1];	/* web
						   pages that may call */
	bool			 c_check_only;	/* --check-config */
	char			*c_import_dir;	/* --import-wilmer DIR */
	char			*c_export_dir;	/* --export-wilmer DIR */
	char			*c_backfill_ep;	/* --backfill-embeddings EP */
	char			*c_backfill_batch;	/* its batch size, or
						   NULL (the worker's) */
	char			*c_copy_from;	/* --copy-store FROM TO */
	char			*c_copy_to;
	char			*c_import_keys[GW_MAX_KEYS + 1];	/* each
						   --import-key-file or
						   --export-key-file;
						   NULL-ended */
	struct gw_wilmer	 c_wilmer;	/* WilmerAI's folder flags */
	char			*c_log_file;	/* --file-logging's file, or NULL */
	bool			 c_access_log;	/* a line per request */
	struct gw_cache		 c_cache;	/* response cache */
	char			*c_node_name;	/* "node_name", or NULL: the
						   host name (peers.h) */
	char			*c_peers[GW_MAX_PEERS + 1];	/* other
						   gateways' http://HOST:PORT,
						   asked to cancel what does
						   not run here; NULL-ended */
};

/* Parse the command line into c (defaults first). Returns 0 to go on,
 * 1 when the caller should exit 0 (--help, --version), -1 on a usage
 * error (message printed). Owned strings are freed by gwconf_free. */
int	gwconf_args(struct gw_conf *c, int argc, char **argv);

/* Resolve the user (when not given: Users/_current-user.json), then
 * apply <config-dir>/sluice.json and the user file's "sluice" section
 * under the command-line values. Returns 0 or -1 with err
 * ("path:line:col: message"). */
int	gwconf_load(struct gw_conf *c, char err[CONF_ERRLEN]);

/* True when addr ("host:port") binds only loopback. */
bool	gwconf_is_loopback(const char *addr);

void	gwconf_free(struct gw_conf *c);

/* The worker program: --worker-bin, or else sluice-worker beside this
 * executable, into out. Returns 0, or -1 (logged) when it is not an
 * executable file. */
int	gwconf_worker_path(const struct gw_conf *, char *out, size_t outlen);

#endif
