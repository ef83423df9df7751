/* modelsel.c - the request's model field selects a shared workflow (WilmerAI 1.5). */
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "modelsel.h"
#include "names.h"
#include "xmem.h"

bool
modelsel_workflow(const char *confdir, const char *shared_folder,
    const char *model, char *wf, size_t wflen)
{
	const char	*colon, *name = model;
	size_t		 n;

	if (model == NULL || shared_folder == NULL)
		return false;
	n = strlen(model);
	if (n >= 7 && strcmp(model + n - 7, ":latest") == 0)
		n -= 7;
	colon = memchr(model, ':', n);
	if (colon != NULL) {
		name = colon + 1;
		n -= (size_t)(name - model);
	}
	if (!name_is_safe(name, n) || memchr(name, ':', n) != NULL ||
	    n + 1 > wflen)
		return false;
	memcpy(wf, name, n);
	wf[n] = '\0';
	return conf_shared_workflow_exists(confdir, shared_folder, wf);
}

char *
modelsel_echo(const char *user, const char *wf)
{
	return wf != NULL ? xasprintf("%s:%s", user, wf) : xstrdup(user);
}

bool
modelsel_traversal(const char *model)
{
	const char	*p = model, *end;
	size_t		 n;

	if (model == NULL)
		return false;
	for (;;) {
		end = p + strcspn(p, "/\\:");
		n = (size_t)(end - p);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' &&
		    p[1] == '.'))
			return true;
		if (*end == '\0')
			return false;
		p = end + 1;
	}
}
