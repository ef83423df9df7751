/* memgen.c - memory generation for a discussion: the checks WilmerAI makes first, then the vector store or the file-style ledger. */
#include <stdlib.h>

#include "../../common/log.h"
#include "mem_file.h"
#include "mem_vector.h"
#include "memgen.h"
#include "vecmem.h"

/* The vector path runs under the generation lock as a whole (it has no
 * cheap "nothing to do" check of its own before its first read). */
static int
vector_round(struct node_ctx *x, const struct memory_settings *ms,
    const char *key, struct wresult *res)
{
	int	 rc = memory_gen_lock(x, key, ms->ms_condense_lock_s, res);

	if (rc != 1)
		return rc;
	rc = memory_vector_run(x, ms, key, res);
	memory_gen_unlock(x, key);
	return rc;
}

int
memory_generate(struct node_ctx *x, bool force_file, struct wresult *res)
{
	struct memory_settings	 ms;
	char			*key = memory_key(x);
	int			 rc;

	if (key == NULL) {
		log_debug("[rq %s] no discussion id: no memories written",
		    x->nx_rq->rq_id);
		return 0;
	}
	if (x->nx_msgs->n < 3) {
		free(key);
		return 0;
	}
	if (memory_settings_load(x, &ms, res) == -1) {
		free(key);
		return -1;
	}
	if (ms.ms_use_vector && !force_file)
		rc = vector_round(x, &ms, key, res);
	else
		rc = memory_file_run(x, &ms, key, res);
	memory_settings_free(&ms);
	free(key);
	return rc == -1 ? -1 : 0;
}
