/* modelsel.h - what a request's model field may be, and how a response echoes it. */
#ifndef SLUICE_MODELSEL_H
#define SLUICE_MODELSEL_H

#include <stdbool.h>
#include <stddef.h>

/* True when a part of model between '/', '\\' and ':' is "." or "..":
 * a path traversal attempt, refused with 400 (DESIGN 6). Other unsafe
 * names only select no workflow, as in WilmerAI. */
bool	modelsel_traversal(const char *model);

/* The model echoed in responses: "<user>:<wf>", or "<user>" when wf is
 * NULL. Returns a string the caller frees. */
char	*modelsel_echo(const char *user, const char *wf);

#endif
