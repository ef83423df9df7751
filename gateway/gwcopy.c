/* gwcopy.c - sluice-gateway --copy-store FROM TO: refuse passwords and unknown schemes, then let sluice-worker copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "../common/pgurl.h"
#include "gwconf.h"
#include "gwcopy.h"
#include "gwimport.h"

/* 0, or EX_USAGE after saying why arg cannot be passed on. */
static int
refuse(const char *arg, const char *role)
{
	char	*name;

	if (pgurl_is(arg) && pgurl_has_password(arg)) {
		name = pgurl_name(arg);
		fprintf(stderr, "sluice-gateway: --copy-store: the %s URL %s "
		    "holds a password, which anyone on this machine can read "
		    "in the process list: remove it from the URL and put it "
		    "in the environment variable PGPASSWORD, or in a password "
		    "file (~/.pgpass, or the file PGPASSFILE names), which "
		    "libpq reads\n", role, name);
		free(name);
		return EX_USAGE;
	}
	if (!pgurl_is(arg) && strstr(arg, "://") != NULL) {
		fprintf(stderr, "sluice-gateway: --copy-store: %s '%s' is no "
		    "store: give a SQLite file, a state folder, or a "
		    "postgresql:// (postgres://) URL\n", role, arg);
		return EX_USAGE;
	}
	return 0;
}

int
gwcopy_run(const struct gw_conf *c)
{
	int	 r;

	if ((r = refuse(c->c_copy_from, "FROM")) != 0 ||
	    (r = refuse(c->c_copy_to, "TO")) != 0)
		return r;
	return gwimport_run(c);
}
