/* toolforce.h - tool_choice enforced through structured output: the schema, the tools described to the model, its answer read back as a tool call (addendum A8.6). */
#ifndef SLUICE_TOOLFORCE_H
#define SLUICE_TOOLFORCE_H

#include <jansson.h>
#include <stddef.h>

/*
 * A client that demands a tool call (tool_choice "required", or one
 * function by name) from a backend whose api type has structured
 * output: the round goes out without the native tools, with a schema
 * that only admits {"name": ..., "arguments": {...}} and the tools
 * described in the system prompt; the JSON that comes back becomes an
 * OpenAI tool call.
 */
struct toolforce {
	json_t	*tf_tools;	/* the request's tools (an array) */
	json_t	*tf_choice;	/* its tool_choice, or NULL */
	char	*tf_forced;	/* the function tool_choice names, or NULL */
	json_t	*tf_schema;	/* what the answer must match */
	char	*tf_desc;	/* the tools as text for the system prompt
				   ("" when no tool has a usable name) */
};

/* Does tool_choice demand a call, for these tools? tools and choice
 * are the request's JSON texts (either may be NULL). Returns 1 with tf
 * filled (toolforce_free), or 0 (tool_choice absent, "auto", "none" or
 * anything else; "required" with no tool that has a name): tf is then
 * empty and toolforce_free is harmless. */
int	 toolforce_begin(struct toolforce *tf, const char *tools,
	    const char *choice);

/* The model's answer as the tool call it must be: the text, stripped
 * of Python's whitespace, is a JSON object whose "name" is a tool of
 * the request (or the forced one) and whose "arguments" is an object.
 * Returns a new array of one OpenAI tool call {"id": "wilmer-<32
 * hex>", "type": "function", "function": {"name", "arguments": Python's
 * json.dumps of the arguments}}, or NULL when the text is not that. */
json_t	*toolforce_parse(const struct toolforce *tf, const char *text,
	    size_t n);

void	 toolforce_free(struct toolforce *tf);

#endif
