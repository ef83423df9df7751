/* check_chat_delta.c - tests for reading an OpenAI chat stream event without a tree: it must agree with jansson's tree wherever it answers. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/jscan.h"
#include "../../worker/llm/chat_delta.h"
#include "../testmain.h"

/* What adapter_openai.c's tree reading takes from an event. */
struct ref {
	bool		 r_tree;	/* only the tree can: refused,
					   not an object, an error, calls */
	bool		 r_choice;
	char		*r_content;	/* NULL: not a string */
	size_t		 r_clen;
	char		*r_finish;
	bool		 r_hp, r_hc;
	long long	 r_p, r_c;
};

static char *
dup_string(json_t *s, size_t *len)
{
	char	*p;

	if (!json_is_string(s))
		return NULL;
	*len = json_string_length(s);
	p = malloc(*len + 1);
	memcpy(p, json_string_value(s), *len + 1);
	return p;
}

static void
ref_read(const char *t, size_t n, struct ref *r)
{
	json_t	*root = json_loadb(t, n, 0, NULL), *e, *choice, *delta, *u;
	json_t	*tc;
	size_t	 flen;

	memset(r, 0, sizeof(*r));
	e = json_object_get(root, "error");
	if (!json_is_object(root) || (e != NULL && !json_is_null(e))) {
		r->r_tree = true;
		json_decref(root);
		return;
	}
	choice = json_array_get(json_object_get(root, "choices"), 0);
	delta = json_object_get(choice, "delta");
	tc = json_object_get(delta, "tool_calls");
	r->r_tree = json_is_array(tc) && json_array_size(tc) > 0;
	r->r_choice = choice != NULL;
	r->r_content = dup_string(json_object_get(delta, "content"),
	    &r->r_clen);
	r->r_finish = dup_string(json_object_get(choice, "finish_reason"),
	    &flen);
	u = json_object_get(root, "usage");
	r->r_hp = json_is_integer(json_object_get(u, "prompt_tokens"));
	r->r_hc = json_is_integer(json_object_get(u, "completion_tokens"));
	r->r_p = json_integer_value(json_object_get(u, "prompt_tokens"));
	r->r_c = json_integer_value(json_object_get(u, "completion_tokens"));
	json_decref(root);
}

static void
ref_free(struct ref *r)
{
	free(r->r_content);
	free(r->r_finish);
}

static bool
str_is(struct str s, const char *want, size_t n)
{
	if (s.p == NULL || want == NULL)
		return s.p == NULL && want == NULL;
	return s.n == n && memcmp(s.p, want, n) == 0;
}

/* Scan t; when the scan answers, the tree must say the same. Returns
 * what the scan returned. */
static int
agree(const char *t, size_t n)
{
	struct jscan		 js;
	struct chat_delta	 d;
	struct ref		 r;
	int			 got = chat_delta_scan(&js, t, n, &d);

	ref_read(t, n, &r);
	if (got == 1) {
		ck_assert_msg(!r.r_tree, "scanned what only the tree can "
		    "read: %.*s", (int)n, t);
		ck_assert_msg(d.cd_choice == r.r_choice, "choice: %.*s",
		    (int)n, t);
		ck_assert_msg(str_is(d.cd_content, r.r_content, r.r_clen),
		    "content: %.*s", (int)n, t);
		ck_assert_msg(str_is(d.cd_finish, r.r_finish, r.r_finish ?
		    strlen(r.r_finish) : 0), "finish: %.*s", (int)n, t);
		ck_assert_msg(d.cd_has_prompt == r.r_hp &&
		    d.cd_has_completion == r.r_hc, "usage: %.*s", (int)n, t);
		ck_assert(!r.r_hp || d.cd_prompt == r.r_p);
		ck_assert(!r.r_hc || d.cd_completion == r.r_c);
	}
	jscan_clear(&js);
	ref_free(&r);
	return got;
}

static int
agree_s(const char *t)
{
	return agree(t, strlen(t));
}

/* Events as servers send them (OpenAI, vLLM, llama.cpp, LM Studio,
 * Ollama's /v1) are read by the scan. */
static const char *const common[] = {
	"{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
	"\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":"
	"{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
	"\"finish_reason\":null}]}",
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" Paris\"},"
	"\"finish_reason\":null}]}",
	"{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
	"\"usage\":null}",
	"{\"choices\":[],\"usage\":{\"prompt_tokens\":12,"
	"\"completion_tokens\":7,\"total_tokens\":19}}",
	"{\"choices\":[{\"delta\":{\"content\":\"caf\\u00e9 \\\"q\\\" \\n"
	"\\ud83d\\ude00\",\"tool_calls\":null},\"finish_reason\":null}]}",
	"{\"choices\":[{\"delta\":{\"content\":\"x\",\"tool_calls\":[]}}]}",
	"{\"error\":null,\"choices\":[{\"delta\":{\"content\":\"y\"}}]}",
	"  {\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}\r\n",
	"{\"choices\":[{\"delta\":{\"content\":\"a\"}},{\"delta\":"
	"{\"content\":\"b\"}}]}",
	"{\"choices\":[{\"delta\":{\"content\":\"first\",\"content\":\"last\"},"
	"\"finish_reason\":\"stop\",\"finish_reason\":null}],"
	"\"usage\":{\"prompt_tokens\":1},\"usage\":{\"completion_tokens\":-0}}",
	"{\"choices\":[{\"delta\":{\"content\":null}}],\"usage\":"
	"{\"prompt_tokens\":1.0,\"completion_tokens\":\"2\"}}",
	"{\"choices\":[\"odd\"]}",
	"{\"choices\":[{\"delta\":{\"content\":\"a\"},\"delta\":{}}]}",
	"{\"choices\":[{\"delta\":{\"content\":\"a\"},"
	"\"finish_reason\":\"stop\"}],\"choices\":[]}",
	"{\"choices\":{\"0\":{}}}",
	"{\"choices\":[{\"delta\":[\"content\"]}]}",
	"{}",
};

START_TEST(common_shapes)
{
	size_t	 i;

	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		ck_assert_msg(agree_s(common[i]) == 1, "not scanned: %s",
		    common[i]);
}
END_TEST

/* What the scan leaves to the tree. */
static const char *const tree[] = {
	"[1]",
	"\"text\"",
	"{\"error\":{\"message\":\"overloaded\"}}",
	"{\"error\":\"x\",\"error\":null}",
	"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","
	"\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}",
	"{\"choices\":[{\"delta\":{\"content\":\"x\"}}]} trailing",
	"{\"choices\":[{\"delta\":{\"content\":\"x\"}}]",
	"{\"choices\":[{\"delta\":{\"content\":\"\\u0000\"}}]}",
	"{\"choices\":[{\"delta\":{\"content\":\"\xc3\x28\"}}]}",
	"{\"usage\":{\"prompt_tokens\":99999999999999999999}}",
	"",
};

START_TEST(left_to_the_tree)
{
	size_t	 i;

	for (i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		ck_assert_msg(agree_s(tree[i]) == 0, "scanned: %s", tree[i]);
	ck_assert_int_eq(agree("{\"choices\":[]}\0", 15), 0);
}
END_TEST

/* Random edits of the common shapes: wherever the scan answers, the
 * tree agrees (agree asserts it). Some edits must stay readable. */
START_TEST(random_edits)
{
	static const char	 bytes[] = "{}[]\",:\\ 0123456789.eE+-tfnul"
				    "\x80\xc3\xe2\x00\x1f";
	char			 t[512];
	size_t			 i, n, pos;
	int			 k, e, scanned = 0;

	srandom(20261128);
	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		for (k = 0; k < 3000; k++) {
			n = strlen(common[i]);
			memcpy(t, common[i], n);
			for (e = 0; e < 1 + (int)(random() % 3); e++) {
				pos = (size_t)random() % (n + 1);
				if (random() % 2 == 0 && pos < n)
					t[pos] = bytes[random() %
					    (sizeof(bytes) - 1)];
				else if (random() % 2 == 0 && pos < n) {
					memmove(t + pos, t + pos + 1,
					    n - pos - 1);
					n--;
				} else if (n + 1 < sizeof(t)) {
					memmove(t + pos + 1, t + pos, n - pos);
					t[pos] = bytes[random() %
					    (sizeof(bytes) - 1)];
					n++;
				}
			}
			scanned += agree(t, n);
		}
	ck_assert_int_gt(scanned, 1000);
}
END_TEST

static Suite *
chat_delta_suite(void)
{
	Suite	*s = suite_create("chat_delta");
	TCase	*tc = tcase_create("scan");

	tcase_add_test(tc, common_shapes);
	tcase_add_test(tc, left_to_the_tree);
	tcase_add_test(tc, random_edits);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(chat_delta_suite());
}
