/* confcheck.c - --check-config: load what a user can reach and report problems and warnings. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "../common/conf_template.h"
#include "../common/xmem.h"
#include "confcheck.h"
#include "confcheck_int.h"
#include "gwconf.h"

#define DEFAULT_WF	"_DefaultWorkflow"

/* ---- reports ------------------------------------------------------- */

static void
emit(struct check *k, bool warning, const char *line)
{
	if (warning)
		k->k_warnings++;
	else
		k->k_problems++;
	if (k->k_report != NULL)
		k->k_report(line, warning);
	else
		fprintf(stderr, "%s%s\n", warning ? "warning: " : "", line);
}

void
ck_report(struct check *k, bool warning, const struct ck_ref *ref,
    const char *fmt, ...)
{
	char	 line[CK_LINELEN];
	int	 n = 0, l = 1, c = 1;
	va_list	 ap;

	if (ref != NULL) {
		if (ref->rf_obj != NULL && ref->rf_key != NULL &&
		    json_object_get(ref->rf_obj, ref->rf_key) != NULL)
			jfile_memberpos(ref->rf_file, ref->rf_obj, ref->rf_key,
			    &l, &c);
		else if (ref->rf_arr != NULL)
			jfile_elempos(ref->rf_file, ref->rf_arr, ref->rf_idx,
			    &l, &c);
		n = snprintf(line, sizeof(line), "%s:%d:%d: %s%s",
		    ref->rf_file->jf_path, l, c, ref->rf_what != NULL ?
		    ref->rf_what : "", ref->rf_what != NULL ? ": " : "");
		if (n < 0 || (size_t)n >= sizeof(line))
			n = 0;
	}
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (!warning && k->k_soft != NULL) {
		n = (int)strlen(line);
		snprintf(line + n, sizeof(line) - (size_t)n, " (%s)", k->k_soft);
		warning = true;
	}
	emit(k, warning, line);
}

bool
ck_once(struct check *k, const char *fmt, ...)
{
	char	 key[CK_LINELEN];
	size_t	 i;
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	for (i = 0; i < k->k_nseen; i++)
		if (strcmp(k->k_seen[i], key) == 0)
			return false;
	k->k_seen = xreallocarray(k->k_seen, k->k_nseen + 1,
	    sizeof(*k->k_seen));
	k->k_seen[k->k_nseen++] = xstrdup(key);
	return true;
}

bool
ck_is_variable(const char *s)
{
	return s != NULL && strchr(s, '{') != NULL;
}

/* ---- the user's own references ------------------------------------- */

/* A member of the user file, for positions. */
static struct ck_ref
user_ref(const struct check *k, const char *key)
{
	return (struct ck_ref){ &k->k_user->u_file, k->k_user->u_file.jf_root,
	    key, NULL, 0, key };
}

/* chatPromptTemplateName: WilmerAI builds its templated variables with
 * it, Sluice's completion endpoints without a template of their own. */
static void
check_user_template(struct check *k)
{
	struct ck_ref	 r = user_ref(k, "chatPromptTemplateName");
	const char	*name = k->k_user->u_chat_template;

	if (name == NULL || *name == '\0' || !ck_once(k, "T\t%s", name))
		return;
	k->k_files++;
	ck_template(k, &r, name);
}

/* The user folder's _DefaultWorkflow answers when the categoriser names
 * no category; without one such requests fail, which is a warning. */
static void
check_default(struct check *k)
{
	struct ck_ref	 r = user_ref(k, "routingConfig");
	struct stat	 st;
	char		*path;

	path = xasprintf("%s/Workflows/%s/%s.json", k->k_dir,
	    k->k_user->u_workflow_folder, DEFAULT_WF);
	if (stat(path, &st) == -1 && errno == ENOENT)
		ck_report(k, true, &r, "Workflows/%s/%s.json: no such workflow "
		    "(looked in %s): a categoriser answer that names no "
		    "category will fail", k->k_user->u_workflow_folder,
		    DEFAULT_WF, path);
	else
		ck_workflow(k, &r, k->k_user->u_workflow_folder, DEFAULT_WF,
		    NULL);
	free(path);
}

static void
check_categories(struct check *k, const struct jfile *jf)
{
	struct ck_ref	 r = { jf, NULL, "workflow", NULL, 0, NULL };
	const char	*cat;
	json_t		*v;
	char		*what;

	json_object_foreach(jf->jf_root, cat, v) {
		what = xasprintf("category '%.64s'", cat);
		r.rf_obj = v;
		r.rf_what = what;
		ck_workflow(k, &r, k->k_user->u_workflow_folder,
		    json_string_value(json_object_get(v, "workflow")), NULL);
		free(what);
	}
}

/* Spec section 10: Routing/<routingConfig>.json, the categoriser, each
 * category's workflow and the default, all in the user's folder. */
static void
check_routing(struct check *k)
{
	const struct conf_user	*u = k->k_user;
	struct ck_ref		 r = user_ref(k, "routingConfig");
	struct ck_ref		 cr = user_ref(k, "categorizationWorkflow");
	struct jfile		 jf;
	char			 err[CONF_ERRLEN];

	if (*u->u_routing_config == '\0') {
		r.rf_what = NULL;
		ck_report(k, true, &r, "neither \"customWorkflowOverride\" nor "
		    "\"routingConfig\" is set: a request whose model field "
		    "names no shared workflow fails");
		return;
	}
	k->k_files++;
	if (conf_routing_load(k->k_dir, u->u_routing_config, &jf, err) == -1)
		ck_report(k, false, &r, "%s", err);
	if (*u->u_categorization_workflow == '\0')
		ck_report(k, false, &r, "no \"categorizationWorkflow\" to "
		    "choose among the categories");
	else
		ck_workflow(k, &cr, u->u_workflow_folder,
		    u->u_categorization_workflow, NULL);
	if (jf.jf_root != NULL) {
		ck_file_keys(k, CKK_ROUTING, &jf);
		check_categories(k, &jf);
		jfile_free(&jf);
	}
	check_default(k);
}

/* Every shared workflow: a request's model field can name one even
 * when the user does not list them (allowSharedWorkflows false), but
 * what is wrong with them then is only a warning. Checked last, so
 * what the user's own workflows reach is reported as a problem. */
static void
check_shared(struct check *k)
{
	char	**names = conf_shared_workflows(k->k_dir,
		    k->k_user->u_shared_folder);
	char	 *folder, *soft;
	size_t	  i;

	for (i = 0; names[i] != NULL; i++) {
		folder = xasprintf("%s/%s", k->k_user->u_shared_folder,
		    names[i]);
		soft = xasprintf("via shared workflow '%s', unlisted as "
		    "\"allowSharedWorkflows\" is false but selectable through "
		    "the model field", folder);
		if (!k->k_user->u_allow_shared)
			k->k_soft = soft;
		ck_workflow(k, NULL, folder, DEFAULT_WF, NULL);
		k->k_soft = NULL;
		free(soft);
		free(folder);
	}
	conf_names_free(names);
}

/* The settings files the user names beside its workflows: the memory
 * settings and the ContextCompactor's; and its embeddings endpoint. */
static void
check_settings(struct check *k)
{
	static const struct {
		const char	*key;
		enum ck_kind	 kind;
	} files[] = {
		{ "discussionIdMemoryFileWorkflowSettings", CKK_MEMORY },
		{ "contextCompactorSettingsFile", CKK_COMPACTOR },
	};
	struct ck_ref	 r;
	const char	*name;
	char		*folder;
	size_t		 i;

	folder = xasprintf("Workflows/%s", k->k_user->u_workflow_folder);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		name = json_string_value(json_object_get(
		    k->k_user->u_file.jf_root, files[i].key));
		r = user_ref(k, files[i].key);
		if (name != NULL && *name != '\0')
			ck_settings_file(k, &r, files[i].kind, folder, name);
	}
	free(folder);
	r = user_ref(k, "embeddingEndpointName");
	ck_embed_endpoint(k, &r, k->k_user->u_embed_endpoint,
	    "/v1/embeddings and /api/embed answer HTTP 500");
}

/* Users/_current-user.json, when there is one. */
static void
check_current_user(struct check *k)
{
	ck_settings_file(k, NULL, CKK_CURRENT_USER, "Users", "_current-user");
}

/* ---- the run ------------------------------------------------------- */

static void
check_free(struct check *k)
{
	size_t	 i;

	for (i = 0; i < k->k_nseen; i++)
		free(k->k_seen[i]);
	free(k->k_seen);
	free(k->k_stack);
	conf_user_free(k->k_user);
}

static int
summary(const struct check *k, const struct gw_conf *c, const char *who)
{
	if (k->k_problems > 0) {
		fprintf(stderr, "%d problem%s", k->k_problems,
		    k->k_problems == 1 ? "" : "s");
		if (k->k_warnings > 0)
			fprintf(stderr, ", %d warning%s", k->k_warnings,
			    k->k_warnings == 1 ? "" : "s");
		fprintf(stderr, " in %s\n", c->c_config_dir);
		return EX_CONFIG;
	}
	fprintf(stderr, "configuration OK (%d files checked for user%s '%s'",
	    k->k_files, c->c_users[1] != NULL ? "s" : "", who);
	if (k->k_warnings > 0)
		fprintf(stderr, ", %d warning%s", k->k_warnings,
		    k->k_warnings == 1 ? "" : "s");
	fprintf(stderr, ")\n");
	return 0;
}

/* Everything one user can reach (each user's endpoint and workflow
 * folders may differ: nothing seen for another user counts). */
static void
check_one(struct check *k, const char *user)
{
	char	 err[CONF_ERRLEN];
	size_t	 i;

	for (i = 0; i < k->k_nseen; i++)
		free(k->k_seen[i]);
	k->k_nseen = 0;
	k->k_files++;
	conf_user_free(k->k_user);
	k->k_user = NULL;
	if (conf_user_load(k->k_dir, user, &k->k_user, err) == -1) {
		ck_report(k, false, NULL, "%s", err);
		return;
	}
	ck_keys(k, CKK_USER, &k->k_user->u_file, k->k_user->u_file.jf_root,
	    NULL);
	check_settings(k);
	check_user_template(k);
	if (k->k_user->u_custom_override) {
		struct ck_ref r = user_ref(k, "customWorkflow");

		ck_workflow(k, &r, k->k_user->u_workflow_folder,
		    k->k_user->u_custom_workflow, NULL);
	} else
		check_routing(k);
	check_shared(k);
}

int
confcheck_run(const struct gw_conf *c, void (*report)(const char *, bool))
{
	struct check	 k;
	struct buf	 who = BUF_INIT;
	size_t		 i;
	int		 rc;

	memset(&k, 0, sizeof(k));
	k.k_dir = c->c_config_dir;
	k.k_report = report;
	buf_adds(&who, "");
	check_current_user(&k);
	for (i = 0; c->c_users[i] != NULL; i++) {
		check_one(&k, c->c_users[i]);
		buf_printf(&who, "%s%s", i > 0 ? "', '" : "", c->c_users[i]);
	}
	if (report == NULL)
		rc = summary(&k, c, who.b_data);
	else
		rc = k.k_problems > 0 ? EX_CONFIG : 0;
	buf_free(&who);
	check_free(&k);
	return rc;
}
