/* check_errors.c - integration: a backend's error keeps its meaning on every route (docs/api.md, "Backend errors"). */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

/*
 * One gateway, user "it": its own workflow calls the mock as an OpenAI
 * chat backend (endpoint "Mock"); shared workflows, chosen by the model
 * field, call the mock in the other dialects, an address that refuses
 * connections ("refused") or one that never completes them ("silent").
 * Every case is asked four ways at once: the OpenAI and the Ollama
 * route, streamed and whole. The stream heartbeat is off, so a stream's
 * head waits for its first token and an error is answered with its
 * status (after_head turns it on).
 */

static struct it	 T;

/* One case: what to ask and what the client must get. */
struct want {
	const char	*w_model;	/* "it", or a shared workflow */
	const char	*w_script;	/* the #mock JSON */
	int		 w_status;
	const char	*w_type;	/* OpenAI's error type */
	const char	*w_retry_after;	/* the header, NULL for none */
	const char	*w_needle;	/* in the message */
};

/* ---- configuration ------------------------------------------------- */

/* A listener on 127.0.0.1 whose accept queue is full: connecting to it
 * hangs until the connect timeout. Returns its port. */
static int
silent_listener(void)
{
	struct sockaddr_in	 sa;
	socklen_t		 len = sizeof(sa);
	int			 fd, c, i;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 0), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	/* Backlog 0 holds one connection; later SYNs are dropped. The
	 * descriptors stay open until the test process ends. */
	for (i = 0; i < 2; i++) {
		ck_assert_int_ge(c = socket(AF_INET, SOCK_STREAM, 0), 0);
		fcntl(c, F_SETFL, O_NONBLOCK);
		(void)connect(c, (struct sockaddr *)&sa, sizeof(sa));
	}
	it_sleep(50);
	return ntohs(sa.sin_port);
}

/* The mock, the folder (every backend), the gateway with n workers;
 * more is added to sluice.json. */
static void
start(int n, const char *more)
{
	char	 settings[256], url[64];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	snprintf(settings, sizeof(settings), "\"min_workers\": %d, "
	    "\"max_workers\": %d, \"stream_heartbeat_s\": 0%s%s", n, n,
	    more != NULL ? ", " : "", more != NULL ? more : "");
	it_config(&T, settings, NULL);
	it_allow_shared(&T);
	it_turns_template(&T);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", T.it_mock_port);
	it_backend(&T, "ollama", "Ollama", "ollamaApiChat", url, "", "");
	it_backend(&T, "claude", "Claude", "claudeMessages", url, "", "");
	it_backend(&T, "kobold", "Kobold", "koboldCppGenerate", url, "", "");
	it_backend(&T, "refused", "Refused", "openAIChatCompletion",
	    "http://127.0.0.1:1", "", "");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", silent_listener());
	it_backend(&T, "silent", "Silent", "openAIChatCompletion", url, "", "");
	it_gateway_start(&T, NULL);
	it_wait_idle(&T, n);
}

/* ---- asking -------------------------------------------------------- */

/* The request of case w asked way. Caller frees. */
static char *
body_for(const struct want *w, enum it_way way)
{
	char	 user[512];

	snprintf(user, sizeof(user), "Hi\n#mock %s", w->w_script);
	return it_way_body(way, w->w_model, user);
}

/* The error message of an answer in the route's shape, checking the
 * shape: Ollama's {"error": "..."} alone, or OpenAI's error object with
 * the wanted type and the status as its code. j owns the result. */
static const char *
error_message(const struct want *w, enum it_way way, json_t *j)
{
	json_t	*e = json_object_get(j, "error");

	if (it_way_ollama(way)) {
		ck_assert_msg(json_is_string(e) && json_object_size(j) == 1,
		    "%s: not Ollama's error shape", it_way_name(way));
		return json_string_value(e);
	}
	ck_assert_msg(json_is_object(e), "%s: no error object",
	    it_way_name(way));
	ck_assert_str_eq(json_string_value(json_object_get(e, "type")),
	    w->w_type);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "code")),
	    w->w_status);
	return json_string_value(json_object_get(e, "message"));
}

/* An error answered before any head: status, Retry-After, JSON body. */
static void
check_answer(const struct want *w, enum it_way way,
    const struct it_stream *s)
{
	char		 h[128], ct[64];
	const char	*ra = it_header_in(s->s_headers, "Retry-After", h,
			    sizeof(h)), *msg;
	json_t		*j;

	ck_assert_msg(s->s_status == w->w_status, "%s %s, %s: %ld %s",
	    w->w_model, w->w_script, it_way_name(way), s->s_status,
	    s->s_out.b_data);
	ck_assert_msg(w->w_retry_after != NULL ? ra != NULL &&
	    strcmp(ra, w->w_retry_after) == 0 : ra == NULL,
	    "%s %s, %s: Retry-After %s", w->w_model, w->w_script,
	    it_way_name(way), ra != NULL ? ra : "(none)");
	ck_assert_str_eq(it_header_in(s->s_headers, "Content-Type", ct,
	    sizeof(ct)), "application/json");
	j = it_json(s->s_out.b_data);
	msg = error_message(w, way, j);
	ck_assert_msg(msg != NULL && strstr(msg, w->w_needle) != NULL,
	    "%s %s, %s: %s", w->w_model, w->w_script, it_way_name(way),
	    s->s_out.b_data);
	json_decref(j);
}

/* Request i of ask_all is asked this way. */
#define WAY(i)	((enum it_way)((i) % IT_NWAYS))

/* Ask every case every way at once; each answer must be as wanted. */
static void
ask_all(const struct want *w, size_t n)
{
	size_t			 k = n * IT_NWAYS, i;
	struct it_stream	*s = calloc(k, sizeof(*s));
	struct buf		*hd = calloc(k, sizeof(*hd));
	char			**bodies = calloc(k, sizeof(*bodies));

	ck_assert(s != NULL && hd != NULL && bodies != NULL);
	for (i = 0; i < k; i++) {
		bodies[i] = body_for(&w[i / IT_NWAYS], WAY(i));
		s[i].s_body = bodies[i];
		s[i].s_path = it_way_path(WAY(i));
		s[i].s_headers = &hd[i];
	}
	it_streams(&T, s, k, it_slow(20000), NULL, NULL);
	for (i = 0; i < k; i++) {
		check_answer(&w[i / IT_NWAYS], WAY(i), &s[i]);
		buf_free(&s[i].s_out);
		buf_free(&hd[i]);
		free(bodies[i]);
	}
	free(bodies);
	free(hd);
	free(s);
}

/* The backend calls the mock saw since the last look. */
static size_t
backend_calls(void)
{
	json_t	*log = it_mock_log(&T, true);
	size_t	 n = json_array_size(log);

	json_decref(log);
	return n;
}

/* ---- the rows of the table ----------------------------------------- */

/* 429: the client is told to slow down, with the backend's Retry-After
 * when it sent a usable one; never retried. */
START_TEST(rate_limited)
{
	static const struct want w[] = {
		{ "it", "{\"status\": 429, \"retry_after\": \"7\"}", 429,
		    "rate_limit_error", "7", "answered HTTP 429: mock error" },
		{ "it", "{\"status\": 429}", 429, "rate_limit_error", NULL,
		    "endpoint 'Mock'" },
		{ "it", "{\"status\": 429, \"retry_after\": "
		    "\"Wed, 21 Oct 2037 07:28:00 GMT\"}", 429,
		    "rate_limit_error", "Wed, 21 Oct 2037 07:28:00 GMT",
		    "HTTP 429" },
		{ "it", "{\"status\": 429, \"retry_after\": \"soon!\"}", 429,
		    "rate_limit_error", NULL, "HTTP 429" },
		{ "ollama", "{\"status\": 429, \"retry_after\": \"3\"}", 429,
		    "rate_limit_error", "3", "endpoint 'Ollama'" },
	};

	start(8, NULL);
	ask_all(w, 5);
	ck_assert_uint_eq(backend_calls(), 5 * IT_NWAYS);
	ck_assert(it_metric(&T, "sluice_http_requests_total{route=\"chat\","
	    "status=\"429\"}") == 10);
	ck_assert(it_metric(&T, "sluice_http_requests_total{route="
	    "\"ollama_chat\",status=\"429\"}") == 10);
	ck_assert(it_metric(&T, "sluice_backend_errors_total{endpoint="
	    "\"Mock\"}") == 16);
	it_stop_clean(&T);
}
END_TEST

/* 503: come back later, after the backend's Retry-After or 1 s. It is
 * still tried three times (WilmerAI's retry of a server's 503). */
START_TEST(unavailable)
{
	static const struct want w[] = {
		{ "it", "{\"status\": 503, \"retry_after\": \"12\"}", 503,
		    "server_error", "12", "answered HTTP 503" },
		{ "it", "{\"status\": 503}", 503, "server_error", "1",
		    "answered HTTP 503: mock error 503" },
	};

	start(8, NULL);
	ask_all(w, 2);
	ck_assert_uint_eq(backend_calls(), 2 * IT_NWAYS * 3);
	it_stop_clean(&T);
}
END_TEST

/* A request the backend refuses for its content is the client's 400,
 * with the backend's own message in each dialect's error shape; 413
 * too. Not retried. */
START_TEST(client_fault)
{
	static const struct want w[] = {
		{ "it", "{\"status\": 400, \"error\": \"This model's maximum "
		    "context length is 4096 tokens\"}", 400,
		    "invalid_request_error", NULL, "endpoint 'Mock' "
		    "(http://127.0.0.1:" },
		{ "it", "{\"status\": 400, \"error\": \"This model's maximum "
		    "context length is 4096 tokens\"}", 400,
		    "invalid_request_error", NULL, "answered HTTP 400: This "
		    "model's maximum context length is 4096 tokens" },
		{ "it", "{\"status\": 413, \"error\": \"prompt too big\"}", 400,
		    "invalid_request_error", NULL, "answered HTTP 413: prompt "
		    "too big" },
		{ "ollama", "{\"status\": 400, \"error\": \"input too long\"}",
		    400, "invalid_request_error", NULL, "answered HTTP 400: "
		    "input too long" },
		{ "claude", "{\"status\": 400, \"error\": \"prompt is too "
		    "long\"}", 400, "invalid_request_error", NULL, "endpoint "
		    "'Claude' (http://127.0.0.1:" },
		{ "claude", "{\"status\": 400, \"error\": \"prompt is too "
		    "long\"}", 400, "invalid_request_error", NULL, "answered "
		    "HTTP 400: prompt is too long" },
		{ "kobold", "{\"status\": 400, \"error\": \"exceeds context\"}",
		    400, "invalid_request_error", NULL, "answered HTTP 400: "
		    "exceeds context" },
	};

	start(8, NULL);
	ask_all(w, 7);
	ck_assert_uint_eq(backend_calls(), 7 * IT_NWAYS);
	it_stop_clean(&T);
}
END_TEST

/* The backend refuses the gateway itself (a wrong key, model or URL in
 * the config): not the client's fault, 502. */
START_TEST(gateway_fault)
{
	static const struct want w[] = {
		{ "it", "{\"status\": 401, \"error\": \"bad key\"}", 502,
		    "server_error", NULL, "answered HTTP 401: bad key" },
		{ "it", "{\"status\": 403}", 502, "server_error", NULL,
		    "answered HTTP 403" },
		{ "ollama", "{\"status\": 404, \"error\": \"model 'm' not "
		    "found\"}", 502, "server_error", NULL, "answered HTTP 404: "
		    "model 'm' not found" },
		{ "it", "{\"status\": 422}", 502, "server_error", NULL,
		    "answered HTTP 422" },
	};

	start(8, NULL);
	ask_all(w, 4);
	it_stop_clean(&T);
}
END_TEST

/* A broken or unreachable backend: 502 after WilmerAI's three tries. */
START_TEST(server_fault)
{
	static const struct want w[] = {
		{ "it", "{\"status\": 500}", 502, "server_error", NULL,
		    "answered HTTP 500: mock error 500" },
		{ "it", "{\"status\": 504, \"retry_after\": \"5\"}", 502,
		    "server_error", NULL, "answered HTTP 504" },
		{ "refused", "{}", 502, "server_error", NULL,
		    "endpoint 'Refused' (http://127.0.0.1:1)" },
	};

	start(12, NULL);
	ask_all(w, 3);
	ck_assert_uint_eq(backend_calls(), 2 * IT_NWAYS * 3);
	it_stop_clean(&T);
}
END_TEST

/* A backend that does not take the connection in time, and a request
 * past its deadline: 504, and only the deadline counts as a
 * cancellation. */
START_TEST(timeouts)
{
	static const struct want connect[] = {
		{ "silent", "{}", 504, "timeout_error", NULL,
		    "endpoint 'Silent' (http://127.0.0.1:" },
	};
	static const struct want deadline[] = {
		{ "it", "{\"hang\": true}", 504, "timeout_error", NULL,
		    "deadline" },
	};

	start(4, "\"request_timeout_s\": 3.5");
	ask_all(connect, 1);
	ck_assert(it_metric(&T, "sluice_cancellations_total{source="
	    "\"deadline\"}") <= 0);
	ask_all(deadline, 1);
	ck_assert(it_metric(&T, "sluice_cancellations_total{source="
	    "\"deadline\"}") == IT_NWAYS);
	it_stop_clean(&T);
}
END_TEST

/* A stream whose head went out (a keep-alive while the backend was
 * slow) carries the same error in its error event: OpenAI's error
 * object then [DONE], Ollama's error line. */
START_TEST(after_head)
{
	static const char *const script = "{\"head_delay_ms\": 700, "
	    "\"status\": 429, \"retry_after\": \"7\"}";
	static const struct want w = { "it", NULL, 429, "rate_limit_error",
	    NULL, "answered HTTP 429" };
	struct want		 one = w;
	struct it_stream	 s[2];
	char			*b[2], *last;
	json_t			*j;

	start(2, "\"stream_heartbeat_s\": 0.2");
	one.w_script = script;
	memset(s, 0, sizeof(s));
	b[0] = body_for(&one, IT_OPENAI_STREAM);
	b[1] = body_for(&one, IT_OLLAMA_STREAM);
	s[0].s_body = b[0];
	s[1].s_body = b[1];
	s[1].s_path = "/api/chat";
	it_streams(&T, s, 2, it_slow(10000), NULL, NULL);
	ck_assert_int_eq(s[0].s_status, 200);
	ck_assert_msg(strstr(s[0].s_out.b_data, "data: {\"error\":{") != NULL &&
	    strstr(s[0].s_out.b_data, "\"type\":\"rate_limit_error\","
	    "\"code\":429}}\n\ndata: [DONE]\n\n") != NULL, "%s",
	    s[0].s_out.b_data);
	ck_assert_int_eq(s[1].s_status, 200);
	ck_assert_uint_gt(s[1].s_out.b_len, 1);
	s[1].s_out.b_data[s[1].s_out.b_len - 1] = '\0';	/* the last \n */
	last = strrchr(s[1].s_out.b_data, '\n');
	j = it_json(last != NULL ? last + 1 : s[1].s_out.b_data);
	ck_assert_msg(strstr(error_message(&one, IT_OLLAMA_STREAM, j),
	    one.w_needle) != NULL, "%s", s[1].s_out.b_data);
	json_decref(j);
	buf_free(&s[0].s_out);
	buf_free(&s[1].s_out);
	free(b[0]);
	free(b[1]);
	it_stop_clean(&T);
}
END_TEST

int
main(void)
{
	const struct it_case	 cases[] = {
		{ "rate_limited", rate_limited },
		{ "unavailable", unavailable },
		{ "client_fault", client_fault },
		{ "gateway_fault", gateway_fault },
		{ "server_fault", server_fault },
		{ "timeouts", timeouts },
		{ "after_head", after_head },
	};

	return it_main(it_suite_cases("errors", cases, sizeof(cases) /
	    sizeof(cases[0]), 60));
}
