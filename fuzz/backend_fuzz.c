/* backend_fuzz.c - libFuzzer harness for backend replies: SSE and NDJSON parsers against a reference, and the adapters' event parsing. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../worker/llm/backend.h"
#include "../worker/llm/lines.h"
#include "../worker/llm/sse.h"
#include "common.h"

/*
 * Input: 2 header bytes, then a backend's response body.
 *   h[0]: bit 0 NDJSON (else SSE); bits 1-2 the adapter (SSE: OpenAI
 *         chat, OpenAI completion, KoboldCpp, Claude; NDJSON: Ollama
 *         chat, Ollama generate); bit 3 collect tool calls; bits 4-6
 *         the line cap
 *   h[1]: seed of the random chunking; its low 3 bits also make the
 *         recording callback stop after that many events (0: never)
 * 1. The parser (worker/sse.c or worker/lines.c) is fed the body whole,
 *    in 1-byte pieces and in random pieces. What it hands out (events or
 *    lines, a failure, what sse_finish reports) must equal the reference
 *    below, a direct reading of the WHATWG event-stream rules and of
 *    lines.h, which sees the whole body at once. Once the callback says
 *    stop, it is never called again and every later feed fails.
 * 2. The body goes through the parser into the adapter's ad_event as
 *    worker/backend.c does it (events after the end marker skipped, the
 *    first refusal stops the stream); then the whole body goes to
 *    ad_whole. A refusal carries a message and stops the stream, an
 *    accepted whole body marks the end, every token is valid UTF-8.
 */

#define NADAPT	4

static const struct adapter *const sse_ads[NADAPT] = {
	&adapter_openai_chat, &adapter_openai_completion, &adapter_kobold,
	&adapter_claude,
};
static const struct adapter *const nd_ads[NADAPT] = {
	&adapter_ollama_chat, &adapter_ollama_generate, &adapter_ollama_chat,
	&adapter_ollama_generate,
};
static const size_t	 caps[8] = { 1, 4, 7, 16, 64, 300, 4096, 1 << 20 };

/* What a parser run hands out. */
struct rec {
	struct buf	 r_t;		/* transcript */
	unsigned	 r_n;		/* events or lines so far */
	unsigned	 r_stop;	/* answer -1 to event number r_stop */
	int		 r_stopped;
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init(LOG_LVL_ERR);
	return 0;
}

/* ---- recording callbacks ------------------------------------------- */

static int
rec_item(struct rec *r, const char *kind, const char *a, size_t an,
    const char *b, size_t bn)
{
	if (r->r_stopped)
		fuzz_fail("called again after it said stop", kind);
	buf_printf(&r->r_t, "%s %zu:", kind, an);
	buf_add(&r->r_t, a, an);
	buf_printf(&r->r_t, " %zu:", bn);
	buf_add(&r->r_t, b, bn);
	buf_addc(&r->r_t, '\n');
	if (++r->r_n == r->r_stop) {
		r->r_stopped = 1;
		buf_adds(&r->r_t, "STOP\n");
		return -1;
	}
	return 0;
}

static int
rec_event(void *arg, const char *ev, size_t evn, const char *data, size_t n)
{
	if (ev[evn] != '\0' || data[n] != '\0' || memchr(data, '\r', n) ||
	    memchr(ev, '\r', evn) || memchr(ev, '\n', evn))
		fuzz_fail("event or data not NUL-terminated, or CR/LF inside", ev);
	return rec_item(arg, "E", ev, evn, data, n);
}

static int
rec_line(void *arg, const char *line, size_t n)
{
	if (n == 0 || memchr(line, '\n', n))
		fuzz_fail("empty line or LF inside", NULL);
	return rec_item(arg, "L", "", 0, line, n);
}

/* ---- the reference -------------------------------------------------- */

struct sse_ref {
	struct buf	 s_data;
	struct buf	 s_event;
	int		 s_has;
	size_t		 s_comments;
};

/* One complete line; -1 when the data grows past max or the recorder
 * stops. */
static int
sse_ref_line(struct sse_ref *s, struct rec *r, const char *l, size_t n,
    size_t max)
{
	const char	*c = memchr(l, ':', n), *v;
	size_t		 fn = c ? (size_t)(c - l) : n, vn;

	if (n == 0) {
		if (s->s_has && rec_event(r, s->s_event.b_data ?
		    s->s_event.b_data : "", s->s_event.b_len, s->s_data.b_data ?
		    s->s_data.b_data : "", s->s_data.b_len) == -1)
			return -1;
		buf_reset(&s->s_data);
		buf_reset(&s->s_event);
		s->s_has = 0;
		return 0;
	}
	if (l[0] == ':') {
		s->s_comments++;
		return 0;
	}
	v = c ? c + 1 : l + n;
	vn = n - (size_t)(v - l);
	if (vn > 0 && *v == ' ') {
		v++;
		vn--;
	}
	if (fn == 4 && memcmp(l, "data", 4) == 0) {
		if (s->s_has)
			buf_addc(&s->s_data, '\n');
		buf_add(&s->s_data, v, vn);
		s->s_has = 1;
		return s->s_data.b_len > max ? -1 : 0;
	}
	if (fn == 5 && memcmp(l, "event", 5) == 0) {
		buf_reset(&s->s_event);
		buf_add(&s->s_event, v, vn);
	}
	return 0;
}

/* The whole body by the rules; the transcript ends as the parser's. */
static void
sse_ref(const char *p, size_t n, size_t max, struct rec *r)
{
	struct sse_ref	 s = { BUF_INIT, BUF_INIT, 0, 0 };
	size_t		 i = 0, k, bom = 0;
	int		 bad = 0;

	while (bom < 3 && bom < n &&
	    (uint8_t)p[bom] == (uint8_t)"\xef\xbb\xbf"[bom])
		bom++;
	if (bom == 3)
		i = 3;
	/* a stream that ends inside a BOM: undecided bytes, dropped */
	bom = bom < 3 && bom == n && n > 0;
	if (bom)
		i = n;
	while (!bad && i < n) {
		for (k = i; k < n && p[k] != '\r' && p[k] != '\n'; k++)
			;
		if (k - i > max || (k < n && sse_ref_line(&s, r, p + i, k - i,
		    max) == -1)) {
			bad = 1;
			break;
		}
		if (k == n) {
			bom = 1;		/* a partial line is dropped */
			break;
		}
		i = k + (p[k] == '\r' && k + 1 < n && p[k + 1] == '\n' ? 2 : 1);
	}
	buf_printf(&r->r_t, "%s finish %d comments %zu\n", bad ? "FAIL" :
	    "OK", !bad && (s.s_has || bom), s.s_comments);
	buf_free(&s.s_data);
	buf_free(&s.s_event);
}

static void
lines_ref(const char *p, size_t n, size_t max, struct rec *r)
{
	size_t	 i = 0, k, len;
	int	 bad = 0;

	while (!bad && i < n) {
		for (k = i; k < n && p[k] != '\n'; k++)
			;
		len = k - i;
		if (len > max) {
			bad = 1;
			break;
		}
		if (len > 0 && p[i + len - 1] == '\r')
			len--;
		if (len > 0 && rec_line(r, p + i, len) == -1)
			bad = 1;
		i = k + 1;
	}
	buf_printf(&r->r_t, "%s\n", bad ? "FAIL" : "OK");
}

/* ---- the parsers, fed in pieces ------------------------------------ */

/* chunk: 0 whole, 1 bytes, else random pieces from seed. */
static size_t
piece(int chunk, uint32_t *seed, size_t left)
{
	size_t	 k;

	*seed = *seed * 1103515245 + 12345;
	k = chunk == 0 ? left : chunk == 1 ? 1 : 1 + (*seed >> 16) % 17;
	return k < left ? k : left;
}

static void
sse_run(const char *p, size_t n, size_t max, int chunk, uint32_t seed,
    struct rec *r)
{
	struct sse	*s = sse_new(max, rec_event, r);
	size_t		 off = 0, k;
	int		 bad = 0, fin;

	while (off < n) {
		k = piece(chunk, &seed, n - off);
		if (sse_feed(s, p + off, k) == -1)
			bad = 1;
		else if (bad)
			fuzz_fail("sse_feed succeeded after a failure", NULL);
		off += k;
	}
	if (bad && sse_feed(s, "\n\n", 2) != -1)
		fuzz_fail("sse_feed succeeded after a failure", NULL);
	fin = sse_finish(s);
	buf_printf(&r->r_t, "%s finish %d comments %zu\n", bad ? "FAIL" : "OK",
	    fin, sse_comments(s));
	sse_free(s);
}

static void
lines_run(const char *p, size_t n, size_t max, int chunk, uint32_t seed,
    struct rec *r)
{
	struct lines	 l;
	size_t		 off = 0, k;
	int		 bad = 0;

	lines_init(&l, max, rec_line, r);
	while (off < n) {
		k = piece(chunk, &seed, n - off);
		if (lines_feed(&l, p + off, k) == -1)
			bad = 1;
		else if (bad)
			fuzz_fail("lines_feed succeeded after a failure", NULL);
		off += k;
	}
	if (lines_finish(&l) == -1)
		bad = 1;
	buf_printf(&r->r_t, "%s\n", bad ? "FAIL" : "OK");
	lines_free(&l);
}

static void
parsers(const char *p, size_t n, int nd, size_t max, uint8_t seed)
{
	struct rec	 ref = { BUF_INIT, 0, seed & 7, 0 }, r;
	int		 chunk;

	if (nd)
		lines_ref(p, n, max, &ref);
	else
		sse_ref(p, n, max, &ref);
	for (chunk = 0; chunk < 3; chunk++) {
		r = (struct rec){ BUF_INIT, 0, seed & 7, 0 };
		if (nd)
			lines_run(p, n, max, chunk, seed, &r);
		else
			sse_run(p, n, max, chunk, seed, &r);
		if (r.r_t.b_len != ref.r_t.b_len ||
		    memcmp(r.r_t.b_data, ref.r_t.b_data, r.r_t.b_len) != 0) {
			fprintf(stderr, "reference:\n%s\nparser (pieces %d):\n"
			    "%s\n", ref.r_t.b_data, chunk, r.r_t.b_data);
			fuzz_fail("the parser differs from the reference", NULL);
		}
		buf_free(&r.r_t);
	}
	buf_free(&ref.r_t);
}

/* ---- the adapters --------------------------------------------------- */

/* output.c's output_token: the harness checks and keeps the tokens. */
void
output_token(struct call_state *cs, const char *p, size_t n)
{
	json_t	*s;

	/* jansson refuses a string that is not UTF-8 */
	if ((s = json_stringn(p, n)) == NULL)
		fuzz_fail("a token is not valid UTF-8", NULL);
	json_decref(s);
	cs->cs_any = true;
	buf_add(&cs->cs_out->no_text, p, n);
}

struct xfer {
	struct call_state	 x_cs;
	const struct adapter	*x_ad;
	int			 x_bad;
};

static void
check_refusal(const struct call_state *cs)
{
	if (cs->cs_error[0] == '\0' ||
	    memchr(cs->cs_error, '\0', sizeof(cs->cs_error)) == NULL)
		fuzz_fail("a refusal without a message", NULL);
}

/* backend.c's stream_event, on an exact copy of what the parser gave. */
static int
xfer_event(struct xfer *x, const char *ev, const char *data, size_t n,
    int nul)
{
	char	*copy;
	int	 rc;

	if (x->x_bad)
		fuzz_fail("an event after the adapter refused one", NULL);
	if (x->x_cs.cs_done)
		return 0;
	/* NDJSON lines are views without a NUL; SSE data has one */
	copy = malloc(n + 1);
	if (copy == NULL)
		abort();
	memcpy(copy, data, n);
	if (nul)
		copy[n] = '\0';
	rc = x->x_ad->ad_event(&x->x_cs, ev, copy, n);
	free(copy);
	if (rc == -1) {
		check_refusal(&x->x_cs);
		x->x_bad = 1;
	}
	return rc;
}

static int
x_sse(void *arg, const char *ev, size_t evn, const char *data, size_t n)
{
	return xfer_event(arg, ev, data, n, 1);
}

static int
x_line(void *arg, const char *line, size_t n)
{
	return xfer_event(arg, NULL, line, n, 0);
}

static void
check_out(const struct call_state *cs)
{
	if (memchr(cs->cs_out->no_finish, '\0',
	    sizeof(cs->cs_out->no_finish)) == NULL)
		fuzz_fail("finish reason not terminated", NULL);
}

static void
xfer_init(struct xfer *x, const struct adapter *ad, struct node_call *nc,
    struct node_out *out, bool tools)
{
	memset(nc, 0, sizeof(*nc));
	nc->nc_tool_calls = tools ? json_array() : NULL;
	memset(out, 0, sizeof(*out));
	out->no_prompt_tokens = out->no_completion_tokens = -1;
	memset(x, 0, sizeof(*x));
	x->x_cs.cs_nc = nc;
	x->x_cs.cs_out = out;
	x->x_ad = ad;
}

static void
xfer_done(struct xfer *x, struct node_call *nc, struct node_out *out)
{
	check_out(&x->x_cs);
	json_decref(nc->nc_tool_calls);
	buf_free(&out->no_text);
}

/* The body streamed through the parser into ad_event, then whole. */
static void
adapters(const char *p, size_t n, const struct adapter *ad, size_t max,
    bool tools)
{
	struct node_call	 nc;
	struct node_out		 out;
	struct xfer		 x;
	struct sse		*s;
	struct lines		 l;
	char			*body;

	xfer_init(&x, ad, &nc, &out, tools);
	if (ad->ad_framing == AD_SSE) {
		s = sse_new(max, x_sse, &x);
		if (sse_feed(s, p, n) == 0 && x.x_bad)
			fuzz_fail("sse_feed hid the adapter's refusal", NULL);
		sse_finish(s);
		sse_free(s);
	} else {
		lines_init(&l, max, x_line, &x);
		if (lines_feed(&l, p, n) == 0 && lines_finish(&l) == 0 &&
		    x.x_bad)
			fuzz_fail("lines hid the adapter's refusal", NULL);
		lines_free(&l);
	}
	xfer_done(&x, &nc, &out);
	xfer_init(&x, ad, &nc, &out, tools);
	if ((body = malloc(n + 1)) == NULL)
		abort();
	memcpy(body, p, n);
	body[n] = '\0';
	if (ad->ad_whole(&x.x_cs, body, n) == -1)
		check_refusal(&x.x_cs);
	else if (!x.x_cs.cs_done)
		fuzz_fail("an accepted whole reply is not marked done", ad->ad_name);
	free(body);
	xfer_done(&x, &nc, &out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct adapter	*ad;
	const char		*body = (const char *)data + 2;
	size_t			 max;
	int			 nd;

	if (size < 2)
		return 0;
	nd = data[0] & 1;
	ad = (nd ? nd_ads : sse_ads)[(data[0] >> 1) & 3];
	max = caps[(data[0] >> 4) & 7];
	parsers(body, size - 2, nd, max, data[1]);
	adapters(body, size - 2, ad, max, data[0] & 8);
	return 0;
}
