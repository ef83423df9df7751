/* confcheck_wf.c - --check-config: workflows, their nodes, and the workflows and endpoints the nodes name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/nodetypes.h"
#include "../common/xmem.h"
#include "confcheck_int.h"

#define NO_NAME		"No_Workflow_Name_Supplied"	/* spec 3.4 */

char *
ck_node_label(json_t *node, size_t i)
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

/* One walk over a workflow: the file, what its nodes see, and whether
 * this is the file's first walk (its own problems are reported then). */
struct walk {
	struct conf_workflow	*wk_wf;
	struct ck_scope		 wk_sc;
	bool			 wk_first;
};

/* The folder a sub-workflow node's workflows are looked up in. */
static const char *
sub_folder(const struct check *k, json_t *node)
{
	const char	*f = json_string_value(json_object_get(node,
			    "workflowUserFolderOverride"));

	return f != NULL && *f != '\0' ? f : k->k_user->u_workflow_folder;
}

/* The worker takes workflowName as written (no variables). */
static void
check_custom(struct check *k, const struct walk *wk, const struct ck_ref *r,
    json_t *node)
{
	const char		*name = json_string_value(json_object_get(node,
				    "workflowName"));
	const char		*folder = sub_folder(k, node);
	struct ck_ref		 wr = *r;
	struct ck_inputs	 in;

	if (name == NULL)
		name = NO_NAME;
	if (ck_is_variable(name) || ck_is_variable(folder))
		return;
	wr.rf_key = "workflowName";
	ck_inputs_make(&wk->wk_sc, node, &in);
	ck_workflow(k, &wr, folder, name, &in);
	ck_inputs_free(&in);
}

/* Every workflow of conditionalWorkflows (which one runs depends on the
 * request; "" is none). */
static void
check_conditional(struct check *k, const struct walk *wk,
    const struct ck_ref *r, json_t *node)
{
	json_t			*map = json_object_get(node,
				    "conditionalWorkflows"), *v;
	const char		*folder = sub_folder(k, node), *key, *name;
	struct ck_ref		 wr = *r;
	struct ck_inputs	 in;
	char			*what;

	if (ck_is_variable(folder))
		return;
	ck_inputs_make(&wk->wk_sc, node, &in);
	json_object_foreach(map, key, v) {
		name = json_string_value(v);
		if (name == NULL || *name == '\0' || ck_is_variable(name))
			continue;
		what = xasprintf("%s, branch '%.64s'", r->rf_what, key);
		wr.rf_obj = map;
		wr.rf_key = key;
		wr.rf_what = what;
		ck_workflow(k, &wr, folder, name, &in);
		free(what);
	}
	ck_inputs_free(&in);
}

/* The workflow a node runs once per chunk, from the user's workflow
 * folder: ConversationChunkProcessor's workflowName (the chunk, then
 * scoped_variables) or SlowButQualityRAG's fileMemoryWorkflowName
 * (lead inputs, all made by the request). */
static void
check_per_chunk(struct check *k, const struct walk *wk,
    const struct ck_ref *r, json_t *node, const char *key, size_t lead,
    bool scoped)
{
	const char		*name = json_string_value(json_object_get(node,
				    key));
	struct ck_ref		 wr = *r;
	struct ck_inputs	 in, sv;
	size_t			 i;

	if (name == NULL || *name == '\0')
		return;
	memset(&sv, 0, sizeof(sv));
	if (scoped)
		ck_inputs_make(&wk->wk_sc, node, &sv);
	in.in_n = lead + sv.in_n;
	in.in_val = xcalloc(in.in_n + 1, sizeof(*in.in_val));
	in.in_why = xcalloc(in.in_n + 1, sizeof(*in.in_why));
	for (i = 0; i < lead; i++)
		in.in_why[i] = xstrdup("the chunk or the memories");
	for (i = 0; i < sv.in_n; i++) {
		in.in_val[lead + i] = sv.in_val[i];
		in.in_why[lead + i] = sv.in_why[i];
	}
	free(sv.in_val);
	free(sv.in_why);
	wr.rf_key = key;
	ck_workflow(k, &wr, k->k_user->u_workflow_folder, name, &in);
	ck_inputs_free(&in);
}

/* The name the node's key (endpointName or preset, given at ref) has
 * when a request runs, as far as the configuration fixes it (caller
 * frees). A name with variables says in *what (caller frees, set as
 * ref's rf_what) what it became; one that cannot be resolved gets a
 * warning and NULL. */
static char *
resolve_name(struct check *k, const struct walk *wk, struct ck_ref *ref,
    const char *raw, char **what)
{
	const char	*key = ref->rf_key;
	char		*v, *why;

	*what = NULL;
	if (!ck_is_variable(raw))
		return xstrdup(raw);
	if ((v = ck_resolve(&wk->wk_sc, raw, true, &why)) != NULL) {
		*what = xasprintf("%s (%s '%.64s' is '%.64s')", ref->rf_what,
		    key, raw, v);
		ref->rf_what = *what;
		return v;
	}
	if (ck_once(k, "U\t%s\t%s\t%s\t%s\t%s", ref->rf_file->jf_path,
	    ref->rf_what, key, raw, why))
		ck_report(k, true, ref, "%s '%.64s' cannot be resolved ahead "
		    "of time (%s): its %s is not checked", key, raw, why,
		    strcmp(key, "preset") == 0 ? "preset file" : "endpoint");
	free(why);
	return NULL;
}

/* A node's endpointName and preset; a Standard node must have one. */
static void
check_llm(struct check *k, const struct walk *wk, const struct ck_ref *r,
    json_t *node, bool standard)
{
	const char	*name = json_string_value(json_object_get(node,
			    "endpointName"));
	const char	*preset = json_string_value(json_object_get(node,
			    "preset"));
	struct ck_ref	 er = *r, pr = *r;
	char		*ep, *pre = NULL, *ewhat, *pwhat = NULL;

	er.rf_key = "endpointName";
	pr.rf_key = "preset";
	if (name == NULL || *name == '\0') {
		if (standard && wk->wk_first)
			ck_report(k, false, &er, "a Standard node needs an "
			    "\"endpointName\"");
		return;
	}
	if ((ep = resolve_name(k, wk, &er, name, &ewhat)) == NULL)
		return;
	if (preset != NULL && *preset != '\0')
		pre = resolve_name(k, wk, &pr, preset, &pwhat);
	if (*ep == '\0')
		ck_report(k, false, &er, "no endpoint: requests reaching this "
		    "node fail");
	else
		ck_endpoint(k, &er, &pr, ep, pre);
	free(ep);
	free(pre);
	free(ewhat);
	free(pwhat);
}

const char *
ck_node_type(struct check *k, const struct ck_ref *r, json_t *node,
    const char *label, bool report)
{
	const char			*type = json_string_value(
					    json_object_get(node, "type"));
	const struct node_type_info	*ti;
	struct ck_ref			 tr = *r;

	if (report)
		ck_keys(k, CKK_NODE, r->rf_file, node, label);
	if (type == NULL)
		return "Standard";
	if ((ti = nodetype_find(type)) == NULL) {
		if (report)
			ck_report(k, true, r, "unknown node type '%.64s': "
			    "WilmerAI runs it as a Standard node, and so does "
			    "Sluice", type);
		return "Standard";
	}
	if (!ti->ti_runs) {
		tr.rf_what = NULL;
		if (report)
			ck_report(k, true, &tr, "%s (%s) is not run by this "
			    "version of Sluice; requests reaching it get HTTP "
			    "501", label, type);
		return NULL;
	}
	return type;
}

/* An MCPToolCall's server file, when its name has no variables. */
static void
check_mcp(struct check *k, const struct ck_ref *r, json_t *node)
{
	const char	*name = json_string_value(json_object_get(node,
			    "server"));
	struct ck_ref	 sr = *r;

	if (name == NULL || *name == '\0' || ck_is_variable(name))
		return;
	sr.rf_key = "server";
	ck_settings_file(k, &sr, CKK_MCP, "MCPServers", name);
}

/* A VectorMemorySearch node's embeddingEndpointName. */
static void
check_embed_name(struct check *k, const struct ck_ref *r, json_t *node)
{
	struct ck_ref	 er = *r;

	er.rf_key = "embeddingEndpointName";
	ck_embed_endpoint(k, &er, json_string_value(json_object_get(node,
	    "embeddingEndpointName")), "the node searches by keywords");
}

/* Node i of the walk: its type, then whatever that type names. */
static void
check_node(struct check *k, const struct walk *wk, size_t i, json_t *node)
{
	const char	*type;
	char		*label = ck_node_label(node, i);
	struct ck_ref	 r = { &wk->wk_wf->w_file, node, "type",
			    wk->wk_wf->w_nodes, i, label };

	if ((type = ck_node_type(k, &r, node, label, wk->wk_first)) == NULL) {
		free(label);
		return;
	}
	if (strcmp(type, "CustomWorkflow") == 0)
		check_custom(k, wk, &r, node);
	else if (strcmp(type, "ConditionalCustomWorkflow") == 0)
		check_conditional(k, wk, &r, node);
	else if (strcmp(type, "ConversationChunkProcessor") == 0)
		check_per_chunk(k, wk, &r, node, "workflowName", 1, true);
	else if (strcmp(type, "SlowButQualityRAG") == 0)
		check_per_chunk(k, wk, &r, node, "fileMemoryWorkflowName", 4,
		    false);
	else if (strcmp(type, "MCPToolCall") == 0)
		check_mcp(k, &r, node);
	else if (strcmp(type, "VectorMemorySearch") == 0)
		check_embed_name(k, &r, node);
	check_llm(k, wk, &r, node, strcmp(type, "Standard") == 0);
	free(label);
}

/* The nodes of wf, called with in, as seen by user k. */
static void
walk_nodes(struct check *k, struct conf_workflow *wf,
    const struct ck_inputs *in, bool first)
{
	struct walk	 wk;
	json_t		*node, *uw;
	size_t		 i;

	uw = json_object_get(k->k_user->u_file.jf_root,
	    "userWideWorkflowVariables");
	wk.wk_wf = wf;
	wk.wk_sc.sc_in = in;
	wk.wk_sc.sc_wvars = wf->w_vars;
	wk.wk_sc.sc_uvars = json_is_object(uw) ? uw : NULL;
	wk.wk_first = first;
	json_array_foreach(wf->w_nodes, i, node)
		check_node(k, &wk, i, node);
}

void
ck_workflow(struct check *k, const struct ck_ref *ref, const char *folder,
    const char *name, const struct ck_inputs *in)
{
	struct conf_workflow	*wf;
	char			 err[CONF_ERRLEN], *key, *ikey;
	bool			 first, again;
	size_t			 i;

	key = xasprintf("%s/%s", folder, name != NULL ? name : "");
	for (i = 0; i < k->k_depth; i++)
		if (strcmp(k->k_stack[i], key) == 0) {
			report_cycle(k, ref, i, key);
			free(key);
			return;
		}
	ikey = ck_inputs_key(in);
	first = ck_once(k, "W\t%s", key);
	again = ck_once(k, "V\t%s\t%c%s", key, in != NULL ? '+' : '-', ikey);
	free(ikey);
	if (first)
		k->k_files++;
	if ((!first && !again) || conf_workflow_load(k->k_dir, folder, name,
	    &wf, err) == -1) {
		if (first)
			ck_report(k, false, ref, "%s", err);
		free(key);
		return;
	}
	k->k_stack = xreallocarray(k->k_stack, k->k_depth + 1,
	    sizeof(*k->k_stack));
	k->k_stack[k->k_depth++] = key;
	walk_nodes(k, wf, in, first);
	k->k_depth--;
	free(key);
	conf_workflow_free(wf);
}
