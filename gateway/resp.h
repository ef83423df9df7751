/* resp.h - the response builder: the one place that knows API response shapes. */
#ifndef SLUICE_RESP_H
#define SLUICE_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "../proto/proto.h"

/* What every piece of one response shares. Strings are borrowed. */
struct resp_ctx {
	int		 rc_api;		/* enum proto_api */
	const char	*rc_id;			/* "chatcmpl-..." for the stream */
	const char	*rc_model;		/* echoed model */
	int64_t		 rc_created;		/* Unix seconds */
	bool		 rc_include_usage;
};

/* Content type of a stream for this API. */
const char	*resp_stream_type(int api);

/* Streams. Each appends complete wire events to out. */
void	resp_stream_open(struct buf *out, const struct resp_ctx *);
void	resp_stream_chunk(struct buf *out, const struct resp_ctx *,
	    const struct proto_req_chunk *);
void	resp_stream_close(struct buf *out, const struct resp_ctx *,
	    const struct proto_req_done *);
/* An error after the head was sent: an error event, then the end. */
void	resp_stream_error(struct buf *out, const struct resp_ctx *,
	    int status, const char *message);
/* A keep-alive while the backend is silent. */
void	resp_stream_heartbeat(struct buf *out, const struct resp_ctx *);

/* Whole (non-streaming) answer. text and reasoning are the concatenated
 * deltas; reasoning may be empty. */
void	resp_whole(struct buf *out, const struct resp_ctx *,
	    const struct buf *text, const struct buf *reasoning,
	    const struct proto_req_done *);

/* Error body for a route family: ollama true gives {"error": "..."},
 * otherwise the OpenAI object {"error": {"message","type","code"}}. */
void	resp_error(struct buf *out, bool ollama, int status,
	    const char *message);

#endif
