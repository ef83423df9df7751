/* curlcmd.c - CurlCommand's fields checked and its curl command line built: the injection guards and the address guard's URL detection (addendum A3.4.1-A3.4.3). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "curlcmd.h"
#include "netguard.h"

#define CC_NODE		"CurlCommand"
#define CC_TIMEOUT_DEF	30

static const char *const cc_formats[] = { "stdout", "stdout+stderr", "full",
	NULL };
static const char *const cc_onerror[] = { "raise", "return", NULL };

/* curl options whose next argument is their value, never a URL (A3.4.3);
 * an option not listed is taken as a flag, so its next argument is
 * checked as a URL: a false refusal rather than a URL let through. */
static const char *const cc_valopts[] = {
	"-H", "--header", "-d", "--data", "--data-raw", "--data-binary",
	"--data-urlencode", "-F", "--form", "--form-string", "-o", "--output",
	"-A", "--user-agent", "-e", "--referer", "-b", "--cookie", "-c",
	"--cookie-jar", "-u", "--user", "-U", "--proxy-user", "-x", "--proxy",
	"--preproxy", "-T", "--upload-file", "-E", "--cert", "--cert-type",
	"--key", "--key-type", "--pass", "--cacert", "--capath", "-K",
	"--config", "-X", "--request", "--connect-to", "--resolve",
	"--max-filesize", "--max-redirs", "--max-time", "-m",
	"--connect-timeout", "--retry", "--retry-delay", "--retry-max-time",
	"-r", "--range", "-w", "--write-out", "-D", "--dump-header",
	"--interface", "--limit-rate", "-y", "--speed-time", "-Y",
	"--speed-limit", "-z", "--time-cond", "--socks5", "--socks5-hostname",
	"--socks4", "--socks4a", NULL
};

/* The arguments as the node resolves them, and what guards them. */
struct ccargs {
	char		**ca_v;		/* resolved, NULL-ended */
	size_t		  ca_n;
	bool		  ca_noopt;	/* blockOptionInjection */
	bool		  ca_anyscheme;	/* allowSchemeInjection */
	struct netguard	  ca_guard;
	char		**ca_hosts;	/* ca_guard's allowlist, ours */
};

static bool
cc_in(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* Length of a leading "scheme:" (the scheme without the colon), or 0:
 * a letter, then at least min - 1 of letters, digits, '+', '.', '-'. */
static size_t
cc_scheme(const char *s, size_t min)
{
	size_t	 n = 1;

	if (!isalpha((unsigned char)s[0]))
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '+' || s[n] == '.' ||
	    s[n] == '-')
		n++;
	return s[n] == ':' && n >= min ? n : 0;
}

/* s stripped of Python's whitespace, as a new string. */
static char *
cc_strip(const char *s)
{
	size_t	 off, len;

	pystr_strip(s, strlen(s), true, true, &off, &len);
	return xstrndup(s + off, len);
}

/* The non-http(s) scheme, lowercased, that the value r has and its
 * template t did not already carry; NULL when there is none. Caller
 * frees. */
static char *
cc_injected_scheme(const char *t, const char *r)
{
	char	*rs = cc_strip(r), *ts = cc_strip(t), *scheme = NULL;
	size_t	 n = cc_scheme(rs, 2), m = cc_scheme(ts, 2), i;

	if (n > 0 && !(m == n && strncasecmp(ts, rs, n) == 0)) {
		scheme = xstrndup(rs, n);
		for (i = 0; i < n; i++)
			scheme[i] = (char)tolower((unsigned char)scheme[i]);
		if (strcmp(scheme, "http") == 0 ||
		    strcmp(scheme, "https") == 0) {
			free(scheme);
			scheme = NULL;
		}
	}
	free(rs);
	free(ts);
	return scheme;
}

/* "...: R!r (from template T!r). " */
static void
cc_blocked(struct buf *err, const char *what, const char *r, const char *t)
{
	buf_printf(err, CC_NODE " blocked %s produced by variable "
	    "substitution: ", what);
	pyfmt_repr_str(err, r, strlen(r));
	buf_adds(err, " (from template ");
	pyfmt_repr_str(err, t, strlen(t));
	buf_adds(err, "). ");
}

/* A3.4.2 for one argument: template t resolved to r. */
static int
cc_guard_arg(const struct ccargs *a, const char *t, const char *r,
    struct buf *err)
{
	char	*scheme, *what;

	if (a->ca_noopt && r[0] == '-' && t[0] != '-') {
		cc_blocked(err, "an option-like argument", r, t);
		buf_adds(err, "A substituted value starting with '-' is "
		    "treated by curl as an option. Disable "
		    "'blockOptionInjection' if this is intentional.");
		return -1;
	}
	if (a->ca_noopt && r[0] == '@' && t[0] != '@') {
		cc_blocked(err, "an '@'-prefixed argument", r, t);
		buf_adds(err, "curl reads a local file when a data/upload "
		    "value begins with '@' (e.g. -d @file), so a substituted "
		    "'@' value can read or exfiltrate a local file. Use "
		    "'--data-raw' to send variable content literally, or "
		    "disable 'blockOptionInjection' if this is intentional.");
		return -1;
	}
	if (!a->ca_anyscheme && (scheme = cc_injected_scheme(t, r)) != NULL) {
		what = xasprintf("a '%s:' URL", scheme);
		cc_blocked(err, what, r, t);
		free(what);
		free(scheme);
		buf_adds(err, "Only http/https schemes may be introduced via "
		    "substitution; a scheme like file://, ftp://, scp://, "
		    "dict://, or gopher:// can read local files or reach "
		    "internal services. Write the scheme literally in the "
		    "args template, or set 'allowSchemeInjection': true to "
		    "permit substituted schemes.");
		return -1;
	}
	return 0;
}

/* Each item str()-ed, variables filled in, guarded. */
static int
cc_resolve(struct ccargs *a, const json_t *args, const struct vars *vs,
    struct buf *err)
{
	const json_t	*e;
	size_t		 i;
	char		*t;

	a->ca_v = xcalloc(json_array_size(args) + 1, sizeof(*a->ca_v));
	json_array_foreach(args, i, e) {
		t = pyfmt_strdup(e);
		a->ca_v[a->ca_n++] = vars_format(vs, t);
		if (cc_guard_arg(a, t, a->ca_v[a->ca_n - 1], err) == -1) {
			free(t);
			return -1;
		}
		free(t);
	}
	return 0;
}

/* Check one URL-position argument v (A3.4.3). An explicit scheme other
 * than http(s) is left to the scheme guard. Any other value is what
 * curl fetches over http, so http://v is checked, whatever v looks
 * like: WilmerAI checks only a v that looks like host[:port], which
 * lets curl fetch "user@10.0.0.1/" or "[::ffff:127.0.0.1]" unchecked
 * (docs/migrating-from-wilmer.md). */
static int
cc_guard_url(const struct ccargs *a, const char *v, struct buf *err)
{
	struct buf	 why = BUF_INIT;
	char		*url;
	size_t		 n = cc_scheme(v, 1);
	int		 rc;

	if (n > 0 && strncmp(v + n, "://", 3) == 0) {
		if (!((n == 4 && strncasecmp(v, "http", 4) == 0) ||
		    (n == 5 && strncasecmp(v, "https", 5) == 0)))
			return 0;
		url = xstrdup(v);
	} else
		url = xasprintf("http://%s", v);
	if ((rc = netguard_check(&a->ca_guard, url, &why)) == -1)
		buf_printf(err, CC_NODE " blocked a request to a disallowed "
		    "address: %s. Adjust the URL, extend 'allowedHosts', or "
		    "disable 'blockPrivateAddresses'.", why.b_data);
	buf_free(&why);
	free(url);
	return rc;
}

/* Walk the arguments as curl reads them and check every URL. */
static int
cc_guard_urls(const struct ccargs *a, struct buf *err)
{
	char *const	*v = a->ca_v;
	size_t		 i;

	for (i = 0; i < a->ca_n; i++) {
		if (strcmp(v[i], "--url") == 0) {
			if (i + 1 < a->ca_n &&
			    cc_guard_url(a, v[i + 1], err) == -1)
				return -1;
			i++;
		} else if (strncmp(v[i], "--url=", 6) == 0) {
			if (cc_guard_url(a, v[i] + 6, err) == -1)
				return -1;
		} else if (cc_in(v[i], cc_valopts))
			i++;
		else if (v[i][0] == '-' && v[i][1] != '\0')
			continue;
		else if (cc_guard_url(a, v[i], err) == -1)
			return -1;
	}
	return 0;
}

/* Is option opt among the arguments, alone or as "opt=value"? */
static bool
cc_has(const struct ccargs *a, const char *opt)
{
	size_t	 i, n = strlen(opt);

	for (i = 0; i < a->ca_n; i++)
		if (strncmp(a->ca_v[i], opt, n) == 0 &&
		    (a->ca_v[i][n] == '\0' || a->ca_v[i][n] == '='))
			return true;
	return false;
}

/* The command line of A3.4.1; takes the resolved arguments. */
static char **
cc_argv(struct ccargs *a, long long maxbytes, char *proxy)
{
	char	**v = xcalloc(a->ca_n + 8, sizeof(*v));
	size_t	  n = 0, i;

	v[n++] = xstrdup("curl");
	if (maxbytes > 0 && !cc_has(a, "--max-filesize")) {
		v[n++] = xstrdup("--max-filesize");
		v[n++] = xasprintf("%lld", maxbytes);
	}
	if (netguard_active(&a->ca_guard) && !cc_has(a, "--max-redirs")) {
		v[n++] = xstrdup("--max-redirs");
		v[n++] = xstrdup("0");
	}
	if (proxy != NULL) {
		v[n++] = xstrdup("-x");
		v[n++] = proxy;
	}
	for (i = 0; i < a->ca_n; i++)
		v[n++] = a->ca_v[i];
	free(a->ca_v);
	a->ca_v = NULL;
	a->ca_n = 0;
	return v;
}

/* proxy: absent or null none; else a string, variables filled in; ""
 * none. *out NULL or a string the caller frees. */
static int
cc_proxy(const json_t *v, const struct vars *vs, char **out, struct buf *err)
{
	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		buf_adds(err, CC_NODE " 'proxy' must be a string URL (e.g., "
		    "'socks5://host:1080').");
		return -1;
	}
	*out = vars_format(vs, json_string_value(v));
	if (**out == '\0') {
		free(*out);
		*out = NULL;
	}
	return 0;
}

/* The fields before the arguments, in WilmerAI's order. */
static int
cc_fields(struct curlcmd *cc, struct ccargs *a, const json_t *node,
    const struct vars *vs, struct buf *err)
{
	const char	*fmt, *onerr;

	if (xf_timeout(CC_NODE, json_object_get(node, "timeout"),
	    CC_TIMEOUT_DEF, &cc->cc_timeout, err) == -1 ||
	    xf_maxbytes(CC_NODE, json_object_get(node, "maxResponseBytes"),
	    &cc->cc_maxbytes, err) == -1 ||
	    xf_bool(CC_NODE, "blockOptionInjection", json_object_get(node,
	    "blockOptionInjection"), false, &a->ca_noopt, err) == -1 ||
	    xf_bool(CC_NODE, "allowSchemeInjection", json_object_get(node,
	    "allowSchemeInjection"), false, &a->ca_anyscheme, err) == -1 ||
	    xf_bool(CC_NODE, "blockPrivateAddresses", json_object_get(node,
	    "blockPrivateAddresses"), false, &a->ca_guard.ng_private,
	    err) == -1 ||
	    xf_hosts(CC_NODE, json_object_get(node, "allowedHosts"), vs,
	    &a->ca_hosts, err) == -1)
		return -1;
	a->ca_guard.ng_hosts = a->ca_hosts;
	if (xf_choice(CC_NODE, "outputFormat", json_object_get(node,
	    "outputFormat"), cc_formats, &fmt, err) == -1 ||
	    xf_choice(CC_NODE, "onError", json_object_get(node, "onError"),
	    cc_onerror, &onerr, err) == -1)
		return -1;
	cc->cc_fmt = fmt == cc_formats[0] ? CURL_STDOUT :
	    fmt == cc_formats[1] ? CURL_BOTH : CURL_FULL;
	cc->cc_return = onerr == cc_onerror[1];
	return 0;
}

static void
cc_args_free(struct ccargs *a)
{
	size_t	 i;

	for (i = 0; a->ca_v != NULL && i < a->ca_n; i++)
		free(a->ca_v[i]);
	free(a->ca_v);
	xf_hosts_free(a->ca_hosts);
}

int
curlcmd_build(struct curlcmd *cc, const json_t *node, const struct vars *vs,
    struct buf *err)
{
	const json_t	*args = json_object_get(node, "args");
	struct ccargs	 a;
	char		*proxy = NULL;
	int		 rc = -1;

	memset(cc, 0, sizeof(*cc));
	memset(&a, 0, sizeof(a));
	if (args == NULL || json_is_null(args))
		buf_adds(err, CC_NODE " node requires an 'args' field (a JSON "
		    "list).");
	else if (!json_is_array(args))
		buf_adds(err, CC_NODE " 'args' must be a JSON list of "
		    "strings.");
	else if (cc_fields(cc, &a, node, vs, err) == 0 &&
	    cc_resolve(&a, args, vs, err) == 0 &&
	    (!netguard_active(&a.ca_guard) || cc_guard_urls(&a, err) == 0) &&
	    cc_proxy(json_object_get(node, "proxy"), vs, &proxy, err) == 0) {
		cc->cc_argv = cc_argv(&a, cc->cc_maxbytes, proxy);
		rc = 0;
	}
	cc_args_free(&a);
	return rc;
}

void
curlcmd_clear(struct curlcmd *cc)
{
	size_t	 i;

	if (cc == NULL || cc->cc_argv == NULL)
		return;
	for (i = 0; cc->cc_argv[i] != NULL; i++)
		free(cc->cc_argv[i]);
	free(cc->cc_argv);
	cc->cc_argv = NULL;
}
