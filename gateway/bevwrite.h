/* bevwrite.h - a bufferevent's bytes written at once while it has nothing queued. */
#ifndef SLUICE_BEVWRITE_H
#define SLUICE_BEVWRITE_H

#include <stddef.h>

struct bufferevent;

/* Write p[0..n) to bev's socket with one write() when bev's output
 * holds nothing (through the bufferevent a write would arm its write
 * event, wait a loop pass and disarm it: two epoll_ctl and a wake-up).
 * Returns how many bytes the socket took: 0 when something is queued
 * (order first) or on an error, which the bufferevent then meets and
 * reports when the caller queues the rest there, as it must. */
size_t	bev_write_now(struct bufferevent *bev, const void *p, size_t n);

#endif
