/* modelsel.c - what a request's model field may be, and how a response echoes it. */
#include <stdio.h>
#include <string.h>

#include "modelsel.h"
#include "xmem.h"

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
