/* conf.c - WilmerAI-layout configuration: users, endpoints, api types, presets, workflows. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf.h"
#include "log.h"
#include "names.h"
#include "pyfmt.h"
#include "xmem.h"

#define NELEM(a)		(sizeof(a) / sizeof((a)[0]))
#define SAMPLER_LITERAL_NULL	"__wilmer_null__"
#define SHOWN_LEN		80

/* ---- names and paths ------------------------------------------------ */

/* s made printable for a message: control bytes as '?', cut at 64. */
static const char *
shown(const char *s, char out[SHOWN_LEN])
{
	size_t	 i;

	for (i = 0; s != NULL && s[i] != '\0' && i < 64; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' :
		    s[i];
	if (s != NULL && s[i] != '\0') {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

/* A folder inside the config tree: "" or safe names joined by '/'. */
static bool
relpath_is_safe(const char *p)
{
	const char	*slash;

	if (p == NULL || *p == '\0')
		return true;
	for (;;) {
		slash = strchr(p, '/');
		if (!name_is_safe(p, slash != NULL ? (size_t)(slash - p) :
		    strlen(p)))
			return false;
		if (slash == NULL)
			return true;
		p = slash + 1;
	}
}

/* "Kind[/sub]/name.json", relative to the config folder. Caller frees. */
static char *
rel_path(const char *kind, const char *sub, const char *name)
{
	if (sub == NULL || *sub == '\0')
		return xasprintf("%s/%s.json", kind, name);
	return xasprintf("%s/%s/%s.json", kind, sub, name);
}

/* Check sub and name, then load confdir/kind/sub/name.json; what names
 * the kind of file in messages. *missing (may be NULL) is set when the
 * only problem is that the file does not exist. */
static int
conf_open(const char *confdir, const char *kind, const char *sub,
    const char *name, const char *what, struct jfile *jf, bool *missing,
    char err[CONF_ERRLEN])
{
	char	 sbuf[SHOWN_LEN], *rel, *path;
	int	 rc;

	memset(jf, 0, sizeof(*jf));
	if (missing != NULL)
		*missing = false;
	if (name == NULL || *name == '\0') {
		snprintf(err, CONF_ERRLEN, "no %s name given", what);
		return -1;
	}
	if (!name_is_safe(name, strlen(name))) {
		snprintf(err, CONF_ERRLEN, "refusing unsafe %s name '%s': a "
		    "name must be one path component of at most %d bytes, "
		    "with no '/', '\\', control characters or leading '.'",
		    what, shown(name, sbuf), NAME_MAX_LEN);
		return -1;
	}
	if (!relpath_is_safe(sub)) {
		snprintf(err, CONF_ERRLEN, "refusing unsafe %s folder '%s': "
		    "folders must stay inside %s/", what, shown(sub, sbuf), kind);
		return -1;
	}
	rel = rel_path(kind, sub, name);
	path = xasprintf("%s/%s", confdir != NULL ? confdir : ".", rel);
	rc = jfile_load(path, jf, err);
	if (rc == -1 && (errno == ENOENT || errno == ENOTDIR)) {
		snprintf(err, CONF_ERRLEN, "%s: no such %s '%s' (looked in %s)",
		    rel, what, name, path);
		if (missing != NULL)
			*missing = true;
	}
	free(rel);
	free(path);
	return rc;
}

/* ---- field tables --------------------------------------------------- */

enum ftype { F_STR, F_BOOL, F_INT };

struct field {
	const char	*f_key;
	enum ftype	 f_type;
	size_t		 f_off;
	bool		 f_required;	/* absent or null is an error */
	const char	*f_sdef;	/* F_STR default */
	long		 f_idef;	/* F_BOOL and F_INT default */
};

static int
read_field(const struct jfile *jf, json_t *obj, char *base,
    const struct field *f, char err[CONF_ERRLEN])
{
	json_t	*v = json_object_get(obj, f->f_key);

	if (f->f_required && v == NULL)
		return jfile_err(jf, NULL, err, "missing required field '%s'",
		    f->f_key);
	if (f->f_required && json_is_null(v))
		return jfile_err_member(jf, obj, f->f_key, err,
		    "required field '%s' must not be null", f->f_key);
	switch (f->f_type) {
	case F_STR:
		return jget_str(jf, obj, f->f_key, f->f_sdef,
		    (const char **)(void *)(base + f->f_off), err);
	case F_BOOL:
		return jget_bool(jf, obj, f->f_key, f->f_idef != 0,
		    (bool *)(void *)(base + f->f_off), err);
	case F_INT:
	default:
		return jget_int(jf, obj, f->f_key, f->f_idef,
		    (long *)(void *)(base + f->f_off), err);
	}
}

static int
read_fields(const struct jfile *jf, json_t *obj, void *base,
    const struct field *f, size_t n, char err[CONF_ERRLEN])
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (read_field(jf, obj, base, &f[i], err) == -1)
			return -1;
	return 0;
}

/* An optional object member: NULL when absent or null. */
static int
get_object(const struct jfile *jf, json_t *obj, const char *key,
    json_t **out, char err[CONF_ERRLEN])
{
	json_t	*v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return jfile_err_member(jf, obj, key, err,
		    "'%s' must be an object, not %s", key, json_type_desc(v));
	*out = v;
	return 0;
}

static int
need_object_root(const struct jfile *jf, const char *what,
    char err[CONF_ERRLEN])
{
	if (json_is_object(jf->jf_root))
		return 0;
	return jfile_err(jf, NULL, err, "%s must be a JSON object, not %s",
	    what, json_type_desc(jf->jf_root));
}

/* A folder-valued string field must stay inside the config tree. */
static int
check_folder(const struct jfile *jf, json_t *obj, const char *key,
    const char *val, char err[CONF_ERRLEN])
{
	if (relpath_is_safe(val))
		return 0;
	return jfile_err_member(jf, obj, key, err, "'%s' must be a folder "
	    "name inside the config tree (no '..', leading '.', '\\' or "
	    "control characters)", key);
}

/* ---- users (spec 2.1) ----------------------------------------------- */

#define UOFF(m)	offsetof(struct conf_user, m)
static const struct field user_table[] = {
	{ "endpointConfigsSubDirectory", F_STR, UOFF(u_endpoint_subdir),
	    false, "", 0 },
	{ "workflowConfigsSubDirectoryOverride", F_STR,
	    UOFF(u_workflow_folder), false, "", 0 },
	{ "presetConfigsSubDirectoryOverride", F_STR, UOFF(u_preset_subdir),
	    false, "", 0 },
	{ "sharedWorkflowsSubDirectoryOverride", F_STR, UOFF(u_shared_folder),
	    false, "", 0 },
	{ "customWorkflowOverride", F_BOOL, UOFF(u_custom_override), false,
	    NULL, 0 },
	{ "customWorkflow", F_STR, UOFF(u_custom_workflow), false, "", 0 },
	{ "routingConfig", F_STR, UOFF(u_routing_config), false, "", 0 },
	{ "categorizationWorkflow", F_STR, UOFF(u_categorization_workflow),
	    false, "", 0 },
	{ "chatPromptTemplateName", F_STR, UOFF(u_chat_template), false, "",
	    0 },
	{ "allowSharedWorkflows", F_BOOL, UOFF(u_allow_shared), false, NULL,
	    0 },
	{ "embeddingEndpointName", F_STR, UOFF(u_embed_endpoint), false, "",
	    0 },
	/* WilmerAI indexes these two directly: KeyError when absent. */
	{ "chatCompleteAddUserAssistant", F_BOOL, UOFF(u_add_user_assistant),
	    true, NULL, 0 },
	{ "chatCompletionAddMissingAssistantGenerator", F_BOOL,
	    UOFF(u_add_missing_assistant), true, NULL, 0 },
	{ "connectTimeoutInSeconds", F_INT, UOFF(u_connect_timeout_s), false,
	    NULL, 30 },
	{ "port", F_INT, UOFF(u_port), false, NULL, 5000 },
	{ "maxCategorizationAttempts", F_INT, UOFF(u_max_categorization),
	    false, NULL, 1 },
};

static int
user_folders(struct conf_user *u, char err[CONF_ERRLEN])
{
	struct jfile	*jf = &u->u_file;
	json_t		*root = jf->jf_root;

	/* WilmerAI uses `value or default`, so "" means the default too. */
	if (*u->u_workflow_folder == '\0')
		u->u_workflow_folder = u->u_given_name;
	if (*u->u_preset_subdir == '\0')
		u->u_preset_subdir = u->u_given_name;
	if (*u->u_shared_folder == '\0')
		u->u_shared_folder = "_shared";
	if (check_folder(jf, root, "endpointConfigsSubDirectory",
	    u->u_endpoint_subdir, err) == -1 ||
	    check_folder(jf, root, "workflowConfigsSubDirectoryOverride",
	    u->u_workflow_folder, err) == -1 ||
	    check_folder(jf, root, "presetConfigsSubDirectoryOverride",
	    u->u_preset_subdir, err) == -1 ||
	    check_folder(jf, root, "sharedWorkflowsSubDirectoryOverride",
	    u->u_shared_folder, err) == -1)
		return -1;
	return 0;
}

static int
user_fields(struct conf_user *u, char err[CONF_ERRLEN])
{
	struct jfile	*jf = &u->u_file;
	json_t		*root = jf->jf_root;
	const char	*cur = json_string_value(json_object_get(root,
			    "currentUser"));

	/* Users/_current-user.json names the user; it is not one. */
	if (cur != NULL && json_object_size(root) == 1)
		return jfile_err_member(jf, root, "currentUser", err, "this is "
		    "the file that names the current user, not a user "
		    "configuration: use --user '%.64s', or leave --user out "
		    "to run as it", cur);
	if (need_object_root(jf, "a user config", err) == -1 ||
	    read_fields(jf, root, u, user_table, NELEM(user_table), err) == -1 ||
	    user_folders(u, err) == -1)
		return -1;
	if (u->u_connect_timeout_s < 1)
		u->u_connect_timeout_s = 1;
	if (u->u_max_categorization < 1)
		u->u_max_categorization = 1;
	if (u->u_port < 1 || u->u_port > 65535)
		return jfile_err_member(jf, root, "port", err,
		    "'port' must be between 1 and 65535, not %ld", u->u_port);
	return get_object(jf, root, "sluice", &u->u_sluice, err);
}

int
conf_user_load(const char *confdir, const char *name, struct conf_user **out,
    char err[CONF_ERRLEN])
{
	struct conf_user	*u;
	size_t			 i;

	*out = NULL;
	u = xcalloc(1, sizeof(*u));
	u->u_given_name = xstrdup(name != NULL ? name : "");
	u->u_name = xstrdup(u->u_given_name);
	for (i = 0; u->u_name[i] != '\0'; i++)
		u->u_name[i] = (char)tolower((unsigned char)u->u_name[i]);
	if (conf_open(confdir, "Users", NULL, u->u_name, "user", &u->u_file,
	    NULL, err) == -1 || user_fields(u, err) == -1) {
		conf_user_free(u);
		return -1;
	}
	*out = u;
	return 0;
}

void
conf_user_free(struct conf_user *u)
{
	if (u == NULL)
		return;
	jfile_free(&u->u_file);
	free(u->u_name);
	free(u->u_given_name);
	free(u);
}

bool
conf_user_redacts(const struct conf_user *u)
{
	return u != NULL && pyfmt_truthy(json_object_get(u->u_file.jf_root,
	    "redactLogOutput"));
}

int
conf_current_user(const char *confdir, char *out, size_t outlen,
    char err[CONF_ERRLEN])
{
	struct jfile	 jf;
	const char	*s = NULL;
	int		 rc = -1;

	if (conf_open(confdir, "Users", NULL, "_current-user",
	    "current-user file", &jf, NULL, err) == -1)
		return -1;
	if (need_object_root(&jf, "_current-user.json", err) == -1)
		;
	else if (json_object_get(jf.jf_root, "currentUser") == NULL)
		jfile_err(&jf, NULL, err, "missing required field 'currentUser'");
	else if (jget_str(&jf, jf.jf_root, "currentUser", NULL, &s,
	    err) == -1)
		;
	else if (s == NULL || !name_is_safe(s, strlen(s)))
		jfile_err_member(&jf, jf.jf_root, "currentUser", err,
		    "'currentUser' must be a user name (one safe path "
		    "component)");
	else if (strlen(s) >= outlen)
		jfile_err_member(&jf, jf.jf_root, "currentUser", err,
		    "'currentUser' is too long");
	else {
		memcpy(out, s, strlen(s) + 1);
		rc = 0;
	}
	jfile_free(&jf);
	return rc;
}

/* ---- Routing/<name>.json (spec 2.6) -------------------------------- */

static int
routing_entries(const struct jfile *jf, char err[CONF_ERRLEN])
{
	const char	*cat;
	json_t		*v, *root = jf->jf_root;

	if (need_object_root(jf, "a routing config", err) == -1)
		return -1;
	if (json_object_size(root) == 0)
		return jfile_err(jf, NULL, err, "a routing config needs at "
		    "least one category");
	json_object_foreach(root, cat, v) {
		if (!json_is_object(v))
			return jfile_err_member(jf, root, cat, err, "category "
			    "'%s' must be an object with \"workflow\" and "
			    "\"description\"", cat);
		if (!json_is_string(json_object_get(v, "workflow")))
			return jfile_err_member(jf, root, cat, err, "category "
			    "'%s' needs a \"workflow\" string", cat);
	}
	return 0;
}

int
conf_routing_load(const char *confdir, const char *name, struct jfile *jf,
    char err[CONF_ERRLEN])
{
	if (conf_open(confdir, "Routing", NULL, name, "routing config", jf,
	    NULL, err) == -1)
		return -1;
	if (routing_entries(jf, err) == -1) {
		jfile_free(jf);
		return -1;
	}
	return 0;
}

/* ---- endpoints (spec 2.2) ------------------------------------------- */

#define EOFF(m)	offsetof(struct conf_endpoint, m)
static const struct field endpoint_table[] = {
	{ "endpoint", F_STR, EOFF(e_url), true, NULL, 0 },
	{ "apiTypeConfigFileName", F_STR, EOFF(e_apitype_name), true, NULL,
	    0 },
	{ "modelNameToSendToAPI", F_STR, EOFF(e_model), false, "", 0 },
	{ "dontIncludeModel", F_BOOL, EOFF(e_dont_include_model), false, NULL,
	    0 },
	/*
	 * The spec calls the promptTemplate key required, but WilmerAI's
	 * shipped embedding endpoints (Endpoints/_example-endpoints/
	 * embeddings-*.json, _example_users/Embedding-Endpoint.json) omit
	 * it. Absent is therefore treated like null: the user's template.
	 */
	{ "promptTemplate", F_STR, EOFF(e_prompt_template), false, NULL, 0 },
	{ "maxContextTokenSize", F_INT, EOFF(e_max_context), false, NULL, -1 },
	{ "apiKey", F_STR, EOFF(e_api_key), false, "", 0 },
	{ "addGenerationPrompt", F_BOOL, EOFF(e_add_generation_prompt), false,
	    NULL, 0 },
	{ "removeThinking", F_BOOL, EOFF(e_remove_thinking), false, NULL, 0 },
	{ "startThinkTag", F_STR, EOFF(e_start_think_tag), false, "", 0 },
	{ "endThinkTag", F_STR, EOFF(e_end_think_tag), false, "", 0 },
	{ "openingTagGracePeriod", F_INT, EOFF(e_think_grace), false, NULL,
	    100 },
	{ "expectOnlyClosingThinkTag", F_BOOL, EOFF(e_only_closing_think),
	    false, NULL, 0 },
	{ "trimBeginningAndEndLineBreaks", F_BOOL, EOFF(e_trim_linebreaks),
	    false, NULL, 0 },
	{ "removeCustomTextFromResponseStartEndpointWide", F_BOOL,
	    EOFF(e_remove_start_text), false, NULL, 0 },
	{ "backupEndpointName", F_STR, EOFF(e_backup_endpoint), false, NULL,
	    0 },
	{ "backupPresetName", F_STR, EOFF(e_backup_preset), false, NULL, 0 },
	{ "appendPresetName", F_STR, EOFF(e_append_preset), false, NULL, 0 },
	/* Sluice's own: calls at once, held by the gateway across workers. */
	{ "maxConcurrentRequests", F_INT, EOFF(e_max_concurrent), false, NULL,
	    0 },
};

static const char *
empty_is_null(const char *s)
{
	return s != NULL && *s == '\0' ? NULL : s;
}

static int
endpoint_fields(struct conf_endpoint *e, char err[CONF_ERRLEN])
{
	struct jfile	*jf = &e->e_file;
	json_t		*root = jf->jf_root;

	if (need_object_root(jf, "an endpoint config", err) == -1 ||
	    read_fields(jf, root, e, endpoint_table, NELEM(endpoint_table),
	    err) == -1 ||
	    jget_strlist(jf, root, "responseStartTextToRemoveEndpointWide",
	    &e->e_start_text, err) == -1 ||
	    get_object(jf, root, "presetSamplers", &e->e_preset_samplers,
	    err) == -1)
		return -1;
	if (e->e_max_concurrent < 0 || e->e_max_concurrent > 4096)
		return jfile_err_member(jf, root, "maxConcurrentRequests", err,
		    "'maxConcurrentRequests' must be from 0 (no limit) to "
		    "4096");
	/* WilmerAI tests these for truth: "" means "none". */
	e->e_backup_endpoint = empty_is_null(e->e_backup_endpoint);
	e->e_backup_preset = empty_is_null(e->e_backup_preset);
	e->e_append_preset = empty_is_null(e->e_append_preset);
	return 0;
}

int
conf_endpoint_load(const char *confdir, const char *subdir, const char *name,
    struct conf_endpoint **out, char err[CONF_ERRLEN])
{
	struct conf_endpoint	*e;

	*out = NULL;
	e = xcalloc(1, sizeof(*e));
	e->e_name = xstrdup(name != NULL ? name : "");
	if (conf_open(confdir, "Endpoints", subdir, name, "endpoint",
	    &e->e_file, NULL, err) == -1 || endpoint_fields(e, err) == -1) {
		conf_endpoint_free(e);
		return -1;
	}
	*out = e;
	return 0;
}

void
conf_endpoint_free(struct conf_endpoint *e)
{
	if (e == NULL)
		return;
	free(e->e_start_text);
	jfile_free(&e->e_file);
	free(e->e_name);
	free(e);
}

/* ---- api types (spec 2.3) ------------------------------------------- */

static const struct {
	const char			*an_name;
	enum conf_apitype_kind	 an_type;
} apitype_names[] = {
	{ "openAIChatCompletion",		APIT_OPENAI_CHAT },
	{ "openAIApiChatImageSpecific",		APIT_OPENAI_CHAT },
	{ "openAIV1Completion",			APIT_OPENAI_COMPLETION },
	{ "claudeMessages",			APIT_CLAUDE },
	{ "koboldCppGenerate",			APIT_KOBOLD },
	{ "koboldCppGenerateImageSpecific",	APIT_KOBOLD },
	{ "ollamaApiChat",			APIT_OLLAMA_CHAT },
	{ "ollamaApiChatImageSpecific",		APIT_OLLAMA_CHAT },
	{ "ollamaApiGenerate",			APIT_OLLAMA_GENERATE },
	{ "openAIEmbeddings",			APIT_OPENAI_EMBED },
	{ "ollamaEmbeddings",			APIT_OLLAMA_EMBED },
};

#define AOFF(m)	offsetof(struct conf_apitype, m)
static const struct field apitype_table[] = {
	{ "type", F_STR, AOFF(a_type_name), true, NULL, 0 },
	{ "presetType", F_STR, AOFF(a_preset_type), false, "", 0 },
	{ "truncateLengthPropertyName", F_STR, AOFF(a_truncate_prop), false,
	    "", 0 },
	{ "maxNewTokensPropertyName", F_STR, AOFF(a_max_tokens_prop), false,
	    "", 0 },
	{ "streamPropertyName", F_STR, AOFF(a_stream_prop), false, "stream",
	    0 },
	{ "supportsChatTemplateKwargs", F_BOOL, AOFF(a_chat_template_kwargs),
	    false, NULL, 0 },
	{ "streamIncludeUsage", F_BOOL, AOFF(a_stream_usage), false, NULL, 1 },
};

static const struct field thinking_table[] = {
	{ "location", F_STR, AOFF(a_think_location), false, "top", 0 },
	{ "field", F_STR, AOFF(a_think_field), false, "", 0 },
	{ "mode", F_STR, AOFF(a_think_mode), false, "unsupported", 0 },
};

static int
apitype_kind(struct conf_apitype *a, char err[CONF_ERRLEN])
{
	char	 valid[512];
	size_t	 i, n = 0;

	for (i = 0; i < NELEM(apitype_names); i++)
		if (strcmp(a->a_type_name, apitype_names[i].an_name) == 0) {
			a->a_type = apitype_names[i].an_type;
			return 0;
		}
	valid[0] = '\0';
	for (i = 0; i < NELEM(apitype_names) && n < sizeof(valid); i++)
		n += (size_t)snprintf(valid + n, sizeof(valid) - n, "%s%s",
		    i > 0 ? ", " : "", apitype_names[i].an_name);
	return jfile_err_member(&a->a_file, a->a_file.jf_root, "type", err,
	    "unknown api 'type' \"%.64s\"; valid types are: %s",
	    a->a_type_name, valid);
}

/* samplerFieldMap maps canonical names to native ones: all strings. */
static int
apitype_map(struct conf_apitype *a, char err[CONF_ERRLEN])
{
	const char	*k;
	json_t		*v;

	if (get_object(&a->a_file, a->a_file.jf_root, "samplerFieldMap",
	    &a->a_sampler_map, err) == -1)
		return -1;
	json_object_foreach(a->a_sampler_map, k, v)
		if (!json_is_string(v))
			return jfile_err_member(&a->a_file, a->a_sampler_map,
			    k, err, "samplerFieldMap: '%s' must map to a "
			    "native field name (a string), not %s", k,
			    json_type_desc(v));
	return 0;
}

static int
apitype_fields(struct conf_apitype *a, char err[CONF_ERRLEN])
{
	struct jfile	*jf = &a->a_file;
	json_t		*root = jf->jf_root, *think;

	if (need_object_root(jf, "an api type config", err) == -1 ||
	    read_fields(jf, root, a, apitype_table, NELEM(apitype_table),
	    err) == -1 || apitype_kind(a, err) == -1 ||
	    apitype_map(a, err) == -1 ||
	    get_object(jf, root, "thinking", &think, err) == -1 ||
	    read_fields(jf, think, a, thinking_table, NELEM(thinking_table),
	    err) == -1)
		return -1;
	if (a->a_truncate_prop == NULL)
		a->a_truncate_prop = "";
	return 0;
}

int
conf_apitype_load(const char *confdir, const char *name,
    struct conf_apitype **out, char err[CONF_ERRLEN])
{
	struct conf_apitype	*a;

	*out = NULL;
	a = xcalloc(1, sizeof(*a));
	a->a_name = xstrdup(name != NULL ? name : "");
	if (conf_open(confdir, "ApiTypes", NULL, name, "api type", &a->a_file,
	    NULL, err) == -1 || apitype_fields(a, err) == -1) {
		conf_apitype_free(a);
		return -1;
	}
	*out = a;
	return 0;
}

bool
conf_apitype_embeds(enum conf_apitype_kind kind)
{
	return kind == APIT_OPENAI_EMBED || kind == APIT_OLLAMA_EMBED;
}

void
conf_embed_not_for_generation(const char *endpoint, const char *type,
    char *err, size_t len)
{
	snprintf(err, len, "Endpoint '%s' uses embeddings API type '%s' and "
	    "cannot be used for text generation. Reference it from an "
	    "embeddings setting (such as 'embeddingEndpointName') instead.",
	    endpoint, type);
}

void
conf_embed_not_embeddings(const char *endpoint, const char *type, char *err,
    size_t len)
{
	snprintf(err, len, "Endpoint '%s' has API type '%s', which is not an "
	    "embeddings type. Use an endpoint whose ApiType is "
	    "'openAIEmbeddings' or 'ollamaEmbeddings'.", endpoint, type);
}

void
conf_apitype_free(struct conf_apitype *a)
{
	if (a == NULL)
		return;
	jfile_free(&a->a_file);
	free(a->a_name);
	free(a);
}

/* ---- presets (spec 2.4) --------------------------------------------- */

/* llama.cpp's sampler names: WilmerAI's canonical presetSamplers keys. */
static const char *const canonical_samplers[] = {
	"temperature", "dynatemp_range", "dynatemp_exponent", "top_k",
	"top_p", "min_p", "top_n_sigma", "typical_p", "repeat_penalty",
	"repeat_last_n", "presence_penalty", "frequency_penalty",
	"dry_multiplier", "dry_base", "dry_allowed_length",
	"dry_penalty_last_n", "dry_sequence_breakers", "xtc_probability",
	"xtc_threshold", "mirostat", "mirostat_tau", "mirostat_eta", "seed",
	"stop", "samplers", "logit_bias", "ignore_eos", "n_probs", "min_keep",
	"grammar", "json_schema",
};

static bool
in_list(const char *s, const char *const *list, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* Python's str(value).strip().lower() for a thinkingMode value, as far
 * as it matters: reals and containers never read as "off". */
static void
think_text(const json_t *v, char out[32])
{
	const char	*s;
	size_t		 i, n;

	if (json_is_string(v)) {
		s = json_string_value(v);
		while (isspace((unsigned char)*s))
			s++;
		for (n = strlen(s); n > 0 && isspace((unsigned char)s[n - 1]);)
			n--;
		n = n > 31 ? 31 : n;
		for (i = 0; i < n; i++)
			out[i] = (char)tolower((unsigned char)s[i]);
		out[n] = '\0';
	} else if (json_is_boolean(v))
		snprintf(out, 32, "%s", json_is_true(v) ? "true" : "false");
	else if (json_is_integer(v))
		snprintf(out, 32, "%lld", (long long)json_integer_value(v));
	else
		snprintf(out, 32, "on");
}

/* The native fragment for canonical thinkingMode v through at's
 * thinking descriptor, or NULL when nothing is to be sent. */
static json_t *
think_fragment(const json_t *v, const struct conf_apitype *at)
{
	static const char *const off[] = { "off", "false", "no", "0", "none",
	    "disabled" };
	static const char *const effort[] = { "low", "medium", "high" };
	char		 t[32];
	bool		 is_off;
	json_t		*val, *frag, *outer;

	if (at->a_think_field == NULL || *at->a_think_field == '\0' ||
	    at->a_think_mode == NULL)
		return NULL;
	think_text(v, t);
	is_off = in_list(t, off, NELEM(off));
	if (strcmp(at->a_think_mode, "bool") == 0)
		val = json_boolean(!is_off);
	else if (strcmp(at->a_think_mode, "effort") == 0 && !is_off)
		val = json_string(in_list(t, effort, NELEM(effort)) ? t :
		    "medium");
	else
		return NULL;	/* unsupported, unknown, or effort "off" */
	frag = json_object();
	json_object_set_new(frag, at->a_think_field, val);
	if (at->a_think_location == NULL ||
	    strcmp(at->a_think_location, "chat_template_kwargs") != 0)
		return frag;
	outer = json_object();
	json_object_set_new(outer, "chat_template_kwargs", frag);
	return outer;
}

/* Merge over into base in place: objects merge key by key, anything
 * else in over replaces (a copy). Keys keep their first position. */
static void
deep_merge(json_t *base, json_t *over)
{
	const char	*k;
	json_t		*v, *b;

	json_object_foreach(over, k, v) {
		b = json_object_get(base, k);
		if (json_is_object(b) && json_is_object(v))
			deep_merge(b, v);
		else
			json_object_set_new(base, k, json_deep_copy(v));
	}
}

static void
merge_new(json_t *base, json_t *frag)
{
	if (frag == NULL)
		return;
	deep_merge(base, frag);
	json_decref(frag);
}

/* A canonical presetSamplers block in at's native names: mapped keys
 * renamed, others dropped; thinkingMode through the thinking descriptor;
 * chat_template_kwargs passed on (over the thinking part) when at
 * supports it. */
static json_t *
sampler_translate(json_t *block, const struct conf_apitype *at)
{
	json_t		*native = json_object(), *v, *m, *think = NULL;
	json_t		*kwargs = NULL, *frag;
	const char	*k;

	json_object_foreach(block, k, v) {
		if (strcmp(k, "thinkingMode") == 0)
			think = v;
		else if (strcmp(k, "chat_template_kwargs") == 0)
			kwargs = v;
		else if ((m = json_object_get(at->a_sampler_map, k)) != NULL &&
		    json_is_string(m))
			json_object_set_new(native, json_string_value(m),
			    json_deep_copy(v));
		else if (in_list(k, canonical_samplers,
		    NELEM(canonical_samplers)))
			log_debug("preset: dropping sampler '%s': api type '%s' "
			    "does not support it", k, at->a_name);
		else
			log_warnx("preset: dropping '%s': not a canonical "
			    "sampler name (a typo?)", k);
	}
	if (think != NULL && !json_is_null(think))
		merge_new(native, think_fragment(think, at));
	if (kwargs != NULL && !json_is_null(kwargs) &&
	    at->a_chat_template_kwargs) {
		frag = json_object();
		json_object_set(frag, "chat_template_kwargs", kwargs);
		merge_new(native, frag);
	}
	return native;
}

json_t *
conf_gen_normalize(json_t *obj)
{
	json_t		*out = json_object(), *v, *c;
	const char	*k;

	json_object_foreach(obj, k, v) {
		if (json_is_object(v) && strcmp(k, "json_schema") != 0 &&
		    strcmp(k, "grammar") != 0) {
			c = conf_gen_normalize(v);
			if (json_object_size(c) > 0)
				json_object_set_new(out, k, c);
			else
				json_decref(c);
		} else if (json_is_null(v))
			continue;
		else if (json_is_string(v) &&
		    strcmp(json_string_value(v), SAMPLER_LITERAL_NULL) == 0)
			json_object_set_new(out, k, json_null());
		else
			json_object_set(out, k, v);
	}
	return out;
}

/* 1: preset names an endpoint (in u's endpoint folder) with a non-empty
 * presetSamplers block, translated into *raw; 0: it does not; -1. */
static int
preset_from_endpoint(const char *confdir, const struct conf_user *u,
    const struct conf_apitype *at, const char *preset, json_t **raw,
    char err[CONF_ERRLEN])
{
	struct jfile	 jf;
	json_t		*ps;
	bool		 missing;
	int		 rc;

	if (conf_open(confdir, "Endpoints", u != NULL ? u->u_endpoint_subdir :
	    "", preset, "endpoint", &jf, &missing, err) == -1)
		return missing ? 0 : -1;
	if ((rc = need_object_root(&jf, "an endpoint config", err)) == 0 &&
	    (rc = get_object(&jf, jf.jf_root, "presetSamplers", &ps,
	    err)) == 0 && json_object_size(ps) > 0) {
		*raw = sampler_translate(ps, at);
		rc = 1;
	}
	jfile_free(&jf);
	return rc;
}

/* Presets/<presetType>/<user preset folder>/<name>.json, else
 * Presets/<presetType>/<name>.json, as a private copy in *raw. */
static int
preset_file(const char *confdir, const struct conf_user *u,
    const struct conf_apitype *at, const char *name, json_t **raw,
    char err[CONF_ERRLEN])
{
	struct jfile	 jf;
	char		*sub = NULL, ferr[CONF_ERRLEN];
	bool		 missing = true;
	int		 rc = -1;

	if (confdir == NULL)
		confdir = ".";
	if (at->a_preset_type == NULL || *at->a_preset_type == '\0') {
		snprintf(err, CONF_ERRLEN, "ApiTypes/%s.json: no 'presetType', "
		    "so preset '%s' cannot be loaded", at->a_name, name);
		return -1;
	}
	if (u != NULL && u->u_preset_subdir != NULL &&
	    *u->u_preset_subdir != '\0') {
		sub = xasprintf("%s/%s", at->a_preset_type, u->u_preset_subdir);
		rc = conf_open(confdir, "Presets", sub, name, "preset", &jf,
		    &missing, ferr);
	}
	if (rc == -1 && missing)
		rc = conf_open(confdir, "Presets", at->a_preset_type, name,
		    "preset", &jf, &missing, err);
	else if (rc == -1)
		memcpy(err, ferr, CONF_ERRLEN);
	if (rc == -1 && missing && sub != NULL)
		snprintf(err, CONF_ERRLEN, "Presets/%s/%s.json: no such preset "
		    "'%s' (looked in %s/Presets/%s/%s.json and "
		    "%s/Presets/%s/%s.json)", at->a_preset_type, name, name,
		    confdir, sub, name, confdir, at->a_preset_type, name);
	free(sub);
	if (rc == 0 && (rc = need_object_root(&jf, "a preset", err)) == 0)
		*raw = json_deep_copy(jf.jf_root);
	jfile_free(&jf);
	return rc;
}

int
conf_preset_resolve_ep(const char *confdir, const struct conf_user *u,
    const struct conf_endpoint *ep, const struct conf_apitype *at,
    const char *preset, json_t **out, char err[CONF_ERRLEN])
{
	json_t	*raw = NULL, *extra = NULL;
	int	 rc;

	*out = NULL;
	if (at == NULL) {
		snprintf(err, CONF_ERRLEN, "preset '%s': no api type given",
		    preset != NULL ? preset : "");
		return -1;
	}
	if (preset == NULL || *preset == '\0') {
		snprintf(err, CONF_ERRLEN, "no preset name given");
		return -1;
	}
	rc = preset_from_endpoint(confdir, u, at, preset, &raw, err);
	if (rc == 0)
		rc = preset_file(confdir, u, at, preset, &raw, err);
	if (rc != -1 && ep != NULL && ep->e_append_preset != NULL &&
	    (rc = preset_file(confdir, u, at, ep->e_append_preset, &extra,
	    err)) == 0)
		merge_new(raw, extra);
	if (rc == -1) {
		json_decref(raw);
		return -1;
	}
	*out = raw;
	return 0;
}

int
conf_preset_resolve(const char *confdir, const struct conf_user *u,
    const struct conf_apitype *at, const char *preset, json_t **out,
    char err[CONF_ERRLEN])
{
	return conf_preset_resolve_ep(confdir, u, NULL, at, preset, out, err);
}

/* ---- workflows (spec 2.7) ------------------------------------------- */

static int
workflow_nodes(struct conf_workflow *w, char err[CONF_ERRLEN])
{
	json_t	*node, *t;
	size_t	 i;

	json_array_foreach(w->w_nodes, i, node) {
		if (!json_is_object(node))
			return jfile_err_elem(&w->w_file, w->w_nodes, i, err,
			    "workflow node %zu must be an object, not %s",
			    i + 1, json_type_desc(node));
		t = json_object_get(node, "type");
		if (t != NULL && !json_is_null(t) && !json_is_string(t))
			return jfile_err_member(&w->w_file, node, "type", err,
			    "workflow node %zu: 'type' must be a string, not %s",
			    i + 1, json_type_desc(t));
	}
	return 0;
}

/*
 * Workflow folders also hold other JSON: the memory settings file
 * (_DiscussionId-MemoryFile-Workflow-Settings.json, spec 7.3) and
 * ContextCompactor settings are objects without "nodes". Loading one of
 * them as a workflow is an error ("not a workflow"); an object that has
 * "nodes" must hold a list there.
 */
static int
workflow_parse(struct conf_workflow *w, char err[CONF_ERRLEN])
{
	struct jfile	*jf = &w->w_file;
	json_t		*root = jf->jf_root, *v;
	const char	*k;

	w->w_vars = json_object();
	if (json_is_array(root))
		w->w_nodes = root;
	else if (!json_is_object(root))
		return jfile_err(jf, NULL, err, "a workflow must be a list of "
		    "nodes or an object with \"nodes\", not %s",
		    json_type_desc(root));
	else if ((w->w_nodes = json_object_get(root, "nodes")) == NULL)
		return jfile_err(jf, NULL, err, "not a workflow: an object "
		    "workflow needs a \"nodes\" list");
	else if (!json_is_array(w->w_nodes))
		return jfile_err_member(jf, root, "nodes", err, "'nodes' must "
		    "be a list of node objects, not %s",
		    json_type_desc(w->w_nodes));
	else
		json_object_foreach(root, k, v)
			if (strcmp(k, "nodes") != 0)
				json_object_set(w->w_vars, k, v);
	return workflow_nodes(w, err);
}

int
conf_workflow_load(const char *confdir, const char *folder, const char *name,
    struct conf_workflow **out, char err[CONF_ERRLEN])
{
	struct conf_workflow	*w;

	*out = NULL;
	bool			 missing;
	char			*alt, aerr[CONF_ERRLEN];
	int			 rc;

	w = xcalloc(1, sizeof(*w));
	w->w_name = xstrdup(name != NULL ? name : "");
	rc = conf_open(confdir, "Workflows", folder, name, "workflow",
	    &w->w_file, &missing, err);
	/* WilmerAI's documented place for per-user folder overrides. */
	if (rc == -1 && missing && folder != NULL && *folder != '\0') {
		alt = xasprintf("_overrides/%s", folder);
		if (conf_open(confdir, "Workflows", alt, name, "workflow",
		    &w->w_file, &missing, aerr) == 0)
			rc = 0;
		else if (!missing)
			memcpy(err, aerr, CONF_ERRLEN);
		free(alt);
	}
	if (rc == -1 || workflow_parse(w, err) == -1) {
		conf_workflow_free(w);
		return -1;
	}
	*out = w;
	return 0;
}

void
conf_workflow_free(struct conf_workflow *w)
{
	if (w == NULL)
		return;
	json_decref(w->w_vars);
	jfile_free(&w->w_file);
	free(w->w_name);
	free(w);
}

/* ---- shared workflow folders (spec 1.5) ----------------------------- */

static char *
workflows_dir(const char *confdir, const char *folder)
{
	if (confdir == NULL)
		confdir = ".";
	if (folder == NULL || *folder == '\0')
		return xasprintf("%s/Workflows", confdir);
	return xasprintf("%s/Workflows/%s", confdir, folder);
}

/* Workflows/<folder>/<name>, relative to the config folder. */
static char *
shared_rel(const char *folder, const char *name)
{
	if (folder == NULL || *folder == '\0')
		return xasprintf("Workflows/%s", name);
	return xasprintf("Workflows/%s/%s", folder, name);
}

/* True when every component of rel below confdir is a folder and none
 * is a symbolic link; *link tells whether one was a link. One lstat()
 * per component: this runs for every request that names a workflow. */
static bool
plain_dirs(const char *confdir, const char *rel, bool *link)
{
	char		*p = xasprintf("%s/%s", confdir, rel), *c;
	struct stat	 st;
	bool		 ok = true;

	*link = false;
	for (c = p + strlen(confdir) + 1; ok; *c++ = '/') {
		if ((c = strchr(c, '/')) != NULL)
			*c = '\0';
		if (lstat(p, &st) == -1)
			ok = false;
		else if (!S_ISDIR(st.st_mode)) {
			*link = S_ISLNK(st.st_mode);
			ok = false;
		}
		if (c == NULL)
			break;
	}
	free(p);
	return ok;
}

/*
 * True when confdir/rel, with every symbolic link resolved, is a folder
 * inside confdir (resolved too). A shared-workflow entry that links out
 * of the config folder is refused: the model field of a request picks
 * these, and nothing a client names may lead outside the configuration.
 * Links that stay inside are followed.
 */
static bool
dir_within(const char *confdir, const char *rel)
{
	char		*root, *real, *path;
	struct stat	 st;
	size_t		 n;
	bool		 ok = false, link;

	if (confdir == NULL)
		confdir = ".";
	if (plain_dirs(confdir, rel, &link))
		return true;
	if (!link)
		return false;
	path = xasprintf("%s/%s", confdir, rel);
	root = realpath(confdir, NULL);
	real = realpath(path, NULL);
	if (root != NULL && real != NULL && stat(real, &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		n = strlen(root);
		ok = strncmp(real, root, n) == 0 &&
		    (real[n] == '/' || (n == 1 && root[0] == '/'));
	}
	free(real);
	free(root);
	free(path);
	return ok;
}

bool
conf_shared_workflow_exists(const char *confdir, const char *folder,
    const char *name)
{
	char		*rel;
	bool		 ok;

	/* WilmerAI also refuses ':' in names used for this lookup. */
	if (name == NULL || !name_is_safe(name, strlen(name)) ||
	    strchr(name, ':') != NULL || !relpath_is_safe(folder))
		return false;
	rel = shared_rel(folder, name);
	ok = dir_within(confdir, rel);
	free(rel);
	return ok;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True when entry name of Workflows/<folder>/ is a workflow folder a
 * request may pick: a safe name, not starting with '_', a folder inside
 * confdir once links are resolved. */
static bool
shared_entry_ok(const char *confdir, const char *folder, const char *name)
{
	char	*rel;
	bool	 ok;

	if (name[0] == '_' || !name_is_safe(name, strlen(name)))
		return false;
	rel = shared_rel(folder, name);
	ok = dir_within(confdir, rel);
	free(rel);
	return ok;
}

char **
conf_shared_workflows(const char *confdir, const char *folder)
{
	struct dirent	 *de;
	DIR		 *d = NULL;
	char		**v, *dir;
	size_t		  n = 0, cap = 8;

	v = xcalloc(cap + 1, sizeof(*v));
	if (!relpath_is_safe(folder))
		return v;
	dir = workflows_dir(confdir, folder);
	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return v;
	}
	while ((de = readdir(d)) != NULL) {
		if (!shared_entry_ok(confdir, folder, de->d_name))
			continue;
		if (n == cap) {
			cap *= 2;
			v = xreallocarray(v, cap + 1, sizeof(*v));
		}
		v[n++] = xstrdup(de->d_name);
		v[n] = NULL;
	}
	closedir(d);
	free(dir);
	qsort(v, n, sizeof(*v), cmp_names);
	return v;
}

void
conf_names_free(char **v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
