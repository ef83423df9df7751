/* url.h - endpoint URLs as libcurl reads them: the host it connects to, and the URL as messages may show it. */
#ifndef SLUICE_URL_H
#define SLUICE_URL_H

#include <stddef.h>

/* The host libcurl connects to for url, parsed by curl_url() as
 * CURLOPT_URL parses it (no scheme: guessed, http for most names),
 * into out: a name as written (its case and a trailing dot kept; an
 * IDN in punycode), an IPv4 address in dotted form, an IPv6 address
 * without brackets or zone. Returns 0, or -1 when libcurl cannot parse
 * url (it would not connect either), cannot convert an IDN (as in the
 * C locale: neither could its transfer), or the host does not fit in
 * len bytes. */
int	url_host(const char *url, char *out, size_t len);

/* url as messages and logs may show it (they reach the client), into
 * out, cut to len - 1 bytes: as written when libcurl sees no user,
 * password or options in it; else as libcurl writes it back, with
 * those replaced by "***" before the '@' (examples in
 * tests/unit/check_urls.c); and when libcurl cannot parse a url that has an
 * '@' anywhere, URL_HIDDEN. NULL reads as "". */
void	url_shown(const char *url, char *out, size_t len);

/* ref (absolute, or relative as in a page) resolved against base, into
 * out: 0 when it fits in len bytes and has base's scheme, host and port
 * (default ports filled in); -1 otherwise (unparsable, another origin,
 * too long). */
int	url_resolve_same_origin(const char *base, const char *ref, char *out,
	    size_t len);

#define URL_HIDDEN	"unparsable URL, not shown"

#endif
