/* vecbackfill.c - sluice-gateway --backfill-embeddings: every vector memory without an embedding by an endpoint's model, embedded offline in batches (A9.6). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../llm/embed.h"
#include "../store/store_stmt.h"
#include "vecbackfill.h"
#include "vecembed.h"
#include "vecmem_text.h"

/* The run, as the embeddings client sees a request: stopped by a
 * signal, never by a gateway (there is none). */
static volatile sig_atomic_t	 stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static bool
off_stopped(struct rq *rq)
{
	(void)rq;
	return stop != 0;
}

static int
off_wake(struct rq *rq, bool readable)
{
	(void)rq;
	(void)readable;
	return stop != 0;
}

/* Only what embed_texts calls. */
static const struct rq_ops off_ops = {
	.ro_stopped = off_stopped,
	.ro_wake = off_wake,
};

struct backfill {
	const struct backfill_opts	*bf_o;
	struct store			*bf_s;
	struct conf_user		*bf_u;
	struct embed_target		 bf_t;
	struct rq			 bf_rq;
	long				 bf_done;	/* memories embedded */
	int				 bf_fails;	/* batches failed in a row */
};

/* Keep the vectors of batch ids in one transaction. 0 or -1. */
static int
keep(struct backfill *bf, const int64_t *ids, const struct embed_vecs *v)
{
	size_t	 i;

	if (store_begin(bf->bf_s) == -1)
		return -1;
	for (i = 0; i < v->ev_n; i++)
		if (vecembed_put(bf->bf_s, ids[i], bf->bf_t.et_ep->e_model,
		    v->ev_v[i], v->ev_dim[i]) == -1) {
			(void)store_rollback(bf->bf_s);
			return -1;
		}
	return store_commit(bf->bf_s);
}

/* Embed texts[0..n) of key and keep their vectors as ids[i]'s: 1 done
 * (or failed, to be tried again), -1 a database error, -2 stop (too
 * many failures in a row, or a signal). */
static int
embed_batch(struct backfill *bf, const char *key, const int64_t *ids,
    char *const *texts, size_t n, long *n_key)
{
	struct embed_vecs	 v;
	struct wresult		 res;
	int			 rc;

	memset(&res, 0, sizeof(res));
	if (embed_texts(&bf->bf_rq, bf->bf_u, &bf->bf_t,
	    (const char *const *)texts, n, &v, &res) == -1) {
		fprintf(stderr, "error: discussion '%s': %s\n", key,
		    res.r_status == RQ_CANCELLED ? "stopped" : res.r_message);
		return res.r_status == RQ_CANCELLED ||
		    ++bf->bf_fails >= VECBACKFILL_TRIES ? -2 : 1;
	}
	bf->bf_fails = 0;
	if ((rc = keep(bf, ids, &v)) == 0) {
		bf->bf_done += (long)v.ev_n;
		*n_key += (long)v.ev_n;
	}
	embed_vecs_free(&v);
	return rc == -1 ? -1 : 1;
}

/* One batch of key: 1 embedded some (or failed, to be tried again), 0
 * none left, -1 a database error, -2 stop. */
static int
batch(struct backfill *bf, const char *key, long *n_key)
{
	char	**texts = NULL;
	int64_t	 *ids = NULL;
	size_t	  n = 0;
	int	  rc;

	if (vecembed_backlog(bf->bf_s, key, bf->bf_t.et_ep->e_model,
	    bf->bf_o->bo_batch, NULL, 0, &ids, &texts, &n) == -1)
		rc = -1;
	else
		rc = n == 0 ? 0 : embed_batch(bf, key, ids, texts, n, n_key);
	vecmem_strv_free(texts);
	free(ids);
	return rc;
}

/* Every discussion with vector memories, in key order. */
static int
run_all(struct backfill *bf)
{
	struct store_q	*st;
	char		*key;
	long		 n;
	int		 r, rc = 0;

	if ((st = store_stmt(bf->bf_s, "SELECT DISTINCT discussion FROM "
	    "vector_memories ORDER BY discussion")) == NULL)
		return -1;
	while (rc >= 0 && (r = store_step(bf->bf_s, st)) == 1) {
		key = xstrdup(store_col_text(st, 0));
		n = 0;
		while ((rc = batch(bf, key, &n)) == 1)
			;
		if (n > 0)
			printf("%s: %ld %s embedded\n", key, n, n == 1 ?
			    "memory" : "memories");
		fflush(stdout);
		free(key);
	}
	if (rc < 0)
		store_end(st);
	else if (r == -1)
		rc = -1;
	return rc;
}

/* How many vector memories still have no embedding by the model, or
 * -1. */
static long
left(struct backfill *bf)
{
	struct store_q	*st;
	long		 n;

	if ((st = store_stmt(bf->bf_s, "SELECT count(*) FROM vector_memories "
	    "WHERE id NOT IN (SELECT memory_id FROM memory_embeddings WHERE "
	    "model = ?)")) == NULL || store_bind(bf->bf_s, st, "t",
	    bf->bf_t.et_ep->e_model) == -1 || store_step(bf->bf_s, st) != 1)
		return -1;
	n = (long)store_col_int(st, 0);
	store_end(st);
	return n;
}

/* The user and the endpoint. 0, or -1 (said on stderr). */
static int
load_target(struct backfill *bf)
{
	char	 err[CONF_ERRLEN];

	if (conf_user_load(bf->bf_o->bo_confdir, bf->bf_o->bo_user, &bf->bf_u,
	    err) == -1 || embed_target_load(bf->bf_o->bo_confdir, bf->bf_u,
	    bf->bf_o->bo_endpoint, &bf->bf_t, err) == -1) {
		fprintf(stderr, "error: %s\n", err);
		return -1;
	}
	return 0;
}

/* The database, which must exist. NULL with the status in *status. */
static struct store *
open_db(const struct backfill_opts *o, int *status)
{
	struct store_opts	 so = { .so_sync_full = o->bo_sync_full };
	struct store		*s;
	char			 err[STORE_ERRLEN], *path;

	path = store_where_name(o->bo_store);
	if (store_exists(o->bo_store) == -1) {
		fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
		*status = EX_NOINPUT;
		s = NULL;
	} else if ((s = store_open(o->bo_store, &so, err)) == NULL) {
		fprintf(stderr, "error: %s\n", err);
		*status = EX_IOERR;
	}
	free(path);
	return s;
}

/* The run's last line, and its status. */
static int
finish(struct backfill *bf, int rc)
{
	long	 n = rc == -1 ? -1 : left(bf);

	if (n == -1) {
		fprintf(stderr, "error: %s\n", store_err(bf->bf_s));
		return EX_IOERR;
	}
	printf("total: %ld %s embedded by '%s' (model '%s'); %ld left\n",
	    bf->bf_done, bf->bf_done == 1 ? "memory" : "memories",
	    bf->bf_t.et_ep->e_name, bf->bf_t.et_ep->e_model, n);
	if (rc == -2)
		fprintf(stderr, stop ? "error: stopped by a signal\n" :
		    "error: stopped after %d failed requests in a row\n",
		    VECBACKFILL_TRIES);
	return n == 0 ? 0 : EX_UNAVAILABLE;
}

int
vecbackfill_run(const struct backfill_opts *o)
{
	struct backfill	 bf;
	char		*db;
	int		 r = EX_CONFIG;

	memset(&bf, 0, sizeof(bf));
	bf.bf_o = o;
	bf.bf_rq = (struct rq){ .rq_ops = &off_ops, .rq_id = "backfill",
	    .rq_wake_fd = -1, .rq_confdir = o->bo_confdir };
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (load_target(&bf) == 0 && (bf.bf_s = open_db(o, &r)) != NULL) {
		db = store_where_name(o->bo_store);
		printf("embedding the vector memories of %s without a vector "
		    "by '%s' (model '%s'), %ld a request\n", db,
		    bf.bf_t.et_ep->e_name, bf.bf_t.et_ep->e_model, o->bo_batch);
		free(db);
		fflush(stdout);
		r = finish(&bf, run_all(&bf));
	}
	store_close(bf.bf_s);
	embed_target_free(&bf.bf_t);
	conf_user_free(bf.bf_u);
	return r;
}
