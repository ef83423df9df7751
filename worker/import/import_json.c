/* import_json.c - a WilmerAI discussion's JSON files (memories, condensation tracker, summary, timestamps, vision descriptions) into the store. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/xmem.h"
#include "../store/store_seal.h"
#include "../store/store_stmt.h"
#include "import_int.h"

#define IMP_MAXFILE	(256u << 20)	/* far above any real discussion */

/* The file's name for messages: WilmerAI's legacy flat files carry the
 * discussion id in it. */
const char *
imp_file_name(const char *path)
{
	const char	*slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

int
imp_read_file(const char *path, struct buf *b, char err[CONF_ERRLEN])
{
	struct stat	 st;
	ssize_t		 r;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1 ||
	    fstat(fd, &st) == -1) {
		snprintf(err, CONF_ERRLEN, "%s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)IMP_MAXFILE) {
		snprintf(err, CONF_ERRLEN, "%s: %s", path, S_ISREG(st.st_mode) ?
		    "larger than 256 MiB" : "not a regular file");
		close(fd);
		return -1;
	}
	buf_reserve(b, (size_t)st.st_size + 1);
	while ((r = read(fd, b->b_data + b->b_len, b->b_cap - b->b_len - 1))
	    != 0) {
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 || b->b_len + (size_t)r > IMP_MAXFILE) {
			snprintf(err, CONF_ERRLEN, "%s: %s", path, r == -1 ?
			    strerror(errno) : "larger than 256 MiB");
			close(fd);
			return -1;
		}
		b->b_len += (size_t)r;
		buf_reserve(b, 65536);
	}
	b->b_data[b->b_len] = '\0';
	close(fd);
	return 0;
}

/* A Fernet token (encryptUsingApiKey), as a file holds it: maybe with
 * a line break after it. */
bool
imp_encrypted(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	return fernet_is_token(s, n);
}

void
imp_note_encrypted(struct imp_res *r, const char *path, bool tried)
{
	imp_sep(&r->ir_skips, "; ");
	if (tried)
		buf_printf(&r->ir_skips, "%s (encrypted with the API key "
		    "(encryptUsingApiKey): no key given opens it: another API "
		    "key, or another user name)", imp_file_name(path));
	else
		buf_printf(&r->ir_skips, "%s (encrypted with the API key "
		    "(encryptUsingApiKey): it cannot be read without the key, "
		    "see --import-key-file)", imp_file_name(path));
}

/* memories.json, chat_summary.json and the compactor's two files:
 * [{"text_block", "hash"}, ...] (file_utils.read_chunks_with_hashes). */
static int
check_blocks(const struct jfile *jf, char err[CONF_ERRLEN])
{
	json_t		*e, *v;
	const char	*k;
	size_t		 i, j;

	if (!json_is_array(jf->jf_root))
		return jfile_err(jf, NULL, err, "%s must be a list of "
		    "{\"text_block\", \"hash\"} objects, not %s",
		    imp_file_name(jf->jf_path), json_type_desc(jf->jf_root));
	json_array_foreach(jf->jf_root, i, e) {
		if (!json_is_object(e))
			return jfile_err_elem(jf, jf->jf_root, i, err, "entry "
			    "%zu must be an object with \"text_block\" and "
			    "\"hash\", not %s", i + 1, json_type_desc(e));
		for (j = 0; j < 2; j++) {
			k = j == 0 ? "text_block" : "hash";
			if ((v = json_object_get(e, k)) == NULL)
				return jfile_err_elem(jf, jf->jf_root, i, err,
				    "entry %zu has no \"%s\"", i + 1, k);
			if (!json_is_string(v))
				return jfile_err_member(jf, e, k, err, "\"%s\" "
				    "must be a string, not %s", k,
				    json_type_desc(v));
		}
	}
	return 0;
}

/* An object of strings: timestamps.json {"<message hash>": "(Saturday,
 * 2025-09-20 16:30:05)"} (file_utils.load_timestamp_file), or
 * vision_responses.json {"<message key>": "description"}. what names a
 * key's value in messages. */
static int
check_strings(const struct jfile *jf, const char *what, char err[CONF_ERRLEN])
{
	const char	*k;
	json_t		*v;

	if (!json_is_object(jf->jf_root))
		return jfile_err(jf, NULL, err, "%s must be an object of "
		    "strings, not %s", imp_file_name(jf->jf_path),
		    json_type_desc(jf->jf_root));
	json_object_foreach(jf->jf_root, k, v) {
		if (!json_is_string(v))
			return jfile_err_member(jf, jf->jf_root, k, err, "the "
			    "%s of \"%s\" must be a string, not %s", what, k,
			    json_type_desc(v));
	}
	return 0;
}

/* condensation_tracker.json: {"lastCondensationHash": "..."}. */
static int
check_tracker(const struct jfile *jf, char err[CONF_ERRLEN])
{
	const char	*h;

	if (!json_is_object(jf->jf_root))
		return jfile_err(jf, NULL, err, "%s must be an object, not %s",
		    imp_file_name(jf->jf_path), json_type_desc(jf->jf_root));
	return jget_str(jf, jf->jf_root, "lastCondensationHash", NULL, &h,
	    err);
}

/* One JSON file: 1 parsed and checked into jf, 0 encrypted (noted),
 * -1 unreadable or malformed (r_err). */
static int
read_one(const struct imp_disc *d, const char *path, size_t f,
    struct jfile *jf, struct imp_res *r)
{
	struct buf	 b = BUF_INIT;
	int		 rc;

	if (imp_read_file(path, &b, r->ir_err) == -1) {
		buf_free(&b);
		return -1;
	}
	if (imp_plain(d, path, &b, r) == 0) {
		buf_free(&b);
		return 0;
	}
	rc = jfile_parse(path, b.b_data, b.b_len, jf, r->ir_err);
	buf_free(&b);
	if (rc == -1)
		return -1;
	if (f == IMP_TIMESTAMPS)
		rc = check_strings(jf, "time", r->ir_err);
	else if (f == IMP_VISION)
		rc = check_strings(jf, "description", r->ir_err);
	else if (f == IMP_TRACKER)
		rc = check_tracker(jf, r->ir_err);
	else
		rc = check_blocks(jf, r->ir_err);
	return rc == -1 ? -1 : 1;
}

int
imp_json_read(const struct imp_disc *d, struct imp_json *j,
    struct imp_res *r)
{
	size_t	 f;

	memset(j, 0, sizeof(*j));
	for (f = 0; f < IMP_NJSON; f++)
		if (d->d_file[f] != NULL &&
		    read_one(d, d->d_file[f], f, &j->j_f[f], r) == -1) {
			imp_json_free(j);
			return -1;
		}
	return 0;
}

void
imp_json_free(struct imp_json *j)
{
	size_t	 f;

	for (f = 0; f < IMP_NJSON; f++)
		jfile_free(&j->j_f[f]);
}

static const char *
block_text(json_t *e, const char *k)
{
	return json_string_value(json_object_get(e, k));
}

/* How many memories key has (*have) and whether they begin with the
 * blocks of arr (*same: an earlier import of this file). */
static int
ledger_state(struct store *s, const char *key, json_t *arr, long *have,
    bool *same)
{
	struct store_q	*st = store_stmt(s, "SELECT text, hash FROM memories "
			    "WHERE discussion = ? ORDER BY id");
	json_t		*e;
	int		 rc;

	*have = 0;
	*same = true;
	if (st == NULL || store_bind(s, st, "t", key) == -1)
		return -1;
	while ((rc = store_step(s, st)) == 1) {
		e = json_array_get(arr, (size_t)*have);
		if (e == NULL || !imp_same(s, key, store_col_text(st, 0),
		    block_text(e, "text_block")) ||
		    strcmp(store_col_text(st, 1), block_text(e, "hash")) != 0)
			*same = false;
		(*have)++;
	}
	if ((size_t)*have < json_array_size(arr))
		*same = false;
	return rc;
}

/* lastCondensationHash goes with the memories it counts. */
static int
write_tracker(struct store *s, const char *key, const struct imp_json *j,
    struct imp_res *r)
{
	const char	*h;
	int		 n;

	h = json_string_value(json_object_get(j->j_f[IMP_TRACKER].jf_root,
	    "lastCondensationHash"));
	if (h == NULL)
		return 0;
	n = store_exec(s, "UPDATE memory_ledgers SET condensed_hash = ? "
	    "WHERE discussion = ? AND condensed_hash IS NULL", "tt", h, key);
	if (n > 0) {
		imp_sep(&r->ir_parts, ", ");
		buf_adds(&r->ir_parts, "condensation tracker");
	}
	return n == -1 ? -1 : 0;
}

/* Say why the condensation tracker is left out, when it is. */
static void
tracker_left(const struct imp_disc *d, const struct imp_json *j,
    struct imp_res *r)
{
	if (json_object_get(j->j_f[IMP_TRACKER].jf_root,
	    "lastCondensationHash") == NULL)
		return;
	imp_sep(&r->ir_skips, "; ");
	buf_printf(&r->ir_skips, "%s (it goes with memories.json, which is "
	    "%s)", imp_file_name(d->d_file[IMP_TRACKER]),
	    d->d_file[IMP_MEMORIES] == NULL ? "missing" : "not imported");
}

/* The discussion has memories in Sluice already: say whether they are
 * this file's (an earlier import) or Sluice's own. */
static void
memories_present(const struct imp_disc *d, const struct imp_json *j,
    struct imp_res *r, long have, bool same)
{
	if (same) {
		imp_sep(&r->ir_parts, ", ");
		buf_adds(&r->ir_parts, "memories already imported");
		return;
	}
	imp_sep(&r->ir_skips, "; ");
	buf_printf(&r->ir_skips, "%s (the discussion already has %ld %s in "
	    "Sluice)", imp_file_name(d->d_file[IMP_MEMORIES]), have,
	    imp_plural(have, "memory", "memories"));
	tracker_left(d, j, r);
}

/* The ledger, when the discussion has no memory in Sluice yet. */
static int
write_memories(struct store *s, const struct imp_disc *d,
    const struct imp_json *j, struct imp_res *r)
{
	json_t		*arr = j->j_f[IMP_MEMORIES].jf_root, *e;
	const char	*key = d->d_key;
	char		*tok;
	long		 have;
	bool		 same;
	size_t		 i;
	int		 rc;

	if (arr == NULL) {
		tracker_left(d, j, r);
		return 0;
	}
	if (ledger_state(s, key, arr, &have, &same) == -1)
		return -1;
	if (have > 0) {
		memories_present(d, j, r, have, same);
		return 0;
	}
	if (imp_discussion(s, key) == -1 || store_exec(s, "INSERT INTO "
	    "memory_ledgers (discussion) VALUES (?) ON CONFLICT DO NOTHING",
	    "t", key) == -1)
		return -1;
	json_array_foreach(arr, i, e) {
		if ((tok = store_seal(s, block_text(e, "text_block"))) == NULL)
			return -1;
		rc = store_exec(s, "INSERT INTO memories (discussion, text, "
		    "hash, created_at) VALUES (?, ?, ?, ?)", "ttti", key,
		    tok, block_text(e, "hash"), (int64_t)time(NULL));
		free(tok);
		if (rc == -1)
			return -1;
	}
	r->ir_memories = (long)json_array_size(arr);
	imp_sep(&r->ir_parts, ", ");
	buf_printf(&r->ir_parts, "%ld %s", r->ir_memories,
	    imp_plural(r->ir_memories, "memory", "memories"));
	return write_tracker(s, key, j, r);
}

/* The rolling summary (WilmerAI writes one entry; the last one counts),
 * when the discussion has none in Sluice yet. */
static int
write_summary(struct store *s, const struct imp_disc *d,
    const struct imp_json *j, struct imp_res *r)
{
	json_t		*arr = j->j_f[IMP_SUMMARY].jf_root, *e;
	struct store_q	*st;
	char		*tok;
	size_t		 n = json_array_size(arr);
	bool		 same;
	int		 rc;

	if (n == 0)
		return 0;
	e = json_array_get(arr, n - 1);
	st = store_stmt(s, "SELECT text, hash FROM summaries WHERE "
	    "discussion = ?");
	if (st == NULL || store_bind(s, st, "t", d->d_key) == -1 ||
	    (rc = store_step(s, st)) == -1)
		return -1;
	if (rc == 1) {
		same = imp_same(s, d->d_key, store_col_text(st, 0),
		    block_text(e, "text_block")) &&
		    strcmp(store_col_text(st, 1), block_text(e, "hash")) == 0;
		store_end(st);
		if (same) {
			imp_sep(&r->ir_parts, ", ");
			buf_adds(&r->ir_parts, "summary already imported");
		} else {
			imp_sep(&r->ir_skips, "; ");
			buf_printf(&r->ir_skips, "%s (the discussion already "
			    "has a summary in Sluice)",
			    imp_file_name(d->d_file[IMP_SUMMARY]));
		}
		return 0;
	}
	if (imp_discussion(s, d->d_key) == -1 ||
	    (tok = store_seal(s, block_text(e, "text_block"))) == NULL)
		return -1;
	rc = store_exec(s, "INSERT INTO summaries (discussion, text, hash, "
	    "updated_at) VALUES (?, ?, ?, ?)", "ttti", d->d_key, tok,
	    block_text(e, "hash"), (int64_t)time(NULL));
	free(tok);
	if (rc == -1)
		return -1;
	r->ir_summaries = 1;
	imp_sep(&r->ir_parts, ", ");
	if (n > 1)
		buf_printf(&r->ir_parts, "summary (the last of %zu entries)", n);
	else
		buf_adds(&r->ir_parts, "summary");
	return 0;
}

/* Each member of o as a row of key's discussion (sql: an INSERT ... ON
 * CONFLICT DO NOTHING of discussion, member name, member value), unless
 * Sluice has one;
 * the part "N <one or many> (M already present)". The number added, or
 * -1. */
static long
write_pairs(struct store *s, const char *key, json_t *o, const char *sql,
    const char *one, const char *many, struct imp_res *r)
{
	json_t		*v;
	const char	*k;
	char		*tok;
	long		 added = 0, old = 0;
	int		 n;

	if (json_object_size(o) > 0 && imp_discussion(s, key) == -1)
		return -1;
	json_object_foreach(o, k, v) {
		if ((tok = store_seal(s, json_string_value(v))) == NULL)
			return -1;
		n = store_exec(s, sql, "ttt", key, k, tok);
		free(tok);
		if (n == -1)
			return -1;
		if (n == 1)
			added++;
		else
			old++;
	}
	imp_sep(&r->ir_parts, ", ");
	buf_printf(&r->ir_parts, "%ld %s", added, imp_plural(added, one, many));
	if (old > 0)
		buf_printf(&r->ir_parts, " (%ld already present)", old);
	return added;
}

/* Each message's time, unless Sluice has one for it already. */
static int
write_stamps(struct store *s, const char *key, const struct imp_json *j,
    struct imp_res *r)
{
	json_t	*o = j->j_f[IMP_TIMESTAMPS].jf_root;
	long	 n;

	if (o == NULL)
		return 0;
	if (store_sealing(s) && store_seal_prepare(s, "timestamps", key) == -1)
		return -1;
	if ((n = write_pairs(s, key, o, "INSERT INTO timestamps (discussion, "
	    "msg_hash, stamp) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
	    "timestamp",
	    "timestamps", r)) == -1)
		return -1;
	r->ir_timestamps = n;
	return 0;
}

/* ImageProcessor's kept descriptions (vision_responses.json), those the
 * discussion does not have yet; nothing when the file has none. */
static int
write_vision(struct store *s, const char *key, const struct imp_json *j,
    struct imp_res *r)
{
	json_t	*o = j->j_f[IMP_VISION].jf_root;

	if (json_object_size(o) == 0)
		return 0;
	if (store_sealing(s) && store_seal_prepare(s, "vision_responses",
	    key) == -1)
		return -1;
	/* now in unix seconds: no function both backends have */
	return write_pairs(s, key, o, store_is_pg(s) ? "INSERT INTO "
	    "vision_responses (discussion, message_key, text, created_at) "
	    "VALUES (?, ?, ?, CAST(extract(epoch FROM now()) AS bigint)) ON "
	    "CONFLICT DO NOTHING" : "INSERT INTO vision_responses "
	    "(discussion, message_key, text, created_at) VALUES (?, ?, ?, "
	    "unixepoch()) ON CONFLICT DO NOTHING", "image description",
	    "image descriptions", r) == -1 ? -1 : 0;
}

int
imp_json_write(struct store *s, const struct imp_disc *d,
    const struct imp_json *j, struct imp_res *r)
{
	if (write_memories(s, d, j, r) == -1 ||
	    write_summary(s, d, j, r) == -1 ||
	    write_stamps(s, d->d_key, j, r) == -1 ||
	    imp_compact(s, d, j, r) == -1 ||
	    write_vision(s, d->d_key, j, r) == -1) {
		snprintf(r->ir_err, sizeof(r->ir_err), "%s", store_err(s));
		return -1;
	}
	return 0;
}
