/* log.h - OpenBSD-style logging to stderr, journald-aware, and to the log file when one is open (logfile.h). */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include <stdarg.h>

enum log_level { LOG_LVL_ERR = 3, LOG_LVL_WARN = 4, LOG_LVL_INFO = 6,
    LOG_LVL_DEBUG = 7 };

extern int log_verbose;		/* current threshold, a LOG_LVL_* value */

/* Set the threshold. Detects journald on stderr (JOURNAL_STREAM) and then
 * writes "<N>" priority prefixes instead of timestamps. */
void	log_init(int level);

/* Name this process in every line, e.g. "gateway" or "worker/3". The
 * string is copied. */
void	log_procinit(const char *role);

/* log_warn appends strerror(errno) and preserves errno; the x variants
 * do not look at errno. */
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug_(const char *, ...) __attribute__((format(printf, 1, 2)));
#define log_debug(...) do {						\
	if (log_verbose >= LOG_LVL_DEBUG)				\
		log_debug_(__VA_ARGS__);				\
} while (0)

/* Log at error level and exit(EX_SOFTWARE). fatal appends strerror. */
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2),
	    noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2),
	    noreturn));

/* Log at error level and exit with the given status (e.g. EX_CONFIG). */
void	fatalx_code(int, const char *, ...)
	    __attribute__((format(printf, 2, 3), noreturn));

#endif
