/* liveness.h - a user's livenessToolCall: the tool call Sluice adds to an answer that has none, so agent front ends keep looping (addendum A8.7). */
#ifndef SLUICE_LIVENESS_H
#define SLUICE_LIVENESS_H

#include <jansson.h>

/* The user file's livenessToolCall (user_root may be NULL): 1 with
 * *name (toolName stripped of Python whitespace; caller frees) and
 * *args (its "arguments" when an object, else {}; a new reference)
 * when it is configured; 0 when it is off (absent or falsy); -1 when
 * it has another shape (an object without a non-empty string
 * toolName, or not an object): off as well, and the caller warns. */
int	liveness_conf(const json_t *user_root, char **name, json_t **args);

/* The call itself, OpenAI-shaped: {"index": 0, "id":
 * "wilmer_liveness_<8 hex>", "type": "function", "function": {"name":
 * name, "arguments": Python's json.dumps(args)}}. A new reference. */
json_t	*liveness_call(const char *name, const json_t *args);

#endif
