/* xfield.c - the fields WebFetch, CurlCommand and MCPToolCall share, checked as WilmerAI checks them (addendum A3.1). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "xfield.h"

/* "{node} '{field}' {what}; got {repr(v)}." into err; returns -1. */
static int
got(struct buf *err, const char *node, const char *field, const char *what,
    const json_t *v)
{
	buf_printf(err, "%s '%s' %s; got ", node, field, what);
	pyfmt_repr(err, v);
	buf_addc(err, '.');
	return -1;
}

/* s stripped of Python's whitespace, as a new string. */
static char *
stripped(const char *s)
{
	size_t	 off, len;

	pystr_strip(s, strlen(s), true, true, &off, &len);
	return xstrndup(s + off, len);
}

/* Python's float(s) for the decimal forms a user writes ("5", " 2.5 ",
 * "1e3", "inf"): 0 with *d set, -1 when float() would refuse it. Hex,
 * which strtod reads and Python does not, is refused. */
static int
py_float(const char *s, double *d)
{
	char	*t = stripped(s), *end;
	int	 r = -1;

	if (*t != '\0' && strpbrk(t, "xX") == NULL) {
		errno = 0;
		*d = strtod(t, &end);
		r = *end == '\0' && errno != EINVAL ? 0 : -1;
	}
	free(t);
	return r;
}

int
xf_timeout(const char *node, const json_t *v, double def, struct xnum *out,
    struct buf *err)
{
	static const char	 nan_[] = "must be a number of seconds";
	json_t			*conv;
	int			 r;

	if (v == NULL) {
		*out = (struct xnum){ def, def == floor(def) };
		return 0;
	}
	if (json_is_boolean(v))
		return got(err, node, "timeout", nan_, v);
	if (json_is_integer(v))
		*out = (struct xnum){ (double)json_integer_value(v), true };
	else if (json_is_real(v))
		*out = (struct xnum){ json_real_value(v), false };
	else if (!json_is_string(v) ||
	    py_float(json_string_value(v), &out->xn_v) == -1)
		return got(err, node, "timeout", nan_, v);
	else
		out->xn_int = false;
	/* NaN and infinity pass WilmerAI's "<= 0" test and then break the
	 * call later; here they are refused as not positive. */
	if (out->xn_v > 0 && isfinite(out->xn_v))
		return 0;
	conv = out->xn_int ? json_integer((json_int_t)out->xn_v) :
	    json_real(out->xn_v);
	if (conv == NULL)	/* json_real refuses NaN and infinity */
		conv = json_string(isnan(out->xn_v) ? "nan" : "inf");
	if (json_is_string(conv)) {
		buf_printf(err, "%s 'timeout' must be a positive number of "
		    "seconds; got %s.", node, json_string_value(conv));
		r = -1;
	} else
		r = got(err, node, "timeout",
		    "must be a positive number of seconds", conv);
	json_decref(conv);
	return r;
}

void
xf_num_repr(struct buf *b, const struct xnum *n)
{
	if (n->xn_int && fabs(n->xn_v) < 9007199254740992.0)
		buf_printf(b, "%lld", (long long)n->xn_v);
	else
		pyfmt_float(b, n->xn_v);
}

int
xf_bool(const char *node, const char *field, const json_t *v, bool def,
    bool *out, struct buf *err)
{
	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (!json_is_boolean(v))
		return got(err, node, field,
		    "must be a boolean (true/false)", v);
	*out = json_is_true(v);
	return 0;
}

int
xf_maxbytes(const char *node, const json_t *v, long long *out, struct buf *err)
{
	static const char	 what[] = "must be an integer";
	double			 d;

	if (v == NULL) {
		*out = XF_MAXBYTES_DEF;
		return 0;
	}
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_real(v) && isfinite(d = json_real_value(v))) {
		d = trunc(d);
		*out = d >= 9.2e18 ? LLONG_MAX : d <= -9.2e18 ? LLONG_MIN :
		    (long long)d;
		return 0;
	}
	if (json_is_string(v) && pystr_int(json_string_value(v), out) == 0)
		return 0;
	return got(err, node, "maxResponseBytes", what, v);
}

int
xf_choice(const char *node, const char *field, const json_t *v,
    const char *const *choices, const char **out, struct buf *err)
{
	size_t	 i;

	if (v == NULL) {
		*out = choices[0];
		return 0;
	}
	for (i = 0; json_is_string(v) && choices[i] != NULL; i++)
		if (strcmp(json_string_value(v), choices[i]) == 0) {
			*out = choices[i];
			return 0;
		}
	buf_printf(err, "%s '%s' must be one of (", node, field);
	for (i = 0; choices[i] != NULL; i++) {
		if (i > 0)
			buf_adds(err, ", ");
		pyfmt_repr_str(err, choices[i], strlen(choices[i]));
	}
	buf_adds(err, i == 1 ? ",); got " : "); got ");
	pyfmt_repr(err, v);
	buf_addc(err, '.');
	return -1;
}

/* Add host h (owned) to the list unless it is empty or already there. */
static void
host_add(char ***l, size_t *n, char *h)
{
	size_t	 i;

	for (i = 0; i < *n && *h != '\0'; i++)
		if (strcmp((*l)[i], h) == 0)
			break;
	if (*h == '\0' || i < *n) {
		free(h);
		return;
	}
	*l = xreallocarray(*l, *n + 2, sizeof(**l));
	(*l)[(*n)++] = h;
	(*l)[*n] = NULL;
}

/* One allowedHosts entry: str(), variables, strip, ASCII lowercase (a
 * host name; Python's lower() would also fold non-ASCII letters, which
 * no host name on the wire has). Caller frees. */
static char *
host_of(const json_t *e, const struct vars *vs)
{
	char	*sub, *h, *p;

	sub = vs != NULL ? vars_format_value(vs, e) : pyfmt_strdup(e);
	h = stripped(sub);
	for (p = h; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	free(sub);
	return h;
}

int
xf_hosts(const char *node, const json_t *v, const struct vars *vs,
    char ***out, struct buf *err)
{
	char	**l = NULL;
	size_t	  n = 0, i;

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_array(v)) {
		buf_printf(err, "%s 'allowedHosts' must be a JSON list of "
		    "host strings.", node);
		return -1;
	}
	for (i = 0; i < json_array_size(v); i++)
		host_add(&l, &n, host_of(json_array_get(v, i), vs));
	if (n == 0) {
		buf_printf(err, "%s 'allowedHosts' was configured but contains "
		    "no usable host entries; refusing to run with no effective "
		    "host restriction.", node);
		return -1;
	}
	*out = l;
	return 0;
}

void
xf_hosts_free(char **l)
{
	size_t	 i;

	for (i = 0; l != NULL && l[i] != NULL; i++)
		free(l[i]);
	free(l);
}
