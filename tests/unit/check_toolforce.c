/* check_toolforce.c - tool_choice enforced through structured output: the schema, the tools' description, the answer read back (addendum A8.6; WilmerAI's structured_output_utils cases). */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/llm/toolforce.h"
#include "../testmain.h"

#define WEATHER	"{\"type\": \"function\", \"function\": {\"name\": " \
	"\"generate_image\", \"description\": \"Draw it\", \"parameters\": " \
	"{\"type\": \"object\", \"properties\": {\"prompt\": {\"type\": " \
	"\"string\"}}, \"required\": [\"prompt\"]}}}"
#define SEARCH	"{\"type\": \"function\", \"function\": {\"name\": " \
	"\"search\", \"description\": \"\", \"parameters\": {}}}"
#define FORCED	"{\"type\": \"function\", \"function\": {\"name\": " \
	"\"generate_image\"}}"

static struct toolforce	 F;

/* Begin with tools and choice; the engagement must be want. */
static void
begin(const char *tools, const char *choice, int want)
{
	ck_assert_int_eq(toolforce_begin(&F, tools, choice), want);
}

/* The schema, compact with sorted keys, equals want. */
static void
schema_is(const char *want)
{
	char	*s = json_dumps(F.tf_schema, JSON_COMPACT | JSON_SORT_KEYS);

	ck_assert_str_eq(s, want);
	free(s);
}

static void
teardown(void)
{
	toolforce_free(&F);
}

/* forced: the tool's own parameters; a tool not defined: the name
 * with any object. */
START_TEST(a8_6_forced_schema)
{
	begin("[" SEARCH ", " WEATHER "]", FORCED, 1);
	schema_is("{\"properties\":{\"arguments\":{\"properties\":{\"prompt\":"
	    "{\"type\":\"string\"}},\"required\":[\"prompt\"],\"type\":"
	    "\"object\"},\"name\":{\"const\":\"generate_image\"}},"
	    "\"required\":[\"name\",\"arguments\"],\"type\":\"object\"}");
	ck_assert_str_eq(F.tf_forced, "generate_image");
	toolforce_free(&F);
	begin("[" SEARCH "]", FORCED, 1);
	schema_is("{\"properties\":{\"arguments\":{\"type\":\"object\"},"
	    "\"name\":{\"const\":\"generate_image\"}},\"required\":[\"name\","
	    "\"arguments\"],\"type\":\"object\"}");
}
END_TEST

/* required: anyOf over the usable tools, one flat entry, none. An
 * empty parameters object is an open object. */
START_TEST(a8_6_required_schema)
{
	begin("[" SEARCH ", " WEATHER "]", "\"required\"", 1);
	ck_assert_uint_eq(json_array_size(json_object_get(F.tf_schema,
	    "anyOf")), 2);
	toolforce_free(&F);
	begin("[" SEARCH ", {\"type\": \"function\", \"function\": {\"name\": "
	    "\"\"}}, 7]", "\"required\"", 1);
	schema_is("{\"properties\":{\"arguments\":{\"type\":\"object\"},"
	    "\"name\":{\"const\":\"search\"}},\"required\":[\"name\","
	    "\"arguments\"],\"type\":\"object\"}");
	toolforce_free(&F);
	begin("[{\"type\": \"function\", \"function\": {}}]", "\"required\"",
	    0);
}
END_TEST

/* Nothing is enforced unless a call is demanded. */
START_TEST(a8_6_not_engaged)
{
	begin("[" WEATHER "]", "\"auto\"", 0);
	begin("[" WEATHER "]", "\"none\"", 0);
	begin("[" WEATHER "]", NULL, 0);
	begin("[]", "\"required\"", 0);
	begin(NULL, FORCED, 0);
	begin("[" WEATHER "]", "{\"type\": \"function\"}", 0);
	begin("[" WEATHER "]", "{\"type\": \"function\", \"function\": {}}",
	    0);
	begin("[" WEATHER "]", "{\"type\": \"tool\", \"name\": \"x\"}", 0);
	begin("[" WEATHER "]", "{\"type\": \"function\", \"function\": "
	    "{\"name\": \"\"}}", 0);
	begin("[" WEATHER "]", "\"REQUIRED\"", 0);
	ck_assert_ptr_null(F.tf_schema);
}
END_TEST

/* The text for the system prompt, as WilmerAI words it: trailing ':'
 * and ' ' go, an empty description leaves the name, parameters only
 * when not empty, Python's json.dumps. */
START_TEST(a8_6_description)
{
	begin("[" WEATHER ", " SEARCH ", {\"type\": \"function\", \"function\":"
	    " {\"name\": \"caf\\u00e9\", \"description\": \"A:  : \", "
	    "\"parameters\": {\"n\": 1.0}}}]", FORCED, 1);
	ck_assert_str_eq(F.tf_desc, "The following tools are available:\n"
	    "- generate_image: Draw it\n"
	    "  parameters (JSON Schema): {\"type\": \"object\", \"properties\":"
	    " {\"prompt\": {\"type\": \"string\"}}, \"required\": "
	    "[\"prompt\"]}\n"
	    "- search\n"
	    "- caf\xc3\xa9: A\n"
	    "  parameters (JSON Schema): {\"n\": 1.0}\n\n"
	    "You must respond by calling the tool 'generate_image'. Respond "
	    "with a single JSON object of the form {\"name\": <tool name>, "
	    "\"arguments\": {<tool arguments>}} and nothing else.");
	toolforce_free(&F);
	begin("[" SEARCH "]", "\"required\"", 1);
	ck_assert_str_eq(F.tf_desc, "The following tools are available:\n"
	    "- search\n\nYou must respond by calling exactly one of these "
	    "tools. Respond with a single JSON object of the form {\"name\": "
	    "<tool name>, \"arguments\": {<tool arguments>}} and nothing "
	    "else.");
	toolforce_free(&F);
	/* a forced tool among no usable definitions: no text */
	begin("[{\"type\": \"function\"}]", FORCED, 1);
	ck_assert_str_eq(F.tf_desc, "");
}
END_TEST

/* The answer's name when it is a call, else NULL. */
static char *
parsed(const char *text)
{
	json_t	*c = toolforce_parse(&F, text, strlen(text));
	json_t	*f = json_object_get(json_array_get(c, 0), "function");
	char	*s;

	if (c == NULL)
		return NULL;
	ck_assert_uint_eq(json_array_size(c), 1);
	if (asprintf(&s, "%s %s", json_string_value(json_object_get(f,
	    "name")), json_string_value(json_object_get(f, "arguments"))) ==
	    -1)
		abort();
	json_decref(c);
	return s;
}

static void
parse_is(const char *text, const char *want)
{
	char	*got = parsed(text);

	if (want == NULL)
		ck_assert_msg(got == NULL, "%s parsed as %s", text, got);
	else {
		ck_assert_msg(got != NULL, "%s not parsed", text);
		ck_assert_str_eq(got, want);
	}
	free(got);
}

/* What counts as the call: a JSON object, a known (or the forced)
 * name, an object of arguments; whitespace around is fine. */
START_TEST(a8_6_parse)
{
	begin("[" SEARCH "]", FORCED, 1);
	parse_is("{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}",
	    "search {\"q\": \"x\"}");
	parse_is(" \n\t{\"name\":\"generate_image\",\"arguments\":{\"a\":"
	    "[1,2.5,\"\\u00e9\"],\"b\":null}}\r\n ",
	    "generate_image {\"a\": [1, 2.5, \"\\u00e9\"], \"b\": null}");
	parse_is("Sure! {\"name\": \"search\", \"arguments\": {}}", NULL);
	parse_is("{\"name\": \"other\", \"arguments\": {}}", NULL);
	parse_is("{\"name\": \"search\", \"arguments\": \"{}\"}", NULL);
	parse_is("{\"name\": \"search\"}", NULL);
	parse_is("{\"name\": \"\", \"arguments\": {}}", NULL);
	parse_is("[{\"name\": \"search\", \"arguments\": {}}]", NULL);
	parse_is("\"search\"", NULL);
	parse_is("   ", NULL);
	parse_is("", NULL);
}
END_TEST

/* The call's shape: a fresh "wilmer-" id each time. */
START_TEST(a8_6_result_shape)
{
	const char	*t = "{\"name\": \"search\", \"arguments\": {}}";
	json_t		*a, *b, *c;

	begin("[" SEARCH "]", "\"required\"", 1);
	a = toolforce_parse(&F, t, strlen(t));
	b = toolforce_parse(&F, t, strlen(t));
	c = json_array_get(a, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "type")),
	    "function");
	ck_assert_uint_eq(json_object_size(c), 3);
	ck_assert_int_eq(strncmp(json_string_value(json_object_get(c, "id")),
	    "wilmer-", 7), 0);
	ck_assert_uint_eq(strspn(json_string_value(json_object_get(c, "id")) +
	    7, "0123456789abcdef"), 32);
	ck_assert_str_ne(json_string_value(json_object_get(c, "id")),
	    json_string_value(json_object_get(json_array_get(b, 0), "id")));
	json_decref(a);
	json_decref(b);
}
END_TEST

static Suite *
toolforce_suite(void)
{
	Suite	*s = suite_create("toolforce");
	TCase	*tc = tcase_create("a8_6");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, a8_6_forced_schema);
	tcase_add_test(tc, a8_6_required_schema);
	tcase_add_test(tc, a8_6_not_engaged);
	tcase_add_test(tc, a8_6_description);
	tcase_add_test(tc, a8_6_parse);
	tcase_add_test(tc, a8_6_result_shape);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(toolforce_suite());
}
