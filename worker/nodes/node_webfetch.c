/* node_webfetch.c - WebFetch: one HTTP request from the node's fields, its answer as text, JSON, an envelope or stripped HTML (addendum A3.3). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "../core/node.h"
#include "../tools/htmlstrip.h"
#include "../tools/netguard.h"
#include "../tools/webfetch.h"
#include "../tools/webtext.h"
#include "../tools/xfield.h"

/*
 * WilmerAI's WebFetchHandler. The fields are checked in its order and a
 * bad one fails the node whatever onError says (its ValueError). What
 * happens on the wire is worker/tools/webfetch.c's; this file turns the
 * outcome into the output of A3.3.3 and A3.3.4. Only the node's own
 * headers are sent: no endpoint's or the gateway's key ever is.
 */

#define WF	"WebFetch"

static const char *const wf_formats[] = { "text", "json", "full",
    "html-stripped", NULL };
static const char *const wf_onerror[] = { "raise", "return", NULL };

/* The node's fields, resolved. */
struct wfnode {
	char			*n_url;
	char			*n_method;
	struct webfetch_hdr	*n_hdrs;
	size_t			 n_nhdrs;
	char			*n_body;
	char			*n_proxy;
	char			*n_cabundle;
	struct xnum		 n_timeout;
	bool			 n_redirects, n_verify, n_private;
	long long		 n_cap;
	char			**n_hosts;
	const char		*n_format;
	const char		*n_onerror;
};

static void
wfnode_free(struct wfnode *n)
{
	size_t	 i;

	free(n->n_url);
	free(n->n_method);
	for (i = 0; i < n->n_nhdrs; i++) {
		free(n->n_hdrs[i].wh_name);
		free(n->n_hdrs[i].wh_value);
	}
	free(n->n_hdrs);
	free(n->n_body);
	free(n->n_proxy);
	free(n->n_cabundle);
	xf_hosts_free(n->n_hosts);
}

static json_t *
get(struct node_ctx *x, const char *key)
{
	return json_object_get(x->nx_node, key);
}

/* vars(str(v)): a new string. */
static char *
resolve(struct node_ctx *x, const json_t *v)
{
	return vars_format_value(x->nx_vars, v);
}

/* headers: none when falsy; an object of str() names and resolved
 * str() values. */
static int
wf_headers(struct node_ctx *x, struct wfnode *n, struct buf *err)
{
	json_t		*h = get(x, "headers"), *v;
	const char	*k;

	if (!pyfmt_truthy(h))
		return 0;
	if (!json_is_object(h)) {
		buf_adds(err, WF " 'headers' must be a JSON object.");
		return -1;
	}
	n->n_hdrs = xcalloc(json_object_size(h), sizeof(*n->n_hdrs));
	json_object_foreach(h, k, v) {
		n->n_hdrs[n->n_nhdrs].wh_name = xstrdup(k);
		n->n_hdrs[n->n_nhdrs++].wh_value = resolve(x, v);
	}
	return 0;
}

/* A string field that may be absent or null (*out NULL), else must be
 * a string (msg otherwise); resolved, "" becomes NULL. */
static int
wf_optstr(struct node_ctx *x, const char *key, const char *msg, char **out,
    struct buf *err)
{
	json_t	*v = get(x, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		buf_adds(err, msg);
		return -1;
	}
	*out = resolve(x, v);
	if (**out == '\0') {
		free(*out);
		*out = NULL;
	}
	return 0;
}

/* verify, then caBundle (ignored when verify is false). */
static int
wf_tls(struct node_ctx *x, struct wfnode *n, struct buf *err)
{
	struct stat	 st;

	if (xf_bool(WF, "verify", get(x, "verify"), true, &n->n_verify,
	    err) == -1)
		return -1;
	if (!n->n_verify) {
		log_warnx("WebFetch TLS certificate verification is DISABLED "
		    "(verify=false)");
		return 0;
	}
	if (wf_optstr(x, "caBundle", WF " 'caBundle' must be a string path "
	    "to a CA bundle (PEM) file.", &n->n_cabundle, err) == -1)
		return -1;
	if (n->n_cabundle != NULL && (stat(n->n_cabundle, &st) == -1 ||
	    !S_ISREG(st.st_mode))) {
		buf_adds(err, WF " 'caBundle' file not found: ");
		pyfmt_repr_str(err, n->n_cabundle, strlen(n->n_cabundle));
		buf_adds(err, ".");
		return -1;
	}
	return 0;
}

/* Every field, in WilmerAI's order. 0, or -1 with the message. */
static int
wf_fields(struct node_ctx *x, struct wfnode *n, struct buf *err)
{
	json_t	*m = get(x, "method"), *b = get(x, "body");
	char	*p;

	if (!pyfmt_truthy(get(x, "url"))) {
		buf_adds(err, WF " node requires a 'url' field.");
		return -1;
	}
	n->n_method = m != NULL ? pyfmt_strdup(m) : xstrdup("GET");
	for (p = n->n_method; *p != '\0'; p++)
		*p = (char)toupper((unsigned char)*p);
	if (xf_timeout(WF, get(x, "timeout"), 30, &n->n_timeout, err) ||
	    xf_bool(WF, "allowRedirects", get(x, "allowRedirects"), true,
	    &n->n_redirects, err) ||
	    xf_maxbytes(WF, get(x, "maxResponseBytes"), &n->n_cap, err) ||
	    xf_bool(WF, "blockPrivateAddresses", get(x,
	    "blockPrivateAddresses"), false, &n->n_private, err) ||
	    xf_hosts(WF, get(x, "allowedHosts"), x->nx_vars, &n->n_hosts,
	    err) ||
	    xf_choice(WF, "outputFormat", get(x, "outputFormat"), wf_formats,
	    &n->n_format, err) ||
	    xf_choice(WF, "onError", get(x, "onError"), wf_onerror,
	    &n->n_onerror, err))
		return -1;
	n->n_url = resolve(x, get(x, "url"));
	if (wf_headers(x, n, err) == -1)
		return -1;
	if (b != NULL && !json_is_null(b))
		n->n_body = resolve(x, b);
	if (wf_optstr(x, "proxy", WF " 'proxy' must be a string URL (e.g., "
	    "'socks5://host:1080').", &n->n_proxy, err) == -1)
		return -1;
	return wf_tls(x, n, err);
}

/* requests' check_header_validity: a name starts with neither ':' nor
 * whitespace and holds no ':', CR or LF; a value is empty or starts
 * with no whitespace and holds no CR or LF. Its InvalidHeader is a
 * failed request (onError applies). */
static int
wf_header_ok(const struct wfnode *n, struct buf *err)
{
	const char	*s;
	size_t		 i;
	bool		 name;

	for (i = 0; i < n->n_nhdrs * 2; i++) {
		name = i % 2 == 0;
		s = name ? n->n_hdrs[i / 2].wh_name : n->n_hdrs[i / 2].wh_value;
		if ((*s == '\0' && !name) || (*s != '\0' && *s != ':' &&
		    pystr_space(s, strlen(s)) == 0 &&
		    strpbrk(s, name ? ":\r\n" : "\r\n") == NULL))
			continue;
		buf_printf(err, "Invalid leading whitespace, reserved "
		    "character(s), or return character(s) in header %s: ",
		    name ? "name" : "value");
		pyfmt_repr_str(err, s, strlen(s));
		return -1;
	}
	return 0;
}

/* The headers as a JSON object (server's names and order). */
static json_t *
wf_hdrs_json(const struct webfetch_resp *r)
{
	json_t	*o = json_object();
	size_t	 i;

	for (i = 0; i < r->wr_nhdrs; i++)
		json_object_set_new(o, r->wr_hdrs[i].wh_name,
		    json_string(r->wr_hdrs[i].wh_value));
	return o;
}

/* "full": {"error"?, "status_code", "headers", "body"} as json.dumps
 * writes it; r NULL: an error without a response. */
static void
wf_full(const struct webfetch_resp *r, const char *error, struct buf *out)
{
	json_t		*o = json_object();
	struct buf	 t = BUF_INIT;

	if (error != NULL)
		json_object_set_new(o, "error", json_string(error));
	if (r == NULL) {
		json_object_set_new(o, "status_code", json_null());
		json_object_set_new(o, "headers", json_null());
		json_object_set_new(o, "body", json_null());
	} else {
		webtext(r, &t);
		json_object_set_new(o, "status_code",
		    json_integer(r->wr_status));
		json_object_set_new(o, "headers", wf_hdrs_json(r));
		json_object_set_new(o, "body", json_stringn(t.b_data,
		    t.b_len));
	}
	jsonw_dump(out, o, JSONW_PYTHON);
	json_decref(o);
	buf_free(&t);
}

/* A response's text in format (not "full", nor "json"'s parse). */
static void
wf_body(const struct webfetch_resp *r, const char *format, struct buf *out)
{
	struct buf	 t = BUF_INIT;

	webtext(r, &t);
	if (strcmp(format, "html-stripped") == 0)
		htmlstrip(t.b_data, t.b_len, out);
	else
		buf_add(out, t.b_data, t.b_len);
	buf_free(&t);
}

/* "json": the body parsed and written again; -1 with the parser's
 * message when it is not JSON. */
static int
wf_json(const struct webfetch_resp *r, struct buf *out, struct buf *err)
{
	struct buf	 t = BUF_INIT;
	json_error_t	 je;
	json_t		*v;

	webtext(r, &t);
	v = json_loadb(t.b_data, t.b_len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    &je);
	buf_free(&t);
	if (v == NULL) {
		buf_printf(err, "%s: line %d column %d (char %d)", je.text,
		    je.line, je.column, je.position);
		return -1;
	}
	jsonw_dump(out, v, JSONW_PYTHON);
	json_decref(v);
	return 0;
}

/* A failure (r: its response, or NULL) under onError. */
static int
wf_error(struct node_ctx *x, const struct wfnode *n,
    const struct webfetch_resp *r, const char *msg, struct buf *out,
    struct wresult *res)
{
	log_warnx("WebFetch request failed: %s", log_text(msg));
	if (strcmp(n->n_onerror, "raise") == 0)
		return node_fail(x, res, 500, "%s", msg);
	if (strcmp(n->n_format, "full") == 0)
		wf_full(r, msg, out);
	else if (r != NULL)
		wf_body(r, n->n_format, out);
	else
		buf_adds(out, msg);
	return 0;
}

/* The request and its output. */
static int
wf_fetch(struct node_ctx *x, const struct wfnode *n, struct buf *out,
    struct wresult *res)
{
	struct rq		*rq = x->nx_rq;
	struct transport_hooks	 hooks = { rq->rq_wake_fd, 250, rq_wake, rq };
	struct netguard		 ng = { n->n_private, n->n_hosts };
	struct webfetch_req	 q;
	struct webfetch_resp	 r;
	struct buf		 err = BUF_INIT;
	enum webfetch_result	 wr;
	int			 rc = 0;

	if (node_render_failed(x))
		return -1;	/* the engine says why */
	memset(&q, 0, sizeof(q));
	memset(&r, 0, sizeof(r));
	q = (struct webfetch_req){ .wq_url = n->n_url, .wq_method = n->n_method,
	    .wq_hdrs = n->n_hdrs, .wq_nhdrs = n->n_nhdrs, .wq_body = n->n_body,
	    .wq_timeout_ms = (long)(n->n_timeout.xn_v * 1000 + 0.5),
	    .wq_proxy = n->n_proxy, .wq_verify = n->n_verify,
	    .wq_cabundle = n->n_cabundle, .wq_redirects = n->n_redirects,
	    .wq_cap = n->n_cap, .wq_guard = &ng };
	if (q.wq_timeout_ms < 1)
		q.wq_timeout_ms = 1;
	if (wf_header_ok(n, &err) == -1)
		wr = WEBFETCH_FAILED;
	else if (rq_stopped(rq))
		wr = WEBFETCH_CANCELLED;
	else
		wr = webfetch_run(&q, &hooks, &r, &err);
	if (wr == WEBFETCH_CANCELLED) {
		res->r_status = RQ_CANCELLED;
		rc = -1;
	} else if (wr != WEBFETCH_OK)
		rc = wf_error(x, n, wr == WEBFETCH_HTTP ? &r : NULL,
		    err.b_data, out, res);
	else if (strcmp(n->n_format, "full") == 0)
		wf_full(&r, NULL, out);
	else if (strcmp(n->n_format, "json") != 0)
		wf_body(&r, n->n_format, out);
	else if (wf_json(&r, out, &err) == -1)
		rc = wf_error(x, n, &r, err.b_data, out, res);
	webfetch_resp_free(&r);
	buf_free(&err);
	return rc;
}

static int
webfetch_node(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	struct wfnode	 n;
	struct buf	 err = BUF_INIT;
	int		 rc;

	memset(&n, 0, sizeof(n));
	rq_phase(x->nx_rq, "web fetch");
	if (wf_fields(x, &n, &err) == -1)
		rc = node_fail(x, res, 500, "%s", err.b_data);
	else
		rc = wf_fetch(x, &n, out, res);
	wfnode_free(&n);
	buf_free(&err);
	return rc;
}

/* Its output (an error's too, under onError "return") goes out word by
 * word when it is the streaming responder, as WilmerAI's
 * stream_static_content sends it. */
const struct node_type node_webfetch = { "WebFetch", webfetch_node, true };
