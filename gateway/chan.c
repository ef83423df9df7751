/* chan.c - the gateway's end of a worker channel: frames in and out over a bufferevent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "../common/log.h"
#include "../common/xmem.h"
#include "../proto/frame.h"
#include "../proto/proto.h"
#include "chan.h"
#include "sup.h"

struct chan {
	struct bufferevent	*ch_bev;
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
	struct evbuffer	*in = bufferevent_get_input(ch->ch_bev);
	unsigned char	 hdr[FRAME_HDRLEN], *p;
	uint32_t	 len;

	while (!ch->ch_closed && !ch->ch_dead &&
	    (ignore_pause || !ch->ch_paused)) {
		if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ssize_t)sizeof(hdr))
			return;
		len = frame_hdr_get(hdr);
		if (len > PROTO_MAX_FRAME) {
			ch->ch_dead = true;
			bufferevent_disable(ch->ch_bev, EV_READ);
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

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct chan	*ch = arg;

	ch->ch_depth++;
	drain_frames(ch, false);
	leave(ch);
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct chan	*ch = arg;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	if (what & BEV_EVENT_ERROR)
		log_debug("worker %u channel: %s", ch->ch_slot,
		    strerror(EVUTIL_SOCKET_ERROR()));
	ch->ch_depth++;
	bufferevent_disable(bev, EV_READ | EV_WRITE);
	ch->ch_eof = true;
	report_eof(ch);
	leave(ch);
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
	ch->ch_sup = sup;
	ch->ch_slot = slot;
	bufferevent_setcb(ch->ch_bev, read_cb, NULL, event_cb, ch);
	bufferevent_enable(ch->ch_bev, EV_READ | EV_WRITE);
	return ch;
}

int
chan_send(struct chan *ch, const void *frame, size_t len)
{
	if (ch == NULL || ch->ch_closed || ch->ch_eof)
		return -1;
	return bufferevent_write(ch->ch_bev, frame, len) == 0 ? 0 : -1;
}

void
chan_pause(struct chan *ch, bool paused)
{
	if (ch == NULL || ch->ch_closed || ch->ch_paused == paused)
		return;
	ch->ch_paused = paused;
	if (paused) {
		bufferevent_disable(ch->ch_bev, EV_READ);
		return;
	}
	if (!ch->ch_eof && !ch->ch_dead)
		bufferevent_enable(ch->ch_bev, EV_READ);
	ch->ch_depth++;
	drain_frames(ch, false);	/* what arrived before the pause */
	leave(ch);
}

static void
chan_destroy(struct chan *ch)
{
	bufferevent_free(ch->ch_bev);
	free(ch);
}

void
chan_close(struct chan *ch)
{
	if (ch == NULL || ch->ch_closed)
		return;
	ch->ch_closed = true;
	bufferevent_disable(ch->ch_bev, EV_READ | EV_WRITE);
	if (ch->ch_depth == 0)
		chan_destroy(ch);
}
