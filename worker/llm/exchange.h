/* exchange.h - appendNativeToolExchange: the conversation's trailing tool exchange, sent as native turns after a node's prompt (addendum A8.2). */
#ifndef SLUICE_EXCHANGE_H
#define SLUICE_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "../core/msgs.h"
#include "../core/node.h"
#include "ask.h"
#include "target.h"

/* The trailing exchange of l: an assistant turn with tool calls and
 * the tool results after it, assistant filler (no tool calls, text
 * empty or "Assistant:") after them left out. Returns true with
 * [*start, *end] its first and last message, false when l does not end
 * with one. */
bool	exchange_find(const struct wmsgs *l, size_t *start, size_t *end);

/* Whether node a through target t appends the exchange: the node says
 * appendNativeToolExchange (truthy), has a prompt as written, and t is
 * a chat backend whose endpoint does not say backendSupportsToolTurns
 * false; and the conversation ends with an exchange ([*start, *end]). */
bool	exchange_engaged(const struct node_ctx *, const struct llm_ask *a,
	    const struct llm_target *t, size_t *start, size_t *end);

#endif
