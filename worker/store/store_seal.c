/* store_seal.c - encryptUsingApiKey in the shared store: the key of the request using it, and a discussion row's text kept as a Fernet token (addendum A10). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/buf.h"
#include "../../common/fernet.h"
#include "../../common/xmem.h"
#include "store_int.h"
#include "store_seal.h"
#include "store_stmt.h"

/* The rows of WilmerAI's encrypted files (A10.4): the table, its text
 * column, and what an error calls it. vector_memories stays plain, as
 * vector_memory.db does; state_documents.previous is the replaced
 * text as it was stored (the .bak: "as copied"). */
static const struct sealed {
	const char	*sd_table;
	const char	*sd_col;
	const char	*sd_what;
} sealed[] = {
	{ "memories",		"text",		"memories" },
	{ "summaries",		"text",		"chat summary" },
	{ "state_documents",	"text",		"state document" },
	{ "timestamps",		"stamp",	"timestamps" },
	{ "compactor_sections",	"text",		"context compactor state" },
	{ "vision_responses",	"text",		"vision responses" },
};
#define NSEALED	(sizeof(sealed) / sizeof(sealed[0]))

/* fernet_is_token's prefix: substr() rather than GLOB, which
 * PostgreSQL has not */
#define TOKEN_IS	"substr(%s, 1, 6) = 'gAAAAA'"
#define TOKEN_NOT	"substr(%s, 1, 6) <> 'gAAAAA'"

void
store_seal_key(struct store *s, const struct fernet_key *k)
{
	s->s_seal = k;
}

bool
store_sealing(const struct store *s)
{
	return s->s_seal != NULL;
}

char *
store_seal(struct store *s, const char *p)
{
	struct buf	 b = BUF_INIT;

	if (s->s_seal == NULL)
		return xstrdup(p);
	if (fernet_encrypt(s->s_seal, p, strlen(p), (uint64_t)time(NULL),
	    NULL, &b) == -1) {
		snprintf(s->s_err, sizeof(s->s_err), "libcrypto failed to "
		    "encrypt (encryptUsingApiKey)");
		s->s_gave_up = false;
		buf_free(&b);
		return NULL;
	}
	return buf_take(&b);
}

/* store_err for a token of d's what that cannot be opened. -1. */
static int
refuse(struct store *s, const char *d, const char *what)
{
	s->s_gave_up = false;
	if (s->s_seal == NULL)
		snprintf(s->s_err, sizeof(s->s_err), "discussion '%s': its %s "
		    "cannot be read: encrypted with an API key "
		    "(encryptUsingApiKey), and this request brings none: send "
		    "the key it was written with, for the same user, with "
		    "encryptUsingApiKey on; nothing was changed", d, what);
	else
		snprintf(s->s_err, sizeof(s->s_err), "discussion '%s': its %s "
		    "cannot be decrypted with this request's API key and user "
		    "name (encryptUsingApiKey): another key or another user "
		    "name encrypted it; nothing was changed", d, what);
	return -1;
}

int
store_unseal(struct store *s, const char *d, const char *what, const char *v,
    char **out)
{
	struct buf	 b = BUF_INIT;
	size_t		 n;

	*out = NULL;
	if (v == NULL)
		v = "";
	n = strlen(v);
	if (!fernet_is_token(v, n)) {
		*out = xstrdup(v);
		return 0;
	}
	if (s->s_seal == NULL || fernet_decrypt(s->s_seal, v, n, &b) == -1) {
		buf_free(&b);
		return refuse(s, d, what);
	}
	buf_addc(&b, '\0');	/* a buffer even for an empty text */
	*out = buf_take(&b);
	return 0;
}

static const struct sealed *
find(const char *table)
{
	size_t	 i;

	for (i = 0; i < NSEALED; i++)
		if (strcmp(sealed[i].sd_table, table) == 0)
			return &sealed[i];
	return NULL;
}

/* 0 when d's tokens in t (the first found) open with the key, or there
 * are none; -1 (refused) otherwise, or on a database error. */
static int
check_tokens(struct store *s, const struct sealed *t, const char *d)
{
	char		 sql[256], *plain;
	struct store_q	*st;
	int		 r;

	snprintf(sql, sizeof(sql), "SELECT %s FROM %s WHERE discussion = ? "
	    "AND " TOKEN_IS " LIMIT 1", t->sd_col, t->sd_table,
	    t->sd_col);
	if ((st = store_stmt(s, sql)) == NULL ||
	    store_bind(s, st, "t", d) == -1 || (r = store_step(s, st)) == -1)
		return -1;
	if (r == 0)
		return 0;
	r = store_unseal(s, d, t->sd_what,
	    store_col_text(st, 0), &plain);
	store_end(st);
	if (plain != NULL)
		explicit_bzero(plain, strlen(plain));
	free(plain);
	return r;
}

/* Seal d's rows of t that are still plain text. 0 or -1. Rows are
 * found again by their text (no rowid: PostgreSQL has none); equal
 * texts are sealed by the first UPDATE, and the next changes nothing. */
static int
seal_plain(struct store *s, const struct sealed *t, const char *d)
{
	char		 sql[256], *tok;
	const char	*v;
	struct store_q	*st;
	char		**texts = NULL;
	size_t		 n = 0, i;
	int		 r;

	snprintf(sql, sizeof(sql), "SELECT %s FROM %s WHERE discussion = ? "
	    "AND " TOKEN_NOT, t->sd_col, t->sd_table, t->sd_col);
	if ((st = store_stmt(s, sql)) == NULL || store_bind(s, st, "t", d) == -1)
		return -1;
	while ((r = store_step(s, st)) == 1) {
		texts = xreallocarray(texts, n + 1, sizeof(*texts));
		v = store_col_text(st, 0);
		texts[n++] = xstrdup(v != NULL ? v : "");
	}
	snprintf(sql, sizeof(sql), "UPDATE %s SET %s = ? WHERE discussion = ? "
	    "AND %s = ?", t->sd_table, t->sd_col, t->sd_col);
	for (i = 0; i < n; i++) {
		if (r == 0) {
			tok = store_seal(s, texts[i]);
			if (tok == NULL || store_exec(s, sql, "ttt", tok, d,
			    texts[i]) == -1)
				r = -1;
			free(tok);
		}
		free(texts[i]);
	}
	free(texts);
	return r;
}

int
store_seal_token(struct store *s, const char *d, char **tok)
{
	char		 sql[256];
	struct store_q	*st;
	size_t		 i;
	int		 r = 0;

	*tok = NULL;
	for (i = 0; i < NSEALED && r == 0; i++) {
		snprintf(sql, sizeof(sql), "SELECT %s FROM %s WHERE discussion "
		    "= ? AND " TOKEN_IS " LIMIT 1", sealed[i].sd_col,
		    sealed[i].sd_table, sealed[i].sd_col);
		if ((st = store_stmt(s, sql)) == NULL ||
		    store_bind(s, st, "t", d) == -1 ||
		    (r = store_step(s, st)) == -1)
			return -1;
		if (r == 1) {
			*tok = xstrdup(store_col_text(st, 0));
			store_end(st);
		}
	}
	return r;
}

int
store_seal_prepare(struct store *s, const char *table, const char *d)
{
	const struct sealed	*t = find(table);

	if (t == NULL) {
		snprintf(s->s_err, sizeof(s->s_err), "bug: %s is not a table "
		    "of discussion text", table);
		return -1;
	}
	if (check_tokens(s, t, d) == -1)
		return -1;
	return s->s_seal == NULL ? 0 : seal_plain(s, t, d);
}
