/* toolcall.h - a tool call in OpenAI's shape, as WilmerAI makes one up (the liveness call, an enforced tool_choice). */
#ifndef SLUICE_TOOLCALL_H
#define SLUICE_TOOLCALL_H

#include <jansson.h>

/* {"index": index (left out when negative), "id": "<prefix><hex>",
 * "type": "function", "function": {"name": name, "arguments": Python's
 * json.dumps(args)}}, <hex> the first hexlen (at most 32) hex digits of
 * a fresh random UUID. A new reference. */
json_t	*toolcall_new(int index, const char *prefix, int hexlen,
	    const char *name, const json_t *args);

#endif
