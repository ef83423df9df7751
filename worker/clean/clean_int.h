/* clean_int.h - the cleaner's state and the stages' entry points (private to worker/clean*.c). */
#ifndef SLUICE_CLEAN_INT_H
#define SLUICE_CLEAN_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/buf.h"
#include "clean.h"
#include "clean_match.h"
#include "filter.h"

/*
 * The cleaner is a pipeline of small incremental stages; each takes text
 * with _push, hands what it has settled to the next one at once, and
 * keeps only an unresolved tail:
 *
 *   think (clean_think.c)   reasoning blocks -> dropped / co_reasoning
 *   tools (clean_tools.c)   tool-call markers -> co_tool_calls
 *   toks  (clean.c)         special tokens removed
 *   prefix (clean_prefix.c) lstrip, prefixes, trim
 *   filters (filter.c)      -> co_text
 *
 * A stage keeps in its pending buffer only bytes that could still be
 * the start of one of its patterns (or, inside a block, the block).
 * Whole text and every chunking give the same result, and nothing is
 * held back that no continuation could change. The stages only see each
 * other's output, so the one place where a later stage needs to know
 * what an earlier one holds is passed on explicitly: trailing
 * whitespace held under trim is sent to the filters as a hint (the next
 * bytes, if any, start with it), so a keyword filter can settle its
 * tail. Known, documented exceptions: redactRegex works on whole lines
 * (filter.h); a held tail of a keyword filter that comes after a
 * footer or another keyword or regex filter waits for more text.
 */

/* Reasoning stage states and block kinds. */
enum th_state { TH_OUT = 0, TH_IN, TH_CO };
enum th_kind {
	THK_W = 0,	/* WilmerAI's configured start/end tags */
	THK_THINK, THK_THINKING, THK_REASONING, THK_REFLECTION,
	THK_GPTOSS,	/* <|channel|>analysis<|message|> */
	THK_NKIND,
	THK_MARKER = THK_NKIND,	/* gpt-oss final-channel header: removed */
};

struct th {
	bool		 t_on;
	enum th_state	 t_st;
	enum th_kind	 t_kind;	/* of the open block */
	struct pset	 t_open;	/* openers, pt_id = enum th_kind */
	struct pset	 t_close[THK_NKIND];
	struct buf	 t_pend;	/* unresolved partial tag */
	struct buf	 t_body;	/* drop: open tag + content of the open
					   block; closing-only: all so far */
	size_t		 t_chars;	/* code points consumed */
	long		 t_grace;
	bool		 t_has_w;	/* the configured open tag is in t_open */
	bool		 t_w_armed;	/* and may still come */
	size_t		 t_w_pat;	/* its index in t_open */
};

enum tl_state {
	TL_OUT = 0,
	TL_FNAME,	/* after "<function=": the name */
	TL_IN,		/* in a block */
	TL_DOOMED,	/* in a <tool_call> block that cannot be a call:
			   text up to and with its closer */
};
enum tl_kind { TLK_TOOLCALL = 0, TLK_FUNCTION, TLK_PYTHON, TLK_NKIND };

struct tl {
	bool		 l_on;
	enum tl_state	 l_st;
	enum tl_kind	 l_kind;
	struct pset	 l_open;	/* pt_id = enum tl_kind */
	struct pset	 l_close[TLK_NKIND];
	struct buf	 l_pend;
	struct buf	 l_raw;		/* the block as written, opener on */
	size_t		 l_body;	/* where its body starts in l_raw */
	size_t		 l_namelen;	/* <function=NAME>: NAME length */
	bool		 l_viable;	/* the block can still be a call */
	size_t		 l_v1, l_v2;	/* tool_viable's place */
	size_t		 l_sent;	/* TL_DOOMED: bytes of the held tail
					   already sent */
};

struct tk {
	bool		 k_on;
	struct pset	 k_set;
	struct buf	 k_pend;
};

enum px_phase { PX_WF = 0, PX_EP, PX_TS, PX_AS, PX_BODY };

struct px {
	enum px_phase	 x_phase;
	bool		 x_skipws;	/* dropping leading whitespace */
	bool		 x_trim;	/* hold trailing whitespace */
	struct str	*x_cand[PX_BODY];	/* candidates per phase */
	size_t		 x_ncand[PX_BODY];
	struct buf	 x_pend;	/* undecided start of the text */
	struct buf	 x_ws;		/* trim: trailing whitespace held */
	size_t		 x_wsok;	/* of which whole characters; the rest
					   is one character cut short */
};

struct cleaner {
	struct clean_conf	 c_conf;
	struct clean_out	*c_out;		/* during a feed or finish */
	bool			 c_stopped;	/* a filter ended the output */
	bool			 c_finished;
	struct th		 c_th;
	struct tl		 c_tl;
	struct tk		 c_tk;
	struct px		 c_px;
	struct filter_run	*c_frun;	/* content */
	struct filter_run	*c_frun_r;	/* reasoning (redaction only) */
	size_t			 c_ncalls;
	uint64_t		 c_rng[2];
	struct buf		 c_tmp;		/* scratch for tool calls */
	struct buf		 c_tmp2;
};

/* ---- clean_stage.c ---- */

/* A stage step: handle a prefix of p[0..n) and return its length; 0
 * means p is one unresolved tail (never 0 when final). */
typedef size_t	(*clean_step_fn)(struct cleaner *, const char *, size_t,
		    bool);
/* Run step over pend + p[0..n), keeping the unresolved tail in pend. */
void	clean_drive(struct cleaner *, struct buf *pend, clean_step_fn,
	    const char *p, size_t n, bool final);

/* Content after the prefix stage, and reasoning text (field mode). */
void	clean_emit(struct cleaner *, const char *, size_t);
void	clean_emit_hint(struct cleaner *, const char *, size_t);
void	clean_reasoning(struct cleaner *, const char *, size_t);

/* Append a fresh "call_<24 hex>" id to out; the generator is seeded on
 * first use, or by clean_ids_seed (tests: repeatable ids). */
void	clean_call_id(struct cleaner *, struct buf *out);
void	clean_ids_seed(struct cleaner *, unsigned long long seed);

/* ---- the stages, in pipeline order (clean_think.c, clean_tools.c,
 * clean_toks.c, clean_prefix.c); each pushes to the next ---- */

void	th_init(struct cleaner *);
void	th_free(struct th *);
void	th_push(struct cleaner *, const char *, size_t);
void	th_finish(struct cleaner *);

void	tl_init(struct cleaner *);
void	tl_free(struct tl *);
void	tl_push(struct cleaner *, const char *, size_t);
void	tl_finish(struct cleaner *);

void	tk_init(struct cleaner *);
void	tk_free(struct tk *);
void	tk_push(struct cleaner *, const char *, size_t);
void	tk_finish(struct cleaner *);

void	px_init(struct cleaner *);
void	px_free(struct px *);
void	px_push(struct cleaner *, const char *, size_t);
void	px_finish(struct cleaner *);

/* Tool calls (clean_toolparse.c): parse one marker block's body; true
 * when it gave at least one call (appended to co_tool_calls). For
 * TLK_FUNCTION name is the <function=NAME> name, else NULL. */
bool	tool_parse(struct cleaner *, enum tl_kind, const char *name,
	    size_t namelen, const char *body, size_t n);
/* Can a <tool_call> body that starts b[0..n) still become a call? */
enum tool_viab { TV_UNKNOWN = 0, TV_VIABLE, TV_DOOMED };
enum tool_viab	tool_viable(const char *b, size_t n, size_t *v1, size_t *v2);

/* Append one call; args is the arguments text as it will be sent. */
void	tool_add(struct cleaner *, const char *name, size_t namelen,
	    const char *args, size_t argslen);
/* arguments text for JSON value v (NULL: "{}") into out. */
void	tool_args_json(struct buf *out, const json_t *v);
/* arguments text from raw source: compact JSON when it parses,
 * else the raw text (trimmed) with a warning; empty gives "{}". */
void	tool_args_raw(struct buf *out, const char *p, size_t n);

/* Python call syntax (clean_pycall.c): "a.b(x=1, 'y')" into name and
 * a JSON object of arguments (out, compact). true on success. */
bool	pycall_parse(const char *p, size_t n, struct buf *name,
	    struct buf *args);

#endif
