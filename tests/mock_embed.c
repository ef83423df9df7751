/* mock_embed.c - mock-llm's embeddings routes: /v1/embeddings and /api/embed answer a bag-of-words vector per text. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "../common/buf.h"
#include "mock_embed.h"

/*
 * A text's vector has MOCK_EMBED_DIM dimensions; each lower-cased word
 * (a run of letters and digits) adds 1 to the dimension its FNV-1a hash
 * picks. Texts sharing words point the same way, so a cosine ranking
 * is predictable. Scripted in a text: "#embed-status N" answers N,
 * "#embed-garbage" answers an object without vectors, "#embed-short"
 * one vector too few.
 */

static unsigned
word_dim(const char *w, size_t n)
{
	uint32_t	 h = 2166136261u;
	size_t		 i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)tolower((unsigned char)w[i]);
		h *= 16777619u;
	}
	return h % MOCK_EMBED_DIM;
}

void
mock_embed_vector(const char *s, double v[MOCK_EMBED_DIM])
{
	size_t	 i, j;

	memset(v, 0, sizeof(double) * MOCK_EMBED_DIM);
	for (i = 0; s[i] != '\0'; i = j) {
		for (j = i; s[j] != '\0' && isalnum((unsigned char)s[j]); j++)
			;
		if (j > i)
			v[word_dim(s + i, j - i)] += 1;
		else
			j++;
	}
}

static void
put_vector(struct buf *b, const char *s)
{
	double	 v[MOCK_EMBED_DIM];
	size_t	 i;

	mock_embed_vector(s, v);
	buf_adds(b, "[");
	for (i = 0; i < MOCK_EMBED_DIM; i++)
		buf_printf(b, "%s%.1f", i ? "," : "", v[i]);
	buf_adds(b, "]");
}

/* The texts: "input" as one string or a list of strings. */
static int
texts_of(const json_t *body, const char ***out, size_t *n)
{
	const json_t	*in = json_object_get(body, "input"), *t;
	size_t		 i;

	if (json_is_string(in)) {
		*n = 1;
		*out = calloc(1, sizeof(char *));
		(*out)[0] = json_string_value(in);
		return 0;
	}
	if (!json_is_array(in))
		return -1;
	*n = json_array_size(in);
	*out = calloc(*n + 1, sizeof(char *));
	json_array_foreach(in, i, t) {
		if (!json_is_string(t)) {
			free(*out);
			return -1;
		}
		(*out)[i] = json_string_value(t);
	}
	return 0;
}

static int
scripted(const char *const *tx, size_t n, const char *word)
{
	size_t		 i;
	const char	*p;

	for (i = 0; i < n; i++)
		if ((p = strstr(tx[i], word)) != NULL)
			return atoi(p + strlen(word));
	return -1;
}

/* OpenAI's list, items in reverse order (clients sort by index). */
static void
openai_body(struct buf *b, const char *model, const char *const *tx,
    size_t n)
{
	size_t	 i, k;

	buf_adds(b, "{\"object\":\"list\",\"data\":[");
	for (k = 0; k < n; k++) {
		i = n - 1 - k;
		buf_printf(b, "%s{\"object\":\"embedding\",\"index\":%zu,"
		    "\"embedding\":", k ? "," : "", i);
		put_vector(b, tx[i]);
		buf_adds(b, "}");
	}
	buf_printf(b, "],\"model\":\"%s\",\"usage\":{\"prompt_tokens\":%zu,"
	    "\"total_tokens\":%zu}}", model, n, n);
}

static void
ollama_body(struct buf *b, const char *model, const char *const *tx,
    size_t n)
{
	size_t	 i;

	buf_printf(b, "{\"model\":\"%s\",\"embeddings\":[", model);
	for (i = 0; i < n; i++) {
		buf_adds(b, i ? "," : "");
		put_vector(b, tx[i]);
	}
	buf_printf(b, "],\"total_duration\":1000,\"load_duration\":0,"
	    "\"prompt_eval_count\":%zu}", n);
}

int
mock_embed_answer(const char *path, const json_t *body, struct buf *out)
{
	const char	**tx = NULL, *model;
	size_t		  n = 0;
	int		  st;
	bool		  ollama = strcmp(path, "/api/embed") == 0;

	if (!json_is_object(body) || texts_of(body, &tx, &n) == -1) {
		buf_adds(out, "{\"error\":\"input must be a string or a list "
		    "of strings\"}");
		return 400;
	}
	model = json_string_value(json_object_get(body, "model"));
	if (model == NULL || strchr(model, '"') != NULL)
		model = "mock-embed";
	if ((st = scripted(tx, n, "#embed-status ")) >= 100) {
		buf_printf(out, "{\"error\":\"mock error %d\"}", st);
	} else if (scripted(tx, n, "#embed-garbage") != -1) {
		buf_adds(out, "{\"object\":\"list\"}");
		st = 200;
	} else {
		if (scripted(tx, n, "#embed-short") != -1 && n > 0)
			n--;
		(ollama ? ollama_body : openai_body)(out, model, tx, n);
		st = 200;
	}
	free(tx);
	return st;
}

bool
mock_embed_path(const char *path)
{
	return strcmp(path, "/v1/embeddings") == 0 ||
	    strcmp(path, "/api/embed") == 0;
}
