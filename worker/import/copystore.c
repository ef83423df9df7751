/* copystore.c - sluice-worker --copy-store: open both stores, copy every table in one transaction, check, and report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "../../common/pgurl.h"
#include "../../common/xmem.h"
#include "../store/store_copy.h"
#include "../store/store_schema.h"
#include "../store/store_stmt.h"
#include "copystore.h"

/* One end of the copy: the argument given, the store's path, its name
 * for messages (a URL without its password), and the store once open. */
struct end {
	const char	*e_arg;
	const char	*e_role;	/* "source", "target" */
	char		*e_path;
	char		*e_name;
	struct store	*e_s;
};

/* What the run found, table by table. */
struct run {
	struct store_copy_count	*r_c;	/* store_copy_ntables() of them */
	int64_t			 r_copied, r_there, r_rows;
	int			 r_nbad;	/* tables that differ or miss rows */
};

/* An argument that can name a store, without a password: EX_USAGE
 * (said on stderr) or 0. */
static int
arg_ok(const char *arg, const char *role)
{
	if (*arg == '\0') {
		fprintf(stderr, "error: the %s store is empty: give a SQLite "
		    "file, a state folder or a postgresql:// URL\n", role);
		return EX_USAGE;
	}
	if (!pgurl_is(arg) && strstr(arg, "://") != NULL) {
		fprintf(stderr, "error: %s store '%s': not a store Sluice "
		    "knows: give a SQLite file, a state folder or a "
		    "postgresql:// URL\n", role, arg);
		return EX_USAGE;
	}
	if (pgurl_is(arg) && pgurl_has_password(arg)) {
		char	*n = pgurl_name(arg);

		fprintf(stderr, "error: %s store %s: the URL holds a password, "
		    "which would show in the process list: leave it out and "
		    "give it in PGPASSWORD or a password file (PGPASSFILE, "
		    "~/.pgpass), which libpq reads\n", role, n);
		free(n);
		return EX_USAGE;
	}
	return 0;
}

/* The length of a folder's path without its trailing slashes (of "/",
 * 0: "/sluice.db" then). */
static int
trimmed(const char *dir)
{
	size_t	 n = strlen(dir);

	while (n > 0 && dir[n - 1] == '/')
		n--;
	return (int)n;
}

/* The path of the store an argument names: a URL as it is, a folder's
 * sluice.db (as --state-dir), or a file. */
static void
end_init(struct end *e, const char *arg, const char *role)
{
	struct stat	 st;

	memset(e, 0, sizeof(*e));
	e->e_arg = arg;
	e->e_role = role;
	if (!pgurl_is(arg) && stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		e->e_path = xasprintf("%.*s/sluice.db", trimmed(arg), arg);
	else
		e->e_path = xstrdup(arg);
	e->e_name = store_where_name(e->e_path);
}

static void
end_free(struct end *e)
{
	store_close(e->e_s);
	xfree_secret(e->e_path);
	free(e->e_name);
}

/* The source must exist: store_open would make an empty SQLite file of
 * a mistyped name. */
static int
source_exists(const struct end *e)
{
	if (store_exists(e->e_path) == 0)
		return 0;
	fprintf(stderr, "error: source store %s: %s (give a SQLite file, a "
	    "state folder holding sluice.db, or a postgresql:// URL)\n",
	    e->e_name, strerror(errno));
	return EX_NOINPUT;
}

/* Two SQLite paths of one file, or two URLs alike: the same store. */
static int
not_same_files(const struct end *a, const struct end *b)
{
	struct stat	 sa, sb;
	bool		 same;

	if (pgurl_is(a->e_path) != pgurl_is(b->e_path))
		return 0;
	if (pgurl_is(a->e_path))
		same = strcmp(a->e_name, b->e_name) == 0;
	else
		same = stat(a->e_path, &sa) == 0 && stat(b->e_path, &sb) == 0 &&
		    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (!same)
		return 0;
	fprintf(stderr, "error: %s and %s are the same store: nothing to "
	    "copy\n", a->e_name, b->e_name);
	return EX_USAGE;
}

/* Open e's store (the target with synchronous=FULL: the one commit
 * costs nothing more, and a copy that said "done" is on disk). */
static int
end_open(struct end *e, bool target)
{
	struct store_opts	 o = { .so_sync_full = target };
	char			 err[STORE_ERRLEN];

	if ((e->e_s = store_open(e->e_path, &o, err)) != NULL)
		return 0;
	fprintf(stderr, "error: cannot open the %s store: %s\n", e->e_role,
	    err);
	return target ? EX_CANTCREAT : EX_NOINPUT;
}

/* A PostgreSQL database by what the server says of it (its name and
 * when the server started), into out: two URLs that differ may still
 * reach one database (localhost and 127.0.0.1, a socket). */
static int
pg_identity(struct end *e, char *out, size_t len)
{
	struct store_q	*st;

	if ((st = store_stmt(e->e_s, "SELECT current_database() || ' ' || "
	    "pg_postmaster_start_time()")) == NULL ||
	    store_step(e->e_s, st) != 1) {
		fprintf(stderr, "error: %s\n", store_err(e->e_s));
		return EX_IOERR;
	}
	snprintf(out, len, "%s", store_col_text(st, 0));
	store_end(st);
	return 0;
}

static int
not_same_db(struct end *a, struct end *b)
{
	char	 ia[256], ib[256];
	int	 r;

	if (!store_is_pg(a->e_s) || !store_is_pg(b->e_s))
		return 0;
	if ((r = pg_identity(a, ia, sizeof(ia))) != 0 ||
	    (r = pg_identity(b, ib, sizeof(ib))) != 0)
		return r;
	if (strcmp(ia, ib) != 0)
		return 0;
	fprintf(stderr, "error: %s and %s are the same database: nothing to "
	    "copy\n", a->e_name, b->e_name);
	return EX_USAGE;
}

/* Check the arguments, then open both stores. 0 or the exit status. */
static int
open_both(const char *a, const char *b, struct end *from, struct end *to)
{
	int	 r;

	if ((r = arg_ok(a, "source")) != 0 || (r = arg_ok(b, "target")) != 0)
		return r;
	end_init(from, a, "source");
	end_init(to, b, "target");
	if ((r = source_exists(from)) != 0 ||
	    (r = not_same_files(from, to)) != 0 ||
	    (r = end_open(from, false)) != 0 ||
	    (r = end_open(to, true)) != 0)
		return r;
	return not_same_db(from, to);
}

/* The source read as of one moment (a read transaction: SQLite's
 * snapshot, PostgreSQL's REPEATABLE READ), taking no write lock: a
 * gateway still running is not stopped, but what it writes after this
 * is not copied. */
static int
snapshot(struct end *from)
{
	if (store_exec(from->e_s, store_is_pg(from->e_s) ? "BEGIN ISOLATION "
	    "LEVEL REPEATABLE READ READ ONLY" : "BEGIN", "") != -1)
		return 0;
	fprintf(stderr, "error: %s\n", store_err(from->e_s));
	return EX_IOERR;
}

/* Every table into the target, in its write transaction: committed
 * when every row is there or was put there, else rolled back. */
static int
copy_all(struct end *from, struct end *to, struct run *rn)
{
	char	 err[STORE_ERRLEN];
	int	 i, n = store_copy_ntables();

	if (store_begin(to->e_s) == -1) {
		fprintf(stderr, "error: %s (is a gateway still using the "
		    "target? stop it first)\n", store_err(to->e_s));
		return EX_IOERR;
	}
	for (i = 0; i < n; i++) {
		if (store_copy_rows(from->e_s, to->e_s, i, &rn->r_c[i],
		    err) == -1) {
			fprintf(stderr, "error: %s\n", err);
			(void)store_rollback(to->e_s);
			return EX_IOERR;
		}
		if (rn->r_c[i].cc_differ > 0)
			rn->r_nbad++;
	}
	if (rn->r_nbad > 0) {
		(void)store_rollback(to->e_s);
		return EX_DATAERR;
	}
	if (store_copy_ids(to->e_s, err) == -1) {
		fprintf(stderr, "error: %s\n", err);
		(void)store_rollback(to->e_s);
		return EX_IOERR;
	}
	if (store_commit(to->e_s) == -1) {
		fprintf(stderr, "error: %s\n", store_err(to->e_s));
		return EX_IOERR;
	}
	return 0;
}

/* The tables whose rows the target holds otherwise: nothing copied. */
static void
report_conflicts(const struct run *rn)
{
	const struct store_copy_count	*c;
	int				 i;

	for (i = 0; i < store_copy_ntables(); i++) {
		c = &rn->r_c[i];
		if (c->cc_differ > 0)
			printf("%s: %lld %s of the source's %s in the "
			    "target (first: %s)\n", store_copy_table(i),
			    (long long)c->cc_differ, c->cc_differ == 1 ?
			    "row" : "rows", c->cc_differ == 1 ? "differs" :
			    "differ", c->cc_first);
	}
	printf("nothing was copied: the target holds other values under "
	    "keys of the source's, and a copy never replaces them; copy "
	    "into an empty database, or one this source was copied into "
	    "before\n");
}

/* The check, table by table, with each table's line. */
static int
check_all(struct end *from, struct end *to, struct run *rn)
{
	struct store_copy_count	*c;
	char			 err[STORE_ERRLEN];
	int			 i;

	for (i = 0; i < store_copy_ntables(); i++) {
		c = &rn->r_c[i];
		if (store_copy_check(from->e_s, to->e_s, i, c, err) == -1) {
			fprintf(stderr, "error: checking: %s\n", err);
			return EX_IOERR;
		}
		printf("%s: copied %lld, already there %lld, source has %lld, "
		    "target now has %lld\n", store_copy_table(i),
		    (long long)c->cc_copied, (long long)c->cc_there,
		    (long long)c->cc_source, (long long)c->cc_target);
		if (c->cc_missing + c->cc_differ > 0) {
			printf("%s: CHECK FAILED: %lld missing, %lld "
			    "different (first: %s)\n", store_copy_table(i),
			    (long long)c->cc_missing, (long long)c->cc_differ,
			    c->cc_first);
			rn->r_nbad++;
		}
		rn->r_copied += c->cc_copied;
		rn->r_there += c->cc_there;
		rn->r_rows += c->cc_source;
	}
	return 0;
}

/* The tables left out, with the source's rows there. */
static int
report_skipped(struct end *from)
{
	const char	*t, *why;
	char		 err[STORE_ERRLEN];
	int64_t		 n;
	int		 i;

	for (i = 0; (t = store_copy_skipped(i, &why)) != NULL; i++) {
		if ((n = store_copy_count_rows(from->e_s, t, err)) == -1) {
			fprintf(stderr, "error: %s\n", err);
			return EX_IOERR;
		}
		printf("%s: not copied (%s), source has %lld\n", t, why,
		    (long long)n);
	}
	printf("keyword index: not copied as such; the target indexes the "
	    "copied vector_fts text itself (SQLite: FTS5, PostgreSQL: "
	    "tsvector)\n");
	return 0;
}

static int
report_end(const struct run *rn)
{
	int	 n = store_copy_ntables();

	if (rn->r_nbad > 0) {
		printf("CHECK FAILED in %d of %d tables: the copy was committed "
		    "but does not match the source (see above)\n", rn->r_nbad,
		    n);
		return EX_DATAERR;
	}
	printf("checked: all %lld rows of the source's %d tables are in the "
	    "target with the same values\n", (long long)rn->r_rows, n);
	printf("done: copied %lld %s, %lld already there\n",
	    (long long)rn->r_copied, rn->r_copied == 1 ? "row" : "rows",
	    (long long)rn->r_there);
	return 0;
}

/* Copy, check and report on two open stores. */
static int
copy_open(struct end *from, struct end *to)
{
	struct run	 rn;
	int		 r;

	memset(&rn, 0, sizeof(rn));
	rn.r_c = xcalloc((size_t)store_copy_ntables(), sizeof(*rn.r_c));
	printf("copying %s (%s) into %s (%s), schema version %d\n",
	    from->e_name, store_is_pg(from->e_s) ? "PostgreSQL" : "SQLite",
	    to->e_name, store_is_pg(to->e_s) ? "PostgreSQL" : "SQLite",
	    store_schema_version());
	fflush(stdout);
	if ((r = snapshot(from)) == 0 && (r = copy_all(from, to, &rn)) ==
	    EX_DATAERR)
		report_conflicts(&rn);
	if (r == 0 && (r = check_all(from, to, &rn)) == 0 &&
	    (r = report_skipped(from)) == 0)
		r = report_end(&rn);
	(void)store_rollback(from->e_s);
	free(rn.r_c);
	return r;
}

int
copystore_run(const char *from, const char *to)
{
	struct end	 f, t;
	int		 r;

	memset(&f, 0, sizeof(f));
	memset(&t, 0, sizeof(t));
	if ((r = open_both(from, to, &f, &t)) == 0)
		r = copy_open(&f, &t);
	end_free(&f);
	end_free(&t);
	return r;
}
