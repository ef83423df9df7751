/* cache.h - the response cache in the shared database: which LLM calls may be cached, their key, and the entries. */
#ifndef SLUICE_CACHE_H
#define SLUICE_CACHE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

#define CACHE_KEYLEN	65		/* SHA-256 hex + NUL */
#define CACHE_MAX_TEXT	(1024 * 1024)	/* a longer answer is not kept */

/* The gateway's cache settings, as the worker's arguments give them. */
struct cache_conf {
	bool	 kc_on;		/* cache.enabled */
	long	 kc_max;	/* max_entries */
	int64_t	 kc_ttl_ms;	/* ttl_minutes */
	double	 kc_temp;	/* cacheable_temperature */
};

/*
 * The key of an LLM call: SHA-256 (libcrypto) over the backend's
 * dialect, its base URL and the request body with its keys sorted, its
 * stream property and stream_options left out (a streamed and a whole
 * request share their entry) and its tools sorted by name (the order the client listed
 * them in does not matter). The body holds the model, the messages or
 * prompt and every generation parameter as sent. Returns true with key
 * set when the call may be cached: its effective temperature (the
 * body's "temperature", or Ollama's options.temperature: the preset's
 * or the endpoint's presetSamplers') is at most conf's cacheable
 * temperature. A body without a temperature leaves the backend to pick
 * one: not cacheable.
 */
bool	cache_key(const struct cache_conf *, const char *dialect,
	    const char *base_url, const char *body, const char *stream_prop,
	    char key[CACHE_KEYLEN]);

/* One finished call. */
struct cache_entry {
	json_t	*ce_chunks;		/* array of strings: the raw text
					   pieces, as the backend sent them */
	json_t	*ce_tools;		/* array of native tool calls, or NULL */
	char	 ce_finish[32];
	int64_t	 ce_prompt_tokens;	/* -1 unknown */
	int64_t	 ce_completion_tokens;
};

void	cache_entry_clear(struct cache_entry *);	/* drops the references */

/* The entry of key if it is younger than ttl_ms at now_ms: 1 (out
 * filled; clear it), 0 when there is none, -1 with store_err set. */
int	cache_get(struct store *, const char *key, int64_t now_ms,
	    int64_t ttl_ms, struct cache_entry *out);

/* Keep e under key (replacing an older entry of the same key), then
 * drop the expired entries and, above conf's max_entries, the oldest;
 * in one transaction. The number of entries afterwards into *entries
 * (may be NULL). 0, or -1 with store_err set. */
int	cache_put(struct store *, const char *key, const char *endpoint,
	    const struct cache_entry *e, int64_t now_ms,
	    const struct cache_conf *, int64_t *entries);

/* Remove every entry: how many there were, or -1. */
int64_t	cache_clear(struct store *);

/* How many entries there are, or -1. */
int64_t	cache_count(struct store *);

#endif
