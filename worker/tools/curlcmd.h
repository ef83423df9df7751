/* curlcmd.h - WilmerAI's CurlCommand: its fields checked, the curl command line built and guarded, curl run and its output shaped (addendum A3.4). */
#ifndef SLUICE_CURLCMD_H
#define SLUICE_CURLCMD_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/buf.h"
#include "../core/vars.h"
#include "xfield.h"

enum curl_fmt { CURL_STDOUT, CURL_BOTH, CURL_FULL };

/* One node's command, ready to run. */
struct curlcmd {
	char		**cc_argv;	/* "curl" first, NULL-ended */
	struct xnum	  cc_timeout;	/* seconds, as the user wrote it */
	long long	  cc_maxbytes;	/* <= 0: no cap */
	enum curl_fmt	  cc_fmt;
	bool		  cc_return;	/* onError "return" */
};

/* Check node's fields in WilmerAI's order (A3.1, A3.4.2, then the
 * address guard of A3.4.3 when it is active, which may resolve host
 * names) and build the command line of A3.4.1; vs fills in variables.
 * Returns 0, or -1 with WilmerAI's ValueError text appended to err
 * (nothing may run then, whatever onError says). cc is cleared on
 * failure; on success free it with curlcmd_clear. */
int	curlcmd_build(struct curlcmd *cc, const json_t *node,
	    const struct vars *vs, struct buf *err);

/* Free what curlcmd_build allocated. NULL-safe. */
void	curlcmd_clear(struct curlcmd *cc);

#endif
