/* storeconf.c - the "store" setting: where the workers' shared database is (a PostgreSQL URL, or SQLite in state_dir). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/pgurl.h"
#include "../common/xmem.h"
#include "storeconf.h"

/* Why url cannot be the store, or NULL when it can. */
static const char *
url_problem(const char *url)
{
	if (!pgurl_is(url))
		return "must be a postgresql:// (or postgres://) URL; without "
		    "a \"store\" the database is SQLite, state_dir/sluice.db";
	if (strpbrk(url, " \t\r\n") != NULL)
		return "must not hold spaces or line breaks (write them as "
		    "%20 in a URL)";
	return NULL;
}

static int
only_url(const struct jfile *jf, json_t *v, char err[CONF_ERRLEN])
{
	const char	*key;
	json_t		*m;

	json_object_foreach(v, key, m)
		if (strcmp(key, "url") != 0)
			return jfile_err_member(jf, v, key, err, "unknown "
			    "setting 'store.%s' (known: url)", key);
	return 0;
}

int
storeconf_json(char **url, const struct jfile *jf, json_t *parent,
    json_t *v, char err[CONF_ERRLEN])
{
	const char	*why;
	json_t		*u;

	if (!json_is_object(v))
		return jfile_err_member(jf, parent, "store", err, "'store' "
		    "must be an object ({\"url\": \"postgresql://...\"}), not "
		    "%s", json_type_desc(v));
	if (only_url(jf, v, err) == -1)
		return -1;
	if ((u = json_object_get(v, "url")) == NULL || json_is_null(u)) {
		xfree_secret(*url);
		*url = NULL;
		return 0;
	}
	if (!json_is_string(u))
		return jfile_err_member(jf, v, "url", err, "'store.url' must "
		    "be a string, not %s", json_type_desc(u));
	if ((why = url_problem(json_string_value(u))) != NULL)
		return jfile_err_member(jf, v, "url", err, "'store.url' %s",
		    why);
	xfree_secret(*url);
	*url = xstrdup(json_string_value(u));
	return 0;
}

int
storeconf_flag(char **url, const char *arg)
{
	const char	*why = url_problem(arg);

	if (why != NULL) {
		fprintf(stderr, "sluice-gateway: --store %s\n", why);
		return -1;
	}
	if (storeconf_no_password("--store: the URL", arg, "or put the URL "
	    "in sluice.json (\"store\": {\"url\": ...}); docs/scaling.md") ==
	    -1)
		return -1;
	xfree_secret(*url);
	*url = xstrdup(arg);
	return 0;
}

int
storeconf_no_password(const char *what, const char *url, const char *hint)
{
	char	*n;

	if (!pgurl_is(url) || !pgurl_has_password(url))
		return 0;
	n = pgurl_name(url);
	fprintf(stderr, "sluice-gateway: %s %s holds a password, which any "
	    "user of this machine can read in /proc/PID/cmdline: leave it "
	    "out and give it in PGPASSWORD or a password file (PGPASSFILE, "
	    "~/.pgpass), which libpq reads%s%s\n", what, n,
	    hint != NULL ? "; " : "", hint != NULL ? hint : "");
	free(n);
	return -1;
}

char *
storeconf_name(const char *url, const char *state_dir)
{
	char	*n, *s;

	if (url == NULL)
		return xasprintf("SQLite %s/sluice.db", state_dir);
	n = pgurl_name(url);
	s = xasprintf("PostgreSQL %s", n);
	free(n);
	return s;
}
