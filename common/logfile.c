/* logfile.c - the log file WilmerAI's --file-logging asks for: its line format, rotation at 3 MiB keeping 7, shared by the gateway and its workers (addendum A11.3). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "logfile.h"
#include "paths.h"

static int	 lf_fd = -1;
static char	 lf_path[PATH_MAX];
static size_t	 lf_max;

static int
open_name(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
	    O_NOCTTY, 0640);
}

int
logfile_open(const char *path)
{
	int	 fd;

	if (strlen(path) >= sizeof(lf_path) - 4) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (paths_make_parents(path, 0750) == -1 || (fd = open_name(path)) == -1)
		return -1;
	logfile_close();
	lf_fd = fd;
	(void)snprintf(lf_path, sizeof(lf_path), "%s", path);
	return 0;
}

void
logfile_close(void)
{
	if (lf_fd != -1)
		(void)close(lf_fd);
	lf_fd = -1;
	lf_path[0] = '\0';
}

const char *
logfile_path(void)
{
	return lf_fd != -1 ? lf_path : NULL;
}

void
logfile_set_max(size_t max)
{
	lf_max = max;
}

/* Hold the lock on the file the name means now: another process may
 * have rotated the one we had. 0, or -1 (no file to write to). */
static int
lock_current(void)
{
	struct stat	 a, b;
	int		 fd;

	for (;;) {
		if (flock(lf_fd, LOCK_EX) == -1 && errno != EINTR)
			return -1;
		if (fstat(lf_fd, &a) == 0 && stat(lf_path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return 0;
		if ((fd = open_name(lf_path)) == -1) {
			(void)flock(lf_fd, LOCK_UN);
			return -1;
		}
		(void)close(lf_fd);	/* drops its lock */
		lf_fd = fd;
	}
}

/* .6 to .7, ..., the file to .1, and a new file; under the lock.
 * Returns 0 with the new file's lock held, -1 when it could not. */
static int
rotate(void)
{
	char	 from[PATH_MAX + 16], to[PATH_MAX + 16];
	int	 i, fd;

	for (i = LOGFILE_KEEP - 1; i >= 1; i--) {
		(void)snprintf(from, sizeof(from), "%s.%d", lf_path, i);
		(void)snprintf(to, sizeof(to), "%s.%d", lf_path, i + 1);
		(void)rename(from, to);
	}
	(void)snprintf(to, sizeof(to), "%s.1", lf_path);
	if (rename(lf_path, to) == -1 || (fd = open_name(lf_path)) == -1)
		return -1;
	(void)flock(fd, LOCK_EX);
	(void)close(lf_fd);
	lf_fd = fd;
	return 0;
}

/* Lock the current file and make room for len bytes: rotate when they
 * would take it to max. While this process waited for the new file's
 * lock, others may have filled and rotated it, so after a rotation the
 * current file is found and measured again. 0, or -1 (nothing held). */
static int
lock_room(size_t len, size_t max)
{
	struct stat	 st;
	int		 tries;

	for (tries = 0; tries < 8; tries++) {
		if (lock_current() == -1)
			return -1;
		if (fstat(lf_fd, &st) == -1 || st.st_size == 0 ||
		    (size_t)st.st_size + len < max || rotate() == -1)
			return 0;
	}
	return 0;	/* a rotation storm: write where we are */
}

static const char *
level_name(int level)
{
	switch (level) {
	case LOG_LVL_ERR:	return "ERROR";
	case LOG_LVL_WARN:	return "WARNING";
	case LOG_LVL_INFO:	return "INFO";
	default:		return "DEBUG";
	}
}

void
logfile_write(int level, const char *role, const char *msg, size_t n)
{
	char		 line[2400], stamp[32];
	struct tm	 tm;
	time_t		 now = time(NULL);
	size_t		 max = lf_max > 0 ? lf_max : LOGFILE_MAX;
	int		 len;

	if (lf_fd == -1)
		return;
	(void)localtime_r(&now, &tm);
	(void)strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	len = snprintf(line, sizeof(line), "[%s] %s [system] [%s] %.*s\n",
	    stamp, level_name(level), role, (int)n, msg);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(line)) {
		len = (int)sizeof(line) - 1;
		line[len - 1] = '\n';
	}
	if (lock_room((size_t)len, max) == -1)
		return;
	(void)!write(lf_fd, line, (size_t)len);
	(void)flock(lf_fd, LOCK_UN);
}
