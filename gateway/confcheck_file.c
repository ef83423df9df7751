/* confcheck_file.c - --check-config: the keys of whole files, the settings files a user names, and any file by its folder. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/names.h"
#include "../common/xmem.h"
#include "confcheck.h"
#include "confcheck_int.h"

/* Each category of a routing config. */
static void
routing_keys(struct check *k, const struct jfile *jf)
{
	const char	*cat;
	json_t		*v;
	char		*what;

	json_object_foreach(jf->jf_root, cat, v) {
		what = xasprintf("category '%.64s'", cat);
		ck_keys(k, CKK_ROUTING, jf, v, what);
		free(what);
	}
}

/* Each node of a workflow, the array itself or its "nodes". */
static void
workflow_keys(struct check *k, const struct jfile *jf)
{
	json_t		*nodes = jf->jf_root, *node;
	struct ck_ref	 r = { jf, NULL, "type", NULL, 0, NULL };
	char		*label;
	size_t		 i;

	if (json_is_object(nodes))
		nodes = json_object_get(nodes, "nodes");
	r.rf_arr = nodes;
	json_array_foreach(nodes, i, node) {
		label = ck_node_label(node, i);
		r.rf_obj = node;
		r.rf_idx = i;
		r.rf_what = label;
		(void)ck_node_type(k, &r, node, label, true);
		free(label);
	}
}

void
ck_file_keys(struct check *k, enum ck_kind kind, const struct jfile *jf)
{
	if (kind == CKK_ROUTING)
		routing_keys(k, jf);
	else if (kind == CKK_WORKFLOW)
		workflow_keys(k, jf);
	else
		ck_keys(k, kind, jf, jf->jf_root, NULL);
}

/* A memory settings file's embeddingEndpointName. */
static void
embed_setting(struct check *k, const struct jfile *jf)
{
	struct ck_ref	 r = { jf, jf->jf_root, "embeddingEndpointName", NULL,
			    0, NULL };

	ck_embed_endpoint(k, &r, json_string_value(json_object_get(
	    jf->jf_root, "embeddingEndpointName")), "memories are not "
	    "embedded");
}

void
ck_settings_file(struct check *k, const struct ck_ref *ref, enum ck_kind kind,
    const char *folder, const char *name)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN], *path;

	if (!name_is_safe(name, strlen(name)) ||
	    !ck_once(k, "S\t%s/%s", folder, name))
		return;
	path = xasprintf("%s/%s/%s.json", k->k_dir, folder, name);
	if (jfile_load(path, &jf, err) == 0) {
		k->k_files++;
		ck_file_keys(k, kind, &jf);
		if (kind == CKK_MEMORY)
			embed_setting(k, &jf);
	} else if (errno != ENOENT)
		ck_report(k, true, ref, "%s", err);
	jfile_free(&jf);
	free(path);
}

/* The kind of the file at rel (relative to the config folder), from
 * its folder; root tells a workflow from a settings file. */
static enum ck_kind
kind_of(const char *rel, const json_t *root)
{
	static const struct {
		const char	*dir;
		enum ck_kind	 kind;
	} dirs[] = {
		{ "Users/", CKK_USER }, { "Endpoints/", CKK_ENDPOINT },
		{ "ApiTypes/", CKK_APITYPE }, { "PromptTemplates/", CKK_TEMPLATE },
		{ "Routing/", CKK_ROUTING }, { "Workflows/", CKK_WORKFLOW },
		{ "MCPServers/", CKK_MCP },
	};
	size_t	 i;

	if (strcmp(rel, "Users/_current-user.json") == 0)
		return CKK_CURRENT_USER;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (strncmp(rel, dirs[i].dir, strlen(dirs[i].dir)) == 0)
			break;
	if (i == sizeof(dirs) / sizeof(dirs[0]))
		return CKK_NONE;
	if (dirs[i].kind == CKK_WORKFLOW && json_is_object(root) &&
	    json_object_get(root, "nodes") == NULL)
		return CKK_SETTINGS;
	return dirs[i].kind;
}

int
confcheck_file(const char *confdir, const char *rel,
    void (*report)(const char *line, bool warning))
{
	struct check	 k;
	struct jfile	 jf;
	char		 err[CONF_ERRLEN], *path;

	memset(&k, 0, sizeof(k));
	k.k_dir = confdir;
	k.k_report = report;
	path = xasprintf("%s/%s", confdir, rel);
	if (jfile_load(path, &jf, err) == -1)
		ck_report(&k, false, NULL, "%s", err);
	else
		ck_file_keys(&k, kind_of(rel, jf.jf_root), &jf);
	jfile_free(&jf);
	free(path);
	return k.k_problems > 0 ? -1 : k.k_warnings;
}
