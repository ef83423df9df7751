/* sse.h - incremental Server-Sent Events parser (WHATWG event stream rules). */
#ifndef SLUICE_SSE_H
#define SLUICE_SSE_H

#include <stddef.h>

struct sse;

/* One dispatched event. event is the "event:" field ("" when absent ->
 * the caller treats it as "message"), data the "data:" lines joined with
 * "\n". Both are NUL-terminated and valid only during the call. Return 0
 * to go on, -1 to stop parsing (sse_feed then returns -1). */
typedef int	(*sse_event_cb)(void *arg, const char *event, size_t event_len,
		    const char *data, size_t data_len);

/* max_line caps a single line and the data of one event (e.g. 1 MiB);
 * beyond it sse_feed fails. Returns NULL only on allocation failure. */
struct sse	*sse_new(size_t max_line, sse_event_cb cb, void *arg);

/* Feed bytes as they arrive, split anywhere (also inside CRLF or inside
 * a UTF-8 sequence). Lines end with CRLF, LF or CR; a UTF-8 BOM at the
 * very start is skipped; comment lines (":...") are ignored but counted;
 * "id:" and "retry:" are ignored. Returns 0, or -1 when a line is too
 * long or the callback asked to stop. */
int		 sse_feed(struct sse *, const void *p, size_t n);

/* End of stream. An event not ended by a blank line is discarded, as the
 * spec says. Returns 1 if such a partial event (or partial line) was
 * dropped, 0 otherwise. */
int		 sse_finish(struct sse *);

/* Number of comment lines seen (keep-alives). */
size_t		 sse_comments(const struct sse *);

void		 sse_free(struct sse *);	/* NULL is a no-op */

#endif
