/* store_wait.c - waiting for another process's lock in short sleeps, calling so_on_wait (the worker's heartbeat) as it goes. */
#include <errno.h>
#include <time.h>

#include "../../common/clock.h"
#include "store_int.h"

/*
 * Waiting for a lock. A driver that waits (SQLite: its busy handler in
 * store_sqlite.c) does so in short sleeps here, and so_on_wait runs
 * every STORE_WAIT_MS: the worker heartbeats there (the gateway would
 * take a silent worker for hung), and gives up when its request is
 * stopped.
 */
static const unsigned	 wait_steps[] = { 1, 2, 4, 8, 16, 25, 35, 50 };
#define NSTEPS		(sizeof(wait_steps) / sizeof(wait_steps[0]))

static void
sleep_ms(unsigned ms)
{
	struct timespec	 ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int
store_wait_more(struct store *s, uint64_t t0, uint64_t *ping, int count)
{
	uint64_t	 now = clock_mono_ms(), left;
	unsigned	 ms;

	if (now - t0 >= s->s_opts.so_busy_ms) {
		s->s_wait_end = WAIT_TIMEOUT;
		return 0;
	}
	if (s->s_opts.so_on_wait != NULL && now - *ping >= STORE_WAIT_MS) {
		*ping = now;
		if (s->s_opts.so_on_wait(s->s_opts.so_arg) != 0) {
			s->s_wait_end = WAIT_STOPPED;
			return 0;
		}
	}
	ms = wait_steps[(size_t)count < NSTEPS ? (size_t)count : NSTEPS - 1];
	left = s->s_opts.so_busy_ms - (now - t0);
	sleep_ms(left < ms ? (unsigned)left : ms);
	return 1;
}
