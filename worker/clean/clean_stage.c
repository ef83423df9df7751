/* clean_stage.c - what every stage of the cleaner shares: the step driver, the end of the pipeline, tool-call ids. */
#include <sys/random.h>

#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "clean_int.h"

void
clean_drive(struct cleaner *c, struct buf *pend, clean_step_fn step,
    const char *p, size_t n, bool final)
{
	const char	*w;
	size_t		 wn, off = 0, r;
	bool		 own = pend->b_len > 0;

	if (own) {
		buf_add(pend, p, n);
		w = pend->b_data;
		wn = pend->b_len;
	} else {
		w = p;
		wn = n;
	}
	while (off < wn && !c->c_stopped) {
		r = step(c, w + off, wn - off, final);
		if (r == 0)
			break;
		off += r;
	}
	if (c->c_stopped)
		buf_reset(pend);
	else if (own)
		buf_drain(pend, off);
	else if (off < wn)
		buf_add(pend, w + off, wn - off);
}

static uint64_t
rng_next(uint64_t s[2])
{
	uint64_t	 a = s[0], b = s[1];

	/* xorshift128+ */
	s[0] = b;
	a ^= a << 23;
	s[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
	return s[1] + b;
}

void
clean_ids_seed(struct cleaner *c, unsigned long long seed)
{
	c->c_rng[0] = seed ^ 0x9e3779b97f4a7c15ULL;
	c->c_rng[1] = (seed << 1) | 1;
	(void)rng_next(c->c_rng);
}

static void
rng_seed(struct cleaner *c)
{
	struct timespec	 ts;

	if (getrandom(c->c_rng, sizeof(c->c_rng), GRND_NONBLOCK) ==
	    (ssize_t)sizeof(c->c_rng) && (c->c_rng[0] | c->c_rng[1]) != 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	clean_ids_seed(c, (unsigned long long)ts.tv_nsec ^
	    ((unsigned long long)ts.tv_sec << 20) ^
	    ((unsigned long long)getpid() << 40) ^ (uintptr_t)c);
}

/* "call_" + 24 lower-case hex digits. The generator is seeded on first
 * use (most outputs have no call). */
void
clean_call_id(struct cleaner *c, struct buf *out)
{
	uint64_t	 a, b;

	if ((c->c_rng[0] | c->c_rng[1]) == 0)
		rng_seed(c);
	a = rng_next(c->c_rng);
	b = rng_next(c->c_rng);

	buf_printf(out, "call_%016llx%08llx", (unsigned long long)a,
	    (unsigned long long)(b >> 32));
}

void
clean_emit(struct cleaner *c, const char *p, size_t n)
{
	if (c->c_stopped || n == 0)
		return;
	if (filter_run_push(c->c_frun, p, n, &c->c_out->co_text)) {
		c->c_stopped = true;
		c->c_out->co_stop = true;
	}
}

/* The hint is cut to CLEAN_HINT_MAX bytes: a shorter hint is still
 * true (the next bytes start with it) and keeps the filters' work per
 * push bounded however much whitespace is held. */
#define CLEAN_HINT_MAX	256

void
clean_emit_hint(struct cleaner *c, const char *p, size_t n)
{
	if (n > CLEAN_HINT_MAX)
		n = CLEAN_HINT_MAX;
	if (!c->c_stopped && n > 0)
		filter_run_hint(c->c_frun, p, n, &c->c_out->co_text);
}

void
clean_reasoning(struct cleaner *c, const char *p, size_t n)
{
	if (c->c_stopped || n == 0)
		return;
	(void)filter_run_push(c->c_frun_r, p, n, &c->c_out->co_reasoning);
}
