/* chat_delta.h - one event of an OpenAI chat stream read without a tree, when it has the common shape. */
#ifndef SLUICE_CHAT_DELTA_H
#define SLUICE_CHAT_DELTA_H

#include <stdbool.h>

#include "../../common/buf.h"
#include "../../common/jscan.h"

/*
 * What the adapter takes from an event (adapter_openai.c, chat_event),
 * as jansson's tree would give it: choices[0].delta.content when it is
 * a string, choices[0].finish_reason when it is one, and
 * usage.prompt_tokens / usage.completion_tokens when they are integers.
 * A repeated key counts as its last occurrence, as in jansson's tree.
 * Strings are views of the event text or of the scan's arena: valid
 * until jscan_clear.
 */
struct chat_delta {
	bool		 cd_choice;	/* choices[0] exists */
	struct str	 cd_content;	/* p NULL: not a string */
	struct str	 cd_finish;	/* p NULL: not a string */
	bool		 cd_has_prompt, cd_has_completion;
	long long	 cd_prompt, cd_completion;
};

/* Read data[0..n) into *d through js (which the caller jscan_clears
 * after using d). Returns 1 when the event is a JSON object that only
 * needs what struct chat_delta holds; 0 when it needs the full path:
 * anything jscan refuses, any other top-level value, an "error" that
 * is not null, or a delta with "tool_calls". */
int	chat_delta_scan(struct jscan *js, const char *data, size_t n,
	    struct chat_delta *d);

#endif
