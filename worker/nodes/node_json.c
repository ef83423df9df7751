/* node_json.c - JsonExtractor: one top-level field of a JSON object, as text. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "../../common/pyfmt.h"
#include "../core/node.h"

static bool
json_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* Strip whitespace, a leading ```json or ``` and a trailing ```, then
 * whitespace again: s[*start..*end) is what remains. */
static void
json_unfence(const char *s, size_t *start, size_t *end)
{
	size_t	 a = 0, b = strlen(s);

	while (a < b && json_space(s[a]))
		a++;
	while (b > a && json_space(s[b - 1]))
		b--;
	if (b - a >= 7 && strncmp(s + a, "```json", 7) == 0)
		a += 7;
	else if (b - a >= 3 && strncmp(s + a, "```", 3) == 0)
		a += 3;
	if (b - a >= 3 && strncmp(s + b - 3, "```", 3) == 0)
		b -= 3;
	while (a < b && json_space(s[a]))
		a++;
	while (b > a && json_space(s[b - 1]))
		b--;
	*start = a;
	*end = b;
}

/* The value as WilmerAI turns it into a string: null as "", objects
 * and arrays through json.dumps, anything else as str(). */
static void
json_value_text(const json_t *v, struct buf *out)
{
	if (json_is_object(v) || json_is_array(v))
		jsonw_dump(out, v, JSONW_PYTHON);
	else if (!json_is_null(v))
		pyfmt_str(out, v);
}

/* Anything that is not an object with that key gives "". */
static int
json_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char		*text = node_str(x, "jsonToExtractFrom");
	char		*field = node_str(x, "fieldToExtract");
	json_t		*root, *v;
	json_error_t	 jerr;
	size_t		 a, b;

	json_unfence(text, &a, &b);
	root = json_loadb(text + a, b - a, 0, &jerr);
	if (json_is_object(root) && (v = json_object_get(root, field)) != NULL)
		json_value_text(v, out);
	json_decref(root);
	free(field);
	free(text);
	return 0;
}

const struct node_type node_json = { "JsonExtractor", json_run, false };
