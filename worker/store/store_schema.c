/* store_schema.c - the database schema as numbered migration steps (SQLite's dialect), applied at open under the driver's schema version. */
#include <stdio.h>

#include "../../common/log.h"
#include "store_int.h"
#include "store_schema.h"
#include "store_stmt.h"

/*
 * These steps are in SQLite's dialect (FTS5, INTEGER PRIMARY KEY
 * rowids, AUTOINCREMENT); the driver runs them (dr_script) and keeps
 * the version (dr_version: PRAGMA user_version). PostgreSQL has a list
 * of its own in step with this one (store_schema_pg.c): a new step here
 * is a new step there.
 *
 * steps[N - 1] takes the schema from version N - 1 to N. A step is never
 * edited once released: a change is a new step at the end. Every worker
 * migrates at open, inside one BEGIN IMMEDIATE transaction, so when
 * several open a new file at once one of them does the work and the
 * others find it done.
 */
static const char *const steps[] = {
	/* 1 */
	/* Named locks (WorkflowLock, memory generation): lock_id the
	 * lock's name, owner the request id of the run holding it, pid the
	 * worker process that took it (0: unknown), expires_at unix
	 * seconds. A row whose expiry has passed, or whose process is gone,
	 * counts as free. */
	"CREATE TABLE workflow_locks ("
	"  lock_id TEXT PRIMARY KEY,"
	"  owner TEXT NOT NULL,"
	"  expires_at INTEGER NOT NULL,"
	"  pid INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX workflow_locks_owner ON workflow_locks(owner);"
	/* A discussion id (scoped by a hash of the API key when the user
	 * asks for it): the parent of every per-discussion row, so deleting
	 * one deletes its memory. */
	"CREATE TABLE discussions ("
	"  key TEXT PRIMARY KEY,"
	"  created_at INTEGER NOT NULL);"
	/* WilmerAI's memories.json: the ledger of memory text blocks, in
	 * order of id; hash is the hash of the last message of the chunk
	 * that produced the block (two chunks may end with equal messages,
	 * so it is not unique). Condensation replaces a run of rows by one
	 * that takes the id of the run's first row, so the order holds. */
	"CREATE TABLE memories ("
	"  id INTEGER PRIMARY KEY,"
	"  discussion TEXT NOT NULL REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  text TEXT NOT NULL,"
	"  hash TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL);"
	"CREATE INDEX memories_hash ON memories(discussion, hash);"
	/* A discussion's ledger exists (WilmerAI: its memories.json file
	 * exists, even empty: the message-count trigger is then on), and
	 * condensed_hash is condensation_tracker.json's lastCondensationHash. */
	"CREATE TABLE memory_ledgers ("
	"  discussion TEXT PRIMARY KEY REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  condensed_hash TEXT);"
	/* chat_summary.json: the rolling summary of a discussion, and the
	 * hash of the last memory folded into it. */
	"CREATE TABLE summaries ("
	"  discussion TEXT PRIMARY KEY REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  text TEXT NOT NULL,"
	"  hash TEXT NOT NULL,"
	"  updated_at INTEGER NOT NULL);"
	/* state_document.md (and its .bak): the markdown document of what
	 * is true now, merged from new facts by the user's workflow. */
	"CREATE TABLE state_documents ("
	"  discussion TEXT PRIMARY KEY REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  text TEXT NOT NULL,"
	"  previous TEXT,"
	"  updated_at INTEGER NOT NULL);"
	/* timestamps.json: when each message (by the hash of its content)
	 * was first seen, as the text WilmerAI prefixes to it. */
	"CREATE TABLE timestamps ("
	"  discussion TEXT NOT NULL REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  msg_hash TEXT NOT NULL,"
	"  stamp TEXT NOT NULL,"
	"  PRIMARY KEY(discussion, msg_hash));"
	/* vector_memory.db's memories: one fact per row, date_added UTC
	 * ISO-8601, metadata_json the fields the extraction returned. */
	"CREATE TABLE vector_memories ("
	"  id INTEGER PRIMARY KEY,"
	"  discussion TEXT NOT NULL REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  memory_text TEXT NOT NULL,"
	"  date_added TEXT NOT NULL,"
	"  metadata_json TEXT);"
	"CREATE INDEX vector_memories_discussion ON"
	"  vector_memories(discussion);"
	/* Its keyword index (BM25): rowid = vector_memories.id. FTS5 tables
	 * take no foreign key, so a trigger follows the deletes. */
	"CREATE VIRTUAL TABLE vector_fts USING fts5(title, summary,"
	"  entities, key_phrases, memory_text_unweighted,"
	"  tokenize='porter');"
	"CREATE TRIGGER vector_memories_gone AFTER DELETE ON vector_memories"
	"  BEGIN DELETE FROM vector_fts WHERE rowid = old.id; END;"
	/* vector_memory_hash_log: the hash of the last message of each
	 * chunk already turned into vector memories. */
	"CREATE TABLE vector_hash_log ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  discussion TEXT NOT NULL REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  message_hash TEXT NOT NULL,"
	"  logged_at INTEGER NOT NULL);"
	"CREATE INDEX vector_hash_log_discussion ON"
	"  vector_hash_log(discussion, id);",

	/* 2 */
	/* The start time (clock ticks after boot, /proc/<pid>/stat field
	 * 22) of the process that took a lock: a pid the kernel has given
	 * to a new process since no longer holds it. 0: unknown. */
	"ALTER TABLE workflow_locks ADD COLUMN pid_start INTEGER NOT NULL"
	"  DEFAULT 0;",

	/* 3 */
	/* The response cache: one finished LLM call by the SHA-256 of what
	 * was sent (key), the raw text pieces the backend answered (a JSON
	 * array of strings, cleaned again when replayed), its native tool
	 * calls (JSON array), finish reason and token counts. created_ms:
	 * unix milliseconds, for the TTL and for evicting the oldest. */
	"CREATE TABLE response_cache ("
	"  key TEXT PRIMARY KEY,"
	"  endpoint TEXT NOT NULL,"
	"  created_ms INTEGER NOT NULL,"
	"  chunks TEXT NOT NULL,"
	"  tool_calls TEXT,"
	"  finish TEXT NOT NULL,"
	"  prompt_tokens INTEGER NOT NULL,"
	"  completion_tokens INTEGER NOT NULL);"
	"CREATE INDEX response_cache_age ON response_cache(created_ms);",

	/* 4 */
	/* ContextCompactor's state, WilmerAI's context_compactor_old.json
	 * (section 'old') and context_compactor_oldest.json ('oldest'):
	 * each a list of {"text_block", "hash"} entries, pos their order. */
	"CREATE TABLE compactor_sections ("
	"  discussion TEXT NOT NULL REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  section TEXT NOT NULL,"
	"  pos INTEGER NOT NULL,"
	"  text TEXT NOT NULL,"
	"  hash TEXT NOT NULL,"
	"  PRIMARY KEY(discussion, section, pos));",

	/* 5 */
	/* ImageProcessor's vision-response cache (WilmerAI's
	 * vision_responses.json): a message's description by its key,
	 * sha256 of role, content and sorted images. */
	"CREATE TABLE vision_responses ("
	"  discussion TEXT NOT NULL REFERENCES discussions(key)"
	"    ON DELETE CASCADE,"
	"  message_key TEXT NOT NULL,"
	"  text TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL,"
	"  PRIMARY KEY (discussion, message_key));",

	/* 6 */
	/* WilmerAI's memory_embeddings (A9.3): a vector memory's embedding
	 * by the embeddings model that made it (several coexist), as
	 * float32 in native byte order; dim = length / 4. */
	"CREATE TABLE memory_embeddings ("
	"  memory_id INTEGER NOT NULL REFERENCES vector_memories(id)"
	"    ON DELETE CASCADE,"
	"  model TEXT NOT NULL,"
	"  dim INTEGER NOT NULL,"
	"  vector BLOB NOT NULL,"
	"  PRIMARY KEY (memory_id, model));",
};
#define STORE_VERSION	((int)(sizeof(steps) / sizeof(steps[0])))

int
store_schema_version(void)
{
	return STORE_VERSION;
}

static int
user_version(struct store *s, int *v)
{
	int	 rc;

	if ((rc = s->s_drv->dr_version(s, v)) != 0)
		return store_fail(s, rc, "PRAGMA user_version");
	if (*v > STORE_VERSION) {
		snprintf(s->s_err, sizeof(s->s_err), "database %s: schema "
		    "version %d is newer than this sluice-worker knows (%d): "
		    "was it written by a newer Sluice?", s->s_path, *v,
		    STORE_VERSION);
		return -1;
	}
	return 0;
}

/* The steps in the store's dialect. */
static const char *const *
steps_of(const struct store *s)
{
	return s->s_drv->dr_dialect == DIALECT_PG ? store_pg_steps : steps;
}

/* In a transaction: steps from version v on, then the new version. */
static int
apply_steps(struct store *s, int v)
{
	const char *const *list = steps_of(s);
	char	 what[64];
	int	 rc;

	if (s->s_drv->dr_dialect == DIALECT_PG &&
	    store_pg_nsteps != STORE_VERSION) {
		snprintf(s->s_err, sizeof(s->s_err), "database %s: bug: %d "
		    "schema steps for PostgreSQL, %d for SQLite", s->s_path,
		    store_pg_nsteps, STORE_VERSION);
		return -1;
	}
	for (; v < STORE_VERSION; v++) {
		if ((rc = s->s_drv->dr_script(s, list[v])) != 0) {
			snprintf(what, sizeof(what), "migration to schema "
			    "version %d", v + 1);
			return store_fail(s, rc, what);
		}
	}
	if ((rc = s->s_drv->dr_set_version(s, STORE_VERSION)) != 0) {
		snprintf(what, sizeof(what), "PRAGMA user_version = %d",
		    STORE_VERSION);
		return store_fail(s, rc, what);
	}
	return 0;
}

int
store_migrate(struct store *s)
{
	int	 v;

	if (user_version(s, &v) == -1)
		return -1;
	if (v == STORE_VERSION)
		return 0;
	if (store_begin(s) == -1)
		return -1;
	/* Another worker may have migrated while we waited for the lock. */
	if (user_version(s, &v) == -1 || apply_steps(s, v) == -1) {
		(void)store_rollback(s);
		return -1;
	}
	if (store_commit(s) == -1)
		return -1;
	if (v < STORE_VERSION)
		log_info("database %s: schema version %d -> %d", s->s_path, v,
		    STORE_VERSION);
	return 0;
}
