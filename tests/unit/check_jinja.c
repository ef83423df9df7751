/* check_jinja.c - jinja2 nodes' rendering (addendum A7): a corpus against python3's jinja2, WilmerAI's cases, errors, limits, cancellation. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/clock.h"
#include "../../common/xmem.h"
#include "../../worker/core/msgs.h"
#include "../../worker/core/node.h"
#include "../../worker/core/vars.h"
#include "../../worker/core/vars_conv.h"
#include "../../worker/core/vars_jinja.h"
#include "../../worker/core/vars_json.h"
#include "../../worker/memory/mem_text.h"
#include "../../worker/tools/jinja.h"
#include "../../worker/tools/jinja_vars.h"
#include "../testmain.h"

/*
 * Every case renders the way a node does: a variables table built from
 * a context of tests/jinja/contexts.json (workflow keys, agent values,
 * the conversation through vars_conversation_node), the renderer of
 * tools/jinja_vars.c set on it, then vars_format. The corpus's expected
 * outputs come from tests/jinja/expect.py, which renders each template
 * with python3's jinja2 directly, building the variables the way
 * WilmerAI does.
 */

#define CORPUS_MIN	150
/* Longer than any limit, within the sandbox's range limit. */
#define ENDLESS		"{% for i in range(99999) %}{% for j in range(99999) " \
			"%}{% endfor %}{% endfor %}"

struct tcase_ {
	char	*c_name;
	char	*c_ctx;
	char	*c_expect;	/* hostile.txt's "! TEXT", or NULL */
	char	*c_tmpl;
};

struct fix {
	struct vars		*f_vs;
	json_t			*f_node;
	struct jinja_node	 f_jn;
	struct wmsgs		 f_msgs;
};

static const char *
src_dir(void)
{
	const char	*s = getenv("SLUICE_SRC");

	return s != NULL ? s : ".";
}

/* The cases of tests/jinja/NAME, in order; *n their count. */
static struct tcase_ *
cases_load(const char *name, size_t *n)
{
	char		 path[1024], line[65536];
	struct tcase_	*v = NULL, *c = NULL;
	struct buf	 b = BUF_INIT;
	FILE		*f;

	snprintf(path, sizeof(path), "%s/tests/jinja/%s", src_dir(), name);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	*n = 0;
	for (;;) {
		bool	 eof = fgets(line, sizeof(line), f) == NULL;

		if ((eof || strncmp(line, "=== ", 4) == 0) && c != NULL) {
			if (b.b_len > 0)
				b.b_len--;	/* the last newline */
			buf_addc(&b, '\0');
			c->c_tmpl = xstrdup(b.b_data);
			buf_reset(&b);
		}
		if (eof)
			break;
		if (strncmp(line, "=== ", 4) == 0) {
			v = xreallocarray(v, *n + 1, sizeof(*v));
			c = &v[(*n)++];
			memset(c, 0, sizeof(*c));
			c->c_name = xstrdup(strtok(line + 4, " \n"));
			c->c_ctx = xstrdup(strtok(NULL, " \n"));
		} else if (c != NULL && c->c_expect == NULL && b.b_len == 0 &&
		    strncmp(line, "! ", 2) == 0) {
			line[strcspn(line, "\n")] = '\0';
			c->c_expect = xstrdup(line + 2);
		} else if (c != NULL)
			buf_adds(&b, line);
	}
	fclose(f);
	buf_free(&b);
	return v;
}

static void
cases_free(struct tcase_ *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		free(v[i].c_name);
		free(v[i].c_ctx);
		free(v[i].c_expect);
		free(v[i].c_tmpl);
	}
	free(v);
}

static json_t *
contexts(void)
{
	char	 path[1024];
	json_t	*j;

	snprintf(path, sizeof(path), "%s/tests/jinja/contexts.json",
	    src_dir());
	ck_assert_ptr_nonnull(j = json_load_file(path, 0, NULL));
	return j;
}

/* One message of a context as the worker holds it. */
static void
msg_add(struct wmsgs *l, json_t *m)
{
	struct wmsg	 w;
	json_t		*imgs = json_object_get(m, "images"), *e;
	char		*calls = NULL;
	size_t		 i;

	memset(&w, 0, sizeof(w));
	w.m_role = (char *)(uintptr_t)json_string_value(json_object_get(m,
	    "role"));
	w.m_content = (char *)(uintptr_t)json_string_value(json_object_get(m,
	    "content"));
	w.m_name = (char *)(uintptr_t)json_string_value(json_object_get(m,
	    "name"));
	w.m_tool_call_id = (char *)(uintptr_t)json_string_value(
	    json_object_get(m, "tool_call_id"));
	if (json_object_get(m, "tool_calls") != NULL)
		calls = json_dumps(json_object_get(m, "tool_calls"), 0);
	w.m_tool_calls = calls;
	w.m_nimages = json_array_size(imgs);
	w.m_images = xcalloc(w.m_nimages + 1, sizeof(char *));
	json_array_foreach(imgs, i, e)
		w.m_images[i] = (char *)(uintptr_t)json_string_value(e);
	wmsgs_add_copy(l, &w);
	free(w.m_images);
	free(calls);
}

/* A node's table for context ctx, rendering with node {title, prompt:
 * tmpl} and limits lim (NULL: defaults). */
static void
fix_init(struct fix *f, json_t *ctx, const char *tmpl,
    const struct jinja_limits *lim)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	memset(f, 0, sizeof(*f));
	f->f_vs = vars_new();
	f->f_node = json_pack("{s:s, s:s, s:b}", "title", "Case", "prompt",
	    tmpl, "jinja2", 1);
	f->f_jn = (struct jinja_node){ f->f_node, { -1, 0, NULL, NULL }, lim };
	vars_workflow(f->f_vs, json_object_get(ctx, "workflow"));
	json_object_foreach(json_object_get(ctx, "agents"), k, v)
		vars_set(f->f_vs, k, json_string_value(v));
	vars_set_renderer(f->f_vs, &jinja_vars_ops, &f->f_jn);
	json_array_foreach(json_object_get(ctx, "messages"), i, v)
		msg_add(&f->f_msgs, v);
	vars_conversation_node(f->f_vs, &f->f_msgs, NULL);
}

static void
fix_free(struct fix *f)
{
	vars_free(f->f_vs);
	json_decref(f->f_node);
	wmsgs_free(&f->f_msgs);
}

/* tmpl rendered for context ctx; *err the render's error or NULL. */
static char *
render(json_t *ctx, const char *tmpl, char **err)
{
	struct fix	 f;
	char		*s;

	fix_init(&f, ctx, tmpl, NULL);
	s = vars_format(f.f_vs, tmpl);
	*err = vars_render_error(f.f_vs) != NULL ?
	    xstrdup(vars_render_error(f.f_vs)) : NULL;
	fix_free(&f);
	return s;
}

/* expect.py's answers, one JSON object a line. */
static json_t *
expected(void)
{
	char		 cmd[2048], line[1 << 16];
	struct buf	 b = BUF_INIT;
	json_t		*all = json_array();
	FILE		*p;

	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/jinja/expect.py' "
	    "'%s/tests/jinja'", src_dir(), src_dir());
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	while (fgets(line, sizeof(line), p) != NULL) {
		buf_adds(&b, line);
		if (b.b_len > 0 && b.b_data[b.b_len - 1] == '\n') {
			json_array_append_new(all, json_loads(b.b_data, 0,
			    NULL));
			buf_reset(&b);
		}
	}
	ck_assert_int_eq(pclose(p), 0);
	buf_free(&b);
	return all;
}

/* Each corpus template gives what python3's jinja2 gives, or fails
 * with the same exception. */
START_TEST(a7_corpus)
{
	json_t		*ctxs = contexts(), *want = expected(), *w;
	struct tcase_	*v;
	size_t		 n, i;
	char		*s, *err;
	const char	*exc;

	v = cases_load("corpus.txt", &n);
	ck_assert_uint_ge(n, CORPUS_MIN);
	ck_assert_uint_eq(json_array_size(want), n);
	for (i = 0; i < n; i++) {
		w = json_array_get(want, i);
		ck_assert_str_eq(json_string_value(json_object_get(w, "name")),
		    v[i].c_name);
		s = render(json_object_get(ctxs, v[i].c_ctx), v[i].c_tmpl,
		    &err);
		exc = json_string_value(json_object_get(w, "error"));
		if (exc != NULL) {
			ck_assert_msg(err != NULL && strstr(err, exc) != NULL,
			    "%s: want %s, got %s", v[i].c_name, exc,
			    err != NULL ? err : s);
			ck_assert_str_eq(s, "");
		} else {
			ck_assert_msg(err == NULL, "%s: %s", v[i].c_name, err);
			ck_assert_msg(strcmp(s, json_string_value(
			    json_object_get(w, "ok"))) == 0,
			    "%s:\n got [%s]\nwant [%s]", v[i].c_name, s,
			    json_string_value(json_object_get(w, "ok")));
		}
		free(s);
		free(err);
	}
	cases_free(v, n);
	json_decref(want);
	json_decref(ctxs);
	jinja_shutdown();
}
END_TEST

/* err holds one of the " || "-separated alternatives of expect. */
static bool
one_of(const char *err, const char *expect)
{
	const char	*p = expect, *e;
	char		 one[256];

	for (;;) {
		e = strstr(p, " || ");
		snprintf(one, sizeof(one), "%.*s", (int)(e != NULL ?
		    (size_t)(e - p) : strlen(p)), p);
		if (strstr(err, one) != NULL)
			return true;
		if (e == NULL)
			return false;
		p = e + 4;
	}
}

/* Each hostile template fails with its message, within its limit. */
START_TEST(a7_hostile)
{
	json_t		*ctxs = contexts();
	struct tcase_	*v;
	size_t		 n, i;
	uint64_t	 t0;
	char		*s, *err;

	v = cases_load("hostile.txt", &n);
	ck_assert_uint_ge(n, 10);
	for (i = 0; i < n; i++) {
		t0 = clock_mono_ms();
		s = render(json_object_get(ctxs, v[i].c_ctx), v[i].c_tmpl,
		    &err);
		ck_assert_msg(err != NULL && one_of(err, v[i].c_expect),
		    "%s: want %s, got %s", v[i].c_name, v[i].c_expect,
		    err != NULL ? err : s);
		ck_assert_str_eq(s, "");
		ck_assert_msg(clock_mono_ms() - t0 < JINJA_TIMEOUT_MS + 3000,
		    "%s took %llu ms", v[i].c_name,
		    (unsigned long long)(clock_mono_ms() - t0));
		free(s);
		free(err);
	}
	cases_free(v, n);
	json_decref(ctxs);
	jinja_shutdown();
}
END_TEST

/* WilmerAI's test_workflow_variable_manager cases. */
START_TEST(a7_wilmer_cases)
{
	json_t	*ctx = json_pack("{s:{s:s}, s:{s:s, s:s, s:s}, s:[{s:s, s:s}]}",
		    "workflow", "user_name", "Tester", "agents", "agent1Output",
		    "SUCCESS", "agent2Input", "Initial Data From Parent",
		    "agent3Output", "NO_TITLE_FOUND", "messages", "role", "user",
		    "content", "Hi");
	char	*s, *err;

	s = render(ctx, "Summary for {{ user_name }}:\n{% for msg in "
	    "messages %}- {{ msg.role }}\n{% endfor %}", &err);
	ck_assert_str_eq(s, "Summary for Tester:\n- user\n");
	free(s);
	s = render(ctx, "{% if agent1Output == 'SUCCESS' %}Data: {{ "
	    "agent2Input }}{% else %}Error{% endif %}", &err);
	ck_assert_str_eq(s, "Data: Initial Data From Parent");
	free(s);
	s = render(ctx, "{% if agent3Output != 'NO_TITLE_FOUND' %}Title: {{ "
	    "agent3Output }}{% else %}No Title Provided{% endif %}", &err);
	ck_assert_str_eq(s, "No Title Provided");
	free(s);
	ck_assert_ptr_null(err);
	json_decref(ctx);
	jinja_shutdown();
}
END_TEST

/* The n-messages and token-limit variables (and the others of the
 * conversation) are usable from Jinja, with what {name} gives. */
START_TEST(a7_conversation_variables)
{
	static const char *names[] = { "chat_user_prompt_n_messages",
	    "templated_user_prompt_n_messages",
	    "chat_user_prompt_estimated_token_limit",
	    "chat_user_prompt_min_n_max_tokens",
	    "chat_user_prompt_last_two", "chat_system_prompt",
	    "chat_user_prompt_without_system", NULL };
	json_t		*ctxs = contexts();
	struct fix	 f;
	char		 jt[128], ft[128];
	char		*a, *b;
	size_t		 i;

	fix_init(&f, json_object_get(ctxs, "chat"), "", NULL);
	json_object_set_new(f.f_node, "nMessagesToIncludeInVariable",
	    json_integer(2));
	vars_conversation_node(f.f_vs, &f.f_msgs, &(struct vars_conv){
	    .vc_node = f.f_node });
	for (i = 0; names[i] != NULL; i++) {
		snprintf(jt, sizeof(jt), "{{ %s }}", names[i]);
		snprintf(ft, sizeof(ft), "{%s}", names[i]);
		a = vars_format(f.f_vs, jt);
		b = vars_format_plain(f.f_vs, ft);
		ck_assert_str_eq(a, b);
		ck_assert_msg(*a != '\0', "%s", names[i]);
		free(a);
		free(b);
	}
	a = vars_format(f.f_vs, "{{ chat_user_prompt_n_messages }}");
	ck_assert_str_eq(a, "Hi!\nHow can I help?\nTell me about {braces} "
	    "and   spaces  ");
	free(a);
	ck_assert_ptr_null(vars_render_error(f.f_vs));
	fix_free(&f);
	json_decref(ctxs);
	jinja_shutdown();
}
END_TEST

/* time_context_summary only when named; numbers never through Jinja. */
START_TEST(a7_lazy_and_early)
{
	json_t		*ctxs = contexts(), *ctx, *o;
	struct fix	 f;
	char		*a;

	fix_init(&f, json_object_get(ctxs, "empty"), "", NULL);
	vars_discussion(f.f_vs, "d1", "[Time Context: now]");
	a = vars_format(f.f_vs, "{{ time_context_summary }}|{{ "
	    "Discussion_Id }}");
	ck_assert_str_eq(a, "[Time Context: now]|d1");
	free(a);
	ctx = vars_jinja_context(f.f_vs, "{{ Discussion_Id }}");
	ck_assert_str_eq(json_string_value(json_object_get(ctx,
	    "time_context_summary")), "");
	json_decref(ctx);
	vars_set(f.f_vs, "k", "7");
	o = json_pack("{s:s, s:s}", "max", "{k}", "jinja", "{{ 8 }}");
	ck_assert_int_eq(field_long(f.f_vs, o, "max", 1), 7);
	ck_assert_int_eq(field_long(f.f_vs, o, "jinja", 1), 1);
	ck_assert_ptr_null(vars_render_error(f.f_vs));
	json_decref(o);
	fix_free(&f);
	json_decref(ctxs);
	jinja_shutdown();
}
END_TEST

/* Text put in for a memory placeholder ([TextChunk], ...) stays text
 * in a Jinja2 template, and in a {name} one: its braces go in as
 * sentinels and come back as braces. */
START_TEST(a7_memory_placeholders)
{
	json_t		*ctxs = contexts();
	struct fix	 f;
	char		*t, *s;

	fix_init(&f, json_object_get(ctxs, "chat"), "", NULL);
	t = memory_fill("Chunk: [TextChunk] by {{ user_name }}",
	    "[TextChunk]", "a {{ b }} {% if %} {c}", (char *)NULL);
	s = vars_format(f.f_vs, t);
	ck_assert_str_eq(s, "Chunk: a {{ b }} {% if %} {c} by Tester");
	ck_assert_ptr_null(vars_render_error(f.f_vs));
	free(s);
	free(t);
	vars_set_renderer(f.f_vs, NULL, NULL);
	t = memory_fill("Chunk: [TextChunk] by {user_name}", "[TextChunk]",
	    "a {{ b }} {c}", (char *)NULL);
	s = vars_format(f.f_vs, t);
	ck_assert_str_eq(s, "Chunk: a {{ b }} {c} by Tester");
	free(s);
	free(t);
	fix_free(&f);
	json_decref(ctxs);
	jinja_shutdown();
}
END_TEST

/* A failure names the template (field and node title), its line and
 * its cause; it sticks for the rest of the node; clearing the renderer
 * forgets it. */
START_TEST(a7_error_message)
{
	json_t		*ctxs = contexts();
	struct fix	 f;
	char		*s;

	fix_init(&f, json_object_get(ctxs, "chat"), "", NULL);
	json_object_set_new(f.f_node, "prompt", json_string("ok\n{{ x.y }}"));
	s = vars_format(f.f_vs, "ok\n{{ x.y }}");
	ck_assert_str_eq(s, "");
	free(s);
	ck_assert_str_eq(vars_render_error(f.f_vs), "template 'prompt' of "
	    "node 'Case', line 2: UndefinedError: 'x' is undefined");
	s = vars_format(f.f_vs, "{{ user_name }}");
	ck_assert_str_eq(s, "");	/* sticky */
	free(s);
	vars_set_renderer(f.f_vs, &jinja_vars_ops, &f.f_jn);
	ck_assert_ptr_null(vars_render_error(f.f_vs));
	json_object_set_new(f.f_node, "strings", json_pack("[s,s]", "a",
	    "x\n\n{% if %}"));
	json_object_del(f.f_node, "title");
	s = vars_format(f.f_vs, "x\n\n{% if %}");
	free(s);
	ck_assert_str_eq(vars_render_error(f.f_vs), "template 'strings[1]', "
	    "line 3: TemplateSyntaxError: Expected an expression, got 'end "
	    "of statement block'");
	vars_set_renderer(f.f_vs, &jinja_vars_ops, &f.f_jn);
	s = vars_format(f.f_vs, "{{ 1 / 0 }}");
	free(s);
	ck_assert_str_eq(vars_render_error(f.f_vs), "template a field, line "
	    "1: ZeroDivisionError: division by zero");
	fix_free(&f);
	json_decref(ctxs);
	jinja_shutdown();
}
END_TEST

/* A render past the time limit kills the helper; the next render
 * starts another, which works. The helper is kept between renders. */
START_TEST(a7_timeout_restarts)
{
	struct jinja_limits	 lim = { 300, 0, 0 };
	struct buf		 out = BUF_INIT, err = BUF_INIT;
	json_t			*ctx = json_object();
	pid_t			 p1, p2;
	long			 line;
	uint64_t		 t0;

	ck_assert_int_eq(jinja_render("{{ 1 + 1 }}", ctx, &lim, NULL, &out,
	    &err, &line), JINJA_OK);
	ck_assert_str_eq(out.b_data, "2");
	p1 = jinja_helper_pid();
	ck_assert_int_gt(p1, 0);
	buf_reset(&out);
	ck_assert_int_eq(jinja_render("{{ 'kept' }}", ctx, &lim, NULL, &out,
	    &err, &line), JINJA_OK);
	ck_assert_int_eq(jinja_helper_pid(), p1);
	t0 = clock_mono_ms();
	ck_assert_int_eq(jinja_render(ENDLESS, ctx, &lim, NULL, &out, &err,
	    &line), JINJA_ERROR);
	ck_assert_uint_lt(clock_mono_ms() - t0, 2000);
	ck_assert_str_eq(err.b_data, "the render took longer than the limit "
	    "of 300 ms (the jinja2 helper was stopped)");
	ck_assert_int_eq(jinja_helper_pid(), -1);
	ck_assert_int_eq(kill(p1, 0), -1);
	buf_reset(&out);
	ck_assert_int_eq(jinja_render("{{ 'again' }}", ctx, &lim, NULL, &out,
	    &err, &line), JINJA_OK);
	ck_assert_str_eq(out.b_data, "again");
	p2 = jinja_helper_pid();
	ck_assert_int_gt(p2, 0);
	ck_assert_int_ne(p2, p1);
	jinja_shutdown();
	buf_free(&out);
	buf_free(&err);
	json_decref(ctx);
}
END_TEST

static int
wake_says_stop(void *arg, bool readable)
{
	(void)arg;
	return readable ? 1 : 0;
}

/* The request's wake fd stops a render at once: cancelled, helper
 * gone; through the vars table it is a stop, not an error. */
START_TEST(a7_cancel)
{
	struct fix	 f;
	json_t		*ctxs = contexts();
	int		 pfd[2];
	uint64_t	 t0;
	char		*s;

	ck_assert_int_eq(pipe(pfd), 0);
	fix_init(&f, json_object_get(ctxs, "empty"), "", NULL);
	s = vars_format(f.f_vs, "{{ 'warm' }}");
	ck_assert_str_eq(s, "warm");
	free(s);
	f.f_jn.jn_hooks = (struct transport_hooks){ pfd[0], 50,
	    wake_says_stop, NULL };
	ck_assert_int_eq(write(pfd[1], "x", 1), 1);
	t0 = clock_mono_ms();
	s = vars_format(f.f_vs, ENDLESS);
	ck_assert_uint_lt(clock_mono_ms() - t0, 1000);
	ck_assert_str_eq(s, "");
	free(s);
	ck_assert(vars_render_stopped(f.f_vs));
	ck_assert_ptr_null(vars_render_error(f.f_vs));
	ck_assert_int_eq(jinja_helper_pid(), -1);
	close(pfd[0]);
	close(pfd[1]);
	fix_free(&f);
	json_decref(ctxs);
	jinja_shutdown();
}
END_TEST

/* Without the jinja2 module the render fails naming the package. */
START_TEST(a7_missing_module)
{
	char		 dir[] = "/tmp/check_jinja.XXXXXX", path[256], *py;
	struct buf	 out = BUF_INIT, err = BUF_INIT;
	json_t		*ctx = json_object();
	FILE		*f, *w;
	long		 line;

	ck_assert_ptr_nonnull(w = popen("python3 -c 'import sys; "
	    "print(sys.executable)'", "r"));
	py = xcalloc(1, 1024);
	ck_assert_ptr_nonnull(fgets(py, 1024, w));
	py[strcspn(py, "\n")] = '\0';
	pclose(w);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/python3", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	/* python3 -I -c SCRIPT MEM, with jinja2 made unimportable */
	fprintf(f, "#!/bin/sh\nexec '%s' -I -c 'import sys; "
	    "sys.modules[\"jinja2\"] = None; s = sys.argv[1]; "
	    "sys.argv = sys.argv[1:]; exec(compile(s, \"h\", \"exec\"))' "
	    "\"$3\" \"$4\"\n", py);
	fclose(f);
	chmod(path, 0755);
	setenv("PATH", dir, 1);
	ck_assert_int_eq(jinja_render("x", ctx, NULL, NULL, &out, &err,
	    &line), JINJA_ERROR);
	ck_assert_msg(strstr(err.b_data, "python3-jinja2") != NULL, "%s",
	    err.b_data);
	ck_assert_int_eq(jinja_helper_pid(), -1);
	unlink(path);
	rmdir(dir);
	free(py);
	buf_free(&out);
	buf_free(&err);
	json_decref(ctx);
}
END_TEST

static Suite *
jinja_suite(void)
{
	Suite	*s = suite_create("jinja");

	test_case(s, "a7_corpus", a7_corpus, 120);
	test_case(s, "a7_hostile", a7_hostile, 120);
	test_case(s, "a7_wilmer_cases", a7_wilmer_cases, 30);
	test_case(s, "a7_conversation_variables", a7_conversation_variables,
	    30);
	test_case(s, "a7_lazy_and_early", a7_lazy_and_early, 30);
	test_case(s, "a7_error_message", a7_error_message, 30);
	test_case(s, "a7_memory_placeholders", a7_memory_placeholders, 30);
	test_case(s, "a7_timeout_restarts", a7_timeout_restarts, 30);
	test_case(s, "a7_cancel", a7_cancel, 30);
	test_case(s, "a7_missing_module", a7_missing_module, 30);
	return s;
}

int
main(void)
{
	return check_main(jinja_suite());
}
