/* log.c - OpenBSD-style logging to stderr, journald-aware, and to the log file when one is open. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "logfile.h"

int		 log_verbose = LOG_LVL_INFO;
static char	 log_role[32] = "sluice";
static int	 log_journal;
static bool	 log_redact_on;

static const char *
level_name(int level)
{
	switch (level) {
	case LOG_LVL_ERR:	return "error";
	case LOG_LVL_WARN:	return "warn";
	case LOG_LVL_INFO:	return "info";
	default:		return "debug";
	}
}

/* journald sets JOURNAL_STREAM=dev:ino for the stream it gave us. */
static int
stderr_is_journal(void)
{
	const char	*e = getenv("JOURNAL_STREAM");
	unsigned long	 dev, ino;
	struct stat	 st;

	if (e == NULL || sscanf(e, "%lu:%lu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) == -1)
		return 0;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void
log_init(int level)
{
	log_verbose = level;
	log_journal = stderr_is_journal();
}

void
log_procinit(const char *role)
{
	snprintf(log_role, sizeof(log_role), "%s", role);
}

/* One write(2) per line so lines of concurrent processes never mix. */
static void
vlog(int level, const char *errstr, const char *fmt, va_list ap)
{
	char		 line[2048];
	size_t		 n = 0, msg;
	int		 r;

	if (level > log_verbose)
		return;
	if (log_journal)
		r = snprintf(line, sizeof(line), "<%d>%s[%d]: ", level,
		    log_role, (int)getpid());
	else {
		struct timeval	 tv;
		struct tm	 tm;

		gettimeofday(&tv, NULL);
		gmtime_r(&tv.tv_sec, &tm);
		r = snprintf(line, sizeof(line),
		    "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %s[%d] %s: ",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		    tm.tm_min, tm.tm_sec, (int)(tv.tv_usec / 1000), log_role,
		    (int)getpid(), level_name(level));
	}
	if (r > 0)
		n = (size_t)r < sizeof(line) ? (size_t)r : sizeof(line) - 1;
	msg = n;
	r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (r > 0)
		n += (size_t)r < sizeof(line) - n ? (size_t)r :
		    sizeof(line) - n - 1;
	if (errstr != NULL && n < sizeof(line) - 1) {
		r = snprintf(line + n, sizeof(line) - n, ": %s", errstr);
		if (r > 0)
			n += (size_t)r < sizeof(line) - n ? (size_t)r :
			    sizeof(line) - n - 1;
	}
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	logfile_write(level, log_role, line + msg, n - msg);
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, n);
}

void
log_redact(bool on)
{
	log_redact_on = on;
}

bool
log_redacting(void)
{
	return log_redact_on;
}

/* "[redacted, N bytes]" in the next of the mark buffers. */
static const char *
mark(size_t n)
{
	static char	 ring[4][40];
	static unsigned	 next;
	char		*m = ring[next++ % 4];

	snprintf(m, sizeof(ring[0]), "[redacted, %zu byte%s]", n,
	    n == 1 ? "" : "s");
	return m;
}

const char *
log_text_if(bool redact, const char *s)
{
	if (s == NULL)
		return "(null)";
	return redact ? mark(strlen(s)) : s;
}

const char *
log_text(const char *s)
{
	return log_text_if(log_redact_on, s);
}

int
log_textn_prec(size_t n)
{
	/* the mark ends in a NUL: the precision must not cut it */
	return log_redact_on || n > INT_MAX ? INT_MAX : (int)n;
}

const char *
log_textn(const char *p, size_t n)
{
	if (log_redact_on)
		return mark(n);
	return p != NULL ? p : "";
}

void
log_warn(const char *fmt, ...)
{
	int	 saved = errno;
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_WARN, strerror(saved), fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_WARN, NULL, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_INFO, NULL, fmt, ap);
	va_end(ap);
}

void
log_debug_(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	int	 saved = errno;
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_ERR, strerror(saved), fmt, ap);
	va_end(ap);
	exit(EX_SOFTWARE);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_ERR, NULL, fmt, ap);
	va_end(ap);
	exit(EX_SOFTWARE);
}

void
fatalx_code(int code, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vlog(LOG_LVL_ERR, NULL, fmt, ap);
	va_end(ap);
	exit(code);
}
