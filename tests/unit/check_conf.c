/* check_conf.c - tests for json positions, getters and escaping, names, and the WilmerAI config loaders. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../common/conf_template.h"
#include "../../common/json.h"
#include "../../common/names.h"
#include "../../common/xmem.h"
#include "../testmain.h"

static char	 tmpdir[64];

/* ---- fixtures ------------------------------------------------------- */

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_conf.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
tmp_teardown(void)
{
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write text to tmpdir/rel, creating the folders on the way. */
static void
put(const char *rel, const char *text)
{
	char	 path[PATH_MAX], *p;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	for (p = path + strlen(tmpdir) + 1; (p = strchr(p, '/')) != NULL;
	    p++) {
		*p = '\0';
		ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST,
		    "mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Compact JSON text, reals with 15 digits. Caller frees. */
static char *
dump(const json_t *j)
{
	char	*s = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15));

	ck_assert_ptr_nonnull(s);
	return s;
}

static void
assert_json(const json_t *j, const char *want)
{
	char	*got = dump(j);

	ck_assert_str_eq(got, want);
	free(got);
}

/* "tmpdir/rel" into out. */
static const char *
tpath(char out[PATH_MAX], const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", tmpdir, rel);
	return out;
}

/* ---- names ---------------------------------------------------------- */

START_TEST(test_names_safe)
{
	static const char *const good[] = { "chat-ui", "_shared",
	    "Wiki-Route-Workflow", "a b", "x.json", "a..b", "caf\xc3\xa9" };
	static const char *const bad[] = { "", ".", "..", ".hidden", "../x",
	    "a/b", "a\\b", "/abs", "a\nb", "a\tb", "del\x7f" };
	char	 longname[NAME_MAX_LEN + 2];
	size_t	 i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(name_is_safe(good[i], strlen(good[i])),
		    "'%s' should be safe", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!name_is_safe(bad[i], strlen(bad[i])),
		    "'%s' should be refused", bad[i]);
	ck_assert(!name_is_safe("a\0b", 3));
	ck_assert(!name_is_safe(NULL, 0));
	ck_assert(name_is_safe("ab/c", 2));	/* only n bytes count */
	memset(longname, 'a', sizeof(longname));
	ck_assert(name_is_safe(longname, NAME_MAX_LEN));
	ck_assert(!name_is_safe(longname, NAME_MAX_LEN + 1));
}
END_TEST

START_TEST(test_unsafe_refused)
{
	static const char *const bad[] = { "../x", "a/b", ".hidden", "..",
	    "" };
	struct conf_endpoint	*e = NULL;
	struct conf_user	*u = NULL;
	struct conf_workflow	*w = NULL;
	struct conf_apitype	*a = NULL;
	char			 err[CONF_ERRLEN];
	size_t			 i;

	/* A real file that "../x" would reach from Endpoints/ or Users/. */
	put("x.json", "{\"endpoint\":\"http://x\",\"apiTypeConfigFileName\":"
	    "\"T\",\"chatCompleteAddUserAssistant\":true,"
	    "\"chatCompletionAddMissingAssistantGenerator\":true}");
	put("Endpoints/keep", "");
	put("Users/keep", "");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(conf_endpoint_load(tmpdir, "", bad[i], &e,
		    err), -1);
		ck_assert_ptr_null(e);
		ck_assert_msg(strstr(err, bad[i][0] ? "refusing unsafe endpoint"
		    " name" : "no endpoint name given") != NULL, "%s", err);
		ck_assert_int_eq(conf_user_load(tmpdir, bad[i], &u, err), -1);
		ck_assert_ptr_null(u);
		ck_assert_int_eq(conf_workflow_load(tmpdir, "f", bad[i], &w,
		    err), -1);
		ck_assert_int_eq(conf_apitype_load(tmpdir, bad[i], &a, err), -1);
		ck_assert(!conf_shared_workflow_exists(tmpdir, "", bad[i]));
	}
	ck_assert_int_eq(conf_endpoint_load(tmpdir, "..", "x", &e, err), -1);
	ck_assert_msg(strstr(err, "refusing unsafe endpoint folder '..'") !=
	    NULL, "%s", err);
	ck_assert_int_eq(conf_endpoint_load(tmpdir, "a/../..", "x", &e, err),
	    -1);
	ck_assert_int_eq(conf_workflow_load(tmpdir, "a/", "x", &w, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "refusing unsafe workflow folder"));
}
END_TEST

/* ---- json_escape ---------------------------------------------------- */

static char *
esc(const char *s, size_t n)
{
	struct buf	 b = BUF_INIT;

	buf_adds(&b, "<");
	json_escape(&b, s, n);
	buf_adds(&b, ">");
	return buf_take(&b);
}

static void
assert_esc(const char *in, size_t n, const char *want)
{
	char	*got = esc(in, n);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_escape_basic)
{
	assert_esc("", 0, "<>");
	assert_esc("plain text / slash", 18, "<plain text / slash>");
	assert_esc("say \"hi\" \\ bye", 14, "<say \\\"hi\\\" \\\\ bye>");
	assert_esc("\n\r\t\b\f", 5, "<\\n\\r\\t\\b\\f>");
	assert_esc("\x01\x1f\x7f", 3, "<\\u0001\\u001f\\u007f>");
	assert_esc("a\0b", 3, "<a\\u0000b>");
	assert_esc("abcdef", 3, "<abc>");	/* only n bytes */
}
END_TEST

START_TEST(test_escape_utf8)
{
	/* Valid multi-byte sequences are kept as they are. */
	assert_esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
	    "<caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80>");
	assert_esc("\xef\xbf\xbd", 3, "<\xef\xbf\xbd>");
	/* Invalid: stray byte, truncated, overlong, surrogate, > U+10FFFF. */
	assert_esc("a\xff" "b", 3, "<a\xef\xbf\xbd" "b>");
	assert_esc("a\xc3(", 3, "<a\xef\xbf\xbd(>");
	assert_esc("\xc0\xaf", 2, "<\xef\xbf\xbd\xef\xbf\xbd>");
	assert_esc("\xe0\x80\xaf", 3,
	    "<\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd>");
	assert_esc("\xed\xa0\x80", 3,
	    "<\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd>");
	assert_esc("\xf4\x90\x80\x80", 4,
	    "<\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd>");
	/* A truncated 4-byte sequence is one maximal subpart. */
	assert_esc("x\xf0\x9f\x98", 4, "<x\xef\xbf\xbd>");
	assert_esc("\xf0\x9f\x98\"", 4, "<\xef\xbf\xbd\\\">");
}
END_TEST

/* Random bytes: the output is always valid JSON, and valid UTF-8 input
 * comes back unchanged. */
START_TEST(test_escape_roundtrip)
{
	static const unsigned char pick[] = { 0x00, 0x01, 0x1f, 0x20, '"',
	    '\\', '/', 'a', 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xa9, 0xe2, 0x82,
	    0xac, 0xed, 0xa0, 0xf0, 0x9f, 0x98, 0xf4, 0xff };
	unsigned char	 in[24];
	unsigned int	 seed = 12345;
	struct buf	 b = BUF_INIT;
	json_t		*v, *ref;
	size_t		 i, n, k;

	for (k = 0; k < 20000; k++) {
		n = (size_t)(rand_r(&seed) % (int)sizeof(in));
		for (i = 0; i < n; i++)
			in[i] = pick[rand_r(&seed) % (int)sizeof(pick)];
		buf_reset(&b);
		buf_addc(&b, '"');
		json_escape(&b, (const char *)in, n);
		buf_addc(&b, '"');
		v = json_loadb(b.b_data, b.b_len, JSON_DECODE_ANY |
		    JSON_ALLOW_NUL, NULL);
		ck_assert_msg(json_is_string(v), "invalid JSON: %s", b.b_data);
		ref = json_stringn((const char *)in, n);
		if (ref != NULL)
			ck_assert(json_equal(v, ref));
		json_decref(ref);
		json_decref(v);
	}
	buf_free(&b);
}
END_TEST

/* ---- jfile: loading and positions ----------------------------------- */

START_TEST(test_syntax_pos)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN], p[PATH_MAX];

	ck_assert_int_eq(jfile_parse("t.json", "{\n  \"a\": 1,\n  \"b\": }\n",
	    21, &jf, err), -1);
	ck_assert_str_eq(err, "t.json:3:8: unexpected token near '}'");
	ck_assert_ptr_null(jf.jf_root);
	jfile_free(&jf);
	jfile_free(&jf);
	ck_assert_int_eq(jfile_parse("t.json", "{\"a\": 1\n \"b\": 2}", 16, &jf,
	    err), -1);
	ck_assert_str_eq(err, "t.json:2:4: '}' expected near '\"b\"'");
	/* Columns count characters, as jansson does. */
	ck_assert_int_eq(jfile_parse("u.json", "{\"\xc3\xa9\": x}", 10, &jf,
	    err), -1);
	ck_assert_str_eq(err, "u.json:1:7: invalid token near 'x'");
	ck_assert_int_eq(jfile_parse("e.json", "", 0, &jf, err), -1);
	ck_assert_str_eq(err, "e.json:1:1: '[' or '{' expected near end of "
	    "file");
	put("bad.json", "[1,\n 2,,]");
	ck_assert_int_eq(jfile_load(tpath(p, "bad.json"), &jf, err), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strncmp(err, p, strlen(p)) == 0 &&
	    strcmp(err + strlen(p), ":2:4: unexpected token near ','") == 0,
	    "%s", err);
}
END_TEST

START_TEST(test_load_errors)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN], p[PATH_MAX], want[PATH_MAX + 64];
	char		*big;
	size_t		 n = (4u << 20) + 8;

	ck_assert_int_eq(jfile_load(tpath(p, "none.json"), &jf, err), -1);
	ck_assert_int_eq(errno, ENOENT);
	snprintf(want, sizeof(want), "%s: %s", p, strerror(ENOENT));
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(jfile_load(tmpdir, &jf, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	/* A FIFO is refused, not waited on. */
	ck_assert_int_eq(mkfifo(tpath(p, "fifo.json"), 0600), 0);
	ck_assert_int_eq(jfile_load(p, &jf, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	big = xmalloc(n + 1);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	put("big.json", big);
	free(big);
	ck_assert_int_eq(jfile_load(tpath(p, "big.json"), &jf, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "larger than 4 MiB"));
	put("ok.json", "{\"a\": [1, 2]}\n");
	ck_assert_int_eq(jfile_load(tpath(p, "ok.json"), &jf, err), 0);
	ck_assert_str_eq(jf.jf_path, p);
	ck_assert_uint_eq(jf.jf_len, 14);
	ck_assert(json_is_object(jf.jf_root));
	jfile_free(&jf);
	ck_assert_ptr_null(jf.jf_root);
}
END_TEST

static const char keytext[] =
    "{\n"
    "  \"note\": \"see \\\"endpoint\\\": here, endpoint\",\n"
    "  \"x\": [\"endpoint\", {\"endpoint2\": 1}],\n"
    "  \"endpoint\": 42,\n"
    "  \"a\": {\"stop\": 1},\n"
    "  \"presetSamplers\": {\"x\": \"stop\", \"st\\u006fp\": \"s\"}\n"
    "}\n";

/* A key given twice keeps its last value, and positions point there:
 * found by fuzz/conf_fuzz.c (corpus/conf/regress-duplicate-key). */
START_TEST(test_duplicate_key_pos)
{
	static const char	 text[] = "{\"a\": [1, false],\n"
				    " \"a\": [2, true], \"o\": {\"k\": 1, \"k\": \"s\"}}";
	struct jfile		 jf;
	char			 err[CONF_ERRLEN];
	int			 line, col;

	ck_assert_int_eq(jfile_parse("d.json", text, strlen(text), &jf,
	    err), 0);
	ck_assert(json_is_true(json_array_get(json_object_get(jf.jf_root,
	    "a"), 1)));
	jfile_elempos(&jf, json_object_get(jf.jf_root, "a"), 1, &line, &col);
	ck_assert_int_eq(line, 2);
	ck_assert_int_eq(col, 11);
	jfile_memberpos(&jf, json_object_get(jf.jf_root, "o"), "k", &line,
	    &col);
	ck_assert_int_eq(line, 2);
	ck_assert_int_eq(col, 32);
	jfile_free(&jf);
}
END_TEST

START_TEST(test_keypos)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN];
	int		 line, col;

	ck_assert_int_eq(jfile_parse("k.json", keytext, strlen(keytext), &jf,
	    err), 0);
	/* Not inside the string on line 2, not the list item on line 3. */
	jfile_keypos(&jf, "endpoint", &line, &col);
	ck_assert_int_eq(line, 4);
	ck_assert_int_eq(col, 3);
	jfile_keypos(&jf, "stop", &line, &col);
	ck_assert_int_eq(line, 5);
	ck_assert_int_eq(col, 9);
	jfile_keypos(&jf, "nowhere", &line, &col);
	ck_assert_int_eq(line, 1);
	ck_assert_int_eq(col, 1);
	/* Member of a given object, even with an escaped key. */
	jfile_memberpos(&jf, json_object_get(jf.jf_root, "presetSamplers"),
	    "stop", &line, &col);
	ck_assert_int_eq(line, 6);
	ck_assert_int_eq(col, 35);
	jfile_elempos(&jf, json_object_get(jf.jf_root, "x"), 1, &line, &col);
	ck_assert_int_eq(line, 3);
	ck_assert_int_eq(col, 21);
	jfile_err(&jf, "endpoint", err, "'%s' must be a string", "endpoint");
	ck_assert_str_eq(err, "k.json:4:3: 'endpoint' must be a string");
	jfile_err(&jf, NULL, err, "whole file");
	ck_assert_str_eq(err, "k.json:1:1: whole file");
	jfile_free(&jf);
}
END_TEST

/* ---- typed getters -------------------------------------------------- */

static const char gettext_[] =
    "{\"s\": \"str\", \"b\": true, \"i\": 7, \"r\": 5.0, \"f\": 2.5,\n"
    " \"n\": null, \"l\": [\"a\", \"b\"], \"bad\": [\"a\", 3]}";

START_TEST(test_getters)
{
	struct jfile	  jf;
	char		  err[CONF_ERRLEN];
	const char	 *s;
	json_t		 *o;
	bool		  b;
	long		  i;
	double		  d;

	ck_assert_int_eq(jfile_parse("g.json", gettext_, strlen(gettext_),
	    &jf, err), 0);
	o = jf.jf_root;
	ck_assert_int_eq(jget_str(&jf, o, "s", "d", &s, err), 0);
	ck_assert_str_eq(s, "str");
	ck_assert_int_eq(jget_str(&jf, o, "n", "d", &s, err), 0);
	ck_assert_str_eq(s, "d");
	ck_assert_int_eq(jget_str(&jf, o, "missing", NULL, &s, err), 0);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(jget_str(&jf, o, "b", "d", &s, err), -1);
	ck_assert_str_eq(err, "g.json:1:14: 'b' must be a string, not true or "
	    "false");
	ck_assert_int_eq(jget_bool(&jf, o, "s", false, &b, err), -1);
	ck_assert_str_eq(err, "g.json:1:2: 's' must be true or false, not a "
	    "string");
	ck_assert_int_eq(jget_bool(&jf, o, "b", false, &b, err), 0);
	ck_assert(b);
	ck_assert_int_eq(jget_int(&jf, o, "i", 0, &i, err), 0);
	ck_assert_int_eq(i, 7);
	ck_assert_int_eq(jget_int(&jf, o, "r", 0, &i, err), 0);
	ck_assert_int_eq(i, 5);
	ck_assert_int_eq(jget_int(&jf, o, "f", 0, &i, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "'f' must be an integer"));
	ck_assert_int_eq(jget_int(&jf, o, "missing", -1, &i, err), 0);
	ck_assert_int_eq(i, -1);
	ck_assert_int_eq(jget_num(&jf, o, "f", 0, &d, err), 0);
	ck_assert(d == 2.5);
	ck_assert_int_eq(jget_num(&jf, o, "l", 0, &d, err), -1);
	ck_assert_str_eq(err, "g.json:2:13: 'l' must be a number, not a list");
	jfile_free(&jf);
}
END_TEST

START_TEST(test_strlist)
{
	struct jfile	  jf;
	char		  err[CONF_ERRLEN];
	const char	**l;

	ck_assert_int_eq(jfile_parse("g.json", gettext_, strlen(gettext_),
	    &jf, err), 0);
	ck_assert_int_eq(jget_strlist(&jf, jf.jf_root, "l", &l, err), 0);
	ck_assert_str_eq(l[0], "a");
	ck_assert_str_eq(l[1], "b");
	ck_assert_ptr_null(l[2]);
	free(l);
	ck_assert_int_eq(jget_strlist(&jf, jf.jf_root, "s", &l, err), 0);
	ck_assert_str_eq(l[0], "str");
	ck_assert_ptr_null(l[1]);
	free(l);
	ck_assert_int_eq(jget_strlist(&jf, jf.jf_root, "n", &l, err), 0);
	ck_assert_ptr_null(l[0]);
	free(l);
	ck_assert_int_eq(jget_strlist(&jf, jf.jf_root, "bad", &l, err), -1);
	ck_assert_ptr_null(l);
	ck_assert_str_eq(err, "g.json:2:43: 'bad' must be a list of strings; "
	    "item 2 is a number");
	ck_assert_int_eq(jget_strlist(&jf, jf.jf_root, "i", &l, err), -1);
	ck_assert_str_eq(err, "g.json:1:25: 'i' must be a string or a list "
	    "of strings, not a number");
	jfile_free(&jf);
}
END_TEST

/* ---- users ---------------------------------------------------------- */

START_TEST(test_user_load)
{
	struct conf_user	*u;
	char			 err[CONF_ERRLEN];

	put("Users/alice.json", "{\"chatCompleteAddUserAssistant\": true,\n"
	    " \"chatCompletionAddMissingAssistantGenerator\": false,\n"
	    " \"endpointConfigsSubDirectory\": \"eps\",\n"
	    " \"presetConfigsSubDirectoryOverride\": \"mine\",\n"
	    " \"sharedWorkflowsSubDirectoryOverride\": \"\",\n"
	    " \"connectTimeoutInSeconds\": 0, \"verboseLogging\": true,\n"
	    " \"sluice\": {\"workers\": 2}}");
	ck_assert_msg(conf_user_load(tmpdir, "Alice", &u, err) == 0, "%s", err);
	ck_assert_str_eq(u->u_name, "alice");
	ck_assert_str_eq(u->u_given_name, "Alice");
	ck_assert_str_eq(u->u_endpoint_subdir, "eps");
	ck_assert_str_eq(u->u_workflow_folder, "Alice");
	ck_assert_str_eq(u->u_preset_subdir, "mine");
	ck_assert_str_eq(u->u_shared_folder, "_shared");
	ck_assert_str_eq(u->u_custom_workflow, "");
	ck_assert_str_eq(u->u_chat_template, "");
	ck_assert(u->u_add_user_assistant);
	ck_assert(!u->u_add_missing_assistant);
	ck_assert(!u->u_allow_shared);
	ck_assert(!u->u_custom_override);
	ck_assert_int_eq(u->u_connect_timeout_s, 1);
	ck_assert_int_eq(u->u_port, 5000);
	ck_assert_ptr_nonnull(u->u_sluice);
	ck_assert_int_eq(json_integer_value(json_object_get(u->u_sluice,
	    "workers")), 2);
	conf_user_free(u);
	conf_user_free(NULL);
}
END_TEST

START_TEST(test_user_errors)
{
	struct conf_user	*u = NULL;
	char			 err[CONF_ERRLEN], p[PATH_MAX];
	char			 want[CONF_ERRLEN + PATH_MAX];

	put("Users/noreq.json", "{\"chatCompletionAddMissingAssistantGenerator\""
	    ": true}");
	ck_assert_int_eq(conf_user_load(tmpdir, "noreq", &u, err), -1);
	ck_assert_ptr_null(u);
	snprintf(want, sizeof(want), "%s:1:1: missing required field "
	    "'chatCompleteAddUserAssistant'", tpath(p, "Users/noreq.json"));
	ck_assert_str_eq(err, want);
	put("Users/port.json", "{\"chatCompleteAddUserAssistant\": true,\n"
	    " \"chatCompletionAddMissingAssistantGenerator\": true,\n"
	    "  \"port\": 70000}");
	ck_assert_int_eq(conf_user_load(tmpdir, "port", &u, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "Users/port.json:3:3: 'port' must be "
	    "between 1 and 65535"));
	put("Users/dots.json", "{\"chatCompleteAddUserAssistant\": true,\n"
	    " \"chatCompletionAddMissingAssistantGenerator\": true,\n"
	    " \"endpointConfigsSubDirectory\": \"../../etc\"}");
	ck_assert_int_eq(conf_user_load(tmpdir, "dots", &u, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "Users/dots.json:3:2: "
	    "'endpointConfigsSubDirectory' must be a folder name"));
	put("Users/list.json", "[1]");
	ck_assert_int_eq(conf_user_load(tmpdir, "list", &u, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "list.json:1:1: a user config must be"
	    " a JSON object, not a list"));
	ck_assert_int_eq(conf_user_load(tmpdir, "Bob", &u, err), -1);
	snprintf(want, sizeof(want), "Users/bob.json: no such user 'bob' "
	    "(looked in %s)", tpath(p, "Users/bob.json"));
	ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(test_current_user)
{
	char	 err[CONF_ERRLEN], name[16];

	put("Users/_current-user.json", "{\"currentUser\": \"chat-ui\"}");
	ck_assert_int_eq(conf_current_user(tmpdir, name, sizeof(name), err), 0);
	ck_assert_str_eq(name, "chat-ui");
	ck_assert_int_eq(conf_current_user(tmpdir, name, 4, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "too long"));
	put("Users/_current-user.json", "{\"currentUser\": \"../root\"}");
	ck_assert_int_eq(conf_current_user(tmpdir, name, sizeof(name), err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, ":1:2: 'currentUser' must be a user "
	    "name"));
	put("Users/_current-user.json", "{\"currentUser\": 3}");
	ck_assert_int_eq(conf_current_user(tmpdir, name, sizeof(name), err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "'currentUser' must be a string"));
	put("Users/_current-user.json", "{}");
	ck_assert_int_eq(conf_current_user(tmpdir, name, sizeof(name), err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "missing required field "
	    "'currentUser'"));
}
END_TEST

/* ---- endpoints ------------------------------------------------------ */

START_TEST(test_endpoint_load)
{
	struct conf_endpoint	*e;
	char			 err[CONF_ERRLEN];

	put("Endpoints/eps/Full.json", "{\"endpoint\": \"http://h:1\",\n"
	    " \"apiTypeConfigFileName\": \"T\", \"promptTemplate\": \"chatml\",\n"
	    " \"maxContextTokenSize\": 8192, \"removeThinking\": true,\n"
	    " \"startThinkTag\": \"<think>\", \"endThinkTag\": \"</think>\",\n"
	    " \"responseStartTextToRemoveEndpointWide\": \"Answer:\",\n"
	    " \"backupEndpointName\": \"\", \"appendPresetName\": \"X\",\n"
	    " \"maxConcurrentRequests\": 2,\n"
	    " \"presetSamplers\": {\"temperature\": 0.3}}");
	ck_assert_msg(conf_endpoint_load(tmpdir, "eps", "Full", &e, err) == 0,
	    "%s", err);
	ck_assert_str_eq(e->e_name, "Full");
	ck_assert_str_eq(e->e_url, "http://h:1");
	ck_assert_str_eq(e->e_apitype_name, "T");
	ck_assert_str_eq(e->e_prompt_template, "chatml");
	ck_assert_str_eq(e->e_model, "");
	ck_assert_str_eq(e->e_api_key, "");
	ck_assert_int_eq(e->e_max_context, 8192);
	ck_assert(e->e_remove_thinking);
	ck_assert_str_eq(e->e_start_think_tag, "<think>");
	ck_assert_int_eq(e->e_think_grace, 100);
	ck_assert_str_eq(e->e_start_text[0], "Answer:");
	ck_assert_ptr_null(e->e_start_text[1]);
	ck_assert_ptr_null(e->e_backup_endpoint);
	ck_assert_str_eq(e->e_append_preset, "X");
	ck_assert_int_eq(e->e_max_concurrent, 2);
	ck_assert(json_is_object(e->e_preset_samplers));
	conf_endpoint_free(e);
	/* Shipped embedding endpoints have no promptTemplate key. */
	put("Endpoints/Emb.json", "{\"endpoint\": \"http://h\","
	    " \"apiTypeConfigFileName\": \"OpenAI-Embeddings\"}");
	ck_assert_msg(conf_endpoint_load(tmpdir, "", "Emb", &e, err) == 0,
	    "%s", err);
	ck_assert_ptr_null(e->e_prompt_template);
	ck_assert_int_eq(e->e_max_context, -1);
	ck_assert_ptr_null(e->e_preset_samplers);
	ck_assert_ptr_null(e->e_start_text[0]);
	ck_assert_int_eq(e->e_max_concurrent, 0);
	conf_endpoint_free(e);
}
END_TEST

/* Load Endpoints/<name>.json written from text; expect err to be
 * "<path>:<tail>". */
static void
endpoint_fails(const char *name, const char *text, const char *tail)
{
	struct conf_endpoint	*e = NULL;
	char			 rel[128], err[CONF_ERRLEN], p[PATH_MAX];
	char			 want[CONF_ERRLEN + PATH_MAX];

	snprintf(rel, sizeof(rel), "Endpoints/%s.json", name);
	put(rel, text);
	ck_assert_int_eq(conf_endpoint_load(tmpdir, "", name, &e, err), -1);
	ck_assert_ptr_null(e);
	snprintf(want, sizeof(want), "%s:%s", tpath(p, rel), tail);
	ck_assert_str_eq(err, want);
}

START_TEST(test_endpoint_errors)
{
	struct conf_endpoint	*e;
	char			 err[CONF_ERRLEN], p[PATH_MAX];
	char			 want[CONF_ERRLEN + PATH_MAX];

	endpoint_fails("Bad", "{\n  \"endpoint\": \"http://x\",\n"
	    "  \"apiTypeConfigFileName\": \"T\",\n  \"removeThinking\": \"yes\"\n}",
	    "4:3: 'removeThinking' must be true or false, not a string");
	endpoint_fails("Key", keytext, "4:3: 'endpoint' must be a string, not "
	    "a number");
	endpoint_fails("NoUrl", "{\"apiTypeConfigFileName\": \"T\"}",
	    "1:1: missing required field 'endpoint'");
	endpoint_fails("NullUrl", "{\"apiTypeConfigFileName\": \"T\",\n"
	    " \"endpoint\": null}", "2:2: required field 'endpoint' must not be "
	    "null");
	endpoint_fails("NoType", "{\"endpoint\": \"x\"}",
	    "1:1: missing required field 'apiTypeConfigFileName'");
	endpoint_fails("PS", "{\"endpoint\": \"x\",\n"
	    "\"apiTypeConfigFileName\": \"T\",\n  \"presetSamplers\": [1]}",
	    "3:3: 'presetSamplers' must be an object, not a list");
	endpoint_fails("Strs", "{\"endpoint\": \"x\", \"apiTypeConfigFileName\": "
	    "\"T\",\n \"responseStartTextToRemoveEndpointWide\": [\"a\",\n {}]}",
	    "3:2: 'responseStartTextToRemoveEndpointWide' must be a list of "
	    "strings; item 2 is an object");
	endpoint_fails("Conc", "{\"endpoint\": \"x\", \"apiTypeConfigFileName\": "
	    "\"T\",\n  \"maxConcurrentRequests\": -1}", "2:3: "
	    "'maxConcurrentRequests' must be from 0 (no limit) to 4096");
	endpoint_fails("Num", "7", "1:1: '[' or '{' expected near '7'");
	endpoint_fails("Arr", "[]", "1:1: an endpoint config must be a JSON "
	    "object, not a list");
	ck_assert_int_eq(conf_endpoint_load(tmpdir, "eps", "Nope", &e, err), -1);
	snprintf(want, sizeof(want), "Endpoints/eps/Nope.json: no such "
	    "endpoint 'Nope' (looked in %s)",
	    tpath(p, "Endpoints/eps/Nope.json"));
	ck_assert_str_eq(err, want);
}
END_TEST

/* ---- api types ------------------------------------------------------ */

START_TEST(test_apitype_load)
{
	static const struct {
		const char		*t;
		enum conf_apitype_kind	 k;
	} kinds[] = {
		{ "openAIChatCompletion", APIT_OPENAI_CHAT },
		{ "openAIApiChatImageSpecific", APIT_OPENAI_CHAT },
		{ "openAIV1Completion", APIT_OPENAI_COMPLETION },
		{ "claudeMessages", APIT_CLAUDE },
		{ "koboldCppGenerate", APIT_KOBOLD },
		{ "koboldCppGenerateImageSpecific", APIT_KOBOLD },
		{ "ollamaApiChat", APIT_OLLAMA_CHAT },
		{ "ollamaApiChatImageSpecific", APIT_OLLAMA_CHAT },
		{ "ollamaApiGenerate", APIT_OLLAMA_GENERATE },
		{ "openAIEmbeddings", APIT_OPENAI_EMBED },
		{ "ollamaEmbeddings", APIT_OLLAMA_EMBED },
	};
	struct conf_apitype	*a;
	char			 err[CONF_ERRLEN], text[256];
	size_t			 i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(text, sizeof(text), "{\"type\": \"%s\"}", kinds[i].t);
		put("ApiTypes/K.json", text);
		ck_assert_msg(conf_apitype_load(tmpdir, "K", &a, err) == 0, "%s",
		    err);
		ck_assert_int_eq(a->a_type, kinds[i].k);
		ck_assert_str_eq(a->a_type_name, kinds[i].t);
		ck_assert_str_eq(a->a_preset_type, "");
		ck_assert_str_eq(a->a_stream_prop, "stream");
		ck_assert_str_eq(a->a_truncate_prop, "");
		ck_assert_str_eq(a->a_think_mode, "unsupported");
		ck_assert_ptr_null(a->a_sampler_map);
		ck_assert(a->a_stream_usage);
		conf_apitype_free(a);
	}
	put("ApiTypes/F.json", "{\"type\": \"ollamaApiChat\", \"presetType\": "
	    "\"OC\", \"truncateLengthPropertyName\": null, "
	    "\"maxNewTokensPropertyName\": \"num_predict\", "
	    "\"supportsChatTemplateKwargs\": true, \"thinking\": {\"location\": "
	    "\"top\", \"field\": \"think\", \"mode\": \"bool\"}, "
	    "\"samplerFieldMap\": {\"temperature\": \"temp\"}, "
	    "\"streamIncludeUsage\": false}");
	ck_assert_msg(conf_apitype_load(tmpdir, "F", &a, err) == 0, "%s", err);
	ck_assert_str_eq(a->a_name, "F");
	ck_assert_str_eq(a->a_preset_type, "OC");
	ck_assert_str_eq(a->a_truncate_prop, "");
	ck_assert_str_eq(a->a_max_tokens_prop, "num_predict");
	ck_assert(a->a_chat_template_kwargs);
	ck_assert(!a->a_stream_usage);
	ck_assert_str_eq(a->a_think_field, "think");
	ck_assert_str_eq(a->a_think_mode, "bool");
	ck_assert_str_eq(json_string_value(json_object_get(a->a_sampler_map,
	    "temperature")), "temp");
	conf_apitype_free(a);
}
END_TEST

START_TEST(test_apitype_errors)
{
	struct conf_apitype	*a = NULL;
	char			 err[CONF_ERRLEN];

	put("ApiTypes/U.json", "{\"nameForDisplayOnly\": \"x\",\n"
	    "  \"type\": \"fancy\"}");
	ck_assert_int_eq(conf_apitype_load(tmpdir, "U", &a, err), -1);
	ck_assert_ptr_null(a);
	ck_assert_msg(strstr(err, "ApiTypes/U.json:2:3: unknown api 'type' "
	    "\"fancy\"; valid types are: openAIChatCompletion, "
	    "openAIApiChatImageSpecific, openAIV1Completion, claudeMessages, "
	    "koboldCppGenerate, koboldCppGenerateImageSpecific, ollamaApiChat, "
	    "ollamaApiChatImageSpecific, ollamaApiGenerate, openAIEmbeddings, "
	    "ollamaEmbeddings") != NULL, "%s", err);
	put("ApiTypes/N.json", "{\"presetType\": \"x\"}");
	ck_assert_int_eq(conf_apitype_load(tmpdir, "N", &a, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "N.json:1:1: missing required field "
	    "'type'"));
	put("ApiTypes/L.json", "{\"type\": \"ollamaApiChat\",\n"
	    "\"samplerFieldMap\": [\"temperature\"]}");
	ck_assert_int_eq(conf_apitype_load(tmpdir, "L", &a, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "L.json:2:1: 'samplerFieldMap' must "
	    "be an object, not a list"));
	put("ApiTypes/V.json", "{\"type\": \"ollamaApiChat\", \"top_k\": 1,\n"
	    " \"samplerFieldMap\": {\"temperature\": \"temperature\",\n"
	    "   \"top_k\": 5}}");
	ck_assert_int_eq(conf_apitype_load(tmpdir, "V", &a, err), -1);
	ck_assert_msg(strstr(err, "V.json:3:4: samplerFieldMap: 'top_k' must "
	    "map to a native field name (a string), not a number") != NULL,
	    "%s", err);
	put("ApiTypes/T.json", "{\"type\": \"ollamaApiChat\",\n"
	    " \"thinking\": {\"mode\": true}}");
	ck_assert_int_eq(conf_apitype_load(tmpdir, "T", &a, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "T.json:2:15: 'mode' must be a "
	    "string"));
	put("ApiTypes/S.json", "\"openAIChatCompletion\"");
	ck_assert_int_eq(conf_apitype_load(tmpdir, "S", &a, err), -1);
	ck_assert_msg(strstr(err, "S.json:1:22: '[' or '{' expected") != NULL,
	    "%s", err);
}
END_TEST

/* ---- workflows ------------------------------------------------------ */

START_TEST(test_workflow_forms)
{
	struct conf_workflow	*w;
	char			 err[CONF_ERRLEN];

	put("Workflows/alice/Arr.json", "[{\"type\": \"Standard\"}, {}]");
	ck_assert_msg(conf_workflow_load(tmpdir, "alice", "Arr", &w, err) == 0,
	    "%s", err);
	ck_assert_str_eq(w->w_name, "Arr");
	ck_assert_uint_eq(json_array_size(w->w_nodes), 2);
	ck_assert_uint_eq(json_object_size(w->w_vars), 0);
	conf_workflow_free(w);
	put("Workflows/_shared/general/_DefaultWorkflow.json",
	    "{\"persona\": \"p\", \"nodes\": [{\"title\": \"a\"}], \"n\": 3}");
	ck_assert_msg(conf_workflow_load(tmpdir, "_shared/general",
	    "_DefaultWorkflow", &w, err) == 0, "%s", err);
	ck_assert_uint_eq(json_array_size(w->w_nodes), 1);
	assert_json(w->w_vars, "{\"persona\":\"p\",\"n\":3}");
	conf_workflow_free(w);
	conf_workflow_free(NULL);
	/* A user folder that only exists under _overrides/. */
	put("Workflows/_overrides/coding/Main.json", "[{\"title\": \"o\"}]");
	ck_assert_msg(conf_workflow_load(tmpdir, "coding", "Main", &w,
	    err) == 0, "%s", err);
	ck_assert_uint_eq(json_array_size(w->w_nodes), 1);
	conf_workflow_free(w);
	ck_assert_int_eq(conf_workflow_load(tmpdir, "coding", "Nope", &w, err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "no such workflow 'Nope'"));
}
END_TEST

/* Load Workflows/f/<name>.json written from text; expect "<path>:tail". */
static void
workflow_fails(const char *name, const char *text, const char *tail)
{
	struct conf_workflow	*w = NULL;
	char			 rel[128], err[CONF_ERRLEN], p[PATH_MAX];
	char			 want[CONF_ERRLEN + PATH_MAX];

	snprintf(rel, sizeof(rel), "Workflows/f/%s.json", name);
	put(rel, text);
	ck_assert_int_eq(conf_workflow_load(tmpdir, "f", name, &w, err), -1);
	ck_assert_ptr_null(w);
	snprintf(want, sizeof(want), "%s:%s", tpath(p, rel), tail);
	ck_assert_str_eq(err, want);
}

START_TEST(test_workflow_errors)
{
	struct conf_workflow	*w;
	char			 err[CONF_ERRLEN];

	workflow_fails("Num", "[\n  {\"type\": \"Standard\"},\n  7\n]",
	    "3:3: workflow node 2 must be an object, not a number");
	workflow_fails("Nested", "{\"x\": [7],\n \"nodes\": [[1], {}]}",
	    "2:12: workflow node 1 must be an object, not a list");
	workflow_fails("NotArr", "{\"persona\": \"x\",\n \"nodes\": {\"a\": 1}}",
	    "2:2: 'nodes' must be a list of node objects, not an object");
	workflow_fails("Settings", "{\"endpointName\": \"x\", "
	    "\"lookbackStartTurn\": 3}", "1:1: not a workflow: an object "
	    "workflow needs a \"nodes\" list");
	workflow_fails("Str", "[{\"type\": \"Standard\"},\n {\"type\": 5}]",
	    "2:3: workflow node 2: 'type' must be a string, not a number");
	workflow_fails("Syntax", "[{\"type\": \"Standard\"},\n {\"type\" 5}]",
	    "2:10: ':' expected near '5'");
	ck_assert_int_eq(conf_workflow_load(tmpdir, "f", "Gone", &w, err), -1);
	ck_assert_ptr_nonnull(strstr(err, "Workflows/f/Gone.json: no such "
	    "workflow 'Gone' (looked in "));
}
END_TEST

START_TEST(test_shared_workflows)
{
	char	**v;

	put("Workflows/_shared/general/_DefaultWorkflow.json", "[]");
	put("Workflows/_shared/coding/_DefaultWorkflow.json", "[]");
	put("Workflows/_shared/_hidden/_DefaultWorkflow.json", "[]");
	put("Workflows/_shared/afile", "");
	put("Workflows/_shared/Beta/x", "");
	ck_assert(conf_shared_workflow_exists(tmpdir, "_shared", "general"));
	ck_assert(conf_shared_workflow_exists(tmpdir, "_shared", "_hidden"));
	ck_assert(!conf_shared_workflow_exists(tmpdir, "_shared", "afile"));
	ck_assert(!conf_shared_workflow_exists(tmpdir, "_shared", "nope"));
	ck_assert(!conf_shared_workflow_exists(tmpdir, "_shared", "a:b"));
	ck_assert(!conf_shared_workflow_exists(tmpdir, "..", "Workflows"));
	v = conf_shared_workflows(tmpdir, "_shared");
	ck_assert_str_eq(v[0], "Beta");
	ck_assert_str_eq(v[1], "coding");
	ck_assert_str_eq(v[2], "general");
	ck_assert_ptr_null(v[3]);
	conf_names_free(v);
	v = conf_shared_workflows(tmpdir, "_missing");
	ck_assert_ptr_null(v[0]);
	conf_names_free(v);
	v = conf_shared_workflows(tmpdir, "../..");
	ck_assert_ptr_null(v[0]);
	conf_names_free(v);
	conf_names_free(NULL);
}
END_TEST

/* ---- presets -------------------------------------------------------- */

static void
preset_tree(void)
{
	put("ApiTypes/T.json", "{\"type\": \"openAIChatCompletion\", "
	    "\"presetType\": \"PT\", \"supportsChatTemplateKwargs\": true, "
	    "\"thinking\": {\"location\": \"chat_template_kwargs\", "
	    "\"field\": \"enable_thinking\", \"mode\": \"bool\"}, "
	    "\"samplerFieldMap\": {\"temperature\": \"temp\", \"stop\": "
	    "\"stop_seq\", \"top_k\": \"top_k\"}}");
	put("ApiTypes/E.json", "{\"type\": \"claudeMessages\", \"presetType\": "
	    "\"PE\", \"thinking\": {\"location\": \"top\", \"field\": "
	    "\"reasoning_effort\", \"mode\": \"effort\"}, \"samplerFieldMap\": "
	    "{\"temperature\": \"temperature\"}}");
	put("ApiTypes/NoPT.json", "{\"type\": \"openAIEmbeddings\"}");
	put("Users/alice.json", "{\"chatCompleteAddUserAssistant\": true, "
	    "\"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"endpointConfigsSubDirectory\": \"eps\", "
	    "\"presetConfigsSubDirectoryOverride\": \"mine\"}");
	put("Endpoints/eps/Donor.json", "{\"endpoint\": \"x\", "
	    "\"apiTypeConfigFileName\": \"T\", \"presetSamplers\": {"
	    "\"top_k\": null, \"temperature\": 0.5, \"min_p\": 0.1, "
	    "\"bogus\": 1, \"stop\": [\"a\"], \"thinkingMode\": \"off\", "
	    "\"chat_template_kwargs\": {\"enable_thinking\": true, "
	    "\"budget\": 5}}}");
	put("Endpoints/eps/Donor2.json", "{\"presetSamplers\": {"
	    "\"thinkingMode\": \" HIGH \", \"temperature\": 1}}");
	put("Endpoints/eps/Empty.json", "{\"presetSamplers\": {}}");
	put("Endpoints/eps/BadPS.json", "{\"presetSamplers\": \"warm\"}");
	put("Endpoints/eps/Main.json", "{\"endpoint\": \"x\", "
	    "\"apiTypeConfigFileName\": \"T\", \"appendPresetName\": "
	    "\"Extra\"}");
	put("Presets/PT/mine/Both.json", "{\"src\": \"sub\"}");
	put("Presets/PT/Both.json", "{\"src\": \"top\"}");
	put("Presets/PT/Top.json", "{\"src\": \"top\", \"z\": 1}");
	put("Presets/PT/mine/Empty.json", "{\"src\": \"file\"}");
	put("Presets/PT/List.json", "[1]");
	put("Presets/PT/Nulls.json", "{\"a\": null, \"b\": \"__wilmer_null__\", "
	    "\"c\": {\"d\": null}, \"e\": {\"f\": null, \"g\": 1}, "
	    "\"json_schema\": {\"default\": null}, \"stop\": [null, "
	    "\"__wilmer_null__\"], \"z\": 0, \"grammar\": {\"x\": null}}");
	put("Presets/PT/mine/Extra.json", "{\"temp\": 0.9, "
	    "\"chat_template_kwargs\": {\"budget\": null, \"x\": 1}, "
	    "\"new\": true}");
}

/* Resolve preset for user uname (NULL: none) through api type atname,
 * with endpoint epname (NULL: none) in Endpoints/eps. Returns the result
 * (caller decrefs) or NULL with err set. */
static json_t *
resolve(const char *uname, const char *epname, const char *atname,
    const char *preset, char err[CONF_ERRLEN])
{
	struct conf_user	*u = NULL;
	struct conf_endpoint	*ep = NULL;
	struct conf_apitype	*at = NULL;
	json_t			*out = NULL;

	if (uname != NULL)
		ck_assert_msg(conf_user_load(tmpdir, uname, &u, err) == 0, "%s",
		    err);
	if (epname != NULL)
		ck_assert_msg(conf_endpoint_load(tmpdir, "eps", epname, &ep,
		    err) == 0, "%s", err);
	ck_assert_msg(conf_apitype_load(tmpdir, atname, &at, err) == 0, "%s",
	    err);
	if (conf_preset_resolve_ep(tmpdir, u, ep, at, preset, &out, err) == 0)
		ck_assert_ptr_nonnull(out);
	else
		ck_assert_ptr_null(out);
	conf_apitype_free(at);
	conf_endpoint_free(ep);
	conf_user_free(u);
	return out;
}

static void
assert_resolves(const char *uname, const char *epname, const char *atname,
    const char *preset, const char *want)
{
	char	 err[CONF_ERRLEN];
	json_t	*j = resolve(uname, epname, atname, preset, err);

	json_t	*n;

	ck_assert_msg(j != NULL, "%s", err);
	n = conf_gen_normalize(j);	/* as it is sent */
	assert_json(n, want);
	json_decref(n);
	json_decref(j);
}

static void
assert_resolves_raw(const char *uname, const char *epname, const char *atname,
    const char *preset, const char *want)
{
	char	 err[CONF_ERRLEN];
	json_t	*j = resolve(uname, epname, atname, preset, err);

	ck_assert_msg(j != NULL, "%s", err);
	assert_json(j, want);
	json_decref(j);
}

/* A link to a folder inside the config folder is a workflow like any
 * other; one that resolves outside it, directly or through a linked
 * parent, is neither selectable nor listed. */
START_TEST(test_shared_links)
{
	char	  out[128], target[PATH_MAX], link[PATH_MAX];
	char	**v;

	put("Workflows/_shared/real/_DefaultWorkflow.json", "[]");
	put("Workflows/elsewhere/inner/_DefaultWorkflow.json", "[]");
	snprintf(out, sizeof(out), "%s.out", tmpdir);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(target, sizeof(target), "%s/Workflows/elsewhere/inner",
	    tmpdir);
	snprintf(link, sizeof(link), "%s/Workflows/_shared/inlink", tmpdir);
	ck_assert_int_eq(symlink(target, link), 0);
	snprintf(link, sizeof(link), "%s/Workflows/_shared/outlink", tmpdir);
	ck_assert_int_eq(symlink(out, link), 0);
	snprintf(link, sizeof(link), "%s/Workflows/linked", tmpdir);
	ck_assert_int_eq(symlink(out, link), 0);
	snprintf(target, sizeof(target), "%s/sub", out);
	ck_assert_int_eq(mkdir(target, 0755), 0);

	ck_assert(conf_shared_workflow_exists(tmpdir, "_shared", "real"));
	ck_assert(conf_shared_workflow_exists(tmpdir, "_shared", "inlink"));
	ck_assert(!conf_shared_workflow_exists(tmpdir, "_shared", "outlink"));
	ck_assert(!conf_shared_workflow_exists(tmpdir, "linked", "sub"));
	v = conf_shared_workflows(tmpdir, "_shared");
	ck_assert_str_eq(v[0], "inlink");
	ck_assert_str_eq(v[1], "real");
	ck_assert_ptr_null(v[2]);
	conf_names_free(v);
	v = conf_shared_workflows(tmpdir, "linked");
	ck_assert_ptr_null(v[0]);
	conf_names_free(v);
	ck_assert_int_eq(rmdir(target), 0);
	ck_assert_int_eq(rmdir(out), 0);
}
END_TEST

/* Set path's mtime and ctime apart from now: ctime cannot be set, so
 * the test waits until the file is old enough for the cache. */
static void
age(const char *rel)
{
	char		 path[PATH_MAX];
	struct stat	 st;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	ck_assert_int_eq(stat(path, &st), 0);
	while (time(NULL) - st.st_ctim.tv_sec < 2)
		usleep(50 * 1000);
}

/* jfile_load keeps settled files and still sees every change: a new
 * text of the same size, a replaced file, a removed one. */
START_TEST(test_jfile_cache)
{
	char		 path[PATH_MAX], err[CONF_ERRLEN];
	struct jfile	 jf;
	unsigned long	 hits;

	jfile_cache_clear();
	hits = jfile_cache_hits();
	snprintf(path, sizeof(path), "%s/c.json", tmpdir);
	put("c.json", "{\"v\": 1}");
	ck_assert_int_eq(jfile_load(path, &jf, err), 0);	/* fresh: read */
	jfile_free(&jf);
	age("c.json");
	ck_assert_int_eq(jfile_load(path, &jf, err), 0);	/* kept now */
	jfile_free(&jf);
	ck_assert_uint_eq(jfile_cache_hits(), hits);
	ck_assert_int_eq(jfile_load(path, &jf, err), 0);	/* served */
	ck_assert_uint_eq(jfile_cache_hits(), hits + 1);
	ck_assert_int_eq(json_integer_value(json_object_get(jf.jf_root,
	    "v")), 1);
	jfile_free(&jf);
	put("c.json", "{\"v\": 2}");			/* same size */
	ck_assert_int_eq(jfile_load(path, &jf, err), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(jf.jf_root,
	    "v")), 2);
	jfile_free(&jf);
	ck_assert_uint_eq(jfile_cache_hits(), hits + 1);
	age("c.json");
	ck_assert_int_eq(jfile_load(path, &jf, err), 0);
	jfile_free(&jf);
	ck_assert_int_eq(unlink(path), 0);
	put("c.json", "{\"v\": 3}");			/* a new inode */
	ck_assert_int_eq(jfile_load(path, &jf, err), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(jf.jf_root,
	    "v")), 3);
	jfile_free(&jf);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(jfile_load(path, &jf, err), -1);
	ck_assert_int_eq(errno, ENOENT);
	jfile_cache_clear();
}
END_TEST

/* Keys of jf's root object, in order, joined by ','. */
static void
key_order(const struct jfile *jf, char *out, size_t len)
{
	const char	*k;
	json_t		*v;
	size_t		 o = 0;

	out[0] = '\0';
	json_object_foreach(jf->jf_root, k, v)
		o += (size_t)snprintf(out + o, len - o, "%s,", k);
}

/* A kept file's tree is parsed once and each load gets its own copy, in
 * the file's order: what one caller changes, the next never sees. */
START_TEST(test_jfile_cache_copies)
{
	char		 path[PATH_MAX], err[CONF_ERRLEN], keys[64];
	struct jfile	 jf;
	unsigned long	 hits;
	int		 i;

	jfile_cache_clear();
	hits = jfile_cache_hits();
	snprintf(path, sizeof(path), "%s/o.json", tmpdir);
	put("o.json", "{\"z\": [1, 2], \"a\": {\"x\": 1.5}, \"m\": \"s\"}");
	ck_assert_int_eq(jfile_load(path, &jf, err), 0);
	jfile_free(&jf);
	age("o.json");
	for (i = 0; i < 4; i++) {	/* kept; parsed once; copied twice */
		ck_assert_int_eq(jfile_load(path, &jf, err), 0);
		key_order(&jf, keys, sizeof(keys));
		ck_assert_str_eq(keys, "z,a,m,");
		ck_assert_uint_eq(json_array_size(json_object_get(jf.jf_root,
		    "z")), 2);
		ck_assert(json_real_value(json_object_get(json_object_get(
		    jf.jf_root, "a"), "x")) == 1.5);
		ck_assert_ptr_nonnull(strstr(jf.jf_text, "\"m\": \"s\""));
		json_array_append_new(json_object_get(jf.jf_root, "z"),
		    json_integer(3));
		json_object_set_new(json_object_get(jf.jf_root, "a"), "x",
		    json_null());
		json_object_del(jf.jf_root, "m");
		jfile_free(&jf);
	}
	ck_assert_uint_eq(jfile_cache_hits(), hits + 3);
	jfile_cache_clear();
}
END_TEST

START_TEST(test_preset_file)
{
	char	 err[CONF_ERRLEN], want[CONF_ERRLEN];

	preset_tree();
	assert_resolves("alice", NULL, "T", "Both", "{\"src\":\"sub\"}");
	assert_resolves("alice", NULL, "T", "Top", "{\"src\":\"top\",\"z\":1}");
	assert_resolves(NULL, NULL, "T", "Both", "{\"src\":\"top\"}");
	/* An endpoint with an empty presetSamplers block is not a donor. */
	assert_resolves("alice", NULL, "T", "Empty", "{\"src\":\"file\"}");
	ck_assert_ptr_null(resolve("alice", NULL, "T", "None", err));
	snprintf(want, sizeof(want), "Presets/PT/None.json: no such preset "
	    "'None' (looked in %s/Presets/PT/mine/None.json and "
	    "%s/Presets/PT/None.json)", tmpdir, tmpdir);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(resolve(NULL, NULL, "T", "None", err));
	ck_assert_ptr_nonnull(strstr(err, "Presets/PT/None.json: no such "
	    "preset 'None' (looked in "));
	ck_assert_ptr_null(resolve("alice", NULL, "T", "List", err));
	ck_assert_ptr_nonnull(strstr(err, "Presets/PT/List.json:1:1: a preset "
	    "must be a JSON object, not a list"));
	ck_assert_ptr_null(resolve("alice", NULL, "NoPT", "Top", err));
	ck_assert_str_eq(err, "ApiTypes/NoPT.json: no 'presetType', so preset "
	    "'Top' cannot be loaded");
	ck_assert_ptr_null(resolve("alice", NULL, "T", "../Top", err));
	ck_assert_ptr_nonnull(strstr(err, "refusing unsafe"));
	ck_assert_ptr_null(resolve("alice", NULL, "T", "", err));
	ck_assert_str_eq(err, "no preset name given");
	ck_assert_ptr_null(resolve("alice", NULL, "T", "BadPS", err));
	ck_assert_ptr_nonnull(strstr(err, "BadPS.json:1:2: 'presetSamplers' "
	    "must be an object, not a string"));
}
END_TEST

/* Presets come back as written; the emission pass is separate (it runs
 * after max-tokens and context injection, which a null stops). */
START_TEST(test_preset_nulls)
{
	char	 err[CONF_ERRLEN], *s;
	json_t	*raw, *norm;

	preset_tree();
	assert_resolves_raw("alice", NULL, "T", "Nulls", "{\"a\":null,"
	    "\"b\":\"__wilmer_null__\",\"c\":{\"d\":null},\"e\":{\"f\":"
	    "null,\"g\":1},\"json_schema\":{\"default\":null},\"stop\":"
	    "[null,\"__wilmer_null__\"],\"z\":0,\"grammar\":{\"x\":null}}");
	raw = resolve("alice", NULL, "T", "Nulls", err);
	ck_assert_ptr_nonnull(raw);
	norm = conf_gen_normalize(raw);
	s = json_dumps(norm, JSON_COMPACT);
	ck_assert_str_eq(s, "{\"b\":null,\"e\":{\"g\":1},\"json_schema\":"
	    "{\"default\":null},\"stop\":[null,\"__wilmer_null__\"],\"z\":0,"
	    "\"grammar\":{\"x\":null}}");
	free(s);
	json_decref(norm);
	json_decref(raw);
}
END_TEST

START_TEST(test_preset_translate)
{
	preset_tree();
	/* Mapped keys renamed in order, min_p (unsupported) and bogus
	 * dropped, top_k null dropped, thinking off under the kwargs the
	 * user's own chat_template_kwargs then override. */
	assert_resolves("alice", NULL, "T", "Donor", "{\"temp\":0.5,"
	    "\"stop_seq\":[\"a\"],\"chat_template_kwargs\":"
	    "{\"enable_thinking\":true,\"budget\":5}}");
	/* The consumer's api type decides: no kwargs, effort off = none. */
	assert_resolves("alice", NULL, "E", "Donor", "{\"temperature\":0.5}");
	assert_resolves("alice", NULL, "E", "Donor2",
	    "{\"temperature\":1,\"reasoning_effort\":\"high\"}");
	assert_resolves("alice", NULL, "T", "Donor2",
	    "{\"temp\":1,\"chat_template_kwargs\":{\"enable_thinking\":true}}");
	/* appendPresetName: native overrides, deep-merged, then cleaned. */
	assert_resolves("alice", "Main", "T", "Donor", "{\"temp\":0.9,"
	    "\"stop_seq\":[\"a\"],\"chat_template_kwargs\":"
	    "{\"enable_thinking\":true,\"x\":1},\"new\":true}");
}
END_TEST

/* ---- WilmerAI's shipped configs ------------------------------------- */

/* The shipped example config folder, or NULL when it is not there. */
static const char *
shipped_root(char out[PATH_MAX])
{
	const char	*src = getenv("SLUICE_SRC");
	struct stat	 st;

	if (src != NULL) {
		snprintf(out, PATH_MAX, "%s/../shared/reference/wilmer-configs",
		    src);
		if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
			return out;
	}
	snprintf(out, PATH_MAX, "/work/shared/reference/wilmer-configs");
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return out;
	printf("check_conf: WilmerAI's shipped configs not found (SLUICE_SRC"
	    "=%s); skipping\n", src != NULL ? src : "unset");
	return NULL;
}

struct walk {
	const char	*w_root;	/* shipped config folder */
	const char	*w_kind;	/* "Users", "Endpoints", ... */
	struct buf	 w_fail;
	int		 w_nfail;
	int		 w_nok;
	int		 w_nlink;
};

/* A config folder whose <kind>/ is the shipped <kind>/<sub>/, for the
 * loaders that take no sub-folder (users and api types). */
static char *
shadow_confdir(struct walk *w, const char *sub)
{
	char	*dir, *link, *target;

	if (*sub == '\0')
		return xstrdup(w->w_root);
	dir = xasprintf("%s/shadow%d", tmpdir, w->w_nlink++);
	link = xasprintf("%s/%s", dir, w->w_kind);
	target = xasprintf("%s/%s/%s", w->w_root, w->w_kind, sub);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(symlink(target, link), 0);
	free(target);
	free(link);
	return dir;
}

/* Workflow folders also hold settings files (memory settings, for one):
 * an object without "nodes" is not a workflow. Returns the reason to
 * skip, or NULL. */
static const char *
not_a_workflow(struct walk *w, const char *sub, const char *name)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN], *path;
	const char	*why = NULL;

	path = xasprintf("%s/Workflows/%s/%s.json", w->w_root, sub, name);
	if (jfile_load(path, &jf, err) == 0 && json_is_object(jf.jf_root) &&
	    json_object_get(jf.jf_root, "nodes") == NULL)
		why = "an object without \"nodes\": a settings file (e.g. "
		    "memory settings), not a workflow";
	jfile_free(&jf);
	free(path);
	return why;
}

/* A preset file Presets/<sub>/<name>.json, through the preset loader
 * with an api type whose presetType is sub (folders included). */
static int
shipped_preset(struct walk *w, const char *sub, const char *name,
    char err[CONF_ERRLEN])
{
	struct conf_apitype	 at;
	char			 aname[] = "shipped-walk";
	json_t			*out = NULL;
	int			 rc;

	memset(&at, 0, sizeof(at));
	at.a_name = aname;
	at.a_preset_type = sub;
	at.a_stream_prop = "stream";
	rc = conf_preset_resolve(w->w_root, NULL, &at, name, &out, err);
	if (rc == 0 && !json_is_object(out)) {
		snprintf(err, CONF_ERRLEN, "Presets/%s/%s.json: not an object",
		    sub, name);
		rc = -1;
	}
	json_decref(out);
	return rc;
}

/* Routing and PromptTemplates files, through their loaders (with a
 * shadow folder for a sub-folder, as they take no sub-folder). */
static int
shipped_other(struct walk *w, const char *sub, const char *name,
    char err[CONF_ERRLEN])
{
	struct jfile	 jf;
	char		*cd = shadow_confdir(w, sub);
	int		 rc;

	if (strcmp(w->w_kind, "Routing") == 0) {
		if ((rc = conf_routing_load(cd, name, &jf, err)) == 0)
			jfile_free(&jf);
	} else
		rc = conf_template_check(cd, name, err);
	free(cd);
	return rc;
}

/* Load one shipped file with its loader: 0, -1 with err, or 1 with
 * *why when the file is not that kind of config. */
static int
shipped_load(struct walk *w, const char *sub, const char *name,
    const char **why, char err[CONF_ERRLEN])
{
	struct conf_user	*u;
	struct conf_endpoint	*e;
	struct conf_apitype	*a;
	struct conf_workflow	*wf;
	char			*cd;
	int			 rc;

	if (strcmp(w->w_kind, "Presets") == 0)
		return shipped_preset(w, sub, name, err);
	if (strcmp(w->w_kind, "Routing") == 0 ||
	    strcmp(w->w_kind, "PromptTemplates") == 0)
		return shipped_other(w, sub, name, err);

	if (strcmp(w->w_kind, "Users") == 0 &&
	    strcmp(name, "_current-user") == 0) {
		*why = "the legacy current-user pointer, not a user config";
		return 1;
	}
	if (strcmp(w->w_kind, "Workflows") == 0 &&
	    (*why = not_a_workflow(w, sub, name)) != NULL)
		return 1;
	if (strcmp(w->w_kind, "Endpoints") == 0) {
		rc = conf_endpoint_load(w->w_root, sub, name, &e, err);
		conf_endpoint_free(e);
		return rc;
	}
	if (strcmp(w->w_kind, "Workflows") == 0) {
		rc = conf_workflow_load(w->w_root, sub, name, &wf, err);
		conf_workflow_free(wf);
		return rc;
	}
	cd = shadow_confdir(w, sub);
	if (strcmp(w->w_kind, "Users") == 0) {
		rc = conf_user_load(cd, name, &u, err);
		conf_user_free(u);
	} else {
		rc = conf_apitype_load(cd, name, &a, err);
		conf_apitype_free(a);
	}
	free(cd);
	return rc;
}

static void
shipped_file(struct walk *w, const char *sub, const char *file)
{
	char		 err[CONF_ERRLEN], *name;
	const char	*why = NULL;
	size_t		 n = strlen(file);
	int		 rc;

	if (n < 6 || strcmp(file + n - 5, ".json") != 0) {
		printf("check_conf: skipped %s/%s%s%s: not a .json file\n",
		    w->w_kind, sub, *sub ? "/" : "", file);
		return;
	}
	name = xstrndup(file, n - 5);
	rc = shipped_load(w, sub, name, &why, err);
	if (rc == 1)
		printf("check_conf: skipped %s/%s%s%s: %s\n", w->w_kind, sub,
		    *sub ? "/" : "", file, why);
	else if (rc == 0)
		w->w_nok++;
	else {
		w->w_nfail++;
		buf_printf(&w->w_fail, "  %s\n", err);
	}
	free(name);
}

static void
shipped_dir(struct walk *w, const char *sub)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	char		*dir, *path, *child;

	dir = *sub ? xasprintf("%s/%s/%s", w->w_root, w->w_kind, sub) :
	    xasprintf("%s/%s", w->w_root, w->w_kind);
	ck_assert_msg((d = opendir(dir)) != NULL, "%s: %s", dir,
	    strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			child = *sub ? xasprintf("%s/%s", sub, de->d_name) :
			    xstrdup(de->d_name);
			shipped_dir(w, child);
			free(child);
		} else
			shipped_file(w, sub, de->d_name);
		free(path);
	}
	closedir(d);
	free(dir);
}

START_TEST(test_shipped_all_load)
{
	static const char *const kinds[] = { "Users", "Endpoints", "ApiTypes",
	    "Workflows", "Presets", "Routing", "PromptTemplates" };
	static const int least[] = { 10, 50, 11, 60, 12, 3, 37 };
	struct walk	 w;
	char		 root[PATH_MAX];
	int		 nfail = 0, nok[sizeof(kinds) / sizeof(kinds[0])];
	size_t		 i;

	if (shipped_root(root) == NULL)
		return;
	memset(&w, 0, sizeof(w));
	w.w_root = root;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		w.w_kind = kinds[i];
		w.w_nok = 0;
		shipped_dir(&w, "");
		printf("check_conf: %d shipped %s configs loaded\n", w.w_nok,
		    kinds[i]);
		nok[i] = w.w_nok;
	}
	nfail = w.w_nfail;
	if (nfail > 0)
		fprintf(stderr, "%d shipped configs failed to load:\n%s", nfail,
		    w.w_fail.b_data);
	ck_assert_msg(nfail == 0, "%d shipped configs failed to load:\n%s",
	    nfail, nfail > 0 ? w.w_fail.b_data : "");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		ck_assert_msg(nok[i] >= least[i], "only %d %s loaded", nok[i],
		    kinds[i]);
	buf_free(&w.w_fail);
}
END_TEST

START_TEST(test_shipped_current_user)
{
	char	 root[PATH_MAX], err[CONF_ERRLEN], name[NAME_MAX_LEN + 1];

	if (shipped_root(root) == NULL)
		return;
	ck_assert_msg(conf_current_user(root, name, sizeof(name), err) == 0,
	    "%s", err);
	ck_assert_str_eq(name, "chat-ui");
}
END_TEST

/* Resolve preset for a shipped user's node on endpoint epname, through
 * atname or else the endpoint's own api type. Caller decrefs. */
static json_t *
shipped_resolve(const char *root, const char *uname, const char *epname,
    const char *atname, const char *preset)
{
	struct conf_user	*u;
	struct conf_endpoint	*ep;
	struct conf_apitype	*at;
	char			 err[CONF_ERRLEN];
	json_t			*out, *raw;

	ck_assert_msg(conf_user_load(root, uname, &u, err) == 0, "%s", err);
	ck_assert_msg(conf_endpoint_load(root, u->u_endpoint_subdir, epname,
	    &ep, err) == 0, "%s", err);
	ck_assert_msg(conf_apitype_load(root, atname != NULL ? atname :
	    ep->e_apitype_name, &at, err) == 0, "%s", err);
	ck_assert_msg(conf_preset_resolve_ep(root, u, ep, at, preset, &raw,
	    err) == 0, "%s", err);
	conf_apitype_free(at);
	conf_endpoint_free(ep);
	conf_user_free(u);
	out = conf_gen_normalize(raw);	/* as it is sent */
	json_decref(raw);
	return out;
}

START_TEST(test_shipped_presets)
{
	char	 root[PATH_MAX];
	json_t	*j;

	if (shipped_root(root) == NULL)
		return;
	/* The preset names an endpoint with presetSamplers (LlamaCppServer
	 * takes chat_template_kwargs)... */
	j = shipped_resolve(root, "_example_assistant_with_vector_memory",
	    "Thinker-Endpoint", NULL, "Thinker-Endpoint");
	assert_json(j, "{\"temperature\":0.6,\"top_p\":0.95,\"min_p\":0,"
	    "\"stop\":[\"<|END_RESPONSE|>\"],\"chat_template_kwargs\":"
	    "{\"thinking_budget\":16384}}");
	json_decref(j);
	/* ...and borrowed by a KoboldCpp node, which renames stop and takes
	 * no chat_template_kwargs. */
	j = shipped_resolve(root, "_example_assistant_with_vector_memory",
	    "Thinker-Endpoint", "KoboldCpp", "Thinker-Endpoint");
	assert_json(j, "{\"temperature\":0.6,\"top_p\":0.95,\"min_p\":0,"
	    "\"stop_sequence\":[\"<|END_RESPONSE|>\"]}");
	json_decref(j);
	/* Translated samplers plus the appendPresetName file found in the
	 * user's preset sub-folder Presets/KoboldCpp/_example_users/. */
	j = shipped_resolve(root, "_example_assistant_with_vector_memory",
	    "Vision-Endpoint", NULL, "Vision-Endpoint");
	ck_assert(json_real_value(json_object_get(j, "rep_pen")) == 1.1);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
	    "rep_pen_range")), 1024);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "stop_sequence")),
	    7);
	ck_assert_ptr_null(json_object_get(j, "repeat_penalty"));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "sampler_order")),
	    7);
	ck_assert(json_is_array(json_object_get(j, "images")));
	json_decref(j);
	/* A file preset found by the fallback (chat-ui's preset folder is
	 * _shared, which ClaudeMessages lacks); its "top_k": null drops. */
	j = shipped_resolve(root, "chat-ui", "General-Endpoint", "Claude",
	    "_Available_Presets");
	assert_json(j, "{\"temperature\":0.5,\"top_p\":1.0,"
	    "\"stop_sequences\":[],\"metadata\":{\"user_id\":"
	    "\"client-id-12345\",\"session_id\":\"session-xyz-67890\","
	    "\"request_type\":\"financial_chart_analysis\"},\"tool_choice\":"
	    "{\"type\":\"auto\"},\"thinking\":{\"type\":\"disabled\","
	    "\"budget_tokens\":4096}}");
	json_decref(j);
}
END_TEST

/* ---- suite ---------------------------------------------------------- */

static void
add_case(Suite *s, const char *name, const TTest *const *tests, size_t n)
{
	TCase	*tc = tcase_create(name);
	size_t	 i;

	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_set_timeout(tc, 30);
	for (i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
}

#define ADD_CASE(s, name, ...) do {					\
	const TTest *const t_[] = { __VA_ARGS__ };			\
	add_case((s), (name), t_, sizeof(t_) / sizeof(t_[0]));		\
} while (0)

static Suite *
conf_suite(void)
{
	Suite	*s = suite_create("conf");

	ADD_CASE(s, "names", test_names_safe, test_unsafe_refused);
	ADD_CASE(s, "escape", test_escape_basic, test_escape_utf8,
	    test_escape_roundtrip);
	ADD_CASE(s, "jfile", test_syntax_pos, test_load_errors, test_keypos,
	    test_duplicate_key_pos);
	ADD_CASE(s, "getters", test_getters, test_strlist);
	ADD_CASE(s, "user", test_user_load, test_user_errors,
	    test_current_user);
	ADD_CASE(s, "endpoint", test_endpoint_load, test_endpoint_errors);
	ADD_CASE(s, "apitype", test_apitype_load, test_apitype_errors);
	ADD_CASE(s, "workflow", test_workflow_forms, test_workflow_errors,
	    test_shared_workflows, test_shared_links);
	ADD_CASE(s, "jcache", test_jfile_cache);
	ADD_CASE(s, "jcache_copies", test_jfile_cache_copies);
	ADD_CASE(s, "preset", test_preset_file, test_preset_nulls,
	    test_preset_translate);
	ADD_CASE(s, "shipped", test_shipped_all_load,
	    test_shipped_current_user, test_shipped_presets);
	return s;
}

int
main(void)
{
	return check_main(conf_suite());
}
