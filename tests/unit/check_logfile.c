/* check_logfile.c - the --file-logging file: WilmerAI's line format, rotation keeping 7, several processes writing and rotating one file (addendum A11.3). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/log.h"
#include "../../common/logfile.h"
#include "../testmain.h"
#include "scratchdir.h"

static struct scratchdir	 D;
static char			*Log;
static int			 Saved_err = -1;

static void
setup(void)
{
	int	 null = open("/dev/null", O_WRONLY);

	/* The lines go to stderr too; keep the test's output readable. */
	Saved_err = dup(STDERR_FILENO);
	ck_assert_int_ne(null, -1);
	ck_assert_int_ne(dup2(null, STDERR_FILENO), -1);
	close(null);
	scratchdir_make(&D, "logfile");
	Log = scratchdir_path(&D, "a/b/logs/sluice.log");
	log_init(LOG_LVL_INFO);
	log_procinit("tester");
	logfile_set_max(0);
}

static void
teardown(void)
{
	logfile_close();
	logfile_set_max(0);
	free(Log);
	scratchdir_remove(&D);
	(void)dup2(Saved_err, STDERR_FILENO);
	close(Saved_err);
}

/* The text of path ("" when missing). Caller frees. */
static char *
slurp(const char *path)
{
	struct buf	 b = BUF_INIT;
	FILE		*f = fopen(path, "r");
	char		 chunk[4096];
	size_t		 n;

	buf_adds(&b, "");
	if (f == NULL)
		return buf_take(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	return buf_take(&b);
}

static void
matches(const char *text, const char *re)
{
	regex_t	 r;

	ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	ck_assert_msg(regexec(&r, text, 0, NULL, 0) == 0, "'%s' !~ %s", text,
	    re);
	regfree(&r);
}

/* Lines as WilmerAI writes them; the folders are made; levels below
 * the threshold stay out; log_warn's errno text is kept. */
START_TEST(a11_3_line_format)
{
	char	*t;

	ck_assert_int_eq(logfile_open(Log), 0);
	ck_assert_str_eq(logfile_path(), Log);
	log_info("hello %d", 5);
	log_debug("not written");
	errno = ENOENT;
	log_warn("open %s", "x");
	log_warnx("careful");
	t = slurp(Log);
	matches(t, "^\\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\] "
	    "INFO \\[system\\] \\[tester\\] hello 5\n"
	    "\\[[^]]+\\] WARNING \\[system\\] \\[tester\\] open x: No such file "
	    "or directory\n"
	    "\\[[^]]+\\] WARNING \\[system\\] \\[tester\\] careful\n$");
	free(t);
	logfile_close();
	ck_assert_ptr_null(logfile_path());
	log_info("after close");
	t = slurp(Log);
	ck_assert_ptr_null(strstr(t, "after close"));
	free(t);
}
END_TEST

/* Count the lines of path that hold "<tag> <n>" for n in [0, max):
 * each seen[n] is incremented. Returns the file's size. */
static size_t
tally(const char *path, const char *tag, int *seen, int max)
{
	char	*t = slurp(path), *p = t, *q, pat[64];
	size_t	 size = strlen(t);
	int	 n;

	snprintf(pat, sizeof(pat), "] %s ", tag);
	while ((q = strstr(p, pat)) != NULL) {
		n = atoi(q + strlen(pat));
		if (n >= 0 && n < max)
			seen[n]++;
		p = q + 1;
	}
	free(t);
	return size;
}

/* At the limit the file becomes .1, .1 becomes .2, ... up to .7; the
 * oldest lines go; no file passes the limit. */
START_TEST(a11_3_rotation_keeps_seven)
{
	char	 path[600];
	int	 seen[200] = { 0 }, i, kept = 0;

	logfile_set_max(300);
	ck_assert_int_eq(logfile_open(Log), 0);
	for (i = 0; i < 200; i++)
		log_info("line %d", i);
	for (i = 0; i <= LOGFILE_KEEP; i++) {
		snprintf(path, sizeof(path), i == 0 ? "%s" : "%s.%d", Log, i);
		ck_assert_uint_lt(tally(path, "line", seen, 200), 300);
	}
	snprintf(path, sizeof(path), "%s.%d", Log, LOGFILE_KEEP + 1);
	ck_assert_int_eq(access(path, F_OK), -1);
	for (i = 0; i < 200; i++) {
		ck_assert_int_le(seen[i], 1);
		kept += seen[i];
	}
	ck_assert_int_eq(seen[199], 1);		/* the newest are kept */
	ck_assert_int_eq(seen[0], 0);		/* the oldest went */
	ck_assert_int_gt(kept, 20);
	for (i = 200 - kept; i < 200; i++)
		ck_assert_msg(seen[i] == 1, "line %d lost", i);
}
END_TEST

/* Four processes write to one file and rotate it under each other:
 * every line lands exactly once, no file passes the limit. */
START_TEST(a11_3_processes_share_the_file)
{
	char	 path[600];
	int	 seen[800] = { 0 }, i, p, st;
	pid_t	 pid[4];

	logfile_set_max(8192);
	ck_assert_int_eq(logfile_open(Log), 0);
	for (p = 0; p < 4; p++) {
		ck_assert_int_ne(pid[p] = fork(), -1);
		if (pid[p] == 0) {
			/* its own open file: flock(2) locks one */
			if (logfile_open(Log) == -1)
				_exit(1);
			for (i = 0; i < 200; i++)
				log_info("w %d", p * 200 + i);
			_exit(0);
		}
	}
	for (p = 0; p < 4; p++) {
		ck_assert_int_eq(waitpid(pid[p], &st, 0), pid[p]);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (i = 0; i <= LOGFILE_KEEP; i++) {
		snprintf(path, sizeof(path), i == 0 ? "%s" : "%s.%d", Log, i);
		ck_assert_uint_lt(tally(path, "w", seen, 800), 8192);
	}
	snprintf(path, sizeof(path), "%s.1", Log);
	ck_assert_int_eq(access(path, F_OK), 0);	/* it did rotate */
	for (i = 0; i < 800; i++)
		ck_assert_msg(seen[i] == 1, "line %d seen %d times", i, seen[i]);
}
END_TEST

/* A folder that cannot be made: -1, and the file in use stays. */
START_TEST(a11_3_open_fails_cleanly)
{
	char	*bad = scratchdir_path(&D, "file");

	scratchdir_put(&D, "file", "x");
	ck_assert_int_eq(logfile_open(Log), 0);
	{
		char	 p[700];

		snprintf(p, sizeof(p), "%s/sub/sluice.log", bad);
		ck_assert_int_eq(logfile_open(p), -1);
	}
	ck_assert_str_eq(logfile_path(), Log);
	free(bad);
}
END_TEST

static Suite *
logfile_suite(void)
{
	Suite	*s = suite_create("logfile");
	TCase	*tc = tcase_create("a11_3");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a11_3_line_format);
	tcase_add_test(tc, a11_3_rotation_keeps_seven);
	tcase_add_test(tc, a11_3_processes_share_the_file);
	tcase_add_test(tc, a11_3_open_fails_cleanly);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(logfile_suite());
}
