/* store_pgsql.c - the store's SQL for PostgreSQL: '?' and '?N' parameters as $N, one statement only. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/xmem.h"
#include "store_pg.h"

/* The length of the quoted text or comment at p (0: none there). */
static size_t
skip_quoted(const char *p)
{
	const char	*e;

	if (*p == '\'' || *p == '"') {
		/* '' inside '...' ends and starts again: the same skip */
		e = strchr(p + 1, *p);
		return e != NULL ? (size_t)(e - p) + 1 : strlen(p);
	}
	if (p[0] == '-' && p[1] == '-')
		return strcspn(p, "\n");
	if (p[0] == '/' && p[1] == '*') {
		e = strstr(p + 2, "*/");
		return e != NULL ? (size_t)(e - p) + 2 : strlen(p);
	}
	return 0;
}

/* A parameter at p ('?' then digits): its number into *np (updating
 * *max); the length of its text. */
static size_t
param(const char *p, int *max, int *np)
{
	size_t	 n = 1;
	long	 v;

	while (isdigit((unsigned char)p[n]))
		n++;
	v = n > 1 ? strtol(p + 1, NULL, 10) : *max + 1;
	*np = v > 32766 ? 32766 : (int)v;
	if (*np > *max)
		*max = *np;
	return n;
}

/* Flag number num in *used, which has room for *have numbers so far. */
static void
mark(bool **used, int *have, int num)
{
	if (num > *have) {
		*used = xreallocarray(*used, (size_t)num + 1, sizeof(**used));
		memset(*used + *have + 1, 0, (size_t)(num - *have) *
		    sizeof(**used));
		*have = num;
	}
	(*used)[num] = true;
}

char *
pgsql_params(const char *sql, int *nparams, bool **used)
{
	struct buf	 b = BUF_INIT;
	const char	*p = sql;
	bool		 body = false, ended = false;
	size_t		 n;
	int		 num, have = 0;

	*nparams = 0;
	*used = NULL;
	while (*p != '\0') {
		if ((n = skip_quoted(p)) > 0 && *p != '\'' && *p != '"') {
			buf_add(&b, p, n);		/* a comment */
			p += n;
			continue;
		}
		if (isspace((unsigned char)*p) || *p == ';') {
			ended |= *p == ';' && body;
			buf_addc(&b, *p++);
			continue;
		}
		if (ended)
			break;				/* a second statement */
		body = true;
		if (n > 0)				/* quoted */
			buf_add(&b, p, n);
		else if (*p == '?') {
			n = param(p, nparams, &num);
			buf_printf(&b, "$%d", num);
			mark(used, &have, num);
		} else {
			buf_addc(&b, *p);
			n = 1;
		}
		p += n;
	}
	if (!body || *p != '\0') {
		buf_free(&b);
		free(*used);
		*used = NULL;
		return NULL;
	}
	buf_adds(&b, "");
	return buf_take(&b);
}
