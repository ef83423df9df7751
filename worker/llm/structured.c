/* structured.c - structured output: an api type's structuredOutput block, a node's structuredOutputFile schema, and the schema put into a chat request (addendum A8.5). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../common/json.h"
#include "../../common/log.h"
#include "../../common/names.h"
#include "../../common/pyfmt.h"
#include "structured.h"

/* An api type's block, when it is one WilmerAI accepts. */
struct block {
	const char	*b_field;	/* dotted path, not empty */
	bool		 b_raw;		/* style "raw" (else openaiJsonSchema) */
	bool		 b_strict;	/* strict, truthy (default true) */
};

/* at's structuredOutput block into *b: 0, or -1 when it has none or
 * none that is valid (the latter logged). */
static int
block_of(const struct conf_apitype *at, struct block *b)
{
	json_t		*o = json_object_get(at->a_file.jf_root,
			    "structuredOutput");
	json_t		*f = json_object_get(o, "field");
	json_t		*st = json_object_get(o, "style");
	json_t		*strict = json_object_get(o, "strict");
	const char	*style = json_string_value(st);

	if (o == NULL || json_is_null(o))
		return -1;
	if (!json_is_string(f) || json_string_length(f) == 0 ||
	    style == NULL || (strcmp(style, "openaiJsonSchema") != 0 &&
	    strcmp(style, "raw") != 0)) {
		log_warnx("api type %s: structuredOutput needs a non-empty "
		    "\"field\" and a \"style\" of \"openaiJsonSchema\" or "
		    "\"raw\"; ignored", at->a_name);
		return -1;
	}
	b->b_field = json_string_value(f);
	b->b_raw = strcmp(style, "raw") == 0;
	b->b_strict = strict == NULL || pyfmt_truthy(strict);
	return 0;
}

/* The value to put at the field. New reference. */
static json_t *
payload(const struct block *b, json_t *schema)
{
	if (b->b_raw)
		return json_incref(schema);
	return json_pack("{s:s,s:{s:s,s:b,s:O}}", "type", "json_schema",
	    "json_schema", "name", "wilmer_structured_output", "strict",
	    b->b_strict, "schema", schema);
}

bool
structured_supported(const struct conf_apitype *at)
{
	struct block	 b;

	return block_of(at, &b) == 0;
}

void
structured_attach(json_t *root, const struct conf_apitype *at, json_t *schema)
{
	struct block	 b;
	const char	*p, *dot;
	char		 key[256];
	json_t		*o = root, *next;

	if (schema == NULL)
		return;
	if (block_of(at, &b) == -1) {
		log_warnx("api type %s has no structuredOutput block: the "
		    "request goes out without its schema", at->a_name);
		return;
	}
	for (p = b.b_field; (dot = strchr(p, '.')) != NULL; p = dot + 1) {
		(void)snprintf(key, sizeof(key), "%.*s", (int)(dot - p), p);
		if (!json_is_object(next = json_object_get(o, key))) {
			next = json_object();
			json_object_set_new(o, key, next);
		}
		o = next;
	}
	if (json_object_get(o, p) != NULL)
		log_warnx("api type %s: the structured output schema replaces "
		    "the request's \"%s\"", at->a_name, b.b_field);
	json_object_set_new(o, p, payload(&b, schema));
}

/* Load path into *schema: 0; 1 when there is no such file; -1 with
 * err. */
static int
load(const char *path, const char *name, json_t **schema,
    char err[CONF_ERRLEN])
{
	struct jfile	 jf;
	char		 why[CONF_ERRLEN];

	memset(&jf, 0, sizeof(jf));
	if (jfile_load(path, &jf, why) == -1) {
		if (errno == ENOENT)
			return 1;
		(void)snprintf(err, CONF_ERRLEN, "structuredOutputFile '%.64s' "
		    "at '%.200s' could not be parsed: %.150s", name, path, why);
		return -1;
	}
	if (!json_is_object(jf.jf_root) || json_object_size(jf.jf_root) == 0) {
		(void)snprintf(err, CONF_ERRLEN, "structuredOutputFile '%s' must "
		    "contain a non-empty JSON object schema.", name);
		jfile_free(&jf);
		return -1;
	}
	*schema = json_incref(jf.jf_root);
	jfile_free(&jf);
	return 0;
}

int
structured_file(const char *confdir, const struct conf_user *u,
    const char *name, json_t **schema, char err[CONF_ERRLEN])
{
	const char	*sub;
	char		 path[PATH_MAX];
	int		 r;

	*schema = NULL;
	if (!name_is_safe(name, strlen(name)) || strchr(name, ':') != NULL) {
		(void)snprintf(err, CONF_ERRLEN, "structuredOutputFile '%s' is "
		    "not a valid config name.", name);
		return -1;
	}
	sub = json_string_value(json_object_get(u->u_file.jf_root,
	    "structuredOutputConfigsSubDirectory"));
	if (sub == NULL || *sub == '\0' || !name_is_safe(sub, strlen(sub)))
		sub = u->u_given_name;
	(void)snprintf(path, sizeof(path), "%s/StructuredOutputs/%s/%s.json",
	    confdir, sub, name);
	if ((r = load(path, name, schema, err)) != 1)
		return r;
	(void)snprintf(path, sizeof(path), "%s/StructuredOutputs/%s.json",
	    confdir, name);
	if ((r = load(path, name, schema, err)) != 1)
		return r;
	(void)snprintf(err, CONF_ERRLEN, "structuredOutputFile '%s' was not "
	    "found in Configs/StructuredOutputs/ (checked subdirectory '%s' "
	    "and the root).", name, sub);
	return -1;
}
