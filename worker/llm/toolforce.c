/* toolforce.c - tool_choice enforced through structured output: the schema, the tools described to the model, its answer read back as a tool call (addendum A8.6). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/jsonw.h"
#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../../common/toolcall.h"
#include "../../common/xmem.h"
#include "toolforce.h"

/* A tool's function name when it has a usable one (a non-empty
 * string), else NULL. */
static const char *
tool_name(const json_t *tool)
{
	const char	*n = json_string_value(json_object_get(
			    json_object_get(tool, "function"), "name"));

	return n != NULL && *n != '\0' ? n : NULL;
}

/* The function tool_choice pins: {"type": "function", "function":
 * {"name": N}} with N a non-empty string. */
static const char *
forced_name(const json_t *choice)
{
	const char	*type = json_string_value(json_object_get(choice,
			    "type"));

	if (type == NULL || strcmp(type, "function") != 0)
		return NULL;
	return tool_name(choice);
}

/* {"type": "object", "properties": {"name": {"const": name},
 * "arguments": args}, "required": ["name", "arguments"]}; args is
 * stolen. */
static json_t *
call_schema(const char *name, json_t *args)
{
	return json_pack("{s:s,s:{s:{s:s},s:o},s:[s,s]}", "type", "object",
	    "properties", "name", "const", name, "arguments", args,
	    "required", "name", "arguments");
}

/* The schema for one tool: its parameters when a non-empty object,
 * else any object. NULL when the tool has no usable name. */
static json_t *
tool_schema(const json_t *tool)
{
	const char	*name = tool_name(tool);
	json_t		*p = json_object_get(json_object_get(tool, "function"),
			    "parameters");

	if (name == NULL)
		return NULL;
	if (json_is_object(p) && json_object_size(p) > 0)
		return call_schema(name, json_deep_copy(p));
	return call_schema(name, json_pack("{s:s}", "type", "object"));
}

/* A forced call: the tool's own schema, or the name alone when the
 * tool is not among the definitions. */
static json_t *
forced_schema(const json_t *tools, const char *name)
{
	const json_t	*t;
	size_t		 i;

	json_array_foreach(tools, i, t) {
		const char	*n = tool_name(t);

		if (n != NULL && strcmp(n, name) == 0)
			return tool_schema(t);
	}
	return call_schema(name, json_pack("{s:s}", "type", "object"));
}

/* "required": one entry per tool, under "anyOf" when more than one;
 * NULL when none is usable. */
static json_t *
required_schema(const json_t *tools)
{
	json_t		*any = json_array(), *one;
	const json_t	*t;
	size_t		 i;

	json_array_foreach(tools, i, t)
		if ((one = tool_schema(t)) != NULL)
			json_array_append_new(any, one);
	if (json_array_size(any) == 0) {
		json_decref(any);
		return NULL;
	}
	if (json_array_size(any) == 1) {
		one = json_incref(json_array_get(any, 0));
		json_decref(any);
		return one;
	}
	return json_pack("{s:o}", "anyOf", any);
}

/* "- name: description" without the trailing ':' and ' ' characters
 * (Python's rstrip(": ")), then the parameters line. A falsy
 * description counts as "", another one as Python's str() shows it. */
static void
describe_tool(struct buf *d, const json_t *tool)
{
	const json_t	*f = json_object_get(tool, "function");
	const json_t	*desc = json_object_get(f, "description");
	const json_t	*p = json_object_get(f, "parameters");
	size_t		 from = d->b_len;

	buf_printf(d, "- %s: ", tool_name(tool));
	if (pyfmt_truthy(desc))
		pyfmt_str(d, desc);
	while (d->b_len > from && (d->b_data[d->b_len - 1] == ':' ||
	    d->b_data[d->b_len - 1] == ' '))
		d->b_len--;
	buf_adds(d, "\n");
	if (json_is_object(p) && json_object_size(p) > 0) {
		buf_adds(d, "  parameters (JSON Schema): ");
		jsonw_dump(d, p, JSONW_PYTHON);
		buf_adds(d, "\n");
	}
}

/* The text the system prompt gets: the tools, then what to answer. ""
 * when no tool has a usable name. */
static char *
describe(const json_t *tools, const char *forced)
{
	struct buf	 d = BUF_INIT;
	const json_t	*t;
	size_t		 i;

	buf_adds(&d, "The following tools are available:\n");
	json_array_foreach(tools, i, t)
		if (tool_name(t) != NULL)
			describe_tool(&d, t);
	if (d.b_len == strlen("The following tools are available:\n")) {
		buf_free(&d);
		return xstrdup("");
	}
	buf_adds(&d, "\n");
	if (forced != NULL)
		buf_printf(&d, "You must respond by calling the tool '%s'. ",
		    forced);
	else
		buf_adds(&d, "You must respond by calling exactly one of "
		    "these tools. ");
	buf_adds(&d, "Respond with a single JSON object of the form "
	    "{\"name\": <tool name>, \"arguments\": {<tool arguments>}} and "
	    "nothing else.");
	return buf_take(&d);
}

int
toolforce_begin(struct toolforce *tf, const char *tools, const char *choice)
{
	const char	*f;

	memset(tf, 0, sizeof(*tf));
	if (tools == NULL || choice == NULL)
		return 0;
	tf->tf_tools = json_loads(tools, JSON_DECODE_ANY, NULL);
	tf->tf_choice = json_loads(choice, JSON_DECODE_ANY, NULL);
	if (!json_is_array(tf->tf_tools) ||
	    json_array_size(tf->tf_tools) == 0 || tf->tf_choice == NULL) {
		toolforce_free(tf);
		return 0;
	}
	if ((f = forced_name(tf->tf_choice)) != NULL) {
		tf->tf_forced = xstrdup(f);
		tf->tf_schema = forced_schema(tf->tf_tools, f);
	} else if (json_is_string(tf->tf_choice) &&
	    strcmp(json_string_value(tf->tf_choice), "required") == 0)
		tf->tf_schema = required_schema(tf->tf_tools);
	if (tf->tf_schema == NULL) {
		toolforce_free(tf);
		return 0;
	}
	tf->tf_desc = describe(tf->tf_tools, tf->tf_forced);
	return 1;
}

/* Is name one the answer may call: a tool's (any string, as WilmerAI
 * collects them) or the forced one? */
static bool
known(const struct toolforce *tf, const char *name)
{
	const json_t	*t;
	const char	*n;
	size_t		 i;

	if (tf->tf_forced != NULL && strcmp(tf->tf_forced, name) == 0)
		return true;
	json_array_foreach(tf->tf_tools, i, t)
		if ((n = json_string_value(json_object_get(json_object_get(t,
		    "function"), "name"))) != NULL && strcmp(n, name) == 0)
			return true;
	return false;
}

json_t *
toolforce_parse(const struct toolforce *tf, const char *text, size_t n)
{
	const char	*p = text != NULL ? text : "";
	json_t		*o, *args, *call = NULL;
	const char	*name;

	pystr_trim(&p, &n);
	if (n == 0 || (o = json_loadb(p, n, JSON_DECODE_ANY, NULL)) == NULL)
		return NULL;
	name = json_string_value(json_object_get(o, "name"));
	args = json_object_get(o, "arguments");
	if (json_is_object(o) && name != NULL && *name != '\0' &&
	    json_is_object(args) && known(tf, name))
		call = json_pack("[o]", toolcall_new(-1, "wilmer-", 32, name,
		    args));
	json_decref(o);
	return call;
}

void
toolforce_free(struct toolforce *tf)
{
	json_decref(tf->tf_tools);
	json_decref(tf->tf_choice);
	json_decref(tf->tf_schema);
	free(tf->tf_forced);
	free(tf->tf_desc);
	memset(tf, 0, sizeof(*tf));
}
