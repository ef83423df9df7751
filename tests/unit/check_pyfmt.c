/* check_pyfmt.c - Python's repr()/str()/json.dumps() of floats and JSON values, against what Python printed for tests/pyfmt_corpus.txt. */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/jsonw.h"
#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "../testmain.h"

/* ---- helpers ---------------------------------------------------------- */

/* SLUICE_SRC/rel (the source tree; "." when unset), to free. */
static char *
src_path(const char *rel)
{
	const char	*src = getenv("SLUICE_SRC");

	return xasprintf("%s/%s", src != NULL ? src : ".", rel);
}

/* The whole file, to free; fails the test when it cannot be read. */
static char *
slurp(const char *path)
{
	struct buf	 b = BUF_INIT;
	char		 chunk[4096];
	FILE		*f = fopen(path, "rb");
	size_t		 n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	return buf_take(&b);
}

/* The next line of *p (newline cut, *p moved past it), or NULL at the
 * end. With skip, comment and empty lines are passed over. */
static char *
next_line(char **p, bool skip)
{
	char	*line, *nl;

	do {
		if (**p == '\0')
			return NULL;
		line = *p;
		if ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			*p = nl + 1;
		} else
			*p = line + strlen(line);
	} while (skip && (line[0] == '#' || line[0] == '\0'));
	return line;
}

/* s as pyfmt_repr/pyfmt_str/jsonw_dumps (what) write it for v. */
static char *
render(const json_t *v, char what)
{
	struct buf	 b = BUF_INIT;

	if (what == 'r')
		pyfmt_repr(&b, v);
	else if (what == 's')
		pyfmt_str(&b, v);
	else
		jsonw_dump(&b, v, JSONW_PYTHON);
	return buf_take(&b);
}

static char *
float_repr(double d)
{
	struct buf	 b = BUF_INIT;

	pyfmt_float(&b, d);
	return buf_take(&b);
}

/* Is python3 on PATH? Says so on stdout when not. */
static bool
have_python(void)
{
	const char	*path = getenv("PATH");
	char		*copy, *dir, *save = NULL, *p;
	bool		 found = false;

	copy = xstrdup(path != NULL ? path : "/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir != NULL && !found;
	    dir = strtok_r(NULL, ":", &save)) {
		p = xasprintf("%s/python3", dir);
		found = *dir == '/' && access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	if (!found)
		printf("check_pyfmt: python3 not on PATH, golden files not "
		    "re-made\n");
	return found;
}

/* Run python3 with argv[1..] (NULL-terminated) and stdout to out_path;
 * fails the test unless it exits 0. */
static void
run_python(const char *const argv[], const char *out_path)
{
	pid_t	 pid;
	int	 st;
	FILE	*f;

	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		if ((f = freopen(out_path, "w", stdout)) == NULL)
			_exit(126);
		execvp("python3", (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "python3 %s failed (status %d)", argv[1], st);
}

/* Fails unless python3 with args (the script's output on stdout) writes
 * exactly the committed file rel. */
static void
ck_regenerates(const char *const argv[], const char *rel)
{
	char	 tmp[] = "/tmp/check_pyfmt.XXXXXX";
	char	*want, *got, *path = src_path(rel);
	int	 fd;

	ck_assert_int_ne(fd = mkstemp(tmp), -1);
	close(fd);
	run_python(argv, tmp);
	got = slurp(tmp);
	want = slurp(path);
	unlink(tmp);
	ck_assert_msg(strcmp(got, want) == 0, "%s is not what %s writes now; "
	    "re-run it and review the diff", rel, argv[1]);
	free(got);
	free(want);
	free(path);
}

/* ---- the corpus ------------------------------------------------------- */

/* One JSON entry against its golden line "repr\tjson.dumps". */
static void
ck_json_entry(const char *entry, char *gold, int line)
{
	json_error_t	 e;
	json_t		*v;
	char		*tab = strchr(gold, '\t'), *s;

	ck_assert_msg(tab != NULL, "golden %d: no tab", line);
	*tab = '\0';
	v = json_loads(entry, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	ck_assert_msg(v != NULL, "entry %d: %s: %s", line, entry, e.text);
	s = render(v, 'r');
	ck_assert_msg(strcmp(s, gold) == 0, "entry %d %s: repr %s, Python %s",
	    line, entry, s, gold);
	free(s);
	s = render(v, 'j');
	ck_assert_msg(strcmp(s, tab + 1) == 0, "entry %d %s: json.dumps %s, "
	    "Python %s", line, entry, s, tab + 1);
	free(s);
	if (!json_is_string(v)) {	/* str() is repr() but for strings */
		s = render(v, 's');
		ck_assert_msg(strcmp(s, gold) == 0, "entry %d: str %s", line,
		    s);
		free(s);
	}
	json_decref(v);
}

static void
ck_float_entry(const char *text, const char *gold, int line)
{
	char	*s = float_repr(strtod(text, NULL));

	ck_assert_msg(strcmp(s, gold) == 0, "entry %d float %s: %s, Python %s",
	    line, text, s, gold);
	free(s);
}

START_TEST(corpus_matches_golden)
{
	char	*cpath = src_path("tests/pyfmt_corpus.txt");
	char	*gpath = src_path("tests/golden/pyfmt.txt");
	char	*corpus = slurp(cpath), *golden = slurp(gpath);
	char	*cp = corpus, *gp = golden, *entry, *gold;
	int	 n = 0;

	while ((entry = next_line(&cp, true)) != NULL) {
		n++;
		gold = next_line(&gp, false);
		ck_assert_msg(gold != NULL, "golden file ends at entry %d", n);
		if (strncmp(entry, "float ", 6) == 0)
			ck_float_entry(entry + 6, gold, n);
		else
			ck_json_entry(entry, gold, n);
	}
	ck_assert_msg(next_line(&gp, false) == NULL, "golden file is longer");
	ck_assert_int_ge(n, 200);
	free(corpus);
	free(golden);
	free(cpath);
	free(gpath);
}
END_TEST

START_TEST(golden_is_what_python_prints)
{
	char		*script = src_path("tests/pyfmt_corpus.py");
	const char	*argv[] = { "python3", script, "-", NULL };

	if (have_python())
		ck_regenerates(argv, "tests/golden/pyfmt.txt");
	free(script);
}
END_TEST

/* The printable table follows one Unicode version; a python3 with
 * another one would differ in newly assigned characters only. */
START_TEST(unicode_table_is_what_python_prints)
{
	char		*script = src_path("scripts/pyfmt_unicode.py");
	const char	*argv[] = { "python3", script, NULL };
	const char	*vargv[] = { "python3", "-c", "import unicodedata; "
			    "print(unicodedata.unidata_version, end='')",
			    NULL };
	char		 tmp[] = "/tmp/check_pyfmt.XXXXXX", *ver;
	int		 fd;

	if (!have_python()) {
		free(script);
		return;
	}
	ck_assert_int_ne(fd = mkstemp(tmp), -1);
	close(fd);
	run_python(vargv, tmp);
	ver = slurp(tmp);
	unlink(tmp);
	if (strcmp(ver, pyfmt_unicode_version) == 0)
		ck_regenerates(argv, "common/pyfmt_uni.c");
	else
		printf("check_pyfmt: python3 has Unicode %s, the table %s; "
		    "table not compared\n", ver, pyfmt_unicode_version);
	free(ver);
	free(script);
}
END_TEST

/* ---- cases named here, so a wrong golden file cannot hide them -------- */

START_TEST(float_layout)
{
	static const struct {
		double		 d;
		const char	*want;
	} cases[] = {
		{ 1.0 / 3, "0.3333333333333333" }, { 1.0, "1.0" },
		{ 1e16, "1e+16" }, { 1e15, "1000000000000000.0" },
		{ 1e-05, "1e-05" }, { 0.0001, "0.0001" }, { -0.0, "-0.0" },
		{ 1.5e300, "1.5e+300" }, { 0.1 + 0.2, "0.30000000000000004" },
		{ 1e22, "1e+22" }, { 5e-324, "5e-324" }, { 100, "100.0" },
		{ -2.5, "-2.5" }, { 0x1p-1017, "7.120236347223045e-307" },
		{ 123456789.125, "123456789.125" }, { 2.5e-07, "2.5e-07" },
	};
	char	*s;
	size_t	 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = float_repr(cases[i].d);
		ck_assert_msg(strcmp(s, cases[i].want) == 0, "%a: %s, not %s",
		    cases[i].d, s, cases[i].want);
		free(s);
	}
	s = float_repr(INFINITY);
	ck_assert_str_eq(s, "inf");
	free(s);
	s = float_repr(-INFINITY);
	ck_assert_str_eq(s, "-inf");
	free(s);
	s = float_repr(-NAN);
	ck_assert_str_eq(s, "nan");
	free(s);
}
END_TEST

START_TEST(string_repr)
{
	struct buf	 b = BUF_INIT;

	pyfmt_repr_str(&b, "it's \"x\"\n\x01\xc3\xa9\xe2\x80\x8b", 15);
	ck_assert_str_eq(b.b_data, "'it\\'s \"x\"\\n\\x01\xc3\xa9\\u200b'");
	buf_reset(&b);
	pyfmt_repr_str(&b, "it's", 4);
	ck_assert_str_eq(b.b_data, "\"it's\"");
	buf_reset(&b);
	/* bytes that start no valid UTF-8 sequence are copied */
	pyfmt_repr_str(&b, "a\0b\xff\xc3", 5);
	ck_assert_uint_eq(b.b_len, 10);
	ck_assert_int_eq(memcmp(b.b_data, "'a\\x00b\xff\xc3'", 10), 0);
	buf_free(&b);
	ck_assert(pyfmt_printable(' ') && pyfmt_printable('~'));
	ck_assert(!pyfmt_printable('\t') && !pyfmt_printable(0x7f));
	ck_assert(!pyfmt_printable(0xa0) && pyfmt_printable(0xe9));
	ck_assert(!pyfmt_printable(0x200b) && pyfmt_printable(0x1f600));
	ck_assert(!pyfmt_printable(0x378) && !pyfmt_printable(0x10ffff));
}
END_TEST

/* bool() of what json.loads gives: Python's truth table, and a
 * missing key false. */
START_TEST(truthiness)
{
	static const struct { const char *json; bool want; } t[] = {
		{ "null", false }, { "false", false }, { "true", true },
		{ "0", false }, { "0.0", false }, { "-0.0", false },
		{ "1", true }, { "-2", true }, { "0.5", true },
		{ "\"\"", false }, { "\"false\"", true }, { "\"0\"", true },
		{ "[]", false }, { "[0]", true }, { "{}", false },
		{ "{\"a\": null}", true },
	};
	json_t	*v;
	size_t	 i;

	ck_assert(!pyfmt_truthy(NULL));
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = json_loads(t[i].json, JSON_DECODE_ANY, NULL);
		ck_assert_ptr_nonnull(v);
		ck_assert_msg(pyfmt_truthy(v) == t[i].want, "bool(%s)",
		    t[i].json);
		json_decref(v);
	}
}
END_TEST

START_TEST(value_str)
{
	json_t	*v = json_pack("{s:i, s:[b, n, s]}", "a", 1, "b", 1, "x");
	char	*s = pyfmt_strdup(v);

	ck_assert_str_eq(s, "{'a': 1, 'b': [True, None, 'x']}");
	free(s);
	json_decref(v);
	v = json_string("");
	s = pyfmt_strdup(v);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	free(s);
	json_decref(v);
	v = json_string("it's");
	s = pyfmt_strdup(v);
	ck_assert_str_eq(s, "it's");
	free(s);
	json_decref(v);
}
END_TEST

/* ---- whitespace (common/pystr) ------------------------------------ */

/* The UTF-8 bytes of code point c into b; returns their count. */
static size_t
utf8(uint32_t c, char b[4])
{
	if (c < 0x80) {
		b[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | c >> 18);
	b[1] = (char)(0x80 | (c >> 12 & 0x3f));
	b[2] = (char)(0x80 | (c >> 6 & 0x3f));
	b[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* Every code point pystr_space calls whitespace, one hex number a line,
 * as the Python one-liner below writes them. */
static char *
c_spaces(void)
{
	struct buf	 b = BUF_INIT;
	char		 u[4];
	uint32_t	 c;
	size_t		 n;

	for (c = 0; c < 0x110000; c++) {
		if (c >= 0xd800 && c <= 0xdfff)
			continue;
		n = utf8(c, u);
		if (pystr_space(u, n) == (int)n)
			buf_printf(&b, "%x\n", (unsigned)c);
		else
			ck_assert_int_eq(pystr_space(u, n), 0);
	}
	return buf_take(&b);
}

START_TEST(whitespace_is_pythons)
{
	const char	*argv[] = { "python3", "-c", "import sys; sys.stdout."
			    "write(''.join('%x\\n' % c for c in range(0x110000) "
			    "if chr(c).isspace()))", NULL };
	char		 tmp[] = "/tmp/check_pyfmt.XXXXXX";
	char		*want, *got = c_spaces();
	int		 fd;

	ck_assert_ptr_nonnull(strstr(got, "\n3000\n"));
	if (!have_python()) {
		free(got);
		return;
	}
	ck_assert_int_ne(fd = mkstemp(tmp), -1);
	close(fd);
	run_python(argv, tmp);
	want = slurp(tmp);
	unlink(tmp);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
}
END_TEST

static const char *
stripped(const char *s, bool left, bool right, char out[64])
{
	size_t	 off, n;

	pystr_strip(s, strlen(s), left, right, &off, &n);
	snprintf(out, 64, "%.*s", (int)n, s + off);
	return out;
}

START_TEST(strip_as_python)
{
	char		 b[64];
	const char	*p = " \xe2\x80\x80x y\xe3\x80";
	size_t		 n = strlen(p);

	ck_assert_str_eq(stripped(" \t\x1c" "a b\xc2\xa0\xe3\x80\x80\n", true,
	    true, b), "a b");
	ck_assert_str_eq(stripped("\xc2\x85x\xe2\x80\xa8", true, false, b),
	    "x\xe2\x80\xa8");
	ck_assert_str_eq(stripped("x\xe2\x80\xa8", false, true, b), "x");
	/* U+00E9 and U+2603 are not whitespace */
	ck_assert_str_eq(stripped("\xc3\xa9 \xe2\x98\x83", true, true, b),
	    "\xc3\xa9 \xe2\x98\x83");
	ck_assert_str_eq(stripped(" \n ", true, true, b), "");
	/* a character cut short: more is needed, and it is not stripped */
	ck_assert_int_eq(pystr_space("\xe3\x80", 2), -1);
	ck_assert_int_eq(pystr_space("\xc2", 1), -1);
	ck_assert_int_eq(pystr_space("\xe2\x98", 2), 0);
	pystr_trim(&p, &n);
	ck_assert_int_eq((int)n, 5);
	ck_assert(strncmp(p, "x y\xe3\x80", n) == 0);
	/* not s.strip(): Python's whitespace, U+3000 included */
	ck_assert(pystr_blank(""));
	ck_assert(pystr_blank(" \t\n\xe3\x80\x80\xc2\xa0"));
	ck_assert(!pystr_blank(" x "));
	ck_assert(!pystr_blank("\xc3\xa9"));
	ck_assert(!pystr_blank(" \xc2"));	/* a cut character is not space */
	ck_assert(pystr_blank("\x1c\x1d\x1e\x1f\xc2\x85"));
	ck_assert(!pystr_blank("\x85 "));	/* a lone continuation byte */
}
END_TEST

static Suite *
pyfmt_suite(void)
{
	Suite	*s = suite_create("pyfmt");
	TCase	*tc;

	tc = tcase_create("corpus");
	tcase_add_test(tc, corpus_matches_golden);
	suite_add_tcase(s, tc);
	tc = tcase_create("golden_current");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, golden_is_what_python_prints);
	tcase_add_test(tc, unicode_table_is_what_python_prints);
	suite_add_tcase(s, tc);
	tc = tcase_create("whitespace");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, whitespace_is_pythons);
	tcase_add_test(tc, strip_as_python);
	suite_add_tcase(s, tc);
	tc = tcase_create("float");
	tcase_add_test(tc, float_layout);
	suite_add_tcase(s, tc);
	tc = tcase_create("string");
	tcase_add_test(tc, string_repr);
	suite_add_tcase(s, tc);
	tc = tcase_create("value");
	tcase_add_test(tc, value_str);
	tcase_add_test(tc, truthiness);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(pyfmt_suite());
}
