/* check_origin.c - the Host and Origin rules: loopback, the reached address, allowed lists, same site. */
#include <check.h>
#include <string.h>

#include "../../gateway/origin.h"
#include "../testmain.h"

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const kind_names[] = { "malformed", "foreign", "any",
    "listed", "local" };

static void
judge_all(const char *const *hosts, size_t n, const char *local,
    char *const *allowed, enum origin_host want)
{
	enum origin_host	 got;
	size_t			 i;

	for (i = 0; i < n; i++) {
		got = origin_host_judge(hosts[i], local, allowed);
		ck_assert_msg(got == want, "Host \"%s\" (local %s): %s, not %s",
		    hosts[i], local, kind_names[got], kind_names[want]);
	}
}

/* Loopback names and addresses, in every spelling, whatever the port
 * and whatever address the client reached. */
START_TEST(host_loopback)
{
	static const char *const ok[] = { "127.0.0.1:5050", "127.0.0.1",
	    "localhost:5050", "localhost", "LocalHost:5050", "localhost.:5050",
	    "localhost.", "[::1]:5050", "[::1]", "[0:0:0:0:0:0:0:1]:80",
	    "127.1.2.3:9", "[::ffff:127.0.0.1]:5050", "app.localhost:5050",
	    "A.B.LOCALHOST", "127.0.0.1:", "localhost:1", "localhost:65535" };

	judge_all(ok, NELEM(ok), "127.0.0.1:5050", NULL, ORIGIN_HOST_LOCAL);
	judge_all(ok, NELEM(ok), "[::]:5050", NULL, ORIGIN_HOST_LOCAL);
	judge_all(ok, NELEM(ok), "", NULL, ORIGIN_HOST_LOCAL);
}
END_TEST

/* The address the client reached is ours, port or not; another
 * address, or any name, is not. */
START_TEST(host_reached_address)
{
	static const char *const lan[] = { "192.168.1.5:5050", "192.168.1.5",
	    "192.168.1.5:8080" };
	static const char *const other[] = { "192.168.1.6:5050", "10.0.0.2",
	    "[fd00::5]:5050", "mybox:5050", "mybox" };
	static const char *const v4[] = { "10.0.0.2:5050", "10.0.0.2" };
	static const char *const v6[] = { "[FD00::5]:5050", "[fd00:0::5]" };
	static const char *const unix_[] = { "unix", "unix:5050" };

	judge_all(lan, NELEM(lan), "192.168.1.5:5050", NULL,
	    ORIGIN_HOST_LOCAL);
	judge_all(other, NELEM(other), "192.168.1.5:5050", NULL,
	    ORIGIN_HOST_FOREIGN);
	/* a dual-stack socket reports an IPv4 client's end as mapped */
	judge_all(v4, NELEM(v4), "[::ffff:10.0.0.2]:5050", NULL,
	    ORIGIN_HOST_LOCAL);
	judge_all(v6, NELEM(v6), "[fd00::5]:5050", NULL, ORIGIN_HOST_LOCAL);
	judge_all(unix_, NELEM(unix_), "unix", NULL, ORIGIN_HOST_FOREIGN);
}
END_TEST

/* What DNS rebinding sends: the attacker's own name, whatever it
 * resolves to, and names that merely contain ours. */
START_TEST(host_foreign)
{
	static const char *const bad[] = { "evil.example",
	    "evil.example:5050", "localhost.evil.example:5050",
	    "127.0.0.1.evil.example", "evillocalhost:5050", "localhostx",
	    "127.0.0.1.nip.io:5050", "0.0.0.0:5050", "[::]:5050",
	    "2130706433:5050", "127.1:5050" };

	judge_all(bad, NELEM(bad), "127.0.0.1:5050", NULL,
	    ORIGIN_HOST_FOREIGN);
}
END_TEST

START_TEST(host_malformed)
{
	static char *const star[] = { "*", NULL };
	static const char *const bad[] = { "", ":5050", "a b", "a\tb",
	    "evil@127.0.0.1", "[::1", "[::1]x", "[]", "[]:80", "::1",
	    "localhost:99999", "localhost:0", "localhost:-1", "localhost:1x",
	    "localhost:5050:1", ".", "..", "a..b", ".localhost", "a/b",
	    "[fe80::1%25eth0]:5050", "[127.0.0.1]", "localhost:0005050",
	    "http://localhost" };

	judge_all(bad, NELEM(bad), "127.0.0.1:5050", NULL,
	    ORIGIN_HOST_MALFORMED);
	judge_all(bad, NELEM(bad), "127.0.0.1:5050", star,
	    ORIGIN_HOST_MALFORMED);
}
END_TEST

/* allowed_hosts: names and addresses in any case, a port only when the
 * entry has one; "*" admits the rest, below everything named. */
START_TEST(host_allowed)
{
	static char *const list[] = { "Sluice.Example.com", "lan-box:8080",
	    "192.168.1.5", "[FD00::5]", "proxy_up.", NULL };
	static char *const star[] = { "lan-box:8080", "*", NULL };
	static const char *const listed[] = { "sluice.example.com",
	    "SLUICE.example.COM.:443", "lan-box:8080", "192.168.1.5:9",
	    "[fd00::5]:1", "proxy_up", "proxy_up.:5050" };
	static const char *const not[] = { "lan-box", "lan-box:8081",
	    "example.com", "x.sluice.example.com", "192.168.1.50",
	    "other:8080" };
	static const char *const any[] = { "lan-box", "other:1",
	    "evil.example" };
	static const char *const local[] = { "localhost:5050",
	    "127.0.0.1:5050" };

	judge_all(listed, NELEM(listed), "127.0.0.1:5050", list,
	    ORIGIN_HOST_LISTED);
	judge_all(not, NELEM(not), "127.0.0.1:5050", list,
	    ORIGIN_HOST_FOREIGN);
	judge_all(any, NELEM(any), "127.0.0.1:5050", star, ORIGIN_HOST_ANY);
	judge_all(listed + 2, 1, "127.0.0.1:5050", star, ORIGIN_HOST_LISTED);
	judge_all(local, NELEM(local), "127.0.0.1:5050", star,
	    ORIGIN_HOST_LOCAL);
}
END_TEST

/* allowed_origins: scheme, host and port must all match, with each
 * scheme's own port when none is written. */
START_TEST(origin_allowed)
{
	static char *const list[] = { "http://localhost:3000",
	    "https://Chat.Example.com/", "tauri://localhost",
	    "http://[::1]:8080", NULL };
	static char *const star[] = { "*", NULL };
	static const char *const yes[] = { "http://localhost:3000",
	    "HTTP://LOCALHOST:3000", "https://chat.example.com",
	    "https://chat.example.com:443", "tauri://localhost",
	    "http://[0::1]:8080" };
	static const char *const no[] = { "http://localhost:3001",
	    "https://localhost:3000", "http://chat.example.com",
	    "https://chat.example.com:8443", "https://evil.example",
	    "http://localhost:3000/", "http://localhost:3000.evil.example",
	    "http://localhost:3000 http://evil.example", "null",
	    "localhost:3000", "", "tauri://localhost:1", "http://[::1]" };
	size_t	 i;

	for (i = 0; i < NELEM(yes); i++)
		ck_assert_msg(origin_listed(yes[i], list), "%s", yes[i]);
	for (i = 0; i < NELEM(no); i++)
		ck_assert_msg(!origin_listed(no[i], list), "%s", no[i]);
	ck_assert(!origin_listed("http://localhost:3000", NULL));
	ck_assert(origin_listed("http://anything.example", star));
	ck_assert(origin_listed("null", star));
	ck_assert(!origin_listed("not an origin", star));
	ck_assert(!origin_listed("", star));
}
END_TEST

/* The gateway's own site as the client named it in Host. */
START_TEST(origin_same_site_rule)
{
	static const char *const yes[][2] = {
		{ "http://127.0.0.1:5050", "127.0.0.1:5050" },
		{ "http://localhost:5050", "LOCALHOST.:5050" },
		{ "https://ai.example.com", "ai.example.com" },
		{ "http://ai.example.com", "ai.example.com" },
		{ "https://ai.example.com", "ai.example.com:443" },
		{ "http://[::1]:5050", "[::1]:5050" },
	};
	static const char *const no[][2] = {
		{ "http://ai.example.com", "ai.example.com:443" },
		{ "http://127.0.0.1:5051", "127.0.0.1:5050" },
		{ "http://evil.example:5050", "127.0.0.1:5050" },
		{ "http://localhost:5050", "127.0.0.1:5050" },
		{ "tauri://localhost", "localhost" },
		{ "null", "localhost" },
		{ "http://localhost:5050", "" },
	};
	size_t	 i;

	for (i = 0; i < NELEM(yes); i++)
		ck_assert_msg(origin_same_site(yes[i][0], yes[i][1]),
		    "%s for %s", yes[i][0], yes[i][1]);
	for (i = 0; i < NELEM(no); i++)
		ck_assert_msg(!origin_same_site(no[i][0], no[i][1]),
		    "%s for %s", no[i][0], no[i][1]);
}
END_TEST

START_TEST(origin_form)
{
	ck_assert(origin_well_formed("null"));
	ck_assert(origin_well_formed("http://a"));
	ck_assert(origin_well_formed("chrome-extension://abcdef"));
	ck_assert(!origin_well_formed("a"));
	ck_assert(!origin_well_formed("http://a b"));
	ck_assert(!origin_well_formed("http://a/"));
	ck_assert(!origin_well_formed("1http://a"));
	ck_assert(!origin_well_formed("://a"));
}
END_TEST

/* What the settings accept, and that a refusal names the entry. */
START_TEST(entries_checked)
{
	static const char *const hosts_ok[] = { "*", "example.com",
	    "example.com:8080", "[::1]", "10.0.0.1", "box." };
	static const char *const hosts_bad[] = { "", "http://example.com",
	    "example.com/", "*.example.com", "a b", "example.com:0" };
	static const char *const origins_ok[] = { "*",
	    "http://localhost:3000", "https://x.example/",
	    "chrome-extension://abcdef", "http://[::1]:8080" };
	static const char *const origins_bad[] = { "localhost:3000",
	    "http://x.example/path", "", "http://", "https://x.example?q",
	    "*.example.com" };
	char	 err[256];
	size_t	 i;

	for (i = 0; i < NELEM(hosts_ok); i++)
		ck_assert_msg(origin_check_host_entry(hosts_ok[i], err,
		    sizeof(err)) == 0, "%s", hosts_ok[i]);
	for (i = 0; i < NELEM(hosts_bad); i++) {
		ck_assert_msg(origin_check_host_entry(hosts_bad[i], err,
		    sizeof(err)) == -1, "%s", hosts_bad[i]);
		ck_assert_msg(strstr(err, hosts_bad[i]) != NULL, "%s", err);
	}
	for (i = 0; i < NELEM(origins_ok); i++)
		ck_assert_msg(origin_check_origin_entry(origins_ok[i], err,
		    sizeof(err)) == 0, "%s", origins_ok[i]);
	for (i = 0; i < NELEM(origins_bad); i++) {
		ck_assert_msg(origin_check_origin_entry(origins_bad[i], err,
		    sizeof(err)) == -1, "%s", origins_bad[i]);
		ck_assert_msg(strstr(err, origins_bad[i]) != NULL, "%s", err);
	}
	ck_assert_int_eq(origin_check_origin_entry("null", err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "sandboxed"));
}
END_TEST

static Suite *
origin_suite(void)
{
	const struct {
		const char	*name;
		const TTest	*fn;
	} cases[] = {
		{ "host_loopback", host_loopback },
		{ "host_reached_address", host_reached_address },
		{ "host_foreign", host_foreign },
		{ "host_malformed", host_malformed },
		{ "host_allowed", host_allowed },
		{ "origin_allowed", origin_allowed },
		{ "origin_same_site", origin_same_site_rule },
		{ "origin_form", origin_form },
		{ "entries_checked", entries_checked },
	};
	Suite	*s = suite_create("origin");
	TCase	*tc;
	size_t	 i;

	for (i = 0; i < NELEM(cases); i++) {
		tc = tcase_create(cases[i].name);
		tcase_add_test(tc, cases[i].fn);
		suite_add_tcase(s, tc);
	}
	return s;
}

int
main(void)
{
	return check_main(origin_suite());
}
