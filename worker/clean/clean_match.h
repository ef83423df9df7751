/* clean_match.h - incremental multi-pattern matching and UTF-8 counting, for the cleaner and the filters. */
#ifndef SLUICE_CLEAN_MATCH_H
#define SLUICE_CLEAN_MATCH_H

#include <stdbool.h>
#include <stddef.h>

/* One literal pattern. The text is borrowed for the set's lifetime. */
struct pat {
	const char	*pt_s;
	size_t		 pt_len;
	bool		 pt_icase;	/* ASCII letters compare caselessly */
	int		 pt_id;		/* the caller's tag */
};

struct pat_link {
	short		 pl_pat;
	short		 pl_next;
};

/* A small set of patterns indexed by first byte. Built once with
 * pset_add and pset_done, then only read (several scanners may share
 * it). At most PSET_MAX patterns. */
#define PSET_MAX	1024
struct pset {
	struct pat	*ps_pat;
	size_t		 ps_n;
	size_t		 ps_maxlen;
	struct pat_link	*ps_link;
	short		 ps_head[256];	/* first link per first byte, -1 */
	int		 ps_only;	/* the one first byte of all, or -1 */
};

enum pm_kind {
	PM_NONE = 0,	/* nothing can start in the text */
	PM_FULL,	/* pm_pat matches at pm_pos, pm_len bytes */
	PM_PART,	/* the text from pm_pos on is a proper prefix of a
			   pattern: wait for more */
};

struct pm {
	enum pm_kind	 pm_kind;
	size_t		 pm_pos;
	size_t		 pm_len;
	int		 pm_pat;	/* index into ps_pat */
};

void	pset_init(struct pset *);
/* Add s[0..len) (an empty pattern is ignored). */
void	pset_add(struct pset *, const char *s, size_t len, bool icase,
	    int id);
void	pset_done(struct pset *);	/* build the index; call once */
void	pset_free(struct pset *);	/* NULL-safe, reinits */

/*
 * Leftmost-longest search of p[0..n): the first position where a
 * pattern matches or, unless final, where the rest of the text is a
 * proper prefix of a pattern. At one position a longer pattern that may
 * still match wins over a shorter full match (so the caller waits); of
 * equal full matches the one added first wins. limit, when not NULL,
 * holds per pattern the first start offset at which it may no longer
 * start (0 disables it). Linear in n times the patterns sharing a first
 * byte.
 */
void	pset_scan(const struct pset *, const char *p, size_t n, bool final,
	    const size_t *limit, struct pm *);

/* Code points in p[0..n) (bytes that are not UTF-8 continuations). */
size_t	u8_count(const char *p, size_t n);

#define U8_CONT(c)	(((unsigned char)(c) & 0xc0) == 0x80)

#endif
