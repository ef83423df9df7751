/* check_vars.c - tests for workflow variables: substitution, the two kinds of value, conversation, config and category variables. */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../common/json.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "../../worker/core/msgs.h"
#include "../../worker/core/prompt.h"
#include "../../worker/core/vars.h"
#include "../../worker/core/vars_conv.h"
#include "../../worker/core/vars_json.h"
#include "../testmain.h"

/* ---- helpers --------------------------------------------------------- */

static const char *
get(const struct vars *v, const char *name)
{
	const char	*s = vars_get(v, name, strlen(name));

	ck_assert_msg(s != NULL, "variable %s is not set", name);
	return s;
}

static void
fmt_eq(const struct vars *v, const char *tmpl, const char *want)
{
	char	*s = vars_format(v, tmpl);

	ck_assert_str_eq(s, want);
	free(s);
}

/* A node object from JSON text (caller json_decrefs). */
static json_t *
node(const char *text)
{
	json_error_t	 e;
	json_t		*n = json_loads(text, 0, &e);

	ck_assert_msg(n != NULL, "bad test JSON: %s", e.text);
	return n;
}

/* A user whose file is text (free with user_free). */
static struct conf_user *
user(const char *text)
{
	struct conf_user	*u = xcalloc(1, sizeof(*u));
	char			 err[CONF_ERRLEN];

	ck_assert_msg(jfile_parse("u.json", text, strlen(text), &u->u_file,
	    err) == 0, "%s", err);
	return u;
}

static void
user_free(struct conf_user *u)
{
	jfile_free(&u->u_file);
	free(u);
}

/* S1, u1, a1, mid (system), t1 (tool), u2, a2. */
static struct wmsgs
convo(void)
{
	struct wmsgs	 l = { NULL, 0 };

	wmsgs_add(&l, "system", "S1");
	wmsgs_add(&l, "user", "u1");
	wmsgs_add(&l, "assistant", "a1");
	wmsgs_add(&l, "system", "mid");
	wmsgs_add(&l, "tool", "t1");
	wmsgs_add(&l, "user", "u2");
	wmsgs_add(&l, "assistant", "a2");
	return l;
}

/* Six messages m0..m5 of 35 characters, 11 estimated tokens each. */
static struct wmsgs
convo_tokens(void)
{
	struct wmsgs	 l = { NULL, 0 };
	char		 s[36];
	int		 i;

	for (i = 0; i < 6; i++) {
		memset(s, 'x', 35);
		s[35] = '\0';
		s[0] = 'm';
		s[1] = (char)('0' + i);
		wmsgs_add(&l, i % 2 ? "assistant" : "user", s);
	}
	ck_assert_int_eq(tokens_estimate(s, 35, TOKENS_MARGIN), 11);
	return l;
}

/* The m<i> messages named by digits ("345"), joined by sep. */
static char *
ms(const char *digits, const char *sep)
{
	struct buf	 b = BUF_INIT;
	const char	*d;

	buf_adds(&b, "");
	for (d = digits; *d != '\0'; d++) {
		if (d > digits)
			buf_adds(&b, sep);
		buf_printf(&b, "m%c%.33s", *d,
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	}
	return buf_take(&b);
}

static void
var_is_ms(const struct vars *v, const char *name, const char *digits,
    const char *sep)
{
	char	*want = ms(digits, sep);

	ck_assert_msg(strcmp(get(v, name), want) == 0, "%s: got '%s', want "
	    "m%s", name, get(v, name), digits);
	free(want);
}

static char	 tmpdir[64];

static void
tmp_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_vars.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
tmp_teardown(void)
{
	char	 p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/PromptTemplates/t.json", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/PromptTemplates/c.json", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/PromptTemplates", tmpdir);
	rmdir(p);
	rmdir(tmpdir);
}

/* Write PromptTemplates/<name>.json under tmpdir and load it. */
static struct prompt_template *
tmp_template(const char *name, const char *text)
{
	struct prompt_template	*pt;
	char			 p[PATH_MAX], err[CONF_ERRLEN];
	FILE			*f;

	snprintf(p, sizeof(p), "%s/PromptTemplates", tmpdir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/PromptTemplates/%s.json", tmpdir, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
	ck_assert_msg(prompt_template_load(tmpdir, name, &pt, err) == 0, "%s",
	    err);
	return pt;
}

static const char	 T_JSON[] = "{"
    "\"promptTemplateSystemPrefix\": \"<S>\","
    "\"promptTemplateSystemSuffix\": \"</S>\","
    "\"promptTemplateUserPrefix\": \"<U>\","
    "\"promptTemplateUserSuffix\": \"</U>\","
    "\"promptTemplateAssistantPrefix\": \"<A>\","
    "\"promptTemplateAssistantSuffix\": \"</A>\","
    "\"promptTemplateToolPrefix\": \"<T>\","
    "\"promptTemplateToolSuffix\": \"</T>\","
    "\"promptTemplateEndToken\": \"\"}";

static const char	 C_JSON[] = "{"
    "\"promptTemplateSystemPrefix\": \"[Beg_Sys]sys:\","
    "\"promptTemplateSystemSuffix\": \";\","
    "\"promptTemplateUserPrefix\": \"user:\","
    "\"promptTemplateUserSuffix\": \";\","
    "\"promptTemplateAssistantPrefix\": \"bot:\","
    "\"promptTemplateAssistantSuffix\": \";\"}";

/* ---- substitution ---------------------------------------------------- */

START_TEST(format_rules)
{
	struct vars	*v = vars_new();

	vars_set(v, "name", "Ann");
	vars_set(v, "x", "{name}");		/* data: never expanded */
	vars_set(v, "name", "Bea");		/* replaced */
	fmt_eq(v, "Hi {name}, {{literal}} {x} {missing} {na{me} }{",
	    "Hi Bea, {literal} {name} {missing} {na{me} }{");
	fmt_eq(v, "", "");
	fmt_eq(v, "{{name}} {{{name}}} }}{{", "{name} {Bea} }{");
	/* Format specs, conversions, indexes and positions stay literal. */
	fmt_eq(v, "{name:>5}|{name!r}|{name[0]}|{0}|{}|{ name }",
	    "{name:>5}|{name!r}|{name[0]}|{0}|{}|{ name }");
	fmt_eq(v, "{", "{");
	fmt_eq(v, "}", "}");
	fmt_eq(v, "a{name", "a{name");
	fmt_eq(v, "{name}{name}{", "BeaBea{");
	ck_assert_ptr_null(vars_get(v, "nam", 3));
	ck_assert_ptr_null(vars_get(v, "names", 5));
	ck_assert_str_eq(vars_get(v, "namesake", 4), "Bea");
	vars_free(v);
	vars_free(NULL);
}
END_TEST

START_TEST(two_kinds)
{
	struct vars	*v = vars_new();

	vars_set(v, "chat_system_prompt", "Be {terse}. {agent1Output}");
	vars_set(v, "agent1Output", "OUT {persona}");
	vars_set(v, "chat_user_prompt_last_one", "print {agent1Output}");
	vars_set_template(v, "persona", "P[{chat_system_prompt}|"
	    "{agent1Output}|{{x}}|{nope}|{inner}]");
	vars_set_template(v, "inner", "I{agent1Output}");
	vars_set_template(v, "terse", "T");
	/* A workflow key's own names expand once; what they insert does
	 * not, whatever its kind ({inner} is inserted unexpanded). */
	fmt_eq(v, "{persona}", "P[Be {terse}. {agent1Output}|OUT {persona}|"
	    "{x}|{nope}|I{agent1Output}]");
	/* A user message naming a variable is data. */
	fmt_eq(v, "{chat_user_prompt_last_one}", "print {agent1Output}");
	fmt_eq(v, "{agent1Output}", "OUT {persona}");
	ck_assert_str_eq(get(v, "persona"),
	    "P[{chat_system_prompt}|{agent1Output}|{{x}}|{nope}|{inner}]");
	/* The kind goes with the last set. */
	vars_set(v, "persona", "{terse}");
	fmt_eq(v, "{persona}", "{terse}");
	vars_set_template(v, "persona", "{terse}");
	fmt_eq(v, "{persona}{{persona}}", "T{persona}");
	vars_free(v);
}
END_TEST

START_TEST(many_names)
{
	struct vars	*v = vars_new();
	struct buf	 d = BUF_INIT;
	char		 name[32], val[32];
	int		 i;

	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "v%d", i);
		snprintf(val, sizeof(val), "<%d>", i);
		vars_set(v, name, val);
	}
	for (i = 0; i < 5000; i += 7) {
		snprintf(name, sizeof(name), "v%d", i);
		snprintf(val, sizeof(val), "<%d>", i);
		ck_assert_str_eq(get(v, name), val);
	}
	fmt_eq(v, "{v0}{v4999}{v5000}", "<0><4999>{v5000}");
	vars_free(v);
	v = vars_new();
	vars_set(v, "a", "line\none\t\\");
	vars_set_template(v, "b", "{a}");
	memset(val, 'z', sizeof(val));
	val[sizeof(val) - 1] = '\0';
	vars_set(v, "a", val);			/* keeps its first place */
	vars_dump(v, &d);
	ck_assert_str_eq(d.b_data, "a = zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n"
	    "b := {a}\n");
	buf_reset(&d);
	vars_set(v, "a", "x\n\x01");
	vars_dump(v, &d);
	ck_assert_str_eq(d.b_data, "a = x\\n\\x01\nb := {a}\n");
	buf_free(&d);
	vars_free(v);
}
END_TEST

START_TEST(clock_and_discussion)
{
	struct vars	*v = vars_new();

	setenv("TZ", "UTC", 1);
	tzset();
	vars_clock(v, 1757781000);	/* Saturday 2025-09-13 16:30:00 UTC */
	ck_assert_str_eq(get(v, "todays_date_pretty"), "September 13, 2025");
	ck_assert_str_eq(get(v, "todays_date_iso"), "2025-09-13");
	ck_assert_str_eq(get(v, "YYYY_MM_DD"), "2025_09_13");
	ck_assert_str_eq(get(v, "current_time_12h"), "4:30 PM");
	ck_assert_str_eq(get(v, "current_time_24h"), "16:30");
	ck_assert_str_eq(get(v, "current_month_full"), "September");
	ck_assert_str_eq(get(v, "current_day_of_week"), "Saturday");
	ck_assert_str_eq(get(v, "current_day_of_month"), "13");
	vars_clock(v, 1757736000 - 8 * 86400);	/* 2025-09-05 04:00 */
	ck_assert_str_eq(get(v, "current_time_12h"), "4:00 AM");
	ck_assert_str_eq(get(v, "current_day_of_month"), "05");
	vars_discussion(v, "abc", "[Time Context: x]");
	fmt_eq(v, "{Discussion_Id}/{time_context_summary}",
	    "abc/[Time Context: x]");
	vars_discussion(v, NULL, NULL);
	fmt_eq(v, "<{Discussion_Id}{time_context_summary}>", "<>");
	vars_free(v);
}
END_TEST

/* ---- conversation: chat_* --------------------------------------------- */

START_TEST(chat_backend_lists)
{
	struct wmsgs	 l = convo();
	struct vars	*v = vars_new();

	vars_conversation_node(v, &l, NULL);
	/* Only the leading system message is left out. */
	ck_assert_str_eq(get(v, "chat_user_prompt_last_one"), "a2");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_two"), "u2\na2");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_four"),
	    "mid\nt1\nu2\na2");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_twenty"),
	    "u1\na1\nmid\nt1\nu2\na2");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_ten"),
	    get(v, "chat_user_prompt_last_twenty"));
	ck_assert_str_eq(get(v, "chat_user_prompt_last_five"),
	    "a1\nmid\nt1\nu2\na2");
	ck_assert_str_eq(get(v, "chat_user_prompt_n_messages"),
	    get(v, "chat_user_prompt_last_five"));
	ck_assert_str_eq(get(v, "chat_user_prompt_estimated_token_limit"),
	    get(v, "chat_user_prompt_last_twenty"));
	ck_assert_str_eq(get(v, "chat_user_prompt_min_n_max_tokens"),
	    get(v, "chat_user_prompt_last_twenty"));
	/* templated_* never hold system messages; chat backends get the
	 * contents joined with nothing. */
	ck_assert_str_eq(get(v, "templated_user_prompt_last_four"),
	    "a1t1u2a2");
	ck_assert_str_eq(get(v, "templated_user_prompt_last_twenty"),
	    "u1a1t1u2a2");
	ck_assert_str_eq(get(v, "chat_system_prompt"), "S1");
	ck_assert_str_eq(get(v, "templated_system_prompt"), "S1");
	ck_assert_str_eq(get(v, "chat_user_prompt_without_system"),
	    "u1a1t1u2a2");
	ck_assert_str_eq(get(v, "templated_user_prompt_without_system"),
	    "u1a1t1u2a2");
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

START_TEST(completion_backend_lists)
{
	struct wmsgs	 l = convo();
	struct vars	*v = vars_new();
	struct vars_conv vc = { .vc_completion = true };

	vars_conversation_node(v, &l, &vc);
	/* Every system message is left out. */
	ck_assert_str_eq(get(v, "chat_user_prompt_last_four"),
	    "a1\nt1\nu2\na2");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_twenty"),
	    "u1\na1\nt1\nu2\na2");
	/* No template: every part is "". */
	ck_assert_str_eq(get(v, "templated_user_prompt_last_two"), "u2a2");
	ck_assert_str_eq(get(v, "chat_system_prompt"), "S1 mid");
	ck_assert_str_eq(get(v, "templated_system_prompt"), "S1 mid");
	ck_assert_str_eq(get(v, "chat_user_prompt_without_system"),
	    "u1a1t1u2a2");
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

START_TEST(system_messages_edge)
{
	struct wmsgs	 l = { NULL, 0 };
	struct vars	*v = vars_new();
	struct vars_conv vc = { .vc_completion = true };

	/* Nothing at all: every variable is set, to "" ("[]"). */
	vars_conversation_node(v, &l, NULL);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_one"), "");
	ck_assert_str_eq(get(v, "templated_user_prompt_min_n_max_tokens"), "");
	ck_assert_str_eq(get(v, "chat_system_prompt"), "");
	ck_assert_str_eq(get(v, "messages"), "[]");
	/* Only system messages: WilmerAI's chat filter keeps them all. */
	wmsgs_add(&l, "system", "s1");
	wmsgs_add(&l, "system", "s2");
	vars_conversation_node(v, &l, NULL);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_one"), "s2");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_five"), "s1\ns2");
	ck_assert_str_eq(get(v, "templated_user_prompt_last_five"), "");
	ck_assert_str_eq(get(v, "chat_system_prompt"), "s1 s2");
	ck_assert_str_eq(get(v, "chat_user_prompt_without_system"), "");
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_one"), "");
	/* "System" counts as a system prompt (case-insensitive there). */
	wmsgs_add(&l, "user", "u");
	wmsgs_add(&l, "System", "S");
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "chat_system_prompt"), "s1 s2 S");
	ck_assert_str_eq(get(v, "chat_user_prompt_without_system"), "u");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_two"), "u\nS");
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

START_TEST(role_tags_and_separator)
{
	struct wmsgs		 l = convo();
	struct vars		*v = vars_new();
	struct conf_user	*u = user("{\"separateConversationInVariables\""
	    ": true, \"conversationSeparationDelimiter\": \"\\n***\\n\"}");
	struct vars_conv	 vc = { .vc_node = node(
	    "{\"addUserAssistantTags\": \"yes\"}"), .vc_user = u };

	wmsgs_add(&l, "Critic", "c1");
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_five"),
	    "System: mid\n***\nTool Result: t1\n***\nUser: u2\n***\n"
	    "Assistant: a2\n***\nc1");
	/* Not in templated_* nor in *_without_system. */
	ck_assert_str_eq(get(v, "templated_user_prompt_last_two"), "a2c1");
	ck_assert_str_eq(get(v, "chat_user_prompt_without_system"),
	    "u1a1t1u2a2c1");
	json_decref(vc.vc_node);
	user_free(u);
	u = user("{\"separateConversationInVariables\": false,"
	    " \"conversationSeparationDelimiter\": \"|\"}");
	vc.vc_user = u;
	vc.vc_node = node("{\"addUserAssistantTags\": false}");
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_two"), "a2\nc1");
	json_decref(vc.vc_node);
	user_free(u);
	u = user("{\"separateConversationInVariables\": 1,"
	    " \"conversationSeparationDelimiter\": \"|\"}");
	vc.vc_user = u;
	vc.vc_node = node("{\"addUserAssistantTags\": 0}");
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_two"), "a2|c1");
	json_decref(vc.vc_node);
	user_free(u);
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

START_TEST(n_messages_field)
{
	struct wmsgs		 l = convo();
	struct vars		*v = vars_new();
	struct vars_conv	 vc = { .vc_node = NULL };
	static const struct { const char *node, *chat, *tpl; } cases[] = {
		{ "{\"nMessagesToIncludeInVariable\": 2}", "u2\na2", "u2a2" },
		{ "{\"nMessagesToIncludeInVariable\": \"{count}\"}",
		  "t1\nu2\na2", "t1u2a2" },
		{ "{\"nMessagesToIncludeInVariable\": \" 1 \"}", "a2", "a2" },
		{ "{\"nMessagesToIncludeInVariable\": 1.9}", "a2", "a2" },
		{ "{\"nMessagesToIncludeInVariable\": true}", "a2", "a2" },
		{ "{\"nMessagesToIncludeInVariable\": \"two\"}",
		  "a1\nmid\nt1\nu2\na2", "u1a1t1u2a2" },
		{ "{\"nMessagesToIncludeInVariable\": null}",
		  "a1\nmid\nt1\nu2\na2", "u1a1t1u2a2" },
		/* Python's [-0:] and [-(-4):]. */
		{ "{\"nMessagesToIncludeInVariable\": 0}", "", "u1a1t1u2a2" },
		{ "{\"nMessagesToIncludeInVariable\": -4}", "u2\na2", "a2" },
	};
	size_t			 i;

	vars_set(v, "count", "3");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vc.vc_node = node(cases[i].node);
		vars_conversation_node(v, &l, &vc);
		ck_assert_msg(strcmp(get(v, "chat_user_prompt_n_messages"),
		    cases[i].chat) == 0, "%s: chat '%s'", cases[i].node,
		    get(v, "chat_user_prompt_n_messages"));
		ck_assert_msg(strcmp(get(v, "templated_user_prompt_n_messages"),
		    cases[i].tpl) == 0, "%s: templated '%s'", cases[i].node,
		    get(v, "templated_user_prompt_n_messages"));
		json_decref(vc.vc_node);
	}
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

/* ---- conversation: token limits and the clamp ------------------------- */

/* Conversation variables of convo_tokens() for node text and vc. */
static struct vars *
token_vars(const char *node_text, struct vars_conv *vc)
{
	struct wmsgs	 l = convo_tokens();
	struct vars	*v = vars_new();

	vc->vc_node = node(node_text);
	vars_conversation_node(v, &l, vc);
	json_decref(vc->vc_node);
	wmsgs_free(&l);
	return v;
}

START_TEST(estimated_token_limit)
{
	struct vars_conv	 vc = { .vc_node = NULL };
	static const struct { const char *node, *want; } cases[] = {
		{ "{\"estimatedTokensToIncludeInVariable\": 33}", "345" },
		{ "{\"estimatedTokensToIncludeInVariable\": 32}", "45" },
		{ "{\"estimatedTokensToIncludeInVariable\": 34}", "345" },
		{ "{\"estimatedTokensToIncludeInVariable\": 11}", "5" },
		{ "{\"estimatedTokensToIncludeInVariable\": 0}", "5" },
		{ "{\"estimatedTokensToIncludeInVariable\": -9}", "5" },
		{ "{}", "012345" },
	};
	struct vars		*v;
	size_t			 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = token_vars(cases[i].node, &vc);
		var_is_ms(v, "chat_user_prompt_estimated_token_limit",
		    cases[i].want, "\n");
		var_is_ms(v, "templated_user_prompt_estimated_token_limit",
		    cases[i].want, "");
		vars_free(v);
	}
}
END_TEST

START_TEST(min_n_max_tokens)
{
	struct vars_conv	 vc = { .vc_node = NULL };
	static const struct { const char *node, *want; } cases[] = {
		{ "{\"minMessagesInVariable\": 2, "
		  "\"maxEstimatedTokensInVariable\": 44}", "2345" },
		{ "{\"minMessagesInVariable\": 2, "
		  "\"maxEstimatedTokensInVariable\": 43}", "345" },
		/* The floor wins over the budget. */
		{ "{\"minMessagesInVariable\": 4, "
		  "\"maxEstimatedTokensInVariable\": 11}", "2345" },
		{ "{\"minMessagesInVariable\": 9, "
		  "\"maxEstimatedTokensInVariable\": 1}", "012345" },
		/* No floor: not even the newest is sure to be kept. */
		{ "{\"minMessagesInVariable\": 0, "
		  "\"maxEstimatedTokensInVariable\": 10}", "" },
		{ "{\"minMessagesInVariable\": 0, "
		  "\"maxEstimatedTokensInVariable\": 11}", "5" },
		{ "{\"maxEstimatedTokensInVariable\": 66}", "012345" },
		{ "{\"maxEstimatedTokensInVariable\": 54}", "12345" },
	};
	struct vars		*v;
	size_t			 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = token_vars(cases[i].node, &vc);
		var_is_ms(v, "chat_user_prompt_min_n_max_tokens", cases[i].want,
		    "\n");
		var_is_ms(v, "templated_user_prompt_min_n_max_tokens",
		    cases[i].want, "");
		vars_free(v);
	}
}
END_TEST

START_TEST(clamp_with_window)
{
	/* (645 - 100) * 1.0 - 512 = 33 tokens: three messages. */
	struct vars_conv	 vc = { .vc_clamp = true, .vc_window = 645,
	    .vc_max_response = 100 };
	struct vars		*v;

	v = token_vars("{\"minMessagesInVariable\": 5}", &vc);
	var_is_ms(v, "chat_user_prompt_last_twenty", "345", "\n");
	var_is_ms(v, "templated_user_prompt_last_five", "345", "");
	var_is_ms(v, "chat_user_prompt_last_two", "45", "\n");
	var_is_ms(v, "chat_user_prompt_n_messages", "345", "\n");
	var_is_ms(v, "chat_user_prompt_estimated_token_limit", "345", "\n");
	/* The floor of 5 yields to the window budget. */
	var_is_ms(v, "chat_user_prompt_min_n_max_tokens", "345", "\n");
	var_is_ms(v, "templated_user_prompt_min_n_max_tokens", "345", "");
	vars_free(v);
	/* A smaller configured budget still wins. */
	v = token_vars("{\"estimatedTokensToIncludeInVariable\": 22}", &vc);
	var_is_ms(v, "chat_user_prompt_estimated_token_limit", "45", "\n");
	vars_free(v);
	/* Response larger than the window: the budget is negative, the
	 * newest message is kept. */
	vc.vc_window = 100;
	vc.vc_max_response = 200;
	v = token_vars("{}", &vc);
	var_is_ms(v, "chat_user_prompt_last_five", "5", "\n");
	var_is_ms(v, "chat_user_prompt_min_n_max_tokens", "5", "\n");
	vars_free(v);
	/* aggressive: (700 - 100) * 1.5 - 512 = 388, and 20 * 1.5 = 30. */
	vc.vc_window = 700;
	vc.vc_max_response = 100;
	vc.vc_level = 1.5;
	v = token_vars("{\"estimatedTokensToIncludeInVariable\": 20}", &vc);
	var_is_ms(v, "chat_user_prompt_last_twenty", "012345", "\n");
	var_is_ms(v, "chat_user_prompt_estimated_token_limit", "45", "\n");
	vars_free(v);
}
END_TEST

START_TEST(clamp_without_window)
{
	struct vars_conv	 vc = { .vc_clamp = true, .vc_level = 1.5 };
	struct vars		*v;

	/* Budgets scale (20 * 1.5 = 30) but are not capped; counts are
	 * not bounded; the floor still yields. */
	v = token_vars("{\"estimatedTokensToIncludeInVariable\": 20, "
	    "\"minMessagesInVariable\": 5, \"maxEstimatedTokensInVariable\": "
	    "20}", &vc);
	var_is_ms(v, "chat_user_prompt_estimated_token_limit", "45", "\n");
	var_is_ms(v, "chat_user_prompt_min_n_max_tokens", "45", "\n");
	var_is_ms(v, "chat_user_prompt_last_five", "12345", "\n");
	vars_free(v);
	/* Clamp off: the level is inert and the floor is hard. */
	vc.vc_clamp = false;
	v = token_vars("{\"estimatedTokensToIncludeInVariable\": 20, "
	    "\"minMessagesInVariable\": 5, \"maxEstimatedTokensInVariable\": "
	    "20}", &vc);
	var_is_ms(v, "chat_user_prompt_estimated_token_limit", "5", "\n");
	var_is_ms(v, "chat_user_prompt_min_n_max_tokens", "12345", "\n");
	vars_free(v);
}
END_TEST

/* ---- conversation: templates ------------------------------------------ */

START_TEST(templated_completion)
{
	struct wmsgs		 l = convo();
	struct vars		*v = vars_new();
	struct prompt_template	*t = tmp_template("t", T_JSON);
	struct prompt_template	*c = tmp_template("c", C_JSON);
	struct vars_conv	 vc = { .vc_completion = true,
	    .vc_template = t, .vc_chat_template = c };

	vars_conversation_node(v, &l, &vc);
	/* The last assistant message has no suffix. */
	ck_assert_str_eq(get(v, "templated_user_prompt_last_three"),
	    "<T>t1</T><U>u2</U><A>a2");
	ck_assert_str_eq(get(v, "templated_user_prompt_last_one"), "<A>a2");
	ck_assert_str_eq(get(v, "templated_user_prompt_without_system"),
	    "<U>u1</U><A>a1</A><T>t1</T><U>u2</U><A>a2");
	ck_assert_str_eq(get(v, "templated_system_prompt"), "<S>S1 mid</S>");
	/* chat_ versions of those two use the user's chat template (role
	 * tags stripped); the chat_ lists stay raw. */
	ck_assert_str_eq(get(v, "chat_system_prompt"), "sys:S1 mid;");
	ck_assert_str_eq(get(v, "chat_user_prompt_without_system"),
	    "user:u1;bot:a1;t1user:u2;bot:a2");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_two"), "u2\na2");
	/* A final user message keeps its suffix; [Beg_*] tags go from
	 * templated pieces only. */
	wmsgs_add(&l, "user", "[Beg_User]u3[Beg_Assistant]");
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "templated_user_prompt_last_two"),
	    "<A>a2</A><U>u3</U>");
	ck_assert_str_eq(get(v, "chat_user_prompt_last_one"),
	    "[Beg_User]u3[Beg_Assistant]");
	/* Chat backends: raw content, tags stripped, system as is. */
	vc.vc_completion = false;
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "templated_user_prompt_last_two"), "a2u3");
	ck_assert_str_eq(get(v, "templated_system_prompt"), "S1");
	ck_assert_str_eq(get(v, "chat_system_prompt"), "S1");
	ck_assert_str_eq(get(v, "chat_user_prompt_without_system"),
	    "u1a1t1u2a2u3");
	prompt_template_free(t);
	prompt_template_free(c);
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

/* The shipped configs folder, or NULL (the test then skips). */
static const char *
shipped_root(char out[PATH_MAX])
{
	const char	*src = getenv("SLUICE_SRC");
	struct stat	 st;

	if (src != NULL) {
		snprintf(out, PATH_MAX, "%s/../shared/reference/wilmer-configs",
		    src);
		if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
			return out;
	}
	snprintf(out, PATH_MAX, "/work/shared/reference/wilmer-configs");
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return out;
	printf("check_vars: WilmerAI's shipped configs not found (SLUICE_SRC"
	    "=%s); skipping\n", src != NULL ? src : "unset");
	return NULL;
}

START_TEST(templated_chatml)
{
	char			 root[PATH_MAX], err[CONF_ERRLEN];
	struct wmsgs		 l;
	struct vars		*v;
	struct prompt_template	*pt;
	struct vars_conv	 vc = { .vc_completion = true };

	if (shipped_root(root) == NULL)
		return;
	l = convo();
	ck_assert_msg(prompt_template_load(root, "chatml", &pt, err) == 0,
	    "%s", err);
	v = vars_new();
	vc.vc_template = pt;
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "templated_user_prompt_last_two"),
	    "<|im_start|>user\nu2<|im_end|>\n<|im_start|>assistant\na2");
	ck_assert_str_eq(get(v, "templated_system_prompt"),
	    "<|im_start|>system\nS1 mid<|im_end|>\n");
	/* chatml has no tool prefix: the tool message is bare. */
	ck_assert_str_eq(get(v, "templated_user_prompt_last_three"),
	    "t1<|im_start|>user\nu2<|im_end|>\n<|im_start|>assistant\na2");
	ck_assert_str_eq(get(v, "chat_system_prompt"), "S1 mid");
	prompt_template_free(pt);
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

START_TEST(messages_repr)
{
	struct wmsgs	 l = { NULL, 0 };
	struct vars	*v = vars_new();

	wmsgs_add(&l, "user", "it's {x}\n");
	wmsgs_add(&l, "assistant", "say \"hi\"");
	vars_set(v, "x", "NO");
	vars_conversation_node(v, &l, NULL);
	ck_assert_str_eq(get(v, "messages"), "[{'role': 'user', 'content': "
	    "\"it's {x}\\n\"}, {'role': 'assistant', 'content': "
	    "'say \"hi\"'}]");
	fmt_eq(v, "{messages}", get(v, "messages"));
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

/* includeToolCallsInConversation (addendum A8.4): the last_* lists
 * see the tool calls and results as text; the system prompt and
 * messages do not; off, nothing changes. */
START_TEST(tool_calls_in_conversation)
{
	struct wmsgs	 l = { NULL, 0 };
	struct vars	*v = vars_new();
	struct vars_conv vc;
	json_t		*node = json_pack("{s:b}",
			    "includeToolCallsInConversation", 1);
	char		 big[260];

	memset(big, 'z', 250);
	big[250] = '\0';
	wmsgs_add(&l, "system", "S");
	wmsgs_add(&l, "user", "look");
	wmsgs_add(&l, "assistant", "");
	l.v[2].m_tool_calls = strdup("[{\"id\": \"c1\", \"type\": "
	    "\"function\", \"function\": {\"name\": \"bash\", "
	    "\"arguments\": \"{\\\"command\\\": \\\"git status\\\", "
	    "\\\"n\\\": 1}\"}}, {\"id\": \"c2\", \"function\": {\"name\": "
	    "\"read\", \"arguments\": {\"n\": 2, \"path\": \"/a.txt\"}}}, "
	    "{\"function\": {\"arguments\": null}}, \"junk\"]");
	wmsgs_add(&l, "tool", "clean {tree}");
	l.v[3].m_tool_call_id = strdup("c1");
	wmsgs_add(&l, "tool", "'use strict';");
	l.v[4].m_tool_call_id = strdup("c2");
	wmsgs_add(&l, "tool", "orphan");
	l.v[5].m_name = strdup("grep");
	wmsgs_add(&l, "tool", "nobody");
	wmsgs_add(&l, "assistant", "Done.");
	l.v[7].m_tool_calls = strdup("[{\"id\": \"c3\", \"function\": "
	    "{\"name\": \"w\", \"arguments\": \"not json\"}}, {\"id\": "
	    "\"c4\", \"function\": {\"name\": \"x\", \"arguments\": [1, "
	    "\"a\"]}}]");
	wmsgs_add(&l, "tool", big);
	l.v[8].m_tool_call_id = strdup("c3");
	memset(&vc, 0, sizeof(vc));
	vc.vc_node = node;
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_ten"), "look\n"
	    "[Tool Call: bash] git status\n"
	    "[Tool Call: read] /a.txt\n"
	    "[Tool Call: unknown] \n"
	    "[Tool Result: bash git status] clean {tree}\n"
	    "[Tool Result: read /a.txt] 'use strict';\n"
	    "[Tool Result: grep] orphan\n"
	    "[Tool Result: unknown_tool] nobody\n"
	    "Done.\n[Tool Call: w] not json\n[Tool Call: x] [1, 'a']\n"
	    "[Tool Result: w not json] " "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
	/* not the system prompt, not messages */
	ck_assert_str_eq(get(v, "chat_system_prompt"), "S");
	ck_assert_ptr_null(strstr(get(v, "messages"), "Tool Call"));
	/* off: the plain text */
	json_object_set_new(node, "includeToolCallsInConversation",
	    json_false());
	vars_conversation_node(v, &l, &vc);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_two"), "Done.\n" "zz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
	    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
	json_decref(node);
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

/* vars(str(v)): Python's str() of a config value, then variables. */
START_TEST(format_value_is_str_then_vars)
{
	struct vars	*v = vars_new();
	json_t		*j = json_loads("[\"Hi {who}\", 5, true, null, 2.0, "
			    "{\"k\": \"{who}\"}]", 0, NULL);
	static const char *const want[] = { "Hi Ann", "5", "True", "None",
	    "2.0", "{'k': 'Ann'}" };
	size_t		 i;
	char		*s;

	vars_set(v, "who", "Ann");
	for (i = 0; i < json_array_size(j); i++) {
		s = vars_format_value(v, json_array_get(j, i));
		ck_assert_str_eq(s, want[i]);
		free(s);
	}
	json_decref(j);
	vars_free(v);
}
END_TEST

/* ---- configuration values --------------------------------------------- */

START_TEST(python_str)
{
	static const struct { const char *json, *want; } cases[] = {
		{ "\"plain {x}\"", "plain {x}" }, { "5", "5" },
		{ "-12", "-12" }, { "2.0", "2.0" }, { "0.1", "0.1" },
		{ "1.5e-7", "1.5e-07" }, { "1e16", "1e+16" },
		{ "1e15", "1000000000000000.0" }, { "0.0001", "0.0001" },
		{ "0.00001", "1e-05" }, { "123456789.125", "123456789.125" },
		{ "-0.5", "-0.5" }, { "1.7976931348623157e308",
		  "1.7976931348623157e+308" }, { "true", "True" },
		{ "false", "False" }, { "null", "None" }, { "[]", "[]" },
		{ "{}", "{}" },
		/* unassigned and format characters are not printable; at
		 * 2^-1017 the shortest digits are not printf's nearest */
		{ "[\"\\u0378\\u00ad\\u2066\", 7.120236347223045e-307]",
		  "['\\u0378\\xad\\u2066', 7.120236347223045e-307]" },
		{ "[\"a\", 1, [true, null], {\"k\": \"v\", \"n\": 2.5}]",
		  "['a', 1, [True, None], {'k': 'v', 'n': 2.5}]" },
		{ "[\"it's\", \"say \\\"x\\\"\", \"both ' \\\"\", \"\\\\\"]",
		  "[\"it's\", 'say \"x\"', 'both \\' \"', '\\\\']" },
		{ "[\"tab\\tnl\\ncr\\r\\u0001\\u007f\"]",
		  "['tab\\tnl\\ncr\\r\\x01\\x7f']" },
		{ "[\"caf\\u00e9 \\u00a0 \\u2028 \\ufeff \\ud83d\\ude00\"]",
		  "['caf\xc3\xa9 \\xa0 \\u2028 \\ufeff \xf0\x9f\x98\x80']" },
	};
	json_error_t	 e;
	json_t		*j;
	char		*s;
	size_t		 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		j = json_loads(cases[i].json, JSON_DECODE_ANY, &e);
		ck_assert_msg(j != NULL, "%s: %s", cases[i].json, e.text);
		s = vars_py_str(j);
		ck_assert_msg(strcmp(s, cases[i].want) == 0, "%s: got %s",
		    cases[i].json, s);
		free(s);
		json_decref(j);
	}
}
END_TEST

START_TEST(user_wide_and_workflow)
{
	struct vars		*v = vars_new();
	struct conf_user	*u = user("{\"userWideWorkflowVariables\": {"
	    "\"plansDir\": \"/data/{Discussion_Id}\", \"n\": 3, \"on\": true,"
	    " \"custom\": \"FROM_USER\", \"Discussion_Id\": \"HACKED\"}}");
	json_t			*wf = node("{\"nodes\": [1], \"custom\": "
	    "\"wf\", \"scratch\": \"{plansDir}/s.txt\", \"sys\": "
	    "\"{chat_system_prompt}!\", \"lst\": [1, \"a\"]}");
	struct wmsgs		 l = convo();

	/* Spec order: user-wide, clock, workflow, discussion, then the
	 * conversation, each overriding the earlier. */
	vars_user_wide(v, u);
	vars_workflow(v, wf);
	vars_discussion(v, "d1", NULL);
	vars_set(v, "agent1Output", "{custom}");
	wmsgs_add(&l, "user", "{agent1Output} {scratch}");
	vars_conversation_node(v, &l, NULL);
	fmt_eq(v, "{custom}|{Discussion_Id}|{n}|{on}|{lst}|{nodes}",
	    "wf|d1|3|True|[1, 'a']|{nodes}");
	/* Workflow keys and user-wide values expand their own names once. */
	fmt_eq(v, "{plansDir}", "/data/d1");
	fmt_eq(v, "{scratch}", "/data/{Discussion_Id}/s.txt");
	fmt_eq(v, "{sys}", "S1!");
	/* Data never expands, wherever it comes from. */
	fmt_eq(v, "{chat_user_prompt_last_one}", "{agent1Output} {scratch}");
	fmt_eq(v, "{agent1Output}", "{custom}");
	vars_user_wide(v, NULL);
	json_decref(wf);
	user_free(u);
	u = user("{\"userWideWorkflowVariables\": \"not-a-dict\"}");
	vars_user_wide(v, u);
	vars_workflow(v, NULL);
	user_free(u);
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

START_TEST(categories)
{
	struct vars	*v = vars_new();
	json_t		*r = node("{\"WIKI\": {\"description\": \"Facts.\","
	    " \"workflow\": \"W\"}, \"O'Brien\": {\"description\": "
	    "\"Say \\\"hi\\\"\", \"workflow\": \"O\"}, \"Mix'\\\"\": "
	    "{\"description\": 7, \"workflow\": \"M\"}, \"NONE\": {}}");

	ck_assert_int_eq(vars_categories(v, r), 0);
	ck_assert_str_eq(get(v, "category_colon_descriptions"),
	    "WIKI: Facts.; O'Brien: Say \"hi\"; Mix'\": 7; NONE: ");
	ck_assert_str_eq(get(v, "category_colon_descriptions_newline_"
	    "bulletpoint"), "\n- WIKI: Facts.\n- O'Brien: Say \"hi\"\n"
	    "- Mix'\": 7\n- NONE: ");
	ck_assert_str_eq(get(v, "categoriesSeparatedByOr"),
	    "WIKI or O'Brien or Mix'\" or NONE");
	ck_assert_str_eq(get(v, "categoryNameBulletpoints"),
	    "\n- WIKI\n- O'Brien\n- Mix'\"\n- NONE");
	ck_assert_str_eq(get(v, "category_list"),
	    "['WIKI', \"O'Brien\", 'Mix\\'\"', 'NONE']");
	ck_assert_str_eq(get(v, "category_descriptions"),
	    "['Facts.', 'Say \"hi\"', 7, '']");
	/* Category text is data. */
	fmt_eq(v, "{categoriesSeparatedByOr}", "WIKI or O'Brien or Mix'\" or "
	    "NONE");
	json_decref(r);
	r = node("{}");
	ck_assert_int_eq(vars_categories(v, r), 0);
	ck_assert_str_eq(get(v, "category_colon_descriptions"), "");
	ck_assert_str_eq(get(v, "categoryNameBulletpoints"), "\n- ");
	ck_assert_str_eq(get(v, "category_list"), "[]");
	json_decref(r);
	r = node("[1]");
	ck_assert_int_eq(vars_categories(v, r), -1);
	ck_assert_str_eq(get(v, "category_list"), "[]");
	json_decref(r);
	vars_free(v);
}
END_TEST

/* ---- size -------------------------------------------------------------- */

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* About 4 MiB of messages full of braces and variable names. */
static struct wmsgs
big_convo(void)
{
	struct wmsgs	 l = { NULL, 0 };
	struct buf	 b = BUF_INIT;
	int		 i, j;

	wmsgs_add(&l, "system", "sys {agent1Output}");
	for (i = 0; i < 1024; i++) {
		buf_reset(&b);
		for (j = 0; j < 128; j++)
			buf_adds(&b, "{agent1Output} {{ }} {a{b{c word ");
		wmsgs_add(&l, i % 2 ? "assistant" : "user", b.b_data);
	}
	buf_free(&b);
	return l;
}

START_TEST(four_mib_linear)
{
	struct wmsgs		 l = big_convo();
	struct vars		*v = vars_new();
	struct prompt_template	*t = tmp_template("t", T_JSON);
	struct vars_conv	 vc = { .vc_completion = true,
	    .vc_template = t };
	struct buf		 tmpl = BUF_INIT;
	double			 t0 = now_s(), t1, t2;
	char			*s;
	size_t			 i, len = 0;

	for (i = 0; i < l.n; i++)
		len += strlen(l.v[i].m_content);
	ck_assert_uint_ge(len, 4u << 20);
	vars_set(v, "agent1Output", "X");
	vars_conversation_node(v, &l, &vc);
	t1 = now_s();
	s = vars_format(v, "{chat_user_prompt_without_system}"
	    "{templated_user_prompt_without_system}{messages}");
	ck_assert_uint_gt(strlen(s), 3 * len);
	ck_assert_ptr_null(strstr(s, "X"));	/* nothing re-expanded */
	free(s);
	/* The conversation itself as a template: 4 MiB of braces. */
	for (i = 1; i < l.n; i++)
		buf_adds(&tmpl, l.v[i].m_content);
	s = vars_format(v, tmpl.b_data);
	ck_assert_ptr_nonnull(strstr(s, "X { } {a{b{c word X"));
	free(s);
	t2 = now_s();
	printf("check_vars: 4 MiB conversation: variables %.3fs, formatting "
	    "%.3fs\n", t1 - t0, t2 - t1);
	buf_free(&tmpl);
	prompt_template_free(t);
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

/* ---- lazy values ----------------------------------------------------- */

/* A maker that counts what it is asked for, and its end. */
struct counted {
	struct vars_lazy	 c_lz;
	int			*c_fills;
	int			*c_freed;
};

static void
counted_fill(struct vars *vs, struct vars_lazy *lz, const char *name)
{
	struct counted	*c = (struct counted *)(void *)lz;
	char		 v[64];

	(*c->c_fills)++;
	snprintf(v, sizeof(v), "made %s", name);
	vars_set(vs, name, v);
}

static void
counted_free(struct vars_lazy *lz)
{
	struct counted	*c = (struct counted *)(void *)lz;

	(*c->c_freed)++;
	free(c);
}

static struct vars_lazy *
counted_new(int *fills, int *freed)
{
	struct counted	*c = xcalloc(1, sizeof(*c));

	c->c_lz = (struct vars_lazy){ counted_fill, counted_free, 0 };
	c->c_fills = fills;
	c->c_freed = freed;
	return &c->c_lz;
}

/* A lazy value is made once, when first read, by any kind of read; one
 * set again before it is read keeps the new value; the maker goes when
 * no name waits for it. */
START_TEST(lazy_values)
{
	struct vars	 *v = vars_new();
	int		  fills = 0, freed = 0;
	struct vars_lazy *lz = counted_new(&fills, &freed);
	struct buf	  b = BUF_INIT;
	const char	 *name, *value;
	json_t		 *jv;
	bool		  tmpl;
	size_t		  i = 0;

	vars_set(v, "first", "1");
	vars_set_lazy(v, "a", lz);
	vars_set_lazy(v, "b", lz);
	vars_set_lazy(v, "c", lz);
	vars_set_lazy(v, "d", lz);
	ck_assert_int_eq(fills, 0);
	fmt_eq(v, "{first}-{a}-{a}", "1-made a-made a");
	ck_assert_int_eq(fills, 1);
	ck_assert_str_eq(get(v, "b"), "made b");
	ck_assert_int_eq(fills, 2);
	vars_set(v, "c", "mine");		/* never made */
	ck_assert_str_eq(get(v, "c"), "mine");
	ck_assert_int_eq(fills, 2);
	ck_assert_int_eq(freed, 0);		/* d still waits */
	/* vars_each walks in the order first set, making d */
	while (vars_each(v, &i, &name, &value, &jv, &tmpl))
		if (strcmp(name, "d") == 0)
			ck_assert_str_eq(value, "made d");
	ck_assert_uint_eq(i, 5);
	ck_assert_int_eq(fills, 3);
	ck_assert_int_eq(freed, 1);
	vars_dump(v, &b);
	ck_assert_str_eq(b.b_data, "first = 1\na = made a\nb = made b\n"
	    "c = mine\nd = made d\n");
	buf_free(&b);
	/* Never read: never made, freed with the table. */
	vars_set_lazy(v, "e", counted_new(&fills, &freed));
	vars_free(v);
	ck_assert_int_eq(fills, 3);
	ck_assert_int_eq(freed, 2);
}
END_TEST

/* A node's conversation values are made when read, from a copy: the
 * node may change or free its messages first. */
START_TEST(conversation_values_are_copies)
{
	struct wmsgs	 l = convo();
	struct vars	*v = vars_new();
	char		*want[4];
	static const char *names[4] = { "chat_user_prompt_last_two",
	    "chat_user_prompt_without_system", "chat_system_prompt",
	    "messages" };
	size_t		 i;

	vars_conversation_node(v, &l, NULL);
	for (i = 0; i < 4; i++)
		want[i] = xstrdup(get(v, names[i]));
	vars_free(v);
	v = vars_new();
	vars_conversation_node(v, &l, NULL);
	wmsgs_free(&l);				/* the node is done with it */
	l = convo();
	free(l.v[l.n - 1].m_content);
	l.v[l.n - 1].m_content = xstrdup("changed");
	for (i = 0; i < 4; i++) {
		ck_assert_str_eq(get(v, names[i]), want[i]);
		free(want[i]);
	}
	ck_assert_ptr_null(strstr(get(v, "messages"), "changed"));
	/* The next node's values replace them, made from its own list. */
	vars_conversation_node(v, &l, NULL);
	ck_assert_str_eq(get(v, "chat_user_prompt_last_one"), "changed");
	vars_free(v);
	wmsgs_free(&l);
}
END_TEST

static Suite *
vars_suite(void)
{
	Suite	*s = suite_create("vars");
	TCase	*tc;

	tc = tcase_create("substitution");
	tcase_add_test(tc, format_rules);
	tcase_add_test(tc, two_kinds);
	tcase_add_test(tc, format_value_is_str_then_vars);
	tcase_add_test(tc, many_names);
	tcase_add_test(tc, lazy_values);
	suite_add_tcase(s, tc);
	tc = tcase_create("run_variables");
	tcase_add_test(tc, clock_and_discussion);
	suite_add_tcase(s, tc);
	tc = tcase_create("conversation_lists");
	tcase_add_test(tc, chat_backend_lists);
	tcase_add_test(tc, completion_backend_lists);
	tcase_add_test(tc, system_messages_edge);
	tcase_add_test(tc, role_tags_and_separator);
	tcase_add_test(tc, n_messages_field);
	tcase_add_test(tc, messages_repr);
	tcase_add_test(tc, tool_calls_in_conversation);
	tcase_add_test(tc, conversation_values_are_copies);
	suite_add_tcase(s, tc);
	tc = tcase_create("token_limits");
	tcase_add_test(tc, estimated_token_limit);
	tcase_add_test(tc, min_n_max_tokens);
	tcase_add_test(tc, clamp_with_window);
	tcase_add_test(tc, clamp_without_window);
	suite_add_tcase(s, tc);
	tc = tcase_create("templates");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_add_test(tc, templated_completion);
	tcase_add_test(tc, templated_chatml);
	suite_add_tcase(s, tc);
	tc = tcase_create("config_values");
	tcase_add_test(tc, python_str);
	tcase_add_test(tc, user_wide_and_workflow);
	tcase_add_test(tc, categories);
	suite_add_tcase(s, tc);
	tc = tcase_create("size");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, four_mib_linear);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(vars_suite());
}
