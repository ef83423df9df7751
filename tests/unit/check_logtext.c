/* check_logtext.c - conversation content in log lines: log_text and its marks, and the user key that turns redaction on (redactLogOutput). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/conf.h"
#include "../../common/log.h"
#include "../../common/logfile.h"
#include "../testmain.h"
#include "scratchdir.h"

static struct scratchdir	 D;
static int			 Saved_err = -1;

static void
setup(void)
{
	int	 null = open("/dev/null", O_WRONLY);

	Saved_err = dup(STDERR_FILENO);
	ck_assert_int_ne(null, -1);
	ck_assert_int_ne(dup2(null, STDERR_FILENO), -1);
	close(null);
	scratchdir_make(&D, "logtext");
	log_init(LOG_LVL_DEBUG);
	log_procinit("tester");
	log_redact(false);
}

static void
teardown(void)
{
	log_redact(false);
	logfile_close();
	scratchdir_remove(&D);
	log_init(LOG_LVL_WARN);
	(void)dup2(Saved_err, STDERR_FILENO);
	close(Saved_err);
}

/* Off, the text is itself (the very pointer); on, a mark with its
 * length, never the text; NULL is "(null)" either way. */
START_TEST(text_and_mark)
{
	const char	*s = "tell nobody: zebra-42";

	ck_assert_ptr_eq(log_text(s), s);
	ck_assert(!log_redacting());
	log_redact(true);
	ck_assert(log_redacting());
	ck_assert_str_eq(log_text(s), "[redacted, 21 bytes]");
	ck_assert_str_eq(log_text("x"), "[redacted, 1 byte]");
	ck_assert_str_eq(log_text(""), "[redacted, 0 bytes]");
	ck_assert_str_eq(log_text(NULL), "(null)");
	log_redact(false);
	ck_assert_str_eq(log_text(NULL), "(null)");
	ck_assert_ptr_eq(log_text(s), s);
}
END_TEST

/* The gateway's form takes the decision, whatever the process's flag. */
START_TEST(text_if)
{
	const char	*s = "secret";

	log_redact(true);
	ck_assert_ptr_eq(log_text_if(false, s), s);
	log_redact(false);
	ck_assert_str_eq(log_text_if(true, s), "[redacted, 6 bytes]");
}
END_TEST

/* Four texts in one call keep four marks. */
START_TEST(four_in_one_line)
{
	char	 line[256];

	log_redact(true);
	snprintf(line, sizeof(line), "%s %s %s %s", log_text("a"),
	    log_text("bb"), log_text("ccc"), log_text("dddd"));
	ck_assert_str_eq(line, "[redacted, 1 byte] [redacted, 2 bytes] "
	    "[redacted, 3 bytes] [redacted, 4 bytes]");
}
END_TEST

/* "%.*s" with a text that does not end where it stops: cut as asked
 * when off, the whole mark (not cut to n) when on. */
START_TEST(textn_for_precision)
{
	const char	*p = "abcdefgh";
	char		 line[128];

	snprintf(line, sizeof(line), "<%.*s>", LOG_TEXTN(p, 3));
	ck_assert_str_eq(line, "<abc>");
	snprintf(line, sizeof(line), "<%.*s>", LOG_TEXTN(NULL, 0));
	ck_assert_str_eq(line, "<>");
	log_redact(true);
	snprintf(line, sizeof(line), "<%.*s>", LOG_TEXTN(p, 3));
	ck_assert_str_eq(line, "<[redacted, 3 bytes]>");
}
END_TEST

/* Through the real log calls into the --file-logging file: the line is
 * there, the text is not (and is, with redaction off). */
START_TEST(lines_in_the_file)
{
	char	*path = scratchdir_path(&D, "logs/sluice.log"), *t;

	ck_assert_int_eq(logfile_open(path), 0);
	log_redact(true);
	log_info("asked: %s", log_text("MARK-ON-zebra"));
	log_debug("answered: %.*s", LOG_TEXTN("MARK-ON-lion and more", 12));
	log_redact(false);
	log_info("asked: %s", log_text("MARK-OFF-zebra"));
	t = scratchdir_read(&D, "logs/sluice.log");
	ck_assert_ptr_null(strstr(t, "MARK-ON"));
	ck_assert_ptr_nonnull(strstr(t, "asked: [redacted, 13 bytes]\n"));
	ck_assert_ptr_nonnull(strstr(t, "answered: [redacted, 12 bytes]\n"));
	ck_assert_ptr_nonnull(strstr(t, "asked: MARK-OFF-zebra\n"));
	free(t);
	free(path);
}
END_TEST

/* redactLogOutput is read as Python's bool(): absent, false, 0, "" and
 * null are off; true, 1 and "yes" are on. */
START_TEST(user_key_truthy)
{
	static const struct { const char *v; bool on; } cases[] = {
		{ NULL, false }, { "false", false }, { "0", false },
		{ "\"\"", false }, { "null", false }, { "[]", false },
		{ "true", true }, { "1", true }, { "\"yes\"", true },
	};
	struct conf_user	*u;
	char			 err[CONF_ERRLEN], *dir;
	size_t			 i;

	dir = scratchdir_path(&D, "");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		scratchdir_put(&D, "Users/u.json", "{\"chatCompleteAddUser"
		    "Assistant\": true, \"chatCompletionAddMissingAssistant"
		    "Generator\": false%s%s}", cases[i].v ? ", \"redactLog"
		    "Output\": " : "", cases[i].v ? cases[i].v : "");
		ck_assert_msg(conf_user_load(dir, "u", &u, err) == 0, "%s", err);
		ck_assert_msg(conf_user_redacts(u) == cases[i].on, "value %s",
		    cases[i].v ? cases[i].v : "(absent)");
		conf_user_free(u);
	}
	ck_assert(!conf_user_redacts(NULL));
	free(dir);
}
END_TEST

static Suite *
logtext_suite(void)
{
	Suite	*s = suite_create("logtext");
	TCase	*tc = tcase_create("redact");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, text_and_mark);
	tcase_add_test(tc, text_if);
	tcase_add_test(tc, four_in_one_line);
	tcase_add_test(tc, textn_for_precision);
	tcase_add_test(tc, lines_in_the_file);
	tcase_add_test(tc, user_key_truthy);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(logtext_suite());
}
