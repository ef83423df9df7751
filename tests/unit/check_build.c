/* check_build.c - what a backend call is built from and sends, without the network: target loading (worker/llm/target.c), conversation variables, messages, clamp and prompt (worker/llm/build.c). */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../worker/core/msgs_edit.h"
#include "../../worker/core/vars.h"
#include "../../worker/llm/build.h"
#include "../../worker/llm/exchange.h"
#include "../../worker/llm/target.h"
#include "../testmain.h"
#include "nodefix.h"

/* Every test (each runs in its own process) has a node in a scratch
 * folder (tests/nodefix.h); nothing is called: the endpoints point
 * where nothing answers. */
static struct nodefix	 F;

static void
setup(void)
{
	nodefix_init(&F, false);
}

static void
teardown(void)
{
	nodefix_free(&F);
}

static void
target(const char *ep, const char *preset, struct llm_target *t)
{
	struct wresult	 res;

	memset(&res, 0, sizeof(res));
	ck_assert_msg(target_load(&F.nf_x, ep, preset, t, &res) == 0, "%s",
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
	a->la_opts = F.nf_node;
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
	ck_assert_msg(build_request(&F.nf_x, &a, &t, NULL, &sent, &p, &res) == 0,
	    "%s", res.r_message);
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
	ck_assert_msg(build_request(&F.nf_x, &a, &t, NULL, &sent, &p, &res) == 0,
	    "%s", res.r_message);
	ck_assert_uint_eq(sent.n, 0);
	ck_assert_ptr_nonnull(p);
	target_free(&t);
	return p;
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

	nodefix_backend(&F, "Compl", "openAIV1Completion", "", "");
	target("Compl", "", &t);
	ck_assert(t.tg_completion);
	ck_assert_ptr_nonnull(t.tg_pt);
	ck_assert_str_eq(prompt_template_get(t.tg_pt, "user", "Prefix"),
	    "<|user|>\n");
	ck_assert_ptr_null(t.tg_chat_pt);
	target_free(&t);
	nodefix_user(&F, "chatPromptTemplateName", json_string("turns"));
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
	ck_assert_int_eq(target_load(&F.nf_x, "Nope", "", &t, &res), -1);
	nodefix_ck_fail(&res, 500, "Endpoints/it/Nope.json");
	target_free(&t);
	it_file(&F.nf_it, "Endpoints/it/NoType.json", "{\"endpoint\": "
	    "\"http://127.0.0.1:9\", \"apiTypeConfigFileName\": \"Gone\"}\n");
	ck_assert_int_eq(target_load(&F.nf_x, "NoType", "", &t, &res), -1);
	nodefix_ck_fail(&res, 500, "ApiTypes/Gone.json");
	target_free(&t);
	ck_assert_int_eq(target_load(&F.nf_x, "Mock", "Missing", &t, &res), -1);
	nodefix_ck_fail(&res, 500, "Missing");
	target_free(&t);
	it_file(&F.nf_it, "Endpoints/it/Broken.json", "{\"endpoint\": \n");
	ck_assert_int_eq(target_load(&F.nf_x, "Broken", "", &t, &res), -1);
	nodefix_ck_fail(&res, 500, "Endpoints/it/Broken.json:");
	target_free(&t);
	nodefix_backend(&F, "NoTpl", "ollamaApiGenerate", "",
	    ", \"promptTemplate\": \"gone\"");
	ck_assert_int_eq(target_load(&F.nf_x, "NoTpl", "", &t, &res), -1);
	nodefix_ck_fail(&res, 500, "PromptTemplates/gone.json");
	target_free(&t);
	/* The same template name on a chat endpoint is never read. */
	nodefix_backend(&F, "ChatNoTpl", "ollamaApiChat", "",
	    ", \"promptTemplate\": \"gone\"");
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

	nodefix_conv(&F, "system", "Sys", "user", "one", "assistant", "two",
	    "user", "three", (char *)NULL);
	ask_init(&a, "", NULL);
	nodefix_set(&F, "{s:i, s:b}", "nMessagesToIncludeInVariable", 2,
	    "addUserAssistantTags", 1);
	target("Mock", "", &t);
	build_conv_vars(&F.nf_x, &a, &t);
	ck_assert_str_eq(vars_get(F.nf_vars, "chat_user_prompt_last_one", 25),
	    "User: three");
	ck_assert_str_eq(vars_get(F.nf_vars, "chat_user_prompt_n_messages", 27),
	    "Assistant: two\nUser: three");
	ck_assert_str_eq(vars_get(F.nf_vars, "chat_system_prompt", 18), "Sys");
	ck_assert_str_eq(vars_get(F.nf_vars,
	    "templated_user_prompt_last_one", 30), "three");
	target_free(&t);
	nodefix_backend(&F, "Compl", "openAIV1Completion", "", "");
	target("Compl", "", &t);
	build_conv_vars(&F.nf_x, &a, &t);
	ck_assert_str_eq(vars_get(F.nf_vars,
	    "templated_user_prompt_last_one", 30),
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
	nodefix_conv(&F, "system", "conv sys", "user", "u1", "assistant", "a1",
	    "user", "u2", "assistant", "a2", "user", "u3", (char *)NULL);
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPrompt", 3);
	ck_sent("Mock", "Be {name}", NULL,
	    "system:Be Ann\nuser:u2\nassistant:a2\nuser:u3\n");
	ck_sent("Mock", "", NULL, "user:u2\nassistant:a2\nuser:u3\n");
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPrompt", 0);
	ck_sent("Mock", "", NULL, "user:u3\n");
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPrompt", 50);
	ck_sent("Mock", "", NULL, "user:u1\nassistant:a1\nuser:u2\n"
	    "assistant:a2\nuser:u3\n");
}
END_TEST

/* A prompt replaces the conversation with one user message; a prompt
 * that is empty only after substitution is still a prompt, an empty
 * field is none. */
START_TEST(chat_prompt)
{
	nodefix_conv(&F, "user", "u1", "assistant", "a1", "user", "u2",
	    (char *)NULL);
	ck_sent("Mock", "S", "Say {name}", "system:S\nuser:Say Ann\n");
	vars_set(F.nf_vars, "nothing", "");
	ck_sent("Mock", "", "{nothing}", "user:\n");
	ck_sent("Mock", "", "", "user:u1\nassistant:a1\nuser:u2\n");
}
END_TEST

/* When the selection holds no user message, the newest user message of
 * the conversation is put first (after any system message). */
START_TEST(chat_ensure_user)
{
	nodefix_conv(&F, "user", "u1", "assistant", "a1", "user", "u2",
	    "assistant", "a2", (char *)NULL);
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPrompt", 1);
	ck_sent("Mock", "S", NULL, "system:S\nuser:u2\nassistant:a2\n");
}
END_TEST

/* Assistant turns next to each other: merged with the delimiter, or a
 * user turn put between them. */
START_TEST(chat_assistant_runs)
{
	nodefix_conv(&F, "user", "u1", "assistant", "a1", "assistant", "a2",
	    (char *)NULL);
	ck_sent("Mock", "", NULL, "user:u1\nassistant:a1\nassistant:a2\n");
	nodefix_set(&F, "{s:b, s:s}", "mergeConsecutiveAssistantMessages", 1,
	    "mergeConsecutiveAssistantMessagesDelimiter", " | ");
	ck_sent("Mock", "", NULL, "user:u1\nassistant:a1 | a2\n");
	json_object_clear(F.nf_node);
	nodefix_set(&F, "{s:b}", "insertUserTurnBetweenAssistantMessages", 1);
	ck_sent("Mock", "", NULL,
	    "user:u1\nassistant:a1\nuser:Continue.\nassistant:a2\n");
	nodefix_set(&F, "{s:s}", "insertedUserTurnText", "Go on");
	ck_sent("Mock", "", NULL,
	    "user:u1\nassistant:a1\nuser:Go on\nassistant:a2\n");
}
END_TEST

/* Images only from nodes with acceptImages, the newest
 * maxImagesToSend; on the prompt path those of the last messages go on
 * the prompt's message. */
START_TEST(chat_images)
{
	nodefix_conv(&F, "user", "u1", "user", "u2", (char *)NULL);
	wmsg_add_image(&F.nf_msgs.v[0], "data:image/png;base64,AAAA");
	wmsg_add_image(&F.nf_msgs.v[1], "data:image/png;base64,BBBB");
	wmsg_add_image(&F.nf_msgs.v[1], "data:image/png;base64,CCCC");
	ck_sent("Mock", "", NULL, "user:u1\nuser:u2\n");
	nodefix_set(&F, "{s:b}", "acceptImages", 1);
	ck_sent("Mock", "", NULL, "user:u1[1 img]\nuser:u2[2 img]\n");
	nodefix_set(&F, "{s:i}", "maxImagesToSend", 2);
	ck_sent("Mock", "", NULL, "user:u1\nuser:u2[2 img]\n");
	ck_sent("Mock", "", "P", "user:P[2 img]\n");
	nodefix_set(&F, "{s:i}", "maxImagesToSend", 0);
	ck_sent("Mock", "", "P", "user:P[3 img]\n");
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPrompt", 1);
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

	nodefix_conv(&F, "user", "u1", (char *)NULL);
	nodefix_backend(&F, "Inj", "openAIChatCompletion", "",
	    ", \"addTextToStartOfSystem\": true, "
	    "\"textToAddToStartOfSystem\": \"Pre: \"");
	ck_sent("Inj", "S", NULL, "system:Pre: S\nuser:u1\n");
	nodefix_backend(&F, "BadInj", "openAIChatCompletion", "",
	    ", \"addTextToStartOfSystem\": true, "
	    "\"textToAddToStartOfSystem\": 5");
	target("BadInj", "", &t);
	ask_init(&a, "S", NULL);
	memset(&res, 0, sizeof(res));
	ck_assert_int_eq(build_request(&F.nf_x, &a, &t, NULL, &sent, &p, &res), -1);
	nodefix_ck_fail(&res, 500, "textToAddToStartOfSystem");
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
		wmsgs_add(&F.nf_msgs, i % 2 ? "user" : "assistant", text);
	}
	json_object_set_new(F.nf_node, "lastMessagesToSendInsteadOfPrompt",
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
	ck_assert_int_eq(build_request(&F.nf_x, &a, &t, NULL, &sent, &p, &res), 0);
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
	nodefix_backend(&F, "W", "openAIChatCompletion", "",
	    ", \"maxContextTokenSize\": 1000");
	ck_assert_uint_eq(clamped("W", "", &old), 6);
	nodefix_set(&F, "{s:b}", "clampPromptToContextWindow", 1);
	ck_assert_uint_eq(clamped("W", "", &old), 3);
	ck_assert_int_eq(old, 'd');
	nodefix_backend(&F, "W", "openAIChatCompletion", "",
	    ", \"maxContextTokenSize\": 1000, "
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
	nodefix_backend(&F, "W", "openAIChatCompletion", "",
	    ", \"maxContextTokenSize\": 1000");
	nodefix_set(&F, "{s:b}", "clampPromptToContextWindow", 1);
	memset(sys, 's', 350);
	sys[350] = '\0';
	ck_assert_uint_eq(clamped("W", sys, &old), 2);
	memset(sys, 's', 1400);
	sys[1400] = '\0';
	ck_assert_uint_eq(clamped("W", sys, &old), 1);
	nodefix_backend(&F, "Tiny", "openAIChatCompletion", "",
	    ", \"maxContextTokenSize\": "
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
	nodefix_backend(&F, "W", "openAIChatCompletion", "",
	    ", \"maxContextTokenSize\": 1000, "
	    "\"clampPromptToContextWindow\": true");
	ck_assert_uint_eq(clamped("W", "", &old), 3);
	nodefix_set(&F, "{s:b}", "clampPromptToContextWindow", 0);
	ck_assert_uint_eq(clamped("W", "", &old), 6);
	json_object_del(F.nf_node, "clampPromptToContextWindow");
	nodefix_backend(&F, "W", "openAIChatCompletion", "",
	    ", \"maxContextTokenSize\": 1000");
	ck_assert_uint_eq(clamped("W", "", &old), 6);
	nodefix_user(&F, "clampPromptToContextWindow", json_true());
	ck_assert_uint_eq(clamped("W", "", &old), 3);
	nodefix_backend(&F, "NoWin", "openAIChatCompletion", "", "");
	ck_assert_uint_eq(clamped("NoWin", "", &old), 6);
}
END_TEST

/* lastMessagesToSendInsteadOfPromptMaxTokenSize: the last-N messages
 * (110 estimated tokens each) cut, oldest first, to fit the cap; the
 * newest always stays; scaled by the estimation level only while the
 * clamp is on (250 x 1.25 still holds two, 300 x 1.25 three). */
START_TEST(last_n_token_cap)
{
	char	 old;

	long_conv();
	nodefix_backend(&F, "B", "openAIChatCompletion", "",
	    ", \"wilmerContextEstimationLevel\": \"balanced\"");
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPromptMaxTokenSize",
	    250);
	ck_assert_uint_eq(clamped("B", "", &old), 2);
	ck_assert_int_eq(old, 'e');
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPromptMaxTokenSize",
	    10);
	ck_assert_uint_eq(clamped("B", "", &old), 1);
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPromptMaxTokenSize",
	    300);
	ck_assert_uint_eq(clamped("B", "", &old), 2);
	nodefix_set(&F, "{s:b}", "clampPromptToContextWindow", 1);
	ck_assert_uint_eq(clamped("B", "", &old), 3);
	ck_assert_int_eq(old, 'd');
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPromptMaxTokenSize",
	    0);
	ck_assert_uint_eq(clamped("B", "", &old), 6);
}
END_TEST

/* ---- build.c: completion prompts ---- */

/* A completion endpoint gets one prompt string in its template's turns:
 * the system prompt, then the last messages or the prompt. */
START_TEST(completion_prompt)
{
	char	*p;

	nodefix_backend(&F, "Compl", "openAIV1Completion", "", "");
	nodefix_conv(&F, "user", "u1", "assistant", "a1", "user", "u2",
	    (char *)NULL);
	p = completion_sent("Compl", "Be {name}", NULL);
	ck_assert_str_eq(p, "<|system|>\nBe Ann\n<|end|>\n"
	    "<|user|>\nu1\n<|end|>\n<|assistant|>\na1\n<|end|>\n"
	    "<|user|>\nu2\n<|end|>");
	free(p);
	p = completion_sent("Compl", "S", "Say {name}");
	ck_assert_str_eq(p, "<|system|>\nS\n<|end|>\nSay Ann");
	free(p);
	/* a token cap on the last messages: one estimated token each */
	nodefix_set(&F, "{s:i}", "lastMessagesToSendInsteadOfPromptMaxTokenSize",
	    2);
	p = completion_sent("Compl", "S", NULL);
	ck_assert_str_eq(p, "<|system|>\nS\n<|end|>\n<|assistant|>\na1\n"
	    "<|end|>\n<|user|>\nu2\n<|end|>");
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

	nodefix_conv(&F, "user", "u1", (char *)NULL);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		nodefix_backend(&F, "Compl", "openAIV1Completion", "", c[i].ep ?
		    ", \"addGenerationPrompt\": true" : "");
		F.nf_x.nx_responder = c[i].responder;
		F.nf_x.nx_top = c[i].top;
		json_object_clear(F.nf_node);
		nodefix_set(&F, "{s:b, s:b}",
		    "forceGenerationPromptIfEndpointAllows", c[i].force,
		    "blockGenerationPrompt", c[i].block);
		p = completion_sent("Compl", "", NULL);
		n = strlen(p);
		ck_assert_msg((n >= strlen(end) && strcmp(p + n - strlen(end),
		    end) == 0) == c[i].want, "case %zu: '%s'", i, p);
		free(p);
	}
}
END_TEST

/* ---- appendNativeToolExchange (addendum A8.2) ------------------------ */

/* Give message i of the fixture's conversation tool calls (JSON) or a
 * tool_call_id. */
static void
calls_on(size_t i, const char *calls)
{
	F.nf_msgs.v[i].m_tool_calls = strdup(calls);
}

#define CALL	"[{\"id\": \"c1\", \"type\": \"function\", \"function\": " \
		"{\"name\": \"ls\", \"arguments\": \"{}\"}}]"

/* exchange_find on WilmerAI's cases: where the exchange starts and ends,
 * or -1 when there is none. */
START_TEST(exchange_detection)
{
	size_t	 start = 99, end = 99;

	/* basic, with a generation-prompt filler after it */
	nodefix_conv(&F, "user", "u", "assistant", "", "tool", "r1", "tool",
	    "r2", "assistant", " Assistant: ", "assistant", "", (char *)NULL);
	calls_on(1, CALL);
	ck_assert(exchange_find(&F.nf_msgs, &start, &end));
	ck_assert_uint_eq(start, 1);
	ck_assert_uint_eq(end, 3);
	/* a substantive assistant turn after it: none */
	wmsgs_add(&F.nf_msgs, "assistant", "Here you go.");
	ck_assert(!exchange_find(&F.nf_msgs, &start, &end));
	wmsgs_free(&F.nf_msgs);
	/* an unanswered call; results without a caller; empty calls */
	nodefix_conv(&F, "user", "u", "assistant", "", (char *)NULL);
	calls_on(1, CALL);
	ck_assert(!exchange_find(&F.nf_msgs, &start, &end));
	wmsgs_free(&F.nf_msgs);
	nodefix_conv(&F, "user", "u", "tool", "r", (char *)NULL);
	ck_assert(!exchange_find(&F.nf_msgs, &start, &end));
	wmsgs_free(&F.nf_msgs);
	nodefix_conv(&F, "user", "u", "assistant", "", "tool", "r",
	    (char *)NULL);
	calls_on(1, "[]");
	ck_assert(!exchange_find(&F.nf_msgs, &start, &end));
	wmsgs_free(&F.nf_msgs);
	/* buried under a later user turn */
	nodefix_conv(&F, "assistant", "", "tool", "r", "user", "next",
	    (char *)NULL);
	calls_on(0, CALL);
	ck_assert(!exchange_find(&F.nf_msgs, &start, &end));
	ck_assert(!exchange_find(&(struct wmsgs){ NULL, 0 }, &start, &end));
}
END_TEST

/* The messages sent, with "+calls" after a message with tool calls and
 * "@id" after one answering a call; the variables first, as a call
 * sets them. Caller frees. */
static char *
exchange_sent(const char *ep, const char *prompt)
{
	struct llm_target	 t;
	struct llm_ask		 a;
	struct wmsgs		 sent;
	struct wresult		 res;
	struct buf		 b = BUF_INIT;
	char			*p = NULL;
	size_t			 i;

	target(ep, "", &t);
	ask_init(&a, "S", prompt);
	a.la_endpoint = ep;
	memset(&res, 0, sizeof(res));
	build_conv_vars(&F.nf_x, &a, &t);
	ck_assert_msg(build_request(&F.nf_x, &a, &t, NULL, &sent, &p, &res) == 0,
	    "%s", res.r_message);
	for (i = 0; i < sent.n; i++)
		buf_printf(&b, "%s:%s%s%s%s\n", sent.v[i].m_role,
		    sent.v[i].m_content, sent.v[i].m_tool_calls ? "+calls" : "",
		    sent.v[i].m_tool_call_id ? "@" : "",
		    sent.v[i].m_tool_call_id ? sent.v[i].m_tool_call_id : "");
	buf_addc(&b, '\0');
	wmsgs_free(&sent);
	free(p);
	target_free(&t);
	return buf_take(&b);
}

/* The exchange follows the node's prompt as native turns; the prompt's
 * variables see only what came before it. Off, without a prompt, with
 * backendSupportsToolTurns false or on a completion backend: as
 * before. */
START_TEST(exchange_appended)
{
	char	*s;

	nodefix_conv(&F, "user", "old", "user", "list files", "assistant", "",
	    "tool", "a.txt", "assistant", "", (char *)NULL);
	calls_on(2, CALL);
	F.nf_msgs.v[3].m_tool_call_id = strdup("c1");
	nodefix_set(&F, "{s:b}", "appendNativeToolExchange", 1);
	s = exchange_sent("Mock", "Q: {chat_user_prompt_last_one}");
	ck_assert_str_eq(s, "system:S\nuser:Q: list files\nassistant:+calls\n"
	    "tool:a.txt@c1\n");
	free(s);
	/* no prompt: the last-N path, untouched */
	s = exchange_sent("Mock", "");
	ck_assert_str_eq(s, "system:S\nuser:old\nuser:list files\n"
	    "assistant:+calls\ntool:a.txt@c1\nassistant:\n");
	free(s);
	nodefix_backend(&F, "NoTurns", "openAIChatCompletion", "",
	    ", \"backendSupportsToolTurns\": false");
	s = exchange_sent("NoTurns", "Q: {chat_user_prompt_last_one}");
	ck_assert_str_eq(s, "system:S\nuser:Q: \n");
	free(s);
	nodefix_set(&F, "{s:b}", "appendNativeToolExchange", 0);
	s = exchange_sent("Mock", "Q: {chat_user_prompt_last_one}");
	ck_assert_str_eq(s, "system:S\nuser:Q: \n");
	free(s);
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
		{ "last_n_token_cap", last_n_token_cap },
		{ "completion_prompt", completion_prompt },
		{ "completion_generation_prompt",
		    completion_generation_prompt },
		{ "exchange_detection", exchange_detection },
		{ "exchange_appended", exchange_appended },
	};

	return it_main(it_suite_fixture("build", cases,
	    sizeof(cases) / sizeof(cases[0]), 10, setup, teardown));
}
