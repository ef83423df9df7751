/* clean.h - the streaming response cleaner: reasoning, tool-call markers, special tokens, prefixes, filters. */
#ifndef SLUICE_CLEAN_H
#define SLUICE_CLEAN_H

#include <stdbool.h>
#include <stddef.h>

#include "../../common/buf.h"

/* What happens to reasoning the cleaner removes. */
enum clean_reasoning {
	CLEAN_REASONING_DROP = 0,	/* WilmerAI: gone */
	CLEAN_REASONING_FIELD,		/* out->co_reasoning (reasoning_content) */
	CLEAN_REASONING_INLINE,		/* left in the text, tags and all */
};

/* Settings for one LLM output. Strings and arrays are borrowed for the
 * cleaner's lifetime; arrays are NULL-terminated. See clean_conf.h for
 * how they are read from the endpoint, node, user and workflow. */
struct clean_conf {
	/* WilmerAI think removal (endpoint) */
	bool		 cc_remove_thinking;
	const char	*cc_start_tag;		/* "" = none */
	const char	*cc_end_tag;
	long		 cc_grace;		/* openingTagGracePeriod, 100 */
	bool		 cc_only_closing;	/* expectOnlyClosingThinkTag */
	/* Sluice additions (endpoint) */
	bool		 cc_reasoning_tags;	/* <think> <thinking> <reasoning> <reflection> */
	bool		 cc_gptoss_channels;	/* <|channel|>analysis... markers */
	enum clean_reasoning cc_reasoning;
	bool		 cc_tool_markers;	/* text markers -> tool calls */
	const char *const *cc_special_tokens;	/* NULL: none removed */
	/* WilmerAI prefixes (node, endpoint, user) */
	const char *const *cc_workflow_prefixes;	/* verbatim, or NULL */
	const char *const *cc_endpoint_prefixes;	/* compared stripped */
	bool		 cc_timestamp_prefix;	/* "[Sent less than a minute ago]" */
	bool		 cc_assistant_prefix;	/* "Assistant:" (both AUA flags) */
	bool		 cc_trim;		/* trimBeginningAndEndLineBreaks */
	/* the ordered filter chain; NULL = none (see filter.h) */
	const struct filter_chain *cc_filters;
};

/* Output of one feed or finish: append-only; the caller resets it. */
struct clean_out {
	struct buf	 co_text;	/* content the client may see now */
	struct buf	 co_reasoning;	/* with CLEAN_REASONING_FIELD */
	struct buf	 co_tool_calls;	/* JSON array of complete OpenAI tool
					   calls ([{"index","id","type",
					   "function":{"name","arguments"}}])
					   or empty */
	bool		 co_stop;	/* a filter ended the output: emit
					   this, then stop the backend call */
};

struct cleaner;

/* NULL only on allocation failure. */
struct cleaner	*clean_new(const struct clean_conf *);
void		 clean_free(struct cleaner *);	/* NULL-safe */

/* Feed the next piece of the LLM's text. Everything that can no longer
 * change is appended to out now; only what could still turn out to be
 * part of a tag, marker, token or prefix (or trailing whitespace under
 * trim) is held back. */
void		 clean_feed(struct cleaner *, const char *p, size_t n,
		    struct clean_out *out);

/* Calls found in one feed or finish are merged into the array already
 * in out->co_tool_calls (so it stays one JSON array until reset).
 * After co_stop, or after clean_finish, feeds are ignored. */

/* End of output: flush what was held back (an unterminated think block
 * as WilmerAI does, an unclosed tool call as a tool call, ...). */
void		 clean_finish(struct cleaner *, struct clean_out *out);

/* The count of tool calls found so far (for finish_reason). */
size_t		 clean_tool_calls(const struct cleaner *);

/* Tool-call ids are "call_" and 24 random hex digits from a generator
 * seeded from getrandom(2) on first use; tests seed it to get the same
 * ids twice. */
void		 clean_seed_ids(struct cleaner *, unsigned long long seed);

/* The special tokens removed by default (removeSpecialTokens: true),
 * NULL-terminated. */
extern const char *const clean_default_tokens[];

void		 clean_out_init(struct clean_out *);
void		 clean_out_reset(struct clean_out *);	/* keeps memory */
void		 clean_out_free(struct clean_out *);

#endif
