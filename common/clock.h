/* clock.h - monotonic and wall clocks in milliseconds. */
#ifndef SLUICE_CLOCK_H
#define SLUICE_CLOCK_H

#include <stdint.h>

uint64_t	clock_mono_ms(void);	/* CLOCK_MONOTONIC, never goes back */
uint64_t	clock_mono_ns(void);	/* the same in nanoseconds */
uint64_t	clock_wall_ms(void);	/* CLOCK_REALTIME, Unix epoch */

#endif
