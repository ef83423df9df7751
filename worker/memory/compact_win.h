/* compact_win.h - ContextCompactor's windows (addendum A5.2): where Recent, Old and Oldest begin, whether to compact, what shifted, the text of a window. */
#ifndef SLUICE_COMPACT_WIN_H
#define SLUICE_COMPACT_WIN_H

#include <stddef.h>

#include "../../common/sha256.h"
#include "../core/msgs.h"
#include "memstore.h"

#define COMPACT_BOUNDARY	"__boundary__"	/* the Old state's 2nd text */

/* Over the working messages W (n of them): Recent is W[cb_recent..n),
 * Old W[cb_old..cb_recent), the Oldest territory W[0..cb_old). */
struct compact_bounds {
	size_t	cb_recent;
	size_t	cb_old;
};

/* Walk w newest first, adding each message's estimated tokens (spec
 * 7.2) while the sum stays within recent (then within old for the
 * messages before): a message that would take it past (strictly
 * greater) ends the window after it. */
void	compact_bounds(const struct wmsgs *w, long recent, long old,
	    struct compact_bounds *b);

/* The compactor's message hash H: SHA-256 hex of the content. */
void	compact_hash(const struct wmsg *, char out[SHA256_HEXLEN]);

enum compact_need {
	COMPACT_NONE,		/* no Old window, or nothing changed */
	COMPACT_FIRST,		/* no Old state yet */
	COMPACT_SHIFTED,	/* the Old window starts elsewhere now */
	COMPACT_RECENT		/* the Old window ends elsewhere now */
};

/* Step 5: whether the windows b of w need a compaction, given the Old
 * section's stored entries (empty: none). */
enum compact_need compact_decide(const struct wmsgs *w,
	    const struct compact_bounds *b, const struct mem_blocks *old);

/* Step 7c: where the previous Old window began in w, by the stored
 * boundary "idx:hash" (or a legacy bare hash) of the Old section's last
 * entry: idx when it is in range and its message still has that hash,
 * else the first message with that hash, else 0 (also with no Old
 * state). */
size_t	compact_prev_start(const struct wmsgs *w, const struct mem_blocks *old);

/* The boundary value stored for an Old window starting at i:
 * "<i>:<H(w[i])>". Caller frees. */
char	*compact_boundary(const struct wmsgs *w, size_t i);

/* text(): one "role: content" line per message of w[from..to) (no
 * role: "unknown"), joined with "\n". Caller frees. */
char	*compact_text(const struct wmsgs *w, size_t from, size_t to);

#endif
