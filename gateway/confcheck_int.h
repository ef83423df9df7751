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
/* An embeddingEndpointName (given at ref; variables are not resolved):
 * a warning when it cannot be loaded (saying what then happens:
 * effect) or is not an embeddings type; once a name. */
void	ck_embed_endpoint(struct check *k, const struct ck_ref *ref,
	    const char *name, const char *effect);

void	ck_endpoint(struct check *k, const struct ck_ref *epref,
	    const struct ck_ref *preref, const char *name, const char *preset);

/* confcheck_ep.c: prompt template name (given at ref): a problem when
 * it cannot be loaded, else its keys (once a walk). */
void	ck_template(struct check *k, const struct ck_ref *ref,
	    const char *name);

/* The kinds of config file, for their keys (confcheck_keys.c). */
enum ck_kind {
	CKK_NONE,		/* not checked: presets, schemas, others */
	CKK_USER,
	CKK_CURRENT_USER,	/* Users/_current-user.json */
	CKK_ENDPOINT,
	CKK_APITYPE,
	CKK_TEMPLATE,
	CKK_ROUTING,		/* one category of a routing config */
	CKK_WORKFLOW,		/* its top-level keys are variables */
	CKK_NODE,		/* one node of a workflow, any type */
	CKK_MEMORY,		/* discussionIdMemoryFileWorkflowSettings */
	CKK_COMPACTOR,		/* contextCompactorSettingsFile */
	CKK_SETTINGS,		/* a Workflows/ object without "nodes":
				 * either of the two above */
	CKK_MCP			/* MCPServers/<name>.json */
};

/* confcheck_keys.c: warn about each member of obj (an object in jf,
 * the whole file or one node or category of it, of the given kind;
 * what names it in messages, or NULL) that WilmerAI does not know
 * ("unknown key") or that Sluice does not implement ("not implemented
 * by Sluice; ignored", unless its value is null, false or empty). Keys
 * that do nothing in WilmerAI either are quiet. Not an object: nothing. */
void	ck_keys(struct check *k, enum ck_kind kind, const struct jfile *jf,
	    json_t *obj, const char *what);

/* confcheck_keys.c, for tests: entry i of the list (its kind, key, and
 * whether Sluice reads it); false past the end. */
bool	ck_key_at(size_t i, enum ck_kind *kind, const char **name,
	    bool *impl);

/* confcheck_file.c: the keys of the whole file jf of kind: a routing
 * config's categories, a workflow's nodes (with ck_node_type), else
 * its top level. */
void	ck_file_keys(struct check *k, enum ck_kind kind,
	    const struct jfile *jf);

/* confcheck_file.c: load confdir/<folder>/<name>.json (kind's file a
 * user's setting names, given at ref; NULL: found by its name) and check its keys once. A file
 * that is not there is not reported (the node that reads it says so
 * when it runs); one that does not parse is a warning. */
void	ck_settings_file(struct check *k, const struct ck_ref *ref,
	    enum ck_kind kind, const char *folder, const char *name);

/* confcheck_wf.c: "node N" for node i (0-based), or "node N \"title\""
 * (title, else agentName) with control bytes shown as '?'. Caller
 * frees. */
char	*ck_node_label(json_t *node, size_t i);

/* confcheck_wf.c: the type of node (given at r, labelled label): an
 * unknown type is run as "Standard", which is returned; a type Sluice
 * does not run gives NULL. With report, the node's keys are checked
 * and an unknown or unrun type is warned about. */
const char *ck_node_type(struct check *k, const struct ck_ref *r,
	    json_t *node, const char *label, bool report);

#endif
