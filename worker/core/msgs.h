/* msgs.h - the conversation as the worker holds it: owned, editable messages. */
#ifndef SLUICE_MSGS_H
#define SLUICE_MSGS_H
#include <jansson.h>
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

/* m's tool calls when it has any (a non-empty JSON list), whatever its
 * role; NULL otherwise. Caller decrefs. */
json_t	*wmsg_calls(const struct wmsg *m);

/* An assistant turn that says nothing: no tool calls, text empty or
 * "Assistant:" once stripped (a front end's generation-prompt turn;
 * addendum A8.2's filler). */
bool	wmsg_filler(const struct wmsg *m);

/* Free one message's members and zero it. */
void	wmsg_clear(struct wmsg *);

/* msgs_edit.c: what a node changes in the messages it sends. */

/* msgs_norm.c */

#endif
