/* http_fuzz.c - libFuzzer harness for the HTTP request parser: sane requests, the same ones however the bytes arrive. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../gateway/http.h"
#include "common.h"

/*
 * Input: 2 header bytes, then what a client sends on one connection.
 *   h[0]: the limits: bits 0-1 header bytes, bits 2-3 header count,
 *         bits 4-5 URL length, bits 6-7 body size (tight ones so that
 *         every 4xx answer is in reach, and the gateway's defaults)
 *   h[1]: seed of the random chunking
 * The bytes are parsed the way gateway/http.c drives the parser: feed
 * what has arrived, drop what was used, answer a complete request and
 * call http_parser_next, stop at an error. Every request must be sane
 * (path and query set, no '?' in the path, at most the limits, header
 * names RFC 9110 tokens, values trimmed and without CR or LF, the body
 * NUL-terminated) and an error must be one of the statuses the parser
 * documents. The transcript of requests, and whether it ends in an
 * error, must be the same whole, in 1-byte pieces and in random pieces.
 * Only the status of the error may differ: input that breaks two rules
 * (a URL over max_url with a bad byte further on) is refused by the
 * first check that sees it, and a piece boundary makes a span callback
 * (the URL's length check) run before llhttp reaches the bad byte.
 */

static const size_t	 hdr_bytes[4] = { 64, 300, 2048, 16 * 1024 };
static const size_t	 hdr_count[4] = { 1, 3, 20, 100 };
static const size_t	 url_len[4] = { 8, 40, 1024, 8 * 1024 };
static const size_t	 body_max[4] = { 0, 16, 1024, 4 * 1024 * 1024 };

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init(LOG_LVL_ERR);
	return 0;
}

static bool
is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static void
check_header(const struct http_header *h)
{
	size_t	 i, n = strlen(h->value);

	if (h->name[0] == '\0')
		fuzz_fail("empty header name", NULL);
	for (i = 0; h->name[i] != '\0'; i++)
		if (!is_tchar(h->name[i]))
			fuzz_fail("header name is not a token", h->name);
	if (n > 0 && (h->value[0] == ' ' || h->value[0] == '\t' ||
	    h->value[n - 1] == ' ' || h->value[n - 1] == '\t'))
		fuzz_fail("header value not trimmed", h->value);
	if (strpbrk(h->value, "\r\n") != NULL)
		fuzz_fail("CR or LF in a header value", h->value);
}

/* Check r and append it to the transcript t. */
static void
take_request(const struct http_request *r, const struct http_limits *l,
    struct buf *t)
{
	size_t	 i;

	if (r->path == NULL || r->query == NULL || r->method_name == NULL ||
	    r->headers == NULL || r->body == NULL)
		fuzz_fail("request with a NULL member", NULL);
	if (strchr(r->path, '?') != NULL)
		fuzz_fail("'?' left in the path", r->path);
	if (strlen(r->path) + strlen(r->query) > l->max_url)
		fuzz_fail("target longer than max_url", r->path);
	if (r->version_minor != 0 && r->version_minor != 1)
		fuzz_fail("not HTTP/1.0 or HTTP/1.1", r->method_name);
	if (r->nheaders > l->max_headers || r->body_len > l->max_body)
		fuzz_fail("request over the limits", NULL);
	if (r->body[r->body_len] != '\0')
		fuzz_fail("body not NUL-terminated", NULL);
	buf_printf(t, "%s %d %s ? %s 1.%d ka=%d h=%zu\n", r->method_name,
	    (int)r->method, r->path, r->query, r->version_minor,
	    (int)r->keep_alive, r->nheaders);
	for (i = 0; i < r->nheaders; i++) {
		check_header(&r->headers[i]);
		buf_printf(t, "  %s: %s\n", r->headers[i].name,
		    r->headers[i].value);
	}
	buf_printf(t, "  body %zu\n", r->body_len);
	buf_add(t, r->body, r->body_len);
}

static void
take_error(struct http_parser *p, struct buf *t)
{
	const char	*msg;
	int		 st = http_parser_error(p, &msg);

	if (st != 400 && st != 413 && st != 414 && st != 431 && st != 501 &&
	    st != 505)
		fuzz_fail("undocumented error status", msg);
	if (msg == NULL || msg[0] == '\0')
		fuzz_fail("error without a message", NULL);
	buf_adds(t, "ERROR\n");
}

/* Parse what is in in; 1 after an error. Like http.c's conn_feed loop. */
static int
consume(struct http_parser *p, const struct http_limits *l, struct buf *in,
    struct buf *t)
{
	enum http_parse_result	 r;
	size_t			 used, len;

	while (in->b_len > 0) {
		len = in->b_len;
		r = http_parser_feed(p, in->b_data, len, &used);
		if (used > len || (r == HTTP_PARSE_MORE && used != len))
			fuzz_fail("bad count of bytes used", NULL);
		buf_drain(in, used);
		switch (r) {
		case HTTP_PARSE_MORE:
			return 0;
		case HTTP_PARSE_EXPECT:
			buf_adds(t, "100-continue\n");
			break;
		case HTTP_PARSE_REQUEST:
			take_request(http_parser_request(p), l, t);
			http_parser_next(p);
			break;
		case HTTP_PARSE_ERROR:
			take_error(p, t);
			return 1;
		}
	}
	return 0;
}

/* chunk: 0 whole, 1 bytes, else random pieces from seed. */
static void
run(const struct http_limits *l, const char *s, size_t n, int chunk,
    uint32_t seed, struct buf *t)
{
	struct http_parser	*p = http_parser_new(l);
	struct buf		 in = BUF_INIT;
	size_t			 off = 0, k;
	int			 bad = 0;

	while (off < n && !bad) {
		seed = seed * 1103515245 + 12345;
		k = chunk == 0 ? n : chunk == 1 ? 1 : 1 + (seed >> 16) % 23;
		if (k > n - off)
			k = n - off;
		buf_add(&in, s + off, k);
		off += k;
		bad = consume(p, l, &in, t);
	}
	/* after an error the phase is where the first check fired */
	if (!bad)
		buf_printf(t, "END phase %d\n", (int)http_parser_phase(p));
	buf_free(&in);
	http_parser_free(p);
}

static void
same(const struct buf *a, const struct buf *b, const char *what)
{
	if (a->b_len == b->b_len && memcmp(a->b_data, b->b_data, a->b_len) == 0)
		return;
	fprintf(stderr, "whole:\n%s\n%s:\n%s\n", a->b_data, what, b->b_data);
	fuzz_fail("transcripts differ", what);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_limits	 l;
	struct buf		 whole = BUF_INIT, t = BUF_INIT;
	const char		*s = (const char *)data + 2;

	if (size < 2)
		return 0;
	memset(&l, 0, sizeof(l));
	l.max_header_bytes = hdr_bytes[data[0] & 3];
	l.max_headers = hdr_count[(data[0] >> 2) & 3];
	l.max_url = url_len[(data[0] >> 4) & 3];
	l.max_body = body_max[(data[0] >> 6) & 3];
	run(&l, s, size - 2, 0, 0, &whole);
	run(&l, s, size - 2, 1, 0, &t);
	same(&whole, &t, "1-byte pieces");
	buf_reset(&t);
	run(&l, s, size - 2, 2, data[1], &t);
	same(&whole, &t, "random pieces");
	buf_free(&t);
	buf_free(&whole);
	return 0;
}
