/* origin.c - which Host and Origin header values name this gateway or a site it trusts. */
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "origin.h"

#define NAME_MAX_BYTES	253	/* a DNS name, without its final dot */
#define SCHEME_MAX	32

/*
 * A host and port as RFC 3986 writes them: "name", "1.2.3.4" or "[v6]",
 * then ":port" or nothing. Names compare in lower case without a final
 * dot ("LocalHost." is "localhost"); IPv4 addresses are kept as
 * IPv4-mapped IPv6 so that a dual-stack socket's "[::ffff:1.2.3.4]"
 * equals "1.2.3.4".
 */
struct authority {
	char		 a_name[NAME_MAX_BYTES + 1];
	bool		 a_ip;
	unsigned char	 a_addr[16];
	unsigned	 a_port;	/* 0: none given */
};

struct origin {
	char		 o_scheme[SCHEME_MAX];
	struct authority o_auth;	/* a_port: the scheme's own if none */
};

static bool
name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_';
}

/* ":port" or ":" (RFC 3986 allows an empty port) or nothing at all. */
static int
port_parse(const char *s, size_t n, unsigned *port)
{
	size_t	 i;

	*port = 0;
	if (n == 0)
		return 0;
	if (s[0] != ':' || n > 6)
		return -1;
	for (i = 1; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*port = *port * 10 + (unsigned)(s[i] - '0');
	}
	return n == 1 || (*port >= 1 && *port <= 65535) ? 0 : -1;
}

/* A name (or dotted IPv4) of n bytes: lower-cased, final dot dropped. */
static int
name_parse(const char *s, size_t n, struct authority *a)
{
	struct in_addr	 a4;
	size_t		 i;

	if (n > 1 && s[n - 1] == '.')
		n--;
	if (n == 0 || n > NAME_MAX_BYTES || s[0] == '.' || s[n - 1] == '.')
		return -1;
	/* no empty label: s[i + 1] is inside the name whenever s[i] is a
	 * dot, as the last byte is none */
	for (i = 0; i < n; i++) {
		if (!name_char(s[i]) || (s[i] == '.' && s[i + 1] == '.'))
			return -1;
		a->a_name[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ?
		    s[i] - 'A' + 'a' : s[i]);
	}
	a->a_name[n] = '\0';
	if (inet_pton(AF_INET, a->a_name, &a4) == 1) {
		a->a_ip = true;
		memset(a->a_addr, 0, 10);
		memset(a->a_addr + 10, 0xff, 2);
		memcpy(a->a_addr + 12, &a4, 4);
	}
	return 0;
}

/* "[v6]" followed by the port, n bytes in all. */
static int
v6_parse(const char *s, size_t n, struct authority *a)
{
	const char	*end = memchr(s, ']', n);
	size_t		 len;

	if (end == NULL || (len = (size_t)(end - s - 1)) == 0 ||
	    len >= sizeof(a->a_name))
		return -1;
	memcpy(a->a_name, s + 1, len);
	a->a_name[len] = '\0';
	if (inet_pton(AF_INET6, a->a_name, a->a_addr) != 1)
		return -1;
	a->a_ip = true;
	inet_ntop(AF_INET6, a->a_addr, a->a_name, sizeof(a->a_name));
	return port_parse(end + 1, n - (size_t)(end + 1 - s), &a->a_port);
}

/* The first n bytes of s as an authority. 0 or -1. */
static int
authority_parse(const char *s, size_t n, struct authority *a)
{
	const char	*colon;

	memset(a, 0, sizeof(*a));
	if (n == 0)
		return -1;
	if (s[0] == '[')
		return v6_parse(s, n, a);
	colon = memchr(s, ':', n);
	if (colon == NULL)
		return name_parse(s, n, a);
	if (name_parse(s, (size_t)(colon - s), a) == -1)
		return -1;
	return port_parse(colon, n - (size_t)(colon - s), &a->a_port);
}

static bool
same_host(const struct authority *x, const struct authority *y)
{
	if (x->a_ip || y->a_ip)
		return x->a_ip && y->a_ip &&
		    memcmp(x->a_addr, y->a_addr, sizeof(x->a_addr)) == 0;
	return strcmp(x->a_name, y->a_name) == 0;
}

/* localhost and its subdomains (RFC 6761: never resolved through DNS
 * by browsers, so no other site can own them), 127.0.0.0/8 and ::1. */
static bool
is_loopback(const struct authority *a)
{
	static const unsigned char	 v6one[16] = { [15] = 1 };
	static const unsigned char	 v4pre[12] = { [10] = 0xff,
					    [11] = 0xff };
	size_t				 n = strlen(a->a_name);

	if (a->a_ip)
		return memcmp(a->a_addr, v6one, 16) == 0 ||
		    (memcmp(a->a_addr, v4pre, 12) == 0 && a->a_addr[12] == 127);
	return strcmp(a->a_name, "localhost") == 0 || (n > 10 &&
	    strcmp(a->a_name + n - 10, ".localhost") == 0);
}

/* An entry names h: same host, and the entry's port if it has one. */
static bool
entry_names(const char *entry, const struct authority *h)
{
	struct authority	 e;

	if (authority_parse(entry, strlen(entry), &e) == -1)
		return false;
	return same_host(&e, h) && (e.a_port == 0 || e.a_port == h->a_port);
}

enum origin_host
origin_host_judge(const char *host, const char *local, char *const *allowed)
{
	struct authority	 h, l;
	bool			 any = false;
	size_t			 i;

	if (authority_parse(host, strlen(host), &h) == -1)
		return ORIGIN_HOST_MALFORMED;
	if (is_loopback(&h) || (authority_parse(local, strlen(local), &l) ==
	    0 && l.a_ip && same_host(&h, &l)))
		return ORIGIN_HOST_LOCAL;
	for (i = 0; allowed != NULL && allowed[i] != NULL; i++) {
		if (strcmp(allowed[i], "*") == 0)
			any = true;
		else if (entry_names(allowed[i], &h))
			return ORIGIN_HOST_LISTED;
	}
	return any ? ORIGIN_HOST_ANY : ORIGIN_HOST_FOREIGN;
}

static unsigned
default_port(const char *scheme)
{
	if (strcmp(scheme, "http") == 0)
		return 80;
	if (strcmp(scheme, "https") == 0)
		return 443;
	return 0;
}

/* scheme://host[:port], and one final "/" when slash is set (as people
 * write origins in settings). Scheme and host in lower case. */
static int
origin_parse(const char *s, bool slash, struct origin *o)
{
	const char	*sep = strstr(s, "://"), *auth;
	size_t		 n, i;

	memset(o, 0, sizeof(*o));
	if (sep == NULL || sep == s || (size_t)(sep - s) >= SCHEME_MAX)
		return -1;
	for (i = 0; s + i < sep; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (i > 0 && ((s[i] >= '0' && s[i] <= '9') ||
		    s[i] == '+' || s[i] == '-' || s[i] == '.'))))
			return -1;
		o->o_scheme[i] = (char)(s[i] | 0x20);
	}
	auth = sep + 3;
	n = strlen(auth);
	if (slash && n > 0 && auth[n - 1] == '/')
		n--;
	if (authority_parse(auth, n, &o->o_auth) == -1)
		return -1;
	if (o->o_auth.a_port == 0)
		o->o_auth.a_port = default_port(o->o_scheme);
	return 0;
}

bool
origin_well_formed(const char *origin)
{
	struct origin	 o;

	return strcmp(origin, "null") == 0 ||
	    origin_parse(origin, false, &o) == 0;
}

bool
origin_listed(const char *origin, char *const *allowed)
{
	struct origin	 o, e;
	bool		 null = strcmp(origin, "null") == 0;
	size_t		 i;

	if (!null && origin_parse(origin, false, &o) == -1)
		return false;
	for (i = 0; allowed != NULL && allowed[i] != NULL; i++) {
		if (strcmp(allowed[i], "*") == 0)
			return true;
		if (!null && origin_parse(allowed[i], true, &e) == 0 &&
		    strcmp(o.o_scheme, e.o_scheme) == 0 &&
		    same_host(&o.o_auth, &e.o_auth) &&
		    o.o_auth.a_port == e.o_auth.a_port)
			return true;
	}
	return false;
}

bool
origin_same_site(const char *origin, const char *host)
{
	struct origin		 o;
	struct authority	 h;

	if (origin_parse(origin, false, &o) == -1 ||
	    default_port(o.o_scheme) == 0 ||
	    authority_parse(host, strlen(host), &h) == -1)
		return false;
	if (h.a_port == 0)
		h.a_port = default_port(o.o_scheme);
	return same_host(&o.o_auth, &h) && o.o_auth.a_port == h.a_port;
}

int
origin_check_host_entry(const char *entry, char *err, size_t errlen)
{
	struct authority	 a;

	if (strcmp(entry, "*") == 0 ||
	    authority_parse(entry, strlen(entry), &a) == 0)
		return 0;
	snprintf(err, errlen, "\"%.64s\" is not a host name or address with "
	    "an optional port (such as \"sluice.example.com\", "
	    "\"192.168.1.5:5050\" or \"[::1]\"), nor \"*\"", entry);
	return -1;
}

int
origin_check_origin_entry(const char *entry, char *err, size_t errlen)
{
	struct origin	 o;

	if (strcmp(entry, "null") == 0) {
		snprintf(err, errlen, "\"null\" is the Origin of sandboxed "
		    "frames and local files, which any site can produce: "
		    "list the real origin, or \"*\" if every site may call");
		return -1;
	}
	if (strcmp(entry, "*") == 0 || origin_parse(entry, true, &o) == 0)
		return 0;
	snprintf(err, errlen, "\"%.64s\" is not an origin: scheme://host"
	    "[:port] as a browser sends it, such as "
	    "\"http://localhost:3000\" or \"https://chat.example.com\"",
	    entry);
	return -1;
}
