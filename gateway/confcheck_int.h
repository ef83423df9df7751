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
 * NULL, and count it. */
void	ck_report(struct check *k, bool warning, const struct ck_ref *ref,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* True the first time key (formatted) is asked about in this walk. */
bool	ck_once(struct check *k, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* True for names with {variables}: resolved per request, so they
 * cannot be checked ahead of time. NULL is not one. */
bool	ck_is_variable(const char *s);

/* confcheck_wf.c: load Workflows/<folder>/<name>.json, given at ref
 * (NULL: found by listing a folder), and everything its nodes reach;
 * a workflow already checked is skipped, one being walked is a cycle. */
void	ck_workflow(struct check *k, const struct ck_ref *ref,
	    const char *folder, const char *name);

/* confcheck_ep.c: endpoint name (given at epref) with its api type,
 * prompt template and preset (given at preref; preset NULL or "" for
 * none), then each backupEndpointName after it with backupPresetName
 * or the preset before it. */
void	ck_endpoint(struct check *k, const struct ck_ref *epref,
	    const struct ck_ref *preref, const char *name, const char *preset);

#endif
