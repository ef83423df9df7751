/* check_fernet.c - WilmerAI's file encryption: key folder, key derivation and Fernet tokens against Python's cryptography (addendum A10; WilmerAI's test_encryption_utils cases). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/base64.h"
#include "../../common/buf.h"
#include "../../common/fernet.h"
#include "../testmain.h"

#define KAT_KEY	"wilmer-kat-api-key"

/* Made with Python's cryptography 48: Fernet(derive(KAT_KEY,
 * "alice"))._encrypt_from_parts(PLAIN, 1700000000, bytes(range(16))). */
#define PLAIN	"[\n    {\n        \"text_block\": \"caf\\u00e9\",\n" \
	"        \"hash\": \"h\"\n    }\n]"
#define TOKEN	"gAAAAABlU_EAAAECAwQFBgcICQoLDA0OD4ek46JYCekzsFySeKPE_Jgfs4pBm" \
	"yX405wUjIgmmcwcGo7PPDSp-Cf2_mEU-6uY4w-aBVhnJ0uOYPJ_GOYmgQO_rQmfRnik" \
	"MOi3cDRNq_Z2smB_U-2j-k_XXApQ_JfxkddXHfm_nN1xdeHHtD08tEo="
/* Fernet(derive("k\u00e9y", "\u00fcser")).encrypt(b""): a random IV. */
#define EMPTY	"gAAAAABrCozdBjAU08kewwV5sZU5tZxckSxyTn5ryioMVcdD_AwxyZFEdrn" \
	"AR2VkwXfc1i5KOTw58suHFO1VPqWJ0ZEV9Qn1qg=="

static struct fernet_key	K;

static void
derive(const char *key, const char *user)
{
	ck_assert_int_eq(fernet_derive(&K, key, user), 0);
}

static void
key_is(const char *want)
{
	char	 t[FERNET_TEXTLEN];

	fernet_text(&K, t);
	ck_assert_str_eq(t, want);
}

/* A10.1: the key's folder. */
START_TEST(a10_1_key_folder)
{
	char	 d[FERNET_DIRLEN];

	fernet_dir(KAT_KEY, d);
	ck_assert_str_eq(d, "d9f1a0f35a24bdc1");
}
END_TEST

/* A10.2: both known answers; the user name changes the key; a second
 * derivation is the same. */
START_TEST(a10_2_derivation)
{
	derive(KAT_KEY, NULL);
	key_is("C9o55gE7gWuBRV0K2LlbfZMKbmInoxBU6mdOyUS6lbs=");
	derive(KAT_KEY, "alice");
	key_is("Jn5L4URVkOevuRB8P4vIIzO_LEvaZIqMXoM8FNCL-Yw=");
	derive(KAT_KEY, "alice");
	key_is("Jn5L4URVkOevuRB8P4vIIzO_LEvaZIqMXoM8FNCL-Yw=");
	derive(KAT_KEY, "Alice");
	{
		char	 t[FERNET_TEXTLEN];

		fernet_text(&K, t);
		ck_assert_uint_eq(strlen(t), 44);
		ck_assert_str_ne(t, "Jn5L4URVkOevuRB8P4vIIzO_LEvaZIqMXoM8FNCL-"
		    "Yw=");
	}
	fernet_wipe(&K);
	for (size_t i = 0; i < sizeof(K.fk_bytes); i++)
		ck_assert_int_eq(K.fk_bytes[i], 0);
}
END_TEST

/* A10.3: the token Python makes from the same parts, byte for byte;
 * and it reads back. */
START_TEST(a10_3_token_known_answer)
{
	unsigned char	 iv[16];
	struct buf	 b = BUF_INIT;

	for (int i = 0; i < 16; i++)
		iv[i] = (unsigned char)i;
	derive(KAT_KEY, "alice");
	ck_assert_int_eq(fernet_encrypt(&K, PLAIN, strlen(PLAIN), 1700000000,
	    iv, &b), 0);
	ck_assert_str_eq(b.b_data, TOKEN);
	buf_reset(&b);
	ck_assert_int_eq(fernet_decrypt(&K, TOKEN, strlen(TOKEN), &b), 0);
	ck_assert_str_eq(b.b_data, PLAIN);
	buf_free(&b);
	fernet_wipe(&K);
}
END_TEST

/* Round trips with random IVs (two tokens differ), the empty text, a
 * token Python made under a non-ASCII key and user. */
START_TEST(a10_3_round_trips)
{
	struct buf	 a = BUF_INIT, b = BUF_INIT, p = BUF_INIT;

	derive("k\xc3\xa9y", "\xc3\xbcser");
	ck_assert_int_eq(fernet_decrypt(&K, EMPTY, strlen(EMPTY), &p), 0);
	ck_assert_uint_eq(p.b_len, 0);
	ck_assert_int_eq(fernet_encrypt(&K, "", 0, 1, NULL, &a), 0);
	ck_assert_int_eq(fernet_encrypt(&K, "", 0, 1, NULL, &b), 0);
	ck_assert_str_ne(a.b_data, b.b_data);
	ck_assert_int_eq(fernet_decrypt(&K, a.b_data, a.b_len, &p), 0);
	ck_assert_uint_eq(p.b_len, 0);
	buf_reset(&a);
	ck_assert_int_eq(fernet_encrypt(&K, "0123456789abcdef", 16, 7, NULL,
	    &a), 0);
	ck_assert_int_eq(fernet_decrypt(&K, a.b_data, a.b_len, &p), 0);
	ck_assert_str_eq(p.b_data, "0123456789abcdef");
	buf_free(&a);
	buf_free(&b);
	buf_free(&p);
	fernet_wipe(&K);
}
END_TEST

/* Decrypting t must fail and leave out as it was. */
static void
refused(const char *t, size_t n)
{
	struct buf	 out = BUF_INIT;

	buf_adds(&out, "kept");
	ck_assert_int_eq(fernet_decrypt(&K, t, n, &out), -1);
	ck_assert_str_eq(out.b_data, "kept");
	buf_free(&out);
}

/* Another key, a changed byte anywhere, a cut token, another version,
 * text that is not base64: all refused. */
START_TEST(a10_3_invalid_tokens)
{
	char	*t = strdup(TOKEN);
	size_t	 i, n = strlen(TOKEN);

	derive(KAT_KEY, NULL);
	refused(TOKEN, n);
	derive(KAT_KEY, "alice");
	for (i = 0; i < n - 2; i += 7) {
		char	 c = t[i];

		t[i] = c == 'A' ? 'B' : 'A';
		refused(t, n);
		t[i] = c;
	}
	refused(TOKEN, n - 4);
	refused(TOKEN, 40);
	refused("", 0);
	refused("not a token!", 12);
	refused("gAAA", 4);
	t[0] = 'g' + 1;		/* version byte 0x81 */
	refused(t, n);
	free(t);
	fernet_wipe(&K);
}
END_TEST

/* URL-safe base64 as Python writes it, and what it reads. */
START_TEST(a10_3_base64url)
{
	struct buf	 b = BUF_INIT;

	base64url_encode(&b, "\xfb\xff", 2);
	ck_assert_str_eq(b.b_data, "-_8=");
	buf_reset(&b);
	base64url_encode(&b, "ab", 2);
	base64url_encode(&b, "c", 1);
	base64url_encode(&b, "", 0);
	ck_assert_str_eq(b.b_data, "YWI=Yw==");
	buf_reset(&b);
	ck_assert_int_eq(base64url_decode("-_8=\n", 5, &b), 0);
	ck_assert_uint_eq(b.b_len, 2);
	ck_assert_int_eq(memcmp(b.b_data, "\xfb\xff", 2), 0);
	buf_reset(&b);
	ck_assert_int_eq(base64url_decode("YWJj", 4, &b), 0);
	ck_assert_str_eq(b.b_data, "abc");
	ck_assert_int_eq(base64url_decode("+/8=", 4, &b), -1);
	ck_assert_int_eq(base64url_decode("YWI", 3, &b), -1);
	ck_assert_int_eq(base64url_decode("Y===", 4, &b), -1);
	ck_assert_int_eq(base64url_decode("YW=I", 4, &b), -1);
	buf_free(&b);
}
END_TEST

/* A token's shape (what the store and the importer tell apart from
 * plain text, A10.5). */
START_TEST(a10_5_token_shape)
{
	ck_assert(fernet_is_token(TOKEN, strlen(TOKEN)));
	ck_assert(fernet_is_token(EMPTY, strlen(EMPTY)));
	ck_assert(!fernet_is_token(TOKEN, 99));
	ck_assert(!fernet_is_token(TOKEN + 1, strlen(TOKEN) - 1));
	ck_assert(!fernet_is_token(TOKEN "+", strlen(TOKEN) + 1));
	ck_assert(!fernet_is_token(TOKEN "\n", strlen(TOKEN) + 1));
	ck_assert(!fernet_is_token("[{\"text_block\": \"gAAAAA\"}]", 26));
	ck_assert(!fernet_is_token("", 0));
}
END_TEST

static Suite *
fernet_suite(void)
{
	Suite	*s = suite_create("fernet");

	test_case(s, "a10_1", a10_1_key_folder, 0);
	test_case(s, "a10_2", a10_2_derivation, 0);
	test_case(s, "a10_3_kat", a10_3_token_known_answer, 0);
	test_case(s, "a10_3_round", a10_3_round_trips, 0);
	test_case(s, "a10_3_invalid", a10_3_invalid_tokens, 0);
	test_case(s, "a10_3_base64", a10_3_base64url, 0);
	test_case(s, "a10_5_shape", a10_5_token_shape, 0);
	return s;
}

int
main(void)
{
	return check_main(fernet_suite());
}
