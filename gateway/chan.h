/* chan.h - the gateway's end of a worker channel: frames in and out. */
#ifndef SLUICE_CHAN_H
#define SLUICE_CHAN_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct sup;
struct chan;

/* Take ownership of fd (our end of the socketpair) for worker slot.
 * Decoded frames go to sup_chan_frame, malformed or oversize ones to
 * sup_chan_error (reading stops), EOF to sup_chan_eof. Returns NULL on
 * failure (fd closed). */
struct chan	*chan_new(struct event_base *, int fd, unsigned slot,
		    struct sup *);

/* Queue a complete frame. 0, or -1 when the channel is closed. */
int		 chan_send(struct chan *, const void *frame, size_t len);

/* Stop (true) or resume (false) handing frames to the supervisor. */
void		 chan_pause(struct chan *, bool);

/* Close and free; deferred when called from inside this channel's own
 * callback. NULL-safe. */
void		 chan_close(struct chan *);

#endif
