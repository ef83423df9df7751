/* chunkcur.h - ConversationChunkProcessor's cursor files: message hashes, one a line, replaced atomically. */
#ifndef SLUICE_CHUNKCUR_H
#define SLUICE_CHUNKCUR_H

#include <stddef.h>

/*
 * WilmerAI's layout: {cursorDirectory}/chunk_cursor_{id}_{discussion}.txt
 * holding the hash of the last message of every chunk processed, one a
 * line, no newline after the last. WilmerAI appends one hash per chunk
 * forever; Sluice keeps the newest CHUNKCUR_KEEP distinct ones (the
 * search only ever needs the newest boundary still in the
 * conversation).
 */
#define CHUNKCUR_KEEP	256

/* The hashes a cursor holds, oldest first. */
struct chunkcur {
	char	**cc_v;
	size_t	  cc_n;
};

/* The cursor file of node id and discussion under dir (already
 * expanded). NULL when id or discussion is empty or holds a '/', so
 * that the name cannot leave dir. Caller frees. */
char	*chunkcur_path(const char *dir, const char *id, const char *discussion);

/* Read path's hashes, the newest CHUNKCUR_KEEP of them: every line
 * stripped, empty lines skipped. A missing file is an empty cursor; so
 * is one that cannot be read (logged with rqid). c is filled either
 * way; chunkcur_clear frees. */
void	chunkcur_read(const char *rqid, const char *path, struct chunkcur *c);

/* Append a hash (a copy) as the newest; an older copy of it goes, and
 * past CHUNKCUR_KEEP the oldest does. */
void	chunkcur_push(struct chunkcur *c, const char *hash);

/* Whether c holds hash. */
int	chunkcur_has(const struct chunkcur *c, const char *hash);

/* Replace path by c's hashes joined with "\n": the missing parent
 * folders made, a temporary file in the same folder written, fsync()ed
 * and renamed over it. Returns 0, or -1 with errno set (nothing
 * replaced). */
int	chunkcur_write(const char *path, const struct chunkcur *c);

void	chunkcur_clear(struct chunkcur *c);	/* leaves it empty */

#endif
