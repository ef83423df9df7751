/* check_netguard.c - WilmerAI's address guard: which addresses are refused, under which name, and the reasons it gives (addendum A3.2). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <string.h>

#include "../../worker/tools/netguard.h"
#include "../testmain.h"
#include "netnames.h"

/* A buffer's text ("" when empty). */
#define S(b)	((b).b_data != NULL ? (b).b_data : "")

/* The address ip (IPv4 or IPv6 text) as a socket address in ss. */
static const struct sockaddr *
sa_of(const char *ip, struct sockaddr_storage *ss)
{
	struct sockaddr_in	*s4 = (struct sockaddr_in *)(void *)ss;
	struct sockaddr_in6	*s6 = (struct sockaddr_in6 *)(void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1)
		s4->sin_family = AF_INET;
	else {
		ck_assert_msg(inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1,
		    "bad address %s", ip);
		s6->sin6_family = AF_INET6;
	}
	return (const struct sockaddr *)ss;
}

/* Addresses and the family Python's ipaddress (3.12.4+) names first in
 * WilmerAI's order; NULL: globally routable. */
static const struct {
	const char	*ip, *fam;
} families[] = {
	{ "127.0.0.1", "loopback" }, { "127.255.0.9", "loopback" },
	{ "169.254.169.254", "link-local" }, { "0.0.0.0", "unspecified" },
	{ "224.0.0.1", "multicast" }, { "240.0.0.1", "reserved" },
	{ "255.255.255.255", "reserved" }, { "0.1.2.3", "private" },
	{ "10.1.2.3", "private" }, { "172.16.0.1", "private" },
	{ "172.31.255.255", "private" }, { "172.32.0.1", NULL },
	{ "192.168.1.1", "private" }, { "192.0.2.1", "private" },
	{ "198.18.0.1", "private" }, { "203.0.113.9", "private" },
	{ "192.0.0.9", NULL }, { "192.0.0.10", NULL },
	{ "192.0.0.8", "private" }, { "192.0.0.200", "private" },
	{ "100.64.0.1", "non-global" }, { "100.128.0.1", NULL },
	{ "8.8.8.8", NULL }, { "1.1.1.1", NULL },
	{ "::1", "loopback" }, { "::", "unspecified" },
	{ "fe80::1", "link-local" }, { "ff02::1", "multicast" },
	{ "::ffff:127.0.0.1", "loopback" }, { "::ffff:10.0.0.1", "private" },
	{ "::ffff:169.254.169.254", "link-local" }, { "::ffff:8.8.8.8", NULL },
	{ "::127.0.0.1", "reserved" }, { "64:ff9b::a00:1", "reserved" },
	{ "fc00::1", "private" }, { "fd12:3456::1", "private" },
	{ "2001:db8::1", "private" }, { "2002::1", "private" },
	{ "2001::1", "private" }, { "2001:3::1", NULL },
	{ "fec0::1", "site-local" }, { "2606:4700::1111", NULL },
	{ "2001:4860:4860::8888", NULL },
};

START_TEST(family_as_python_names_it)
{
	struct sockaddr_storage	 ss;
	const char		*got;

	got = netguard_family(sa_of(families[_i].ip, &ss));
	if (families[_i].fam == NULL)
		ck_assert_msg(got == NULL, "%s: %s, want global",
		    families[_i].ip, got);
	else
		ck_assert_msg(got != NULL && strcmp(got, families[_i].fam) ==
		    0, "%s: %s, want %s", families[_i].ip,
		    got ? got : "global", families[_i].fam);
}
END_TEST

/* netguard_check(g, url) gives want (NULL: allowed). */
static void
ck_url(const struct netguard *g, const char *url, const char *want)
{
	struct buf	 why = BUF_INIT;
	int		 rc = netguard_check(g, url, &why);

	if (want == NULL)
		ck_assert_msg(rc == 0, "%s refused: %s", url, S(why));
	else {
		ck_assert_msg(rc == -1, "%s allowed", url);
		ck_assert_msg(strcmp(S(why), want) == 0, "%s: '%s', want '%s'",
		    url, S(why), want);
	}
	buf_free(&why);
}

START_TEST(private_addresses_refused)
{
	struct netguard	 g = { true, NULL };

	ck_url(&g, "http://127.0.0.1:8080/x",
	    "host '127.0.0.1' is a loopback address");
	ck_url(&g, "http://169.254.169.254/latest/meta-data/",
	    "host '169.254.169.254' is a link-local address");
	ck_url(&g, "https://10.0.0.1/", "host '10.0.0.1' is a private address");
	ck_url(&g, "http://user:pw@10.9.8.7/",
	    "host '10.9.8.7' is a private address");
	ck_url(&g, "http://[::ffff:127.0.0.1]:9/",
	    "host '::ffff:127.0.0.1' is a loopback address");
	ck_url(&g, "http://[::1]/", "host '::1' is a loopback address");
	/* one number, hex, short forms: libcurl's dotted form is judged */
	ck_url(&g, "http://2130706433/", "host '127.0.0.1' is a loopback "
	    "address");
	ck_url(&g, "http://0x7f.1/", "host '127.0.0.1' is a loopback address");
	ck_url(&g, "http://0/", "host '0.0.0.0' is a unspecified address");
	ck_url(&g, "http://100.64.1.1/",
	    "host '100.64.1.1' is a non-global address");
	ck_url(&g, "http://8.8.8.8/", NULL);
	ck_url(&g, "http://[2606:4700::1111]/", NULL);
	ck_url(&g, "no host here", "could not determine a host from URL "
	    "'no host here'");
}
END_TEST

START_TEST(names_resolved_and_judged)
{
	struct netguard	 g = { true, NULL };
	char		 want[128];

	ck_url(&g, "http://localhost:1/", localhost_refusal(want,
	    sizeof(want)));
	ck_url(&g, "http://no-such-host.invalid/",
	    "host 'no-such-host.invalid' could not be resolved");
}
END_TEST

START_TEST(allowlist_by_name)
{
	char		*hosts[] = { "example.com", "127.0.0.1", NULL };
	struct netguard	 list = { false, hosts }, both = { true, hosts };
	struct netguard	 off = { false, NULL };
	char		*none[] = { NULL };
	struct netguard	 empty = { false, none };

	ck_assert(netguard_active(&list));
	ck_assert(!netguard_active(&off));
	ck_assert(!netguard_active(&empty));
	ck_url(&off, "http://10.0.0.1/", NULL);
	ck_url(&off, "no host here", NULL);
	ck_url(&list, "http://EXAMPLE.com:8443/a?b", NULL);
	ck_url(&list, "http://example.org/",
	    "host 'example.org' is not in the configured allowedHosts list");
	ck_url(&list, "http://localhost:1/",
	    "host 'localhost' is not in the configured allowedHosts list");
	ck_url(&list, "http://127.0.0.1:1/", NULL);
	ck_url(&both, "http://127.0.0.1:1/",
	    "host '127.0.0.1' is a loopback address");
}
END_TEST

START_TEST(connect_time_address)
{
	struct sockaddr_storage	 ss;
	struct netguard		 g = { true, NULL }, off = { false, NULL };
	struct buf		 why = BUF_INIT;

	ck_assert_int_eq(netguard_connect(&g, "rebind.example",
	    sa_of("10.0.0.5", &ss), &why), -1);
	ck_assert_str_eq(S(why), "host 'rebind.example' resolves to a private "
	    "address (10.0.0.5)");
	buf_reset(&why);
	ck_assert_int_eq(netguard_connect(&g, "h", sa_of("::ffff:127.0.0.1",
	    &ss), &why), -1);
	ck_assert_str_eq(S(why), "host 'h' resolves to a loopback address "
	    "(::ffff:127.0.0.1)");
	buf_reset(&why);
	ck_assert_int_eq(netguard_connect(&g, "h", sa_of("8.8.4.4", &ss),
	    &why), 0);
	ck_assert_int_eq(netguard_connect(&off, "h", sa_of("127.0.0.1", &ss),
	    &why), 0);
	ck_assert_uint_eq(why.b_len, 0);
	buf_free(&why);
}
END_TEST

static Suite *
netguard_suite(void)
{
	Suite	*s = suite_create("netguard");
	TCase	*tc = test_case(s, "family", NULL, 0);

	tcase_add_loop_test(tc, family_as_python_names_it, 0,
	    (int)(sizeof(families) / sizeof(families[0])));
	test_case(s, "literal", private_addresses_refused, 0);
	test_case(s, "resolved", names_resolved_and_judged, 30);
	test_case(s, "allowlist", allowlist_by_name, 0);
	test_case(s, "connect", connect_time_address, 0);
	return s;
}

int
main(void)
{
	return check_main(netguard_suite());
}
