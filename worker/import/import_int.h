/* import_int.h - what the files of the WilmerAI import share: the discussions found and what importing each did. */
#ifndef SLUICE_IMPORT_INT_H
#define SLUICE_IMPORT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../../common/buf.h"
#include "../../common/fernet.h"
#include "../../common/json.h"
#include "../store/store.h"

/* The files of a discussion that are imported, in the order they are. */
enum imp_file {
	IMP_MEMORIES,		/* memories.json */
	IMP_TRACKER,		/* condensation_tracker.json */
	IMP_SUMMARY,		/* chat_summary.json */
	IMP_TIMESTAMPS,		/* timestamps.json */
	IMP_COMPACT_OLD,	/* context_compactor_old.json */
	IMP_COMPACT_OLDEST,	/* context_compactor_oldest.json */
	IMP_VISION,		/* vision_responses.json */
	IMP_VECTOR,		/* vector_memory.db */
	IMP_STATE,		/* state_document.md */
	IMP_STATE_BAK,		/* state_document.md.bak: its last version */
	IMP_NFILES
};
#define IMP_NJSON	IMP_VECTOR	/* the files before it are JSON */

/* A key derived for an API key and a user name (A10.2). */
struct imp_key {
	char			 ik_dir[FERNET_DIRLEN];	/* its folder */
	struct fernet_key	 ik_k;
	const char		*ik_user;	/* NULL: WilmerAI's fixed salt */
	bool			 ik_seal;	/* ik_user sets encryptUsingApiKey:
						   store what is imported for
						   it with this key */
};

/* The keys the import was given. */
struct imp_keys {
	struct imp_key	*ik_v;
	size_t		 ik_n;
};

/* One discussion found under the folder given. */
struct imp_disc {
	char		*d_key;		/* Sluice's: "id" or "<16 hex>/id" */
	char		*d_id;		/* WilmerAI's discussion id */
	char		*d_file[IMP_NFILES];	/* the file WilmerAI would read
						   for each part, or NULL */
	struct buf	 d_other;	/* files Sluice does not keep, joined
					   by ", " */
	const struct imp_keys *d_keys;	/* to open encrypted files, or NULL */
};

struct imp_list {
	struct imp_disc	*il_v;		/* sorted by key */
	size_t		 il_n;
	bool		 il_single;	/* the folder is one discussion's */
	struct buf	 il_notes;	/* lines about folders left out */
};

/* The JSON files of one discussion, parsed and checked; a file that is
 * absent or encrypted has a NULL jf_root. */
struct imp_json {
	struct jfile	 j_f[IMP_NJSON];
};

/* What importing one discussion did. */
struct imp_res {
	long		 ir_memories;
	long		 ir_summaries;
	long		 ir_timestamps;
	long		 ir_vectors;
	long		 ir_hashlog;
	long		 ir_embeddings;	/* memory_embeddings rows */
	long		 ir_bad_vectors;	/* ...left out: torn blobs */
	struct buf	 ir_parts;	/* "3 memories, summary, ..." */
	struct buf	 ir_skips;	/* what was left out and why, joined
					   by "; " */
	int		 ir_fail;	/* 0, or the exit status the failure
					   calls for (nothing was imported) */
	char		 ir_err[CONF_ERRLEN];
};

/* import_scan.c: find the discussions under dir, a DiscussionIds folder
 * (with per-API-key folders and legacy flat files) or one discussion's
 * folder. Returns 0, or -1 with err set when dir is not a readable
 * folder. imp_list_free frees what it found. */
int	imp_scan(const char *dir, struct imp_list *, char err[CONF_ERRLEN]);
void	imp_list_free(struct imp_list *);

/* import_json.c: read and check the JSON files of d into j (0, or -1
 * with r_err "path:line:column: message"); encrypted files are noted in
 * r_skips and left out. imp_json_write imports them inside the caller's
 * transaction (0, or -1 with r_err from the store); imp_json_free. */
int	imp_json_read(const struct imp_disc *d, struct imp_json *j,
	    struct imp_res *r);
int	imp_json_write(struct store *, const struct imp_disc *d,
	    const struct imp_json *j, struct imp_res *r);
void	imp_json_free(struct imp_json *j);

/* import_compact.c: the ContextCompactor state of d's JSON files j,
 * each section only when the discussion has none in Sluice yet, inside
 * the caller's transaction (0, or -1 with the store's error). */
int	imp_compact(struct store *, const struct imp_disc *d,
	    const struct imp_json *j, struct imp_res *r);

/* import_vec.c: copy d's vector_memory.db (memories with their keyword
 * index rows, and the hash log) inside the caller's transaction. 0, or
 * -1 with r_err and r_fail set. */
int	imp_vec(struct store *, const struct imp_disc *d, struct imp_res *r);

/* import_state.c: d's state document and its previous version, when
 * the discussion has none in Sluice, inside the caller's transaction.
 * 0, or -1 with r_err and r_fail set. */
int	imp_state(struct store *, const struct imp_disc *d, struct imp_res *r);

/* import_scan.c: whether name is an API key's folder, named like
 * sha256(key)[:16] (WilmerAI's hexdigest is lower case); whether id is
 * a discussion id WilmerAI accepts (_is_safe_flat_config_name: one path
 * component, no drive colon). */
bool	imp_is_keydir(const char *name);
bool	imp_id_safe(const char *id);

/* import_json.c: read a whole file into b (0, or -1 with err). */
int	imp_read_file(const char *path, struct buf *b, char err[CONF_ERRLEN]);

/* import_json.c: whether text looks like a Fernet token, WilmerAI's
 * encryption with the API key (encryptUsingApiKey). */
bool	imp_encrypted(const char *s, size_t n);

/* import_json.c: note in r that path is encrypted and left out;
 * tried: keys were given for it and none opened it. */
void	imp_note_encrypted(struct imp_res *r, const char *path, bool tried);

/* What a whole run moved, for its total line. */
struct imp_counts {
	long	c_memories;
	long	c_summaries;
	long	c_timestamps;
	long	c_vectors;
	long	c_hashlog;
};

/* import_util.c: print key's line for a discussion done: what r says
 * was moved ("none" when nothing), then what was skipped; add r's
 * numbers to c. */
void	imp_print_done(const char *key, const struct imp_res *r,
	    const char *none, struct imp_counts *c);

/* import_util.c: print c as the total line's tail, "N memories, N
 * summaries, ..., N hash log entries\n". */
void	imp_print_counts(const struct imp_counts *c);

struct import_opts;

/* import_crypt.c: a key for each API key given (o's key files, then
 * $WILMER_API_KEY) and each user name of o (WilmerAI's fixed salt when
 * there is none). 0, or -1 with err. imp_keys_free wipes them. */
int	imp_keys_load(struct imp_keys *ks, const struct import_opts *o,
	    char err[CONF_ERRLEN]);
void	imp_keys_free(struct imp_keys *ks);

/* import_crypt.c: the text of a file of d that was read into b, as
 * WilmerAI reads it with an API key: 1 with the text in b (it was
 * plain, or one of d's keys decrypted it), 0 when it is encrypted and
 * no key given opens it (noted in r). */
int	imp_plain(const struct imp_disc *d, const char *path, struct buf *b,
	    struct imp_res *r);

/* import_crypt.c: the key d's rows are stored encrypted with, or NULL
 * (plain): d is in an API key's folder and a key given for it belongs
 * to a user that encrypts (the one that opens one of d's encrypted
 * files, else the only such user); several candidates and nothing to
 * tell them apart are noted in r, and d stays plain. */
const struct imp_key *imp_seal_key(const struct imp_disc *d,
	    struct imp_res *r);

/* import_util.c: whether stored value v of discussion d (sealed or
 * not, store_unseal) is plain; false when it cannot be opened. */
bool	imp_same(struct store *, const char *d, const char *v,
	    const char *plain);

/* import_json.c: the last component of path (borrowed). */
const char *imp_file_name(const char *path);

/* import_util.c: the discussions row for key, if missing (0 or -1). */
int	imp_discussion(struct store *, const char *key);

/* import_util.c: start a new item of list b (sep between items). */
void	imp_sep(struct buf *b, const char *sep);

/* import_util.c: one or many, for "1 memory" and "2 memories". */
const char *imp_plural(long n, const char *one, const char *many);

#endif
