/* check_gwconf.c - gateway settings: command line, sluice.json, user section, precedence. */
#include <check.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/log.h"
#include "../../gateway/gwconf.h"
#include "../../gateway/storeconf.h"
#include "../../gateway/wenv.h"
#include "../testmain.h"

static char	 dir[64];

static void
put(const char *rel, const char *text)
{
	char	 path[256];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void
setup(void)
{
	char	 path[256];

	snprintf(dir, sizeof(dir), "/tmp/check_gwconf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/Users", dir);
	mkdir(path, 0755);
	put("Users/_current-user.json", "{\"currentUser\": \"ann\"}");
	put("Users/ann.json", "{\"chatCompleteAddUserAssistant\": false,\n"
	    " \"chatCompletionAddMissingAssistantGenerator\": false,\n"
	    " \"sluice\": {\"max_workers\": 5}}\n");
}

static int
rm_cb(const char *p, const struct stat *st, int f, struct FTW *w)
{
	return remove(p);
}

static void
teardown(void)
{
	nftw(dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

/* Parse argv (NULL-terminated list after the program name). */
static int
args(struct gw_conf *c, const char *a0, ...)
{
	char		*argv[16] = { "sluice-gateway" };
	int		 argc = 1;
	va_list		 ap;
	const char	*a;

	va_start(ap, a0);
	for (a = a0; a != NULL && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)(uintptr_t)a;
	va_end(ap);
	return gwconf_args(c, argc, argv);
}

START_TEST(defaults_and_aliases)
{
	struct gw_conf	 c;

	ck_assert_int_eq(args(&c, NULL), 0);
	ck_assert_str_eq(c.c_listen, "127.0.0.1:5050");
	ck_assert_str_eq(c.c_config_dir, "configs");
	ck_assert_uint_eq(c.c_sup.max_workers, 8);
	ck_assert_uint_eq(c.c_http.max_body, 4194304);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--ConfigDirectory", "/x", "--User", "bob",
	    "--port", "6000", (char *)NULL), 0);
	ck_assert_str_eq(c.c_config_dir, "/x");
	ck_assert_str_eq(c.c_user, "bob");
	ck_assert_str_eq(c.c_listen, "127.0.0.1:6000");
	gwconf_free(&c);
	/* WilmerAI's --listen takes an address only. */
	ck_assert_int_eq(args(&c, "--listen", "0.0.0.0", (char *)NULL), 0);
	ck_assert_str_eq(c.c_listen, "0.0.0.0:5050");
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--listen", "[::1]:7000", "--workers", "3",
	    "/cfg", "carl", (char *)NULL), 0);
	ck_assert_str_eq(c.c_listen, "[::1]:7000");
	ck_assert_uint_eq(c.c_sup.min_workers, 3);
	ck_assert_uint_eq(c.c_sup.max_workers, 3);
	ck_assert_str_eq(c.c_config_dir, "/cfg");
	ck_assert_str_eq(c.c_user, "carl");
	gwconf_free(&c);
	/* --user repeats: WilmerAI's multi-user mode. */
	ck_assert_int_eq(args(&c, "--User", "ann", "--user", "bob",
	    (char *)NULL), 0);
	ck_assert_str_eq(c.c_user, "ann");
	ck_assert_str_eq(c.c_users[1], "bob");
	ck_assert_ptr_null(c.c_users[2]);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--workers", "0", (char *)NULL), -1);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--bogus", (char *)NULL), -1);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "a", "b", "c", (char *)NULL), -1);
	gwconf_free(&c);
}
END_TEST

START_TEST(files_then_command_line)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	put("sluice.json", "{\"max_workers\": 9, \"min_workers\": 3,\n"
	    " \"hang_timeout_s\": 2.5, \"max_body_bytes\": 1000,\n"
	    " \"listen\": \"127.0.0.2:7777\"}\n");
	ck_assert_int_eq(args(&c, "--config-dir", dir, "--port", "6001",
	    (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), 0);
	ck_assert_str_eq(c.c_user, "ann");		/* _current-user.json */
	ck_assert_uint_eq(c.c_sup.max_workers, 5);	/* user section wins */
	ck_assert_uint_eq(c.c_sup.min_workers, 3);	/* from sluice.json */
	ck_assert_uint_eq(c.c_sup.hang_timeout_ms, 2500);
	ck_assert_uint_eq(c.c_http.max_body, 1000);
	ck_assert_str_eq(c.c_listen, "127.0.0.1:6001");	/* command line wins */
	gwconf_free(&c);
}
END_TEST

static void
load_fails(const char *sluice_json, const char *needle)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	put("sluice.json", sluice_json);
	ck_assert_int_eq(args(&c, "--config-dir", dir, (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), -1);
	ck_assert_msg(strstr(err, needle) != NULL, "'%s' lacks '%s'", err,
	    needle);
	gwconf_free(&c);
}

START_TEST(bad_settings_are_positioned_errors)
{
	load_fails("{\n  \"max_wrokers\": 3\n}\n", "sluice.json:2:3: unknown "
	    "setting 'max_wrokers'");
	load_fails("{\"min_workers\": \"two\"}", "'min_workers' must be");
	load_fails("{\"min_workers\": -1}", "'min_workers' must be");
	load_fails("{\"log_level\": \"loud\"}", "'log_level' must be one of");
	load_fails("{\"min_workers\": 9, \"max_workers\": 2}", "min_workers");
	load_fails("{\"hang_timeout_s\": 1}", "hang_timeout_s");
	load_fails("{\"listen\": \"0.0.0.0:5050\"}", "refusing to listen");
	load_fails("{\"api_keys\": [\"short\"]}", "at least 8");
	load_fails("{bad json", "sluice.json:1:");
}
END_TEST

START_TEST(remote_bind_needs_keys)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	put("sluice.json", "{\"listen\": \"0.0.0.0:5050\", "
	    "\"api_keys\": [\"sk-123456789\"]}");
	ck_assert_int_eq(args(&c, "--config-dir", dir, (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), 0);
	ck_assert_str_eq(c.c_api_keys[0], "sk-123456789");
	ck_assert_ptr_null(c.c_api_keys[1]);
	gwconf_free(&c);
	ck_assert(gwconf_is_loopback("127.0.0.1:1"));
	ck_assert(gwconf_is_loopback("127.8.9.1:1"));
	ck_assert(gwconf_is_loopback("[::1]:1"));
	ck_assert(gwconf_is_loopback("localhost:1"));
	ck_assert(!gwconf_is_loopback("0.0.0.0:1"));
	ck_assert(!gwconf_is_loopback("[::]:1"));
	ck_assert(!gwconf_is_loopback("10.0.0.1:1"));
}
END_TEST

/* allowed_hosts and allowed_origins: lists from sluice.json, the flags
 * over it; bad entries (api_keys' too) are errors at their place,
 * naming the entry and why. */
START_TEST(browser_lists)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	put("sluice.json", "{\"allowed_hosts\": [\"box.lan\", \"*\"],\n"
	    " \"allowed_origins\": [\"http://localhost:3000\"]}\n");
	ck_assert_int_eq(args(&c, "--config-dir", dir, (char *)NULL), 0);
	ck_assert_ptr_null(c.c_allowed_hosts[0]);
	ck_assert_int_eq(gwconf_load(&c, err), 0);
	ck_assert_str_eq(c.c_allowed_hosts[0], "box.lan");
	ck_assert_str_eq(c.c_allowed_hosts[1], "*");
	ck_assert_ptr_null(c.c_allowed_hosts[2]);
	ck_assert_str_eq(c.c_allowed_origins[0], "http://localhost:3000");
	ck_assert_ptr_null(c.c_allowed_origins[1]);
	gwconf_free(&c);
	/* the flags repeat, and the files' list is then not read */
	ck_assert_int_eq(args(&c, "--config-dir", dir, "--allowed-origin",
	    "https://a.example", "--allowed-origin", "https://b.example/",
	    (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), 0);
	ck_assert_str_eq(c.c_allowed_origins[0], "https://a.example");
	ck_assert_str_eq(c.c_allowed_origins[1], "https://b.example/");
	ck_assert_ptr_null(c.c_allowed_origins[2]);
	ck_assert_str_eq(c.c_allowed_hosts[0], "box.lan");
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--allowed-host", "sluice.example.com:443",
	    (char *)NULL), 0);
	ck_assert_str_eq(c.c_allowed_hosts[0], "sluice.example.com:443");
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--allowed-origin", "null", (char *)NULL),
	    -1);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--allowed-host", "http://x", (char *)NULL),
	    -1);
	gwconf_free(&c);
	load_fails("{\"allowed_origins\": [\n  \"http://ok.example\",\n"
	    "  \"null\"]}", "sluice.json:3:3: 'allowed_origins': \"null\" is "
	    "the Origin of sandboxed frames");
	load_fails("{\"allowed_origins\": [\"localhost:3000\"]}",
	    "sluice.json:1:22: 'allowed_origins': \"localhost:3000\" is not "
	    "an origin");
	load_fails("{\"allowed_hosts\": [\"ok\", 5]}", "sluice.json:1:26: "
	    "'allowed_hosts' must be a list of strings, not of a number");
	load_fails("{\"allowed_hosts\": [\"*.example.com\"]}",
	    "'allowed_hosts': \"*.example.com\" is not a host name");
	load_fails("{\"allowed_hosts\": \"box.lan\"}",
	    "sluice.json:1:2: 'allowed_hosts' must be a list of at most 64 "
	    "strings");
	load_fails("{\"api_keys\": [\"sk-123456789\", \"short\"]}",
	    "sluice.json:1:31: 'api_keys': each key must be at least 8");
}
END_TEST

/* peers and node_name (cancellation across gateways). */
START_TEST(peers_list)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	put("sluice.json", "{\"node_name\": \"gw-a\", \"peers\": "
	    "[\"http://10.0.0.2:5050\", \"http://gw-b.lan:8080/\"]}\n");
	ck_assert_int_eq(args(&c, "--config-dir", dir, (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), 0);
	ck_assert_str_eq(c.c_node_name, "gw-a");
	ck_assert_str_eq(c.c_peers[0], "http://10.0.0.2:5050");
	ck_assert_str_eq(c.c_peers[1], "http://gw-b.lan:8080/");
	ck_assert_ptr_null(c.c_peers[2]);
	gwconf_free(&c);
	load_fails("{\"peers\": [\n  \"http://ok:1\",\n  \"https://b:2\"]}",
	    "sluice.json:3:3: 'peers': \"https://b:2\" ");
	load_fails("{\"peers\": [\"http://b\"]}", "\"http://b\" is not "
	    "http://HOST:PORT");
	load_fails("{\"peers\": [\"http://b:1/api\"]}", "'peers'");
	load_fails("{\"peers\": [\"http://u@b:1\"]}", "'peers'");
}
END_TEST

START_TEST(unknown_user_is_an_error)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	ck_assert_int_eq(args(&c, "--config-dir", dir, "--user", "zed",
	    (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "zed"));
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--config-dir", dir, "--user", "../x",
	    (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), -1);
	gwconf_free(&c);
}
END_TEST

START_TEST(concurrency_settings)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	ck_assert_int_eq(args(&c, NULL), 0);
	ck_assert_uint_eq(c.c_concurrency, 0);		/* unlimited */
	ck_assert_uint_eq(c.c_concurrency_timeout_ms, 900000);
	ck_assert_int_eq(c.c_concurrency_level, GW_CL_REQUEST);
	gwconf_free(&c);
	/* WilmerAI's flags and level names. */
	ck_assert_int_eq(args(&c, "--concurrency", "2",
	    "--concurrency-timeout", "1.5", "--concurrency-level", "endpoint",
	    (char *)NULL), 0);
	ck_assert_uint_eq(c.c_concurrency, 2);
	ck_assert_uint_eq(c.c_concurrency_timeout_ms, 1500);
	ck_assert_int_eq(c.c_concurrency_level, GW_CL_ENDPOINT);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--concurrency-level", "wilmer",
	    (char *)NULL), 0);
	ck_assert_int_eq(c.c_concurrency_level, GW_CL_REQUEST);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--concurrency-level", "node",
	    (char *)NULL), -1);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--concurrency-timeout", "0",
	    (char *)NULL), -1);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--concurrency", "-1", (char *)NULL), -1);
	gwconf_free(&c);
	/* The file form, under a command-line flag. */
	put("sluice.json", "{\"concurrency\": 4, \"concurrency_timeout_s\": 3,"
	    " \"concurrency_level\": \"endpoint\"}");
	ck_assert_int_eq(args(&c, "--config-dir", dir, "--concurrency", "1",
	    (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), 0);
	ck_assert_uint_eq(c.c_concurrency, 1);
	ck_assert_uint_eq(c.c_concurrency_timeout_ms, 3000);
	ck_assert_int_eq(c.c_concurrency_level, GW_CL_ENDPOINT);
	gwconf_free(&c);
	load_fails("{\"concurrency_level\": \"node\"}",
	    "'concurrency_level' must be");
	load_fails("{\"concurrency\": 2, \"concurrency_timeout_s\": 0}",
	    "concurrency_timeout_s must be above 0");
}
END_TEST

/* The workers' SQLite synchronous setting: "normal" unless told. */
START_TEST(db_synchronous_setting)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	ck_assert_int_eq(args(&c, NULL), 0);
	ck_assert(!c.c_db_sync_full);
	gwconf_free(&c);
	put("sluice.json", "{\"db_synchronous\": \"FULL\"}");
	ck_assert_int_eq(args(&c, "--config-dir", dir, (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), 0);
	ck_assert(c.c_db_sync_full);
	gwconf_free(&c);
	load_fails("{\"db_synchronous\": \"off\"}",
	    "'db_synchronous' must be \"normal\" or \"full\"");
	load_fails("{\"db_synchronous\": true}", "'db_synchronous' must be");
}
END_TEST

/* Load sluice.json (and the user file as setup wrote it) into c. */
static void
load_ok(struct gw_conf *c, const char *sluice_json)
{
	char	 err[CONF_ERRLEN];

	put("sluice.json", sluice_json);
	ck_assert_int_eq(args(c, "--config-dir", dir, (char *)NULL), 0);
	ck_assert_msg(gwconf_load(c, err) == 0, "%s", err);
}

/* The response cache: off by default; every member optional. */
START_TEST(cache_defaults_and_members)
{
	struct gw_conf	 c;

	ck_assert_int_eq(args(&c, NULL), 0);
	ck_assert(!c.c_cache.cc_enabled);
	ck_assert_uint_eq(c.c_cache.cc_max_entries, 1000);
	ck_assert_uint_eq(c.c_cache.cc_ttl_min, 60);
	ck_assert(c.c_cache.cc_temp == 0.0);
	gwconf_free(&c);
	load_ok(&c, "{\"cache\": {}}");
	ck_assert(!c.c_cache.cc_enabled);
	ck_assert_uint_eq(c.c_cache.cc_max_entries, 1000);
	ck_assert_uint_eq(c.c_cache.cc_ttl_min, 60);
	gwconf_free(&c);
	load_ok(&c, "{\"cache\": {\"enabled\": true, \"max_entries\": 5,\n"
	    " \"ttl_minutes\": 2.0, \"cacheable_temperature\": 0.7}}");
	ck_assert(c.c_cache.cc_enabled);
	ck_assert_uint_eq(c.c_cache.cc_max_entries, 5);
	ck_assert_uint_eq(c.c_cache.cc_ttl_min, 2);
	ck_assert(c.c_cache.cc_temp == 0.7);
	gwconf_free(&c);
	load_ok(&c, "{\"cache\": {\"enabled\": true, \"cacheable_temperature\":"
	    " 2, \"max_entries\": 1000000000, \"ttl_minutes\": 1}}");
	ck_assert(c.c_cache.cc_temp == 2.0);
	ck_assert_uint_eq(c.c_cache.cc_max_entries, 1000000000);
	ck_assert_uint_eq(c.c_cache.cc_ttl_min, 1);
	gwconf_free(&c);
}
END_TEST

/* The user file's "sluice" object overrides sluice.json member by
 * member. */
START_TEST(cache_user_file_overrides_members)
{
	struct gw_conf	 c;

	put("Users/ann.json", "{\"chatCompleteAddUserAssistant\": false,\n"
	    " \"chatCompletionAddMissingAssistantGenerator\": false,\n"
	    " \"sluice\": {\"cache\": {\"ttl_minutes\": 9}}}\n");
	load_ok(&c, "{\"cache\": {\"enabled\": true, \"ttl_minutes\": 3,\n"
	    " \"max_entries\": 7}}");
	ck_assert(c.c_cache.cc_enabled);
	ck_assert_uint_eq(c.c_cache.cc_max_entries, 7);
	ck_assert_uint_eq(c.c_cache.cc_ttl_min, 9);
	gwconf_free(&c);
}
END_TEST

START_TEST(cache_errors_are_positioned)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN];

	load_fails("{\n  \"cache\": true\n}", "sluice.json:2:3: 'cache' must "
	    "be an object, not true or false");
	load_fails("{\"cache\": null}", "sluice.json:1:2: 'cache' must be an "
	    "object, not null");
	load_fails("{\"cache\": {\n \"enabled\": true,\n  \"max_entires\": 5}}",
	    "sluice.json:3:3: unknown setting 'cache.max_entires'");
	load_fails("{\"cache\": {\n\t\"enabled\": 1}}",
	    "sluice.json:2:2: 'cache.enabled' must be true or false");
	load_fails("{\"cache\": {\"max_entries\": 0}}",
	    "sluice.json:1:12: 'cache.max_entries' must be a whole number "
	    "from 1 to 1000000000");
	load_fails("{\"cache\": {\"max_entries\": 2.5}}",
	    "'cache.max_entries' must be a whole number");
	load_fails("{\"cache\": {\"max_entries\": 1000000001}}",
	    "'cache.max_entries' must be a whole number");
	load_fails("{\"cache\": {\"max_entries\": \"5\"}}",
	    "'cache.max_entries' must be a whole number");
	load_fails("{\"cache\": {\"enabled\": true,\n\"ttl_minutes\": 0}}",
	    "sluice.json:2:1: 'cache.ttl_minutes' must be a whole number");
	load_fails("{\"cache\": {\"ttl_minutes\": -60}}",
	    "'cache.ttl_minutes' must be a whole number");
	load_fails("{\"cache\": {\"cacheable_temperature\": -0.1}}",
	    "sluice.json:1:12: 'cache.cacheable_temperature' must be a "
	    "number, 0 or more");
	load_fails("{\"cache\": {\"cacheable_temperature\": \"0\"}}",
	    "'cache.cacheable_temperature' must be a number");
	/* In the user file, positioned there. */
	put("sluice.json", "{}");
	put("Users/ann.json", "{\"chatCompleteAddUserAssistant\": false,\n"
	    " \"chatCompletionAddMissingAssistantGenerator\": false,\n"
	    " \"sluice\": {\"cache\": {\"enabled\": \"yes\"}}}\n");
	ck_assert_int_eq(args(&c, "--config-dir", dir, (char *)NULL), 0);
	ck_assert_int_eq(gwconf_load(&c, err), -1);
	ck_assert_msg(strstr(err, "Users/ann.json:3:23: 'cache.enabled' must "
	    "be true or false") != NULL, "%s", err);
	gwconf_free(&c);
}
END_TEST

/* A11.1: WilmerAI's folder flags. Values are stripped, trailing
 * slashes go, blanks are ignored; the Public folder gives the config
 * folder (a given one wins, flag or positional) and state_dir; the
 * SQLite folder is state_dir unless --state-dir says otherwise. */
START_TEST(a11_1_folder_flags)
{
	struct gw_conf	 c;

	ck_assert_int_eq(args(&c, "--PublicDirectory", " /srv/pub/\\ ",
	    "--DiscussionDirectory", "/d//", "--LoggingDirectory", " /l/ ",
	    (char *)NULL), 0);
	ck_assert_str_eq(c.c_wilmer.w_public, "/srv/pub");
	ck_assert_str_eq(c.c_config_dir, "/srv/pub/Configs");
	ck_assert_str_eq(c.c_state_dir, "/srv/pub/SqlLiteDBs");
	ck_assert_str_eq(c.c_wilmer.w_discussions, "/d");
	ck_assert_str_eq(c.c_wilmer.w_logdir, "/l/");
	ck_assert(!c.c_wilmer.w_file_logging);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--PublicDirectory", "/p", "/cfg",
	    "--UserLevelSqlLiteDirectory", "/sq/", "--PublicDirectory", "  ",
	    "--file-logging", (char *)NULL), 0);
	ck_assert_str_eq(c.c_config_dir, "/cfg");
	ck_assert_str_eq(c.c_state_dir, "/sq");
	ck_assert_str_eq(c.c_wilmer.w_public, "/p");
	ck_assert(c.c_wilmer.w_file_logging);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--ConfigDirectory", "/c", "--PublicDirectory",
	    "/p", "--UserLevelSqlLiteDirectory", "/sq", "--state-dir", "/st",
	    (char *)NULL), 0);
	ck_assert_str_eq(c.c_config_dir, "/c");
	ck_assert_str_eq(c.c_state_dir, "/st");
	gwconf_free(&c);
}
END_TEST

/* The log file of a loaded configuration, or "" when off. */
static char *
log_file_of(const char *a0, ...)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN], *argv[16] = { "sluice-gateway",
			    "--config-dir", dir };
	int		 argc = 3;
	va_list		 ap;
	const char	*a;
	char		*r;

	va_start(ap, a0);
	for (a = a0; a != NULL && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)(uintptr_t)a;
	va_end(ap);
	ck_assert_int_eq(gwconf_args(&c, argc, argv), 0);
	ck_assert_msg(gwconf_load(&c, err) == 0, "%s", err);
	r = strdup(c.c_log_file != NULL ? c.c_log_file : "");
	gwconf_free(&c);
	return r;
}

static void
log_file_is(char *got, const char *want)
{
	ck_assert_str_eq(got, want);
	free(got);
}

/* A11.1: file logging is on with --file-logging, or for one user whose
 * file says useFileLogging; never by that key with several users. Its
 * folder: --LoggingDirectory with <user> resolved, P/logs, or
 * state_dir/logs. */
START_TEST(a11_1_file_logging)
{
	put("Users/bob.json", "{\"chatCompleteAddUserAssistant\": false, "
	    "\"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"useFileLogging\": true}");
	log_file_is(log_file_of((char *)NULL), "");
	log_file_is(log_file_of("--file-logging", "--state-dir", "/st",
	    (char *)NULL), "/st/logs/sluice.log");
	log_file_is(log_file_of("--user", "bob", "--state-dir", "/st",
	    (char *)NULL), "/st/logs/sluice.log");
	log_file_is(log_file_of("--user", "bob", "--user", "ann",
	    (char *)NULL), "");
	log_file_is(log_file_of("--file-logging", "--LoggingDirectory",
	    "/l/<user>/x", (char *)NULL), "/l/ann/x/sluice.log");
	log_file_is(log_file_of("--file-logging", "--user", "bob", "--user",
	    "ann", "--LoggingDirectory", "/l/<user>/", (char *)NULL),
	    "/l/sluice.log");
	log_file_is(log_file_of("--file-logging", "--PublicDirectory", "/p",
	    "--state-dir", "/st", (char *)NULL), "/p/logs/sluice.log");
	put("Users/bob.json", "{\"chatCompleteAddUserAssistant\": false, "
	    "\"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"useFileLogging\": 0}");
	log_file_is(log_file_of("--user", "bob", (char *)NULL), "");
}
END_TEST

/* Capture what f(arg) prints on stderr into out; f's result. */
static int
stderr_of(int (*f)(char **, const char *), char **url, const char *arg,
    char *out, size_t outlen)
{
	char	 path[300];
	FILE	*r;
	int	 fd = dup(2), rc;
	size_t	 n;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fflush(stderr);
	ck_assert_ptr_nonnull(freopen(path, "w", stderr));
	rc = f(url, arg);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	ck_assert_ptr_nonnull(r = fopen(path, "r"));
	n = fread(out, 1, outlen - 1, r);
	out[n] = '\0';
	fclose(r);
	return rc;
}

/* "store": a PostgreSQL URL from sluice.json or --store (which wins and
 * may not hold a password); none means SQLite in state_dir. */
START_TEST(store_setting)
{
	struct gw_conf	 c;
	char		 err[CONF_ERRLEN], said[1024], *url = NULL, *n;

	load_ok(&c, "{}");
	ck_assert_ptr_null(c.c_store_url);
	gwconf_free(&c);
	load_ok(&c, "{\"store\": {\"url\": \"postgresql://ann:pw@db/sl\"}}");
	ck_assert_str_eq(c.c_store_url, "postgresql://ann:pw@db/sl");
	n = storeconf_name(c.c_store_url, c.c_state_dir);
	ck_assert_str_eq(n, "PostgreSQL postgresql://ann@db/sl");
	free(n);
	gwconf_free(&c);
	ck_assert_int_eq(args(&c, "--config-dir", dir, "--store",
	    "postgres:///other?host=/run/pg", (char *)NULL), 0);
	ck_assert_msg(gwconf_load(&c, err) == 0, "%s", err);
	ck_assert_str_eq(c.c_store_url, "postgres:///other?host=/run/pg");
	gwconf_free(&c);
	load_ok(&c, "{\"store\": {\"url\": null}, \"state_dir\": \"st\"}");
	ck_assert_ptr_null(c.c_store_url);
	n = storeconf_name(c.c_store_url, c.c_state_dir);
	ck_assert_str_eq(n, "SQLite st/sluice.db");
	free(n);
	gwconf_free(&c);

	ck_assert_int_eq(stderr_of(storeconf_flag, &url,
	    "postgresql://ann:s3cret@db/sl", said, sizeof(said)), -1);
	ck_assert_ptr_null(url);
	ck_assert_msg(strstr(said, "holds a password") != NULL &&
	    strstr(said, "PGPASSFILE") != NULL && strstr(said, "s3cret") ==
	    NULL, "%s", said);
	ck_assert_int_eq(stderr_of(storeconf_flag, &url, "/var/lib/x.db",
	    said, sizeof(said)), -1);
	ck_assert_ptr_nonnull(strstr(said, "must be a postgresql://"));
	ck_assert_int_eq(args(&c, "--store", "postgresql://a:b@h/d",
	    (char *)NULL), -1);
	gwconf_free(&c);

	load_fails("{\n  \"store\": \"postgresql://h/d\"}",
	    "sluice.json:2:3: 'store' must be an object");
	load_fails("{\"store\": {\n  \"uri\": \"postgresql://h/d\"}}",
	    "sluice.json:2:3: unknown setting 'store.uri'");
	load_fails("{\"store\": {\"url\": \"state/sluice.db\"}}",
	    "'store.url' must be a postgresql:// (or postgres://) URL");
	load_fails("{\"store\": {\"url\": 5}}", "'store.url' must be a "
	    "string, not a number");
}
END_TEST

/* A worker's environment: the store's URL from the settings only, and
 * none of the variables that make a process talk to systemd. */
START_TEST(worker_environment)
{
	struct wenv	 we;
	size_t		 i;
	int		 store = 0, kept = 0;

	setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
	setenv(WENV_STORE, "postgresql://inherited/db", 1);
	setenv("SLUICE_TEST_KEPT", "yes", 1);
	wenv_build(&we, "postgresql://ann:pw@db/sl");
	for (i = 0; we.we_env[i] != NULL; i++) {
		ck_assert_msg(strncmp(we.we_env[i], "NOTIFY_SOCKET=", 14) != 0,
		    "NOTIFY_SOCKET reaches the worker");
		if (strncmp(we.we_env[i], WENV_STORE "=", strlen(WENV_STORE)
		    + 1) == 0) {
			ck_assert_str_eq(we.we_env[i], WENV_STORE
			    "=postgresql://ann:pw@db/sl");
			store++;
		}
		kept += strcmp(we.we_env[i], "SLUICE_TEST_KEPT=yes") == 0;
	}
	ck_assert_int_eq(store, 1);
	ck_assert_int_eq(kept, 1);
	wenv_free(&we);
	wenv_build(&we, NULL);
	for (i = 0; we.we_env[i] != NULL; i++)
		ck_assert_msg(strncmp(we.we_env[i], WENV_STORE, strlen(
		    WENV_STORE)) != 0, "an inherited store URL is passed on");
	ck_assert_uint_gt(i, 0);
	wenv_free(&we);
}
END_TEST

static Suite *
gwconf_suite(void)
{
	Suite	*s = suite_create("gwconf");
	TCase	*tc = tcase_create("args");

	tcase_add_test(tc, defaults_and_aliases);
	tcase_add_test(tc, a11_1_folder_flags);
	suite_add_tcase(s, tc);
	tc = tcase_create("files");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, files_then_command_line);
	tcase_add_test(tc, bad_settings_are_positioned_errors);
	tcase_add_test(tc, remote_bind_needs_keys);
	tcase_add_test(tc, browser_lists);
	tcase_add_test(tc, peers_list);
	tcase_add_test(tc, store_setting);
	tcase_add_test(tc, worker_environment);
	tcase_add_test(tc, unknown_user_is_an_error);
	tcase_add_test(tc, concurrency_settings);
	tcase_add_test(tc, db_synchronous_setting);
	tcase_add_test(tc, cache_defaults_and_members);
	tcase_add_test(tc, cache_user_file_overrides_members);
	tcase_add_test(tc, cache_errors_are_positioned);
	tcase_add_test(tc, a11_1_file_logging);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(gwconf_suite());
}
