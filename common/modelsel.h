/* modelsel.h - the request's model field selects a shared workflow (WilmerAI 1.5). */
#ifndef SLUICE_MODELSEL_H
#define SLUICE_MODELSEL_H

#include <stdbool.h>
#include <stddef.h>

/* Single-user rules: strip a trailing ":latest"; of "a:b" take "b"; when
 * that is a safe name and Workflows/<shared_folder>/<name>/ exists, copy
 * it into wf and return true. Otherwise false (normal routing). */
bool	modelsel_workflow(const char *confdir, const char *shared_folder,
	    const char *model, char *wf, size_t wflen);

/* True when a part of model between '/', '\\' and ':' is "." or "..":
 * a path traversal attempt, refused with 400 (DESIGN 6). Other unsafe
 * names only select no workflow, as in WilmerAI. */
bool	modelsel_traversal(const char *model);

/* The model echoed in responses: "<user>:<wf>", or "<user>" when wf is
 * NULL. Returns a string the caller frees. */
char	*modelsel_echo(const char *user, const char *wf);

#endif
