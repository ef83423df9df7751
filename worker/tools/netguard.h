/* netguard.h - the address guard of WilmerAI's WebFetch and CurlCommand: allowlist, private and non-global addresses (addendum A3.2). */
#ifndef SLUICE_NETGUARD_H
#define SLUICE_NETGUARD_H

#include <stdbool.h>
#include <sys/socket.h>

#include "../../common/buf.h"

/* The policy of one node. Borrowed. */
struct netguard {
	bool		 ng_private;	/* blockPrivateAddresses */
	char *const	*ng_hosts;	/* allowedHosts, lowercased
					   (xf_hosts), or NULL: none */
};

/* Whether the guard does anything (blockPrivateAddresses or a
 * non-empty allowlist). */
bool	netguard_active(const struct netguard *);

/* Check url (WilmerAI's check_url_allowed): its host as libcurl parses
 * it, against the allowlist (no DNS), then, when ng_private, the
 * address it is (an IP literal) or every address it resolves to
 * (getaddrinfo; no answer fails closed). Returns 0 when allowed (or the
 * guard is off), else -1 with WilmerAI's reason appended to why
 * ("host '10.0.0.1' is a private address"). Blocks in the resolver. */
int	netguard_check(const struct netguard *, const char *url,
	    struct buf *why);

/* Why an address must not be reached: "loopback", "link-local",
 * "unspecified", "multicast", "reserved", "private", "non-global"
 * (Python's ipaddress, an IPv4-mapped IPv6 address judged as its IPv4
 * address), or NULL for a globally routable one. sa is AF_INET or
 * AF_INET6; any other family is "unspecified". */
const char *netguard_family(const struct sockaddr *sa);

/* The reason for a connection that was about to reach sa although the
 * URL's host passed (a resolver that changed its answer): appends
 * "host 'H' resolves to a F address (IP)" to why. Returns -1 when sa
 * must not be reached, 0 otherwise (why untouched). */
int	netguard_connect(const struct netguard *, const char *host,
	    const struct sockaddr *sa, struct buf *why);

#endif
