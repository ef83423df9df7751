/* netguard.c - the address guard of WilmerAI's WebFetch and CurlCommand: allowlist, private and non-global addresses (addendum A3.2). */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "../llm/url.h"
#include "netguard.h"

/*
 * The families are Python's ipaddress predicates (3.12.4 and later, the
 * CVE-2024-4032 tables), asked in WilmerAI's order so the first match
 * names the address: loopback, link-local, unspecified, multicast,
 * reserved, private; then anything not globally routable.
 *
 * Differences from WilmerAI, on purpose:
 * - the host is the one libcurl parses out of the URL, the parser
 *   that connects, so a URL Python and libcurl read differently
 *   ("http://a\@b/") is judged by where it would go; an IPv4 address
 *   written as one number (2130706433) is judged as libcurl's dotted
 *   form (127.0.0.1), a literal;
 * - IPv6 site-local space (fec0::/10, deprecated), which Python counts
 *   as global, is refused as "site-local".
 */

struct net {
	const char	*n_addr;	/* network address, text */
	unsigned	 n_len;		/* prefix length */
};

#define END	{ NULL, 0 }

static const struct net v4_loop[] = { { "127.0.0.0", 8 }, END };
static const struct net v4_link[] = { { "169.254.0.0", 16 }, END };
static const struct net v4_unspec[] = { { "0.0.0.0", 32 }, END };
static const struct net v4_multi[] = { { "224.0.0.0", 4 }, END };
static const struct net v4_resv[] = { { "240.0.0.0", 4 }, END };
static const struct net v4_priv[] = {
	{ "0.0.0.0", 8 }, { "10.0.0.0", 8 }, { "127.0.0.0", 8 },
	{ "169.254.0.0", 16 }, { "172.16.0.0", 12 }, { "192.0.0.0", 24 },
	{ "192.0.0.170", 31 }, { "192.0.2.0", 24 }, { "192.168.0.0", 16 },
	{ "198.18.0.0", 15 }, { "198.51.100.0", 24 }, { "203.0.113.0", 24 },
	{ "240.0.0.0", 4 }, { "255.255.255.255", 32 }, END };
static const struct net v4_priv_not[] = {
	{ "192.0.0.9", 32 }, { "192.0.0.10", 32 }, END };
static const struct net v4_shared[] = { { "100.64.0.0", 10 }, END };

static const struct net v6_loop[] = { { "::1", 128 }, END };
static const struct net v6_link[] = { { "fe80::", 10 }, END };
static const struct net v6_unspec[] = { { "::", 128 }, END };
static const struct net v6_multi[] = { { "ff00::", 8 }, END };
static const struct net v6_resv[] = {
	{ "::", 8 }, { "100::", 8 }, { "200::", 7 }, { "400::", 6 },
	{ "800::", 5 }, { "1000::", 4 }, { "4000::", 3 }, { "6000::", 3 },
	{ "8000::", 3 }, { "a000::", 3 }, { "c000::", 3 }, { "e000::", 4 },
	{ "f000::", 5 }, { "f800::", 6 }, { "fe00::", 9 }, END };
static const struct net v6_priv[] = {
	{ "::1", 128 }, { "::", 128 }, { "::ffff:0:0", 96 },
	{ "64:ff9b:1::", 48 }, { "100::", 64 }, { "2001::", 23 },
	{ "2001:db8::", 32 }, { "2002::", 16 }, { "3fff::", 20 },
	{ "fc00::", 7 }, { "fe80::", 10 }, END };
static const struct net v6_priv_not[] = {
	{ "2001:1::1", 128 }, { "2001:1::2", 128 }, { "2001:3::", 32 },
	{ "2001:4:112::", 48 }, { "2001:20::", 28 }, { "2001:30::", 28 },
	END };
static const struct net v6_site[] = { { "fec0::", 10 }, END };

/* Is the address a (len bytes, network order) in one of the nets? */
static bool
in_nets(const uint8_t *a, size_t len, int af, const struct net *nets)
{
	uint8_t		 n[16];
	unsigned	 bits, i;

	for (; nets->n_addr != NULL; nets++) {
		if (inet_pton(af, nets->n_addr, n) != 1)
			continue;
		bits = nets->n_len;
		for (i = 0; i < len && bits >= 8; i++, bits -= 8)
			if (a[i] != n[i])
				break;
		if (i < len && bits >= 8)
			continue;
		if (bits == 0 || i == len ||
		    ((a[i] ^ n[i]) & (uint8_t)(0xff << (8 - bits))) == 0)
			return true;
	}
	return false;
}

static const char *
family4(const uint8_t a[4])
{
	if (in_nets(a, 4, AF_INET, v4_loop))
		return "loopback";
	if (in_nets(a, 4, AF_INET, v4_link))
		return "link-local";
	if (in_nets(a, 4, AF_INET, v4_unspec))
		return "unspecified";
	if (in_nets(a, 4, AF_INET, v4_multi))
		return "multicast";
	if (in_nets(a, 4, AF_INET, v4_resv))
		return "reserved";
	if (in_nets(a, 4, AF_INET, v4_priv) &&
	    !in_nets(a, 4, AF_INET, v4_priv_not))
		return "private";
	if (in_nets(a, 4, AF_INET, v4_shared))
		return "non-global";
	return NULL;
}

static const char *
family6(const uint8_t a[16])
{
	static const uint8_t	 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(a, mapped, sizeof(mapped)) == 0)
		return family4(a + 12);
	if (in_nets(a, 16, AF_INET6, v6_loop))
		return "loopback";
	if (in_nets(a, 16, AF_INET6, v6_link))
		return "link-local";
	if (in_nets(a, 16, AF_INET6, v6_unspec))
		return "unspecified";
	if (in_nets(a, 16, AF_INET6, v6_multi))
		return "multicast";
	if (in_nets(a, 16, AF_INET6, v6_resv))
		return "reserved";
	if (in_nets(a, 16, AF_INET6, v6_priv) &&
	    !in_nets(a, 16, AF_INET6, v6_priv_not))
		return "private";
	if (in_nets(a, 16, AF_INET6, v6_site))
		return "site-local";
	return NULL;
}

const char *
netguard_family(const struct sockaddr *sa)
{
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;

	if (sa->sa_family == AF_INET) {
		s4 = (const struct sockaddr_in *)(const void *)sa;
		return family4((const uint8_t *)&s4->sin_addr);
	}
	if (sa->sa_family == AF_INET6) {
		s6 = (const struct sockaddr_in6 *)(const void *)sa;
		return family6(s6->sin6_addr.s6_addr);
	}
	return "unspecified";
}

bool
netguard_active(const struct netguard *g)
{
	return g->ng_private || (g->ng_hosts != NULL && g->ng_hosts[0] != NULL);
}

/* "host 'H' " into why. */
static void
host_said(struct buf *why, const char *host)
{
	buf_adds(why, "host ");
	pyfmt_repr_str(why, host, strlen(host));
	buf_addc(why, ' ');
}

/* The address of sa as text (an IPv4-mapped one as Python 3.13 prints
 * it, ::ffff:a.b.c.d). */
static void
addr_text(const struct sockaddr *sa, char *out, size_t len)
{
	const void	*a;

	a = sa->sa_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)(const void *)sa)->
	    sin_addr : (const void *)&((const struct sockaddr_in6 *)
	    (const void *)sa)->sin6_addr;
	if (inet_ntop(sa->sa_family, a, out, (socklen_t)len) == NULL)
		(void)snprintf(out, len, "?");
}

int
netguard_connect(const struct netguard *g, const char *host,
    const struct sockaddr *sa, struct buf *why)
{
	const char	*fam;
	char		 ip[INET6_ADDRSTRLEN];

	if (!g->ng_private || (fam = netguard_family(sa)) == NULL)
		return 0;
	addr_text(sa, ip, sizeof(ip));
	host_said(why, host);
	buf_printf(why, "resolves to a %s address (%s)", fam, ip);
	return -1;
}

/* An IP literal's family into *fam: 1 when host is one, 0 if not. */
static int
literal(const char *host, const char **fam)
{
	uint8_t	 a[16];

	if (inet_pton(AF_INET, host, a) == 1) {
		*fam = family4(a);
		return 1;
	}
	if (inet_pton(AF_INET6, host, a) == 1) {
		*fam = family6(a);
		return 1;
	}
	return 0;
}

/* Every address host resolves to, judged. */
static int
resolved(const struct netguard *g, const char *host, struct buf *why)
{
	struct addrinfo		 hints, *res = NULL, *ai;
	int			 r = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || res == NULL) {
		host_said(why, host);
		buf_adds(why, "could not be resolved");
		return -1;
	}
	for (ai = res; ai != NULL && r == 0; ai = ai->ai_next)
		r = netguard_connect(g, host, ai->ai_addr, why);
	freeaddrinfo(res);
	return r;
}

/* Is host on the allowlist? */
static bool
listed(const struct netguard *g, const char *host)
{
	size_t	 i;

	for (i = 0; g->ng_hosts[i] != NULL; i++)
		if (strcmp(g->ng_hosts[i], host) == 0)
			return true;
	return false;
}

int
netguard_check(const struct netguard *g, const char *url, struct buf *why)
{
	const char	*fam = NULL;
	char		 host[512], *p;

	if (!netguard_active(g))
		return 0;
	if (url_host(url, host, sizeof(host)) == -1 || host[0] == '\0') {
		buf_adds(why, "could not determine a host from URL ");
		pyfmt_repr_str(why, url, strlen(url));
		return -1;
	}
	for (p = host; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	if (g->ng_hosts != NULL && g->ng_hosts[0] != NULL &&
	    !listed(g, host)) {
		host_said(why, host);
		buf_adds(why, "is not in the configured allowedHosts list");
		return -1;
	}
	if (!g->ng_private)
		return 0;
	if (!literal(host, &fam))
		return resolved(g, host, why);
	if (fam == NULL)
		return 0;
	host_said(why, host);
	buf_printf(why, "is a %s address", fam);
	return -1;
}
