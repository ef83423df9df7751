/* check_structured.c - structured output: the api type's block, the schema file's lookup and messages, and where the schema lands in a request (addendum A8.5). */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/conf.h"
#include "../../worker/llm/structured.h"
#include "../testmain.h"
#include "scratchdir.h"

/* An api type named "T" whose file is the JSON text j. */
static void
at_of(struct conf_apitype *at, const char *j)
{
	memset(at, 0, sizeof(*at));
	at->a_name = "T";
	at->a_file.jf_root = json_loads(j, 0, NULL);
	ck_assert_ptr_nonnull(at->a_file.jf_root);
}

/* structured_attach on body text b with block text j: the body after,
 * compact, keys in order. */
static char *
attached(const char *b, const char *j)
{
	struct conf_apitype	 at;
	json_t			*root = json_loads(b, 0, NULL);
	json_t			*schema = json_pack("{s:s}", "type", "object");
	char			*s;

	at_of(&at, j);
	structured_attach(root, &at, schema);
	s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	json_decref(schema);
	json_decref(at.a_file.jf_root);
	return s;
}

#define EXPECT(b, j, want) do {						\
	char *s_ = attached(b, j);					\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

START_TEST(block_places_the_schema)
{
	EXPECT("{\"model\":\"m\"}", "{\"structuredOutput\": {\"field\": "
	    "\"response_format\", \"style\": \"openaiJsonSchema\"}}",
	    "{\"model\":\"m\",\"response_format\":{\"type\":\"json_schema\","
	    "\"json_schema\":{\"name\":\"wilmer_structured_output\","
	    "\"strict\":true,\"schema\":{\"type\":\"object\"}}}}");
	/* strict by truthiness */
	EXPECT("{}", "{\"structuredOutput\": {\"field\": \"r\", \"style\": "
	    "\"openaiJsonSchema\", \"strict\": 0}}", "{\"r\":{\"type\":"
	    "\"json_schema\",\"json_schema\":{\"name\":"
	    "\"wilmer_structured_output\",\"strict\":false,\"schema\":"
	    "{\"type\":\"object\"}}}}");
	EXPECT("{}", "{\"structuredOutput\": {\"field\": \"r\", \"style\": "
	    "\"openaiJsonSchema\", \"strict\": \"no\"}}", "{\"r\":{\"type\":"
	    "\"json_schema\",\"json_schema\":{\"name\":"
	    "\"wilmer_structured_output\",\"strict\":true,\"schema\":"
	    "{\"type\":\"object\"}}}}");
	/* raw, replacing a preset's value; dotted through a non-object */
	EXPECT("{\"format\":\"json\"}", "{\"structuredOutput\": {\"field\": "
	    "\"format\", \"style\": \"raw\"}}", "{\"format\":{\"type\":"
	    "\"object\"}}");
	EXPECT("{\"a\":5,\"b\":1}", "{\"structuredOutput\": {\"field\": "
	    "\"a.x.y\", \"style\": \"raw\"}}", "{\"a\":{\"x\":{\"y\":{\"type\":"
	    "\"object\"}}},\"b\":1}");
	/* no block, or one WilmerAI would not take: untouched */
	EXPECT("{\"m\":1}", "{}", "{\"m\":1}");
	EXPECT("{\"m\":1}", "{\"structuredOutput\": {\"field\": \"\", "
	    "\"style\": \"raw\"}}", "{\"m\":1}");
	EXPECT("{\"m\":1}", "{\"structuredOutput\": {\"field\": \"f\", "
	    "\"style\": \"json\"}}", "{\"m\":1}");
	EXPECT("{\"m\":1}", "{\"structuredOutput\": \"response_format\"}",
	    "{\"m\":1}");
}
END_TEST

/* structured_file(name) for user u fails with want. */
static void
ck_file_err(struct scratchdir *d, const struct conf_user *u,
    const char *name, const char *want)
{
	char	 err[CONF_ERRLEN] = "", *dir = scratchdir_path(d, "");
	json_t	*schema = NULL;

	ck_assert_int_eq(structured_file(dir, u, name, &schema, err), -1);
	ck_assert_ptr_null(schema);
	ck_assert_msg(strstr(err, want) == err, "%s: '%s', want '%s'", name,
	    err, want);
	free(dir);
}

START_TEST(file_found_or_named_in_the_error)
{
	struct scratchdir	 d = { "" };
	struct conf_user	 u;
	json_t			*schema = NULL;
	char			 err[CONF_ERRLEN], *dir;

	memset(&u, 0, sizeof(u));
	u.u_given_name = "Ann";
	u.u_file.jf_root = json_object();
	scratchdir_make(&d, "structured");
	dir = scratchdir_path(&d, "");
	scratchdir_json(&d, "StructuredOutputs/s.json", "{'root': 1}");
	scratchdir_json(&d, "StructuredOutputs/Ann/s.json", "{'ann': 1}");
	scratchdir_json(&d, "StructuredOutputs/team/s.json", "{'team': 1}");
	scratchdir_json(&d, "StructuredOutputs/list.json", "[1]");
	scratchdir_put(&d, "StructuredOutputs/bad.json", "{nope");
	ck_assert_int_eq(structured_file(dir, &u, "s", &schema, err), 0);
	ck_assert_ptr_nonnull(json_object_get(schema, "ann"));
	json_decref(schema);
	json_object_set_new(u.u_file.jf_root,
	    "structuredOutputConfigsSubDirectory", json_string("team"));
	ck_assert_int_eq(structured_file(dir, &u, "s", &schema, err), 0);
	ck_assert_ptr_nonnull(json_object_get(schema, "team"));
	json_decref(schema);
	json_object_set_new(u.u_file.jf_root,
	    "structuredOutputConfigsSubDirectory", json_string("other"));
	ck_assert_int_eq(structured_file(dir, &u, "s", &schema, err), 0);
	ck_assert_ptr_nonnull(json_object_get(schema, "root"));
	json_decref(schema);
	ck_file_err(&d, &u, "nope", "structuredOutputFile 'nope' was not found "
	    "in Configs/StructuredOutputs/ (checked subdirectory 'other' and "
	    "the root).");
	ck_file_err(&d, &u, "list", "structuredOutputFile 'list' must contain "
	    "a non-empty JSON object schema.");
	ck_file_err(&d, &u, "bad", "structuredOutputFile 'bad' at '");
	ck_file_err(&d, &u, "../s", "structuredOutputFile '../s' is not a "
	    "valid config name.");
	ck_file_err(&d, &u, "C:s", "structuredOutputFile 'C:s' is not a valid "
	    "config name.");
	ck_file_err(&d, &u, "..", "structuredOutputFile '..' is not a valid "
	    "config name.");
	json_decref(u.u_file.jf_root);
	free(dir);
	scratchdir_remove(&d);
}
END_TEST

static Suite *
structured_suite(void)
{
	Suite	*s = suite_create("structured");

	test_case(s, "attach", block_places_the_schema, 0);
	test_case(s, "file", file_found_or_named_in_the_error, 0);
	return s;
}

int
main(void)
{
	return check_main(structured_suite());
}
