/* paths.c - paths as WilmerAI's Python treats them: "~" expanded, the folders of a file made. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"
#include "xmem.h"

char *
paths_expanduser(const char *path)
{
	const char	*home = getenv("HOME");

	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') &&
	    home != NULL && *home != '\0')
		return xasprintf("%s%s", home, path + 1);
	return xstrdup(path);
}

int
paths_make_parents(const char *path, mode_t mode)
{
	char	*d = xstrdup(path), *p;
	int	 rc = 0, e = 0;

	if ((p = strrchr(d, '/')) == NULL || p == d) {
		free(d);
		return 0;
	}
	*p = '\0';
	for (p = d + 1; rc == 0 && (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(d, mode) == -1 && errno != EEXIST)
			rc = -1;
		*p = '/';
	}
	if (rc == 0 && mkdir(d, mode) == -1 && errno != EEXIST)
		rc = -1;
	if (rc == -1)
		e = errno;
	free(d);
	errno = e;
	return rc;
}
