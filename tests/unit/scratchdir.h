/* scratchdir.h - unit tests: a fresh temporary folder whose files are written by their path in it, removed afterwards. */
#ifndef SLUICE_SCRATCHDIR_H
#define SLUICE_SCRATCHDIR_H

struct scratchdir {
	char	 sc_path[64];	/* /tmp/sluice-<what>.XXXXXX */
};

/* Make the folder, named after what; fails the test when it cannot. */
void	scratchdir_make(struct scratchdir *, const char *what);

/* Write the file at rel (a path inside the folder; the folders on the
 * way are made) with the printf-formatted text, replacing it. Fails the
 * test when it cannot. */
void	scratchdir_put(struct scratchdir *, const char *rel, const char *fmt,
	    ...) __attribute__((format(printf, 3, 4)));

/* The same for JSON written with ' for " (so that tests need no
 * escapes; the text has no other '). */
void	scratchdir_json(struct scratchdir *, const char *rel, const char *json);

/* The text of the file at rel; fails the test when it cannot be read.
 * Caller frees. */
char	*scratchdir_read(const struct scratchdir *, const char *rel);
/* Make the folder rel (and those on the way). */
void	scratchdir_mkdir(struct scratchdir *, const char *rel);

/* The full path of rel, "" for the folder itself. Caller frees. */
char	*scratchdir_path(const struct scratchdir *, const char *rel);

/* Remove the folder with everything in it (kept when SCRATCH_KEEP is
 * set in the environment). */
void	scratchdir_remove(struct scratchdir *);

#endif
