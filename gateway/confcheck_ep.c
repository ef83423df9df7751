/* confcheck_ep.c - --check-config: endpoints, their api types, prompt templates and presets, and backup chains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/conf_template.h"
#include "confcheck_int.h"

#define MAX_HOPS	16	/* endpoints in one failover chain, as the
				 * worker allows (worker/node_standard.c) */

/* The api types that take one prompt string built with a prompt
 * template (the worker's prompt_is_completion). */
static bool
is_completion(enum conf_apitype_kind t)
{
	return t == APIT_OPENAI_COMPLETION || t == APIT_KOBOLD ||
	    t == APIT_OLLAMA_GENERATE;
}

static struct ck_ref
ep_ref(const struct conf_endpoint *ep, const char *key)
{
	return (struct ck_ref){ &ep->e_file, ep->e_file.jf_root, key, NULL, 0,
	    key };
}

/* Completion backends need their template: the endpoint's
 * promptTemplate, or when that is null the user's (checked with the
 * user). Without any the prompt has no role markers. */
static void
check_template(struct check *k, const struct conf_endpoint *ep,
    const struct conf_apitype *at)
{
	struct ck_ref	 r = ep_ref(ep, "promptTemplate");
	const char	*name = ep->e_prompt_template;
	const char	*user = k->k_user->u_chat_template;

	if (!is_completion(at->a_type) ||
	    (name == NULL && user != NULL && *user != '\0'))
		return;
	if (name == NULL || *name == '\0') {
		r.rf_what = NULL;
		ck_report(k, true, &r, "api type '%s' sends one prompt string, "
		    "but neither \"promptTemplate\" nor the user's "
		    "\"chatPromptTemplateName\" names a prompt template: "
		    "prompts go without role markers", at->a_name);
		return;
	}
	if (ck_once(k, "T\t%s", name))
		k->k_files++;
	ck_template(k, &r, name);
}

void
ck_template(struct check *k, const struct ck_ref *ref, const char *name)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN];

	if (conf_template_load(k->k_dir, name, &jf, err) == -1) {
		ck_report(k, false, ref, "%s", err);
		return;
	}
	if (ck_once(k, "K\t%s", name))
		ck_file_keys(k, CKK_TEMPLATE, &jf);
	jfile_free(&jf);
}

/* Load endpoint name (given at ref) and its api type. What is wrong
 * with the endpoint itself is reported the first time it is met.
 * Returns 0 with *ep and *at (NULL when the api type is broken), or
 * -1 when the endpoint cannot be loaded. */
static int
load_endpoint(struct check *k, const struct ck_ref *ref, const char *name,
    struct conf_endpoint **ep, struct conf_apitype **at)
{
	bool		 first = ck_once(k, "E\t%s", name), afirst;
	struct ck_ref	 r;
	char		 err[CONF_ERRLEN];

	*at = NULL;
	if (first)
		k->k_files++;
	if (conf_endpoint_load(k->k_dir, k->k_user->u_endpoint_subdir, name,
	    ep, err) == -1) {
		if (first)
			ck_report(k, false, ref, "%s", err);
		return -1;
	}
	if (first)
		ck_file_keys(k, CKK_ENDPOINT, &(*ep)->e_file);
	if ((afirst = ck_once(k, "A\t%s", (*ep)->e_apitype_name)))
		k->k_files++;
	r = ep_ref(*ep, "apiTypeConfigFileName");
	if (conf_apitype_load(k->k_dir, (*ep)->e_apitype_name, at,
	    err) == -1) {
		if (first)
			ck_report(k, false, &r, "%s", err);
		return 0;
	}
	if (afirst)
		ck_file_keys(k, CKK_APITYPE, &(*at)->a_file);
	if (first && conf_apitype_embeds((*at)->a_type)) {
		conf_embed_not_for_generation(name, (*at)->a_type_name, err,
		    sizeof(err));
		ck_report(k, false, ref, "%s", err);
	}
	if (first)
		check_template(k, *ep, *at);
	return 0;
}

/* preset (given at ref) for endpoint ep, with ep's appendPresetName. */
static void
check_preset(struct check *k, const struct ck_ref *ref,
    const struct conf_endpoint *ep, const struct conf_apitype *at,
    const char *preset, bool backup)
{
	json_t	*p = NULL;
	char	 err[CONF_ERRLEN];

	if (preset == NULL || *preset == '\0' ||
	    !ck_once(k, "P\t%s\t%s", ep->e_name, preset))
		return;
	k->k_files++;
	if (conf_preset_resolve_ep(k->k_dir, k->k_user, ep, at, preset, &p,
	    err) == 0)
		json_decref(p);
	else if (backup)
		ck_report(k, false, ref, "%s (for backup endpoint '%s')", err,
		    ep->e_name);
	else
		ck_report(k, false, ref, "%s", err);
}

/* chain[0..n) with name after it closes a loop: report it once, as the
 * loop read from its smallest name. */
static void
report_cycle(struct check *k, const struct ck_ref *ref,
    struct conf_endpoint **chain, size_t n, const char *name)
{
	char	 text[CK_LINELEN];
	size_t	 from, min, i, j, len = 0;

	for (from = 0; strcmp(chain[from]->e_name, name) != 0; from++)
		;
	for (min = i = from; i < n; i++)
		if (strcmp(chain[i]->e_name, chain[min]->e_name) < 0)
			min = i;
	text[0] = '\0';
	for (j = 0; j <= n - from && len < sizeof(text); j++) {
		i = from + (min - from + j) % (n - from);
		len += (size_t)snprintf(text + len, sizeof(text) - len,
		    "%s%s", j > 0 ? " -> " : "", chain[i]->e_name);
	}
	if (ck_once(k, "F\t%s", text))
		ck_report(k, false, ref, "failover cycle: %s", text);
}

static bool
in_chain(struct conf_endpoint **chain, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strcmp(chain[i]->e_name, name) == 0)
			return true;
	return false;
}

void
ck_endpoint(struct check *k, const struct ck_ref *epref,
    const struct ck_ref *preref, const char *name, const char *preset)
{
	struct conf_endpoint	*chain[MAX_HOPS], *ep;
	struct conf_apitype	*at;
	struct ck_ref		 er = *epref, pr = *preref;
	size_t			 n = 0, i;

	while (load_endpoint(k, &er, name, &chain[n], &at) == 0) {
		ep = chain[n++];
		if (at != NULL)
			check_preset(k, &pr, ep, at, preset, n > 1);
		conf_apitype_free(at);
		if ((name = ep->e_backup_endpoint) == NULL)
			break;
		er = ep_ref(ep, "backupEndpointName");
		if (in_chain(chain, n, name)) {
			report_cycle(k, &er, chain, n, name);
			break;
		}
		if (n == MAX_HOPS) {
			if (ck_once(k, "L\t%s", ep->e_name))
				ck_report(k, false, &er, "failover chain longer "
				    "than %d endpoints", MAX_HOPS);
			break;
		}
		/* Spec 11: the backup gets backupPresetName, else the
		 * preset before it. */
		if (ep->e_backup_preset != NULL) {
			preset = ep->e_backup_preset;
			pr = ep_ref(ep, "backupPresetName");
		}
	}
	for (i = 0; i < n; i++)
		conf_endpoint_free(chain[i]);
}

void
ck_embed_endpoint(struct check *k, const struct ck_ref *ref, const char *name,
    const char *effect)
{
	struct conf_endpoint	*ep;
	struct conf_apitype	*at = NULL;
	char			 err[CONF_ERRLEN];

	if (name == NULL || *name == '\0' || ck_is_variable(name) ||
	    !ck_once(k, "M\t%s", name))
		return;
	if (conf_endpoint_load(k->k_dir, k->k_user->u_endpoint_subdir, name,
	    &ep, err) == -1) {
		ck_report(k, true, ref, "%s: %s", err, effect);
		return;
	}
	if (conf_apitype_load(k->k_dir, ep->e_apitype_name, &at, err) == -1)
		ck_report(k, true, ref, "%s", err);
	else if (!conf_apitype_embeds(at->a_type)) {
		conf_embed_not_embeddings(name, at->a_type_name, err,
		    sizeof(err));
		ck_report(k, true, ref, "%s", err);
	}
	if (ck_once(k, "E\t%s", name)) {
		k->k_files++;
		ck_file_keys(k, CKK_ENDPOINT, &ep->e_file);
	}
	conf_apitype_free(at);
	conf_endpoint_free(ep);
}
