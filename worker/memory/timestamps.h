/* timestamps.h - WilmerAI's per-discussion message timestamps in the shared database: when each message was first seen, as text. */
#ifndef SLUICE_TIMESTAMPS_H
#define SLUICE_TIMESTAMPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../core/msgs.h"
#include "../store/store.h"

/*
 * A stamp is WilmerAI's text, "(Saturday, 2025-09-20 16:30:05)", in the
 * worker's local time without a zone (as WilmerAI's timestamps.json).
 * Stamp arithmetic is on the wall clock ("wall seconds": the local
 * date and time counted as if it were UTC), like Python's naive
 * datetimes. Each function that needs the time takes it as an argument
 * (time(NULL) in the engine, a fixed value in tests). Messages are
 * keyed by the SHA-256 of their content (hash_single_message).
 */

#define TS_LEN		48	/* a stamp and its NUL, with room */
#define TS_AGO_LEN	80	/* "N days, N hours, N minutes" */
#define TS_PLACEHOLDER	"PLACEHOLDER_TIMESTAMP_HASH_0000"

/* ---- text (no database) ---- */

/* t as wall seconds (its local date and time counted as UTC). */
int64_t	ts_wall(time_t t);

/* The stamp of wall seconds w, "(Saturday, 2025-09-20 16:30:05)". */
void	ts_format(int64_t w, char out[TS_LEN]);

/* Parse a stamp (surrounding '(', ')' and spaces ignored; full or
 * three-letter day name in any case; the day name is not checked
 * against the date) into wall seconds. Returns 0, or -1 when s is not
 * a stamp. */
int	ts_parse(const char *s, int64_t *w);

/* A duration of secs seconds as WilmerAI words: "2 days, 1 hour,
 * 5 minutes", parts that are zero left out, "less than a minute" under
 * a minute or when negative (a stamp in the future). */
void	ts_ago(int64_t secs, char out[TS_AGO_LEN]);

/* The relative form of stamp at time now, "[Sent 5 minutes ago]", into
 * out (outlen bytes); "" when stamp does not parse. */
void	ts_sent_ago(const char *stamp, time_t now, char *out, size_t outlen);

/* True when m is what WilmerAI takes for a generation prompt
 * ("Roland:": stripped, under 100 characters, ending in ':'). */
bool	ts_gen_prompt(const struct wmsg *m);

/* ---- the discussion's stamps (key: memory_key()) ---- */

/* At the start of a request (resolve_and_track_history), in one
 * transaction: a placeholder left by the previous answer goes to the
 * newest assistant message without a stamp (a trailing generation
 * prompt skipped) and is dropped; then, newest to oldest, each message
 * without a stamp (system messages and a trailing generation prompt
 * skipped) gets the current anchor, which starts at now, becomes each
 * stamped message's own stamp, and goes back one second per message.
 * Returns 0, or -1 with store_err set (nothing written). */
int	ts_resolve(struct store *, const char *key, const struct wmsgs *,
	    time_t now);

/* Prefix each message of l (the caller's copy) that has a stamp with
 * "<stamp> " (relative: "[Sent ... ago] ") unless it starts with that
 * already; system messages and a trailing generation prompt are left
 * alone (format_messages_with_timestamps). Returns 0, or -1 with
 * store_err set (l may be partly done). */
int	ts_decorate(struct store *, const char *key, struct wmsgs *l,
	    bool relative, time_t now);

/* Save the placeholder for an answer being written, stamped now
 * (save_placeholder_timestamp). Returns 0, or -1. */
int	ts_placeholder(struct store *, const char *key, time_t now);

/* The answer is known (commit_assistant_response): the placeholder's
 * stamp goes to the hash of content, or now when there is no
 * placeholder; an empty content only drops the placeholder. One
 * transaction. Returns 0, or -1. */
int	ts_commit(struct store *, const char *key, const char *content,
	    time_t now);

/* The time context summary (get_time_context_summary) into *out,
 * caller frees: "[Time Context: This conversation started X ago. The
 * most recent message was sent Y ago.]", or "[Time Context: The
 * conversation started X ago.]" when the oldest and newest stamps are
 * equal, or "" when the discussion has no stamp. Returns 0, or -1 with
 * store_err set (*out NULL). */
int	ts_summary(struct store *, const char *key, time_t now, char **out);

#endif
