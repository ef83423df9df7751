/* log.h - OpenBSD-style logging to stderr, journald-aware, and to the log file when one is open (logfile.h). */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

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

/*
 * Conversation content in log lines: prompts, answers, search words,
 * error texts that may echo them. A user with redactLogOutput (or, as
 * in WilmerAI, encryption with an API key) keeps all of it out of the
 * logs. Such text goes through log_text so that the line still says
 * what happened, with "[redacted, N bytes]" for the text.
 */

/* This process's current request redacts (on) or not. A worker sets it
 * for each request it serves; the gateway, serving many users at once,
 * leaves it off and uses log_text_if. */
void	log_redact(bool on);
bool	log_redacting(void);

/* s as a log line may show it now: s itself, or while redacting a mark
 * with its length (NULL is shown as "(null)"). The mark lives in one of
 * a few static buffers used in turn: pass the result straight to one
 * log call, at most four in the same call. */
const char *log_text(const char *s);

/* The same with the decision given: redact says whether the request
 * this line is about redacts (the gateway's users_redacting). */
const char *log_text_if(bool redact, const char *s);

/* For "%.*s" with p[0..n), which need not end in a NUL: expands to the
 * two arguments, the precision and the pointer, e.g.
 * log_info("said: %.*s", LOG_TEXTN(p, n)). */
#define LOG_TEXTN(p, n)	log_textn_prec((n)), log_textn((p), (n))
int	log_textn_prec(size_t n);
const char *log_textn(const char *p, size_t n);

/* Log at error level and exit(EX_SOFTWARE). fatal appends strerror. */
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2),
	    noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2),
	    noreturn));

/* Log at error level and exit with the given status (e.g. EX_CONFIG). */
void	fatalx_code(int, const char *, ...)
	    __attribute__((format(printf, 2, 3), noreturn));

#endif
