/* api.h - client request bodies turned into API-neutral REQ_START frames. */
#ifndef SLUICE_API_H
#define SLUICE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"

#define API_ERRLEN	256

/* A parsed client request. */
struct api_req {
	int		 ar_api;		/* enum proto_api */
	bool		 ar_stream;
	bool		 ar_include_usage;	/* stream_options.include_usage */
	char		*ar_model;		/* client's model field, "" if none */
	struct buf	 ar_start;		/* encoded REQ_START frame */
};

/* Parse an OpenAI chat completions body (POST /v1/chat/completions) and
 * encode its REQ_START for request rqid with the given time budget.
 * Returns 0, or -1 with *status (400/413) and err set to the message the
 * client should see (WilmerAI's wording where it has one). */
int	api_openai_chat(const char *body, size_t len, const char *rqid,
	    uint64_t deadline_ms, struct api_req *out, int *status,
	    char err[API_ERRLEN]);

void	api_req_clear(struct api_req *);	/* frees members, reusable */

#endif
