/* logfile.h - the log file WilmerAI's --file-logging asks for: its line format, rotation at 3 MiB keeping 7, shared by the gateway and its workers (addendum A11.3). */
#ifndef SLUICE_LOGFILE_H
#define SLUICE_LOGFILE_H

#include <stddef.h>

#define LOGFILE_NAME	"sluice.log"
#define LOGFILE_MAX	(3 * 1048576)	/* bytes before a rotation */
#define LOGFILE_KEEP	7		/* sluice.log.1 ... .7 */

/* Write every log line of this process to path too, from now on
 * (another file before is closed). The folder is created when missing
 * (mode 0750). A process that forks without exec must call it again in
 * the child: the lock is held per open file. Returns 0, or -1 with
 * errno set (nothing changes). */
int	logfile_open(const char *path);

/* Stop writing to the file. */
void	logfile_close(void);

/* The file in use, or NULL. */
const char *logfile_path(void);

/* One line, as WilmerAI's logging writes it: "[2025-09-20 16:30:05]
 * INFO [system] [role] msg" (local time). Before the write the file is
 * rotated when the line would take it to LOGFILE_MAX (.6 becomes .7,
 * ..., the file becomes .1), under an flock(2) that every process
 * writing to it takes; a process whose file was rotated by another
 * reopens the name. Errors are ignored: the log must not stop the
 * service. level is a LOG_LVL_* value. */
void	logfile_write(int level, const char *role, const char *msg,
	    size_t n);

/* Tests: rotate at max bytes instead of LOGFILE_MAX (0: the default). */
void	logfile_set_max(size_t max);

#endif
