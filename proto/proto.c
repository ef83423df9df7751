/* proto.c - gateway<->worker messages: table-driven encode and strict decode. */
#include <msgpack.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/xmem.h"
#include "mpscan.h"
#include "proto.h"

enum ftype { F_STR, F_U32, F_U64, F_I64, F_BOOL, F_STRARR, F_MSGS };

/* One body key: its wire name, type, and where it lives in the struct.
 * Arrays also name the member that holds their length. */
struct field {
	const char	*f_key;
	enum ftype	 f_type;
	int		 f_required;
	size_t		 f_off;
	size_t		 f_cnt;
};

#define FLD(key, type, req, st, mem)					\
	{ key, type, req, offsetof(struct st, mem), 0 }
#define ARR(key, type, req, st, mem, cnt)				\
	{ key, type, req, offsetof(struct st, mem), offsetof(struct st, cnt) }

static const struct field fields_message[] = {
	FLD("role",	F_STR,	1, proto_message, role),
	FLD("content",	F_STR,	0, proto_message, content),
	FLD("name",	F_STR,	0, proto_message, name),
	FLD("tcid",	F_STR,	0, proto_message, tool_call_id),
	FLD("tc",	F_STR,	0, proto_message, tool_calls),
	ARR("imgs",	F_STRARR, 0, proto_message, images, nimages),
};

static const struct field fields_hello[] = {
	FLD("v",	F_U32,	1, proto_hello, version),
	FLD("pid",	F_I64,	1, proto_hello, pid),
	FLD("build",	F_STR,	0, proto_hello, build),
};

static const struct field fields_req_start[] = {
	FLD("api",	F_U32,	1, proto_req_start, api),
	FLD("stream",	F_BOOL,	0, proto_req_start, stream),
	FLD("model",	F_STR,	0, proto_req_start, model),
	ARR("msgs",	F_MSGS,	1, proto_req_start, msgs, nmsgs),
	FLD("opts",	F_STR,	0, proto_req_start, options),
	FLD("tools",	F_STR,	0, proto_req_start, tools),
	FLD("tchoice",	F_STR,	0, proto_req_start, tool_choice),
	FLD("dl",	F_U64,	0, proto_req_start, deadline_ms),
	FLD("epl",	F_U32,	0, proto_req_start, ep_limit),
	FLD("epw",	F_U64,	0, proto_req_start, ep_wait_ms),
	FLD("usr",	F_STR,	0, proto_req_start, user),
	FLD("swf",	F_STR,	0, proto_req_start, workflow),
	FLD("ks",	F_STR,	0, proto_req_start, key_scope),
	FLD("think",	F_STR,	0, proto_req_start, think),
	FLD("akey",	F_STR,	0, proto_req_start, api_key),
};

static const struct field fields_req_chunk[] = {
	FLD("seq",	F_U64,	1, proto_req_chunk, seq),
	FLD("c",	F_STR,	0, proto_req_chunk, content),
	FLD("r",	F_STR,	0, proto_req_chunk, reasoning),
	FLD("tc",	F_STR,	0, proto_req_chunk, tool_calls),
};

static const struct field fields_req_done[] = {
	FLD("st",	F_U32,	1, proto_req_done, status),
	FLD("fin",	F_STR,	0, proto_req_done, finish),
	FLD("pt",	F_I64,	0, proto_req_done, prompt_tokens),
	FLD("ct",	F_I64,	0, proto_req_done, completion_tokens),
	FLD("uest",	F_BOOL,	0, proto_req_done, usage_estimated),
	FLD("http",	F_U32,	0, proto_req_done, http_status),
	FLD("code",	F_STR,	0, proto_req_done, code),
	FLD("msg",	F_STR,	0, proto_req_done, message),
	FLD("ret",	F_BOOL,	0, proto_req_done, retiring),
	FLD("ep",	F_STR,	0, proto_req_done, endpoint),
	FLD("bg",	F_BOOL,	0, proto_req_done, background),
	FLD("ra",	F_STR,	0, proto_req_done, retry_after),
};

static const struct field fields_post_done[] = {
	FLD("ret",	F_BOOL,	0, proto_post_done, retiring),
	FLD("fail",	F_BOOL,	0, proto_post_done, failed),
	FLD("msg",	F_STR,	0, proto_post_done, message),
};

static const struct field fields_cache[] = {
	FLD("hit",	F_BOOL,	0, proto_cache, hit),
	FLD("ans",	F_BOOL,	0, proto_cache, answer),
	FLD("n",	F_I64,	0, proto_cache, entries),
};

static const struct field fields_store[] = {
	FLD("n",	F_U64,	0, proto_store, errors),
	FLD("fail",	F_BOOL,	0, proto_store, failing),
	FLD("why",	F_STR,	0, proto_store, why),
	FLD("disc",	F_STR,	0, proto_store, discussion),
};

static const struct field fields_heartbeat[] = {
	FLD("ph",	F_STR,	0, proto_heartbeat, phase),
};

static const struct field fields_retire[] = {
	FLD("why",	F_STR,	0, proto_retire, reason),
};

static const struct field fields_slot[] = {
	FLD("ep",	F_STR,	1, proto_slot, endpoint),
	FLD("lim",	F_U32,	0, proto_slot, limit),
	FLD("to",	F_U64,	0, proto_slot, timeout_ms),
	FLD("ok",	F_BOOL,	0, proto_slot, granted),
};

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

struct msgdesc {
	const char		*d_name;
	int			 d_dir;
	const struct field	*d_fields;
	size_t			 d_nfields;
};

#define FIELDS_hello		fields_hello, nitems(fields_hello)
#define FIELDS_req_start	fields_req_start, nitems(fields_req_start)
#define FIELDS_req_chunk	fields_req_chunk, nitems(fields_req_chunk)
#define FIELDS_req_done		fields_req_done, nitems(fields_req_done)
#define FIELDS_post_done	fields_post_done, nitems(fields_post_done)
#define FIELDS_heartbeat	fields_heartbeat, nitems(fields_heartbeat)
#define FIELDS_cache		fields_cache, nitems(fields_cache)
#define FIELDS_store		fields_store, nitems(fields_store)
#define FIELDS_retire		fields_retire, nitems(fields_retire)
#define FIELDS_slot		fields_slot, nitems(fields_slot)
#define FIELDS_none		NULL, 0

static const struct msgdesc descs[] = {
#define MSG(name, id, dir, body)	[id] = { #name, dir, FIELDS_##body },
#include "msg.def"
#undef MSG
};

static const struct msgdesc *
desc_of(uint32_t type)
{
	if (type == 0 || type >= nitems(descs) || descs[type].d_name == NULL)
		return NULL;
	return &descs[type];
}

const char *
proto_type_name(uint32_t type)
{
	const struct msgdesc	*d = desc_of(type);

	return d != NULL ? d->d_name : "UNKNOWN";
}

int
proto_type_dir(uint32_t type)
{
	const struct msgdesc	*d = desc_of(type);

	return d != NULL ? d->d_dir : 0;
}

/* Optional fields whose default is not zero. */
static void
body_defaults(struct proto_msg *m)
{
	if (m->m_type == PROTO_REQ_DONE) {
		m->m_u.req_done.prompt_tokens = -1;
		m->m_u.req_done.completion_tokens = -1;
	}
	if (m->m_type == PROTO_CACHE)
		m->m_u.cache.entries = -1;
}

void
proto_msg_init(struct proto_msg *m, uint32_t type, const char *rqid)
{
	memset(m, 0, sizeof(*m));
	m->m_version = PROTO_VERSION;
	m->m_type = type;
	m->m_rqid = str_from(rqid);
	body_defaults(m);
}

/* ---- encoding ---- */

static int
pk_write(void *data, const char *p, size_t n)
{
	buf_add(data, p, n);
	return 0;
}

static void
pk_str(msgpack_packer *pk, struct str s)
{
	msgpack_pack_str_with_body(pk, s.p != NULL ? s.p : "", s.n);
}

static int
field_present(const struct field *f, const void *base)
{
	const char	*p = (const char *)base + f->f_off;

	switch (f->f_type) {
	case F_STR:
		return ((const struct str *)p)->p != NULL;
	case F_STRARR:
		return *(const size_t *)((const char *)base + f->f_cnt) > 0;
	default:
		return 1;
	}
}

static void enc_fields(msgpack_packer *, const struct field *, size_t,
    const void *);

static void
enc_value(msgpack_packer *pk, const struct field *f, const void *base)
{
	const char	*p = (const char *)base + f->f_off;
	size_t		 i, cnt;

	switch (f->f_type) {
	case F_STR:
		pk_str(pk, *(const struct str *)p);
		break;
	case F_U32:
		msgpack_pack_uint32(pk, *(const uint32_t *)p);
		break;
	case F_U64:
		msgpack_pack_uint64(pk, *(const uint64_t *)p);
		break;
	case F_I64:
		msgpack_pack_int64(pk, *(const int64_t *)p);
		break;
	case F_BOOL:
		if (*(const bool *)p)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		break;
	case F_STRARR:
		cnt = *(const size_t *)((const char *)base + f->f_cnt);
		msgpack_pack_array(pk, cnt);
		for (i = 0; i < cnt; i++)
			pk_str(pk, (*(struct str *const *)p)[i]);
		break;
	case F_MSGS:
		cnt = *(const size_t *)((const char *)base + f->f_cnt);
		msgpack_pack_array(pk, cnt);
		for (i = 0; i < cnt; i++)
			enc_fields(pk, fields_message, nitems(fields_message),
			    &(*(struct proto_message *const *)p)[i]);
		break;
	}
}

static void
enc_fields(msgpack_packer *pk, const struct field *f, size_t nf,
    const void *base)
{
	size_t	 i, present = 0;

	for (i = 0; i < nf; i++)
		present += field_present(&f[i], base) ? 1 : 0;
	msgpack_pack_map(pk, present);
	for (i = 0; i < nf; i++) {
		if (!field_present(&f[i], base))
			continue;
		pk_str(pk, str_from(f[i].f_key));
		enc_value(pk, &f[i], base);
	}
}

int
proto_encode(struct buf *out, const struct proto_msg *m)
{
	const struct msgdesc	*d = desc_of(m->m_type);
	msgpack_packer		 pk;
	size_t			 start = out->b_len, len;
	unsigned char		 hdr[FRAME_HDRLEN] = { 0 };

	if (d == NULL)
		return -1;
	buf_add(out, hdr, sizeof(hdr));
	msgpack_packer_init(&pk, out, pk_write);
	msgpack_pack_array(&pk, 4);
	msgpack_pack_uint32(&pk, m->m_version);
	msgpack_pack_uint32(&pk, m->m_type);
	if (m->m_rqid.p != NULL)
		pk_str(&pk, m->m_rqid);
	else
		msgpack_pack_nil(&pk);
	enc_fields(&pk, d->d_fields, d->d_nfields, &m->m_u);
	len = out->b_len - start - FRAME_HDRLEN;
	if (len > PROTO_MAX_FRAME) {
		out->b_len = start;
		if (out->b_data != NULL)
			out->b_data[start] = '\0';
		return -1;
	}
	frame_hdr_put((unsigned char *)out->b_data + start, (uint32_t)len);
	return 0;
}

/* ---- decoding ---- */

struct priv {
	msgpack_unpacked	 pv_unp;
	size_t			 pv_len;
	char			 pv_data[];	/* copy of the payload */
};

struct dec {
	msgpack_zone	*d_zone;
	char		*d_err;
	const char	*d_what;	/* message name for errors */
};

static int
dec_fail(struct dec *d, const char *key, const char *want)
{
	snprintf(d->d_err, PROTO_ERRLEN, "%s: field '%s' must be %s",
	    d->d_what, key, want);
	return -1;
}

static int dec_fields(struct dec *, const struct field *, size_t,
    const msgpack_object *, void *);

/* A zeroed zone array for the elements of array o, stored with its
 * length in the field; NULL after dec_fail when o is not an array. */
static void *
dec_array(struct dec *d, const struct field *f, const msgpack_object *o,
    char *base, size_t elsize, const char *want)
{
	size_t	 n = o->via.array.size ? o->via.array.size : 1;
	void	*v;

	if (o->type != MSGPACK_OBJECT_ARRAY) {
		dec_fail(d, f->f_key, want);
		return NULL;
	}
	if ((v = msgpack_zone_malloc(d->d_zone, n * elsize)) == NULL) {
		dec_fail(d, f->f_key, "smaller (out of memory)");
		return NULL;
	}
	memset(v, 0, n * elsize);
	n = o->via.array.size;
	/* memcpy: the member is a typed pointer, not a void *. */
	memcpy(base + f->f_off, &v, sizeof(v));
	memcpy(base + f->f_cnt, &n, sizeof(n));
	return v;
}

static int
dec_strarr(struct dec *d, const struct field *f, const msgpack_object *o,
    char *base)
{
	struct str	*v;
	uint32_t	 i;

	if ((v = dec_array(d, f, o, base, sizeof(*v),
	    "an array of strings")) == NULL)
		return -1;
	for (i = 0; i < o->via.array.size; i++) {
		const msgpack_object	*e = &o->via.array.ptr[i];

		if (e->type != MSGPACK_OBJECT_STR)
			return dec_fail(d, f->f_key, "an array of strings");
		v[i] = (struct str){ e->via.str.ptr, e->via.str.size };
	}
	return 0;
}

static int
dec_msgs(struct dec *d, const struct field *f, const msgpack_object *o,
    char *base)
{
	struct proto_message	*v;
	uint32_t		 i;

	if ((v = dec_array(d, f, o, base, sizeof(*v),
	    "an array of maps")) == NULL)
		return -1;
	for (i = 0; i < o->via.array.size; i++)
		if (dec_fields(d, fields_message, nitems(fields_message),
		    &o->via.array.ptr[i], &v[i]) == -1)
			return -1;
	return 0;
}

static int
dec_value(struct dec *d, const struct field *f, const msgpack_object *o,
    char *base)
{
	char	*p = base + f->f_off;

	switch (f->f_type) {
	case F_STR:
		/* nil is an absent optional string, never a required one */
		if (o->type == MSGPACK_OBJECT_NIL && !f->f_required)
			return 0;
		if (o->type != MSGPACK_OBJECT_STR)
			return dec_fail(d, f->f_key, "a string");
		*(struct str *)p = (struct str){ o->via.str.ptr,
		    o->via.str.size };
		return 0;
	case F_U32:
		if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    o->via.u64 > UINT32_MAX)
			return dec_fail(d, f->f_key, "a 32-bit unsigned integer");
		*(uint32_t *)p = (uint32_t)o->via.u64;
		return 0;
	case F_U64:
		if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return dec_fail(d, f->f_key, "an unsigned integer");
		*(uint64_t *)p = o->via.u64;
		return 0;
	case F_I64:
		if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			*(int64_t *)p = o->via.i64;
		else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		    o->via.u64 <= INT64_MAX)
			*(int64_t *)p = (int64_t)o->via.u64;
		else
			return dec_fail(d, f->f_key, "a 64-bit integer");
		return 0;
	case F_BOOL:
		if (o->type != MSGPACK_OBJECT_BOOLEAN)
			return dec_fail(d, f->f_key, "a boolean");
		*(bool *)p = o->via.boolean;
		return 0;
	case F_STRARR:
		return dec_strarr(d, f, o, base);
	case F_MSGS:
		return dec_msgs(d, f, o, base);
	}
	return -1;
}

static int
dec_fields(struct dec *d, const struct field *f, size_t nf,
    const msgpack_object *map, void *base)
{
	uint32_t	 i, seen = 0;
	size_t		 j;

	if (map->type != MSGPACK_OBJECT_MAP) {
		snprintf(d->d_err, PROTO_ERRLEN, "%s: body must be a map",
		    d->d_what);
		return -1;
	}
	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object_kv	*kv = &map->via.map.ptr[i];
		struct str		 key;

		if (kv->key.type != MSGPACK_OBJECT_STR) {
			snprintf(d->d_err, PROTO_ERRLEN,
			    "%s: map keys must be strings", d->d_what);
			return -1;
		}
		key = (struct str){ kv->key.via.str.ptr, kv->key.via.str.size };
		for (j = 0; j < nf; j++)
			if (str_eq(key, f[j].f_key))
				break;
		if (j == nf)
			continue;	/* unknown keys are ignored */
		if (dec_value(d, &f[j], &kv->val, base) == -1)
			return -1;
		seen |= 1u << j;
	}
	for (j = 0; j < nf; j++)
		if (f[j].f_required && !(seen & (1u << j))) {
			snprintf(d->d_err, PROTO_ERRLEN,
			    "%s: missing field '%s'", d->d_what, f[j].f_key);
			return -1;
		}
	return 0;
}

static int
dec_envelope(const msgpack_object *o, struct proto_msg *m, char *err)
{
	const msgpack_object	*e;

	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 4) {
		snprintf(err, PROTO_ERRLEN, "envelope must be a 4-element array");
		return -1;
	}
	e = o->via.array.ptr;
	if (e[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    e[0].via.u64 > UINT32_MAX ||
	    e[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    e[1].via.u64 > UINT32_MAX) {
		snprintf(err, PROTO_ERRLEN,
		    "envelope version and type must be unsigned integers");
		return -1;
	}
	m->m_version = (uint32_t)e[0].via.u64;
	m->m_type = (uint32_t)e[1].via.u64;
	if (m->m_version != PROTO_VERSION) {
		snprintf(err, PROTO_ERRLEN, "protocol version %u, expected %u",
		    m->m_version, (unsigned)PROTO_VERSION);
		return -1;
	}
	if (desc_of(m->m_type) == NULL) {
		snprintf(err, PROTO_ERRLEN, "unknown message type %u",
		    m->m_type);
		return -1;
	}
	if (e[2].type == MSGPACK_OBJECT_STR && e[2].via.str.size > 0 &&
	    e[2].via.str.size <= PROTO_MAX_RQID)
		m->m_rqid = (struct str){ e[2].via.str.ptr, e[2].via.str.size };
	else if (e[2].type != MSGPACK_OBJECT_NIL) {
		snprintf(err, PROTO_ERRLEN,
		    "request id must be nil or 1..%d bytes", PROTO_MAX_RQID);
		return -1;
	}
	return 0;
}

int
proto_decode(const void *p, size_t n, struct proto_msg *m,
    char err[PROTO_ERRLEN])
{
	struct priv		*pv;
	struct dec		 d;
	const struct msgdesc	*desc;
	size_t			 off = 0;

	memset(m, 0, sizeof(*m));
	if (n > PROTO_MAX_FRAME) {
		snprintf(err, PROTO_ERRLEN, "frame of %zu bytes is too large", n);
		return -1;
	}
	if (mpscan(p, n, PROTO_MAX_DEPTH, err, PROTO_ERRLEN) == -1)
		return -1;
	pv = xmalloc(sizeof(*pv) + n);
	pv->pv_len = n;
	memcpy(pv->pv_data, p, n);
	msgpack_unpacked_init(&pv->pv_unp);
	m->m_priv = pv;
	if (msgpack_unpack_next(&pv->pv_unp, pv->pv_data, n, &off) !=
	    MSGPACK_UNPACK_SUCCESS || off != n) {
		snprintf(err, PROTO_ERRLEN, "MessagePack could not be unpacked");
		return -1;
	}
	if (dec_envelope(&pv->pv_unp.data, m, err) == -1)
		return -1;
	desc = desc_of(m->m_type);
	body_defaults(m);
	d = (struct dec){ pv->pv_unp.zone, err, desc->d_name };
	if (desc->d_nfields == 0) {
		if (pv->pv_unp.data.via.array.ptr[3].type != MSGPACK_OBJECT_MAP) {
			snprintf(err, PROTO_ERRLEN, "%s: body must be a map",
			    desc->d_name);
			return -1;
		}
		return 0;
	}
	return dec_fields(&d, desc->d_fields, desc->d_nfields,
	    &pv->pv_unp.data.via.array.ptr[3], &m->m_u);
}

void
proto_msg_free(struct proto_msg *m)
{
	struct priv	*pv = m->m_priv;

	if (pv != NULL) {
		msgpack_unpacked_destroy(&pv->pv_unp);
		free(pv);
	}
	m->m_priv = NULL;
}
