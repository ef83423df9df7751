/* bevwrite.c - a bufferevent's bytes written at once while it has nothing queued. */
#include <sys/types.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "bevwrite.h"

size_t
bev_write_now(struct bufferevent *bev, const void *p, size_t n)
{
	ssize_t	 w;

	if (n == 0 || evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return 0;
	w = write(bufferevent_getfd(bev), p, n);
	return w > 0 ? (size_t)w : 0;
}
