/* chan.c - the gateway's end of a worker channel: frames in over a read event, out over a bufferevent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "../common/log.h"
#include "../common/xmem.h"
#include "../proto/frame.h"
#include "../proto/proto.h"
#include "bevwrite.h"
#include "chan.h"
#include "sup.h"

/* Read at most this much per wake-up; a larger frame takes several. */
#define CHAN_READ_MAX	(64 * 1024)

/*
 * Frames in are read by our own event rather than the bufferevent's:
 * libevent's evbuffer_read asks the kernel how much is waiting
 * (ioctl FIONREAD) before every read, a second system call for each
 * streamed chunk. The bufferevent only writes.
 */
struct chan {
	struct bufferevent	*ch_bev;	/* writes; owns the fd */
	struct event		*ch_rd;		/* EV_READ, persistent */
	struct evbuffer		*ch_in;		/* read, not yet framed */
	struct sup		*ch_sup;
	unsigned		 ch_slot;
	int			 ch_depth;	/* inside our callbacks */
	bool			 ch_closed;	/* chan_close was called */
	bool			 ch_dead;	/* bad frame: read nothing more */
	bool			 ch_paused;
	bool			 ch_eof;	/* EOF seen, not yet reported */
};

static void	chan_destroy(struct chan *);

/* Hand one decoded frame to the supervisor. */
static void
deliver(struct chan *ch, const unsigned char *p, size_t n)
{
	struct proto_msg	 m;
	char			 err[PROTO_ERRLEN];

	if (proto_decode(p, n, &m, err) == -1) {
		ch->ch_dead = true;
		sup_chan_error(ch->ch_sup, ch->ch_slot,
		    m.m_version != 0 && m.m_version != PROTO_VERSION, err);
	} else
		sup_chan_frame(ch->ch_sup, ch->ch_slot, &m);
	proto_msg_free(&m);
}

/* Process whole frames while allowed; returns when more bytes are
 * needed, when paused, or when the channel went bad or closed. */
static void
drain_frames(struct chan *ch, bool ignore_pause)
{
	struct evbuffer	*in = ch->ch_in;
	unsigned char	 hdr[FRAME_HDRLEN], *p;
	uint32_t	 len;

	while (!ch->ch_closed && !ch->ch_dead &&
	    (ignore_pause || !ch->ch_paused)) {
		if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ssize_t)sizeof(hdr))
			return;
		len = frame_hdr_get(hdr);
		if (len > PROTO_MAX_FRAME) {
			ch->ch_dead = true;
			event_del(ch->ch_rd);
			sup_chan_error(ch->ch_sup, ch->ch_slot, false,
			    "frame larger than 16 MiB");
			return;
		}
		if (evbuffer_get_length(in) < FRAME_HDRLEN + (size_t)len)
			return;
		p = evbuffer_pullup(in, FRAME_HDRLEN + (ssize_t)len);
		deliver(ch, p + FRAME_HDRLEN, len);
		if (!ch->ch_closed)
			evbuffer_drain(in, FRAME_HDRLEN + (size_t)len);
	}
}

static void
leave(struct chan *ch)
{
	if (--ch->ch_depth == 0 && ch->ch_closed)
		chan_destroy(ch);
}

static void
report_eof(struct chan *ch)
{
	/* Frames written before the worker died still count, even when
	 * the client side asked us to pause. */
	drain_frames(ch, true);
	if (!ch->ch_closed) {
		ch->ch_eof = false;
		sup_chan_eof(ch->ch_sup, ch->ch_slot);
	}
}

/* The channel ended (EOF or an error either way): no more reading or
 * writing; what was read is still delivered. */
static void
end_of_chan(struct chan *ch, int err)
{
	if (err != 0)
		log_debug("worker %u channel: %s", ch->ch_slot, strerror(err));
	ch->ch_depth++;
	event_del(ch->ch_rd);
	bufferevent_disable(ch->ch_bev, EV_WRITE);
	ch->ch_eof = true;
	report_eof(ch);
	leave(ch);
}

/* One read per wake-up, into the input buffer's free space. */
static void
read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct chan		*ch = arg;
	struct evbuffer_iovec	 v[2];
	struct iovec		 iov[2];
	ssize_t			 n;
	int			 nv, i;

	nv = evbuffer_reserve_space(ch->ch_in, CHAN_READ_MAX, v, 2);
	if (nv <= 0)
		fatalx("chan: evbuffer_reserve_space failed");
	for (i = 0; i < nv; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len;
	}
	if ((n = readv(fd, iov, nv)) < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		end_of_chan(ch, errno);
		return;
	}
	if (n == 0) {
		end_of_chan(ch, 0);
		return;
	}
	for (i = 0; i < nv; i++) {
		if ((size_t)n < v[i].iov_len)
			v[i].iov_len = (size_t)n;
		n -= (ssize_t)v[i].iov_len;
	}
	if (evbuffer_commit_space(ch->ch_in, v, nv) == -1)
		fatalx("chan: evbuffer_commit_space failed");
	ch->ch_depth++;
	drain_frames(ch, false);
	leave(ch);
}

/* The bufferevent only writes: it reports write errors. The worker's
 * frames still in the socket come first: while reading, its EOF ends
 * the channel; while paused, nothing more is read and it ends now. */
static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct chan	*ch = arg;
	int		 err = EVUTIL_SOCKET_ERROR();

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) || ch->ch_eof)
		return;
	bufferevent_disable(bev, EV_WRITE);
	if (!ch->ch_paused && !ch->ch_dead) {
		log_debug("worker %u channel: write: %s", ch->ch_slot,
		    strerror(err));
		return;
	}
	end_of_chan(ch, (what & BEV_EVENT_ERROR) ? err : 0);
}

struct chan *
chan_new(struct event_base *base, int fd, unsigned slot, struct sup *sup)
{
	struct chan	*ch = xcalloc(1, sizeof(*ch));

	ch->ch_bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (ch->ch_bev == NULL) {
		close(fd);
		free(ch);
		return NULL;
	}
	(void)evutil_make_socket_nonblocking(fd);	/* a wake-up never blocks */
	ch->ch_rd = event_new(base, fd, EV_READ | EV_PERSIST, read_cb, ch);
	ch->ch_in = evbuffer_new();
	if (ch->ch_rd == NULL || ch->ch_in == NULL ||
	    event_add(ch->ch_rd, NULL) == -1) {
		chan_destroy(ch);
		return NULL;
	}
	ch->ch_sup = sup;
	ch->ch_slot = slot;
	bufferevent_setcb(ch->ch_bev, NULL, NULL, event_cb, ch);
	bufferevent_enable(ch->ch_bev, EV_WRITE);
	return ch;
}

int
chan_send(struct chan *ch, const void *frame, size_t len)
{
	const char	*p = frame;
	size_t		 w;

	if (ch == NULL || ch->ch_closed || ch->ch_eof)
		return -1;
	if ((w = bev_write_now(ch->ch_bev, p, len)) == len)
		return 0;
	return bufferevent_write(ch->ch_bev, p + w, len - w) == 0 ? 0 : -1;
}

void
chan_pause(struct chan *ch, bool paused)
{
	if (ch == NULL || ch->ch_closed || ch->ch_paused == paused)
		return;
	ch->ch_paused = paused;
	if (paused) {
		event_del(ch->ch_rd);
		return;
	}
	if (!ch->ch_eof && !ch->ch_dead)
		event_add(ch->ch_rd, NULL);
	ch->ch_depth++;
	drain_frames(ch, false);	/* what arrived before the pause */
	leave(ch);
}

static void
chan_destroy(struct chan *ch)
{
	if (ch->ch_rd != NULL)
		event_free(ch->ch_rd);
	if (ch->ch_in != NULL)
		evbuffer_free(ch->ch_in);
	bufferevent_free(ch->ch_bev);	/* closes the fd */
	free(ch);
}

void
chan_close(struct chan *ch)
{
	if (ch == NULL || ch->ch_closed)
		return;
	ch->ch_closed = true;
	event_del(ch->ch_rd);
	bufferevent_disable(ch->ch_bev, EV_READ | EV_WRITE);
	if (ch->ch_depth == 0)
		chan_destroy(ch);
}
