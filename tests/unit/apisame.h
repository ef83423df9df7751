/* apisame.h - api_parse checked against the jansson-tree path it replaced: the same answer, byte for byte. */
#ifndef SLUICE_APISAME_H
#define SLUICE_APISAME_H

#include "../../gateway/api.h"

/* api_parse, after checking that parsing body through jansson's tree
 * alone (api_body_load_tree) gives the same status, message and
 * REQ_START frame (Ollama's tool-call ids, drawn at random, aside).
 * Fails the running test when they differ. Returns as api_parse. */
int	api_parse_same(int api, const char *body, size_t len,
	    const char *rqid, const struct api_limits *, struct api_req *out,
	    int *status, char err[API_ERRLEN]);

#endif
