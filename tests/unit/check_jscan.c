/* check_jscan.c - the validating JSON scanner against jansson: the same texts accepted with the same values, hostile ones refused. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/jscan.h"
#include "../jscan_tree.h"
#include "../testmain.h"

/* jscan and jansson agree on p[0..n): both refuse it, or both accept
 * it with equal values. Returns whether it was accepted. */
static int
agree(const char *p, size_t n, const char *what)
{
	json_t	*a = jscan_tree(p, n);
	json_t	*b = json_loadb(p, n, JSON_DECODE_ANY, NULL);
	int	 ok = a != NULL;

	ck_assert_msg((a == NULL) == (b == NULL), "%s: jscan %s, jansson %s",
	    what, a ? "accepts" : "refuses", b ? "accepts" : "refuses");
	if (a != NULL)
		ck_assert_msg(json_equal(a, b), "%s: values differ", what);
	json_decref(a);
	json_decref(b);
	return ok;
}

static int
agree_s(const char *s)
{
	return agree(s, strlen(s), s);
}

START_TEST(accepts_what_jansson_accepts)
{
	static const char *const ok[] = {
		"{}", "[]", " { } ", "\t[\r\n]\n", "0", "-0", "1", "-1",
		"9223372036854775807", "-9223372036854775808", "1.5",
		"-0.0e+00", "1E5", "1e-5", "123.456e78", "true", "false",
		"null", "\"\"", "\"a\"",
		"{\"a\": 1, \"b\": [true, false, null, {\"c\": \"d\"}]}",
		"[[[[[]]]], {}, \"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]",
		"\"\\u00e9\\u20AC\\ud83d\\ude00\\uFFFF\"",
		"\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"",
		"{\"a\": 1, \"a\": 2}",		/* the last wins */
		"{\"k\\u0065y\": \"v\"}", "\"\x7f\"",
	};
	size_t	 i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		ck_assert_msg(agree_s(ok[i]), "refused: %s", ok[i]);
}
END_TEST

START_TEST(refuses_what_jansson_refuses)
{
	static const char *const bad[] = {
		"", " ", "{", "}", "[", "]", "{]", "[}", "[1,]", "{\"a\":1,}",
		"[,1]", "{,}", "{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{1: 2}",
		"{\"a\":1 \"b\":2}", "[1 2]", "01", "-01", "1.", ".5", "+1",
		"-", "1e", "1e+", "1.e5", "0x10", "1ee5", "--1",
		"9223372036854775808", "-9223372036854775809",
		"123456789012345678901234567890", "1e400", "-1e400",
		"tru", "nul", "fals", "truex", "True", "NULL", "nan", "inf",
		"[true false]", "{} {}", "[] x", "\"a\" \"b\"",
		"\"", "\"abc", "\"\\", "\"\\\"", "\"\\x\"", "\"\\u12\"",
		"\"\\u12G4\"", "\"\\uZZZZ\"", "\"\\U0041\"", "\"\\'\"",
		"\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
		"\"\\ud800x\"", "\"\\ud800\\ud800\"", "\"\\udfff\\ud800\"",
		"\"\\u0000\"", "{\"\\u0000\": 1}", "\"a\\u0000b\"",
		"\"\t\"", "\"\n\"", "\"\x01\"", "\"\x1f\"",
		"\"\xc0\x80\"", "\"\xc1\xbf\"", "\"\xe0\x80\x80\"",
		"\"\xe0\x9f\xbf\"", "\"\xed\xa0\x80\"", "\"\xed\xbf\xbf\"",
		"\"\xf0\x80\x80\x80\"", "\"\xf0\x8f\xbf\xbf\"",
		"\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"", "\"\xff\"",
		"\"\x80\"", "\"\xbf\"", "\"\xc3\"", "\"\xe2\x82\"",
		"\"\xf0\x9f\x98\"", "\"\xc3\x28\"", "\xef\xbb\xbf{}",
		"{\"a\":1}\x01", "[1]\xc3\xa9", "/* */ {}", "{} // x",
	};
	size_t	 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!agree_s(bad[i]), "accepted: %s", bad[i]);
	/* a NUL byte is a byte like another: refused in and out of strings */
	ck_assert(!agree("\"a\0b\"", 5, "NUL in a string"));
	ck_assert(!agree("[1]\0", 4, "NUL after the value"));
}
END_TEST

/* Every cut of a valid text is refused, as jansson refuses it. */
START_TEST(truncation_refused)
{
	const char	*doc = "{\"messages\": [{\"role\": \"user\", \"content\": "
			    "\"h\\u00e9\\ud83d\\ude00 \xe2\x82\xac\"}, {\"n\": "
			    "-12.5e-3, \"t\": [true, false, null]}]}";
	size_t		 n;

	for (n = 0; n < strlen(doc); n++)
		ck_assert_msg(!agree(doc, n, "cut"), "accepted a cut at %zu",
		    n);
	ck_assert(agree_s(doc));
}
END_TEST

/* Two bytes in a string, every pair, and three for the lead bytes at
 * the edges of UTF-8's ranges: jscan's UTF-8 check is jansson's. */
START_TEST(utf8_exhaustive)
{
	static const unsigned char leads[] = { 0xe0, 0xe1, 0xed, 0xee, 0xef,
	    0xf0, 0xf4 };
	char	 s[8];
	size_t	 i;
	int	 a, b;

	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++) {
			snprintf(s, sizeof(s), "\"%c%c\"", a, b);
			s[1] = (char)a;
			s[2] = (char)b;
			agree(s, 4, "two bytes");
		}
	for (i = 0; i < sizeof(leads); i++)
		for (a = 0x70; a < 0xd0; a++)
			for (b = 0x70; b < 0xd0; b++) {
				s[0] = '"';
				s[1] = (char)leads[i];
				s[2] = (char)a;
				s[3] = (char)b;
				s[4] = leads[i] >= 0xf0 ? (char)0x80 : '"';
				s[5] = '"';
				agree(s, leads[i] >= 0xf0 ? 6 : 5, "three bytes");
			}
}
END_TEST

/* Strings are read eight bytes a step: a special byte at each place of
 * a long string, alone or at the end of a word, is seen where it is. */
START_TEST(long_strings_every_position)
{
	static const char *const special[] = { "\"", "\\n", "\\u00e9", "\x01",
	    "\x1f", "\x7f", "\x80", "\xc3\xa9", "\xc3", "\xe2\x82\xac",
	    "\xed\xa0\x80", "\xff", " ", "~", "!", "#", "[", "]", "\x5d",
	    "\x5b" };
	char		 s[64];
	size_t		 i, at, n;

	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		for (at = 0; at < 26; at++) {
			memset(s, 'a', sizeof(s));
			s[0] = '"';
			n = strlen(special[i]);
			memcpy(s + 1 + at, special[i], n);
			s[40] = '"';
			agree(s, 41, special[i]);
		}
}
END_TEST

/* Every \u escape of the BMP, and the pairs at the surrogates' edges. */
START_TEST(unicode_escapes)
{
	static const unsigned hi[] = { 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff,
	    0xe000 };
	char		 s[32];
	unsigned	 c;
	size_t		 i, j;

	for (c = 0; c <= 0xffff; c++) {
		snprintf(s, sizeof(s), "\"\\u%04x\"", c);
		agree_s(s);
	}
	for (i = 0; i < sizeof(hi) / sizeof(hi[0]); i++)
		for (j = 0; j < sizeof(hi) / sizeof(hi[0]); j++) {
			snprintf(s, sizeof(s), "\"\\u%04X\\u%04x\"", hi[i],
			    hi[j]);
			agree_s(s);
		}
}
END_TEST

/* open depth times, then mid, then close depth times. */
static char *
nested(int depth, const char *open, const char *mid, const char *close)
{
	size_t	 lo = strlen(open), lm = strlen(mid), lc = strlen(close);
	char	*s = malloc((size_t)depth * (lo + lc) + lm + 1), *p = s;
	int	 i;

	for (i = 0; i < depth; i++, p += lo)
		memcpy(p, open, lo);
	memcpy(p, mid, lm);
	p += lm;
	for (i = 0; i < depth; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

/* Nesting is bounded and not recursive: JSCAN_MAX_DEPTH levels read,
 * one more refused (where jansson, to 2048, still reads: the gateway
 * then falls back to it), and a megabyte of '[' costs nothing. */
START_TEST(deep_nesting)
{
	char		*s;
	json_t		*v;
	struct jscan	 js;
	struct jscan_val jv;
	size_t		 n = 1 << 20;

	s = nested(JSCAN_MAX_DEPTH, "[", "", "]");
	ck_assert(agree_s(s));
	free(s);
	s = nested(JSCAN_MAX_DEPTH - 1, "{\"a\":", "{}", "}");
	ck_assert(agree_s(s));
	free(s);
	s = nested(JSCAN_MAX_DEPTH + 1, "[", "", "]");
	ck_assert_ptr_null(jscan_tree(s, strlen(s)));
	ck_assert_ptr_nonnull(v = json_loads(s, 0, NULL));
	json_decref(v);
	free(s);
	s = malloc(n);
	memset(s, '[', n);
	jscan_init(&js, s, n);
	ck_assert_int_eq(jscan_value(&js, &jv), 0);
	ck_assert_int_eq(jscan_skip(&js, &jv), -1);
	jscan_clear(&js);
	free(s);
}
END_TEST

/* Where jscan is stricter than jansson, on purpose. */
START_TEST(stricter_than_jansson)
{
	static const char *const odd[] = {
		"1e-400", "[4.9e-325]",
		"0.00000000000000000000000000000000000000000000000000000000000001",
	};
	size_t	 i;
	json_t	*v;

	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		ck_assert_msg(jscan_tree(odd[i], strlen(odd[i])) == NULL, "%s",
		    odd[i]);
		ck_assert_ptr_nonnull(v = json_loads(odd[i], JSON_DECODE_ANY,
		    NULL));
		json_decref(v);
	}
	/* jansson reads its buffer's NUL as "empty" and passes over one
	 * after a number or a literal */
	ck_assert_ptr_null(jscan_tree("[1\0]", 4));
	ck_assert_ptr_nonnull(v = json_loadb("[1\0]", 4, 0, NULL));
	json_decref(v);
	ck_assert_ptr_null(jscan_tree("[true\0]", 7));
}
END_TEST

/* Strings come out unescaped: a view of the input when they have no
 * escapes, else of the arena; jscan_skip gives a container's whole text
 * and keeps none of its strings. */
START_TEST(values_and_spans)
{
	const char		*doc = " {\"a\\/b\": \"x\\ny\\u00e9\", \"skip\": "
				    "[\"lo\\ng\", {\"k\": \"v\\t\"}], \"n\": -1.5e3, "
				    "\"p\": \"plain\", \"q\": \"\\u0041\"} ";
	const char		*mark;
	struct jscan		 js;
	struct jscan_val	 v;
	struct str		 k;

	jscan_init(&js, doc, strlen(doc));
	ck_assert_int_eq(jscan_value(&js, &v), 0);
	ck_assert_int_eq(v.jv_type, JS_OBJECT);
	ck_assert_int_eq(jscan_element(&js), -1);	/* not an array */
	ck_assert_int_eq(jscan_member(&js, &k), 1);
	ck_assert(str_eq(k, "a/b"));
	ck_assert_int_eq(jscan_value(&js, &v), 0);
	ck_assert_int_eq(v.jv_type, JS_STRING);
	ck_assert(str_eq(v.jv_str, "x\ny\xc3\xa9"));
	mark = v.jv_str.p + v.jv_str.n;		/* the arena's next byte */
	ck_assert_int_eq(jscan_member(&js, &k), 1);
	ck_assert(k.p > doc && k.p < doc + strlen(doc));	/* in place */
	ck_assert_int_eq(jscan_value(&js, &v), 0);
	ck_assert_int_eq(jscan_skip(&js, &v), 0);
	ck_assert_int_eq(v.jv_type, JS_ARRAY);
	ck_assert_uint_eq(v.jv_n, strlen("[\"lo\\ng\", {\"k\": \"v\\t\"}]"));
	ck_assert(memcmp(v.jv_p, "[\"lo", 4) == 0);
	ck_assert_int_eq(jscan_member(&js, &k), 1);
	ck_assert_int_eq(jscan_value(&js, &v), 0);
	ck_assert_int_eq(v.jv_type, JS_REAL);
	ck_assert_uint_eq(v.jv_n, 6);
	ck_assert_int_eq(jscan_member(&js, &k), 1);
	ck_assert_int_eq(jscan_value(&js, &v), 0);
	ck_assert(str_eq(v.jv_str, "plain"));
	ck_assert(v.jv_str.p > doc && v.jv_str.p < doc + strlen(doc));
	ck_assert_int_eq(jscan_member(&js, &k), 1);
	ck_assert_int_eq(jscan_value(&js, &v), 0);
	ck_assert(str_eq(v.jv_str, "A"));
	ck_assert_ptr_eq(v.jv_str.p, mark);	/* the skipped were dropped */
	ck_assert_int_eq(jscan_finish(&js), -1);	/* '}' not read yet */
	ck_assert_int_eq(jscan_member(&js, &k), 0);
	ck_assert_int_eq(jscan_finish(&js), 0);
	ck_assert_uint_eq(jscan_offset(&js), strlen(doc));
	jscan_clear(&js);
}
END_TEST

static Suite *
jscan_suite(void)
{
	Suite	*s = suite_create("jscan");
	TCase	*tc = test_case(s, "jscan", accepts_what_jansson_accepts, 60);

	tcase_add_test(tc, refuses_what_jansson_refuses);
	tcase_add_test(tc, truncation_refused);
	tcase_add_test(tc, utf8_exhaustive);
	tcase_add_test(tc, unicode_escapes);
	tcase_add_test(tc, long_strings_every_position);
	tcase_add_test(tc, deep_nesting);
	tcase_add_test(tc, stricter_than_jansson);
	tcase_add_test(tc, values_and_spans);
	return s;
}

int
main(void)
{
	return check_main(jscan_suite());
}
