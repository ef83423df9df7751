/* fault.c - test-only fault injection, driven by the SLUICE_FAULT variable. */
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "../common/log.h"
#include "../proto/frame.h"
#include "fault.h"

static const char	*faults;
static int		 fault_fd = -1;

static bool
has(const char *name)
{
	const char	*p;
	size_t		 n = strlen(name);

	for (p = faults; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == faults || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/* The N of a "name=N" entry, or 0 without one. */
static uint64_t
number(const char *name)
{
	const char	*p;
	size_t		 n = strlen(name);

	for (p = faults; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == faults || p[-1] == ',') && p[n] == '=')
			return strtoull(p + n + 1, NULL, 10);
	return 0;
}

void
fault_init(int chan_fd)
{
	faults = getenv("SLUICE_FAULT");
	fault_fd = chan_fd;
	if (faults != NULL && *faults != '\0')
		log_warnx("fault injection active: %s", faults);
}

void
fault_at_start(void)
{
	if (faults == NULL)
		return;
	if (has("exit_config"))
		fatalx_code(EX_CONFIG, "fault: exit_config");
	if (has("ignore_term"))
		signal(SIGTERM, SIG_IGN);
	if (has("no_hello"))
		for (;;)
			pause();
}

void
fault_on_request(void)
{
	static const unsigned char bad[] = { 0, 0, 0, 3, 0xc1, 0xc1, 0xc1 };

	if (faults == NULL)
		return;
	if (has("crash"))
		abort();
	if (has("bad_frame"))
		(void)!write(fault_fd, bad, sizeof(bad));
	if (has("hang"))
		for (;;)
			pause();
}

int
fault_version_skew(void)
{
	return faults != NULL && has("bad_version") ? 1 : 0;
}

uint64_t
fault_after_ms(void)
{
	return number("after_ms");
}
