/* confcheck_int.h - what the --check-config files share: the walk's state, positions and reports. */
#ifndef SLUICE_CONFCHECK_INT_H
#define SLUICE_CONFCHECK_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/conf.h"

#define CK_LINELEN	2048

/* One walk over what a user can reach. Each workflow, endpoint and
 * (endpoint, preset) pair is checked once; k_seen holds their keys. */
struct check {
	const char		*k_dir;
	struct conf_user	*k_user;
	int			 k_problems;
	int			 k_warnings;
	int			 k_files;
	void			(*k_report)(const char *, bool);
	char			**k_seen;
	size_t			 k_nseen;
	char			**k_stack;	/* "folder/name" of the workflows
						 * being walked, outermost first */
	size_t			 k_depth;
	const char		*k_soft;	/* not NULL: problems are
						 * warnings, with this said */
};

/* Where a name was given, for the position of a message: member rf_key
 * of object rf_obj in rf_file or, when rf_obj has no such member,
 * element rf_idx of array rf_arr (rf_arr may be NULL). rf_what, when
 * not NULL, says which setting it is ("node 2 \"Ask\""). */
struct ck_ref {
	const struct jfile	*rf_file;
	const json_t		*rf_obj;
	const char		*rf_key;
	const json_t		*rf_arr;
	size_t			 rf_idx;
	const char		*rf_what;
};

/* Report one problem (warning false) or warning as
 * "path:line:col: what: message", or the message alone when ref is
 * NULL, and count it. While k_soft is set a problem is a warning
 * followed by " (k_soft)". */
void	ck_report(struct check *k, bool warning, const struct ck_ref *ref,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* True the first time key (formatted) is asked about in this walk. */
bool	ck_once(struct check *k, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* True for names with {variables}: resolved per request (workflow
 * names are checked only when they have none). NULL is not one. */
bool	ck_is_variable(const char *s);

/* The agentNInput values a workflow is called with: a caller's
 * scoped_variables, each resolved as far as the configuration fixes it.
 * in_val[i] is NULL when entry i depends on the request; in_why[i] then
 * says why. */
struct ck_inputs {
	char		**in_val;
	char		**in_why;
	size_t		  in_n;
};

/* What one workflow run sees ahead of time: its inputs (NULL: a
 * workflow run with none, as the top-level ones are), its top-level
 * keys and the user's userWideWorkflowVariables (either may be NULL). */
struct ck_scope {
	const struct ck_inputs	*sc_in;
	json_t			*sc_wvars;
	json_t			*sc_uvars;
};

/* confcheck_vars.c: format t as the worker will for this scope: early
 * (endpointName, preset) sees only the workflow's keys and agentNInput,
 * otherwise (scoped_variables) the user-wide variables too. Returns
 * the value (caller frees), or NULL when some {name} in t has no value
 * fixed by the configuration, with *why (caller frees) saying which. */
char	*ck_resolve(const struct ck_scope *sc, const char *t, bool early,
	    char **why);

/* The inputs a CustomWorkflow or ConditionalCustomWorkflow node in
 * scope sc passes to its child: its scoped_variables resolved. Free
 * with ck_inputs_free. */
void	ck_inputs_make(const struct ck_scope *sc, json_t *node,
	    struct ck_inputs *in);
void	ck_inputs_free(struct ck_inputs *in);

/* A key naming in's values, for ck_once ("" for NULL). Caller frees. */
char	*ck_inputs_key(const struct ck_inputs *in);

/* confcheck_wf.c: load Workflows/<folder>/<name>.json, given at ref
 * (NULL: found by listing a folder), called with inputs in (NULL: none),
 * and everything its nodes reach. The file is checked once; its
 * endpoints and presets once per distinct set of inputs. One being
 * walked is a cycle. */
void	ck_workflow(struct check *k, const struct ck_ref *ref,
	    const char *folder, const char *name, const struct ck_inputs *in);

/* confcheck_ep.c: endpoint name (given at epref) with its api type,
 * prompt template and preset (given at preref; preset NULL or "" for
 * none), then each backupEndpointName after it with backupPresetName
 * or the preset before it. */
void	ck_endpoint(struct check *k, const struct ck_ref *epref,
	    const struct ck_ref *preref, const char *name, const char *preset);

#endif
