/* origin.h - which Host and Origin header values name this gateway or a site it trusts. */
#ifndef SLUICE_ORIGIN_H
#define SLUICE_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

/* How a Host header value fares (higher is better: see origin.c). */
enum origin_host {
	ORIGIN_HOST_MALFORMED,	/* not host[:port] at all */
	ORIGIN_HOST_FOREIGN,	/* names nothing of ours */
	ORIGIN_HOST_ANY,	/* admitted only by the entry "*" */
	ORIGIN_HOST_LISTED,	/* named by an allowed_hosts entry */
	ORIGIN_HOST_LOCAL,	/* a loopback name or address, or the
				   address the client reached */
};

/* Judge host, a Host header value, for a client that reached local
 * (our end of its connection as http_addr_fmt writes it: "1.2.3.4:5050",
 * "[::1]:5050"; anything else counts as no address). allowed is NULL or
 * a NULL-terminated list of entries that origin_check_host_entry
 * accepts. The port of host is ignored except against an entry that
 * names one. */
enum origin_host origin_host_judge(const char *host, const char *local,
		    char *const *allowed);

/* True when origin, an Origin header value, is well formed ("null" or
 * scheme://host[:port]) and named by an entry of allowed (NULL or a
 * NULL-terminated list of entries origin_check_origin_entry accepts;
 * "*" names every well-formed value). */
bool	origin_listed(const char *origin, char *const *allowed);

/* True when origin is http://host or https://host for host, the
 * request's Host header value: a page of the gateway's own site as the
 * client addressed it (a port left out is the scheme's own). */
bool	origin_same_site(const char *origin, const char *host);

/* True when origin is "null" or scheme://host[:port]: safe to repeat
 * in a header or a message. */
bool	origin_well_formed(const char *origin);

/* Whether entry may go in allowed_hosts ("*", or a host name or address
 * with an optional port) or allowed_origins ("*", or scheme://host[:port]
 * with an optional trailing "/"). 0, or -1 with the reason in err. */
int	origin_check_host_entry(const char *entry, char *err, size_t errlen);
int	origin_check_origin_entry(const char *entry, char *err,
	    size_t errlen);

#endif
