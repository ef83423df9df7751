/* check_build.c - what a backend call is built from and sends, without the network: target loading (worker/llm/target.c), conversation variables, messages, clamp and prompt (worker/llm/build.c). */
#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/xmem.h"
#include "../worker/core/vars.h"
#include "../worker/llm/build.h"
#include "../worker/llm/target.h"
#include "../worker/core/msgs_edit.h"
#include "fakerq.h"
#include "it/harness.h"
#include "testmain.h"

/* The world of every test (each runs in its own process): it_config's
 * folder (user "it", endpoint "Mock": OpenAI chat, preset "Mock"), a
 * node of workflow "wf", its variables and conversation. Nothing is
 * called: the endpoints' URLs are never used. */
static struct it	 T;
static struct fakerq	 R;
static struct conf_user	*U;
static struct vars	*V;
static struct wmsgs	 M;
static json_t		*N;	/* the node */
static struct node_ctx	 X;

static void
user_load(void)
{
	char	 err[CONF_ERRLEN];

	conf_user_free(U);
	ck_assert_msg(conf_user_load(T.it_dir, "it", &U, err) == 0, "%s", err);
	X.nx_user = U;
}

static void
setup(void)
{
	memset(&T, 0, sizeof(T));
	it_config(&T, NULL, "http://127.0.0.1:9");
	it_turns_template(&T);
	fakerq_init(&R, "t", -1);
	V = vars_new();
	vars_set(V, "name", "Ann");
	memset(&M, 0, sizeof(M));
	N = json_pack("{s:s}", "type", "Standard");
	memset(&X, 0, sizeof(X));
	X.nx_rq = &R.fr_rq;
	X.nx_node = N;
	X.nx_workflow = "wf";
	X.nx_index = 2;
	X.nx_count = 5;
	X.nx_confdir = T.it_dir;
	X.nx_vars = V;
	X.nx_early = V;
	X.nx_msgs = &M;
	X.nx_responder = X.nx_deliver = X.nx_top = true;
	X.nx_discussion_id = "";
	U = NULL;
	user_load();
}

static void
teardown(void)
{
	conf_user_free(U);
	json_decref(N);
	wmsgs_free(&M);
	vars_free(V);
	fakerq_free(&R);
	it_stop(&T, 0);
}

/* Endpoint name of api type type (its own ApiTypes file) with the
 * "turns" template and extra members ("" or ", \"key\": value"). */
static void
backend(const char *name, const char *type, const char *ep_extra)
{
	it_backend(&T, NULL, name, type, "http://127.0.0.1:9", "", ep_extra);
}

/* Set node members from a json_pack format. */
static void
node_set(const char *fmt, ...)
{
	json_error_t	 e;
	json_t		*o;
	va_list		 ap;

	va_start(ap, fmt);
	o = json_vpack_ex(&e, 0, fmt, ap);
	va_end(ap);
	ck_assert_msg(o != NULL, "json_pack: %s", e.text);
	json_object_update(N, o);
	json_decref(o);
}

/* The conversation: role, content pairs up to a NULL role. */
static void
conv(const char *role, ...)
{
	va_list	 ap;

	va_start(ap, role);
	for (; role != NULL; role = va_arg(ap, const char *))
		wmsgs_add(&M, role, va_arg(ap, const char *));
	va_end(ap);
}

static void
target(const char *ep, const char *preset, struct llm_target *t)
{
	struct wresult	 res;

	memset(&res, 0, sizeof(res));
	ck_assert_msg(target_load(&X, ep, preset, t, &res) == 0, "%s",
	    res.r_message);
}

static void
ask_init(struct llm_ask *a, const char *system, const char *prompt)
{
	memset(a, 0, sizeof(*a));
	a->la_endpoint = "Mock";
	a->la_preset = "";
	a->la_system = system;
	a->la_prompt = prompt;
	a->la_max_tokens = 100;
	a->la_opts = N;
}

/* The messages a chat call of endpoint ep sends, one "role:content" a
 * line ("[n img]" after a message with images). Caller frees. */
static char *
chat_sent(const char *ep, const char *system, const char *prompt)
{
	struct llm_target	 t;
	struct llm_ask		 a;
	struct wmsgs		 sent;
	struct wresult		 res;
	struct buf		 b = BUF_INIT;
	char			*p = NULL;
	size_t			 i;

	target(ep, "", &t);
	ask_init(&a, system, prompt);
	memset(&res, 0, sizeof(res));
	ck_assert_msg(build_request(&X, &a, &t, &sent, &p, &res) == 0, "%s",
	    res.r_message);
	ck_assert_ptr_null(p);
	for (i = 0; i < sent.n; i++) {
		buf_printf(&b, "%s:%s", sent.v[i].m_role, sent.v[i].m_content);
		if (sent.v[i].m_nimages > 0)
			buf_printf(&b, "[%zu img]", sent.v[i].m_nimages);
		buf_addc(&b, '\n');
	}
	buf_addc(&b, '\0');
	wmsgs_free(&sent);
	target_free(&t);
	return buf_take(&b);
}

#define ck_sent(ep, system, prompt, want) do {				\
	char	*s_ = chat_sent(ep, system, prompt);			\
	ck_assert_str_eq(s_, want);					\
	free(s_);							\
} while (0)

/* The prompt string a completion call of endpoint ep sends. Caller
 * frees. */
static char *
completion_sent(const char *ep, const char *system, const char *prompt)
{
	struct llm_target	 t;
	struct llm_ask		 a;
	struct wmsgs		 sent;
	struct wresult		 res;
	char			*p = NULL;

	target(ep, "", &t);
	ck_assert(t.tg_completion);
	ask_init(&a, system, prompt);
	memset(&res, 0, sizeof(res));
	ck_assert_msg(build_request(&X, &a, &t, &sent, &p, &res) == 0, "%s",
	    res.r_message);
	ck_assert_uint_eq(sent.n, 0);
	ck_assert_ptr_nonnull(p);
	target_free(&t);
	return p;
}

/* A node failure: status 500, the node named, needle in the message. */
static void
ck_node_fail(const struct wresult *res, const char *needle)
{
	const char	*head = "workflow 'wf' node 3 (Standard): ";

	ck_assert_int_eq(res->r_status, RQ_ERROR);
	ck_assert_int_eq(res->r_http, 500);
	ck_assert_msg(strncmp(res->r_message, head, strlen(head)) == 0,
	    "message '%s' does not start with '%s'", res->r_message, head);
	ck_assert_msg(strstr(res->r_message, needle) != NULL,
	    "message '%s' lacks '%s'", res->r_message, needle);
}

/* ---- target.c ---- */

/* A chat endpoint: its file, api type and resolved preset; no
 * templates (a chat user needs none on disk). */
START_TEST(target_chat)
{
	struct llm_target	 t;

	target("Mock", "Mock", &t);
	ck_assert_str_eq(t.tg_name, "Mock");
	ck_assert_str_eq(t.tg_ep->e_name, "Mock");
	ck_assert_int_eq(t.tg_at->a_type, APIT_OPENAI_CHAT);
	ck_assert(!t.tg_completion);
	ck_assert(json_real_value(json_object_get(t.tg_preset,
	    "temperature")) == 0.5);
	ck_assert_ptr_null(t.tg_pt);
	ck_assert_ptr_null(t.tg_chat_pt);
	target_free(&t);
	ck_assert_ptr_null(t.tg_ep);
	target("Mock", "", &t);
	ck_assert_ptr_null(t.tg_preset);
	target_free(&t);
}
END_TEST

/* A completion endpoint loads its template, and the user's chat
 * template when the user names one. */
START_TEST(target_completion)
{
	struct llm_target	 t;

	backend("Compl", "openAIV1Completion", "");
	target("Compl", "", &t);
	ck_assert(t.tg_completion);
	ck_assert_ptr_nonnull(t.tg_pt);
	ck_assert_str_eq(prompt_template_get(t.tg_pt, "user", "Prefix"),
	    "<|user|>\n");
	ck_assert_ptr_null(t.tg_chat_pt);
	target_free(&t);
	it_file(&T, "Users/it.json", "{\"chatCompleteAddUserAssistant\": "
	    "false, \"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"endpointConfigsSubDirectory\": \"it\", "
	    "\"chatPromptTemplateName\": \"turns\"}\n");
	user_load();
	target("Compl", "", &t);
	ck_assert_ptr_nonnull(t.tg_chat_pt);
	target_free(&t);
}
END_TEST

/* Each file that cannot be loaded is named, in a 500 naming the node. */
START_TEST(target_errors_name_file)
{
	struct llm_target	 t;
	struct wresult		 res;

	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(target_load(&X, "Nope", "", &t, &res), -1);
	ck_node_fail(&res, "Endpoints/it/Nope.json");
	target_free(&t);
	it_file(&T, "Endpoints/it/NoType.json", "{\"endpoint\": "
	    "\"http://127.0.0.1:9\", \"apiTypeConfigFileName\": \"Gone\"}\n");
	ck_assert_int_eq(target_load(&X, "NoType", "", &t, &res), -1);
	ck_node_fail(&res, "ApiTypes/Gone.json");
	target_free(&t);
	ck_assert_int_eq(target_load(&X, "Mock", "Missing", &t, &res), -1);
	ck_node_fail(&res, "Missing");
	target_free(&t);
	it_file(&T, "Endpoints/it/Broken.json", "{\"endpoint\": \n");
	ck_assert_int_eq(target_load(&X, "Broken", "", &t, &res), -1);
	ck_node_fail(&res, "Endpoints/it/Broken.json:");
	target_free(&t);
	backend("NoTpl", "ollamaApiGenerate", ", \"promptTemplate\": \"gone\"");
	ck_assert_int_eq(target_load(&X, "NoTpl", "", &t, &res), -1);
	ck_node_fail(&res, "PromptTemplates/gone.json");
	target_free(&t);
	/* The same template name on a chat endpoint is never read. */
	backend("ChatNoTpl", "ollamaApiChat", ", \"promptTemplate\": \"gone\"");
	target("ChatNoTpl", "", &t);
	target_free(&t);
}
END_TEST

/* ---- build.c: the conversation variables ---- */

/* The variables follow the node's settings and the target's kind:
 * chat lists for a chat endpoint, the template's turns in templated_*
 * for a completion one. */
START_TEST(conv_vars)
{
	struct llm_target	 t;
	struct llm_ask		 a;

	conv("system", "Sys", "user", "one", "assistant", "two", "user",
	    "three", NULL);
	ask_init(&a, "", NULL);
	node_set("{s:i, s:b}", "nMessagesToIncludeInVariable", 2,
	    "addUserAssistantTags", 1);
	target("Mock", "", &t);
	build_conv_vars(&X, &a, &t);
	ck_assert_str_eq(vars_get(V, "chat_user_prompt_last_one", 25),
	    "User: three");
	ck_assert_str_eq(vars_get(V, "chat_user_prompt_n_messages", 27),
	    "Assistant: two\nUser: three");
	ck_assert_str_eq(vars_get(V, "chat_system_prompt", 18), "Sys");
	ck_assert_str_eq(vars_get(V, "templated_user_prompt_last_one", 30),
	    "three");
	target_free(&t);
	backend("Compl", "openAIV1Completion", "");
	target("Compl", "", &t);
	build_conv_vars(&X, &a, &t);
	ck_assert_str_eq(vars_get(V, "templated_user_prompt_last_one", 30),
	    "<|user|>\nthree\n<|end|>\n");
	target_free(&t);
}
END_TEST

/* ---- build.c: chat messages ---- */

/* The node's system prompt (its variables filled in) first, then the
 * newest lastMessagesToSendInsteadOfPrompt messages after the
 * conversation's leading system ones. */
START_TEST(chat_system_and_last_n)
{
	conv("system", "conv sys", "user", "u1", "assistant", "a1", "user",
	    "u2", "assistant", "a2", "user", "u3", NULL);
	node_set("{s:i}", "lastMessagesToSendInsteadOfPrompt", 3);
	ck_sent("Mock", "Be {name}", NULL,
	    "system:Be Ann\nuser:u2\nassistant:a2\nuser:u3\n");
	ck_sent("Mock", "", NULL, "user:u2\nassistant:a2\nuser:u3\n");
	node_set("{s:i}", "lastMessagesToSendInsteadOfPrompt", 0);
	ck_sent("Mock", "", NULL, "user:u3\n");
	node_set("{s:i}", "lastMessagesToSendInsteadOfPrompt", 50);
	ck_sent("Mock", "", NULL, "user:u1\nassistant:a1\nuser:u2\n"
	    "assistant:a2\nuser:u3\n");
}
END_TEST

/* A prompt replaces the conversation with one user message; a prompt
 * that is empty only after substitution is still a prompt, an empty
 * field is none. */
START_TEST(chat_prompt)
{
	conv("user", "u1", "assistant", "a1", "user", "u2", NULL);
	ck_sent("Mock", "S", "Say {name}", "system:S\nuser:Say Ann\n");
	vars_set(V, "nothing", "");
	ck_sent("Mock", "", "{nothing}", "user:\n");
	ck_sent("Mock", "", "", "user:u1\nassistant:a1\nuser:u2\n");
}
END_TEST

/* When the selection holds no user message, the newest user message of
 * the conversation is put first (after any system message). */
START_TEST(chat_ensure_user)
{
	conv("user", "u1", "assistant", "a1", "user", "u2", "assistant", "a2",
	    NULL);
	node_set("{s:i}", "lastMessagesToSendInsteadOfPrompt", 1);
	ck_sent("Mock", "S", NULL, "system:S\nuser:u2\nassistant:a2\n");
}
END_TEST

/* Assistant turns next to each other: merged with the delimiter, or a
 * user turn put between them. */
START_TEST(chat_assistant_runs)
{
	conv("user", "u1", "assistant", "a1", "assistant", "a2", NULL);
	ck_sent("Mock", "", NULL, "user:u1\nassistant:a1\nassistant:a2\n");
	node_set("{s:b, s:s}", "mergeConsecutiveAssistantMessages", 1,
	    "mergeConsecutiveAssistantMessagesDelimiter", " | ");
	ck_sent("Mock", "", NULL, "user:u1\nassistant:a1 | a2\n");
	json_object_clear(N);
	node_set("{s:b}", "insertUserTurnBetweenAssistantMessages", 1);
	ck_sent("Mock", "", NULL,
	    "user:u1\nassistant:a1\nuser:Continue.\nassistant:a2\n");
	node_set("{s:s}", "insertedUserTurnText", "Go on");
	ck_sent("Mock", "", NULL,
	    "user:u1\nassistant:a1\nuser:Go on\nassistant:a2\n");
}
END_TEST

/* Images only from nodes with acceptImages, the newest
 * maxImagesToSend; on the prompt path those of the last messages go on
 * the prompt's message. */
START_TEST(chat_images)
{
	conv("user", "u1", "user", "u2", NULL);
	wmsg_add_image(&M.v[0], "data:image/png;base64,AAAA");
	wmsg_add_image(&M.v[1], "data:image/png;base64,BBBB");
	wmsg_add_image(&M.v[1], "data:image/png;base64,CCCC");
	ck_sent("Mock", "", NULL, "user:u1\nuser:u2\n");
	node_set("{s:b}", "acceptImages", 1);
	ck_sent("Mock", "", NULL, "user:u1[1 img]\nuser:u2[2 img]\n");
	node_set("{s:i}", "maxImagesToSend", 2);
	ck_sent("Mock", "", NULL, "user:u1\nuser:u2[2 img]\n");
	ck_sent("Mock", "", "P", "user:P[2 img]\n");
	node_set("{s:i}", "maxImagesToSend", 0);
	ck_sent("Mock", "", "P", "user:P[3 img]\n");
	node_set("{s:i}", "lastMessagesToSendInsteadOfPrompt", 1);
	ck_sent("Mock", "", "P", "user:P[2 img]\n");
}
END_TEST

/* The endpoint's injections reach the messages (prompt_chat); a wrongly
 * typed one is the node's 500. */
START_TEST(chat_endpoint_injection)
{
	struct llm_target	 t;
	struct llm_ask		 a;
	struct wmsgs		 sent;
	struct wresult		 res;
	char			*p = NULL;

	conv("user", "u1", NULL);
	backend("Inj", "openAIChatCompletion", ", \"addTextToStartOfSystem\": "
	    "true, \"textToAddToStartOfSystem\": \"Pre: \"");
	ck_sent("Inj", "S", NULL, "system:Pre: S\nuser:u1\n");
	backend("BadInj", "openAIChatCompletion", ", \"addTextToStartOfSystem\": "
	    "true, \"textToAddToStartOfSystem\": 5");
	target("BadInj", "", &t);
	ask_init(&a, "S", NULL);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(build_request(&X, &a, &t, &sent, &p, &res), -1);
	ck_node_fail(&res, "textToAddToStartOfSystem");
	target_free(&t);
}
END_TEST

/* ---- build.c: the context clamp ---- */

/* Six messages of 350 characters, the newest a user's (so that no
 * user message is put back): WilmerAI's estimate is 110 tokens each,
 * 118 with the 8 per message. */
static void
long_conv(void)
{
	char	 text[351], c;
	int	 i;

	memset(text, 'x', 350);
	text[350] = '\0';
	for (i = 0; i < 6; i++) {
		c = (char)('a' + i);
		text[0] = c;
		wmsgs_add(&M, i % 2 ? "user" : "assistant", text);
	}
	json_object_set_new(N, "lastMessagesToSendInsteadOfPrompt",
	    json_integer(20));
}

/* How many messages a chat call of ep sends, and the first letter of
 * the oldest of them. */
static size_t
clamped(const char *ep, const char *system, char *oldest)
{
	struct llm_target	 t;
	struct llm_ask		 a;
	struct wmsgs		 sent;
	struct wresult		 res;
	char			*p = NULL;
	size_t			 n, first;

	target(ep, "", &t);
	ask_init(&a, system, NULL);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(build_request(&X, &a, &t, &sent, &p, &res), 0);
	first = *system != '\0' ? 1 : 0;
	n = sent.n - first;
	*oldest = n > 0 ? sent.v[first].m_content[0] : '\0';
	ck_assert_msg(n > 0 && sent.v[sent.n - 1].m_content[0] == 'f',
	    "the newest message is gone");
	wmsgs_free(&sent);
	target_free(&t);
	return n;
}

/* Budget (window - response) x level - 512 - system: 900 - 512 = 388
 * keeps the newest three (354); balanced, 1125 - 512 = 613 keeps five
 * (590); the oldest go first. */
START_TEST(clamp_drops_oldest)
{
	char	 old;

	long_conv();
	backend("W", "openAIChatCompletion", ", \"maxContextTokenSize\": 1000");
	ck_assert_uint_eq(clamped("W", "", &old), 6);
	json_object_set_new(N, "clampPromptToContextWindow", json_true());
	ck_assert_uint_eq(clamped("W", "", &old), 3);
	ck_assert_int_eq(old, 'd');
	backend("W", "openAIChatCompletion", ", \"maxContextTokenSize\": 1000, "
	    "\"wilmerContextEstimationLevel\": \"Balanced\"");
	ck_assert_uint_eq(clamped("W", "", &old), 5);
	ck_assert_int_eq(old, 'b');
}
END_TEST

/* The system prompt counts against the budget: 110 tokens leave 278,
 * two messages. One longer than the budget leaves only the newest
 * message, however small the budget gets. */
START_TEST(clamp_counts_system)
{
	char	 sys[1401], old;

	long_conv();
	backend("W", "openAIChatCompletion", ", \"maxContextTokenSize\": 1000");
	json_object_set_new(N, "clampPromptToContextWindow", json_true());
	memset(sys, 's', 350);
	sys[350] = '\0';
	ck_assert_uint_eq(clamped("W", sys, &old), 2);
	memset(sys, 's', 1400);
	sys[1400] = '\0';
	ck_assert_uint_eq(clamped("W", sys, &old), 1);
	backend("Tiny", "openAIChatCompletion", ", \"maxContextTokenSize\": "
	    "300");
	ck_assert_uint_eq(clamped("Tiny", "", &old), 1);
}
END_TEST

/* On from the node, else the endpoint, else the user; off without a
 * window. */
START_TEST(clamp_precedence)
{
	char	 old;

	long_conv();
	backend("W", "openAIChatCompletion", ", \"maxContextTokenSize\": 1000, "
	    "\"clampPromptToContextWindow\": true");
	ck_assert_uint_eq(clamped("W", "", &old), 3);
	json_object_set_new(N, "clampPromptToContextWindow", json_false());
	ck_assert_uint_eq(clamped("W", "", &old), 6);
	json_object_del(N, "clampPromptToContextWindow");
	backend("W", "openAIChatCompletion", ", \"maxContextTokenSize\": 1000");
	ck_assert_uint_eq(clamped("W", "", &old), 6);
	it_file(&T, "Users/it.json", "{\"chatCompleteAddUserAssistant\": "
	    "false, \"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"endpointConfigsSubDirectory\": \"it\", "
	    "\"clampPromptToContextWindow\": true}\n");
	user_load();
	ck_assert_uint_eq(clamped("W", "", &old), 3);
	backend("NoWin", "openAIChatCompletion", "");
	ck_assert_uint_eq(clamped("NoWin", "", &old), 6);
}
END_TEST

/* ---- build.c: completion prompts ---- */

/* A completion endpoint gets one prompt string in its template's turns:
 * the system prompt, then the last messages or the prompt. */
START_TEST(completion_prompt)
{
	char	*p;

	backend("Compl", "openAIV1Completion", "");
	conv("user", "u1", "assistant", "a1", "user", "u2", NULL);
	p = completion_sent("Compl", "Be {name}", NULL);
	ck_assert_str_eq(p, "<|system|>\nBe Ann\n<|end|>\n<|user|>\nu1\n<|end|>\n"
	    "<|assistant|>\na1\n<|end|>\n<|user|>\nu2\n<|end|>");
	free(p);
	p = completion_sent("Compl", "S", "Say {name}");
	ck_assert_str_eq(p, "<|system|>\nS\n<|end|>\nSay Ann");
	free(p);
}
END_TEST

/* Spec 3.2 item 6: no generation prompt for a top-level responder or a
 * node that is not the responder, unless it forces it or asks for a
 * user turn; blockGenerationPrompt always wins; never without the
 * endpoint's addGenerationPrompt. */
START_TEST(completion_generation_prompt)
{
	static const struct {
		bool		 responder, top, force, block, ep;
		bool		 want;
	} c[] = {
		{ true, true, false, false, true, false },
		{ true, false, false, false, true, true },
		{ false, false, false, false, true, false },
		{ false, false, true, false, true, true },
		{ true, true, true, false, true, true },
		{ true, false, false, true, true, false },
		{ false, false, true, true, true, false },
		{ true, false, true, false, false, false },
	};
	const char	*end = "<|assistant|>";
	char		*p;
	size_t		 i, n;

	conv("user", "u1", NULL);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		backend("Compl", "openAIV1Completion", c[i].ep ?
		    ", \"addGenerationPrompt\": true" : "");
		X.nx_responder = c[i].responder;
		X.nx_top = c[i].top;
		json_object_clear(N);
		node_set("{s:b, s:b}", "forceGenerationPromptIfEndpointAllows",
		    c[i].force, "blockGenerationPrompt", c[i].block);
		p = completion_sent("Compl", "", NULL);
		n = strlen(p);
		ck_assert_msg((n >= strlen(end) && strcmp(p + n - strlen(end),
		    end) == 0) == c[i].want, "case %zu: '%s'", i, p);
		free(p);
	}
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "target_chat", target_chat },
		{ "target_completion", target_completion },
		{ "target_errors_name_file", target_errors_name_file },
		{ "conv_vars", conv_vars },
		{ "chat_system_and_last_n", chat_system_and_last_n },
		{ "chat_prompt", chat_prompt },
		{ "chat_ensure_user", chat_ensure_user },
		{ "chat_assistant_runs", chat_assistant_runs },
		{ "chat_images", chat_images },
		{ "chat_endpoint_injection", chat_endpoint_injection },
		{ "clamp_drops_oldest", clamp_drops_oldest },
		{ "clamp_counts_system", clamp_counts_system },
		{ "clamp_precedence", clamp_precedence },
		{ "completion_prompt", completion_prompt },
		{ "completion_generation_prompt",
		    completion_generation_prompt },
	};

	return it_main(it_suite_fixture("build", cases,
	    sizeof(cases) / sizeof(cases[0]), 10, setup, teardown));
}
