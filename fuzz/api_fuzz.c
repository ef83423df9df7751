/* api_fuzz.c - libFuzzer harness for client request bodies: an accepted body gives a REQ_START that decodes to what it said. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../gateway/api.h"
#include "../proto/frame.h"
#include "../proto/proto.h"
#include "common.h"

/*
 * Input: 1 header byte, then an HTTP request body.
 *   h[0]: bits 0-1 the API (OpenAI chat, OpenAI completion, Ollama
 *         chat, Ollama generate), bit 2 the gateway's limits and user,
 *         workflow and key scope, or none
 * api_parse either refuses the body with 400 or 413, a message and an
 * empty result, or accepts it: then ar_start is one frame whose length
 * prefix matches, that decodes to REQ_START for the request id with the
 * same API, stream flag, model and limits; opts, tools and tool_choice
 * are JSON (opts an object); each message's tool calls a JSON array;
 * for the chat APIs one message per element of "messages", each string
 * content passed through unchanged, and for Ollama chat no content
 * that is not a string, null or absent; "think", when accepted, is
 * carried as sent, a boolean or "high", "medium" or "low". Either
 * way, api_parse_tree (the body read by jansson's tree alone, the path
 * before the scanner) gives the same status, message and frame bytes,
 * Ollama's random tool-call ids aside.
 */

#define RQID	"rq-fuzz"

static const struct api_limits	 lims[2] = {
	{ 0, 0, 0, NULL, NULL, NULL, NULL },
	{ 90000, 4, 1500, "alice", "general", "0123456789abcdef", "k1" },
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init(LOG_LVL_ERR);
	return 0;
}

static bool
same_cstr(struct str s, const char *c)
{
	if (c == NULL)
		return s.p == NULL;
	return s.p != NULL && s.n == strlen(c) && memcmp(s.p, c, s.n) == 0;
}

/* s is absent or JSON text (an object when want_object). */
static void
check_json(struct str s, bool want_object, bool want_array, const char *what)
{
	json_t	*v;

	if (s.p == NULL)
		return;
	v = json_loadb(s.p, s.n, JSON_DECODE_ANY, NULL);
	if (v == NULL || (want_object && !json_is_object(v)) ||
	    (want_array && !json_is_array(v)))
		fuzz_fail("not the JSON it should be", what);
	json_decref(v);
}

static void
check_msgs(const struct proto_req_start *rs, int api, json_t *root)
{
	json_t	*msgs = json_object_get(root, "messages"), *c;
	size_t	 i;

	for (i = 0; i < rs->nmsgs; i++) {
		if (rs->msgs[i].role.p == NULL)
			fuzz_fail("message without a role", NULL);
		check_json(rs->msgs[i].tool_calls, false, true, "tool calls");
	}
	if (api != API_OPENAI_CHAT && api != API_OLLAMA_CHAT)
		return;
	if (rs->nmsgs != json_array_size(msgs))
		fuzz_fail("not one message per element of 'messages'", NULL);
	for (i = 0; i < rs->nmsgs; i++) {
		c = json_object_get(json_array_get(msgs, i), "content");
		if (api == API_OLLAMA_CHAT && c != NULL && !json_is_null(c) &&
		    !json_is_string(c))
			fuzz_fail("an Ollama content that is not a string", NULL);
		if (json_is_string(c) && (rs->msgs[i].content.n !=
		    json_string_length(c) || memcmp(rs->msgs[i].content.p,
		    json_string_value(c), json_string_length(c)) != 0))
			fuzz_fail("a string content changed", NULL);
	}
}

static void
check_start(const struct api_req *a, const struct proto_msg *m,
    const struct api_limits *l, int api, json_t *root)
{
	const struct proto_req_start	*rs = &m->m_u.req_start;

	if (m->m_type != PROTO_REQ_START || !same_cstr(m->m_rqid, RQID))
		fuzz_fail("not a REQ_START for the request", NULL);
	if (rs->api != (uint32_t)api || a->ar_api != api ||
	    rs->stream != a->ar_stream || !same_cstr(rs->model, a->ar_model))
		fuzz_fail("API, stream or model differ", a->ar_model);
	if (rs->deadline_ms != l->deadline_ms || rs->ep_limit != l->ep_limit ||
	    rs->ep_wait_ms != l->ep_wait_ms || !same_cstr(rs->user, l->user) ||
	    !same_cstr(rs->workflow, l->workflow) ||
	    !same_cstr(rs->key_scope, l->key_scope) ||
	    !same_cstr(rs->api_key, l->api_key))
		fuzz_fail("the limits did not travel", NULL);
	if (!same_cstr(rs->think, a->ar_think) || (a->ar_think != NULL &&
	    strcmp(a->ar_think, "true") != 0 && strcmp(a->ar_think,
	    "false") != 0 && strcmp(a->ar_think, "\"high\"") != 0 &&
	    strcmp(a->ar_think, "\"medium\"") != 0 && strcmp(a->ar_think,
	    "\"low\"") != 0))
		fuzz_fail("think did not travel as sent", a->ar_think);
	check_json(rs->options, true, false, "opts");
	check_json(rs->tools, false, false, "tools");
	check_json(rs->tool_choice, false, false, "tool_choice");
	check_msgs(rs, api, root);
}

static void
accepted(const struct api_req *a, const struct api_limits *l, int api,
    const char *body, size_t n)
{
	struct proto_msg	 m;
	json_t			*root;
	char			 err[PROTO_ERRLEN];

	if (a->ar_model == NULL || a->ar_start.b_len < FRAME_HDRLEN ||
	    frame_hdr_get((const unsigned char *)a->ar_start.b_data) !=
	    a->ar_start.b_len - FRAME_HDRLEN)
		fuzz_fail("accepted without one whole frame", NULL);
	if (proto_decode(a->ar_start.b_data + FRAME_HDRLEN,
	    a->ar_start.b_len - FRAME_HDRLEN, &m, err) == -1)
		fuzz_fail("REQ_START does not decode", err);
	if ((root = json_loadb(body, n, 0, NULL)) == NULL ||
	    !json_is_object(root))
		fuzz_fail("accepted a body that is not a JSON object", NULL);
	check_start(a, &m, l, api, root);
	json_decref(root);
	proto_msg_free(&m);
}

/* Ollama tool calls' ids, drawn at random ("call_" and 24 hex digits),
 * blanked in a copy of frame f. */
static char *
frame_without_ids(const struct buf *f)
{
	char	*c = malloc(f->b_len + 1), *p = c, *end = c + f->b_len;
	size_t	 i;

	memcpy(c, f->b_data != NULL ? f->b_data : "", f->b_len);
	while ((p = memmem(p, (size_t)(end - p), "call_", 5)) != NULL) {
		p += 5;
		for (i = 0; i < 24 && p + i < end && strchr("0123456789abcdef",
		    p[i]) != NULL && p[i] != '\0'; i++)
			;
		if (i == 24)
			memset(p, 'x', 24);
	}
	return c;
}

/* The body through jansson's tree alone gives the same answer as the
 * scanner's path did (r, status, err, a). */
static void
same_as_tree(int api, const char *body, size_t n,
    const struct api_limits *l, int r, int status, const char *err,
    const struct api_req *a)
{
	struct api_req	 t;
	char		 terr[API_ERRLEN] = "", *x, *y;
	int		 tstatus = 0, tr;

	tr = api_parse_tree(api, body, n, RQID, l, &t, &tstatus, terr);
	if (tr != r || (r == -1 && (tstatus != status ||
	    strcmp(terr, err) != 0)))
		fuzz_fail("the scanner and jansson's tree disagree", terr);
	if (r == 0) {
		x = frame_without_ids(&a->ar_start);
		y = frame_without_ids(&t.ar_start);
		if (a->ar_start.b_len != t.ar_start.b_len ||
		    memcmp(x, y, t.ar_start.b_len) != 0)
			fuzz_fail("the scanner's frame is not the tree's",
			    NULL);
		free(x);
		free(y);
		api_req_clear(&t);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct api_limits	*l;
	struct api_req		 a;
	const char		*body;
	char			 err[API_ERRLEN];
	int			 api, status = 0;

	if (size < 1)
		return 0;
	api = API_OPENAI_CHAT + (data[0] & 3);
	l = &lims[(data[0] >> 2) & 1];
	body = (const char *)data + 1;
	err[0] = '\0';
	if (api_parse(api, body, size - 1, RQID, l, &a, &status, err) == 0) {
		same_as_tree(api, body, size - 1, l, 0, status, err, &a);
		accepted(&a, l, api, body, size - 1);
		api_req_clear(&a);
		return 0;
	}
	same_as_tree(api, body, size - 1, l, -1, status, err, &a);
	if ((status != 400 && status != 413) || err[0] == '\0' ||
	    memchr(err, '\0', sizeof(err)) == NULL)
		fuzz_fail("refused without a 400/413 and a message", err);
	if (a.ar_model != NULL || a.ar_start.b_len != 0)
		fuzz_fail("refused with a result left behind", err);
	return 0;
}
