/* msgs.h - the conversation as the worker holds it: owned, editable messages. */
#ifndef SLUICE_MSGS_H
#define SLUICE_MSGS_H

#include <stdbool.h>
#include <stddef.h>

#include "../../proto/proto.h"

struct wmsg {
	char	*m_role;
	char	*m_content;		/* never NULL */
	char	*m_name;		/* NULL when absent */
	char	*m_tool_call_id;
	char	*m_tool_calls;		/* JSON array text or NULL */
	char	**m_images;
	size_t	 m_nimages;
};

struct wmsgs {
	struct wmsg	*v;
	size_t		 n;
};

/* Copy the request's messages (the frame can then be freed). */
void	wmsgs_from_proto(struct wmsgs *, const struct proto_req_start *);

/* Append a copy of role/content as a new message. */
void	wmsgs_add(struct wmsgs *, const char *role, const char *content);

/* Append a deep copy of m. */
void	wmsgs_add_copy(struct wmsgs *, const struct wmsg *m);

/* WilmerAI drops messages whose content is only whitespace unless they
 * carry tool calls, a tool call id or images. */
void	wmsgs_drop_empty(struct wmsgs *);

void	wmsgs_free(struct wmsgs *);	/* frees all, leaves it empty */

/* Free one message's members and zero it. */
void	wmsg_clear(struct wmsg *);

/* msgs_edit.c: what a node changes in the messages it sends. */

/* Insert a new message (copies of role/content) or a deep copy of m at
 * position pos (0..n). */
void	wmsgs_insert(struct wmsgs *, size_t pos, const char *role,
	    const char *content);
void	wmsgs_insert_copy(struct wmsgs *, size_t pos, const struct wmsg *m);

/* Runs of consecutive assistant messages become the first of the run,
 * its content the run's contents joined by delim. */
void	wmsgs_merge_assistants(struct wmsgs *, const char *delim);

/* Keep the newest max images across the messages (max 0: all; max < 0:
 * none). */
void	wmsgs_limit_images(struct wmsgs *, long max);

/* Append a copy of image (a data URI or raw base64) to m. */
void	wmsg_add_image(struct wmsg *, const char *image);

/* msgs_norm.c */

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
