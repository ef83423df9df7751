/* check_common.c - buffers, token estimates, safe names, uuids, model selection, base64, paths, made-up tool calls. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/base64.h"
#include "../../common/buf.h"
#include "../../common/clock.h"
#include "../../common/jsonw.h"
#include "../../common/liveness.h"
#include "../../common/log.h"
#include "../../common/modelsel.h"
#include "../../common/names.h"
#include "../../common/paths.h"
#include "../../common/textchunk.h"
#include "../../common/toolcall.h"
#include "../../common/tokens.h"
#include "../../common/utf8.h"
#include "../../common/uuid.h"
#include "../testmain.h"

START_TEST(buf_grows_and_stays_terminated)
{
	struct buf	 b = BUF_INIT;
	char		*s;
	int		 i;

	for (i = 0; i < 1000; i++)
		buf_addc(&b, 'a' + i % 26);
	ck_assert_uint_eq(b.b_len, 1000);
	ck_assert_uint_eq(strlen(b.b_data), 1000);
	buf_printf(&b, "%d-%s", 42, "x");
	ck_assert_str_eq(b.b_data + 1000, "42-x");
	buf_drain(&b, 1000);
	ck_assert_str_eq(b.b_data, "42-x");
	buf_drain(&b, 99);
	ck_assert_uint_eq(b.b_len, 0);
	ck_assert_str_eq(b.b_data, "");
	buf_adds(&b, "kept");
	s = buf_take(&b);
	ck_assert_str_eq(s, "kept");
	ck_assert_ptr_null(b.b_data);
	free(s);
	s = buf_take(&b);		/* empty buffer: empty string */
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

/* A buffer that only reserved is "" too: http_fuzz found a CONNECT
 * request's body (reserved for its Content-Length, never read) was
 * handed out unterminated. Dirty blocks of the same size first, so the
 * reserve is likely to get one back. */
START_TEST(buf_reserve_terminates)
{
	struct buf	 b = BUF_INIT;
	char		*p[4], *s;
	int		 i;

	for (i = 0; i < 4; i++) {
		p[i] = malloc(64);
		ck_assert_ptr_nonnull(p[i]);
		memset(p[i], 'x', 64);
	}
	for (i = 0; i < 4; i++)
		free(p[i]);
	buf_reserve(&b, 10);
	ck_assert_ptr_nonnull(b.b_data);
	ck_assert_uint_eq(b.b_len, 0);
	ck_assert_int_eq(b.b_data[0], '\0');
	s = buf_take(&b);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(str_views)
{
	struct str	 s = { "Hello, world", 5 };
	char		*d;

	ck_assert(str_eq(s, "Hello"));
	ck_assert(!str_eq(s, "Hello,"));
	ck_assert(str_eqi(s, "hELLO"));
	ck_assert(!str_eq(STR_NULL, ""));
	d = str_dup(s);
	ck_assert_str_eq(d, "Hello");
	free(d);
	d = str_dup(STR_NULL);
	ck_assert_str_eq(d, "");
	free(d);
}
END_TEST

/* Behaviour case 36 of the WilmerAI spec. */
START_TEST(token_estimates_match_wilmer)
{
	static const struct { const char *t; long want; } c[] = {
		{ "Hello world", 3 }, { "a b c d e", 7 },
		{ "antidisestablishmentarianism", 8 }, { "", 0 }, { "  ", 0 },
		{ "\xe3\x81\x93\xe3\x82\x93\xe3\x81\xab\xe3\x81\xa1\xe3\x81\xaf"
		  "\xe4\xb8\x96\xe7\x95\x8c", 2 },
		{ "one two three four five", 7 },
	};
	size_t	 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		ck_assert_msg(tokens_estimate(c[i].t, strlen(c[i].t),
		    TOKENS_MARGIN) == c[i].want, "'%s': %ld, want %ld", c[i].t,
		    tokens_estimate(c[i].t, strlen(c[i].t), TOKENS_MARGIN),
		    c[i].want);
	ck_assert_int_eq(tokens_estimate("one two three four five", 23, 1.0), 6);
	ck_assert_int_eq(tokens_estimate("one two three four five", 23, 2.0),
	    13);
	/* Unicode whitespace separates words like Python's split(). */
	ck_assert_int_eq(tokens_estimate("a\xe3\x80\x80" "b", 5, 1.0), 2);
}
END_TEST

/* Spec 9 cases 37-40: WilmerAI's chunking for memories. */
START_TEST(chunking_matches_wilmer)
{
	const char	*three[] = { "aaaaaaaaaaaaaa", "bbbbbbbbbbbbbb",
			    "cccccccccccccc" };
	char		 m6[64], m11[64], m13[64], m19[64];
	const char	*four[] = { m6, m11, m13, m19 };
	struct text_chunk *c;
	size_t		 n;
	char		**v, *s;

	c = text_chunk_messages(three, 3, 10, &n);	/* case 37 */
	ck_assert_uint_eq(n, 2);
	ck_assert(c[0].tc_first == 0 && c[0].tc_count == 1);
	ck_assert(c[1].tc_first == 1 && c[1].tc_count == 2);
	free(c);
	/* Texts whose estimates are 6, 11, 13 and 19 (case 38). */
	memset(m6, 'x', 20);
	m6[20] = '\0';
	memset(m11, 'x', 36);
	m11[36] = '\0';
	memset(m13, 'x', 42);
	m13[42] = '\0';
	memset(m19, 'x', 61);
	m19[61] = '\0';
	ck_assert_int_eq(tokens_estimate(m6, 20, TOKENS_MARGIN), 6);
	ck_assert_int_eq(tokens_estimate(m11, 36, TOKENS_MARGIN), 11);
	ck_assert_int_eq(tokens_estimate(m13, 42, TOKENS_MARGIN), 13);
	ck_assert_int_eq(tokens_estimate(m19, 61, TOKENS_MARGIN), 19);
	c = text_chunk_messages(four, 4, 20, &n);
	ck_assert_uint_eq(n, 4);
	free(c);
	c = text_chunk_messages(four, 4, 100, &n);
	ck_assert(n == 1 && c[0].tc_first == 0 && c[0].tc_count == 4);
	free(c);
	ck_assert_ptr_null(text_chunk_messages(four, 0, 100, &n));
	v = text_split_words("one two three four five six", 4);	/* 39 */
	ck_assert_str_eq(v[0], "one two three four");
	ck_assert_str_eq(v[1], "five six");
	ck_assert_ptr_null(v[2]);
	text_chunks_free(v);
	v = text_split_words("a b", 2);
	ck_assert(strcmp(v[0], "a b") == 0 && v[1] == NULL);
	text_chunks_free(v);
	v = text_split_words("a b c", 2);
	ck_assert(strcmp(v[1], "c") == 0 && v[2] == NULL);
	text_chunks_free(v);
	s = text_last_words("one two three four five", 4);	/* 40 */
	ck_assert_str_eq(s, "two three four five");
	free(s);
	s = text_last_words("one two three four five", 0);
	ck_assert_str_eq(s, "");
	free(s);
	s = text_last_words("one  two three four five", 100);
	ck_assert_str_eq(s, "one  two three four five");
	free(s);
}
END_TEST

START_TEST(names_safety)
{
	static const char *good[] = { "general", "my-flow_2", "a.b", "x" };
	static const char *bad[] = { "", ".", "..", ".hidden", "a/b", "a\\b",
	    "../etc", "tab\there" };
	size_t	 i;
	char	 nul[] = { 'a', '\0', 'b' };
	char	 longname[200];

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(name_is_safe(good[i], strlen(good[i])), "%s",
		    good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!name_is_safe(bad[i], strlen(bad[i])), "%s",
		    bad[i]);
	ck_assert(!name_is_safe(nul, sizeof(nul)));
	memset(longname, 'a', sizeof(longname));
	ck_assert(!name_is_safe(longname, sizeof(longname)));
}
END_TEST

/* Nanoseconds: never back, finer than milliseconds (Ollama's durations
 * of a sub-millisecond answer are not 0), and the same clock. */
START_TEST(mono_ns)
{
	uint64_t	 a = clock_mono_ns(), b = clock_mono_ns();
	uint64_t	 ms = clock_mono_ms(), c = clock_mono_ns();

	ck_assert_uint_ge(b, a);
	ck_assert_uint_lt(b - a, 1000000);
	ck_assert_uint_ge(c / 1000000 + 1, ms);
	ck_assert_uint_le(a / 1000000, ms);
	ck_assert_uint_ne(a % 1000000 + b % 1000000 + c % 1000000, 0);
}
END_TEST

START_TEST(uuids_are_v4_and_distinct)
{
	char	 a[UUID_BUFLEN], b[UUID_BUFLEN], h[33];

	uuid_new(a);
	uuid_new(b);
	ck_assert_uint_eq(strlen(a), 36);
	ck_assert_int_eq(a[14], '4');
	ck_assert(strchr("89ab", a[19]) != NULL);
	ck_assert_int_eq(a[8], '-');
	ck_assert_str_ne(a, b);
	uuid_new_hex(h);
	ck_assert_uint_eq(strlen(h), 32);
	ck_assert_uint_eq(strspn(h, "0123456789abcdef"), 32);
}
END_TEST

/* Ids come from a pool of random bytes: across its refills they stay
 * distinct, and a forked child does not draw its parent's next ones. */
START_TEST(uuids_distinct_across_the_pool_and_fork)
{
	char	 ids[40][UUID_BUFLEN], child[UUID_BUFLEN], mine[UUID_BUFLEN];
	int	 fd[2], i, j, st;
	pid_t	 pid;

	for (i = 0; i < 40; i++) {
		uuid_new(ids[i]);
		ck_assert_uint_eq(strspn(ids[i], "0123456789abcdef-"), 36);
		for (j = 0; j < i; j++)
			ck_assert_str_ne(ids[i], ids[j]);
	}
	ck_assert_int_eq(pipe(fd), 0);
	if ((pid = fork()) == 0) {
		uuid_new(child);
		_exit(write(fd[1], child, sizeof(child)) == sizeof(child) ? 0 :
		    1);
	}
	ck_assert_int_eq((int)read(fd[0], child, sizeof(child)),
	    (int)sizeof(child));
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	uuid_new(mine);
	ck_assert_str_ne(mine, child);
	close(fd[0]);
	close(fd[1]);
}
END_TEST

/* Expected bytes produced by CPython 3.11's json.dumps for the same value. */
START_TEST(jsonw_matches_python)
{
	static const char *want = "{\"a\": [0.7, 1.0, 1e-05, 1e+16, "
	    "1000000000000000.0, 123.456, -0.0, 0.30000000000000004, 0.0001, "
	    "5e-324, 1.7976931348623157e+308, 2.5e-07, 100.0], \"\\u00e9\": "
	    "\"x\\ud83d\\ude00\\n\\u0001\", \"b\": null, \"c\": true, "
	    "\"i\": 12}";
	json_t	*v = json_pack("{s:[f,f,f,f,f,f,f,f,f,f,f,f,f],s:s,s:n,s:b,s:i}",
		    "a", 0.7, 1.0, 1e-05, 1e16, 1e15, 123.456, -0.0, 0.1 + 0.2,
		    1e-4, 5e-324, 1.7976931348623157e308, 2.5e-7, 100.0,
		    "\xc3\xa9", "x\xf0\x9f\x98\x80\n\x01", "b", "c", 1, "i", 12);
	char	*s = jsonw_dumps(v, JSONW_PYTHON);

	ck_assert_str_eq(s, want);
	free(s);
	s = jsonw_dumps(json_array_get(json_object_get(v, "a"), 0),
	    JSONW_COMPACT);
	ck_assert_str_eq(s, "0.7");
	free(s);
	s = jsonw_dumps(json_object_get(v, "\xc3\xa9"), JSONW_COMPACT);
	ck_assert_str_eq(s, "\"x\xf0\x9f\x98\x80\\n\\u0001\"");
	free(s);
	json_decref(v);
	/* ensure_ascii escapes DEL too; without it DEL stays as it is */
	v = json_string("del\x7f");
	s = jsonw_dumps(v, JSONW_PYTHON);
	ck_assert_str_eq(s, "\"del\\u007f\"");
	free(s);
	s = jsonw_dumps(v, JSONW_COMPACT);
	ck_assert_str_eq(s, "\"del\x7f\"");
	free(s);
	json_decref(v);
}
END_TEST

/* json.dumps(v, indent=4) of CPython 3.11, WilmerAI's discussion files:
 * nested containers, empty ones on one line, ensure_ascii. */
START_TEST(jsonw_pyfile_matches_python)
{
	static const char *want = "[\n    {\n        \"text_block\": "
	    "\"caf\\u00e9 \\\"q\\\"\\n\\ud83d\\ude42\",\n        \"hash\": "
	    "\"ab\"\n    },\n    {\n        \"a\": [],\n        \"b\": {},\n"
	    "        \"c\": [\n            1,\n            2.5,\n            "
	    "null,\n            true\n        ]\n    }\n]";
	json_t	*v = json_pack("[{s:s,s:s},{s:[],s:{},s:[i,f,n,b]}]",
		    "text_block", "caf\xc3\xa9 \"q\"\n\xf0\x9f\x99\x82", "hash",
		    "ab", "a", "b", "c", 1, 2.5, 1);
	char	*s = jsonw_dumps(v, JSONW_PYFILE);

	ck_assert_str_eq(s, want);
	free(s);
	json_decref(v);
	v = json_array();
	s = jsonw_dumps(v, JSONW_PYFILE);
	ck_assert_str_eq(s, "[]");
	free(s);
	json_decref(v);
}
END_TEST

/* utf8_repair is Python's bytes.decode('utf-8', 'replace'). */
START_TEST(utf8_repair_matches_python)
{
	static const struct { const char *in; size_t n; const char *want; }
	    t[] = {
		{ "a\xff" "b", 3, "a\xef\xbf\xbd" "b" },
		{ "\xe2\x82", 2, "\xef\xbf\xbd" },
		{ "\xe2\x82\xac", 3, "\xe2\x82\xac" },
		{ "\xed\xa0\x80x", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx" },
		{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },
		{ "\xf0\x9f\x98", 3, "\xef\xbf\xbd" },
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
		    "\xef\xbf\xbd" },
	};
	struct buf	 b = BUF_INIT;
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		buf_reset(&b);
		utf8_repair(&b, t[i].in, t[i].n);
		ck_assert_msg(b.b_len == strlen(t[i].want) &&
		    memcmp(b.b_data, t[i].want, b.b_len) == 0, "case %zu", i);
	}
	buf_reset(&b);
	utf8_repair(&b, "ok\0z", 4);
	ck_assert(b.b_len == 4 && memcmp(b.b_data, "ok\0z", 4) == 0);
	buf_free(&b);
}
END_TEST

START_TEST(model_field_names)
{
	char	*e;

	ck_assert(modelsel_traversal(".."));
	ck_assert(modelsel_traversal("bob:.."));
	ck_assert(modelsel_traversal("a/./b"));
	ck_assert(modelsel_traversal("a\\..\\b"));
	ck_assert(!modelsel_traversal("general"));
	ck_assert(!modelsel_traversal("org/model:8b...q4"));
	ck_assert(!modelsel_traversal(""));
	ck_assert(!modelsel_traversal(NULL));
	e = modelsel_echo("bob", "general");
	ck_assert_str_eq(e, "bob:general");
	free(e);
	e = modelsel_echo("bob", NULL);
	ck_assert_str_eq(e, "bob");
	free(e);
}
END_TEST

START_TEST(base64_as_go_reads_it)
{
	static const char *good[] = { "QUJD", "QUI=", "QQ==", "+/+/",
	    "QUJD\nREVG", "QUJD\r\nQQ==" };
	static const char *bad[] = { "", "QUJ", "Q===", "QQ==QUJD", "QU-D",
	    "QU_D", "data:image/png;base64,QUJD", "QUJD ", "http://x/a.png" };
	size_t	 i;

	ck_assert_int_eq(base64_digit('A'), 0);
	ck_assert_int_eq(base64_digit('z'), 51);
	ck_assert_int_eq(base64_digit('9'), 61);
	ck_assert_int_eq(base64_digit('/'), 63);
	ck_assert_int_eq(base64_digit('='), -1);
	ck_assert_int_eq(base64_digit('\0'), -1);
	ck_assert_int_eq(base64_digit(0xc3), -1);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(base64_valid(good[i], strlen(good[i])), "%s",
		    good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!base64_valid(bad[i], strlen(bad[i])), "%s",
		    bad[i]);
	ck_assert(!base64_valid("QU\0D", 4));
}
END_TEST

/* The standard alphabet where the URL-safe one has '-' and '_'. */
START_TEST(base64_encodes_both_alphabets)
{
	static const unsigned char	 b[] = { 0xfb, 0xff, 0xbf, 'A' };
	struct buf			 s = BUF_INIT, u = BUF_INIT;

	base64_encode(&s, b, 4);
	base64url_encode(&u, b, 4);
	ck_assert_str_eq(s.b_data, "+/+/QQ==");
	ck_assert_str_eq(u.b_data, "-_-_QQ==");
	buf_reset(&s);
	base64_encode(&s, "AB", 2);
	ck_assert_str_eq(s.b_data, "QUI=");
	buf_free(&s);
	buf_free(&u);
}
END_TEST

/* Code points read, written, lower-cased (Python's str.lower(), one
 * code point to one). */
START_TEST(utf8_points_and_lower)
{
	struct buf	 b = BUF_INIT;
	size_t		 len;

	ck_assert_uint_eq(utf8_next("A", 1, &len), 'A');
	ck_assert_uint_eq(len, 1);
	ck_assert_uint_eq(utf8_next("\xc3\xa9", 2, &len), 0xe9);
	ck_assert_uint_eq(len, 2);
	ck_assert_uint_eq(utf8_next("\xf0\x9f\x98\x80", 4, &len), 0x1f600);
	ck_assert_uint_eq(len, 4);
	/* cut short, overlong, a surrogate, a stray continuation byte */
	ck_assert_uint_eq(utf8_next("\xc3\xa9", 1, &len), UTF8_BAD);
	ck_assert_uint_eq(len, 1);
	ck_assert_uint_eq(utf8_next("\xc0\xaf", 2, &len), UTF8_BAD);
	ck_assert_uint_eq(utf8_next("\xed\xa0\x80", 3, &len), UTF8_BAD);
	ck_assert_uint_eq(utf8_next("\x80", 1, &len), UTF8_BAD);
	ck_assert_uint_eq(utf8_next("\xe2\x82", SIZE_MAX, &len), UTF8_BAD);
	utf8_put(&b, 0x1f600);
	utf8_put(&b, 0x20ac);
	ck_assert_str_eq(b.b_data, "\xf0\x9f\x98\x80\xe2\x82\xac");
	buf_reset(&b);
	/* Python: 'Get_Weather \xc0\xc9 \u03a3 \xff'.lower() */
	utf8_lower(&b, "Get_Weather \xc3\x80\xc3\x89 \xce\xa3 \xff", 21);
	ck_assert_str_eq(b.b_data, "get_weather \xc3\xa0\xc3\xa9 \xcf\x83 \xff");
	ck_assert_uint_eq(b.b_len, 21);
	ck_assert(utf8_isalnum('a') && utf8_isalnum(0xe9) && !utf8_isalnum(' ')
	    && !utf8_isalnum('_'));
	buf_free(&b);
}
END_TEST

/* livenessToolCall: which settings turn it on, and the call made. */
START_TEST(liveness_settings_and_call)
{
	static const struct {
		const char	*user;
		int		 want;
		const char	*name, *args;
	} c[] = {
	    { "{}", 0, NULL, NULL },
	    { "{\"livenessToolCall\": false}", 0, NULL, NULL },
	    { "{\"livenessToolCall\": {}}", 0, NULL, NULL },
	    { "{\"livenessToolCall\": \"go\"}", -1, NULL, NULL },
	    { "{\"livenessToolCall\": {\"toolName\": \" \"}}", -1, NULL, NULL },
	    { "{\"livenessToolCall\": {\"toolName\": 5}}", -1, NULL, NULL },
	    { "{\"livenessToolCall\": {\"toolName\": \" go \", "
	      "\"arguments\": [1]}}", 1, "go", "{}" },
	    { "{\"livenessToolCall\": {\"toolName\": \"go\", \"arguments\": "
	      "{\"b\": 1, \"a\": \"\u00e9\"}}}", 1, "go",
	      "{\"b\": 1, \"a\": \"\\u00e9\"}" },
	};
	json_t		*root, *args, *call, *f;
	char		*name;
	const char	*id;
	size_t		 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		root = json_loads(c[i].user, 0, NULL);
		ck_assert_ptr_nonnull(root);
		ck_assert_int_eq(liveness_conf(root, &name, &args), c[i].want);
		if (c[i].want == 1) {
			ck_assert_str_eq(name, c[i].name);
			call = liveness_call(name, args);
			id = json_string_value(json_object_get(call, "id"));
			ck_assert_uint_eq(strlen(id), 24);
			ck_assert(strncmp(id, "wilmer_liveness_", 16) == 0);
			f = json_object_get(call, "function");
			ck_assert_str_eq(json_string_value(json_object_get(f,
			    "name")), c[i].name);
			ck_assert_str_eq(json_string_value(json_object_get(f,
			    "arguments")), c[i].args);
			ck_assert_int_eq(json_integer_value(json_object_get(call,
			    "index")), 0);
			json_decref(call);
		} else
			ck_assert(name == NULL && args == NULL);
		free(name);
		json_decref(args);
		json_decref(root);
	}
}
END_TEST

/* "~" and "~/x" are $HOME; "~user", other paths and an empty $HOME
 * are left as they are. */
START_TEST(paths_expand_home)
{
	static const struct { const char *in, *home, *want; } c[] = {
		{ "~", "/h", "/h" }, { "~/a/b", "/h", "/h/a/b" },
		{ "~bob/x", "/h", "~bob/x" }, { "/abs", "/h", "/abs" },
		{ "rel/~", "/h", "rel/~" }, { "~/a", "", "~/a" },
	};
	char	*got, *old = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	size_t	 i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		setenv("HOME", c[i].home, 1);
		got = paths_expanduser(c[i].in);
		ck_assert_str_eq(got, c[i].want);
		free(got);
	}
	if (old != NULL)
		setenv("HOME", old, 1);
	free(old);
}
END_TEST

/* The folders of a file are made, missing ones only; a file in the
 * way is an error with errno set. */
START_TEST(paths_make_parents_of_a_file)
{
	char	 dir[] = "/tmp/check_common.XXXXXX", p[128];
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/a/b/c/file", dir);
	ck_assert_int_eq(paths_make_parents(p, 0750), 0);
	snprintf(p, sizeof(p), "%s/a/b/c", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	snprintf(p, sizeof(p), "%s/a/b/c/file", dir);
	ck_assert_int_eq(paths_make_parents(p, 0750), 0);	/* again */
	ck_assert_int_eq(paths_make_parents("plain", 0750), 0);
	snprintf(p, sizeof(p), "%s/f", dir);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/f/x/file", dir);
	ck_assert_int_eq(paths_make_parents(p, 0750), -1);
	ck_assert_int_eq(errno, ENOTDIR);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(p), 0);
}
END_TEST

/* A made-up call: its id's prefix and hex, index only when asked for,
 * the arguments as Python's json.dumps writes them. */
START_TEST(toolcall_shape)
{
	json_t		*a = json_pack("{s:s,s:f}", "q", "caf\xc3\xa9", "n", 1.0);
	json_t		*c = toolcall_new(-1, "wilmer-", 32, "find", a);
	const char	*id = json_string_value(json_object_get(c, "id"));
	char		*s;

	ck_assert_ptr_null(json_object_get(c, "index"));
	ck_assert_uint_eq(strlen(id), 39);
	ck_assert_uint_eq(strspn(id + 7, "0123456789abcdef"), 32);
	s = json_dumps(json_object_get(c, "function"), JSON_COMPACT);
	ck_assert_str_eq(s, "{\"name\":\"find\",\"arguments\":\"{\\\"q\\\": "
	    "\\\"caf\\\\u00e9\\\", \\\"n\\\": 1.0}\"}");
	free(s);
	json_decref(c);
	c = toolcall_new(3, "p_", 4, "x", a);
	ck_assert_int_eq(json_integer_value(json_object_get(c, "index")), 3);
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(c, "id"))),
	    6);
	json_decref(c);
	json_decref(a);
}
END_TEST

static Suite *
common_suite(void)
{
	Suite	*s = suite_create("common");
	TCase	*tc;

	tc = tcase_create("buf");
	tcase_add_test(tc, buf_grows_and_stays_terminated);
	tcase_add_test(tc, buf_reserve_terminates);
	tcase_add_test(tc, str_views);
	suite_add_tcase(s, tc);
	tc = tcase_create("jsonw");
	tcase_add_test(tc, jsonw_matches_python);
	tcase_add_test(tc, jsonw_pyfile_matches_python);
	tcase_add_test(tc, utf8_repair_matches_python);
	suite_add_tcase(s, tc);
	tc = tcase_create("tokens");
	tcase_add_test(tc, token_estimates_match_wilmer);
	tcase_add_test(tc, chunking_matches_wilmer);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_add_test(tc, names_safety);
	tcase_add_test(tc, model_field_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("uuid");
	tcase_add_test(tc, mono_ns);
	tcase_add_test(tc, uuids_are_v4_and_distinct);
	tcase_add_test(tc, uuids_distinct_across_the_pool_and_fork);
	suite_add_tcase(s, tc);
	test_case(s, "utf8", utf8_points_and_lower, 0);
	test_case(s, "liveness", liveness_settings_and_call, 0);
	test_case(s, "toolcall", toolcall_shape, 0);
	test_case(s, "paths_home", paths_expand_home, 0);
	test_case(s, "paths_parents", paths_make_parents_of_a_file, 0);
	tc = tcase_create("base64");
	tcase_add_test(tc, base64_as_go_reads_it);
	tcase_add_test(tc, base64_encodes_both_alphabets);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(common_suite());
}
