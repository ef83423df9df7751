/* peerurl.h - a peer gateway's address in sluice.json "peers": http://HOST:PORT. */
#ifndef SLUICE_PEERURL_H
#define SLUICE_PEERURL_H

#include <stddef.h>

/* Split "http://HOST:PORT" (no path beyond "/", no user) into host
 * (NUL-terminated, hostlen bytes at most) and *port. 0, or -1 when s
 * is not that. */
int	peerurl_split(const char *s, char *host, size_t hostlen, int *port);

/* The "peers" entry check of gwconf (entry_fn): 0, or -1 with why. */
int	peerurl_check_entry(const char *s, char *why, size_t len);

#endif
