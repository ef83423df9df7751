/* xmem.h - allocation wrappers that treat out-of-memory as fatal. */
#ifndef SLUICE_XMEM_H
#define SLUICE_XMEM_H

#include <stddef.h>

/* All of these return memory the caller frees with free(3); on
 * allocation failure they call fatal() and do not return. Zero sizes are
 * rounded up to one byte so the result is never NULL. */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);	/* always NUL-terminated */
char	*xasprintf(const char *, ...) __attribute__((format(printf, 1, 2)));

/* Wipe a secret, then free it. NULL is a no-op. */
void	 xfree_secret(char *);

#endif
