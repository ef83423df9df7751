/* paths.h - paths as WilmerAI's Python treats them: "~" expanded, the folders of a file made. */
#ifndef SLUICE_PATHS_H
#define SLUICE_PATHS_H

#include <sys/types.h>

/* path with a leading "~" or "~/" made $HOME (Python's expanduser for
 * the current user); "~name", another path, or no (or an empty) $HOME
 * leave it as it is. Caller frees. */
char	*paths_expanduser(const char *path);

/* mkdir -p of the folder path names a file in (everything before its
 * last '/'), each new folder with mode (less the umask). Returns 0, or
 * -1 with errno set. */
int	 paths_make_parents(const char *path, mode_t mode);

#endif
