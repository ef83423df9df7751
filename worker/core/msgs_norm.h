/* msgs_norm.h - a request's messages made ready for workflows: discussion id, WilmerAI's chat rewriting. */
#ifndef SLUICE_MSGS_NORM_H
#define SLUICE_MSGS_NORM_H

#include "msgs.h"

/* Remove every [DiscussionId]...[/DiscussionId] from every message and
 * return the first id (caller frees), or NULL when there is none or it
 * is unusable as a folder name (contains / \ : or is . or ..). */
char	*wmsgs_discussion_id(struct wmsgs *);

/* WilmerAI's chat-route rewriting: with add_roles, "User: " and
 * "Assistant: " before user and assistant contents; with add_missing,
 * an assistant message ("Assistant:", or "" without add_roles) appended
 * when the last message is not the assistant's. */
void	wmsgs_chat_rewrite(struct wmsgs *, bool add_roles, bool add_missing);

#endif
