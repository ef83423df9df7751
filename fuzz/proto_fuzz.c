/* proto_fuzz.c - libFuzzer harness for the message codec: decode is total and strict, encode/decode round-trip every type. */
#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../proto/frame.h"
#include "../proto/mpscan.h"
#include "../proto/proto.h"
#include "common.h"

/*
 * Input: a mode byte, then
 *   mode even: a frame payload as a peer could send it. MessagePack
 *     that mpscan accepts must unpack (mpscan guards msgpack-c). A
 *     payload that decodes must satisfy the schema (known type, version,
 *     request id of 1..64 bytes or none, required strings present) and
 *     survive decode -> encode -> decode unchanged, the second encoding
 *     byte for byte the first. A refusal leaves a message in err.
 *   mode odd: a description of a message: its type, request id and
 *     every body field taken from the bytes. Encoding and decoding it
 *     must give back every field.
 * The harness knows the schema on its own (the tables below), so a
 * field the codec drops, truncates or misplaces is caught. Decoded views
 * must outlive the input: the payload is a private copy freed before the
 * message is looked at.
 *
 * FUZZ_PROTO_SEEDS=dir writes seeds of both modes for every message
 * type into dir and exits (fuzz/corpus/proto was made so).
 */

enum hk { H_STR, H_U32, H_U64, H_I64, H_BOOL, H_IMGS, H_MSGS };

struct hf {
	enum hk	 k;
	size_t	 off;
	size_t	 cnt;		/* H_IMGS, H_MSGS: offset of the count */
	int	 req;
};

#define HF(k, st, m, req)	{ k, offsetof(struct st, m), 0, req }
#define HA(k, st, m, c, req)	\
	{ k, offsetof(struct st, m), offsetof(struct st, c), req }

static const struct hf hf_message[] = {
	HF(H_STR, proto_message, role, 1),
	HF(H_STR, proto_message, content, 0),
	HF(H_STR, proto_message, name, 0),
	HF(H_STR, proto_message, tool_call_id, 0),
	HF(H_STR, proto_message, tool_calls, 0),
	HA(H_IMGS, proto_message, images, nimages, 0),
};
static const struct hf hf_hello[] = {
	HF(H_U32, proto_hello, version, 1), HF(H_I64, proto_hello, pid, 1),
	HF(H_STR, proto_hello, build, 0),
};
static const struct hf hf_req_start[] = {
	HF(H_U32, proto_req_start, api, 1),
	HF(H_BOOL, proto_req_start, stream, 0),
	HF(H_STR, proto_req_start, model, 0),
	HA(H_MSGS, proto_req_start, msgs, nmsgs, 1),
	HF(H_STR, proto_req_start, options, 0),
	HF(H_STR, proto_req_start, tools, 0),
	HF(H_STR, proto_req_start, tool_choice, 0),
	HF(H_U64, proto_req_start, deadline_ms, 0),
	HF(H_U32, proto_req_start, ep_limit, 0),
	HF(H_U64, proto_req_start, ep_wait_ms, 0),
	HF(H_STR, proto_req_start, user, 0),
	HF(H_STR, proto_req_start, workflow, 0),
	HF(H_STR, proto_req_start, key_scope, 0),
	HF(H_STR, proto_req_start, api_key, 0),
};
static const struct hf hf_req_chunk[] = {
	HF(H_U64, proto_req_chunk, seq, 1),
	HF(H_STR, proto_req_chunk, content, 0),
	HF(H_STR, proto_req_chunk, reasoning, 0),
	HF(H_STR, proto_req_chunk, tool_calls, 0),
};
static const struct hf hf_req_done[] = {
	HF(H_U32, proto_req_done, status, 1),
	HF(H_STR, proto_req_done, finish, 0),
	HF(H_I64, proto_req_done, prompt_tokens, 0),
	HF(H_I64, proto_req_done, completion_tokens, 0),
	HF(H_BOOL, proto_req_done, usage_estimated, 0),
	HF(H_U32, proto_req_done, http_status, 0),
	HF(H_STR, proto_req_done, code, 0),
	HF(H_STR, proto_req_done, message, 0),
	HF(H_BOOL, proto_req_done, retiring, 0),
	HF(H_STR, proto_req_done, endpoint, 0),
	HF(H_BOOL, proto_req_done, background, 0),
	HF(H_STR, proto_req_done, retry_after, 0),
};
static const struct hf hf_post_done[] = {
	HF(H_BOOL, proto_post_done, retiring, 0),
	HF(H_BOOL, proto_post_done, failed, 0),
	HF(H_STR, proto_post_done, message, 0),
};
static const struct hf hf_cache[] = {
	HF(H_BOOL, proto_cache, hit, 0), HF(H_BOOL, proto_cache, answer, 0),
	HF(H_I64, proto_cache, entries, 0),
};
static const struct hf hf_store[] = {
	HF(H_U64, proto_store, errors, 0), HF(H_BOOL, proto_store, failing, 0),
	HF(H_STR, proto_store, why, 0), HF(H_STR, proto_store, discussion, 0),
};
static const struct hf hf_heartbeat[] = {
	HF(H_STR, proto_heartbeat, phase, 0),
};
static const struct hf hf_retire[] = { HF(H_STR, proto_retire, reason, 0) };
static const struct hf hf_slot[] = {
	HF(H_STR, proto_slot, endpoint, 1), HF(H_U32, proto_slot, limit, 0),
	HF(H_U64, proto_slot, timeout_ms, 0),
	HF(H_BOOL, proto_slot, granted, 0),
};

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))
#define HB_hello	hf_hello, nitems(hf_hello)
#define HB_req_start	hf_req_start, nitems(hf_req_start)
#define HB_req_chunk	hf_req_chunk, nitems(hf_req_chunk)
#define HB_req_done	hf_req_done, nitems(hf_req_done)
#define HB_post_done	hf_post_done, nitems(hf_post_done)
#define HB_heartbeat	hf_heartbeat, nitems(hf_heartbeat)
#define HB_cache	hf_cache, nitems(hf_cache)
#define HB_store	hf_store, nitems(hf_store)
#define HB_retire	hf_retire, nitems(hf_retire)
#define HB_slot		hf_slot, nitems(hf_slot)
#define HB_none		NULL, 0

struct htype {
	uint32_t		 t_id;
	const struct hf		*t_f;
	size_t			 t_nf;
};

static const struct htype htypes[] = {
#define MSG(name, id, dir, body)	{ id, HB_##body },
#include "../proto/msg.def"
#undef MSG
};

/* Bytes of the input handed out in order; zeros once they run out. */
struct rd {
	const uint8_t	*r_p;
	size_t		 r_n;
};

#define MAXMSGS	4
#define MAXIMGS	3

/* Storage for the arrays of a described message. */
struct store {
	struct proto_message	 s_msgs[MAXMSGS];
	struct str		 s_imgs[MAXMSGS][MAXIMGS];
};

static void fail(const char *, const struct proto_msg *)
    __attribute__((noreturn));

static void
fail(const char *what, const struct proto_msg *m)
{
	fprintf(stderr, "proto_fuzz: %s (type %u %s)\n", what,
	    (unsigned)m->m_type, proto_type_name(m->m_type));
	abort();
}

static const struct htype *
htype_of(uint32_t type)
{
	size_t	 i;

	for (i = 0; i < nitems(htypes); i++)
		if (htypes[i].t_id == type)
			return &htypes[i];
	return NULL;
}

static uint64_t
rd_uint(struct rd *r, size_t w)
{
	uint64_t	 v = 0;

	while (w-- > 0) {
		v = v << 8 | (r->r_n > 0 ? *r->r_p : 0);
		if (r->r_n > 0) {
			r->r_p++;
			r->r_n--;
		}
	}
	return v;
}

/* A view of up to 63 input bytes; absent (optional only) on bit 6. */
static struct str
rd_str(struct rd *r, int req)
{
	uint8_t		 b = (uint8_t)rd_uint(r, 1);
	size_t		 n = b & 0x3f;
	struct str	 s;

	if (!req && (b & 0x40))
		return STR_NULL;
	if (n > r->r_n)
		n = r->r_n;
	s = (struct str){ r->r_n > 0 ? (const char *)r->r_p : "", n };
	r->r_p += n;
	r->r_n -= n;
	return s;
}

static void rd_fields(struct rd *, const struct hf *, size_t, char *,
    struct store *, size_t);

static void
rd_field(struct rd *r, const struct hf *f, char *base, struct store *st,
    size_t mi)
{
	char	*p = base + f->off;
	size_t	 i, n;
	void	*v;

	switch (f->k) {
	case H_STR:
		*(struct str *)p = rd_str(r, f->req);
		break;
	case H_U32:
		*(uint32_t *)p = (uint32_t)rd_uint(r, 4);
		break;
	case H_U64:
		*(uint64_t *)p = rd_uint(r, 8);
		break;
	case H_I64:
		*(int64_t *)p = (int64_t)rd_uint(r, 8);
		break;
	case H_BOOL:
		*(bool *)p = rd_uint(r, 1) & 1;
		break;
	case H_IMGS:
	case H_MSGS:
		n = rd_uint(r, 1) % ((f->k == H_IMGS ? MAXIMGS : MAXMSGS) + 1);
		for (i = 0; i < n && f->k == H_IMGS; i++)
			st->s_imgs[mi][i] = rd_str(r, 1);
		for (i = 0; i < n && f->k == H_MSGS; i++)
			rd_fields(r, hf_message, nitems(hf_message),
			    (char *)&st->s_msgs[i], st, i);
		v = f->k == H_IMGS ? (void *)st->s_imgs[mi] :
		    (void *)st->s_msgs;
		memcpy(p, &v, sizeof(v));
		memcpy(base + f->cnt, &n, sizeof(n));
		break;
	}
}

static void
rd_fields(struct rd *r, const struct hf *f, size_t nf, char *base,
    struct store *st, size_t mi)
{
	size_t	 i;

	for (i = 0; i < nf; i++)
		rd_field(r, &f[i], base, st, mi);
}

/* Build message m of type t from the bytes; rqid from the store. */
static void
describe(struct rd *r, const struct htype *t, struct proto_msg *m,
    struct store *st)
{
	struct str	 id = rd_str(r, 0);

	proto_msg_init(m, t->t_id, NULL);
	/* the decoder takes ids of 1..PROTO_MAX_RQID bytes, or none */
	if (id.p != NULL && id.n > 0 && id.n <= PROTO_MAX_RQID)
		m->m_rqid = id;
	rd_fields(r, t->t_f, t->t_nf, (char *)&m->m_u, st, 0);
}

static bool
str_same(struct str a, struct str b)
{
	if ((a.p == NULL) != (b.p == NULL) || a.n != b.n)
		return false;
	return a.n == 0 || memcmp(a.p, b.p, a.n) == 0;
}

static bool fields_same(const struct hf *, size_t, const char *,
    const char *);

static bool
field_same(const struct hf *f, const char *a, const char *b)
{
	const char	*pa = a + f->off, *pb = b + f->off;
	size_t		 i, na, nb;
	const char	*va, *vb;

	switch (f->k) {
	case H_STR:
		return str_same(*(const struct str *)pa,
		    *(const struct str *)pb);
	case H_U32:
		return *(const uint32_t *)pa == *(const uint32_t *)pb;
	case H_U64:
		return *(const uint64_t *)pa == *(const uint64_t *)pb;
	case H_I64:
		return *(const int64_t *)pa == *(const int64_t *)pb;
	case H_BOOL:
		return *(const bool *)pa == *(const bool *)pb;
	case H_IMGS:
	case H_MSGS:
		break;
	}
	memcpy(&na, a + f->cnt, sizeof(na));
	memcpy(&nb, b + f->cnt, sizeof(nb));
	memcpy(&va, pa, sizeof(va));
	memcpy(&vb, pb, sizeof(vb));
	for (i = 0; na == nb && i < na; i++)
		if (f->k == H_IMGS ? !str_same(((const struct str *)va)[i],
		    ((const struct str *)vb)[i]) : !fields_same(hf_message,
		    nitems(hf_message),
		    va + i * sizeof(struct proto_message),
		    vb + i * sizeof(struct proto_message)))
			return false;
	return na == nb;
}

static bool
fields_same(const struct hf *f, size_t nf, const char *a, const char *b)
{
	size_t	 i;

	for (i = 0; i < nf; i++)
		if (!field_same(&f[i], a, b))
			return false;
	return true;
}

static bool
msg_same(const struct proto_msg *a, const struct proto_msg *b)
{
	const struct htype	*t = htype_of(a->m_type);

	return a->m_version == b->m_version && a->m_type == b->m_type &&
	    t != NULL && str_same(a->m_rqid, b->m_rqid) &&
	    fields_same(t->t_f, t->t_nf, (const char *)&a->m_u,
	    (const char *)&b->m_u);
}

/* Required strings present in a decoded body (and its messages). */
static bool
required_present(const struct hf *f, size_t nf, const char *base)
{
	const char	*v;
	size_t		 i, j, n;

	for (i = 0; i < nf; i++) {
		if (f[i].k == H_STR && f[i].req &&
		    ((const struct str *)(base + f[i].off))->p == NULL)
			return false;
		if (f[i].k != H_MSGS)
			continue;
		memcpy(&n, base + f[i].cnt, sizeof(n));
		memcpy(&v, base + f[i].off, sizeof(v));
		for (j = 0; j < n; j++)
			if (!required_present(hf_message, nitems(hf_message),
			    v + j * sizeof(struct proto_message)))
				return false;
	}
	return true;
}

/* Decode a private copy of p[0..n), freed before the caller looks. */
static int
decode_copy(const void *p, size_t n, struct proto_msg *m, char *err)
{
	char	*copy = malloc(n + 1);
	int	 rc;

	if (copy == NULL)
		abort();
	memcpy(copy, p, n);
	err[0] = '\0';
	rc = proto_decode(copy, n, m, err);
	memset(copy, 0xa5, n);
	free(copy);
	if (rc == -1 && (err[0] == '\0' || memchr(err, '\0',
	    PROTO_ERRLEN) == NULL))
		fail("refusal without a message", m);
	return rc;
}

/* Encode m; the frame's length prefix must match its payload. */
static void
encode(const struct proto_msg *m, struct buf *b)
{
	buf_reset(b);
	if (proto_encode(b, m) == -1)
		fail("encoding failed", m);
	if (b->b_len < FRAME_HDRLEN || frame_hdr_get((const unsigned char *)
	    b->b_data) != b->b_len - FRAME_HDRLEN)
		fail("frame length does not match the payload", m);
}

/* mpscan's promise: what it accepts, msgpack-c unpacks whole. */
static void
scan_agrees(const uint8_t *p, size_t n)
{
	msgpack_unpacked	 u;
	char			 err[PROTO_ERRLEN];
	size_t			 off = 0;

	if (mpscan(p, n, PROTO_MAX_DEPTH, err, sizeof(err)) == -1)
		return;
	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, (const char *)p, n, &off) !=
	    MSGPACK_UNPACK_SUCCESS || off != n) {
		fprintf(stderr, "proto_fuzz: mpscan accepted what msgpack-c "
		    "cannot unpack\n");
		abort();
	}
	msgpack_unpacked_destroy(&u);
}

static void
raw(const uint8_t *p, size_t n)
{
	struct proto_msg	 m, m2;
	const struct htype	*t;
	struct buf		 b1 = BUF_INIT, b2 = BUF_INIT;
	char			 err[PROTO_ERRLEN];

	scan_agrees(p, n);
	if (decode_copy(p, n, &m, err) == -1) {
		proto_msg_free(&m);
		return;
	}
	t = htype_of(m.m_type);
	if (m.m_version != PROTO_VERSION || t == NULL)
		fail("accepted a bad envelope", &m);
	if (m.m_rqid.p != NULL && (m.m_rqid.n == 0 ||
	    m.m_rqid.n > PROTO_MAX_RQID))
		fail("accepted a bad request id", &m);
	if (!required_present(t->t_f, t->t_nf, (const char *)&m.m_u))
		fail("a required string is missing after decoding", &m);
	encode(&m, &b1);
	if (decode_copy(b1.b_data + FRAME_HDRLEN, b1.b_len - FRAME_HDRLEN,
	    &m2, err) == -1) {
		fprintf(stderr, "%s\n", err);
		fail("its own encoding does not decode", &m);
	}
	if (!msg_same(&m, &m2))
		fail("decode(encode(m)) differs from m", &m);
	encode(&m2, &b2);
	if (b1.b_len != b2.b_len || memcmp(b1.b_data, b2.b_data, b1.b_len))
		fail("encoding is not stable", &m);
	proto_msg_free(&m2);
	proto_msg_free(&m);
	buf_free(&b1);
	buf_free(&b2);
}

static void
described(const uint8_t *p, size_t n)
{
	struct rd		 r = { p, n };
	struct proto_msg	 m, d;
	struct store		 st;
	struct buf		 b = BUF_INIT;
	char			 err[PROTO_ERRLEN];

	describe(&r, &htypes[rd_uint(&r, 1) % nitems(htypes)], &m, &st);
	encode(&m, &b);
	if (decode_copy(b.b_data + FRAME_HDRLEN, b.b_len - FRAME_HDRLEN, &d,
	    err) == -1) {
		fprintf(stderr, "%s\n", err);
		fail("an encoded message does not decode", &m);
	}
	if (!msg_same(&m, &d))
		fail("a field changed on the way", &m);
	proto_msg_free(&d);
	buf_free(&b);
}

static void
write_seed(const char *dir, const char *kind, uint32_t type,
    const void *p, size_t n, int mode)
{
	char	 path[1024];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s-%s", dir, kind,
	    proto_type_name(type));
	if ((f = fopen(path, "wb")) == NULL)
		abort();
	if (mode >= 0)
		fputc(mode, f);
	fwrite(p, 1, n, f);
	fclose(f);
}

/* Per type: a described message from a varied pattern of bytes, its
 * encoding, and the encoding of the 0x40 pattern (optional strings
 * absent, required ones empty, four messages): one byte from a nil. */
static void
write_seeds(const char *dir)
{
	uint8_t			 pat[512];
	struct proto_msg	 m;
	struct store		 st;
	struct buf		 b = BUF_INIT;
	struct rd		 r;
	size_t			 i, k;

	for (i = 0; i < nitems(htypes); i++) {
		for (k = 0; k < sizeof(pat); k++)
			pat[k] = (uint8_t)(k % 7 == 0 ? 3 + i : 'a' + k % 26);
		pat[0] = 1;
		pat[1] = (uint8_t)i;
		r = (struct rd){ pat + 2, sizeof(pat) - 2 };
		describe(&r, &htypes[i], &m, &st);
		encode(&m, &b);
		write_seed(dir, "described", m.m_type, pat, sizeof(pat) - r.r_n,
		    -1);
		write_seed(dir, "raw", m.m_type, b.b_data + FRAME_HDRLEN,
		    b.b_len - FRAME_HDRLEN, 0);
		memset(pat, 0x40, sizeof(pat));
		r = (struct rd){ pat, sizeof(pat) };
		describe(&r, &htypes[i], &m, &st);
		encode(&m, &b);
		write_seed(dir, "min", m.m_type, b.b_data + FRAME_HDRLEN,
		    b.b_len - FRAME_HDRLEN, 0);
	}
	buf_free(&b);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char	*dir = getenv("FUZZ_PROTO_SEEDS");

	if (dir != NULL) {
		write_seeds(dir);
		exit(0);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		described(data + 1, size - 1);
	else
		raw(data + 1, size - 1);
	return 0;
}
