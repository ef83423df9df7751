/* sup_backoff.c - after a worker fails: the pool-wide respawn delay and the crash ring. */
#include "sup_int.h"

void
backoff_fail(struct sup *s, bool was_healthy)
{
	uint64_t	 t = sup_now(s);

	s->s_crash_ring[s->s_crash_pos] = t;
	s->s_crash_pos = (s->s_crash_pos + 1) % s->s_conf.crash_threshold;
	s->s_st.st_crashes++;
	if (was_healthy || s->s_backoff < s->s_conf.backoff_min_ms)
		s->s_backoff = s->s_conf.backoff_min_ms;
	else
		s->s_backoff *= 2;
	if (s->s_backoff > s->s_conf.backoff_max_ms)
		s->s_backoff = s->s_conf.backoff_max_ms;
	s->s_hold_until = t + s->s_backoff;
}

bool
backoff_may_spawn(const struct sup *s, uint64_t t)
{
	return t >= s->s_hold_until;
}

uint64_t
backoff_wake(const struct sup *s, uint64_t t)
{
	/* Only a future hold: a past one was already considered. */
	return s->s_hold_until > t ? s->s_hold_until : UINT64_MAX;
}

bool
backoff_degraded(const struct sup *s)
{
	uint64_t	 t = sup_now(s);
	unsigned	 i, n = 0;

	for (i = 0; i < s->s_conf.crash_threshold; i++)
		if (s->s_crash_ring[i] != 0 &&
		    t - s->s_crash_ring[i] < s->s_conf.crash_window_ms)
			n++;
	return s->s_conf.crash_threshold > 0 && n >= s->s_conf.crash_threshold;
}
