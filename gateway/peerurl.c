/* peerurl.c - a peer gateway's address in sluice.json "peers": http://HOST:PORT. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <event2/http.h>

#include "peerurl.h"

static bool
bare(const struct evhttp_uri *u)
{
	const char	*path = evhttp_uri_get_path(u);

	return evhttp_uri_get_userinfo(u) == NULL &&
	    evhttp_uri_get_query(u) == NULL &&
	    evhttp_uri_get_fragment(u) == NULL &&
	    (path == NULL || *path == '\0' || strcmp(path, "/") == 0);
}

int
peerurl_split(const char *s, char *host, size_t hostlen, int *port)
{
	struct evhttp_uri	*u = evhttp_uri_parse(s);
	const char		*h, *scheme;
	int			 r = -1;

	if (u == NULL)
		return -1;
	h = evhttp_uri_get_host(u);
	scheme = evhttp_uri_get_scheme(u);
	*port = evhttp_uri_get_port(u);
	if (scheme != NULL && strcmp(scheme, "http") == 0 && h != NULL &&
	    *h != '\0' && *port > 0 && *port < 65536 && bare(u) &&
	    snprintf(host, hostlen, "%s", h) < (int)hostlen)
		r = 0;
	evhttp_uri_free(u);
	return r;
}

int
peerurl_check_entry(const char *s, char *why, size_t len)
{
	char	 host[256];
	int	 port;

	if (peerurl_split(s, host, sizeof(host), &port) == 0)
		return 0;
	snprintf(why, len, "\"%s\" is not http://HOST:PORT (a peer is "
	    "another gateway's own address)", s);
	return -1;
}
