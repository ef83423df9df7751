/* export_files.c - a discussion's JSON files and state document from its rows, as WilmerAI writes them: PyJSON-file, Fernet with the key. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "../../common/jsonw.h"
#include "../../common/utf8.h"
#include "../../common/xmem.h"
#include "../../proto/frame.h"
#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "export_int.h"

enum part_count { PC_NONE, PC_MEMORIES, PC_SUMMARIES, PC_TIMESTAMPS };

/* A JSON file made of a discussion's rows: each row (c0, c1) is
 * {"text_block": c0, "hash": c1} of a list, or c0: c1 of an object. */
static const struct part {
	const char	*p_file;
	const char	*p_sql;		/* (c0, c1) of discussion ?, in order */
	const char	*p_exists;	/* written even with no row when this
					   finds one (memories.json: the
					   ledger exists), or NULL */
	bool		 p_list;
	int		 p_sealed;	/* the column that may be sealed */
	const char	*p_what;	/* its rows, as an error names them */
	const char	*p_one;		/* the report's words */
	const char	*p_many;
	enum part_count	 p_count;
} parts[] = {
	{ "memories.json", "SELECT text, hash FROM memories WHERE "
	    "discussion = ? ORDER BY id", "SELECT 1 FROM memory_ledgers WHERE "
	    "discussion = ?", true, 0, "memories", "memory", "memories",
	    PC_MEMORIES },
	{ "chat_summary.json", "SELECT text, hash FROM summaries WHERE "
	    "discussion = ?", NULL, true, 0, "chat summary", "summary",
	    "summaries", PC_SUMMARIES },
	{ "timestamps.json", "SELECT msg_hash, stamp FROM timestamps WHERE "
	    "discussion = ? ORDER BY rowid", NULL, false, 1, "timestamps",
	    "timestamp", "timestamps", PC_TIMESTAMPS },
	{ "context_compactor_old.json", "SELECT text, hash FROM "
	    "compactor_sections WHERE discussion = ? AND section = 'old' "
	    "ORDER BY pos", NULL, true, 0, "context compactor state",
	    "old compactor section", "old compactor sections", PC_NONE },
	{ "context_compactor_oldest.json", "SELECT text, hash FROM "
	    "compactor_sections WHERE discussion = ? AND section = 'oldest' "
	    "ORDER BY pos", NULL, true, 0, "context compactor state",
	    "oldest compactor section", "oldest compactor sections", PC_NONE },
	{ "vision_responses.json", "SELECT message_key, text FROM "
	    "vision_responses WHERE discussion = ? ORDER BY created_at, rowid",
	    NULL, false, 1, "vision responses", "image description",
	    "image descriptions", PC_NONE },
};
#define NPARTS	(sizeof(parts) / sizeof(parts[0]))

/* Why a part cannot be written: its rows are sealed and no key opens
 * them. Noted; the rest of the discussion is written. */
static void
note_sealed(struct imp_res *r, const char *file)
{
	imp_sep(&r->ir_skips, "; ");
	buf_printf(&r->ir_skips, "%s (encrypted with an API key "
	    "(encryptUsingApiKey), and no key given opens it: see "
	    "--export-key-file)", file);
}

static int
db_fail(struct store *s, struct imp_res *r)
{
	snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
	r->ir_fail = EX_IOERR;
	return -1;
}

/* A JSON string of stored text s; text that is not UTF-8 has each bad
 * byte replaced, as Python would have decoded it. */
static json_t *
jstr(const char *s)
{
	struct buf	 b = BUF_INIT;
	json_t		*v;

	if (s == NULL)
		s = "";
	if ((v = json_string(s)) != NULL)
		return v;
	utf8_repair(&b, s, strlen(s));
	v = json_stringn(b.b_data != NULL ? b.b_data : "", b.b_len);
	buf_free(&b);
	return v;
}

/* One row of st as the part's entry in j. 0, or -1 (a sealed text no
 * key opens). */
static int
add_row(struct store *s, const struct exp_disc *d, const struct part *p,
    struct store_q *st, json_t *j)
{
	const char	*c[2];
	char		*plain;

	c[0] = store_col_text(st, 0);
	c[1] = store_col_text(st, 1);
	if (store_unseal(s, d->e_key, p->p_what, c[p->p_sealed], &plain) == -1)
		return -1;
	c[p->p_sealed] = plain;
	if (p->p_list)
		json_array_append_new(j, json_pack("{s:o,s:o}", "text_block",
		    jstr(c[0]), "hash", jstr(c[1])));
	else
		json_object_set_new(j, c[0] != NULL ? c[0] : "", jstr(c[1]));
	explicit_bzero(plain, strlen(plain));
	free(plain);
	return 0;
}

/* Whether the part's file is written with no row: 1 yes, 0 no, -1. */
static int
exists_anyway(struct store *s, const struct exp_disc *d, const struct part *p)
{
	struct store_q	*st;
	int		 r;

	if (p->p_exists == NULL)
		return 0;
	if ((st = store_stmt(s, p->p_exists)) == NULL ||
	    store_bind(s, st, "t", d->e_key) == -1 ||
	    (r = store_step(s, st)) == -1)
		return -1;
	store_end(st);
	return r;
}

/* The part's rows into *out (NULL: no row, nothing to write). 0; 1
 * when a sealed row cannot be opened; -1 on a database error. */
static int
read_part(struct store *s, const struct exp_disc *d, const struct part *p,
    json_t **out, long *n)
{
	struct store_q	*st;
	json_t		*j = p->p_list ? json_array() : json_object();
	int		 r;

	*out = NULL;
	*n = 0;
	if ((st = store_stmt(s, p->p_sql)) == NULL ||
	    store_bind(s, st, "t", d->e_key) == -1) {
		json_decref(j);
		return -1;
	}
	while ((r = store_step(s, st)) == 1 && add_row(s, d, p, st, j) == 0)
		(*n)++;
	if (r == 1)
		store_end(st);
	else if (r == 0 && *n == 0) {
		/* No row: the file is written only when it exists anyway. */
		if ((r = exists_anyway(s, d, p)) == 0) {
			json_decref(j);
			return 0;
		}
		if (r == 1)
			r = 0;
	}
	if (r == 0)
		*out = j;
	else
		json_decref(j);
	return r;
}

static void
count(struct imp_res *r, const struct part *p, long n)
{
	if (p->p_count == PC_MEMORIES)
		r->ir_memories += n;
	else if (p->p_count == PC_SUMMARIES)
		r->ir_summaries += n;
	else if (p->p_count == PC_TIMESTAMPS)
		r->ir_timestamps += n;
	imp_sep(&r->ir_parts, ", ");
	if (p->p_count == PC_SUMMARIES)
		buf_adds(&r->ir_parts, "summary");
	else
		buf_printf(&r->ir_parts, "%ld %s", n, imp_plural(n, p->p_one,
		    p->p_many));
}

/* A JSON value as its file: PyJSON-file text, wiped after use. */
static int
write_json(const struct exp_disc *d, const char *name, const json_t *j,
    struct imp_res *r)
{
	struct buf	 b = BUF_INIT;
	int		 rc;

	jsonw_dump(&b, j, JSONW_PYFILE);
	rc = exp_write(d, name, b.b_data, b.b_len, r);
	explicit_bzero(b.b_data, b.b_len);
	buf_free(&b);
	return rc;
}

static int
one_part(struct store *s, const struct exp_disc *d, const struct part *p,
    struct imp_res *r)
{
	json_t	*j;
	long	 n;
	int	 rc;

	if ((rc = read_part(s, d, p, &j, &n)) == -1)
		return db_fail(s, r);
	if (rc == 1) {
		note_sealed(r, p->p_file);
		return 0;
	}
	if (j == NULL)
		return 0;
	rc = write_json(d, p->p_file, j, r);
	json_decref(j);
	if (rc == 0)
		count(r, p, n);
	return rc;
}

/* condensation_tracker.json: {"lastCondensationHash": hash}. */
static int
tracker(struct store *s, const struct exp_disc *d, struct imp_res *r)
{
	struct store_q	*st;
	json_t		*j;
	int		 rc;

	if ((st = store_stmt(s, "SELECT condensed_hash FROM memory_ledgers "
	    "WHERE discussion = ? AND condensed_hash IS NOT NULL")) == NULL ||
	    store_bind(s, st, "t", d->e_key) == -1 ||
	    (rc = store_step(s, st)) == -1)
		return db_fail(s, r);
	if (rc == 0)
		return 0;
	j = json_pack("{s:o}", "lastCondensationHash",
	    jstr(store_col_text(st, 0)));
	store_end(st);
	rc = write_json(d, "condensation_tracker.json", j, r);
	json_decref(j);
	if (rc == 0) {
		imp_sep(&r->ir_parts, ", ");
		buf_adds(&r->ir_parts, "condensation tracker");
	}
	return rc;
}

/* A stored markdown text as its file; 1 when it cannot be opened. */
static int
markdown(struct store *s, const struct exp_disc *d, const char *name,
    const char *v, struct imp_res *r)
{
	char	*plain;
	int	 rc;

	if (store_unseal(s, d->e_key, "state document", v, &plain) == -1)
		return 1;
	rc = exp_write(d, name, plain, strlen(plain), r);
	explicit_bzero(plain, strlen(plain));
	free(plain);
	return rc;
}

/* state_document.md, and its previous version as the .bak. */
static int
state_doc(struct store *s, const struct exp_disc *d, struct imp_res *r)
{
	struct store_q	*st;
	const char	*prev;
	int		 rc;

	if ((st = store_stmt(s, "SELECT text, previous FROM state_documents "
	    "WHERE discussion = ?")) == NULL ||
	    store_bind(s, st, "t", d->e_key) == -1 ||
	    (rc = store_step(s, st)) == -1)
		return db_fail(s, r);
	if (rc == 0)
		return 0;
	prev = store_col_text(st, 1);
	if ((rc = markdown(s, d, "state_document.md",
	    store_col_text(st, 0), r)) == 0 && prev != NULL)
		rc = markdown(s, d, "state_document.md.bak", prev, r);
	store_end(st);
	if (rc == 1)
		note_sealed(r, "state_document.md");
	else if (rc == 0) {
		imp_sep(&r->ir_parts, ", ");
		buf_adds(&r->ir_parts, prev != NULL ? "state document (with its "
		    "previous version)" : "state document");
	}
	return rc == -1 ? -1 : 0;
}

int
exp_files(struct store *s, const struct exp_disc *d, struct imp_res *r)
{
	size_t	 i;

	for (i = 0; i < NPARTS; i++) {
		if (one_part(s, d, &parts[i], r) == -1)
			return -1;
		if (i == 0 && tracker(s, d, r) == -1)
			return -1;
	}
	return state_doc(s, d, r);
}

int
exp_write(const struct exp_disc *d, const char *name, const char *p,
    size_t n, struct imp_res *r)
{
	struct buf	 tok = BUF_INIT;
	char		*path;
	int		 fd, rc = -1;

	if (d->e_file_key != NULL) {
		if (fernet_encrypt(d->e_file_key, p, n, (uint64_t)time(NULL),
		    NULL, &tok) == -1) {
			snprintf(r->ir_err, sizeof(r->ir_err), "%s/%s: "
			    "libcrypto failed to encrypt", d->e_dir, name);
			r->ir_fail = EX_SOFTWARE;
			return -1;
		}
		p = tok.b_data;
		n = tok.b_len;
	}
	path = xasprintf("%s/%s", d->e_dir, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) != -1) {
		rc = frame_write_all(fd, p, n) == -1 || fsync(fd) == -1 ? -1 : 0;
		if (close(fd) == -1)
			rc = -1;
	}
	if (rc == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s: %s", path,
		    strerror(errno));
		r->ir_fail = EX_CANTCREAT;
	}
	free(path);
	buf_free(&tok);
	return rc;
}
