/* embed.c - WilmerAI's embeddings client (A9.1, A9.2): an endpoint of type openAIEmbeddings or ollamaEmbeddings, texts in, vectors out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/xmem.h"
#include "embed.h"
#include "ep_error.h"

#define MAX_BODY	(64 * 1024 * 1024)	/* a whole answer */
#define READ_TIMEOUT_MS	(120 * 1000)		/* WilmerAI's (30, 120) */

int
embed_target_load(const char *confdir, const struct conf_user *u,
    const char *name, struct embed_target *out, char err[CONF_ERRLEN])
{
	memset(out, 0, sizeof(*out));
	if (conf_endpoint_load(confdir, u != NULL ? u->u_endpoint_subdir : "",
	    name, &out->et_ep, err) == -1)
		return -1;
	if (conf_apitype_load(confdir, out->et_ep->e_apitype_name,
	    &out->et_at, err) == -1) {
		embed_target_free(out);
		return -1;
	}
	if (!conf_apitype_embeds(out->et_at->a_type)) {
		conf_embed_not_embeddings(name, out->et_at->a_type_name, err,
		    CONF_ERRLEN);
		embed_target_free(out);
		return -1;
	}
	return 0;
}

void
embed_target_free(struct embed_target *t)
{
	if (t == NULL)
		return;
	conf_endpoint_free(t->et_ep);
	conf_apitype_free(t->et_at);
	t->et_ep = NULL;
	t->et_at = NULL;
}

void
embed_vecs_free(struct embed_vecs *v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; i < v->ev_n; i++)
		free(v->ev_v[i]);
	free(v->ev_v);
	free(v->ev_dim);
	free(v->ev_model);
	memset(v, 0, sizeof(*v));
	v->ev_prompt_tokens = -1;
}

/* ---- the request -------------------------------------------------- */

static char *
url_of(const struct embed_target *t)
{
	const char	*base = t->et_ep->e_url;
	size_t		 n = strlen(base);

	while (n > 0 && base[n - 1] == '/')
		n--;
	return xasprintf("%.*s%s", (int)n, base,
	    t->et_at->a_type == APIT_OLLAMA_EMBED ? "/api/embed" :
	    "/v1/embeddings");
}

/* {"input": [...], "model": ...} as WilmerAI's requests.post sends it. */
static char *
body_of(const struct embed_target *t, const char *const *texts, size_t n)
{
	json_t	*o = json_object(), *in = json_array();
	char	*s;
	size_t	 i;

	for (i = 0; i < n; i++)
		json_array_append_new(in, json_string(texts[i]));
	json_object_set_new(o, "input", in);
	if (!t->et_ep->e_dont_include_model)
		json_object_set_new(o, "model", json_string(t->et_ep->e_model));
	s = jsonw_dumps(o, JSONW_PYTHON);
	json_decref(o);
	return s;
}

static int
on_data(void *arg, const char *p, size_t n)
{
	struct buf	*b = arg;

	if (b->b_len + n > MAX_BODY)
		return -1;
	buf_add(b, p, n);
	return 0;
}

/* ---- the answer --------------------------------------------------- */

/* A vector: a non-empty array of numbers, copied into *v. */
static int
vector_of(const json_t *a, double **v, size_t *dim)
{
	const json_t	*x;
	size_t		 i;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return -1;
	*dim = json_array_size(a);
	*v = xcalloc(*dim, sizeof(double));
	json_array_foreach(a, i, x) {
		if (!json_is_number(x)) {
			free(*v);
			*v = NULL;
			return -1;
		}
		(*v)[i] = json_number_value(x);
	}
	return 0;
}

static json_int_t
index_of(const json_t *item)
{
	const json_t	*i = json_object_get(item, "index");

	return json_is_integer(i) ? json_integer_value(i) : 0;
}

/* OpenAI's data items in the order of their index (a stable sort:
 * insertion, as the lists are short). Returns a new array, or NULL. */
static json_t *
sorted_data(const json_t *data)
{
	json_t	*out = json_array(), *it;
	size_t	 i, k;

	json_array_foreach(data, i, it) {
		if (!json_is_object(it)) {
			json_decref(out);
			return NULL;
		}
		for (k = json_array_size(out); k > 0 &&
		    index_of(json_array_get(out, k - 1)) > index_of(it); k--)
			;
		json_array_insert(out, k, it);
	}
	return out;
}

/* The vectors of the answer as an array of arrays (new reference),
 * or NULL with why. */
static json_t *
vectors_of(const struct embed_target *t, const json_t *o, const char **why)
{
	json_t	*list, *data, *out, *it;
	size_t	 i;

	if (t->et_at->a_type == APIT_OLLAMA_EMBED) {
		list = json_object_get(o, "embeddings");
		*why = "the answer has no 'embeddings' list";
		return json_is_array(list) ? json_incref(list) : NULL;
	}
	*why = "the answer has no 'data' list of objects";
	data = json_object_get(o, "data");
	if (!json_is_array(data) || (list = sorted_data(data)) == NULL)
		return NULL;
	out = json_array();
	json_array_foreach(list, i, it)
		json_array_append(out, json_object_get(it, "embedding"));
	json_decref(list);
	return out;
}

static int64_t
tokens_of(const json_t *o)
{
	const json_t	*n = json_object_get(json_object_get(o, "usage"),
			    "prompt_tokens");

	if (!json_is_integer(n))
		n = json_object_get(o, "prompt_eval_count");
	return json_is_integer(n) ? (int64_t)json_integer_value(n) : -1;
}

/* Validate and copy the answer; NULL on success, else why not. */
static const char *
parse(const struct embed_target *t, const struct buf *b, size_t n,
    struct embed_vecs *out)
{
	json_t		*o = json_loadb(b->b_data ? b->b_data : "", b->b_len,
			    0, NULL), *vs;
	const char	*why = "the answer is not a JSON object";
	size_t		 i;

	if (!json_is_object(o) || (vs = vectors_of(t, o, &why)) == NULL) {
		json_decref(o);
		return why;
	}
	why = NULL;
	if (json_array_size(vs) != n)
		why = "the answer's vector count differs from the text count";
	out->ev_v = xcalloc(n + 1, sizeof(double *));
	out->ev_dim = xcalloc(n + 1, sizeof(size_t));
	for (i = 0; why == NULL && i < n; i++, out->ev_n++)
		if (vector_of(json_array_get(vs, i), &out->ev_v[i],
		    &out->ev_dim[i]) == -1)
			why = "a vector of the answer is not a non-empty list "
			    "of numbers";
	out->ev_prompt_tokens = tokens_of(o);
	if (json_is_string(json_object_get(o, "model")))
		out->ev_model = xstrdup(json_string_value(
		    json_object_get(o, "model")));
	json_decref(vs);
	json_decref(o);
	if (why != NULL)
		embed_vecs_free(out);
	return why;
}

/* ---- the call ----------------------------------------------------- */

static int
post(struct rq *rq, const struct conf_user *u, const struct embed_target *t,
    const char *body, struct buf *ans, struct wresult *res)
{
	struct transport_hooks	 hooks = { rq->rq_wake_fd, 250, rq_wake, rq };
	struct transport_result	 lr;
	struct transport_call	 call;
	struct buf		 auth = BUF_INIT;
	const char		*hdrs[3];
	char			*url = url_of(t);
	int			 r;

	buf_printf(&auth, "Authorization: Bearer %s", t->et_ep->e_api_key);
	hdrs[0] = "Content-Type: application/json";
	hdrs[1] = auth.b_data;
	hdrs[2] = NULL;
	memset(&call, 0, sizeof(call));
	call.url = url;
	call.headers = hdrs;
	call.body = body;
	call.body_len = strlen(body);
	call.connect_timeout_ms = (u != NULL ? u->u_connect_timeout_s : 30) *
	    1000;
	call.read_timeout_ms = READ_TIMEOUT_MS;
	call.on_data = on_data;
	call.arg = ans;
	memset(&lr, 0, sizeof(lr));
	transport_perform(&call, &hooks, &lr);
	r = ep_judge(&lr, t->et_ep, "the answer is larger than 64 MiB", res);
	buf_free(&lr.err_body);
	explicit_bzero(auth.b_data, auth.b_cap);	/* the key */
	buf_free(&auth);
	free(url);
	return r;
}

int
embed_texts(struct rq *rq, const struct conf_user *u,
    const struct embed_target *t, const char *const *texts, size_t n,
    struct embed_vecs *out, struct wresult *res)
{
	struct buf	 ans = BUF_INIT;
	const char	*why;
	char		*body;
	int		 r;

	memset(out, 0, sizeof(*out));
	out->ev_prompt_tokens = -1;
	if (n == 0)
		return 0;
	if (rq_stopped(rq)) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	body = body_of(t, texts, n);
	log_debug("[rq %s] embeddings: %zu text%s to endpoint '%s'",
	    rq->rq_id, n, n == 1 ? "" : "s", t->et_ep->e_name);
	if ((r = post(rq, u, t, body, &ans, res)) == 0 &&
	    (why = parse(t, &ans, n, out)) != NULL) {
		ep_fail(res, t->et_ep, 502, "backend_bad_response", "%s", why);
		r = -1;
	}
	buf_free(&ans);
	free(body);
	return r;
}
