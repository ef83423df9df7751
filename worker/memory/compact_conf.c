/* compact_conf.c - ContextCompactor's settings file (addendum A5.1): found through the user's contextCompactorSettingsFile, each key checked, WilmerAI's defaults. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/names.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "compactor.h"

#define SUMMARY_SYSTEM	"You are a summarization AI."

static const char *const sys_keys[COMPACT_CALLS] = { "oldSectionSystemPrompt",
	"neutralSummarySystemPrompt", "oldestUpdateSystemPrompt" };
static const char *const prompt_keys[COMPACT_CALLS] = { "oldSectionPrompt",
	"neutralSummaryPrompt", "oldestUpdatePrompt" };
static const char *const prompt_defs[COMPACT_CALLS] = {
	"[MESSAGES_TO_SUMMARIZE]", "[MESSAGES_TO_SUMMARIZE]",
	"[EXISTING_SUMMARY]\n\n[NEW_CONTENT]" };

static int
bad(struct node_ctx *x, struct compact_conf *cc, struct wresult *res,
    const char *key, const char *what, json_t *v)
{
	return node_fail(x, res, 500, "%s: '%s' must be %s, not %s",
	    cc->cc_file.jf_path, key, what, json_type_desc(v));
}

/* A string key (absent or null: def). 0, or -1 with res filled. */
static int
str_key(struct node_ctx *x, struct compact_conf *cc, const char *key,
    const char *def, const char **out, struct wresult *res)
{
	json_t	*v = json_object_get(cc->cc_file.jf_root, key);

	if (v == NULL || json_is_null(v))
		*out = def;
	else if (!json_is_string(v))
		return bad(x, cc, res, key, "a string", v);
	else
		*out = json_string_value(v);
	return 0;
}

/* A number key (absent or null: def; whole: an integer only), as a
 * double. 0, or -1 with res filled. */
static int
num_key(struct node_ctx *x, struct compact_conf *cc, const char *key,
    double def, bool whole, double *out, struct wresult *res)
{
	json_t	*v = json_object_get(cc->cc_file.jf_root, key);

	if (v == NULL || json_is_null(v))
		*out = def;
	else if (whole && !json_is_integer(v))
		return bad(x, cc, res, key, "an integer", v);
	else if (!json_is_number(v))
		return bad(x, cc, res, key, "a number", v);
	else
		*out = json_number_value(v);
	return 0;
}

/* Python's int() of a budget: toward zero, kept within a long. */
static long
py_trunc(double d)
{
	if (d >= (double)LONG_MAX)
		return LONG_MAX;
	if (d <= (double)LONG_MIN)
		return LONG_MIN;
	return (long)trunc(d);
}

static int
fill(struct node_ctx *x, struct compact_conf *cc, struct wresult *res)
{
	double	 mt, rc, oc, lb, lvl;
	size_t	 i;

	if (str_key(x, cc, "endpointName", NULL, &cc->cc_endpoint, res) ||
	    str_key(x, cc, "preset", "", &cc->cc_preset, res) ||
	    num_key(x, cc, "maxResponseSizeInTokens", 750, true, &mt, res) ||
	    num_key(x, cc, "recentContextTokens", 20000, false, &rc, res) ||
	    num_key(x, cc, "oldContextTokens", 20000, false, &oc, res) ||
	    num_key(x, cc, "lookbackStartTurn", 5, true, &lb, res))
		return -1;
	for (i = 0; i < COMPACT_CALLS; i++)
		if (str_key(x, cc, sys_keys[i], SUMMARY_SYSTEM,
		    &cc->cc_system[i], res) || str_key(x, cc, prompt_keys[i],
		    prompt_defs[i], &cc->cc_prompt[i], res))
			return -1;
	lvl = tokens_level(json_string_value(json_object_get(
	    cc->cc_file.jf_root, "wilmerContextEstimationLevel")));
	cc->cc_max_tokens = py_trunc(mt);
	cc->cc_recent = py_trunc(rc * lvl);
	cc->cc_old = py_trunc(oc * lvl);
	cc->cc_lookback = py_trunc(lb);
	return 0;
}

int
compact_conf_load(struct node_ctx *x, struct compact_conf *cc,
    struct wresult *res)
{
	const struct conf_user	*u = x->nx_user;
	json_t			*v = json_object_get(u->u_file.jf_root,
				    "contextCompactorSettingsFile");
	const char		*name = json_string_value(v);
	char			 err[CONF_ERRLEN], *path;
	int			 rc;

	memset(cc, 0, sizeof(*cc));
	if (name == NULL || *name == '\0') {
		log_warnx("[rq %s] ContextCompactor: the user sets no "
		    "contextCompactorSettingsFile; the node answers \"\"",
		    x->nx_rq->rq_id);
		return 0;
	}
	if (!name_is_safe(name, strlen(name)))
		return node_fail(x, res, 500, "refusing unsafe "
		    "contextCompactorSettingsFile '%s'", name);
	path = xasprintf("%s/Workflows/%s/%s.json", x->nx_confdir,
	    u->u_workflow_folder, name);
	rc = jfile_load(path, &cc->cc_file, err);
	free(path);
	if (rc == -1) {
		log_warnx("[rq %s] ContextCompactor settings: %s; the node "
		    "answers \"\"", x->nx_rq->rq_id, err);
		return 0;
	}
	if (!json_is_object(cc->cc_file.jf_root))
		return node_fail(x, res, 500, "%s: the ContextCompactor "
		    "settings must be a JSON object, not %s",
		    cc->cc_file.jf_path, json_type_desc(cc->cc_file.jf_root));
	return fill(x, cc, res) == -1 ? -1 : 1;
}

void
compact_conf_free(struct compact_conf *cc)
{
	jfile_free(&cc->cc_file);
	memset(cc, 0, sizeof(*cc));
}
