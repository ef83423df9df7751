/* msgs_tooltext.h - includeToolCallsInConversation: tool calls and results written into the messages' text, for the conversation variables (addendum A8.4). */
#ifndef SLUICE_MSGS_TOOLTEXT_H
#define SLUICE_MSGS_TOOLTEXT_H

#include "msgs.h"

/* A copy of in into out (empty; wmsgs_free it) where an assistant
 * message with tool calls has one line "[Tool Call: NAME] SUMMARY" per
 * call after its content (a newline between), and a "tool" message
 * reads "[Tool Result: LABEL] CONTENT", LABEL being "NAME SUMMARY" of
 * the call its tool_call_id answers (else its name, else
 * "unknown_tool"). SUMMARY is the call's first string argument (or the
 * arguments themselves), 200 characters at most. */
void	wmsgs_tool_text(struct wmsgs *out, const struct wmsgs *in);

#endif
