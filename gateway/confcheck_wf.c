/* confcheck_wf.c - --check-config: workflows, their nodes, and the workflows and endpoints the nodes name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/nodetypes.h"
#include "../common/xmem.h"
#include "confcheck_int.h"

#define NO_NAME		"No_Workflow_Name_Supplied"	/* spec 3.4 */

/* "node N", or "node N \"title\"" (title, else agentName) with control
 * bytes shown as '?'. Caller frees. */
static char *
node_label(json_t *node, size_t i)
{
	const char	*t = json_string_value(json_object_get(node, "title"));
	char		*s, *p;

	if (t == NULL || *t == '\0')
		t = json_string_value(json_object_get(node, "agentName"));
	if (t == NULL || *t == '\0')
		return xasprintf("node %zu", i + 1);
	s = xasprintf("node %zu \"%.60s\"", i + 1, t);
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return s;
}

/* A workflow in messages: its name in the user's folder, else
 * "folder/name" (key is "folder/name"). */
static const char *
wf_label(const struct check *k, const char *key)
{
	const char	*uf = k->k_user->u_workflow_folder;
	size_t		 n = strlen(uf);

	if (strncmp(key, uf, n) == 0 && key[n] == '/')
		return key + n + 1;
	return key;
}

/* key is on the stack at from: the workflows from there on call each
 * other. Each cycle is reported once. */
static void
report_cycle(struct check *k, const struct ck_ref *ref, size_t from,
    const char *key)
{
	char	 text[CK_LINELEN];
	size_t	 i, n = 0;

	text[0] = '\0';
	for (i = from; i < k->k_depth && n < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s -> ",
		    wf_label(k, k->k_stack[i]));
	if (n < sizeof(text))
		snprintf(text + n, sizeof(text) - n, "%s", wf_label(k, key));
	if (ck_once(k, "C\t%s", text))
		ck_report(k, false, ref, "workflow cycle: %s", text);
}

/* The folder a sub-workflow node's workflows are looked up in. */
static const char *
sub_folder(const struct check *k, json_t *node)
{
	const char	*f = json_string_value(json_object_get(node,
			    "workflowUserFolderOverride"));

	return f != NULL && *f != '\0' ? f : k->k_user->u_workflow_folder;
}

static void
check_custom(struct check *k, const struct ck_ref *r, json_t *node)
{
	const char	*name = json_string_value(json_object_get(node,
			    "workflowName"));
	const char	*folder = sub_folder(k, node);
	struct ck_ref	 wr = *r;

	if (name == NULL)
		name = NO_NAME;
	if (ck_is_variable(name) || ck_is_variable(folder))
		return;
	wr.rf_key = "workflowName";
	ck_workflow(k, &wr, folder, name);
}

/* Every workflow of conditionalWorkflows (which one runs depends on the
 * request; "" is none). */
static void
check_conditional(struct check *k, const struct ck_ref *r, json_t *node)
{
	json_t		*map = json_object_get(node, "conditionalWorkflows"), *v;
	const char	*folder = sub_folder(k, node), *key, *name;
	struct ck_ref	 wr = *r;
	char		*what;

	if (ck_is_variable(folder))
		return;
	json_object_foreach(map, key, v) {
		name = json_string_value(v);
		if (name == NULL || *name == '\0' || ck_is_variable(name))
			continue;
		what = xasprintf("%s, branch '%.64s'", r->rf_what, key);
		wr.rf_obj = map;
		wr.rf_key = key;
		wr.rf_what = what;
		ck_workflow(k, &wr, folder, name);
		free(what);
	}
}

/* A node's endpointName and preset; a Standard node must have one. */
static void
check_llm(struct check *k, const struct ck_ref *r, json_t *node,
    bool standard)
{
	const char	*name = json_string_value(json_object_get(node,
			    "endpointName"));
	const char	*preset = json_string_value(json_object_get(node,
			    "preset"));
	json_t		*jinja = json_object_get(node, "jinja2");
	struct ck_ref	 er = *r, pr = *r;

	er.rf_key = "endpointName";
	pr.rf_key = "preset";
	if (standard && (json_is_true(jinja) || json_is_string(jinja))) {
		pr.rf_key = "jinja2";
		ck_report(k, true, &pr, "\"jinja2\" prompt templates are not "
		    "supported by Sluice; requests reaching this node get "
		    "HTTP 501");
		pr.rf_key = "preset";
	}
	if (name == NULL || *name == '\0') {
		if (standard)
			ck_report(k, false, &er, "a Standard node needs an "
			    "\"endpointName\"");
		return;
	}
	if (ck_is_variable(name))
		return;
	ck_endpoint(k, &er, &pr, name, ck_is_variable(preset) ? NULL :
	    preset);
}

/* Node i of wf: its type, then whatever that type names. */
static void
check_node(struct check *k, struct conf_workflow *wf, size_t i,
    json_t *node)
{
	const char			*type = json_string_value(
					    json_object_get(node, "type"));
	const struct node_type_info	*ti;
	char				*label = node_label(node, i);
	struct ck_ref			 r = { &wf->w_file, node, "type",
					    wf->w_nodes, i, label };

	if (type == NULL)
		type = "Standard";
	if ((ti = nodetype_find(type)) == NULL) {
		ck_report(k, true, &r, "unknown node type '%.64s': WilmerAI "
		    "runs it as a Standard node, and so does Sluice", type);
		type = "Standard";
	} else if (!ti->ti_runs) {
		r.rf_what = NULL;
		ck_report(k, true, &r, "%s (%s) is not run by this version of "
		    "Sluice; requests reaching it get HTTP 501", label, type);
		free(label);
		return;
	}
	if (strcmp(type, "CustomWorkflow") == 0)
		check_custom(k, &r, node);
	else if (strcmp(type, "ConditionalCustomWorkflow") == 0)
		check_conditional(k, &r, node);
	check_llm(k, &r, node, strcmp(type, "Standard") == 0);
	free(label);
}

void
ck_workflow(struct check *k, const struct ck_ref *ref, const char *folder,
    const char *name)
{
	struct conf_workflow	*wf;
	char			 err[CONF_ERRLEN], *key;
	json_t			*node;
	size_t			 i;

	key = xasprintf("%s/%s", folder, name != NULL ? name : "");
	for (i = 0; i < k->k_depth; i++)
		if (strcmp(k->k_stack[i], key) == 0) {
			report_cycle(k, ref, i, key);
			free(key);
			return;
		}
	if (!ck_once(k, "W\t%s", key)) {
		free(key);
		return;
	}
	k->k_files++;
	if (conf_workflow_load(k->k_dir, folder, name, &wf, err) == -1) {
		ck_report(k, false, ref, "%s", err);
		free(key);
		return;
	}
	k->k_stack = xreallocarray(k->k_stack, k->k_depth + 1,
	    sizeof(*k->k_stack));
	k->k_stack[k->k_depth++] = key;
	json_array_foreach(wf->w_nodes, i, node)
		check_node(k, wf, i, node);
	k->k_depth--;
	free(key);
	conf_workflow_free(wf);
}
