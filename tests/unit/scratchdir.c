/* scratchdir.c - unit tests: a fresh temporary folder whose files are written by their path in it, removed afterwards. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/xmem.h"
#include "scratchdir.h"

void
scratchdir_make(struct scratchdir *sc, const char *what)
{
	snprintf(sc->sc_path, sizeof(sc->sc_path), "/tmp/sluice-%s.XXXXXX",
	    what);
	ck_assert_ptr_nonnull(mkdtemp(sc->sc_path));
}

char *
scratchdir_path(const struct scratchdir *sc, const char *rel)
{
	return *rel == '\0' ? xstrdup(sc->sc_path) :
	    xasprintf("%s/%s", sc->sc_path, rel);
}

/* Make every folder of path after the scratch folder's own; with
 * last, path itself too. */
static void
make_dirs(const struct scratchdir *sc, char *path, bool last)
{
	char	*slash;

	for (slash = strchr(path + strlen(sc->sc_path) + 1, '/');
	    slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST,
		    "mkdir %s: %s", path, strerror(errno));
		*slash = '/';
	}
	if (last)
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST,
		    "mkdir %s: %s", path, strerror(errno));
}

void
scratchdir_mkdir(struct scratchdir *sc, const char *rel)
{
	char	*path = scratchdir_path(sc, rel);

	make_dirs(sc, path, true);
	free(path);
}

void
scratchdir_put(struct scratchdir *sc, const char *rel, const char *fmt, ...)
{
	char	*path = scratchdir_path(sc, rel);
	FILE	*f;
	va_list	 ap;

	make_dirs(sc, path, false);
	ck_assert_msg((f = fopen(path, "w")) != NULL, "cannot write %s: %s",
	    path, strerror(errno));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	ck_assert_int_eq(fclose(f), 0);
	free(path);
}

char *
scratchdir_read(const struct scratchdir *sc, const char *rel)
{
	char	*path = scratchdir_path(sc, rel), *text;
	FILE	*f = fopen(path, "r");
	long	 n;

	ck_assert_msg(f != NULL, "cannot read %s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	ck_assert_int_ge(n = ftell(f), 0);
	rewind(f);
	text = xmalloc((size_t)n + 1);
	text[fread(text, 1, (size_t)n, f)] = '\0';
	fclose(f);
	free(path);
	return text;
}

void
scratchdir_json(struct scratchdir *sc, const char *rel, const char *json)
{
	char	*s = xstrdup(json), *p;

	for (p = s; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	scratchdir_put(sc, rel, "%s\n", s);
	free(s);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

void
scratchdir_remove(struct scratchdir *sc)
{
	if (sc->sc_path[0] != '\0' && getenv("SCRATCH_KEEP") == NULL)
		nftw(sc->sc_path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	sc->sc_path[0] = '\0';
}
