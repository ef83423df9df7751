/* fakegw.h - unit tests: the gateway's end of a worker channel, the worker's end driven by a forked child. */
#ifndef SLUICE_FAKEGW_H
#define SLUICE_FAKEGW_H

#include <stddef.h>
#include <sys/types.h>

#include "../../proto/frame.h"
#include "../../proto/proto.h"

struct fakegw {
	int		 fg_fd;		/* our end of the socketpair */
	pid_t		 fg_pid;	/* the child, -1 once reaped */
	int		 fg_status;	/* its wait status, once reaped */
	struct frame_rd	 fg_rd;
};

/* What fakegw_frame found. */
enum fakegw_got {
	FG_FRAME = 1,		/* a whole frame */
	FG_EOF = 0,		/* the child's end is closed */
	FG_TIMEOUT = -1,	/* nothing whole in time */
	FG_OVERSIZE = -2,	/* a length over PROTO_MAX_FRAME */
};

/* A socketpair; fn(the child's end, arg) runs in a forked child that
 * exits with what fn returns (SIGPIPE ignored there, so that a write to
 * a closed channel is EPIPE), and is killed when the test's process
 * ends. Fails the test when it cannot. */
void	fakegw_start(struct fakegw *, int (*fn)(int fd, void *arg),
	    void *arg);

/* Encode m and write it whole to the child. */
void	fakegw_send(struct fakegw *, const struct proto_msg *m);

/* Send a message of type without a body (CANCEL, SHUTDOWN) for rqid
 * (NULL: none). */
void	fakegw_send_simple(struct fakegw *, uint32_t type, const char *rqid);

/* Wait up to timeout_ms for the next frame; *p and *n give its payload
 * (valid until the next call). */
enum fakegw_got	fakegw_frame(struct fakegw *, const unsigned char **p,
		    size_t *n, int timeout_ms);

/* The next frame, decoded; fails the test on anything else (EOF, a
 * timeout, a frame that does not decode). proto_msg_free it. */
void	fakegw_next(struct fakegw *, struct proto_msg *m, int timeout_ms);

/* The next frame that is not a HEARTBEAT, as fakegw_next. */
void	fakegw_next_busy(struct fakegw *, struct proto_msg *m,
	    int timeout_ms);

/* Close our end: the child reads EOF. */
void	fakegw_close(struct fakegw *);

/* The child's wait status within timeout_ms; on a timeout it is killed
 * and the test fails. */
int	fakegw_wait(struct fakegw *, int timeout_ms);

/* Kill the child if it still runs, reap it, close our end. */
void	fakegw_free(struct fakegw *);

#endif
