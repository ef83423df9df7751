/* import.c - sluice-worker --import-wilmer: each WilmerAI discussion found into the database in one transaction, and the report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "../../common/xmem.h"
#include "../store/store_seal.h"
#include "import.h"
#include "import_int.h"

/* What the whole run did, for the total line and the exit status. */
struct imp_total {
	long	t_done;		/* discussions imported */
	long	t_failed;
	struct imp_counts t_c;
	int	t_status;	/* the exit status so far */
};

/* Everything of d in one transaction: all of it, or none of it. */
static void
import_one(struct store *s, const struct imp_disc *d, struct imp_res *r)
{
	struct imp_json		 j;
	const struct imp_key	*seal;

	if (d->d_other.b_len > 0) {
		imp_sep(&r->ir_skips, "; ");
		buf_printf(&r->ir_skips, "%s (Sluice does not keep %s)",
		    d->d_other.b_data, strchr(d->d_other.b_data, ',') != NULL ?
		    "these" : "this");
	}
	if (imp_json_read(d, &j, r) == -1) {
		r->ir_fail = EX_DATAERR;
		return;
	}
	seal = imp_seal_key(d, r);
	store_seal_key(s, seal != NULL ? &seal->ik_k : NULL);
	if (store_begin(s) == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
		r->ir_fail = EX_IOERR;
	} else if (imp_json_write(s, d, &j, r) == -1 ||
	    imp_vec(s, d, r) == -1 || imp_state(s, d, r) == -1) {
		if (r->ir_fail == 0)
			r->ir_fail = EX_IOERR;
		(void)store_rollback(s);
	} else if (store_commit(s) == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
		r->ir_fail = EX_IOERR;
	} else if (seal != NULL && r->ir_parts.b_len > 0)
		buf_printf(&r->ir_parts, " (encrypted for user %s, "
		    "encryptUsingApiKey)", seal->ik_user);
	store_seal_key(s, NULL);
	imp_json_free(&j);
}

/* The discussion's line, and its share of the total. */
static void
report(const struct imp_disc *d, const struct imp_res *r,
    struct imp_total *t)
{
	if (r->ir_fail != 0) {
		fprintf(stderr, "error: %s\n", r->ir_err);
		printf("%s: FAILED, nothing imported: %s\n", d->d_key,
		    r->ir_err);
		t->t_failed++;
		/* Bad input outranks a refused write in the exit status. */
		if (t->t_status != EX_DATAERR)
			t->t_status = r->ir_fail;
	} else {
		imp_print_done(d->d_key, r, "nothing to import", &t->t_c);
		t->t_done++;
	}
	fflush(stdout);
}

static void
report_total(const struct imp_total *t)
{
	long	 n = t->t_done + t->t_failed;

	printf("total: %ld %s (%ld failed): imported ", n, imp_plural(n,
	    "discussion", "discussions"), t->t_failed);
	imp_print_counts(&t->t_c);
}

static struct store *
open_store(const struct import_opts *o, char **path)
{
	struct store_opts	 so = { .so_sync_full = o->io_sync_full };
	struct store		*s;
	char			 err[STORE_ERRLEN];

	*path = store_where_name(o->io_store);
	if ((s = store_open(o->io_store, &so, err)) == NULL)
		fprintf(stderr, "error: %s\n", err);
	return s;
}

static void
run_all(struct store *s, const struct imp_list *l,
    const struct imp_keys *ks, struct imp_total *t)
{
	struct imp_res	 r;
	size_t		 i;

	for (i = 0; i < l->il_n; i++) {
		memset(&r, 0, sizeof(r));
		l->il_v[i].d_keys = ks;
		import_one(s, &l->il_v[i], &r);
		report(&l->il_v[i], &r, t);
		buf_free(&r.ir_parts);
		buf_free(&r.ir_skips);
	}
}

int
import_run(const struct import_opts *o)
{
	struct imp_total	 t;
	struct imp_list		 l;
	struct imp_keys		 ks;
	struct store		*s;
	char			 err[CONF_ERRLEN], *db = NULL;

	memset(&t, 0, sizeof(t));
	if (imp_keys_load(&ks, o, err) == -1) {
		fprintf(stderr, "error: %s\n", err);
		imp_keys_free(&ks);
		return EX_CONFIG;
	}
	if (imp_scan(o->io_dir, &l, err) == -1) {
		fprintf(stderr, "error: %s\n", err);
		imp_keys_free(&ks);
		return EX_NOINPUT;
	}
	if (l.il_n == 0) {
		if (l.il_notes.b_len > 0)
			fputs(l.il_notes.b_data, stderr);
		fprintf(stderr, "error: %s: no WilmerAI discussion found (give "
		    "the DiscussionIds folder or one discussion's folder)\n",
		    o->io_dir);
		imp_list_free(&l);
		imp_keys_free(&ks);
		return EX_NOINPUT;
	}
	if ((s = open_store(o, &db)) == NULL) {
		free(db);
		imp_list_free(&l);
		imp_keys_free(&ks);
		return EX_CANTCREAT;
	}
	printf("importing %s (%s, %zu %s) into %s\n", o->io_dir, l.il_single ?
	    "one discussion's folder" : "a DiscussionIds folder", l.il_n,
	    imp_plural((long)l.il_n, "discussion", "discussions"), db);
	if (l.il_notes.b_len > 0)
		fputs(l.il_notes.b_data, stdout);
	run_all(s, &l, &ks, &t);
	report_total(&t);
	store_close(s);
	free(db);
	imp_list_free(&l);
	imp_keys_free(&ks);
	return t.t_status;
}
