/* check_urls.c - endpoint URLs as libcurl reads them: hosts, shown URLs without credentials, failover's local or remote. */
#include <check.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "../../worker/llm/failover.h"
#include "../../worker/llm/url.h"
#include "../testmain.h"

/* url_host(url) is want (NULL: -1). */
static void
ck_host(const char *url, const char *want)
{
	char	 host[256];
	int	 rc;

	memset(host, 'x', sizeof(host));
	rc = url_host(url, host, sizeof(host));
	if (want == NULL) {
		ck_assert_msg(rc == -1, "%s: host '%.*s', want none", url,
		    (int)sizeof(host) - 1, host);
		return;
	}
	ck_assert_msg(rc == 0, "%s: no host, want '%s'", url, want);
	ck_assert_msg(strcmp(host, want) == 0, "%s: host '%s', want '%s'",
	    url, host, want);
}

/* url_shown(url) is want. */
static void
ck_shown(const char *url, const char *want)
{
	char	 out[256];

	url_shown(url, out, sizeof(out));
	ck_assert_msg(strcmp(out, want) == 0, "%s: shown '%s', want '%s'",
	    url, out, want);
}

START_TEST(host_where_libcurl_connects)
{
	ck_host("http://127.0.0.1:5000", "127.0.0.1");
	ck_host("https://api.example.com/v1/chat", "api.example.com");
	ck_host("http://Host.Example.:8/", "Host.Example.");
	ck_host("http://localhost./", "localhost.");
	ck_host("HTTP://LOCALHOST:1/", "LOCALHOST");
	/* IPv6: no brackets, the zone apart */
	ck_host("http://[::1]:8080/v1", "::1");
	ck_host("http://[fe80::1%25eth0]:80/", "fe80::1");
	ck_host("https://u:p@[::ffff:127.0.0.1]:9/a?b#c",
	    "::ffff:127.0.0.1");
	/* the userinfo ends at the first '@', and ':' may be in it */
	ck_host("http://user:pa:ss@host:1/x", "host");
	ck_host("http://u%40x:p%3Aq@host/", "host");
	ck_host("http://8.8.8.8@127.0.0.1/", "127.0.0.1");
	ck_host("http://127.0.0.1#@8.8.8.8/", "127.0.0.1");
	ck_host("http://127.0.0.1?@8.8.8.8/", "127.0.0.1");
	ck_host("http://h/p@8.8.8.8", "h");
	/* no scheme: guessed, as CURLOPT_URL does */
	ck_host("localhost:5000", "localhost");
	ck_host("user:pw@host:1/x", "host");
	ck_host("garbage", "garbage");
	/* IPv4 as libcurl normalises it */
	ck_host("http://0x7f.1/", "127.0.0.1");
	ck_host("http://2130706433/", "127.0.0.1");
}
END_TEST

START_TEST(host_none)
{
	char	 small[4];

	ck_host(NULL, NULL);
	ck_host("", NULL);
	ck_host("http://", NULL);
	ck_host("http://[::1/", NULL);
	ck_host("http://a@b@c/", NULL);
	ck_host("http://us@er:pw@host/x", NULL);
	ck_host("http://h h/", NULL);
	ck_host("http://host:99999/", NULL);
	ck_host(" http://h/", NULL);
	ck_assert_int_eq(url_host("http://abcd/", small, sizeof(small)), -1);
	ck_assert_int_eq(url_host("http://abc/", small, sizeof(small)), 0);
	ck_assert_str_eq(small, "abc");
}
END_TEST

/* An IDN is connected to in punycode, which libcurl (libidn2) makes
 * only in a UTF-8 locale; in the C locale, where the worker runs, its
 * transfer fails and there is no host. */
START_TEST(host_idn)
{
	ck_host("http://xn--bcher-kva.example/", "xn--bcher-kva.example");
	ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C"));
	ck_host("http://b\xc3\xbc" "cher.example/", NULL);
	if (setlocale(LC_CTYPE, "C.UTF-8") == NULL)
		return;
	ck_host("http://b\xc3\xbc" "cher.example/", "xn--bcher-kva.example");
}
END_TEST

START_TEST(shown_without_credentials)
{
	/* as written when there is nothing to hide */
	ck_shown("http://127.0.0.1:5000", "http://127.0.0.1:5000");
	ck_shown("http://h/p@q", "http://h/p@q");
	ck_shown("http://h:1?q=a@b", "http://h:1?q=a@b");
	ck_shown("http://127.0.0.1#@8.8.8.8/", "http://127.0.0.1#@8.8.8.8/");
	ck_shown("garbage", "garbage");
	ck_shown("http://host:99999/", "http://host:99999/");
	ck_shown(NULL, "");
	/* user, password, options, even empty: "***" */
	ck_shown("http://user:pw@host:1/v1", "http://***@host:1/v1");
	ck_shown("http://user:pa:ss@host", "http://***@host/");
	ck_shown("http://u%40x:p%3Aq@host/a", "http://***@host/a");
	ck_shown("https://u:p@[fe80::1%25eth0]:9/a?b#c",
	    "https://***@[fe80::1%25eth0]:9/a?b#c");
	ck_shown("HTTP://U:P@H/", "http://***@H/");
	ck_shown("http://@h/", "http://***@h/");
	ck_shown("http://:pw@h/", "http://***@h/");
	ck_shown("http://8.8.8.8@127.0.0.1/", "http://***@127.0.0.1/");
	/* no scheme: the credentials are hidden too */
	ck_shown("user:pw@host:1/x", "http://***@host:1/x");
	/* libcurl cannot parse it, and an '@' might start a host */
	ck_shown("http://us@er:pw@host/x", URL_HIDDEN);
	ck_shown("http://u:p@h/a b", URL_HIDDEN);
}
END_TEST

START_TEST(shown_cut)
{
	char	 out[12];

	url_shown("http://user:pw@host:1/v1", out, sizeof(out));
	ck_assert_str_eq(out, "http://***@");
	url_shown("http://127.0.0.1:5000", out, sizeof(out));
	ck_assert_str_eq(out, "http://127.");
}
END_TEST

struct where {
	const char		*wh_url;
	enum failover_where	 wh_want;
};

/* Addresses only: names would ask the resolver. */
static const struct where addresses[] = {
	{ "http://127.0.0.1:5000", FO_LOCAL },
	{ "127.0.0.1:5000", FO_LOCAL },
	{ "http://10.1.2.3/", FO_LOCAL },
	{ "http://172.16.0.1/", FO_LOCAL },
	{ "http://192.168.1.1/", FO_LOCAL },
	{ "http://169.254.0.1/", FO_LOCAL },
	{ "http://[::1]:8080/v1", FO_LOCAL },
	{ "http://[fe80::1%25eth0]/", FO_LOCAL },
	{ "http://[fd00::1]/", FO_LOCAL },
	{ "http://[::ffff:10.0.0.1]/", FO_LOCAL },
	{ "http://0x7f.1/", FO_LOCAL },
	{ "http://u:p@127.0.0.1/", FO_LOCAL },
	{ "http://8.8.8.8/", FO_REMOTE },
	{ "8.8.8.8:80", FO_REMOTE },
	{ "http://172.32.0.1/", FO_REMOTE },
	{ "http://[2001:4860::8888]/", FO_REMOTE },
	{ "http://[::ffff:8.8.8.8]/", FO_REMOTE },
	/* the userinfo is not the host, whichever looks like an address */
	{ "http://127.0.0.1@8.8.8.8/", FO_REMOTE },
	{ "http://8.8.8.8@127.0.0.1/", FO_LOCAL },
	{ "http://127.0.0.1#@8.8.8.8/", FO_LOCAL },
	/* libcurl's own loopback names, any case */
	{ "http://localhost:5000", FO_LOCAL },
	{ "http://LocalHost/", FO_LOCAL },
	{ "http://llm.localhost:9/", FO_LOCAL },
	{ "localhost:5000", FO_LOCAL },
	/* what libcurl cannot parse it cannot reach */
	{ "", FO_UNKNOWN },
	{ "http://", FO_UNKNOWN },
	{ "http://[::1/", FO_UNKNOWN },
	{ "http://us@er:pw@8.8.8.8/", FO_UNKNOWN },
	{ "http://h h/", FO_UNKNOWN },
};

START_TEST(failover_where_is_the_host)
{
	const struct where	*w = &addresses[_i];

	ck_assert_msg(failover_where(w->wh_url) == w->wh_want, "%s: %d, want "
	    "%d", w->wh_url, failover_where(w->wh_url), w->wh_want);
}
END_TEST

/* "localhost." goes to the resolver, as in libcurl: never public. */
START_TEST(failover_localhost_dot)
{
	ck_assert_int_ne(failover_where("http://localhost./"), FO_REMOTE);
}
END_TEST

static Suite *
urls_suite(void)
{
	Suite	*s = suite_create("urls");
	TCase	*tc = tcase_create("host");

	tcase_add_test(tc, host_where_libcurl_connects);
	tcase_add_test(tc, host_none);
	tcase_add_test(tc, host_idn);
	suite_add_tcase(s, tc);
	tc = tcase_create("shown");
	tcase_add_test(tc, shown_without_credentials);
	tcase_add_test(tc, shown_cut);
	suite_add_tcase(s, tc);
	tc = tcase_create("failover");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, failover_where_is_the_host, 0,
	    (int)(sizeof(addresses) / sizeof(addresses[0])));
	tcase_add_test(tc, failover_localhost_dot);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(urls_suite());
}
