/* lines.h - split a byte stream into lines (NDJSON), with a cap. */
#ifndef SLUICE_LINES_H
#define SLUICE_LINES_H

#include <stddef.h>

#include "../../common/buf.h"

/* One complete line without its "\n" (and without a "\r" before it).
 * Return 0 to go on, -1 to stop (lines_feed then returns -1). */
typedef int	(*lines_cb)(void *arg, const char *line, size_t n);

struct lines {
	struct buf	 ln_buf;		/* the unfinished line */
	size_t		 ln_max;
	lines_cb	 ln_cb;
	void		*ln_arg;
	int		 ln_failed;
};

void	lines_init(struct lines *, size_t max, lines_cb, void *arg);
void	lines_free(struct lines *);

/* Feed bytes split anywhere. Blank lines are skipped. Returns 0, or -1
 * when a line exceeds max or the callback stopped (sticky). */
int	lines_feed(struct lines *, const char *p, size_t n);

/* End of stream: a last line without "\n" is delivered too. 0 or -1. */
int	lines_finish(struct lines *);

#endif
