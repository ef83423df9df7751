/* check_proto.c - round trips of every message, framing, hostile frames. */
#include <check.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../proto/frame.h"
#include "../../proto/mpscan.h"
#include "../../proto/proto.h"
#include "../testmain.h"

static struct str	 imgs[2] = { { "aW1n", 4 }, { "data:x", 6 } };
static struct proto_message msgs[2] = {
	{ { "system", 6 }, { "be brief", 8 }, STR_NULL_INIT, STR_NULL_INIT,
	  STR_NULL_INIT, NULL, 0 },
	{ { "user", 4 }, { "h\xc3\xa9llo\n\"x\"", 10 }, { "bob", 3 },
	  { "call_1", 6 }, { "[{\"id\":1}]", 10 }, imgs, 2 },
};

/* Give every field of the body a value that differs from its default. */
static void
fill_sample(struct proto_msg *m, uint32_t type)
{
	proto_msg_init(m, type, type == PROTO_HELLO ? NULL : "rq-1234");
	switch (type) {
	case PROTO_HELLO:
		m->m_u.hello = (struct proto_hello){ PROTO_VERSION, 4242,
		    { "b1", 2 } };
		break;
	case PROTO_REQ_START:
		m->m_u.req_start = (struct proto_req_start){ API_OPENAI_CHAT,
		    true, { "m:x", 3 }, msgs, 2, { "{\"t\":1}", 7 },
		    { "[]", 2 }, { "\"auto\"", 6 }, 90000, 1, 900000, { "bob", 3 },
		    { "general", 7 }, { "0123456789abcdef", 16 },
		    { "false", 5 }, { "k1", 2 } };
		break;
	case PROTO_REQ_CHUNK:
		m->m_u.req_chunk = (struct proto_req_chunk){ 7, { "tok", 3 },
		    { "why", 3 }, { "[1]", 3 } };
		break;
	case PROTO_REQ_DONE:
		m->m_u.req_done = (struct proto_req_done){ RQ_ERROR,
		    { "length", 6 }, 12, -5, true, 502, { "backend", 7 },
		    { "endpoint down", 13 }, true, { "Fast", 4 }, true,
		    { "30", 2 } };
		break;
	case PROTO_POST_DONE:
		m->m_u.post_done = (struct proto_post_done){ true, true,
		    { "memory node failed", 18 } };
		break;
	case PROTO_HEARTBEAT:
		m->m_u.heartbeat.phase = (struct str){ "node 1/1", 8 };
		break;
	case PROTO_RETIRE:
		m->m_u.retire.reason = (struct str){ "max", 3 };
		break;
	case PROTO_CACHE:
		m->m_u.cache = (struct proto_cache){ true, true, 999 };
		break;
	case PROTO_STORE:
		m->m_u.store = (struct proto_store){ 3, true,
		    { "database or disk is full", 24 }, { "d1", 2 } };
		break;
	case PROTO_SLOT_ACQUIRE:
	case PROTO_SLOT_GRANT:
	case PROTO_SLOT_RELEASE:
		m->m_u.slot = (struct proto_slot){ { "Fast", 4 }, 2, 9000,
		    true };
		break;
	default:
		break;
	}
}

static const uint32_t all_types[] = {
#define MSG(name, id, dir, body)	PROTO_##name,
#include "../../proto/msg.def"
#undef MSG
};
#define NTYPES	(sizeof(all_types) / sizeof(all_types[0]))

START_TEST(round_trip_every_message)
{
	struct proto_msg	 m, d;
	struct buf		 a = BUF_INIT, b = BUF_INIT;
	char			 err[PROTO_ERRLEN];
	uint32_t		 type = all_types[_i];

	fill_sample(&m, type);
	ck_assert_int_eq(proto_encode(&a, &m), 0);
	ck_assert_uint_eq(frame_hdr_get((unsigned char *)a.b_data),
	    a.b_len - FRAME_HDRLEN);
	ck_assert_msg(proto_decode(a.b_data + 4, a.b_len - 4, &d, err) == 0,
	    "%s: %s", proto_type_name(type), err);
	ck_assert_uint_eq(d.m_type, type);
	/* Encoding is deterministic: the decoded message encodes to the
	 * same bytes, so every field survived. */
	ck_assert_int_eq(proto_encode(&b, &d), 0);
	ck_assert_uint_eq(a.b_len, b.b_len);
	ck_assert_mem_eq(a.b_data, b.b_data, a.b_len);
	proto_msg_free(&d);
	buf_free(&a);
	buf_free(&b);
}
END_TEST

START_TEST(decoded_values)
{
	struct proto_msg	 m, d;
	struct buf		 a = BUF_INIT;
	char			 err[PROTO_ERRLEN];
	const struct proto_req_start *rs;

	fill_sample(&m, PROTO_REQ_START);
	proto_encode(&a, &m);
	ck_assert_int_eq(proto_decode(a.b_data + 4, a.b_len - 4, &d, err), 0);
	buf_free(&a);	/* views must not point into the caller's bytes */
	rs = &d.m_u.req_start;
	ck_assert(str_eq(d.m_rqid, "rq-1234"));
	ck_assert_uint_eq(rs->api, API_OPENAI_CHAT);
	ck_assert(rs->stream);
	ck_assert_uint_eq(rs->nmsgs, 2);
	ck_assert(str_eq(rs->msgs[1].content, "h\xc3\xa9llo\n\"x\""));
	ck_assert_ptr_null(rs->msgs[0].name.p);
	ck_assert_uint_eq(rs->msgs[1].nimages, 2);
	ck_assert(str_eq(rs->msgs[1].images[1], "data:x"));
	ck_assert_uint_eq(rs->deadline_ms, 90000);
	ck_assert(str_eq(rs->think, "false"));
	ck_assert(str_eq(rs->api_key, "k1"));
	proto_msg_free(&d);
}
END_TEST

START_TEST(defaults_for_missing_optional)
{
	struct proto_msg	 m, d;
	struct buf		 a = BUF_INIT;
	char			 err[PROTO_ERRLEN];

	proto_msg_init(&m, PROTO_REQ_DONE, "r");
	proto_encode(&a, &m);
	ck_assert_int_eq(proto_decode(a.b_data + 4, a.b_len - 4, &d, err), 0);
	ck_assert_int_eq(d.m_u.req_done.prompt_tokens, -1);
	ck_assert_int_eq(d.m_u.req_done.completion_tokens, -1);
	ck_assert_ptr_null(d.m_u.req_done.message.p);
	ck_assert(!d.m_u.req_done.background);
	ck_assert_ptr_null(d.m_u.req_done.retry_after.p);
	proto_msg_free(&d);
	buf_free(&a);
	proto_msg_init(&m, PROTO_CACHE, "r");
	proto_encode(&a, &m);
	ck_assert_int_eq(proto_decode(a.b_data + 4, a.b_len - 4, &d, err), 0);
	ck_assert_int_eq(d.m_u.cache.entries, -1);
	ck_assert(!d.m_u.cache.hit && !d.m_u.cache.answer);
	proto_msg_free(&d);
	buf_free(&a);
	/* A client that sent no "think": the worker sees none. */
	proto_msg_init(&m, PROTO_REQ_START, "r");
	m.m_u.req_start.api = API_OLLAMA_CHAT;
	proto_encode(&a, &m);
	ck_assert_int_eq(proto_decode(a.b_data + 4, a.b_len - 4, &d, err), 0);
	ck_assert_ptr_null(d.m_u.req_start.think.p);
	/* A10.1: no key unless the user encrypts with it. */
	ck_assert_ptr_null(d.m_u.req_start.api_key.p);
	proto_msg_free(&d);
	buf_free(&a);
}
END_TEST

/* Decode what fill_sample encoded for type into d (caller frees d). */
static void
sample_decoded(uint32_t type, struct proto_msg *d)
{
	struct proto_msg	 m;
	struct buf		 a = BUF_INIT;
	char			 err[PROTO_ERRLEN];

	fill_sample(&m, type);
	ck_assert_int_eq(proto_encode(&a, &m), 0);
	ck_assert_msg(proto_decode(a.b_data + 4, a.b_len - 4, d, err) == 0,
	    "%s", err);
	buf_free(&a);
}

START_TEST(early_answer_values)
{
	struct proto_msg	 d;

	sample_decoded(PROTO_REQ_DONE, &d);
	ck_assert(d.m_u.req_done.background);
	ck_assert(d.m_u.req_done.retiring);
	ck_assert_uint_eq(d.m_u.req_done.http_status, 502);
	ck_assert(str_eq(d.m_u.req_done.retry_after, "30"));
	proto_msg_free(&d);
	sample_decoded(PROTO_POST_DONE, &d);
	ck_assert(str_eq(d.m_rqid, "rq-1234"));
	ck_assert(d.m_u.post_done.retiring);
	ck_assert(d.m_u.post_done.failed);
	ck_assert(str_eq(d.m_u.post_done.message, "memory node failed"));
	proto_msg_free(&d);
}
END_TEST

START_TEST(post_done_defaults)
{
	struct proto_msg	 m, d;
	struct buf		 a = BUF_INIT;
	char			 err[PROTO_ERRLEN];

	proto_msg_init(&m, PROTO_POST_DONE, "r");
	proto_encode(&a, &m);
	ck_assert_int_eq(proto_decode(a.b_data + 4, a.b_len - 4, &d, err), 0);
	ck_assert(!d.m_u.post_done.retiring);
	ck_assert(!d.m_u.post_done.failed);
	ck_assert_ptr_null(d.m_u.post_done.message.p);
	proto_msg_free(&d);
	buf_free(&a);
}
END_TEST

START_TEST(names_and_directions)
{
	ck_assert_str_eq(proto_type_name(PROTO_REQ_DONE), "REQ_DONE");
	ck_assert_str_eq(proto_type_name(99), "UNKNOWN");
	ck_assert_int_eq(proto_type_dir(PROTO_HELLO), W2G);
	ck_assert_int_eq(proto_type_dir(PROTO_CANCEL), G2W);
	ck_assert_str_eq(proto_type_name(PROTO_POST_DONE), "POST_DONE");
	ck_assert_int_eq(proto_type_dir(PROTO_POST_DONE), W2G);
	ck_assert_int_eq(PROTO_POST_DONE, 12);	/* ids are permanent */
	ck_assert_int_eq(proto_type_dir(0), 0);
}
END_TEST

/* Pack [version, type, rqid, body] with a caller-built body. */
static void
pack_env(msgpack_sbuffer *sb, uint32_t ver, uint32_t type,
    void (*body)(msgpack_packer *))
{
	msgpack_packer	 pk;

	msgpack_sbuffer_init(sb);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 4);
	msgpack_pack_uint32(&pk, ver);
	msgpack_pack_uint32(&pk, type);
	msgpack_pack_str_with_body(&pk, "r1", 2);
	body(&pk);
}

static void
body_wrong_type(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 1);
	msgpack_pack_str_with_body(pk, "st", 2);
	msgpack_pack_str_with_body(pk, "ok", 2);	/* must be an integer */
}

static void
body_missing_required(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 1);
	msgpack_pack_str_with_body(pk, "fin", 3);
	msgpack_pack_str_with_body(pk, "stop", 4);
}

static void
body_unknown_key(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	msgpack_pack_str_with_body(pk, "future", 6);
	msgpack_pack_double(pk, 1.5);
	msgpack_pack_str_with_body(pk, "st", 2);
	msgpack_pack_uint32(pk, RQ_OK);
}

static void
body_bg_not_bool(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	msgpack_pack_str_with_body(pk, "st", 2);
	msgpack_pack_uint32(pk, RQ_OK);
	msgpack_pack_str_with_body(pk, "bg", 2);
	msgpack_pack_uint32(pk, 1);		/* must be a boolean */
}

static void
body_fail_not_bool(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 1);
	msgpack_pack_str_with_body(pk, "fail", 4);
	msgpack_pack_str_with_body(pk, "yes", 3);
}

static void
body_msg_not_str(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	msgpack_pack_str_with_body(pk, "fail", 4);
	msgpack_pack_true(pk);
	msgpack_pack_str_with_body(pk, "msg", 3);
	msgpack_pack_int64(pk, -7);
}

/* SLOT_ACQUIRE's endpoint is required: nil must not stand for it
 * (proto_fuzz found nil accepted as an absent required string). */
static void
body_required_nil(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	msgpack_pack_str_with_body(pk, "ep", 2);
	msgpack_pack_nil(pk);
	msgpack_pack_str_with_body(pk, "lim", 3);
	msgpack_pack_uint32(pk, 1);
}

/* A REQ_START message whose required role is nil. */
static void
body_role_nil(msgpack_packer *pk)
{
	msgpack_pack_map(pk, 2);
	msgpack_pack_str_with_body(pk, "api", 3);
	msgpack_pack_uint32(pk, API_OPENAI_CHAT);
	msgpack_pack_str_with_body(pk, "msgs", 4);
	msgpack_pack_array(pk, 1);
	msgpack_pack_map(pk, 2);
	msgpack_pack_str_with_body(pk, "role", 4);
	msgpack_pack_nil(pk);
	msgpack_pack_str_with_body(pk, "content", 7);
	msgpack_pack_nil(pk);
}

static void
body_not_map(msgpack_packer *pk)
{
	msgpack_pack_array(pk, 0);
}

static int
decode_sb(msgpack_sbuffer *sb, struct proto_msg *d, char *err)
{
	int	 r = proto_decode(sb->data, sb->size, d, err);

	proto_msg_free(d);
	msgpack_sbuffer_destroy(sb);
	return r;
}

START_TEST(wrong_types_rejected)
{
	msgpack_sbuffer	 sb;
	struct proto_msg d;
	char		 err[PROTO_ERRLEN];

	pack_env(&sb, PROTO_VERSION, PROTO_REQ_DONE, body_wrong_type);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "'st'") != NULL, "%s", err);

	pack_env(&sb, PROTO_VERSION, PROTO_REQ_DONE, body_missing_required);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "missing") != NULL, "%s", err);

	pack_env(&sb, PROTO_VERSION, PROTO_REQ_DONE, body_not_map);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);

	pack_env(&sb, PROTO_VERSION, 77, body_unknown_key);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "unknown message type") != NULL, "%s", err);
}
END_TEST

START_TEST(required_string_not_nil)
{
	msgpack_sbuffer	 sb;
	struct proto_msg d;
	char		 err[PROTO_ERRLEN];

	pack_env(&sb, PROTO_VERSION, PROTO_SLOT_ACQUIRE, body_required_nil);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "'ep' must be a string") != NULL, "%s", err);

	/* so is a nil role, next to a nil content (optional: allowed) */
	pack_env(&sb, PROTO_VERSION, PROTO_REQ_START, body_role_nil);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "'role' must be a string") != NULL, "%s",
	    err);
}
END_TEST

START_TEST(early_answer_types_checked)
{
	msgpack_sbuffer	 sb;
	struct proto_msg d;
	char		 err[PROTO_ERRLEN];

	pack_env(&sb, PROTO_VERSION, PROTO_REQ_DONE, body_bg_not_bool);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "'bg'") != NULL, "%s", err);

	pack_env(&sb, PROTO_VERSION, PROTO_POST_DONE, body_fail_not_bool);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "POST_DONE: field 'fail'") != NULL, "%s",
	    err);

	pack_env(&sb, PROTO_VERSION, PROTO_POST_DONE, body_msg_not_str);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
	ck_assert_msg(strstr(err, "'msg'") != NULL, "%s", err);

	pack_env(&sb, PROTO_VERSION, PROTO_POST_DONE, body_not_map);
	ck_assert_int_eq(decode_sb(&sb, &d, err), -1);
}
END_TEST

START_TEST(unknown_keys_ignored)
{
	msgpack_sbuffer	 sb;
	struct proto_msg d;
	char		 err[PROTO_ERRLEN];

	pack_env(&sb, PROTO_VERSION, PROTO_REQ_DONE, body_unknown_key);
	ck_assert_int_eq(proto_decode(sb.data, sb.size, &d, err), 0);
	ck_assert_uint_eq(d.m_u.req_done.status, RQ_OK);
	proto_msg_free(&d);
	msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(version_mismatch_is_identifiable)
{
	msgpack_sbuffer	 sb;
	struct proto_msg d;
	char		 err[PROTO_ERRLEN];

	pack_env(&sb, PROTO_VERSION + 1, PROTO_HELLO, body_unknown_key);
	ck_assert_int_eq(proto_decode(sb.data, sb.size, &d, err), -1);
	ck_assert_uint_eq(d.m_version, PROTO_VERSION + 1);
	ck_assert_uint_eq(d.m_type, PROTO_HELLO);
	ck_assert_msg(strstr(err, "version") != NULL, "%s", err);
	proto_msg_free(&d);
	msgpack_sbuffer_destroy(&sb);
}
END_TEST

START_TEST(truncated_frames_rejected)
{
	struct proto_msg	 m, d;
	struct buf		 a = BUF_INIT;
	char			 err[PROTO_ERRLEN];
	size_t			 cut;

	fill_sample(&m, PROTO_REQ_START);
	proto_encode(&a, &m);
	for (cut = 0; cut < a.b_len - 4; cut++) {
		ck_assert_msg(proto_decode(a.b_data + 4, cut, &d, err) == -1,
		    "prefix of %zu bytes accepted", cut);
		proto_msg_free(&d);
	}
	buf_free(&a);
}
END_TEST

START_TEST(hostile_msgpack_rejected)
{
	/* array32 claiming 2^32-1 elements: msgpack-c would reserve 96 GiB */
	static const unsigned char huge[] = { 0xdd, 0xff, 0xff, 0xff, 0xff };
	static const unsigned char map[] = { 0xdf, 0x03, 0xff, 0xff, 0xff };
	static const unsigned char ext[] = { 0xd4, 0x01, 0x02 };
	static const unsigned char trail[] = { 0xc0, 0xc0 };
	unsigned char	 deep[10000];
	char		 err[PROTO_ERRLEN];
	struct proto_msg d;

	ck_assert_int_eq(mpscan(huge, sizeof(huge), 16, err, sizeof(err)), -1);
	ck_assert_int_eq(mpscan(map, sizeof(map), 16, err, sizeof(err)), -1);
	ck_assert_int_eq(mpscan(ext, sizeof(ext), 16, err, sizeof(err)), -1);
	ck_assert_int_eq(mpscan(trail, sizeof(trail), 16, err, sizeof(err)),
	    -1);
	memset(deep, 0x91, sizeof(deep));	/* [[[[...]]]] 10,000 deep */
	deep[sizeof(deep) - 1] = 0xc0;
	ck_assert_int_eq(mpscan(deep, sizeof(deep), 16, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "deep") != NULL, "%s", err);
	ck_assert_int_eq(proto_decode(deep, sizeof(deep), &d, err), -1);
	proto_msg_free(&d);
	ck_assert_int_eq(proto_decode(huge, sizeof(huge), &d, err), -1);
	proto_msg_free(&d);
	ck_assert_int_eq(proto_decode("", 0, &d, err), -1);
	proto_msg_free(&d);
}
END_TEST

START_TEST(frame_reader_split_and_oversize)
{
	struct frame_rd		 r;
	struct proto_msg	 m;
	struct buf		 a = BUF_INIT;
	const unsigned char	*p;
	size_t			 n, i, got = 0;
	unsigned char		 big[4];

	fill_sample(&m, PROTO_HEARTBEAT);
	proto_encode(&a, &m);
	proto_encode(&a, &m);
	frame_rd_init(&r, 0);
	for (i = 0; i < a.b_len; i++) {	/* one byte at a time */
		frame_rd_feed(&r, a.b_data + i, 1);
		while (frame_rd_next(&r, &p, &n) == 1)
			got++;
	}
	ck_assert_uint_eq(got, 2);
	frame_hdr_put(big, PROTO_MAX_FRAME + 1);
	frame_rd_feed(&r, big, sizeof(big));
	ck_assert_int_eq(frame_rd_next(&r, &p, &n), -1);
	/* The reader must not have grown to the declared size. */
	ck_assert_uint_lt(r.fr_cap, 1024 * 1024);
	frame_rd_free(&r);
	buf_free(&a);
}
END_TEST

START_TEST(frame_reader_from_fd)
{
	struct frame_rd		 r;
	struct proto_msg	 m, d;
	struct buf		 a = BUF_INIT;
	const unsigned char	*p;
	size_t			 n;
	char			 err[PROTO_ERRLEN];
	int			 fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	fill_sample(&m, PROTO_REQ_CHUNK);
	proto_encode(&a, &m);
	ck_assert_int_eq(frame_write_all(fds[1], a.b_data, a.b_len), 0);
	close(fds[1]);
	frame_rd_init(&r, 0);
	while (frame_rd_next(&r, &p, &n) == 0)
		ck_assert_int_gt(frame_rd_fill(&r, fds[0]), 0);
	ck_assert_int_eq(proto_decode(p, n, &d, err), 0);
	ck_assert_uint_eq(d.m_u.req_chunk.seq, 7);
	proto_msg_free(&d);
	ck_assert_int_eq(frame_rd_fill(&r, fds[0]), 0);	/* EOF */
	frame_rd_free(&r);
	close(fds[0]);
	buf_free(&a);
}
END_TEST

static Suite *
proto_suite(void)
{
	Suite	*s = suite_create("proto");
	TCase	*tc;

	tc = tcase_create("round_trip");
	tcase_add_loop_test(tc, round_trip_every_message, 0, NTYPES);
	tcase_add_test(tc, decoded_values);
	tcase_add_test(tc, defaults_for_missing_optional);
	tcase_add_test(tc, names_and_directions);
	tcase_add_test(tc, early_answer_values);
	tcase_add_test(tc, post_done_defaults);
	suite_add_tcase(s, tc);
	tc = tcase_create("strict_decoding");
	tcase_add_test(tc, wrong_types_rejected);
	tcase_add_test(tc, required_string_not_nil);
	tcase_add_test(tc, early_answer_types_checked);
	tcase_add_test(tc, unknown_keys_ignored);
	tcase_add_test(tc, version_mismatch_is_identifiable);
	tcase_add_test(tc, truncated_frames_rejected);
	tcase_add_test(tc, hostile_msgpack_rejected);
	suite_add_tcase(s, tc);
	tc = tcase_create("framing");
	tcase_add_test(tc, frame_reader_split_and_oversize);
	tcase_add_test(tc, frame_reader_from_fd);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(proto_suite());
}
