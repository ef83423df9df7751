/* check_security.c - integration: traversal, backend URLs, redirects, tool arguments, secrets (strace watches). */
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../testmain.h"
#include "harness.h"

#define SECRET_TEXT	"TOPSECRET-outside-the-config-folder"
#define MAXPIDS		16

static struct it	 T;
static char		 Out[64];	/* a folder outside the config folder */

/* ---- files ----------------------------------------------------------- */

static void
write_at(const char *dir, const char *rel, const char *text)
{
	char	 path[512], *slash;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		(void)mkdir(path, 0755);
		*slash = '/';
	}
	ck_assert_msg((f = fopen(path, "w")) != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* The whole file (binary safe) into b; false when it cannot be read. */
static bool
slurp(const char *path, struct buf *b)
{
	char	 tmp[8192];
	ssize_t	 n;
	int	 fd;

	buf_reset(b);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		buf_add(b, tmp, (size_t)n);
	close(fd);
	buf_adds(b, "");
	return n == 0;
}

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* The outside folder: a secret file, a workflow, nothing else. */
static void
outside_make(void)
{
	snprintf(Out, sizeof(Out), "/tmp/sluice-out.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(Out));
	write_at(Out, "secret.txt", SECRET_TEXT "\n");
	write_at(Out, "wf/_DefaultWorkflow.json", "{\"nodes\": [{\"type\": "
	    "\"StaticResponse\", \"content\": \"PWNED-WORKFLOW\"}]}\n");
}

static void
symlink_at(const char *target, const char *rel)
{
	char	 path[512];

	snprintf(path, sizeof(path), "%s/%s", T.it_dir, rel);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* Shared workflows the model field selects: "getfile" and "savefile"
 * take their filepath from the user's message, "pytool" passes it to a
 * Python module as an argument. The user may touch files under
 * <dir>/files only; two links there lead outside. */
static void
security_files(void)
{
	char	 text[1024], target[128];

	snprintf(text, sizeof(text), "{\"customWorkflowOverride\": true, "
	    "\"customWorkflow\": \"Main\", \"chatCompleteAddUserAssistant\": "
	    "false, \"chatCompletionAddMissingAssistantGenerator\": false, "
	    "\"allowSharedWorkflows\": true, "
	    "\"endpointConfigsSubDirectory\": \"it\", "
	    "\"connectTimeoutInSeconds\": 2, \"sluiceFileDirectories\": "
	    "[\"%s/files\"]}\n", T.it_dir);
	it_file(&T, "Users/it.json", text);
	it_file(&T, "files/inside.txt", "INSIDE-OK\n");
	it_file(&T, "Workflows/_shared/getfile/_DefaultWorkflow.json",
	    "{\"nodes\": [{\"type\": \"GetCustomFile\", \"filepath\": "
	    "\"{chat_user_prompt_last_one}\"}, {\"type\": \"StaticResponse\","
	    " \"content\": \"[{agent1Output}]\"}]}\n");
	it_file(&T, "Workflows/_shared/savefile/_DefaultWorkflow.json",
	    "{\"nodes\": [{\"type\": \"SaveCustomFile\", \"filepath\": "
	    "\"{chat_user_prompt_last_one}\", \"content\": \"PWNED-SAVE\"}, "
	    "{\"type\": \"StaticResponse\", \"content\": "
	    "\"[{agent1Output}]\"}]}\n");
	snprintf(text, sizeof(text), "{\"nodes\": [{\"type\": \"PythonModule\","
	    " \"module_path\": \"%s/tools/echo.py\", \"args\": "
	    "[\"{chat_user_prompt_last_one}\"], \"kwargs\": {\"k\": "
	    "\"{chat_user_prompt_last_one}\"}}, {\"type\": \"StaticResponse\","
	    " \"content\": \"{agent1Output}\"}]}\n", T.it_dir);
	it_file(&T, "Workflows/_shared/pytool/_DefaultWorkflow.json", text);
	it_file(&T, "tools/echo.py", "import json\n"
	    "def Invoke(*args, **kwargs):\n"
	    "    return json.dumps({'args': list(args), 'kwargs': kwargs})\n");
	snprintf(target, sizeof(target), "%s/secret.txt", Out);
	symlink_at(target, "files/link-file");
	symlink_at(Out, "files/link-dir");
	snprintf(target, sizeof(target), "%s/wf", Out);
	symlink_at(target, "Workflows/_shared/outlink");
}

#define KEY_CLIENT	"sk-client-4f8a1c9e2b7d"
#define KEY_ADMIN	"sk-admin-0b6d2e84c5a1"
#define KEY_BACKEND	"sk-backend-5c8e1f27a9d3"
#define KEY_WRONG	"sk-wrong-9d4c3b2a7e6f"
#define KEY_URL		"sk-url-3e7b9a1d6c2f"	/* a password in a URL */

/* Start the mock and the gateway with settings (the body of
 * sluice.json). With backend_key, the Mock endpoint has that apiKey and
 * a URL with KEY_URL as its password. */
static void
start(const char *settings, const char *backend_key)
{
	const char	*path = getenv("PATH");
	char		 ep[512], env[2048];

	memset(&T, 0, sizeof(T));
	outside_make();
	it_mock_start(&T);
	it_config(&T, settings, NULL);
	security_files();
	if (backend_key != NULL) {
		snprintf(ep, sizeof(ep), "{\"endpoint\": \"http://sluice:"
		    KEY_URL "@127.0.0.1:%d\", "
		    "\"apiTypeConfigFileName\": \"Open-AI-API\", "
		    "\"modelNameToSendToAPI\": \"mock-model\", \"apiKey\": "
		    "\"%s\", \"promptTemplate\": null, \"maxContextTokenSize\":"
		    " 4096}\n", T.it_mock_port, backend_key);
		it_file(&T, "Endpoints/it/Mock.json", ep);
	}
	/* the system's python3 before any wrapper (a pyenv shim is a shell
	 * script that takes ~0.7 s a start, more under strace) */
	snprintf(env, sizeof(env), "PATH=/usr/local/bin:/usr/bin:/bin:%s",
	    path != NULL ? path : "");
	it_gateway_start(&T, env);
	it_wait_idle(&T, 2);
}

static void
stop(void)
{
	it_stop_clean(&T);
	nftw(Out, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

/* ---- strace ---------------------------------------------------------- */

struct trace {
	pid_t	 tr_pid;		/* 0: not tracing */
	char	 tr_out[300];		/* the trace */
	char	 tr_err[300];		/* strace's own messages */
};

static void
trace_exec(struct trace *tr, pid_t *pids, size_t n)
{
	char	*argv[8 + 2 * MAXPIDS], num[MAXPIDS][16];
	size_t	 i, k = 0;
	int	 fd;

	argv[k++] = "strace";
	argv[k++] = "-f";
	argv[k++] = "-s";
	argv[k++] = "1024";
	argv[k++] = "-e";
	argv[k++] = "trace=open,openat,openat2,creat,execve,execveat";
	argv[k++] = "-o";
	argv[k++] = tr->tr_out;
	for (i = 0; i < n; i++) {
		snprintf(num[i], sizeof(num[i]), "%d", (int)pids[i]);
		argv[k++] = "-p";
		argv[k++] = num[i];
	}
	argv[k] = NULL;
	if ((fd = open(tr->tr_err, O_WRONLY | O_CREAT | O_TRUNC, 0644)) != -1)
		dup2(fd, 2);
	execvp("strace", argv);
	_exit(127);
}

/* Attach strace to the gateway and its workers; -f follows whatever
 * they start from now on (workers, python3). False, with the reason
 * printed, when strace is missing or may not attach. */
static bool
trace_start(struct trace *tr)
{
	pid_t		 pids[MAXPIDS];
	size_t		 n;
	struct buf	 e = BUF_INIT;
	uint64_t	 end = it_now() + 5000;
	int		 st, seen = 0;
	const char	*p;

	memset(tr, 0, sizeof(*tr));
	pids[0] = T.it_gw;
	n = 1 + it_worker_pids(&T, pids + 1, MAXPIDS - 1);
	snprintf(tr->tr_out, sizeof(tr->tr_out), "%s/strace.out", T.it_dir);
	snprintf(tr->tr_err, sizeof(tr->tr_err), "%s/strace.err", T.it_dir);
	if ((tr->tr_pid = fork()) == 0)
		trace_exec(tr, pids, n);
	ck_assert_int_gt(tr->tr_pid, 0);
	while (seen < (int)n && it_now() < end) {
		if (waitpid(tr->tr_pid, &st, WNOHANG) == tr->tr_pid) {
			slurp(tr->tr_err, &e);
			fprintf(stderr, "check_security: strace %s; the open "
			    "and exec probes are skipped: %.200s\n",
			    WEXITSTATUS(st) == 127 ? "not found" :
			    "cannot trace here", e.b_data);
			tr->tr_pid = 0;
			buf_free(&e);
			return false;
		}
		it_sleep(20);
		slurp(tr->tr_err, &e);
		for (seen = 0, p = e.b_data; (p = strstr(p, " attached")) !=
		    NULL; p++)
			seen++;
	}
	buf_free(&e);
	ck_assert_msg(seen >= (int)n, "strace attached to %d of %zu", seen, n);
	return true;
}

/* Detach (ASan's leak check at the gateway's exit needs ptrace) and
 * return the trace in b. */
static void
trace_stop(struct trace *tr, struct buf *b)
{
	int	 st;

	buf_reset(b);
	buf_adds(b, "");
	if (tr->tr_pid == 0)
		return;
	kill(tr->tr_pid, SIGTERM);
	ck_assert_int_eq(waitpid(tr->tr_pid, &st, 0), tr->tr_pid);
	tr->tr_pid = 0;
	ck_assert(slurp(tr->tr_out, b));
}

/* The first traced call (open, creat or exec) that names something
 * holding needle, as a line of the trace (caller frees), or NULL. */
static char *
trace_touches(const char *trace, const char *needle)
{
	const char	*p, *bol, *eol, *paren;

	for (p = trace; (p = strstr(p, needle)) != NULL; p = eol) {
		for (bol = p; bol > trace && bol[-1] != '\n'; bol--)
			;
		if ((eol = strchr(p, '\n')) == NULL)
			eol = p + strlen(p);
		if ((paren = strchr(bol, '(')) != NULL && paren < p)
			return strndup(bol, (size_t)(eol - bol));
	}
	return NULL;
}

static void
trace_refute(const char *trace, const char *needle)
{
	char	*line = trace_touches(trace, needle);

	ck_assert_msg(line == NULL, "touched %s: %s", needle, line);
}

/* The trace works: it shows a call naming needle. */
static void
trace_confirm(const char *trace, const char *needle)
{
	char	*line = trace_touches(trace, needle);

	ck_assert_msg(line != NULL, "no call with %s in the trace", needle);
	free(line);
}

/* ---- requests -------------------------------------------------------- */

/* tmpl with every '@' replaced by the outside folder. */
static char *
outside(const char *tmpl)
{
	struct buf	 b = BUF_INIT;

	for (; *tmpl != '\0'; tmpl++)
		if (*tmpl == '@')
			buf_adds(&b, Out);
		else
			buf_addc(&b, *tmpl);
	buf_adds(&b, "");
	return buf_take(&b);
}

/* One request to url with extra header lines (NULL-terminated list, or
 * NULL) and a body (NULL: none). Fails the test on transport errors. */
static void
request(const char *method, const char *url, const char *const *hdrs,
    const char *body, struct it_resp *r)
{
	ck_assert_msg(it_request_url(method, url, hdrs, body, r) == 0,
	    "%s %s: transport error", method, url);
}

/* A gateway URL for path. Caller frees. */
static char *
gw_url(const char *path)
{
	char	*u;

	ck_assert_int_gt(asprintf(&u, "http://127.0.0.1:%d%s", T.it_port,
	    path), 0);
	return u;
}

/* POST a chat completion (non-streamed) naming model, with one user
 * message; the answer in r. */
static void
chat(const char *model, const char *content, struct it_resp *r)
{
	json_t	*b = json_pack("{s:s,s:[{s:s,s:s}]}", "model", model,
		    "messages", "role", "user", "content", content);
	char	*s = json_dumps(b, 0), *u = gw_url("/v1/chat/completions");

	request("POST", u, NULL, s, r);
	free(u);
	free(s);
	json_decref(b);
}

/* choices[0].message.content of an OpenAI answer. Caller frees. */
static char *
answer_text(const struct it_resp *r)
{
	json_t		*j = it_json(r->r_body.b_data);
	const char	*c = json_string_value(json_object_get(json_object_get(
			    json_array_get(json_object_get(j, "choices"), 0),
			    "message"), "content"));
	char		*s = strdup(c != NULL ? c : "");

	json_decref(j);
	return s;
}

/* ---- traversal ------------------------------------------------------- */

struct fprobe {
	const char	*fp_model;	/* '@': the outside folder */
	const char	*fp_content;	/* the same */
	long		 fp_status;
	const char	*fp_want;	/* in the answer */
};

/* Workflow names come in the model field, file names (here) in the
 * user's message. "~" is $HOME; relative file names start in <dir>/files,
 * three levels below "/". */
static const struct fprobe fprobes[] = {
	{ "../../../../etc/passwd", "hi", 400, "are not names" },
	{ "it:../../x", "hi", 400, "are not names" },
	{ "..%2f..%2f..%2f..%2fetc%2fpasswd", "hi", 200, "quick brown fox" },
	{ "%2e%2e%2f%2e%2e%2f%2e%2e@%2fwf", "hi", 200, "quick brown fox" },
	{ "/etc/passwd", "hi", 200, "quick brown fox" },
	{ "@/wf", "hi", 200, "quick brown fox" },
	{ "it:@/wf", "hi", 200, "quick brown fox" },
	{ "getfile", "inside.txt", 200, "[INSIDE-OK" },
	{ "getfile", "../../..@/secret.txt", 403, "leads outside" },
	{ "getfile", "%2e%2e%2f%2e%2e%2f%2e%2e@%2fsecret.txt", 200,
	    "did not exist" },
	{ "getfile", "@/secret.txt", 403, "leads outside" },
	{ "getfile", "~/../../../..@/secret.txt", 403, "leads outside" },
	{ "getfile", "nope/../../../..@/secret.txt", 200, "did not exist" },
	{ "getfile", "link-file", 403, "leads outside" },
	{ "getfile", "link-dir/secret.txt", 403, "leads outside" },
	{ "savefile", "@/new.txt", 403, "leads outside" },
	{ "savefile", "../../..@/new.txt", 403, "leads outside" },
	{ "savefile", "nope/../../../..@/new.txt", 400, "goes up" },
	{ "savefile", "link-dir/new.txt", 403, "leads outside" },
	{ "savefile", "link-file", 403, "symbolic link" },
};

static void
fprobe_run(const struct fprobe *fp)
{
	const char	*home = getenv("HOME");
	struct it_resp	 r;
	char		*model, *content;

	if (fp->fp_content[0] == '~' && (home == NULL || home[0] != '/'))
		return;		/* "~" is only $HOME when that is a path */
	model = outside(fp->fp_model);
	content = outside(fp->fp_content);

	chat(model, content, &r);
	ck_assert_msg(r.r_status == fp->fp_status &&
	    strstr(r.r_body.b_data, fp->fp_want) != NULL, "model '%s', "
	    "message '%s': %ld %.300s", model, content, r.r_status,
	    r.r_body.b_data);
	ck_assert_ptr_null(strstr(r.r_body.b_data, "TOPSECRET"));
	ck_assert_ptr_null(strstr(r.r_body.b_data, "PWNED"));
	it_resp_free(&r);
	free(model);
	free(content);
}

/* NUL in a name: JSON refuses "\u0000" (jansson without
 * JSON_ALLOW_NUL), and a raw NUL in the target is no HTTP. */
static void
nul_probes(void)
{
	static const char *const bodies[] = {
		"{\"model\":\"get\\u0000file\",\"messages\":[{\"role\":"
		    "\"user\",\"content\":\"inside.txt\"}]}",
		"{\"model\":\"getfile\",\"messages\":[{\"role\":\"user\","
		    "\"content\":\"inside.txt\\u0000/../../../etc/passwd\"}]}",
	};
	static const char raw[] = "GET /health\0/../../etc/passwd HTTP/1.1\r\n"
	    "Host: 127.0.0.1\r\n\r\n";
	struct it_resp	 r;
	struct buf	 b = BUF_INIT;
	char		*u = gw_url("/v1/chat/completions");
	size_t		 i;

	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		request("POST", u, NULL, bodies[i], &r);
		ck_assert_int_eq(r.r_status, 400);
		ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "u0000"));
		it_resp_free(&r);
	}
	it_raw(&T, raw, sizeof(raw) - 1, &b, 2000);
	ck_assert_msg(strncmp(b.b_data, "HTTP/1.1 400 ", 13) == 0, "%.200s",
	    b.b_data);
	buf_free(&b);
	free(u);
}

/* The gateway serves no files: dot segments in the target are just
 * unknown routes. */
static void
url_probes(void)
{
	static const char *const paths[] = {
		"/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
		"/v1/models/..%2f..%2f..%2fetc%2fpasswd",
		"/api/tags/../../../../etc/passwd",
	};
	struct buf	 b = BUF_INIT;
	char		*req;
	size_t		 i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		ck_assert_int_gt(asprintf(&req, "GET %s HTTP/1.1\r\nHost: "
		    "127.0.0.1:%d\r\nConnection: close\r\n\r\n", paths[i],
		    T.it_port), 0);
		buf_reset(&b);
		it_raw(&T, req, strlen(req), &b, 2000);
		ck_assert_msg(strncmp(b.b_data, "HTTP/1.1 404 ", 13) == 0,
		    "%s: %.200s", paths[i], b.b_data);
		ck_assert_ptr_null(strstr(b.b_data, "root:"));
		free(req);
	}
	buf_free(&b);
}

/* What the outside folder must still hold: the secret, unchanged, and
 * nothing new. */
static void
outside_intact(void)
{
	struct buf	 b = BUF_INIT;
	char		 path[128];
	DIR		*d = opendir(Out);
	struct dirent	*de;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		ck_assert_msg(strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, "secret.txt") == 0 ||
		    strcmp(de->d_name, "wf") == 0, "%s/%s appeared", Out,
		    de->d_name);
	closedir(d);
	snprintf(path, sizeof(path), "%s/secret.txt", Out);
	ck_assert(slurp(path, &b));
	ck_assert_str_eq(b.b_data, SECRET_TEXT "\n");
	buf_free(&b);
}

/* Names with "../", "%2e%2e%2f", absolute paths, NUL and symbolic links
 * out of the allowed folders are refused (or name nothing), and
 * neither the gateway nor a worker opens anything outside. */
START_TEST(traversal_refused_nothing_opened_outside)
{
	struct trace	 tr;
	struct buf	 trace = BUF_INIT;
	size_t		 i;
	bool		 traced;

	start(NULL, NULL);
	traced = trace_start(&tr);
	for (i = 0; i < sizeof(fprobes) / sizeof(fprobes[0]); i++)
		fprobe_run(&fprobes[i]);
	nul_probes();
	url_probes();
	trace_stop(&tr, &trace);
	outside_intact();
	if (traced) {
		/* the trace works: it saw the file that may be read */
		trace_confirm(trace.b_data, "/files/inside.txt");
		trace_refute(trace.b_data, Out);
		trace_refute(trace.b_data, "link-file");
		trace_refute(trace.b_data, "link-dir");
		trace_refute(trace.b_data, "/etc/passwd");
		trace_refute(trace.b_data, "%2e%2e");
		trace_refute(trace.b_data, "..%2f");
	}
	buf_free(&trace);
	stop();
}
END_TEST

/* ---- tool arguments -------------------------------------------------- */

/* Shell syntax in a PythonModule argument reaches Invoke() unchanged
 * and runs nothing: each piece would create a file in the outside
 * folder if a shell ever saw it. */
START_TEST(tool_arguments_run_nothing)
{
	struct trace	 tr;
	struct buf	 trace = BUF_INIT;
	struct it_resp	 r;
	json_t		*j;
	char		*payload = outside("a; touch @/pwn1\n$(touch @/pwn2) "
			    "`touch @/pwn3` | touch @/pwn4 && touch @/pwn5 "
			    "> @/pwn6 \"q\" 'q' & touch @/pwn7\n\n"
			    "touch @/pwn8");
	char		*text;
	bool		 traced;

	start(NULL, NULL);
	traced = trace_start(&tr);
	chat("pytool", payload, &r);
	ck_assert_msg(r.r_status == 200, "%ld %.300s", r.r_status,
	    r.r_body.b_data);
	it_sleep(300);		/* a stray child would have run by now */
	trace_stop(&tr, &trace);
	text = answer_text(&r);
	j = it_json(text);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j,
	    "args"), 0)), payload);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
	    "kwargs"), "k")), payload);
	outside_intact();
	if (traced) {
		/* python3 ran (through whatever PATH holds), nothing else
		 * was given the argument */
		trace_confirm(trace.b_data, "python3");
		trace_refute(trace.b_data, "touch");
		trace_refute(trace.b_data, "pwn");
	}
	json_decref(j);
	free(text);
	free(payload);
	it_resp_free(&r);
	buf_free(&trace);
	stop();
}
END_TEST

/* ---- backends -------------------------------------------------------- */

/* A second mock on another address, "another host" that no request
 * may make a worker call. */
static pid_t
evil_start(int *port)
{
	char	 bin[300], line[256];
	int	 p[2];
	pid_t	 pid;
	FILE	*f;

	snprintf(bin, sizeof(bin), "%s/tests/mock-llm", T.it_build);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(bin, bin, "--listen", "127.0.0.2:0", "--quiet",
		    (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	ck_assert(fgets(line, sizeof(line), f) != NULL);
	ck_assert_int_eq(sscanf(line, "mock-llm listening on 127.0.0.2:%d",
	    port), 1);
	fclose(f);
	return pid;
}

static void
evil_stop(pid_t pid)
{
	int	 st;

	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
}

/* Requests a mock has received: /mock/stats of the one at host:port. */
static json_int_t
mock_count(const char *host, int port)
{
	struct it_resp	 r;
	json_t		*j;
	json_int_t	 n;
	char		 url[96];

	snprintf(url, sizeof(url), "http://%s:%d/mock/stats", host, port);
	request("GET", url, NULL, NULL, &r);
	j = it_json(r.r_body.b_data);
	n = json_integer_value(json_object_get(j, "requests"));
	json_decref(j);
	it_resp_free(&r);
	return n;
}

/* One request to path with body and headers that each try to name the
 * evil backend (its address in "@"... here: evil); must get 200 from
 * the configured mock. */
static void
override_try(const char *path, const char *body, const char *const *hdrs)
{
	struct it_resp	 r;
	char		*u = gw_url(path);

	request("POST", u, hdrs, body, &r);
	ck_assert_msg(r.r_status == 200 && strstr(r.r_body.b_data,
	    "quick brown") != NULL, "%s: %ld %.300s", path, r.r_status,
	    r.r_body.b_data);
	it_resp_free(&r);
	free(u);
}

/* Client requests carry the evil backend's address in every field and
 * header a proxy might take a base URL from; each is answered by the
 * configured endpoint, and the evil backend hears nothing. */
START_TEST(backend_url_never_from_request)
{
	char		 e[64], host[64], fwd[96], xf[96], orig[128], ep[96];
	char		*b[4];
	const char	*hdrs[] = { host, fwd, xf, orig, ep, NULL };
	json_int_t	 before;
	pid_t		 evil;
	int		 eport, i;

	/* the Host check would refuse the evil Host before any worker could
	 * be misled: let it through to test the workers */
	start("\"allowed_hosts\": [\"127.0.0.2\"]", NULL);
	evil = evil_start(&eport);
	snprintf(e, sizeof(e), "http://127.0.0.2:%d", eport);
	snprintf(host, sizeof(host), "Host: 127.0.0.2:%d", eport);
	snprintf(fwd, sizeof(fwd), "Forwarded: host=127.0.0.2:%d", eport);
	snprintf(xf, sizeof(xf), "X-Forwarded-Host: 127.0.0.2:%d", eport);
	snprintf(orig, sizeof(orig), "X-Original-URL: %s/v1/chat/"
	    "completions", e);
	snprintf(ep, sizeof(ep), "X-Sluice-Endpoint: %s", e);
	ck_assert_int_gt(asprintf(&b[0], "{\"model\":\"%s\",\"api_base\":"
	    "\"%s\",\"base_url\":\"%s\",\"endpoint\":\"%s\",\"url\":\"%s\","
	    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", e, e, e,
	    e, e), 0);
	ck_assert_int_gt(asprintf(&b[1], "{\"model\":\"%s\",\"stream\":false,"
	    "\"host\":\"%s\",\"options\":{\"base_url\":\"%s\",\"host\":\"%s\"},"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", e, e, e,
	    e), 0);
	ck_assert_int_gt(asprintf(&b[2], "{\"model\":\"%s\",\"stream\":false,"
	    "\"prompt\":\"hi\",\"api_base\":\"%s\"}", e, e), 0);
	ck_assert_int_gt(asprintf(&b[3], "{\"model\":\"%s\",\"stream\":false,"
	    "\"prompt\":\"hi\",\"host\":\"%s\"}", e, e), 0);
	before = mock_count("127.0.0.1", T.it_mock_port);
	override_try("/v1/chat/completions", b[0], hdrs);
	override_try("/api/chat", b[1], hdrs);
	override_try("/v1/completions", b[2], hdrs);
	override_try("/api/generate", b[3], hdrs);
	ck_assert_int_eq(mock_count("127.0.0.2", eport), 0);
	ck_assert_int_eq(mock_count("127.0.0.1", T.it_mock_port), before + 4);
	for (i = 0; i < 4; i++)
		free(b[i]);
	evil_stop(evil);
	stop();
}
END_TEST

/* A backend that redirects elsewhere (another host, every redirect
 * status, streamed or not) fails the call: libcurl's
 * CURLOPT_FOLLOWLOCATION is left off in worker/llm/transport.c. */
START_TEST(redirects_not_followed)
{
	static const int codes[] = { 301, 302, 303, 307, 308 };
	struct it_resp	 r;
	char		 body[512], want[32], *u;
	json_int_t	 before;
	pid_t		 evil;
	int		 eport;
	size_t		 i;

	start(NULL, NULL);
	evil = evil_start(&eport);
	u = gw_url("/v1/chat/completions");
	before = mock_count("127.0.0.1", T.it_mock_port);
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		snprintf(body, sizeof(body), "{\"model\":\"x\",\"stream\":%s,"
		    "\"messages\":[{\"role\":\"user\",\"content\":\"#mock "
		    "{\\\"redirect\\\":\\\"http://127.0.0.2:%d/v1/chat/"
		    "completions\\\",\\\"status\\\":%d}\"}]}", i % 2 ? "true" :
		    "false", eport, codes[i]);
		request("POST", u, NULL, body, &r);
		snprintf(want, sizeof(want), "answered HTTP %d", codes[i]);
		ck_assert_msg(r.r_status == 502 && strstr(r.r_body.b_data,
		    want) != NULL, "%d: %ld %.300s", codes[i], r.r_status,
		    r.r_body.b_data);
		ck_assert_ptr_null(strstr(r.r_body.b_data, "quick"));
		it_resp_free(&r);
	}
	ck_assert_int_eq(mock_count("127.0.0.2", eport), 0);
	ck_assert_int_ge(mock_count("127.0.0.1", T.it_mock_port), before + 5);
	free(u);
	evil_stop(evil);
	stop();
}
END_TEST

/* ---- secrets --------------------------------------------------------- */

/* No key, nor the random tail of one, anywhere in b. */
static void
refute_keys(const char *what, const struct buf *b)
{
	static const char *const keys[] = { KEY_CLIENT, KEY_ADMIN,
	    KEY_BACKEND, KEY_WRONG, KEY_URL };
	const char	*tail;
	size_t		 i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		tail = strrchr(keys[i], '-') + 1;
		ck_assert_msg(memmem(b->b_data, b->b_len, tail,
		    strlen(tail)) == NULL, "(part of) %s found in %s", keys[i],
		    what);
	}
}

/* One request with an optional Bearer key; its status must be want,
 * and its head and body go into seen. */
static void
keyed(const char *method, const char *path, const char *key,
    const char *body, long want, struct buf *seen)
{
	struct it_resp	 r;
	char		 auth[128], *u = gw_url(path);
	const char	*hdrs[] = { auth, NULL };

	if (key != NULL)
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
	request(method, u, key != NULL ? hdrs : NULL, body, &r);
	ck_assert_msg(r.r_status == want, "%s %s: %ld, not %ld: %.300s",
	    method, path, r.r_status, want, r.r_body.b_data);
	buf_add(seen, r.r_headers.b_data, r.r_headers.b_len);
	buf_add(seen, r.r_body.b_data, r.r_body.b_len);
	it_resp_free(&r);
	free(u);
}

/* Every kind of request, answer and error, with each kind of key. */
static void
keyed_requests(struct buf *seen)
{
	static const char chat[] = "{\"model\":\"x\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"hi\"}]}";
	static const char stream[] = "{\"model\":\"x\",\"stream\":true,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
	static const char fail[] = "{\"model\":\"x\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"#mock {\\\"status\\\":401}\"}]}";
	static const char ollama[] = "{\"model\":\"x\",\"stream\":false,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

	keyed("POST", "/v1/chat/completions", KEY_CLIENT, chat, 200, seen);
	keyed("POST", "/v1/chat/completions", KEY_CLIENT, stream, 200, seen);
	keyed("POST", "/api/chat", KEY_CLIENT, ollama, 200, seen);
	keyed("POST", "/v1/chat/completions", KEY_CLIENT, fail, 502, seen);
	keyed("POST", "/v1/chat/completions", NULL, chat, 401, seen);
	keyed("POST", "/v1/chat/completions", KEY_WRONG, chat, 401, seen);
	keyed("POST", "/api/chat", KEY_WRONG, ollama, 401, seen);
	keyed("GET", "/v1/models", KEY_CLIENT, NULL, 200, seen);
	keyed("GET", "/metrics", KEY_CLIENT, NULL, 401, seen);
	keyed("GET", "/metrics", KEY_ADMIN, NULL, 200, seen);
	keyed("GET", "/admin/workers", KEY_ADMIN, NULL, 200, seen);
	keyed("GET", "/admin/workers", KEY_WRONG, NULL, 401, seen);
	keyed("GET", "/health", KEY_WRONG, NULL, 200, seen);
}

/* The state directory's database files, together. */
static void
database_bytes(struct buf *all)
{
	static const char *const names[] = { "sluice.db", "sluice.db-wal",
	    "sluice.db-shm" };
	struct buf	 b = BUF_INIT;
	char		 path[512];
	size_t		 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/state/%s", T.it_dir, names[i]);
		if (slurp(path, &b))
			buf_add(all, b.b_data, b.b_len);
	}
	buf_free(&b);
}

/* Command lines and environments of the gateway and its workers. */
static void
process_bytes(struct buf *all)
{
	pid_t		 pids[MAXPIDS];
	struct buf	 b = BUF_INIT;
	char		 path[64];
	size_t		 n, i;

	pids[0] = T.it_gw;
	n = 1 + it_worker_pids(&T, pids + 1, MAXPIDS - 1);
	ck_assert_uint_ge(n, 3);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pids[i]);
		ck_assert(slurp(path, &b));
		buf_add(all, b.b_data, b.b_len);
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)pids[i]);
		if (slurp(path, &b))
			buf_add(all, b.b_data, b.b_len);
	}
	buf_free(&b);
}

/* The client's, the admin's, a wrong and the backend's keys, and the
 * password in the backend's URL, never show in answers (errors that
 * name the endpoint included), in the log at debug level, in the
 * database, or in the processes' command lines and environments. */
START_TEST(secrets_stay_secret)
{
	struct buf	 seen = BUF_INIT, b = BUF_INIT;
	json_t		*log;
	char		*dump;

	start("\"api_keys\": [\"" KEY_CLIENT "\"], \"admin_api_keys\": [\""
	    KEY_ADMIN "\"], \"log_level\": \"debug\", \"cache\": "
	    "{\"enabled\": true, \"cacheable_temperature\": 1.0}",
	    KEY_BACKEND);
	keyed_requests(&seen);
	refute_keys("the answers", &seen);
	/* the backend key was in use: the mock got it */
	log = it_mock_log(&T, false);
	dump = json_dumps(log, 0);
	ck_assert_ptr_nonnull(strstr(dump, "Bearer " KEY_BACKEND));
	ck_assert(slurp(T.it_log, &b));
	ck_assert_ptr_nonnull(strstr(b.b_data, " debug: "));
	refute_keys("the gateway and worker log", &b);
	buf_reset(&b);
	database_bytes(&b);
	ck_assert_msg(memmem(b.b_data, b.b_len, "quick brown", 11) != NULL,
	    "no cached answer in the database");
	refute_keys("the database", &b);
	buf_reset(&b);
	process_bytes(&b);
	refute_keys("a command line or environment", &b);
	free(dump);
	json_decref(log);
	buf_free(&b);
	buf_free(&seen);
	stop();
}
END_TEST

/* ---- links out of the config folder ------------------------------- */

/*
 * The model field may only name an entry directly inside
 * Workflows/_shared/ (one flat component, checked before any file is
 * touched); when the admin has made that entry a link to elsewhere, it
 * is refused too, and not listed by /v1/models.
 */
START_TEST(workflow_symlink_out_of_config_refused)
{
	struct it_resp	 r, m;
	bool		 ran;

	start(NULL, NULL);
	chat("outlink", "hi", &r);
	ran = strstr(r.r_body.b_data, "PWNED-WORKFLOW") != NULL;
	it_request(&T, "GET", "/v1/models", NULL, &m);
	stop();
	ck_assert_msg(!ran, "the model field ran a workflow outside the "
	    "config folder through Workflows/_shared/outlink -> %s/wf", Out);
	ck_assert_int_eq(m.r_status, 200);
	ck_assert_msg(strstr(m.r_body.b_data, "getfile") != NULL &&
	    strstr(m.r_body.b_data, "outlink") == NULL,
	    "/v1/models lists the link out, or not the folders: %s",
	    m.r_body.b_data);
	it_resp_free(&r);
	it_resp_free(&m);
}
END_TEST

static Suite *
security_suite(void)
{
	Suite	*s = suite_create("security");
	TCase	*tc;

	tc = tcase_create("traversal");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, traversal_refused_nothing_opened_outside);
	suite_add_tcase(s, tc);
	tc = tcase_create("tools");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tool_arguments_run_nothing);
	suite_add_tcase(s, tc);
	tc = tcase_create("backends");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, backend_url_never_from_request);
	tcase_add_test(tc, redirects_not_followed);
	suite_add_tcase(s, tc);
	tc = tcase_create("secrets");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, secrets_stay_secret);
	suite_add_tcase(s, tc);
	tc = tcase_create("links");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, workflow_symlink_out_of_config_refused);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(security_suite());
}
