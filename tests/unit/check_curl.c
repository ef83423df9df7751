/* check_curl.c - CurlCommand (tools/curlcmd.c, curlrun.c, nodes/node_curl.c): the command line, the guards, and real curl runs against tests/mock-wiki and doubles of this suite. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../../worker/engine/registry.h"
#include "../../worker/tools/curlcmd.h"
#include "../testmain.h"
#include "netnames.h"
#include "nodefix.h"

static struct nodefix	 F;
static char		 t_bin[] = "/tmp/check_curl.XXXXXX";
static char		*t_path;	/* the PATH to put back */

#define HEAD	"workflow 'wf' node 3 (CurlCommand): "
#define CAP	"curl|--max-filesize|10485760|"
#define ADDR_END ". Adjust the URL, extend 'allowedHosts', or disable " \
		"'blockPrivateAddresses'."

static void
setup(void)
{
	nodefix_init(&F, false);
	json_object_set_new(F.nf_node, "type", json_string("CurlCommand"));
	ck_assert_ptr_nonnull(mkdtemp(t_bin));
	t_path = strdup(getenv("PATH"));
}

static void
teardown(void)
{
	char	*cmd;

	setenv("PATH", t_path, 1);
	free(t_path);
	if (asprintf(&cmd, "rm -rf '%s'", t_bin) != -1) {
		(void)system(cmd);
		free(cmd);
	}
	nodefix_free(&F);
}

/* ---- the command line ---- */

/* curlcmd_build of the node written as JSON: its argv joined by '|',
 * or "ERR " and the error. Caller frees. */
static char *
build(const char *json)
{
	json_error_t	 e;
	json_t		*node = json_loads(json, 0, &e);
	struct curlcmd	 cc;
	struct buf	 b = BUF_INIT;
	size_t		 i;

	ck_assert_msg(node != NULL, "%s: %s", json, e.text);
	buf_adds(&b, "ERR ");
	if (curlcmd_build(&cc, node, F.nf_vars, &b) == -1) {
		ck_assert_ptr_null(cc.cc_argv);
		json_decref(node);
		return buf_take(&b);
	}
	buf_reset(&b);
	for (i = 0; cc.cc_argv[i] != NULL; i++)
		buf_printf(&b, "%s%s", i > 0 ? "|" : "", cc.cc_argv[i]);
	curlcmd_clear(&cc);
	json_decref(node);
	return buf_take(&b);
}

static void
ck_build(const char *json, const char *want)
{
	char	*got = build(json);

	ck_assert_msg(strcmp(got, want) == 0, "%s:\n got '%s'\nwant '%s'",
	    json, got, want);
	free(got);
}

START_TEST(argv_default)
{
	ck_build("{\"args\": [\"-sS\", \"http://example.com\"]}",
	    CAP "-sS|http://example.com");
	/* Each item str()-ed, then variables filled in; one item stays
	 * one argument, spaces and all. */
	ck_build("{\"args\": [\"-H\", \"Authorization: Bearer {name}\", 5, "
	    "true, null, {\"a\": 1}, \"https://api.example.com/{name}\"]}",
	    CAP "-H|Authorization: Bearer Ann|5|True|None|{'a': 1}|"
	    "https://api.example.com/Ann");
	ck_build("{\"args\": []}", "curl|--max-filesize|10485760");
}
END_TEST

START_TEST(argv_proxy)
{
	ck_build("{\"args\": [\"-sS\", \"http://example.com\"], \"proxy\": "
	    "\"socks5://localhost:1080\"}",
	    CAP "-x|socks5://localhost:1080|-sS|http://example.com");
	ck_build("{\"args\": [\"http://x\"], \"proxy\": \"socks5://{name}:1\"}",
	    CAP "-x|socks5://Ann:1|http://x");
	ck_build("{\"args\": [\"http://x\"], \"proxy\": \"\"}", CAP "http://x");
	ck_build("{\"args\": [\"http://x\"], \"proxy\": null}", CAP "http://x");
	ck_build("{\"args\": [\"http://x\"], \"proxy\": {\"host\": \"h\"}}",
	    "ERR CurlCommand 'proxy' must be a string URL (e.g., "
	    "'socks5://host:1080').");
	/* The cap, the redirect guard, the proxy, then the arguments. */
	ck_build("{\"args\": [\"http://example.com\"], \"proxy\": \"http://p\", "
	    "\"allowedHosts\": [\"example.com\"]}", CAP "--max-redirs|0|-x|"
	    "http://p|http://example.com");
}
END_TEST

START_TEST(argv_cap)
{
	ck_build("{\"args\": [\"http://x\"], \"maxResponseBytes\": 0}",
	    "curl|http://x");
	ck_build("{\"args\": [\"http://x\"], \"maxResponseBytes\": -5}",
	    "curl|http://x");
	ck_build("{\"args\": [\"http://x\"], \"maxResponseBytes\": \"12\"}",
	    "curl|--max-filesize|12|http://x");
	ck_build("{\"args\": [\"http://x\"], \"maxResponseBytes\": 1.9}",
	    "curl|--max-filesize|1|http://x");
	ck_build("{\"args\": [\"--max-filesize\", \"500\", \"http://x\"]}",
	    "curl|--max-filesize|500|http://x");
	ck_build("{\"args\": [\"--max-filesize=500\", \"http://x\"]}",
	    "curl|--max-filesize=500|http://x");
	/* A look-alike is not the option. */
	ck_build("{\"args\": [\"--max-filesizes\", \"http://x\"]}",
	    CAP "--max-filesizes|http://x");
}
END_TEST

START_TEST(argv_redirect_guard)
{
	ck_build("{\"args\": [\"http://127.0.0.1/\"]}", CAP "http://127.0.0.1/");
	ck_build("{\"args\": [\"http://8.8.8.8/\"], \"blockPrivateAddresses\": "
	    "true}", CAP "--max-redirs|0|http://8.8.8.8/");
	ck_build("{\"args\": [\"--max-redirs\", \"3\", \"http://8.8.8.8/\"], "
	    "\"blockPrivateAddresses\": true}",
	    CAP "--max-redirs|3|http://8.8.8.8/");
	ck_build("{\"args\": [\"--max-redirs=2\", \"http://8.8.8.8/\"], "
	    "\"blockPrivateAddresses\": true}",
	    CAP "--max-redirs=2|http://8.8.8.8/");
	ck_build("{\"args\": [\"http://example.com/data\"], \"allowedHosts\": "
	    "[\"example.com\"], \"maxResponseBytes\": 0}",
	    "curl|--max-redirs|0|http://example.com/data");
	/* Off: false, and an explicit null allowlist. */
	ck_build("{\"args\": [\"http://x\"], \"blockPrivateAddresses\": false, "
	    "\"allowedHosts\": null}", CAP "http://x");
}
END_TEST

/* ---- field checks (A3.1), in WilmerAI's order ---- */

START_TEST(fields)
{
	ck_build("{}", "ERR CurlCommand node requires an 'args' field (a JSON "
	    "list).");
	ck_build("{\"args\": null}", "ERR CurlCommand node requires an 'args' "
	    "field (a JSON list).");
	ck_build("{\"args\": \"curl http://x\"}", "ERR CurlCommand 'args' must "
	    "be a JSON list of strings.");
	ck_build("{\"args\": [], \"timeout\": \"soon\"}", "ERR CurlCommand "
	    "'timeout' must be a number of seconds; got 'soon'.");
	ck_build("{\"args\": [], \"timeout\": -1}", "ERR CurlCommand 'timeout' "
	    "must be a positive number of seconds; got -1.");
	ck_build("{\"args\": [], \"timeout\": true}", "ERR CurlCommand "
	    "'timeout' must be a number of seconds; got True.");
	ck_build("{\"args\": [], \"maxResponseBytes\": \"big\"}", "ERR "
	    "CurlCommand 'maxResponseBytes' must be an integer; got 'big'.");
	ck_build("{\"args\": [], \"maxResponseBytes\": true}", "ERR "
	    "CurlCommand 'maxResponseBytes' must be an integer; got True.");
	ck_build("{\"args\": [], \"blockOptionInjection\": \"yes\"}", "ERR "
	    "CurlCommand 'blockOptionInjection' must be a boolean "
	    "(true/false); got 'yes'.");
	ck_build("{\"args\": [], \"allowSchemeInjection\": 1}", "ERR "
	    "CurlCommand 'allowSchemeInjection' must be a boolean "
	    "(true/false); got 1.");
	ck_build("{\"args\": [], \"blockPrivateAddresses\": \"yes\"}", "ERR "
	    "CurlCommand 'blockPrivateAddresses' must be a boolean "
	    "(true/false); got 'yes'.");
	ck_build("{\"args\": [], \"allowedHosts\": \"example.com\"}", "ERR "
	    "CurlCommand 'allowedHosts' must be a JSON list of host strings.");
	ck_build("{\"args\": [], \"allowedHosts\": [\" \", \"\"]}", "ERR "
	    "CurlCommand 'allowedHosts' was configured but contains no usable "
	    "host entries; refusing to run with no effective host "
	    "restriction.");
	ck_build("{\"args\": [], \"outputFormat\": \"weird\"}", "ERR "
	    "CurlCommand 'outputFormat' must be one of ('stdout', "
	    "'stdout+stderr', 'full'); got 'weird'.");
	ck_build("{\"args\": [], \"onError\": \"ignore\"}", "ERR CurlCommand "
	    "'onError' must be one of ('raise', 'return'); got 'ignore'.");
	/* The first bad field in WilmerAI's order is the one named. */
	ck_build("{\"args\": [], \"onError\": \"x\", \"outputFormat\": \"y\", "
	    "\"timeout\": 0}", "ERR CurlCommand 'timeout' must be a positive "
	    "number of seconds; got 0.");
	ck_build("{\"args\": [], \"onError\": \"x\", \"outputFormat\": \"y\"}",
	    "ERR CurlCommand 'outputFormat' must be one of ('stdout', "
	    "'stdout+stderr', 'full'); got 'y'.");
	/* A bad proxy is seen after the arguments' guards. */
	vars_set(F.nf_vars, "u", "file:///etc/passwd");
	ck_build("{\"args\": [\"{u}\"], \"proxy\": 5}", "ERR CurlCommand "
	    "blocked a 'file:' URL produced by variable substitution: "
	    "'file:///etc/passwd' (from template '{u}'). Only http/https "
	    "schemes may be introduced via substitution; a scheme like "
	    "file://, ftp://, scp://, dict://, or gopher:// can read local "
	    "files or reach internal services. Write the scheme literally in "
	    "the args template, or set 'allowSchemeInjection': true to permit "
	    "substituted schemes.");
}
END_TEST

/* ---- the injection guards (A3.4.2) ---- */

START_TEST(guard_option)
{
	vars_set(F.nf_vars, "userInput", "-o/tmp/evil");
	vars_set(F.nf_vars, "at", "@/etc/passwd");
	ck_build("{\"args\": [\"{userInput}\", \"http://x\"], "
	    "\"blockOptionInjection\": true}", "ERR CurlCommand blocked an "
	    "option-like argument produced by variable substitution: "
	    "'-o/tmp/evil' (from template '{userInput}'). A substituted value "
	    "starting with '-' is treated by curl as an option. Disable "
	    "'blockOptionInjection' if this is intentional.");
	ck_build("{\"args\": [\"-sS\", \"http://x\"], \"blockOptionInjection\": "
	    "true}", CAP "-sS|http://x");
	ck_build("{\"args\": [\"{userInput}\", \"http://x\"]}",
	    CAP "-o/tmp/evil|http://x");
	ck_build("{\"args\": [\"-d\", \"{at}\", \"http://x\"], "
	    "\"blockOptionInjection\": true}", "ERR CurlCommand blocked an "
	    "'@'-prefixed argument produced by variable substitution: "
	    "'@/etc/passwd' (from template '{at}'). curl reads a local file "
	    "when a data/upload value begins with '@' (e.g. -d @file), so a "
	    "substituted '@' value can read or exfiltrate a local file. Use "
	    "'--data-raw' to send variable content literally, or disable "
	    "'blockOptionInjection' if this is intentional.");
	ck_build("{\"args\": [\"-d\", \"@/home/me/payload.json\", \"http://x\"],"
	    " \"blockOptionInjection\": true}",
	    CAP "-d|@/home/me/payload.json|http://x");
	ck_build("{\"args\": [\"-d\", \"{at}\", \"http://x\"]}",
	    CAP "-d|@/etc/passwd|http://x");
}
END_TEST

/* The scheme named in the message for value v from template "{u}",
 * or "" when allowed. */
static void
ck_scheme(const char *v, const char *scheme)
{
	char	 json[128], want[64], *got;

	vars_set(F.nf_vars, "u", v);
	snprintf(json, sizeof(json), "{\"args\": [\"-d\", \"{u}\", "
	    "\"http://x\"]}");
	got = build(json);
	if (*scheme == '\0')
		ck_assert_msg(strncmp(got, "curl|", 5) == 0, "%s: %s", v, got);
	else {
		snprintf(want, sizeof(want), "ERR CurlCommand blocked a '%s:' "
		    "URL", scheme);
		ck_assert_msg(strncmp(got, want, strlen(want)) == 0,
		    "%s: %s", v, got);
	}
	free(got);
}

START_TEST(guard_scheme)
{
	ck_scheme("ftp://host/f", "ftp");
	ck_scheme("scp://host/f", "scp");
	ck_scheme("dict://localhost:11211/stats", "dict");
	ck_scheme("gopher://h/_", "gopher");
	ck_scheme("FILE:///etc/passwd", "file");
	ck_scheme("  file:///etc/passwd", "file");
	ck_scheme("https://example.com/data", "");
	ck_scheme("HTTP://example.com/data", "");
	/* A drive letter is one letter: not a scheme. */
	ck_scheme("C:\\data\\file.txt", "");
	ck_scheme("plain text", "");
	/* QUIRK kept: any "word:" start counts as a scheme. */
	ck_scheme("X-Api: 1", "x-api");
	/* Written by the author, it stays. */
	vars_set(F.nf_vars, "path", "/etc/hosts");
	ck_build("{\"args\": [\"file://{path}\"]}", CAP "file:///etc/hosts");
	ck_build("{\"args\": [\"File://{path}\"]}", CAP "File:///etc/hosts");
	vars_set(F.nf_vars, "u", "file:///etc/passwd");
	ck_build("{\"args\": [\"{u}\"], \"allowSchemeInjection\": true}",
	    CAP "file:///etc/passwd");
	/* Another scheme in the template does not license this one. */
	vars_set(F.nf_vars, "u", "ftp://h/f");
	ck_build("{\"args\": [\"file:{u}\"]}", CAP "file:ftp://h/f");
	ck_build("{\"args\": [\"ftp:{u}\"]}", CAP "ftp:ftp://h/f");
	vars_set(F.nf_vars, "s", "gopher");
	ck_build("{\"args\": [\"{s}://h/\"]}", "ERR "
	    "CurlCommand blocked a 'gopher:' URL produced by variable "
	    "substitution: 'gopher://h/' (from template '{s}://h/'). Only "
	    "http/https schemes may be introduced via substitution; a scheme "
	    "like file://, ftp://, scp://, dict://, or gopher:// can read "
	    "local files or reach internal services. Write the scheme "
	    "literally in the args template, or set 'allowSchemeInjection': "
	    "true to permit substituted schemes.");
}
END_TEST

/* ---- the address guard (A3.2, A3.4.3): refused before curl runs ---- */

/* args (a JSON list's inside) with blockPrivateAddresses refused for
 * reason. */
static void
ck_refused(const char *args, const char *reason)
{
	char	 json[512], want[512], *got;

	snprintf(json, sizeof(json), "{\"args\": [%s], "
	    "\"blockPrivateAddresses\": true}", args);
	snprintf(want, sizeof(want), "ERR CurlCommand blocked a request to a "
	    "disallowed address: %s" ADDR_END, reason);
	got = build(json);
	ck_assert_msg(strcmp(got, want) == 0, "%s:\n got '%s'\nwant '%s'",
	    args, got, want);
	free(got);
}

START_TEST(guard_private)
{
	char	 lh[128];

	ck_refused("\"-sS\", \"http://127.0.0.1:8080/admin\"",
	    "host '127.0.0.1' is a loopback address");
	ck_refused("\"http://169.254.169.254/latest/meta-data/\"",
	    "host '169.254.169.254' is a link-local address");
	ck_refused("\"169.254.169.254/latest/meta-data/\"",
	    "host '169.254.169.254' is a link-local address");
	ck_refused("\"10.0.0.1\"", "host '10.0.0.1' is a private address");
	ck_refused("\"-sS\", \"127.0.0.1:8080/admin\"",
	    "host '127.0.0.1' is a loopback address");
	ck_refused("\"http://[::ffff:127.0.0.1]/\"",
	    "host '::ffff:127.0.0.1' is a loopback address");
	ck_refused("\"[::ffff:127.0.0.1]\"",
	    "host '::ffff:127.0.0.1' is a loopback address");
	ck_refused("\"2130706433\"", "host '127.0.0.1' is a loopback address");
	ck_refused("\"http://2130706433/\"",
	    "host '127.0.0.1' is a loopback address");
	ck_refused("\"localhost\"", localhost_refusal(lh, sizeof(lh)));
	ck_refused("\"--url=http://10.0.0.9/\"",
	    "host '10.0.0.9' is a private address");
	ck_refused("\"--url\", \"10.0.0.9/\"",
	    "host '10.0.0.9' is a private address");
	ck_refused("\"HTTPS://10.1.2.3/\"", "host '10.1.2.3' is a private "
	    "address");
	/* Not host-like, yet curl fetches it: checked all the same. */
	ck_refused("\"user@10.0.0.1/\"", "host '10.0.0.1' is a private address");
	/* The URL after an unknown flag is still a URL. */
	ck_refused("\"-sSL\", \"10.0.0.1\"", "host '10.0.0.1' is a private "
	    "address");
}
END_TEST

START_TEST(guard_not_urls)
{
	/* Option values are not URLs; the URL still is. */
	ck_build("{\"args\": [\"-H\", \"Host: 10.0.0.1\", \"-d\", \"10.0.0.1\", "
	    "\"-x\", \"127.0.0.1:3128\", \"http://8.8.8.8/\"], "
	    "\"blockPrivateAddresses\": true}", CAP "--max-redirs|0|-H|"
	    "Host: 10.0.0.1|-d|10.0.0.1|-x|127.0.0.1:3128|http://8.8.8.8/");
	ck_refused("\"-H\", \"Host: 8.8.8.8\", \"http://10.0.0.1/\"",
	    "host '10.0.0.1' is a private address");
	/* A scheme other than http(s) is the scheme guard's business. */
	ck_build("{\"args\": [\"ftp://10.0.0.1/file\"], "
	    "\"blockPrivateAddresses\": true}",
	    CAP "--max-redirs|0|ftp://10.0.0.1/file");
	/* "--url" with nothing after it: nothing to check. */
	ck_build("{\"args\": [\"--url\"], \"blockPrivateAddresses\": true}",
	    CAP "--max-redirs|0|--url");
	ck_build("{\"args\": [\"8.8.8.8/\"], \"blockPrivateAddresses\": true}",
	    CAP "--max-redirs|0|8.8.8.8/");
}
END_TEST

START_TEST(guard_allowlist)
{
	ck_build("{\"args\": [\"http://EXAMPLE.COM/data\"], \"allowedHosts\": "
	    "[\"Example.Com\"]}", CAP "--max-redirs|0|http://EXAMPLE.COM/data");
	ck_build("{\"args\": [\"example.com:8080/data\"], \"allowedHosts\": "
	    "[\"example.com\"]}", CAP "--max-redirs|0|example.com:8080/data");
	ck_build("{\"args\": [\"http://evil.example.net/\"], "
	    "\"allowedHosts\": [\"example.com\"]}", "ERR CurlCommand blocked "
	    "a request to a disallowed address: host 'evil.example.net' is "
	    "not in the configured allowedHosts list" ADDR_END);
	ck_build("{\"args\": [\"evil.example.net/x\"], "
	    "\"allowedHosts\": [\"example.com\"]}", "ERR CurlCommand blocked "
	    "a request to a disallowed address: host 'evil.example.net' is "
	    "not in the configured allowedHosts list" ADDR_END);
	vars_set(F.nf_vars, "allowedHost", "trusted.example.com");
	ck_build("{\"args\": [\"http://trusted.example.com/d\"], "
	    "\"allowedHosts\": [\"{allowedHost}\"]}",
	    CAP "--max-redirs|0|http://trusted.example.com/d");
	/* Both guards: an allowlisted private address is refused. */
	ck_build("{\"args\": [\"http://127.0.0.1/status\"], "
	    "\"allowedHosts\": [\"127.0.0.1\"], \"blockPrivateAddresses\": "
	    "true}", "ERR CurlCommand blocked a request to a disallowed "
	    "address: host '127.0.0.1' is a loopback address" ADDR_END);
}
END_TEST

/* ---- the node, with a fake curl on PATH ---- */

/* Run the node; its output (exact bytes) or, when want_fail, its
 * error message. Caller frees. */
static char *
run(bool want_fail)
{
	const struct node_type	*t = node_type_find("CurlCommand");
	struct buf		 out = BUF_INIT;
	struct wresult		 res;
	bool			 streamed = false;
	int			 rc;

	memset(&res, 0, sizeof(res));
	rc = t->nt_run(&F.nf_x, &out, &streamed, &res);
	ck_assert(!streamed);
	if (want_fail) {
		ck_assert_msg(rc == -1, "no failure; output '%s'", out.b_data);
		ck_assert_int_eq(res.r_status, RQ_ERROR);
		buf_free(&out);
		return strdup(res.r_message);
	}
	ck_assert_msg(rc == 0, "%s", res.r_message);
	buf_addc(&out, '\0');
	return buf_take(&out);
}

static void
ck_out(const char *want)
{
	char	*got = run(false);

	ck_assert_msg(strcmp(got, want) == 0, "\n got '%s'\nwant '%s'", got,
	    want);
	free(got);
}

/* The node fails 500 with HEAD + msg (prefix only when prefix). */
static void
ck_err(const char *msg, bool prefix)
{
	char	*got = run(true), want[1024];

	snprintf(want, sizeof(want), HEAD "%s", msg);
	if (prefix)
		ck_assert_msg(strncmp(got, want, strlen(want)) == 0,
		    "\n got '%s'\nwant '%s...'", got, want);
	else
		ck_assert_msg(strcmp(got, want) == 0, "\n got '%s'\nwant '%s'",
		    got, want);
	free(got);
}

/* A "curl" in t_bin, alone on PATH, that prints its arguments one a
 * line and what its stdin is, and leaves t_bin/ran behind. */
static void
fake_curl(void)
{
	char	 p[PATH_MAX];
	FILE	*f;

	snprintf(p, sizeof(p), "%s/curl", t_bin);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fprintf(f, "#!/bin/sh\n: > '%s/ran'\nprintf '%%s\\n' \"$@\"\n"
	    "/bin/readlink /proc/$$/fd/0\n", t_bin);
	fclose(f);
	ck_assert_int_eq(chmod(p, 0755), 0);
	setenv("PATH", t_bin, 1);
}

static bool
fake_ran(void)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/ran", t_bin);
	return access(p, F_OK) == 0;
}

START_TEST(node_no_shell)
{
	fake_curl();
	nodefix_set(&F, "{s:[s,s,s,s,s,s]}", "args", "-sS", "a b", "$(id)",
	    "; echo hi", "*",
	    "{name}'s");
	ck_out("--max-filesize\n10485760\n-sS\na b\n$(id)\n; echo hi\n*\n"
	    "Ann's\n/dev/null\n");
	ck_assert(fake_ran());
	ck_assert(node_type_find("CurlCommand")->nt_word_stream);
}
END_TEST

START_TEST(node_guard_before_curl)
{
	fake_curl();
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", "http://10.0.0.1/");
	nodefix_set(&F, "{s:b, s:s}", "blockPrivateAddresses", 1, "onError",
	    "return");
	ck_err("CurlCommand blocked a request to a disallowed address: host "
	    "'10.0.0.1' is a private address" ADDR_END, false);
	nodefix_set(&F, "{s:[s]}", "args", "169.254.169.254");
	ck_err("CurlCommand blocked a request to a disallowed address: host "
	    "'169.254.169.254' is a link-local address" ADDR_END, false);
	ck_assert(!fake_ran());
}
END_TEST

START_TEST(node_no_curl)
{
	setenv("PATH", t_bin, 1);	/* no curl there */
	nodefix_set(&F, "{s:[s]}", "args", "http://x");
	nodefix_set(&F, "{s:s}", "onError", "return");
	ck_err("curl was not found on PATH", false);
}
END_TEST

/* ---- real curl ---- */

/* An HTTP double: answers each request with resp (n bytes), then
 * closes, or with hang holds the connection (a process each). Gone by
 * itself after 30 s. */
static pid_t
double_start(const char *resp, size_t n, bool hang, int *port)
{
	struct sockaddr_in	 sa = { .sin_family = AF_INET };
	socklen_t		 len = sizeof(sa);
	char			 req[4096];
	int			 s, c;
	pid_t			 pid;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(s = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s, 8), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid > 0) {
		close(s);
		return pid;
	}
	setpgid(0, 0);
	alarm(30);
	while ((c = accept(s, NULL, NULL)) != -1) {
		if (hang && fork() != 0) {
			close(c);
			continue;
		}
		alarm(30);
		(void)read(c, req, sizeof(req));
		(void)write(c, resp, n);
		if (hang)
			pause();
		close(c);
	}
	_exit(0);
}

/* The double and the connections it holds. */
static void
double_stop(pid_t pid)
{
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* curl processes that are this test's children (zombies included). */
static int
curl_kids(void)
{
	DIR		*d = opendir("/proc");
	struct dirent	*e;
	char		 p[300], line[512], comm[64];
	int		 n = 0, ppid;
	FILE		*f;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		snprintf(p, sizeof(p), "/proc/%s/stat", e->d_name);
		if ((f = fopen(p, "r")) == NULL)
			continue;
		if (fgets(line, sizeof(line), f) != NULL &&
		    sscanf(line, "%*d (%63[^)]) %*c %d", comm, &ppid) == 2 &&
		    ppid == getpid() && strcmp(comm, "curl") == 0)
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

static void
url(char *buf, size_t sz, int port, const char *path)
{
	snprintf(buf, sz, "http://127.0.0.1:%d%s", port, path);
}

START_TEST(real_formats)
{
	int	 port;
	pid_t	 mock = it_double_start("mock-wiki", NULL, &port);
	char	 u[128];

	url(u, sizeof(u), port, "/articles?prompt=python");
	nodefix_set(&F, "{s:[s,s,s,s,s,s]}", "args", "-sS", "-o", "/dev/null",
	    "-w",
	    "%{http_code}%{stderr}warn\n", u);
	ck_out("200");
	nodefix_set(&F, "{s:s}", "outputFormat", "stdout+stderr");
	ck_out("200warn\n");
	nodefix_set(&F, "{s:s}", "outputFormat", "full");
	ck_out("{\"stdout\": \"200\", \"stderr\": \"warn\\n\", "
	    "\"returncode\": 0}");
	/* The body itself, and a header with a variable in it, as the
	 * mock saw it. */
	nodefix_set(&F, "{s:s}", "outputFormat", "stdout");
	url(u, sizeof(u), port, "/articles?prompt=zzz");
	nodefix_set(&F, "{s:[s,s,s,s]}", "args", "-sS", "-H",
	    "X-Probe: {name}", u);
	ck_out("{\"detail\":\"No results found for prompt\"}");
	url(u, sizeof(u), port, "/_last");
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", u);
	{
		char	*got = run(false);

		ck_assert_msg(strstr(got, "\"query\": \"prompt=zzz\"") != NULL &&
		    strstr(got, "\"X-Probe\": \"Ann\"") != NULL, "%s", got);
		free(got);
	}
	it_double_stop(mock);
}
END_TEST

START_TEST(real_exit_status)
{
	int	 port = it_dead_port();
	char	 u[128], msg[256];

	url(u, sizeof(u), port, "/");
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", u);
	snprintf(msg, sizeof(msg), "CurlCommand exited with status 7: curl: "
	    "(7) Failed to connect to 127.0.0.1 port %d", port);
	ck_err(msg, true);
	nodefix_set(&F, "{s:s}", "onError", "return");
	nodefix_set(&F, "{s:[s,s,s,s]}", "args", "-sS", "-w", "partial", u);
	ck_out("partial");
	nodefix_set(&F, "{s:s}", "outputFormat", "stdout+stderr");
	{
		char	*got = run(false);

		snprintf(msg, sizeof(msg), "partialcurl: (7) Failed to "
		    "connect to 127.0.0.1 port %d", port);
		ck_assert_msg(strncmp(got, msg, strlen(msg)) == 0, "%s", got);
		free(got);
	}
	nodefix_set(&F, "{s:s}", "outputFormat", "full");
	nodefix_set(&F, "{s:[s,s]}", "args", "-s", u);
	ck_out("{\"stdout\": \"\", \"stderr\": \"\", \"returncode\": 7}");
	ck_assert_int_eq(curl_kids(), 0);
}
END_TEST

/* curl's own --max-filesize (the injected cap) against a known length:
 * exit 63. */
START_TEST(real_max_filesize)
{
	int	 port;
	pid_t	 mock = it_double_start("mock-wiki", NULL, &port);
	char	 u[128];

	url(u, sizeof(u), port, "/articles?prompt=python");
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", u);
	nodefix_set(&F, "{s:i}", "maxResponseBytes", 20);
	/* stderr is kept up to the same cap, silently. */
	ck_err("CurlCommand exited with status 63: curl: (63) Maximum f",
	    false);
	nodefix_set(&F, "{s:i}", "maxResponseBytes", 100);
	ck_err("CurlCommand exited with status 63: curl: (63) Maximum file "
	    "size exceeded", false);
	it_double_stop(mock);
}
END_TEST

#define BODY16	"HTTP/1.0 200 OK\r\n\r\n0123456789abcdef"

/* A body of unknown length past the cap: curl is killed, the cap kept
 * exactly. */
START_TEST(real_cap)
{
	int	 port;
	pid_t	 d = double_start(BODY16, strlen(BODY16), false, &port);
	char	 u[128];

	url(u, sizeof(u), port, "/");
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", u);
	nodefix_set(&F, "{s:i}", "maxResponseBytes", 10);
	ck_err("CurlCommand response exceeded the 10-byte cap "
	    "(maxResponseBytes).", false);
	nodefix_set(&F, "{s:s}", "onError", "return");
	ck_out("CurlCommand response exceeded the 10-byte cap "
	    "(maxResponseBytes).");
	nodefix_set(&F, "{s:s}", "outputFormat", "full");
	ck_out("{\"stdout\": \"0123456789\", \"stderr\": \"\", \"returncode\": "
	    "null, \"error\": \"CurlCommand response exceeded the 10-byte cap "
	    "(maxResponseBytes).\"}");
	/* Within the cap, all of it. */
	nodefix_set(&F, "{s:i, s:s}", "maxResponseBytes", 16, "outputFormat",
	    "stdout");
	ck_out("0123456789abcdef");
	ck_assert_int_eq(curl_kids(), 0);
	double_stop(d);
}
END_TEST

#define BAD8	"HTTP/1.0 200 OK\r\n\r\na\xff" "b\xe2\x82"

START_TEST(real_utf8)
{
	int	 port;
	pid_t	 d = double_start(BAD8, strlen(BAD8), false, &port);
	char	 u[128];

	url(u, sizeof(u), port, "/");
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", u);
	ck_out("a\xef\xbf\xbd" "b\xef\xbf\xbd");
	nodefix_set(&F, "{s:s}", "outputFormat", "full");
	ck_out("{\"stdout\": \"a\\ufffdb\\ufffd\", \"stderr\": \"\", "
	    "\"returncode\": 0}");
	double_stop(d);
}
END_TEST

#define PARTIAL	"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"

START_TEST(real_timeout)
{
	int		 port;
	pid_t		 d = double_start(PARTIAL, strlen(PARTIAL), true, &port);
	char		 u[128];
	uint64_t	 t0 = clock_mono_ms();

	url(u, sizeof(u), port, "/");
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", u);
	nodefix_set(&F, "{s:i}", "timeout", 1);
	ck_err("curl timed out after 1 seconds", false);
	ck_assert_uint_ge(clock_mono_ms() - t0, 1000);
	ck_assert_uint_lt(clock_mono_ms() - t0, 3000);
	ck_assert_int_eq(curl_kids(), 0);
	nodefix_set(&F, "{s:s, s:s}", "timeout", "1", "onError", "return");
	ck_out("curl timed out after 1.0 seconds");
	/* What curl wrote before it was killed (-N: it does not keep
	 * it in its buffer). */
	nodefix_set(&F, "{s:[s,s]}", "args", "-sSN", u);
	nodefix_set(&F, "{s:f, s:s}", "timeout", 0.5, "outputFormat", "full");
	ck_out("{\"stdout\": \"partial\", \"stderr\": \"\", \"returncode\": "
	    "null, \"error\": \"curl timed out after 0.5 seconds\"}");
	ck_assert_int_eq(curl_kids(), 0);
	double_stop(d);
}
END_TEST

/* Cancelled: curl is killed at the next tick, or at once when the
 * gateway's descriptor turns readable. */
START_TEST(real_cancel)
{
	int		 port, p[2];
	pid_t		 d = double_start(PARTIAL, strlen(PARTIAL), true, &port);
	char		 u[128];
	struct buf	 out = BUF_INIT;
	struct wresult	 res;
	bool		 streamed = false;
	uint64_t	 t0 = clock_mono_ms();
	const struct node_type *t = node_type_find("CurlCommand");

	url(u, sizeof(u), port, "/");
	nodefix_set(&F, "{s:[s,s]}", "args", "-sS", u);
	F.nf_rq.fr_cancel_at = 3;
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(t->nt_run(&F.nf_x, &out, &streamed, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_lt(clock_mono_ms() - t0, 2000);
	ck_assert_int_eq(curl_kids(), 0);
	ck_assert_uint_eq(out.b_len, 0);
	/* The descriptor: no tick to wait for. */
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	F.nf_rq.fr_cancel_at = 0;
	F.nf_rq.fr_cancel_on_readable = true;
	F.nf_rq.fr_rq.rq_wake_fd = p[0];
	t0 = clock_mono_ms();
	ck_assert_int_eq(t->nt_run(&F.nf_x, &out, &streamed, &res), -1);
	ck_assert_int_eq(res.r_status, RQ_CANCELLED);
	ck_assert_uint_lt(clock_mono_ms() - t0, 200);
	ck_assert_int_eq(curl_kids(), 0);
	F.nf_rq.fr_rq.rq_wake_fd = -1;
	close(p[0]);
	close(p[1]);
	buf_free(&out);
	double_stop(d);
}
END_TEST

static Suite *
curl_suite(void)
{
	Suite	*s = suite_create("curl");
	TCase	*tc;

	tc = test_case(s, "argv", NULL, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, argv_default);
	tcase_add_test(tc, argv_proxy);
	tcase_add_test(tc, argv_cap);
	tcase_add_test(tc, argv_redirect_guard);
	tcase_add_test(tc, fields);
	tc = test_case(s, "guards", NULL, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, guard_option);
	tcase_add_test(tc, guard_scheme);
	tcase_add_test(tc, guard_private);
	tcase_add_test(tc, guard_not_urls);
	tcase_add_test(tc, guard_allowlist);
	tc = test_case(s, "node", NULL, 20);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, node_no_shell);
	tcase_add_test(tc, node_guard_before_curl);
	tcase_add_test(tc, node_no_curl);
	tc = test_case(s, "real", NULL, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, real_formats);
	tcase_add_test(tc, real_exit_status);
	tcase_add_test(tc, real_max_filesize);
	tcase_add_test(tc, real_cap);
	tcase_add_test(tc, real_utf8);
	tcase_add_test(tc, real_timeout);
	tcase_add_test(tc, real_cancel);
	return s;
}

int
main(void)
{
	return check_main(curl_suite());
}
