/* failover.c - WilmerAI's rule for remote backups: a public address needs the backup's consent. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "failover.h"
#include "url.h"

static bool
v4_private(uint32_t a)
{
	return (a >> 24) == 127 || (a >> 24) == 10 ||
	    (a >> 20) == (172u << 4 | 1) || (a >> 16) == (192u << 8 | 168) ||
	    (a >> 16) == (169u << 8 | 254) || a == 0;
}

static bool
v6_private(const struct in6_addr *a)
{
	const unsigned char	*b = a->s6_addr;
	uint32_t		 v4;

	if (IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a) ||
	    (b[0] & 0xfe) == 0xfc)		/* fc00::/7 unique local */
		return true;
	if (IN6_IS_ADDR_V4MAPPED(a)) {
		memcpy(&v4, b + 12, 4);
		return v4_private(ntohl(v4));
	}
	return false;
}

static bool
sa_private(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_private(ntohl(((const struct sockaddr_in *)
		    (const void *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return v6_private(&((const struct sockaddr_in6 *)
		    (const void *)sa)->sin6_addr);
	return false;
}

/* libcurl answers "localhost" and every name under it with the
 * loopback addresses itself, without asking the resolver. */
static bool
is_localhost(const char *host)
{
	size_t	 n = strlen(host);

	return strcasecmp(host, "localhost") == 0 || (n > 10 &&
	    strcasecmp(host + n - 10, ".localhost") == 0);
}

enum failover_where
failover_where(const char *url)
{
	char		 host[256];
	struct addrinfo	 hints, *res, *ai;
	bool		 private = true;

	if (url_host(url, host, sizeof(host)) == -1)
		return FO_UNKNOWN;
	if (is_localhost(host))
		return FO_LOCAL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return FO_UNKNOWN;
	for (ai = res; ai != NULL; ai = ai->ai_next)
		private = private && sa_private(ai->ai_addr);
	freeaddrinfo(res);
	return private ? FO_LOCAL : FO_REMOTE;
}
