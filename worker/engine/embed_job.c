/* embed_job.c - the embeddings routes' job: the request's texts through its user's embeddingEndpointName, the vectors back as one JSON text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/conf.h"
#include "../../common/json.h"
#include "../../common/log.h"
#include "../../common/pyfmt.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "../llm/embed.h"
#include "embed_job.h"

/* The answer goes out in REQ_CHUNKs of at most this many bytes (the
 * gateway joins them): a frame holds at most 16 MiB. */
#define SLICE	(1024 * 1024)

/* Mark res failed with http and code; returns its message buffer
 * (RQ_MSGLEN bytes) for the caller to write. */
static char *
failed(struct wresult *res, uint32_t http, const char *code)
{
	res->r_status = RQ_ERROR;
	res->r_http = http;
	snprintf(res->r_code, sizeof(res->r_code), "%s", code);
	return res->r_message;
}

/* The user's embeddings endpoint, or -1 with res filled. */
static int
target(struct rq *rq, const struct conf_user *u, struct embed_target *t,
    struct wresult *res)
{
	const char	*sub = u->u_endpoint_subdir;
	char		 err[CONF_ERRLEN];

	if (*u->u_embed_endpoint == '\0') {
		snprintf(failed(res, 404, "no_embeddings_endpoint"), RQ_MSGLEN,
		    "user '%s' has no embeddings endpoint: set "
		    "\"embeddingEndpointName\" in %s to an endpoint of "
		    "Endpoints/%s%s whose ApiType is openAIEmbeddings or "
		    "ollamaEmbeddings", u->u_name,
		    u->u_file.jf_path, sub, *sub != '\0' ? "/" : "");
		return -1;
	}
	if (embed_target_load(rq->rq_confdir, u, u->u_embed_endpoint, t,
	    err) == -1) {
		snprintf(failed(res, 500, "config_error"), RQ_MSGLEN,
		    "embeddingEndpointName: %s", err);
		return -1;
	}
	return 0;
}

/* The backend's prompt tokens, else WilmerAI's estimate of the texts. */
static int64_t
prompt_tokens(const struct embed_vecs *v, char *const *texts, size_t n)
{
	int64_t	 sum = 0;
	size_t	 i;

	if (v->ev_prompt_tokens >= 0)
		return v->ev_prompt_tokens;
	for (i = 0; i < n; i++)
		sum += tokens_estimate(texts[i], strlen(texts[i]),
		    TOKENS_MARGIN);
	return sum;
}

/* {"model", "prompt_tokens", "embeddings"} into out (proto.h). */
static void
answer_json(struct buf *out, const struct embed_vecs *v, int64_t tokens)
{
	size_t	 i, j;

	buf_adds(out, "{\"model\":");
	if (v->ev_model != NULL) {
		buf_addc(out, '"');
		json_escape(out, v->ev_model, strlen(v->ev_model));
		buf_addc(out, '"');
	} else
		buf_adds(out, "null");
	buf_printf(out, ",\"prompt_tokens\":%lld,\"embeddings\":[",
	    (long long)tokens);
	for (i = 0; i < v->ev_n; i++) {
		buf_adds(out, i > 0 ? ",[" : "[");
		for (j = 0; j < v->ev_dim[i]; j++) {
			if (j > 0)
				buf_addc(out, ',');
			pyfmt_float(out, v->ev_v[i][j]);
		}
		buf_addc(out, ']');
	}
	buf_adds(out, "]}");
}

static void
emit(struct rq *rq, const struct buf *b)
{
	size_t	 off, n;

	for (off = 0; off < b->b_len; off += n) {
		n = b->b_len - off < SLICE ? b->b_len - off : SLICE;
		rq_emit(rq, (struct str){ b->b_data + off, n }, STR_NULL);
	}
}

/* Embed the request's texts with t and emit the answer. */
static void
embed(struct rq *rq, const struct proto_req_start *rs,
    const struct conf_user *u, const struct embed_target *t,
    struct wresult *res)
{
	struct embed_vecs	 v;
	struct buf		 b = BUF_INIT;
	char			**texts = xcalloc(rs->nmsgs + 1, sizeof(char *));
	size_t			 i;

	for (i = 0; i < rs->nmsgs; i++)
		texts[i] = str_dup(rs->msgs[i].content);
	rq_phase(rq, "embeddings: %zu text%s to endpoint '%s'", rs->nmsgs,
	    rs->nmsgs == 1 ? "" : "s", t->et_ep->e_name);
	if (embed_texts(rq, u, t, (const char *const *)texts, rs->nmsgs, &v,
	    res) == 0) {
		res->r_prompt_tokens = prompt_tokens(&v, texts, rs->nmsgs);
		answer_json(&b, &v, res->r_prompt_tokens);
		emit(rq, &b);
		embed_vecs_free(&v);
		buf_free(&b);
	}
	for (i = 0; i < rs->nmsgs; i++)
		free(texts[i]);
	free(texts);
}

void
embed_job_run(struct rq *rq, const struct proto_req_start *rs,
    const char *default_user, struct wresult *res)
{
	struct conf_user	*u;
	struct embed_target	 t;
	char			 err[CONF_ERRLEN];
	char			*user = rs->user.n > 0 ? str_dup(rs->user) :
				    xstrdup(default_user != NULL ?
				    default_user : "");
	int			 rc;

	res->r_status = RQ_OK;
	rc = conf_user_load(rq->rq_confdir, user, &u, err);
	free(user);
	log_redact(rc == 0 && conf_user_redacts(u));
	if (rc == -1) {
		snprintf(failed(res, 500, "config_error"), RQ_MSGLEN, "%s",
		    err);
		return;
	}
	if (target(rq, u, &t, res) == 0) {
		embed(rq, rs, u, &t, res);
		embed_target_free(&t);
	}
	conf_user_free(u);
}
