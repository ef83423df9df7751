/* filter.h - the ordered response filter chain (max length, redaction, footer), for streams and whole texts. */
#ifndef SLUICE_FILTER_H
#define SLUICE_FILTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../common/buf.h"
#include "../../common/json.h"

/*
 * Configured as a JSON array, e.g.
 *   "responseFilters": [
 *     {"type": "maxLength", "order": 10, "maxChars": 2000},
 *     {"type": "redactKeywords", "keywords": ["secret"]},
 *     {"type": "redactRegex", "pattern": "[0-9]{16}"},
 *     {"type": "appendFooter", "text": "\n-- sent by Sluice"}]
 * Lower "order" runs first, ties keep the file's order. Default order:
 * 10 for maxLength, 100 for the others.
 *
 * maxLength {maxChars N (code points, 0 = no limit)}: text past N code
 *   points is cut and "\n\n[Response truncated]" follows; on a stream
 *   the output stops there (filter_run_push returns true).
 * redactKeywords {keywords [..], replacement "[REDACTED]"}: each
 *   occurrence of a keyword (ASCII case-insensitive; leftmost, and the
 *   longest keyword at one place) is replaced. Streams hold back only a
 *   tail that could still grow into a keyword.
 * redactRegex {pattern ERE, ignoreCase false, replacement "[REDACTED]"}:
 *   POSIX extended regex, applied to each line on its own (text up to a
 *   "\n", without it; a line longer than FILTER_LINE_MAX bytes is taken
 *   in pieces of at most that size, cut at a character boundary), every
 *   match replaced. Streams hold a line back until its "\n" or the end,
 *   so whole and streamed texts give the same result.
 * appendFooter {text}: appended at the end.
 * A filter that fails while running is logged once and skipped from
 * then on (fail open).
 */
#define FILTER_LINE_MAX	4096
#define FILTER_TRUNCATED "\n\n[Response truncated]"

struct filter_chain;
struct filter_run;

/* Read member key of obj (obj a value inside jf's tree). Missing or
 * null: *out = NULL and 0. Otherwise a new chain (free with
 * filter_chain_free), or -1 with err "path:line:col: message". */
int	filter_chain_load(const struct jfile *jf, json_t *obj, const char *key,
	    struct filter_chain **out, char err[CONF_ERRLEN]);
void	filter_chain_free(struct filter_chain *);	/* NULL-safe */
size_t	filter_chain_len(const struct filter_chain *);	/* 0 for NULL */

/* What a run is for: content gets every filter; reasoning text only the
 * redaction filters (no length limit, no footer). */
enum filter_scope {
	FILTER_CONTENT = 0,
	FILTER_REASONING,
};

/* One pass of a chain over one output. The chain (may be NULL: text
 * passes unchanged) must outlive the run. Never NULL. */
struct filter_run *filter_run_new(const struct filter_chain *,
	    enum filter_scope);
void	filter_run_free(struct filter_run *);		/* NULL-safe */

/* Text in; what is settled is appended to out. Returns true when a
 * filter has ended the output (max length): the notice has been
 * appended and later pushes are ignored. */
bool	filter_run_push(struct filter_run *, const char *p, size_t n,
	    struct buf *out);

/* The next bytes pushed, if any, will start with p[0..n) (the caller
 * holds them back, e.g. trailing whitespace). Lets a keyword filter
 * settle a held tail that cannot grow into a keyword any more, when
 * only maxLength filters with room for p come before it. */
void	filter_run_hint(struct filter_run *, const char *p, size_t n,
	    struct buf *out);

/* End of the text: flush held tails, then footers. */
void	filter_run_finish(struct filter_run *, struct buf *out);

#endif
