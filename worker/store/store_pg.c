/* store_pg.c - the store's PostgreSQL driver: every libpq call of the shared store, its results, its write lock and its schema version. */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "../../common/clock.h"
#include "../../common/pgurl.h"
#include "../../common/xmem.h"
#include "store_int.h"
#include "store_pg.h"

/* The driver's error codes (dr_errmsg gives pc_err for each). */
enum {
	PG_ERR = 1,
	PG_BUSY,	/* a lock wait ended: ours, or lock_timeout */
	PG_RANGE,	/* a parameter that is not there */
	PG_NOFUNC,	/* store_func: no C functions */
};

/* The key of the one advisory lock every write transaction takes
 * ("Sluice" and 1; any constant of our own would do). */
#define WRITE_LOCK	5939947130436026369LL

/*
 * How soon a peer that vanished without closing its connection (its
 * machine died, the network between is gone) is noticed, on both sides
 * of the session's TCP connection: after KA_IDLE_S seconds of silence
 * a keepalive probe goes out every KA_INTERVAL_S seconds, and KA_COUNT
 * unanswered probes end the connection; data sent and not acknowledged
 * for USER_TIMEOUT_MS ends it too. So a session whose worker's machine
 * died ends on the server within about 10 s, and its workflow locks
 * are free then. Unix sockets have no such settings (nor need them).
 */
#define KA_IDLE_S	"5"
#define KA_INTERVAL_S	"1"
#define KA_COUNT	"5"
#define USER_TIMEOUT_MS	"10000"
#define CONNECT_S	"5"	/* seconds to wait for a server to answer */

/* Type oids of pg_type (server/catalog/pg_type_d.h is not in libpq-dev). */
#define OID_BOOL	16
#define OID_BYTEA	17
#define OID_TEXT	25
#define OID_INT8	20
#define OID_INT2	21
#define OID_INT4	23
#define OID_OID		26
#define OID_FLOAT4	700
#define OID_FLOAT8	701
#define OID_NUMERIC	1700

struct pg_conn {
	PGconn		*pc_c;
	struct store	*pc_s;
	char		 pc_err[256];
	char		*pc_pw[2];	/* the URL's passwords, kept out of
					   every message */
	unsigned	 pc_nst;	/* statements named so far */
	unsigned	 pc_gen;	/* sessions so far (a reconnect
					   loses the prepared statements) */
	bool		 pc_tx;		/* in a transaction, last we knew */
	int64_t		 pc_key;	/* the connection's key (new_key) */
	bool		 pc_keyed;	/* this session holds it */
};

/*
 * A statement: its name on the server, its parameters (text, except
 * blobs: binary, as bytea), and once run the whole result, walked row
 * by row. Results come as text: numbers are parsed here, bytea is hex.
 */
struct pg_st {
	struct pg_conn	*ps_pc;
	char		 ps_name[24];
	char		*ps_sql;	/* with $N, for preparing again */
	unsigned	 ps_gen;	/* pc_gen when prepared */
	bool		 ps_commit;	/* COMMIT: it may answer ROLLBACK */
	int		 ps_nparams;
	Oid		*ps_types;	/* 0 (the server infers), or text
					   for a number the SQL skips */
	char		**ps_vals;
	int		*ps_lens;
	int		*ps_fmts;
	PGresult	*ps_res;
	int		 ps_row;
	int		 ps_changes;
	char		**ps_blobs;	/* the current row's decoded bytea */
};

#define PC(s)	((struct pg_conn *)(s)->s_conn)

/* Keep msg (one line, without the URL's passwords) for dr_errmsg. */
static void
set_err(struct pg_conn *pc, const char *msg)
{
	char	*p;
	size_t	 i, n;

	snprintf(pc->pc_err, sizeof(pc->pc_err), "%s", msg);
	pc->pc_err[strcspn(pc->pc_err, "\n")] = '\0';
	for (i = 0; i < 2; i++) {
		if (pc->pc_pw[i] == NULL || (n = strlen(pc->pc_pw[i])) == 0)
			continue;
		while ((p = strcasestr(pc->pc_err, pc->pc_pw[i])) != NULL) {
			memset(p, '*', n > 3 ? 3 : n);
			memmove(p + (n > 3 ? 3 : n), p + n, strlen(p + n) + 1);
		}
	}
}

/* A failed result's code, its message kept. */
static int
res_err(struct pg_conn *pc, const PGresult *r)
{
	const char	*msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
	const char	*state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	/* the primary message only: DETAIL may quote the row's values */
	set_err(pc, msg != NULL ? msg : PQerrorMessage(pc->pc_c));
	if (state != NULL && strcmp(state, "55P03") == 0) {
		pc->pc_s->s_wait_end = WAIT_TIMEOUT;	/* lock_timeout */
		return PG_BUSY;
	}
	return PG_ERR;
}

/* Whether a transaction is open, while the connection still says. */
static void
track(struct pg_conn *pc)
{
	PGTransactionStatusType	 t = PQtransactionStatus(pc->pc_c);

	if (PQstatus(pc->pc_c) == CONNECTION_OK)
		pc->pc_tx = t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

/* Run sql without parameters; 0 or an error code. */
static int
simple(struct pg_conn *pc, const char *sql)
{
	PGresult	*r = PQexec(pc->pc_c, sql);
	int		 rc = 0;

	track(pc);
	switch (PQresultStatus(r)) {
	case PGRES_COMMAND_OK:
	case PGRES_TUPLES_OK:
	case PGRES_EMPTY_QUERY:
		break;
	default:
		rc = res_err(pc, r);
	}
	PQclear(r);
	return rc;
}

/* One try at advisory lock key with fn (pg_try_advisory_lock,
 * pg_try_advisory_xact_lock): 1 taken, 0 held by another session, or
 * -1 with *rc set. */
static int
advisory(struct pg_conn *pc, const char *fn, int64_t key, int *rc)
{
	char		 sql[96];
	PGresult	*r;
	int		 got = -1;

	snprintf(sql, sizeof(sql), "SELECT %s(%lld)", fn, (long long)key);
	r = PQexec(pc->pc_c, sql);
	track(pc);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		got = *PQgetvalue(r, 0, 0) == 't';
	else
		*rc = res_err(pc, r);
	PQclear(r);
	return got;
}

/*
 * The session's key. A workflow lock records its holder's session by
 * a key, a random positive number that the session holds as an
 * advisory lock (session level) for as long as it lives: the server
 * frees it when the session ends, however it ends, and any session may
 * try it (pg_try_advisory_xact_lock) to learn whether its holder is
 * gone. No role needs more rights for that, unlike pg_stat_activity,
 * which hides other roles' sessions.
 *
 * The key belongs to the connection, not to one session: after a
 * reconnect the new session takes the same key, so the locks taken
 * before are still held, unless another worker took them over while
 * the key was free (then they are that worker's, and this one's next
 * store_lock or store_unlock of them finds so). Until the new session
 * has the key, every call fails rather than take locks that would look
 * orphaned. The session of ours that the server has not seen end yet
 * (a network failure) may hold it still, for at most the keepalive
 * bound above: the key is waited for as a lock is.
 */
static int
new_key(struct pg_conn *pc, int *rc)
{
	uint64_t	 r;
	int		 n, got = 0;

	for (n = 0; n < 8 && got == 0; n++) {
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
			set_err(pc, "getrandom failed");
			*rc = PG_ERR;
			return -1;
		}
		pc->pc_key = (int64_t)(r >> 1);
		if (pc->pc_key == 0 || pc->pc_key == WRITE_LOCK)
			continue;
		got = advisory(pc, "pg_try_advisory_lock", pc->pc_key, rc);
	}
	if (got == 0) {
		set_err(pc, "no free advisory lock key for the session");
		*rc = PG_ERR;
	}
	return got == 1 ? 0 : -1;
}

/* Take the connection's key again in a new session. 0 or an error code. */
static int
retake_key(struct pg_conn *pc)
{
	uint64_t	 t0 = clock_mono_ms(), ping = t0;
	int		 rc = 0, n, got;

	pc->pc_s->s_wait_end = WAIT_NONE;
	for (n = 0; (got = advisory(pc, "pg_try_advisory_lock", pc->pc_key,
	    &rc)) == 0; n++)
		if (!store_wait_more(pc->pc_s, t0, &ping, n)) {
			set_err(pc, "the session's lock key is still held by "
			    "this worker's previous session, which the server "
			    "has not seen end");
			return PG_BUSY;
		}
	pc->pc_keyed = got == 1;
	return got == 1 ? 0 : rc;
}

static char *
pg_show(const char *path)
{
	return pgurl_name(path);
}

static void
quiet(void *arg, const char *msg)
{
	/* NOTICEs ("relation ... already exists, skipping") are not ours */
}

/* Connect to url, the client's keepalives on (a server that vanished
 * is noticed as the server notices a vanished worker), and giving up
 * after CONNECT_S on a server that does not answer (libpq would wait
 * as long as TCP does: minutes), so a request that needs the store
 * fails soon with the reason. The URL comes last: a setting of its own
 * wins over these. */
static PGconn *
connect_url(const char *url)
{
	const char *const keys[] = { "keepalives", "keepalives_idle",
		    "keepalives_interval", "keepalives_count",
		    "tcp_user_timeout", "connect_timeout", "dbname", NULL };
	const char *const vals[] = { "1", KA_IDLE_S, KA_INTERVAL_S, KA_COUNT,
		    USER_TIMEOUT_MS, CONNECT_S, url, NULL };

	return PQconnectdbParams(keys, vals, 1);
}

static int
pg_open(struct store *s, const char *path)
{
	struct pg_conn	*pc = xcalloc(1, sizeof(*pc));

	s->s_conn = pc;
	pc->pc_s = s;
	pgurl_secrets(path, &pc->pc_pw[0], &pc->pc_pw[1]);
	pc->pc_c = connect_url(path);
	if (pc->pc_c == NULL) {
		set_err(pc, "out of memory");
		return PG_ERR;
	}
	if (PQstatus(pc->pc_c) != CONNECTION_OK) {
		set_err(pc, PQerrorMessage(pc->pc_c));
		return PG_ERR;
	}
	PQsetNoticeProcessor(pc->pc_c, quiet, NULL);
	return 0;
}

/* The session's settings: lock_timeout bounds a row lock wait inside a
 * statement (writers outside a transaction), which libpq cannot
 * interrupt to heartbeat; the server's keepalives end the session soon
 * after its worker's machine vanished (KA_IDLE_S). synchronous_commit stays on (the server's
 * default) with so_sync_full or not: a COMMIT that returned is on disk. */
static int
settings(struct store *s)
{
	char	 sql[384];

	snprintf(sql, sizeof(sql), "SET lock_timeout = %u; SET "
	    "client_encoding = 'UTF8'; SET standard_conforming_strings = on; "
	    "SET tcp_keepalives_idle = " KA_IDLE_S "; "
	    "SET tcp_keepalives_interval = " KA_INTERVAL_S "; "
	    "SET tcp_keepalives_count = " KA_COUNT "; "
	    "SET tcp_user_timeout = " USER_TIMEOUT_MS, s->s_opts.so_busy_ms);
	return simple(PC(s), sql);
}

static int
pg_setup(struct store *s, const char **what)
{
	int	 rc;

	*what = "settings";
	if ((rc = settings(s)) != 0)
		return rc;
	*what = "the session's lock key";
	if (new_key(PC(s), &rc) == -1)
		return rc;
	PC(s)->pc_keyed = true;
	return 0;
}

/* A connection lost (the server restarted) is made again, and the
 * statements are prepared again as they run. Not within a transaction:
 * what it did is gone, and the caller's next statements, its COMMIT
 * above all, must fail rather than run on their own. */
static int
alive(struct pg_conn *pc)
{
	int	 rc;

	if (PQstatus(pc->pc_c) == CONNECTION_OK)
		return pc->pc_keyed || pc->pc_tx ? 0 : retake_key(pc);
	if (pc->pc_tx) {
		pc->pc_tx = false;
		set_err(pc, "the connection to the server was lost in a "
		    "transaction (rolled back)");
		return PG_ERR;
	}
	PQreset(pc->pc_c);
	if (PQstatus(pc->pc_c) != CONNECTION_OK) {
		set_err(pc, PQerrorMessage(pc->pc_c));
		return PG_ERR;
	}
	pc->pc_gen++;
	pc->pc_keyed = false;
	PQsetNoticeProcessor(pc->pc_c, quiet, NULL);
	if ((rc = settings(pc->pc_s)) != 0)
		return rc;
	return retake_key(pc);
}

static int
pg_close(struct store *s)
{
	struct pg_conn	*pc = PC(s);

	if (pc == NULL)
		return 0;
	PQfinish(pc->pc_c);
	xfree_secret(pc->pc_pw[0]);
	xfree_secret(pc->pc_pw[1]);
	free(pc);
	s->s_conn = NULL;
	return 0;
}

static int
prepare_on_server(struct pg_st *ps)
{
	struct pg_conn	*pc = ps->ps_pc;
	PGresult	*r = PQprepare(pc->pc_c, ps->ps_name, ps->ps_sql,
			    ps->ps_nparams, ps->ps_types);
	int		 rc = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = res_err(pc, r);
	PQclear(r);
	ps->ps_gen = pc->pc_gen;
	return rc;
}

static void pg_finalize(void *);

static int
pg_prepare(struct store *s, const char *sql, void **out)
{
	struct pg_conn	*pc = PC(s);
	struct pg_st	*ps;
	char		*text;
	bool		*used;
	int		 n, rc, i;

	if ((text = pgsql_params(sql, &n, &used)) == NULL)
		return STORE_NOT_ONE;
	ps = xcalloc(1, sizeof(*ps));
	ps->ps_pc = pc;
	ps->ps_sql = text;
	ps->ps_commit = strncasecmp(sql, "COMMIT", 6) == 0;
	snprintf(ps->ps_name, sizeof(ps->ps_name), "sluice_%u", pc->pc_nst++);
	ps->ps_nparams = n;
	ps->ps_vals = xcalloc((size_t)n + 1, sizeof(*ps->ps_vals));
	ps->ps_lens = xcalloc((size_t)n + 1, sizeof(*ps->ps_lens));
	ps->ps_fmts = xcalloc((size_t)n + 1, sizeof(*ps->ps_fmts));
	/* SQLite lets SQL skip a number (?1, ?3); the server could not
	 * tell ?2's type */
	ps->ps_types = xcalloc((size_t)n + 1, sizeof(*ps->ps_types));
	for (i = 1; i <= n; i++)
		ps->ps_types[i - 1] = used[i] ? 0 : OID_TEXT;
	free(used);
	if ((rc = alive(pc)) != 0 || (rc = prepare_on_server(ps)) != 0) {
		pg_finalize(ps);
		return rc;
	}
	*out = ps;
	return 0;
}

static void
free_blobs(struct pg_st *ps)
{
	int	 i, n;

	if (ps->ps_blobs == NULL)
		return;
	n = PQnfields(ps->ps_res);
	for (i = 0; i < n; i++) {
		free(ps->ps_blobs[i]);
		ps->ps_blobs[i] = NULL;
	}
}

/* The server's statement lives until the session ends: statements are
 * finalised only when the store closes. */
static void
pg_finalize(void *st)
{
	struct pg_st	*ps = st;
	int		 i;

	if (ps == NULL)
		return;
	free_blobs(ps);
	free(ps->ps_blobs);
	PQclear(ps->ps_res);
	for (i = 0; i < ps->ps_nparams; i++)
		free(ps->ps_vals[i]);
	free(ps->ps_vals);
	free(ps->ps_lens);
	free(ps->ps_fmts);
	free(ps->ps_types);
	free(ps->ps_sql);
	free(ps);
}

static void
pg_reset(void *st, bool clear)
{
	struct pg_st	*ps = st;
	int		 i;

	free_blobs(ps);
	free(ps->ps_blobs);
	ps->ps_blobs = NULL;
	PQclear(ps->ps_res);
	ps->ps_res = NULL;
	ps->ps_row = -1;
	for (i = 0; clear && i < ps->ps_nparams; i++) {
		free(ps->ps_vals[i]);
		ps->ps_vals[i] = NULL;
	}
}

/* Parameter i's slot, emptied; NULL (the error kept) when there is no
 * parameter i. */
static char **
slot(struct pg_st *ps, int i)
{
	if (i < 1 || i > ps->ps_nparams) {
		set_err(ps->ps_pc, "column index out of range");
		return NULL;
	}
	free(ps->ps_vals[i - 1]);
	ps->ps_vals[i - 1] = NULL;
	ps->ps_lens[i - 1] = 0;
	ps->ps_fmts[i - 1] = 0;
	return &ps->ps_vals[i - 1];
}

static int
pg_bind_text(void *st, int i, const char *t)
{
	char	**v = slot(st, i);

	if (v == NULL)
		return PG_RANGE;
	*v = xstrdup(t);
	return 0;
}

static int
pg_bind_int(void *st, int i, int64_t n)
{
	char	**v = slot(st, i);

	if (v == NULL)
		return PG_RANGE;
	*v = xasprintf("%lld", (long long)n);
	return 0;
}

static int
pg_bind_null(void *st, int i)
{
	return slot(st, i) == NULL ? PG_RANGE : 0;
}

static int
pg_bind_blob(void *st, int i, const void *p, size_t n)
{
	struct pg_st	*ps = st;
	char		**v = slot(ps, i);

	if (v == NULL)
		return PG_RANGE;
	*v = xmalloc(n + 1);
	if (n > 0)
		memcpy(*v, p, n);
	ps->ps_lens[i - 1] = (int)n;
	ps->ps_fmts[i - 1] = 1;
	return 0;
}

/* Rows a command changed: INSERT, UPDATE, DELETE, MERGE only (the
 * count PQcmdTuples gives a SELECT is not a change). */
static int
changes(PGresult *r)
{
	const char	*cmd = PQcmdStatus(r);

	if (strncmp(cmd, "INSERT", 6) != 0 && strncmp(cmd, "UPDATE", 6) != 0 &&
	    strncmp(cmd, "DELETE", 6) != 0 && strncmp(cmd, "MERGE", 5) != 0)
		return 0;
	return atoi(PQcmdTuples(r));
}

/* The first dr_step: the statement runs and its whole result is
 * fetched. 0 or an error code. */
static int
run(struct pg_st *ps)
{
	struct pg_conn	*pc = ps->ps_pc;
	PGresult	*r;
	int		 rc;

	if ((rc = alive(pc)) != 0)
		return rc;
	if (ps->ps_gen != pc->pc_gen && (rc = prepare_on_server(ps)) != 0)
		return rc;
	if (ps->ps_commit && PQtransactionStatus(pc->pc_c) == PQTRANS_IDLE) {
		/* as SQLite says; here it would be a mere warning, and a
		 * transaction lost with its connection would look committed */
		set_err(pc, "cannot commit - no transaction is active");
		return PG_ERR;
	}
	r = PQexecPrepared(pc->pc_c, ps->ps_name, ps->ps_nparams,
	    (const char *const *)ps->ps_vals, ps->ps_lens, ps->ps_fmts, 0);
	track(pc);
	if (PQresultStatus(r) != PGRES_COMMAND_OK &&
	    PQresultStatus(r) != PGRES_TUPLES_OK) {
		rc = res_err(pc, r);
		PQclear(r);
		return rc;
	}
	if (ps->ps_commit && strcmp(PQcmdStatus(r), "ROLLBACK") == 0) {
		set_err(pc, "the transaction was rolled back: a statement in "
		    "it had failed");
		PQclear(r);
		return PG_ERR;
	}
	ps->ps_res = r;
	ps->ps_row = -1;
	ps->ps_changes = changes(r);
	if (PQnfields(r) > 0)
		ps->ps_blobs = xcalloc((size_t)PQnfields(r),
		    sizeof(*ps->ps_blobs));
	return 0;
}

static int
pg_step(void *st, int *rc)
{
	struct pg_st	*ps = st;

	*rc = 0;
	if (ps->ps_res == NULL && (*rc = run(ps)) != 0)
		return -1;
	free_blobs(ps);
	if (++ps->ps_row < PQntuples(ps->ps_res))
		return 1;
	return 0;
}

static int
pg_changes(struct store *s, void *st)
{
	return ((struct pg_st *)st)->ps_changes;
}

static int
pg_col_count(void *st)
{
	struct pg_st	*ps = st;

	return ps->ps_res != NULL ? PQnfields(ps->ps_res) : 0;
}

static bool
is_null(struct pg_st *ps, int col)
{
	return ps->ps_res == NULL || col < 0 || col >= PQnfields(ps->ps_res) ||
	    ps->ps_row < 0 || ps->ps_row >= PQntuples(ps->ps_res) ||
	    PQgetisnull(ps->ps_res, ps->ps_row, col);
}

static enum store_type
pg_col_type(void *st, int col)
{
	struct pg_st	*ps = st;

	if (is_null(ps, col))
		return STORE_NULL;
	switch (PQftype(ps->ps_res, col)) {
	case OID_BOOL:
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		return STORE_INTEGER;
	case OID_FLOAT4:
	case OID_FLOAT8:
	case OID_NUMERIC:
		return STORE_FLOAT;
	case OID_BYTEA:
		return STORE_BLOB;
	default:
		return STORE_TEXT;
	}
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0;
}

/* bytea's text form (hex: \x0a1b...) decoded, NUL-terminated, kept
 * until the next step; its length into *len. */
static const char *
bytea(struct pg_st *ps, int col, size_t *len)
{
	const char	*v = PQgetvalue(ps->ps_res, ps->ps_row, col);
	size_t		 i, n = (size_t)PQgetlength(ps->ps_res, ps->ps_row, col);
	char		*out;

	if (n < 2 || v[0] != '\\' || v[1] != 'x') {
		*len = n;	/* not hex: as the server sent it */
		return v;
	}
	*len = (n - 2) / 2;
	if (ps->ps_blobs[col] == NULL) {
		out = ps->ps_blobs[col] = xmalloc(*len + 1);
		for (i = 0; i < *len; i++)
			out[i] = (char)(hexval(v[2 + 2 * i]) << 4 |
			    hexval(v[3 + 2 * i]));
		out[*len] = '\0';
	}
	return ps->ps_blobs[col];
}

static const char *
pg_col_text(void *st, int col)
{
	struct pg_st	*ps = st;
	size_t		 n;

	if (is_null(ps, col))
		return NULL;
	switch (PQftype(ps->ps_res, col)) {
	case OID_BOOL:	/* as SQLite gives a comparison */
		return *PQgetvalue(ps->ps_res, ps->ps_row, col) == 't' ? "1" :
		    "0";
	case OID_BYTEA:
		return bytea(ps, col, &n);
	default:
		return PQgetvalue(ps->ps_res, ps->ps_row, col);
	}
}

static int64_t
pg_col_int(void *st, int col)
{
	const char	*v = pg_col_text(st, col);

	return v != NULL ? strtoll(v, NULL, 10) : 0;
}

static double
pg_col_double(void *st, int col)
{
	const char	*v = pg_col_text(st, col);

	return v != NULL ? strtod(v, NULL) : 0;
}

static const void *
pg_col_blob(void *st, int col, size_t *len)
{
	struct pg_st	*ps = st;
	const char	*p;

	*len = 0;
	if (is_null(ps, col))
		return NULL;
	if (PQftype(ps->ps_res, col) == OID_BYTEA)
		p = bytea(ps, col, len);
	else {
		p = PQgetvalue(ps->ps_res, ps->ps_row, col);
		*len = (size_t)PQgetlength(ps->ps_res, ps->ps_row, col);
	}
	return *len > 0 ? p : NULL;
}

/* Ids come from INSERT ... RETURNING id (both backends have it): there
 * is no rowid here, and lastval() would fail a transaction when no
 * sequence was used yet in the session. */
static int64_t
pg_last_rowid(const struct store *s)
{
	return 0;
}

static const char *
pg_errmsg(const struct store *s, int rc)
{
	if (s->s_conn == NULL)
		return "PostgreSQL: connection closed";
	return PC(s)->pc_err;
}

static bool
pg_busy(int rc)
{
	return rc == PG_BUSY;
}

static bool
pg_in_tx(const struct store *s)
{
	PGTransactionStatusType	 t;

	if (s->s_conn == NULL || PC(s)->pc_c == NULL)
		return false;
	t = PQtransactionStatus(PC(s)->pc_c);
	return t == PQTRANS_INTRANS || t == PQTRANS_INERROR ||
	    t == PQTRANS_ACTIVE;
}

static int
pg_script(struct store *s, const char *sql)
{
	return simple(PC(s), sql);
}

/* One try at the write lock: 1 taken, 0 held by another, or -1 with
 * *rc set. */
static int
try_lock(struct pg_conn *pc, int *rc)
{
	return advisory(pc, "pg_try_advisory_xact_lock", WRITE_LOCK, rc);
}

/*
 * SQLite lets one writer in at a time (BEGIN IMMEDIATE), and callers
 * read, then write, in one transaction on that promise. Here the
 * transaction takes one advisory lock, freed at its end (or when the
 * session dies), polled the way SQLite's busy handler polls: the
 * worker heartbeats through so_on_wait and a stopped request gives
 * up. READ COMMITTED: each statement after the lock sees what the
 * writer before committed.
 */
static int
pg_begin(struct store *s)
{
	struct pg_conn	*pc = PC(s);
	uint64_t	 t0 = clock_mono_ms(), ping = t0;
	int		 rc = 0, n, got;

	s->s_wait_end = WAIT_NONE;
	if ((rc = alive(pc)) != 0 || (rc = simple(pc, "BEGIN ISOLATION "
	    "LEVEL READ COMMITTED")) != 0)
		return rc;
	for (n = 0; (got = try_lock(pc, &rc)) == 0; n++)
		if (!store_wait_more(s, t0, &ping, n)) {
			(void)simple(pc, "ROLLBACK");
			set_err(pc, "database is locked: another process "
			    "holds the write lock");
			return PG_BUSY;
		}
	if (got == -1)
		(void)simple(pc, "ROLLBACK");
	return got == 1 ? 0 : rc;
}

/* The version lives in a one-row table, made by the first migration
 * (in its transaction, under the write lock). Whether the table is
 * there is read from pg_tables, not with to_regclass(): a transaction
 * that waited for the lock while another made the table would not see
 * it by name (the session's catalog cache is from before). */
static int
pg_version(struct store *s, int *v)
{
	const char	*sql[] = { "SELECT count(*) FROM pg_catalog.pg_tables "
			    "WHERE schemaname = current_schema() AND "
			    "tablename = 'sluice_schema'",
			    "SELECT version FROM sluice_schema" };
	PGresult	*r;
	size_t		 i;
	int		 rc = 0;

	*v = 0;
	for (i = 0; i < 2 && rc == 0; i++) {
		r = PQexec(PC(s)->pc_c, sql[i]);
		track(PC(s));
		if (PQresultStatus(r) != PGRES_TUPLES_OK)
			rc = res_err(PC(s), r);
		else
			*v = PQntuples(r) == 1 ? atoi(PQgetvalue(r, 0, 0)) : 0;
		PQclear(r);
		if (*v == 0)
			break;		/* no table: a new database */
	}
	return rc;
}

static int
pg_set_version(struct store *s, int v)
{
	char	 sql[320];

	snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS sluice_schema ("
	    "one_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one_row), "
	    "version INTEGER NOT NULL); INSERT INTO sluice_schema (version) "
	    "VALUES (%d) ON CONFLICT (one_row) DO UPDATE SET version = "
	    "excluded.version", v);
	return simple(PC(s), sql);
}

/* PostgreSQL runs no C function of ours: a caller that needs one has
 * SQL of its own for this dialect (store_dialect). */
static int
pg_func(struct store *s, const char *name, store_fn *fn)
{
	set_err(PC(s), "PostgreSQL cannot call the worker's C functions");
	return PG_NOFUNC;
}

/* A lock's holder: this session (its server process, for messages)
 * and the connection's key. */
static void
pg_holder(struct store *s, int64_t *id, int64_t *key)
{
	*id = PQbackendPID(PC(s)->pc_c);
	*key = PC(s)->pc_key;
}

/* In the lock's transaction: the holder's key is free when its session
 * ended. Taken, it stays ours until the transaction ends, so the
 * holder, reconnecting, cannot take it back while the lock is taken
 * over. */
static int
pg_holder_gone(struct store *s, int64_t id, int64_t key, bool *gone)
{
	int	 rc = 0, got;

	*gone = false;
	if (id <= 0 || key <= 0 || key == PC(s)->pc_key)
		return 0;
	if ((got = advisory(PC(s), "pg_try_advisory_xact_lock", key, &rc)) ==
	    -1)
		return rc;
	*gone = got == 1;
	return 0;
}

const struct store_driver store_pg = {
	.dr_name = "postgresql",
	.dr_dialect = DIALECT_PG,
	.dr_show = pg_show,
	.dr_open = pg_open,
	.dr_setup = pg_setup,
	.dr_close = pg_close,
	.dr_prepare = pg_prepare,
	.dr_finalize = pg_finalize,
	.dr_reset = pg_reset,
	.dr_bind_text = pg_bind_text,
	.dr_bind_int = pg_bind_int,
	.dr_bind_null = pg_bind_null,
	.dr_bind_blob = pg_bind_blob,
	.dr_step = pg_step,
	.dr_col_count = pg_col_count,
	.dr_col_type = pg_col_type,
	.dr_col_text = pg_col_text,
	.dr_col_int = pg_col_int,
	.dr_col_double = pg_col_double,
	.dr_col_blob = pg_col_blob,
	.dr_changes = pg_changes,
	.dr_last_rowid = pg_last_rowid,
	.dr_errmsg = pg_errmsg,
	.dr_busy = pg_busy,
	.dr_in_tx = pg_in_tx,
	.dr_begin = pg_begin,
	.dr_script = pg_script,
	.dr_version = pg_version,
	.dr_set_version = pg_set_version,
	.dr_func = pg_func,
	.dr_holder = pg_holder,
	.dr_holder_gone = pg_holder_gone,
};
