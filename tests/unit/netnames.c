/* netnames.c - unit tests: what the address guard says of "localhost" on this machine (a bare debootstrap root has no /etc/hosts). */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "netnames.h"

const char *
localhost_refusal(char *out, size_t len)
{
	struct addrinfo	 hints, *res = NULL;
	char		 ip[INET6_ADDRSTRLEN] = "?";
	const void	*a;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo("localhost", NULL, &hints, &res) != 0 || res == NULL) {
		snprintf(out, len, "host 'localhost' could not be resolved");
		return out;
	}
	a = res->ai_family == AF_INET ?
	    (const void *)&((struct sockaddr_in *)(void *)res->ai_addr)->
	    sin_addr : (const void *)&((struct sockaddr_in6 *)(void *)
	    res->ai_addr)->sin6_addr;
	(void)inet_ntop(res->ai_family, a, ip, sizeof(ip));
	freeaddrinfo(res);
	snprintf(out, len, "host 'localhost' resolves to a loopback address "
	    "(%s)", ip);
	return out;
}
