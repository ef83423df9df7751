/* conf_template.c - PromptTemplates/<name>.json: is the template there and well formed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_template.h"
#include "names.h"
#include "xmem.h"

#define PREFIX		"promptTemplate"
#define SHOWN_LEN	72

/* name for a message: at most 64 bytes, control bytes as '?'. */
static const char *
shown(const char *name, char out[SHOWN_LEN])
{
	char	*p;

	snprintf(out, SHOWN_LEN, "%.64s", name != NULL ? name : "");
	for (p = out; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return out;
}

static int
template_members(const struct jfile *jf, char err[CONF_ERRLEN])
{
	json_t		*root = jf->jf_root, *v;
	const char	*key;

	if (!json_is_object(root))
		return jfile_err(jf, NULL, err, "a prompt template must be an "
		    "object, not %s", json_type_desc(root));
	json_object_foreach(root, key, v)
		if (strncmp(key, PREFIX, sizeof(PREFIX) - 1) == 0 &&
		    !json_is_string(v))
			return jfile_err_member(jf, root, key, err, "'%s' must "
			    "be a string, not %s", key, json_type_desc(v));
	return 0;
}

int
conf_template_load(const char *confdir, const char *name, struct jfile *jf,
    char err[CONF_ERRLEN])
{
	char		*path, sname[SHOWN_LEN];
	int		 rc;

	memset(jf, 0, sizeof(*jf));
	if (name == NULL || !name_is_safe(name, strlen(name))) {
		snprintf(err, CONF_ERRLEN, "refusing unsafe prompt template "
		    "name '%s': a name must be one path component of at most "
		    "%d bytes, with no '/', '\\', control characters or "
		    "leading '.'", shown(name, sname), NAME_MAX_LEN);
		return -1;
	}
	path = xasprintf("%s/PromptTemplates/%s.json", confdir != NULL ?
	    confdir : ".", name);
	rc = jfile_load(path, jf, err);
	if (rc == -1 && (errno == ENOENT || errno == ENOTDIR))
		snprintf(err, CONF_ERRLEN, "PromptTemplates/%s.json: no such "
		    "prompt template '%s' (looked in %s)", name, name, path);
	else if (rc == 0 && (rc = template_members(jf, err)) == -1)
		jfile_free(jf);
	free(path);
	return rc;
}

int
conf_template_check(const char *confdir, const char *name,
    char err[CONF_ERRLEN])
{
	struct jfile	 jf;

	if (conf_template_load(confdir, name, &jf, err) == -1)
		return -1;
	jfile_free(&jf);
	return 0;
}
