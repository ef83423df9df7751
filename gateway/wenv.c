/* wenv.c - the environment a worker starts with: the gateway's, less what is the gateway's alone, plus the store's URL. */
#include <stdlib.h>
#include <string.h>

#include "../common/xmem.h"
#include "wenv.h"

extern char	**environ;

/* Variables that belong to the gateway alone: workers must not talk to
 * systemd or think they were socket-activated; the store's URL comes
 * from the gateway's settings, not from whoever started it. */
static const char *const private_env[] = {
	"NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID=", "LISTEN_FDS=",
	"LISTEN_PID=", "LISTEN_FDNAMES=", WENV_STORE "=", NULL,
};

static int
is_private(const char *var)
{
	size_t	 j;

	for (j = 0; private_env[j] != NULL; j++)
		if (strncmp(var, private_env[j], strlen(private_env[j])) == 0)
			return 1;
	return 0;
}

void
wenv_build(struct wenv *we, const char *store_url)
{
	size_t	 n = 0, i, k = 0;

	while (environ[n] != NULL)
		n++;
	we->we_env = xcalloc(n + 2, sizeof(*we->we_env));
	we->we_store = NULL;
	for (i = 0; i < n; i++)
		if (!is_private(environ[i]))
			we->we_env[k++] = environ[i];
	if (store_url != NULL) {
		we->we_store = xasprintf(WENV_STORE "=%s", store_url);
		we->we_env[k++] = we->we_store;
	}
}

void
wenv_free(struct wenv *we)
{
	free(we->we_env);
	xfree_secret(we->we_store);
	we->we_env = NULL;
	we->we_store = NULL;
}
