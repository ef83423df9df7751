/* check_worker.c - variables, conversation handling and the OpenAI chat adapter. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../worker/core/msgs.h"
#include "../../worker/core/vars.h"
#include "../../worker/llm/backend.h"
#include "../testmain.h"
#include "stubs_worker.h"

extern const struct adapter adapter_openai_chat;

START_TEST(format_rules)
{
	struct vars	*v = vars_new();
	char		*s;

	vars_set(v, "name", "Ann");
	vars_set(v, "x", "{name}");		/* never expanded again */
	vars_set(v, "name", "Bea");		/* replaced */
	s = vars_format(v, "Hi {name}, {{literal}} {x} {missing} {na{me} }{");
	ck_assert_str_eq(s, "Hi Bea, {literal} {name} {missing} {na{me} }{");
	free(s);
	s = vars_format(v, "");
	ck_assert_str_eq(s, "");
	free(s);
	ck_assert_ptr_null(vars_get(v, "nam", 3));
	ck_assert_str_eq(vars_get(v, "name", 4), "Bea");
	vars_free(v);
	vars_free(NULL);
}
END_TEST

START_TEST(clock_variables)
{
	struct vars	*v = vars_new();

	setenv("TZ", "UTC", 1);
	vars_clock(v, 1757781000);	/* Saturday 2025-09-13 16:30:00 UTC */
	ck_assert_str_eq(vars_get(v, "todays_date_pretty", 18),
	    "September 13, 2025");
	ck_assert_str_eq(vars_get(v, "todays_date_iso", 15), "2025-09-13");
	ck_assert_str_eq(vars_get(v, "YYYY_MM_DD", 10), "2025_09_13");
	ck_assert_str_eq(vars_get(v, "current_time_12h", 16), "4:30 PM");
	ck_assert_str_eq(vars_get(v, "current_time_24h", 16), "16:30");
	ck_assert_str_eq(vars_get(v, "current_day_of_week", 19), "Saturday");
	ck_assert_str_eq(vars_get(v, "current_day_of_month", 20), "13");
	vars_free(v);
}
END_TEST

START_TEST(drop_empty_messages)
{
	struct wmsgs	 l = { NULL, 0 };

	wmsgs_add(&l, "user", "  \n\t ");
	wmsgs_add(&l, "assistant", "");
	wmsgs_add(&l, "user", "keep");
	l.v[1].m_tool_calls = strdup("[{}]");	/* tool turn stays */
	wmsgs_add(&l, "user", " ");
	l.v[3].m_images = calloc(1, sizeof(char *));
	l.v[3].m_images[0] = strdup("img");
	l.v[3].m_nimages = 1;
	wmsgs_drop_empty(&l);
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(l.v[0].m_role, "assistant");
	ck_assert_str_eq(l.v[1].m_content, "keep");
	ck_assert_uint_eq(l.v[2].m_nimages, 1);
	wmsgs_free(&l);
	ck_assert_uint_eq(l.n, 0);
}
END_TEST

/* A node call over fixtures: endpoint, api type, preset. */
static struct conf_endpoint	 EP;
static struct conf_apitype	 AT;
static struct conf_user		 U;

static struct node_call
call(const struct wmsgs *l, json_t *preset, bool stream)
{
	EP = (struct conf_endpoint){ .e_name = "E", .e_url = "http://x",
	    .e_model = "m1", .e_max_context = 8192, .e_api_key = "" };
	AT = (struct conf_apitype){ .a_type = APIT_OPENAI_CHAT,
	    .a_truncate_prop = "", .a_max_tokens_prop = "max_tokens",
	    .a_stream_prop = "stream" };
	return (struct node_call){ .nc_user = &U, .nc_ep = &EP, .nc_at = &AT,
	    .nc_preset = preset, .nc_msgs = l, .nc_max_tokens = 300,
	    .nc_stream = stream };
}

START_TEST(openai_body_like_wilmer)
{
	struct wmsgs	 l = { NULL, 0 };
	json_t		*preset = json_pack("{s:f,s:[s],s:n}", "temperature",
			    0.7, "stop", "</s>", "max_tokens");
	struct node_call nc;
	char		*b;

	wmsgs_add(&l, "systemMes", "S");
	wmsgs_add(&l, "user", "h\xc3\xa9");
	wmsgs_add(&l, "assistant", "");		/* generation prompt: dropped */
	nc = call(&l, preset, true);
	b = adapter_openai_chat.ad_body(&nc);
	/* The preset's null max_tokens keeps the node's value out. */
	ck_assert_str_eq(b, "{\"model\": \"m1\", \"messages\": [{\"role\": "
	    "\"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": "
	    "\"h\\u00e9\"}], \"temperature\": 0.7, \"stop\": [\"</s>\"], "
	    "\"stream\": true}");
	free(b);
	json_decref(preset);
	EP.e_dont_include_model = true;
	nc = call(&l, NULL, false);
	nc.nc_ep = &EP;
	EP.e_dont_include_model = true;
	AT.a_truncate_prop = "truncation_length";
	b = adapter_openai_chat.ad_body(&nc);
	ck_assert_str_eq(b, "{\"messages\": [{\"role\": \"system\", \"content\":"
	    " \"S\"}, {\"role\": \"user\", \"content\": \"h\\u00e9\"}], "
	    "\"stream\": false, \"truncation_length\": 8192, \"max_tokens\": 300}");
	free(b);
	wmsgs_free(&l);
}
END_TEST

START_TEST(openai_images_become_parts)
{
	struct wmsgs	 l = { NULL, 0 };
	struct node_call nc;
	char		*b;

	wmsgs_add(&l, "user", "look");
	l.v[0].m_images = calloc(1, sizeof(char *));
	l.v[0].m_images[0] = strdup("data:image/png;base64,QQ==");
	l.v[0].m_nimages = 1;
	nc = call(&l, NULL, false);
	b = adapter_openai_chat.ad_body(&nc);
	ck_assert_ptr_nonnull(strstr(b, "\"content\": [{\"type\": \"text\", "
	    "\"text\": \"look\"}, {\"type\": \"image_url\", \"image_url\": "
	    "{\"url\": \"data:image/png;base64,QQ==\"}}]"));
	free(b);
	wmsgs_free(&l);
}
END_TEST

static int
feed_event(struct call_state *cs, const char *data)
{
	return adapter_openai_chat.ad_event(cs, "", data, strlen(data));
}

START_TEST(openai_stream_events)
{
	struct node_out		 out;
	struct node_call	 nc = call(NULL, NULL, true);
	struct call_state	 cs = { .cs_nc = &nc, .cs_out = &out };

	memset(&out, 0, sizeof(out));
	out.no_prompt_tokens = out.no_completion_tokens = -1;
	buf_reset(&stub_tokens);
	ck_assert_int_eq(feed_event(&cs, "{\"choices\":[{\"delta\":{\"role\":"
	    "\"assistant\",\"content\":\"\"}}]}"), 0);
	ck_assert_int_eq(feed_event(&cs, "{\"choices\":[{\"delta\":{\"content\""
	    ":\"Hi\"},\"finish_reason\":null}]}"), 0);
	ck_assert_int_eq(feed_event(&cs, "{\"choices\":[{\"delta\":{},"
	    "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":1}}"), 0);
	ck_assert_int_eq(feed_event(&cs, "[DONE]"), 0);
	ck_assert(cs.cs_done);
	ck_assert_str_eq(stub_tokens.b_data, "Hi");
	ck_assert_str_eq(out.no_finish, "length");
	ck_assert_int_eq(out.no_prompt_tokens, 3);
	ck_assert_int_eq(feed_event(&cs, "not json"), -1);
	ck_assert_int_eq(feed_event(&cs, "{\"error\":{\"message\":\"boom\"}}"),
	    -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "boom"));
	buf_free(&out.no_text);
}
END_TEST

START_TEST(openai_whole_answer)
{
	struct node_out		 out;
	struct node_call	 nc = call(NULL, NULL, false);
	struct call_state	 cs = { .cs_nc = &nc, .cs_out = &out };
	const char		*ok = "{\"choices\":[{\"message\":{\"content\":"
				    "\"All good\"},\"finish_reason\":\"stop\"}]}";

	memset(&out, 0, sizeof(out));
	out.no_prompt_tokens = out.no_completion_tokens = -1;
	ck_assert_int_eq(adapter_openai_chat.ad_whole(&cs, ok, strlen(ok)), 0);
	ck_assert_str_eq(out.no_text.b_data, "All good");
	ck_assert_int_eq(adapter_openai_chat.ad_whole(&cs, "{}", 2), -1);
	ck_assert_int_eq(adapter_openai_chat.ad_whole(&cs, "<html>", 6), -1);
	ck_assert_int_eq(adapter_openai_chat.ad_whole(&cs,
	    "{\"error\":\"overloaded\"}", 22), -1);
	ck_assert_ptr_nonnull(strstr(cs.cs_error, "overloaded"));
	buf_free(&out.no_text);
}
END_TEST

static Suite *
worker_suite(void)
{
	Suite	*s = suite_create("worker");
	TCase	*tc;

	tc = tcase_create("vars");
	tcase_add_test(tc, format_rules);
	tcase_add_test(tc, clock_variables);
	suite_add_tcase(s, tc);
	tc = tcase_create("msgs");
	tcase_add_test(tc, drop_empty_messages);
	suite_add_tcase(s, tc);
	tc = tcase_create("openai_adapter");
	tcase_add_test(tc, openai_body_like_wilmer);
	tcase_add_test(tc, openai_images_become_parts);
	tcase_add_test(tc, openai_stream_events);
	tcase_add_test(tc, openai_whole_answer);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(worker_suite());
}
