/* structured.h - structured output: an api type's structuredOutput block, a node's structuredOutputFile schema, and the schema put into a chat request (addendum A8.5). */
#ifndef SLUICE_STRUCTURED_H
#define SLUICE_STRUCTURED_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/conf.h"

/* The schema named by a node's structuredOutputFile: the file
 * StructuredOutputs/<sub>/<name>.json under confdir, <sub> being the
 * user's structuredOutputConfigsSubDirectory (else the user's name),
 * then StructuredOutputs/<name>.json. Re-read on every call. Returns 0
 * with *schema (a non-empty object; caller decrefs), or -1 with
 * WilmerAI's message in err: a name that is not a plain file name, no
 * such file, a file that is not JSON, or not a non-empty object. */
int	structured_file(const char *confdir, const struct conf_user *u,
	    const char *name, json_t **schema, char err[CONF_ERRLEN]);

/* Does api type at have a valid structuredOutput block (an invalid
 * one is logged)? */
bool	structured_supported(const struct conf_apitype *at);

/* Put schema (borrowed; NULL: nothing to do) into root, the body of a
 * chat request for api type at, as at's structuredOutput block says:
 * at the dotted path "field" (missing or non-object members on the way
 * become objects; a value already there is replaced, with a warning),
 * either {"type": "json_schema", "json_schema": {"name":
 * "wilmer_structured_output", "strict": S, "schema": schema}}
 * ("openaiJsonSchema") or the schema itself ("raw"). An api type
 * without a valid block leaves root as it is (a warning). */
void	structured_attach(json_t *root, const struct conf_apitype *at,
	    json_t *schema);

#endif
