/* netnames.h - unit tests: what the address guard says of "localhost" on this machine (a bare debootstrap root has no /etc/hosts). */
#ifndef SLUICE_NETNAMES_H
#define SLUICE_NETNAMES_H

#include <stddef.h>

/* netguard's reason for refusing host "localhost" here, into out:
 * "host 'localhost' resolves to a loopback address (IP)" with the first
 * address the resolver gives, or "host 'localhost' could not be
 * resolved" where the name does not resolve (refused all the same).
 * Returns out. */
const char	*localhost_refusal(char *out, size_t len);

#endif
