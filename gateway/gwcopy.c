/* gwcopy.c - sluice-gateway --copy-store FROM TO: refuse passwords and unknown schemes, then let sluice-worker copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "../common/pgurl.h"
#include "gwconf.h"
#include "gwcopy.h"
#include "gwimport.h"
#include "storeconf.h"

/* 0, or EX_USAGE after saying why arg cannot be passed on. */
static int
refuse(const char *arg, const char *role)
{
	char	 what[48];

	snprintf(what, sizeof(what), "--copy-store: the %s URL", role);
	if (storeconf_no_password(what, arg, NULL) == -1)
		return EX_USAGE;
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
