/* xfield.h - the fields WebFetch, CurlCommand and MCPToolCall share, checked as WilmerAI checks them (addendum A3.1). */
#ifndef SLUICE_XFIELD_H
#define SLUICE_XFIELD_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/buf.h"
#include "../core/vars.h"

/*
 * Every check runs before anything leaves the worker, and a failure is
 * WilmerAI's ValueError: the node fails whatever its onError says. The
 * message (its text, without a node prefix) is appended to err and the
 * call returns -1; on success it returns 0 and sets *out. node is the
 * type name the message starts with ("WebFetch"). v is the field's
 * value as written, NULL when absent (the default applies).
 */

/* A number as the user wrote it: an integer stays one in messages
 * ("after 2 seconds" against "after 2.0 seconds" for "2"). */
struct xnum {
	double	 xn_v;
	bool	 xn_int;
};

/* timeout: a JSON number, or a string Python's float() reads; > 0. */
int	xf_timeout(const char *node, const json_t *v, double def,
	    struct xnum *out, struct buf *err);

/* n as Python's repr() writes it: 2, 2.0, 7.5. */
void	xf_num_repr(struct buf *, const struct xnum *n);

/* A boolean field: JSON true or false only. */
int	xf_bool(const char *node, const char *field, const json_t *v,
	    bool def, bool *out, struct buf *err);

/* maxResponseBytes: Python's int() of the value (default 10 MiB);
 * <= 0 means no cap. */
#define XF_MAXBYTES_DEF	10485760LL
int	xf_maxbytes(const char *node, const json_t *v, long long *out,
	    struct buf *err);

/* One of choices (NULL-terminated; choices[0] is the default). *out
 * points into choices. */
int	xf_choice(const char *node, const char *field, const json_t *v,
	    const char *const *choices, const char **out, struct buf *err);

/* allowedHosts: absent or null gives *out = NULL (no allowlist); else
 * each entry str()-ed, variables filled in from vs, stripped and
 * lowercased, empties and repeats dropped: a NULL-terminated list the
 * caller frees with xf_hosts_free. A list that ends up empty is an
 * error (fail closed). */
int	xf_hosts(const char *node, const json_t *v, const struct vars *vs,
	    char ***out, struct buf *err);
void	xf_hosts_free(char **);

#endif
