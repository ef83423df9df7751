/* groupchat.h - WilmerAI's group-chat reconstruction: the speaker's name before a reply that lacks it. */
#ifndef SLUICE_GROUPCHAT_H
#define SLUICE_GROUPCHAT_H

#include <stdbool.h>
#include <stddef.h>

#include "../../common/buf.h"
#include "msgs.h"

/*
 * A responder node with "useGroupChatTimestampLogic" answers a
 * conversation whose last message is a generation prompt such as
 * "Roland:" (SillyTavern group chats). When the model's reply does not
 * start with a speaker of its own (a colon within the prompt's length +
 * 10 characters, not at the start), the prompt and a space go before
 * it. WilmerAI decides a stream with this colon rule and a whole answer
 * with a first-word rule; Sluice uses the colon rule for both, on the
 * cleaned text, so streams and whole answers agree.
 */

struct gchat {
	char		*g_prompt;	/* NULL: nothing to do */
	size_t		 g_limit;	/* prompt length + 10, code points */
	bool		 g_decided;
	struct buf	 g_hold;	/* text before the decision */
};

/* The generation prompt of conversation l: its last message's content,
 * stripped, when it is 1 to 99 characters ending in ':'; else NULL.
 * Caller frees. */
char	*gchat_prompt(const struct wmsgs *l);

/* Start; prompt NULL makes every feed pass through. */
void	gchat_init(struct gchat *, const char *prompt);
void	gchat_free(struct gchat *);

/* Pass text on: what may go out now is appended to out. */
void	gchat_feed(struct gchat *, const char *p, size_t n, struct buf *out);

/* The end of the text: decide with what there is. */
void	gchat_finish(struct gchat *, struct buf *out);

#endif
