/* users.c - the users a gateway serves: who a request's model field names, and what to list as models. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/buf.h"
#include "../common/conf.h"
#include "../common/log.h"
#include "../common/pyfmt.h"
#include "../common/xmem.h"
#include "gw.h"
#include "users.h"

static void
free_list(struct gw_user *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(v[i].gu_name);
		free(v[i].gu_shared);
	}
	free(v);
}

int
users_load(struct gw *g, const char *why)
{
	struct conf_user	*u;
	struct gw_user		*v;
	char			 err[CONF_ERRLEN];
	size_t			 n = 0, i;

	while (g->g_conf.c_users[n] != NULL)
		n++;
	v = xcalloc(n > 0 ? n : 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		if (conf_user_load(g->g_conf.c_config_dir,
		    g->g_conf.c_users[i], &u, err) == -1) {
			log_warnx("%s%s", why, err);
			free_list(v, i);
			return -1;
		}
		v[i].gu_name = xstrdup(g->g_conf.c_users[i]);
		v[i].gu_shared = xstrdup(u->u_shared_folder);
		v[i].gu_allow = u->u_allow_shared;
		v[i].gu_owui = pyfmt_truthy(json_object_get(u->u_file.jf_root,
		    "interceptOpenWebUIToolRequests"));
		v[i].gu_redact = conf_user_redacts(u);
		v[i].gu_encrypt = pyfmt_truthy(json_object_get(
		    u->u_file.jf_root, "encryptUsingApiKey"));
		conf_user_free(u);
	}
	free_list(g->g_users, g->g_nusers);
	g->g_users = v;
	g->g_nusers = n;
	return 0;
}

void
users_free(struct gw *g)
{
	free_list(g->g_users, g->g_nusers);
	g->g_users = NULL;
	g->g_nusers = 0;
}

static const struct gw_user *
find(struct gw *g, const char *name, size_t n)
{
	size_t	 i;

	for (i = 0; i < g->g_nusers; i++)
		if (strlen(g->g_users[i].gu_name) == n &&
		    strncasecmp(g->g_users[i].gu_name, name, n) == 0)
			return &g->g_users[i];
	return NULL;
}

bool
users_redacting(struct gw *g, const char *echo)
{
	const struct gw_user	*u;

	if (echo == NULL || g->g_nusers == 0)
		return false;
	if (g->g_nusers == 1)
		return g->g_users[0].gu_redact;
	u = find(g, echo, strcspn(echo, ":"));
	return u != NULL && u->gu_redact;
}

/* name[0..n) is a shared workflow of u: copy it into wf. */
static void
shared(struct gw *g, const struct gw_user *u, const char *name, size_t n,
    char wf[NAME_MAX_LEN + 1])
{
	wf[0] = '\0';
	if (n == 0 || n > NAME_MAX_LEN || !name_is_safe(name, n) ||
	    memchr(name, ':', n) != NULL)
		return;
	memcpy(wf, name, n);
	wf[n] = '\0';
	if (!conf_shared_workflow_exists(g->g_conf.c_config_dir, u->gu_shared,
	    wf))
		wf[0] = '\0';
}

size_t
users_model_len(const char *model)
{
	size_t	 n = strlen(model);

	return n >= 7 && strcmp(model + n - 7, ":latest") == 0 ? n - 7 : n;
}

int
users_select(struct gw *g, const char *model, const struct gw_user **u,
    char wf[NAME_MAX_LEN + 1])
{
	size_t		 n;
	const char	*colon;
	bool		 multi = g->g_nusers > 1;

	wf[0] = '\0';
	*u = g->g_nusers > 0 ? &g->g_users[0] : NULL;
	n = users_model_len(model);
	colon = memchr(model, ':', n);
	if (multi && (*u = find(g, model, colon != NULL ?
	    (size_t)(colon - model) : n)) == NULL)
		return -1;
	if (*u == NULL)
		return 0;
	if (colon != NULL)
		shared(g, *u, colon + 1, n - (size_t)(colon + 1 - model), wf);
	else if (!multi)
		shared(g, *u, model, n, wf);
	return 0;
}

char *
users_list(struct gw *g)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < g->g_nusers; i++)
		buf_printf(&b, "%s%s", i > 0 ? ", " : "", g->g_users[i].gu_name);
	return buf_take(&b);
}

void
users_models(struct gw *g, void (*fn)(void *arg, const char *id), void *arg)
{
	const struct gw_user	*u;
	char			**names, *id;
	size_t			 i, k;

	for (i = 0; i < g->g_nusers; i++) {
		u = &g->g_users[i];
		names = u->gu_allow ? conf_shared_workflows(
		    g->g_conf.c_config_dir, u->gu_shared) : NULL;
		if (names == NULL || names[0] == NULL)
			fn(arg, u->gu_name);
		for (k = 0; names != NULL && names[k] != NULL; k++) {
			id = xasprintf("%s:%s", u->gu_name, names[k]);
			fn(arg, id);
			free(id);
		}
		conf_names_free(names);
	}
}
