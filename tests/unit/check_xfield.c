/* check_xfield.c - the fields WebFetch, CurlCommand and MCPToolCall share: WilmerAI's checks and its exact messages (addendum A3.1). */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "../../worker/tools/xfield.h"
#include "../testmain.h"

/* A buffer's text ("" when empty). */
#define S(b)	((b).b_data != NULL ? (b).b_data : "")

/* The JSON text j as a value; NULL for "" (the field is absent). */
static json_t *
val(const char *j)
{
	json_t	*v;

	if (*j == '\0')
		return NULL;
	v = json_loads(j, JSON_DECODE_ANY, NULL);
	ck_assert_msg(v != NULL, "bad JSON %s", j);
	return v;
}

/* xf_timeout of j gives repr want ("" with err: the message). */
static void
ck_timeout(const char *j, const char *want, const char *err_want)
{
	json_t		*v = val(j);
	struct buf	 err = BUF_INIT, rep = BUF_INIT;
	struct xnum	 n = { -1, false };
	int		 rc = xf_timeout("WebFetch", v, 30, &n, &err);

	if (err_want != NULL) {
		ck_assert_msg(rc == -1, "%s: accepted", j);
		ck_assert_str_eq(S(err), err_want);
	} else {
		ck_assert_msg(rc == 0, "%s: %s", j, S(err));
		xf_num_repr(&rep, &n);
		ck_assert_str_eq(S(rep), want);
	}
	buf_free(&err);
	buf_free(&rep);
	json_decref(v);
}

START_TEST(timeout_as_wilmer)
{
	ck_timeout("", "30", NULL);
	ck_timeout("2", "2", NULL);
	ck_timeout("\"2\"", "2.0", NULL);
	ck_timeout("\" 5 \"", "5.0", NULL);
	ck_timeout("7.5", "7.5", NULL);
	ck_timeout("\"1e1\"", "10.0", NULL);
	ck_timeout("true", NULL,
	    "WebFetch 'timeout' must be a number of seconds; got True.");
	ck_timeout("\"abc\"", NULL,
	    "WebFetch 'timeout' must be a number of seconds; got 'abc'.");
	ck_timeout("\"0x10\"", NULL,
	    "WebFetch 'timeout' must be a number of seconds; got '0x10'.");
	ck_timeout("null", NULL,
	    "WebFetch 'timeout' must be a number of seconds; got None.");
	ck_timeout("[1]", NULL,
	    "WebFetch 'timeout' must be a number of seconds; got [1].");
	ck_timeout("0", NULL,
	    "WebFetch 'timeout' must be a positive number of seconds; got 0.");
	ck_timeout("\"0\"", NULL, "WebFetch 'timeout' must be a positive "
	    "number of seconds; got 0.0.");
	ck_timeout("-1.5", NULL, "WebFetch 'timeout' must be a positive "
	    "number of seconds; got -1.5.");
	ck_timeout("\"nan\"", NULL, "WebFetch 'timeout' must be a positive "
	    "number of seconds; got nan.");
	ck_timeout("\"inf\"", NULL, "WebFetch 'timeout' must be a positive "
	    "number of seconds; got inf.");
}
END_TEST

START_TEST(bools_are_json_booleans)
{
	const char	*in[] = { "true", "false", "", "\"yes\"", "1", "null" };
	const char	*msg[] = { NULL, NULL, NULL,
	    "WebFetch 'verify' must be a boolean (true/false); got 'yes'.",
	    "WebFetch 'verify' must be a boolean (true/false); got 1.",
	    "WebFetch 'verify' must be a boolean (true/false); got None." };
	const bool	 want[] = { true, false, true };
	size_t		 i;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		json_t		*v = val(in[i]);
		struct buf	 err = BUF_INIT;
		bool		 b = false;
		int		 rc = xf_bool("WebFetch", "verify", v, true, &b,
				    &err);

		if (msg[i] == NULL) {
			ck_assert_int_eq(rc, 0);
			ck_assert_int_eq(b, want[i]);
		} else {
			ck_assert_int_eq(rc, -1);
			ck_assert_str_eq(S(err), msg[i]);
		}
		buf_free(&err);
		json_decref(v);
	}
}
END_TEST

/* xf_maxbytes of j is want, or fails with got repr r. */
static void
ck_bytes(const char *j, long long want, const char *r)
{
	json_t		*v = val(j);
	struct buf	 err = BUF_INIT;
	long long	 n = 0;
	int		 rc = xf_maxbytes("CurlCommand", v, &n, &err);
	char		 msg[160];

	if (r != NULL) {
		(void)snprintf(msg, sizeof(msg), "CurlCommand "
		    "'maxResponseBytes' must be an integer; got %s.", r);
		ck_assert_msg(rc == -1, "%s: accepted", j);
		ck_assert_str_eq(S(err), msg);
	} else {
		ck_assert_msg(rc == 0, "%s: %s", j, S(err));
		ck_assert_msg(n == want, "%s: %lld, want %lld", j, n, want);
	}
	buf_free(&err);
	json_decref(v);
}

START_TEST(maxbytes_is_python_int)
{
	ck_bytes("", 10485760, NULL);
	ck_bytes("12", 12, NULL);
	ck_bytes("\"12\"", 12, NULL);
	ck_bytes("\" -3 \"", -3, NULL);
	ck_bytes("\"1_000\"", 1000, NULL);
	ck_bytes("1.9", 1, NULL);
	ck_bytes("-1.9", -1, NULL);
	ck_bytes("0", 0, NULL);
	ck_bytes("\"1.5\"", 0, "'1.5'");
	ck_bytes("\"1__0\"", 0, "'1__0'");
	ck_bytes("\"\"", 0, "''");
	ck_bytes("true", 0, "True");
	ck_bytes("null", 0, "None");
	ck_bytes("{}", 0, "{}");
}
END_TEST

START_TEST(choices_listed_as_a_tuple)
{
	static const char *const fmts[] = { "text", "json", "full",
	    "html-stripped", NULL };
	static const char *const one[] = { "only", NULL };
	struct buf	 err = BUF_INIT;
	const char	*out = NULL;
	json_t		*v;

	ck_assert_int_eq(xf_choice("WebFetch", "outputFormat", NULL, fmts,
	    &out, &err), 0);
	ck_assert_str_eq(out, "text");
	v = json_string("full");
	ck_assert_int_eq(xf_choice("WebFetch", "outputFormat", v, fmts, &out,
	    &err), 0);
	ck_assert_ptr_eq(out, fmts[2]);
	json_decref(v);
	v = json_string("x");
	ck_assert_int_eq(xf_choice("WebFetch", "outputFormat", v, fmts, &out,
	    &err), -1);
	ck_assert_str_eq(S(err), "WebFetch 'outputFormat' must be "
	    "one of ('text', 'json', 'full', 'html-stripped'); got 'x'.");
	buf_reset(&err);
	ck_assert_int_eq(xf_choice("N", "f", v, one, &out, &err), -1);
	ck_assert_str_eq(S(err),
	    "N 'f' must be one of ('only',); got 'x'.");
	json_decref(v);
	buf_free(&err);
}
END_TEST

/* xf_hosts of j with vs: the list joined with ',' is want, or the call
 * fails with err_want. */
static void
ck_hosts(const char *j, const struct vars *vs, const char *want,
    const char *err_want)
{
	json_t		*v = val(j);
	struct buf	 err = BUF_INIT, got = BUF_INIT;
	char		**l = (char **)&got;
	int		 rc = xf_hosts("WebFetch", v, vs, &l, &err);
	size_t		 i;

	if (err_want != NULL) {
		ck_assert_msg(rc == -1 && l == NULL, "%s: accepted", j);
		ck_assert_str_eq(S(err), err_want);
	} else {
		ck_assert_msg(rc == 0, "%s: %s", j, S(err));
		for (i = 0; l != NULL && l[i] != NULL; i++)
			buf_printf(&got, "%s%s", i ? "," : "", l[i]);
		ck_assert_str_eq(S(got), want);
	}
	xf_hosts_free(l);
	buf_free(&err);
	buf_free(&got);
	json_decref(v);
}

START_TEST(allowed_hosts_fail_closed)
{
	struct vars	*vs = vars_new();

	vars_set(vs, "site", " Docs.Example.ORG ");
	vars_set(vs, "none", "");
	ck_hosts("", vs, "", NULL);
	ck_hosts("null", vs, "", NULL);
	ck_hosts("[\" Example.COM \", \"\", \"example.com\", 5]", vs,
	    "example.com,5", NULL);
	ck_hosts("[\"{site}\"]", vs, "docs.example.org", NULL);
	ck_hosts("\"example.com\"", vs, NULL,
	    "WebFetch 'allowedHosts' must be a JSON list of host strings.");
	ck_hosts("[]", vs, NULL, "WebFetch 'allowedHosts' was configured but "
	    "contains no usable host entries; refusing to run with no "
	    "effective host restriction.");
	ck_hosts("[\"{none}\", \"  \"]", vs, NULL, "WebFetch 'allowedHosts' "
	    "was configured but contains no usable host entries; refusing to "
	    "run with no effective host restriction.");
	vars_free(vs);
}
END_TEST

static Suite *
xfield_suite(void)
{
	Suite	*s = suite_create("xfield");

	test_case(s, "timeout", timeout_as_wilmer, 0);
	test_case(s, "bool", bools_are_json_booleans, 0);
	test_case(s, "maxbytes", maxbytes_is_python_int, 0);
	test_case(s, "choice", choices_listed_as_a_tuple, 0);
	test_case(s, "hosts", allowed_hosts_fail_closed, 0);
	return s;
}

int
main(void)
{
	return check_main(xfield_suite());
}
