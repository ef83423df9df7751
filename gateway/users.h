/* users.h - the users a gateway serves: who a request's model field names, and what to list as models. */
#ifndef SLUICE_USERS_H
#define SLUICE_USERS_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/names.h"

struct gw;

struct gw_user {
	char	*gu_name;	/* as configured (--user) */
	char	*gu_shared;	/* its sharedWorkflowsSubDirectoryOverride */
	bool	 gu_allow;	/* allowSharedWorkflows: list them */
	bool	 gu_owui;	/* interceptOpenWebUIToolRequests (truthy):
				   answer Open WebUI's tool-choosing
				   requests at once (owui.h) */
	bool	 gu_redact;	/* redactLogOutput (truthy): its requests'
				   content stays out of the log */
	bool	 gu_encrypt;	/* encryptUsingApiKey (truthy): its
				   discussions are encrypted with the
				   request's Bearer key (A10.1) */
};

/* (Re)load every configured user's file into g->g_users. On failure
 * the previous list stays; returns 0 or -1 (logged, with why before the
 * message). */
int	users_load(struct gw *g, const char *why);
void	users_free(struct gw *g);

/* WilmerAI's model field rules (spec 1.5): ":latest" dropped; "user:wf"
 * or "user" names a configured user in multi-user mode; the workflow
 * part (or the whole name in single-user mode) is a shared workflow
 * when its folder exists. *u is the user (the first in single-user
 * mode), wf the workflow or "". Returns -1 only in multi-user mode when
 * the model names no configured user. */
int	users_select(struct gw *g, const char *model,
	    const struct gw_user **u, char wf[NAME_MAX_LEN + 1]);

/* Whether log lines about a request for model echo ("<user>" or
 * "<user>:<workflow>", as the gateway answers it; NULL: not chosen yet)
 * keep its content out (log_text_if): the user's redactLogOutput. */
bool	users_redacting(struct gw *g, const char *echo);

/* "a, b, c": the configured users, for error messages (caller frees). */
char	*users_list(struct gw *g);

/* The length of model without a trailing ":latest", which WilmerAI's
 * model field rules drop. */
size_t	users_model_len(const char *model);

/* Call fn(arg, id) for each model the gateway lists (/v1/models,
 * /api/tags, ...), in order: per configured user, "<user>:<folder>"
 * for each of its shared workflows when it allows them (WilmerAI's
 * listing), else "<user>". id is borrowed for the call. */
void	users_models(struct gw *g, void (*fn)(void *arg, const char *id),
	    void *arg);

#endif
