/* buf.h - growable byte buffers and borrowed string views. */
#ifndef SLUICE_BUF_H
#define SLUICE_BUF_H

#include <stdbool.h>
#include <stddef.h>

/* A borrowed, not NUL-terminated view. Valid as long as its owner. */
struct str {
	const char	*p;
	size_t		 n;
};

#define STR_NULL_INIT	{ NULL, 0 }
#define STR_NULL	((struct str)STR_NULL_INIT)
#define STR_LIT(s)	((struct str){ (s), sizeof(s) - 1 })

/* Owned growable buffer. b_data is always NUL-terminated (when not NULL)
 * so text can be used as a C string; b_len excludes the terminator. */
struct buf {
	char	*b_data;
	size_t	 b_len;
	size_t	 b_cap;
};

#define BUF_INIT	{ NULL, 0, 0 }

void	 buf_init(struct buf *);
void	 buf_free(struct buf *);		/* releases memory, reinits */
void	 buf_reset(struct buf *);		/* length 0, keeps memory */
void	 buf_reserve(struct buf *, size_t);	/* room for n more bytes */
void	 buf_add(struct buf *, const void *, size_t);
void	 buf_adds(struct buf *, const char *);
void	 buf_addc(struct buf *, char);
void	 buf_printf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 buf_drain(struct buf *, size_t);	/* drop n bytes from front */
/* Hand the data to the caller (free with free(3)); buf is reinited. */
char	*buf_take(struct buf *);

/* Views. */
struct str	str_from(const char *);		/* NULL gives STR_NULL */
bool		str_eq(struct str, const char *);
bool		str_eqi(struct str, const char *);	/* ASCII nocase */
char		*str_dup(struct str);		/* caller frees */

#endif
