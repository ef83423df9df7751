/* fakerq.h - a stand-in for the worker's loop behind the request seam (worker/rq.h), recording what the code under test asks of it. */
#ifndef SLUICE_FAKERQ_H
#define SLUICE_FAKERQ_H

#include <stdbool.h>

#include "../../common/buf.h"
#include "../../worker/rq.h"

struct fakerq {
	struct rq	 fr_rq;		/* hand &fr_rq to the code under test */
	/* what it was asked */
	struct buf	 fr_text;	/* every content delta, concatenated */
	struct buf	 fr_reasoning;
	struct buf	 fr_tools;	/* every tool-call array, one a line */
	int		 fr_emits;	/* ro_emit calls with something in */
	char		 fr_phase[256];	/* the last phase */
	int		 fr_phases;
	int		 fr_wakes;	/* ro_wake calls */
	int		 fr_wakes_readable;
	int		 fr_stops;	/* ro_stopped calls */
	int		 fr_sent[32];	/* frames sent, by type */
	int		 fr_slot_takes, fr_slot_gives;
	char		 fr_slot_ep[128];	/* the last endpoint taken */
	unsigned	 fr_slot_limit;
	bool		 fr_answered;
	struct wresult	 fr_answer;
	/* how it answers (set by the test) */
	int		 fr_cancel_at;	/* ro_wake and ro_stopped say stop
					   from this call of either on (0:
					   never) */
	bool		 fr_cancel_on_readable;
	bool		 fr_stopped;	/* ro_stopped says stop */
	enum rq_slot	 fr_slot_answer;
	struct store	*fr_store;	/* ro_store's (NULL: an error) */
};

/* A fake request named id whose wake descriptor is wake_fd (-1: none),
 * answering as a quiet loop would: never stopped, every slot granted,
 * no store. */
void	fakerq_init(struct fakerq *, const char *id, int wake_fd);

/* Free what it recorded (not fr_store). */
void	fakerq_free(struct fakerq *);

#endif
