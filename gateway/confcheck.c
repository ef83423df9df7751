/* confcheck.c - --check-config: load what a user can reach and report problems. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "../common/conf.h"
#include "../common/xmem.h"
#include "confcheck.h"
#include "gwconf.h"

struct check {
	const char		*k_dir;
	struct conf_user	*k_user;
	int			 k_errors;
	int			 k_files;
	void			(*k_report)(const char *);
};

static void
problem(struct check *k, const char *err)
{
	if (k->k_report != NULL)
		k->k_report(err);
	else
		fprintf(stderr, "%s\n", err);
	k->k_errors++;
}

/* Names with variables are resolved per request; they cannot be
 * checked ahead of time. */
static bool
is_template(const char *s)
{
	return strchr(s, '{') != NULL;
}

static void
check_endpoint(struct check *k, const char *name, const char *preset)
{
	struct conf_endpoint	*ep = NULL;
	struct conf_apitype	*at = NULL;
	json_t			*p = NULL;
	char			 err[CONF_ERRLEN];

	k->k_files++;
	if (conf_endpoint_load(k->k_dir, k->k_user->u_endpoint_subdir, name,
	    &ep, err) == -1) {
		problem(k, err);
		return;
	}
	if (conf_apitype_load(k->k_dir, ep->e_apitype_name, &at, err) == -1)
		problem(k, err);
	else if (preset != NULL && *preset != '\0' && !is_template(preset) &&
	    conf_preset_resolve(k->k_dir, k->k_user, at, preset, &p,
	    err) == -1)
		problem(k, err);
	json_decref(p);
	conf_apitype_free(at);
	conf_endpoint_free(ep);
}

static void
check_workflow(struct check *k, const char *folder, const char *name)
{
	struct conf_workflow	*wf;
	char			 err[CONF_ERRLEN];
	size_t			 i;
	json_t			*node;

	k->k_files++;
	if (conf_workflow_load(k->k_dir, folder, name, &wf, err) == -1) {
		problem(k, err);
		return;
	}
	json_array_foreach(wf->w_nodes, i, node) {
		const char *ep = json_string_value(json_object_get(node,
		    "endpointName"));
		const char *pr = json_string_value(json_object_get(node,
		    "preset"));

		if (ep != NULL && *ep != '\0' && !is_template(ep))
			check_endpoint(k, ep, pr);
	}
	conf_workflow_free(wf);
}

static void
check_shared(struct check *k)
{
	char	**names = conf_shared_workflows(k->k_dir,
		    k->k_user->u_shared_folder);
	char	 *folder;
	size_t	  i;

	for (i = 0; names[i] != NULL; i++) {
		folder = xasprintf("%s/%s", k->k_user->u_shared_folder, names[i]);
		check_workflow(k, folder, "_DefaultWorkflow");
		free(folder);
	}
	conf_names_free(names);
}

int
confcheck_run(const struct gw_conf *c, void (*report)(const char *))
{
	struct check	 k = { c->c_config_dir, NULL, 0, 0, report };
	char		 err[CONF_ERRLEN];

	if (conf_user_load(c->c_config_dir, c->c_user, &k.k_user, err) == -1) {
		problem(&k, err);
		return EX_CONFIG;
	}
	k.k_files++;
	if (k.k_user->u_custom_override)
		check_workflow(&k, k.k_user->u_workflow_folder,
		    k.k_user->u_custom_workflow);
	check_shared(&k);
	conf_user_free(k.k_user);
	if (report != NULL)
		return k.k_errors > 0 ? EX_CONFIG : 0;
	if (k.k_errors > 0) {
		fprintf(stderr, "%d problem%s in %s\n", k.k_errors,
		    k.k_errors == 1 ? "" : "s", c->c_config_dir);
		return EX_CONFIG;
	}
	fprintf(stderr, "configuration OK (%d files checked for user '%s')\n",
	    k.k_files, c->c_user);
	return 0;
}
