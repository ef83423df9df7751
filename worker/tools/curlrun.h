/* curlrun.h - CurlCommand's curl run without a shell, under its timeout and cap, and its result shaped as WilmerAI shapes it (addendum A3.4.4). */
#ifndef SLUICE_CURLRUN_H
#define SLUICE_CURLRUN_H

#include "../../common/buf.h"
#include "../llm/transport.h"
#include "curlcmd.h"

enum curl_end {
	CURL_OUTPUT,	/* out holds the node's output */
	CURL_RAISE,	/* err holds why the node fails */
	CURL_CANCELLED	/* the hooks asked to stop; curl is killed */
};

/* Run cc's command line (no shell, stdin /dev/null, the worker's
 * environment and directory, its own process group) under cc's
 * timeout and cap, and shape the result as A3.4.4 says. hooks (NULL:
 * none) are polled as for an LLM call. Appends to out or err. */
enum curl_end	curlcmd_run(const struct curlcmd *cc,
		    const struct transport_hooks *hooks, struct buf *out,
		    struct buf *err);

#endif
