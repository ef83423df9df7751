/* xmem.c - allocation wrappers that treat out-of-memory as fatal. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmem.h"

void *
xmalloc(size_t n)
{
	void	*p = malloc(n ? n : 1);

	if (p == NULL)
		fatal("malloc %zu", n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		fatal("calloc %zu x %zu", nmemb, size);
	return p;
}

void *
xreallocarray(void *old, size_t nmemb, size_t size)
{
	void	*p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		fatalx("reallocarray overflow: %zu x %zu", nmemb, size);
	p = realloc(old, nmemb * size != 0 ? nmemb * size : 1);
	if (p == NULL)
		fatal("realloc %zu x %zu", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	return p;
}

void
xfree_secret(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}
