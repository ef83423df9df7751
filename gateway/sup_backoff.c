/* sup_backoff.c - after a worker fails: the pool-wide respawn delay, paced starts, the crash ring. */
#include "../common/log.h"
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
	s->s_fails = was_healthy ? 1 : s->s_fails + 1;
	s->s_fail_at = t;
	if (s->s_conf.pace_after > 0 && s->s_fails == s->s_conf.pace_after)
		log_warnx("%u worker failures in a row: starting at most one "
		    "worker every %llu ms until one stays up", s->s_fails,
		    (unsigned long long)s->s_conf.pace_ms);
}

bool
backoff_pacing(const struct sup *s)
{
	return s->s_conf.pace_after > 0 && s->s_fails >= s->s_conf.pace_after;
}

/* In a crash loop, when the holds end, every empty slot would start in
 * the same instant, each start failing again: so one at a time. */
bool
backoff_may_spawn(const struct sup *s, uint64_t t)
{
	if (t < s->s_hold_until)
		return false;
	return !backoff_pacing(s) || s->s_start_at == 0 ||
	    t >= s->s_start_at + s->s_conf.pace_ms;
}

void
backoff_started(struct sup *s, uint64_t t)
{
	s->s_start_at = t;
}

void
backoff_healthy(struct sup *s, uint64_t ready_at, uint64_t t)
{
	if (!backoff_pacing(s) || ready_at < s->s_fail_at ||
	    t - ready_at < s->s_conf.healthy_after_ms)
		return;
	log_info("a worker stayed up for %llu ms: starts are not paced any "
	    "more", (unsigned long long)(t - ready_at));
	s->s_fails = 0;
}

uint64_t
backoff_wake(const struct sup *s, uint64_t t)
{
	uint64_t	 at = UINT64_MAX;

	/* Only a future hold or pace: a past one was already considered. */
	if (s->s_hold_until > t)
		at = s->s_hold_until;
	if (backoff_pacing(s) && s->s_start_at + s->s_conf.pace_ms > t)
		at = sooner(at, s->s_start_at + s->s_conf.pace_ms);
	return at;
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
