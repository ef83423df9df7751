/* harness.c - integration tests: start the mock, the gateway and its workers; speak HTTP. */
#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/clock.h"
#include "../testmain.h"
#include "harness.h"

uint64_t
it_now(void)
{
	return clock_mono_ms();
}

int
it_slow(int ms)
{
	const char	*vg = getenv("SLUICE_VALGRIND");

	return vg != NULL && *vg != '\0' ? 10 * ms : ms;
}

void
it_sleep(int ms)
{
	struct timespec	 ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void
build_dir(struct it *t)
{
	const char	*b = getenv("SLUICE_BUILD");

	snprintf(t->it_build, sizeof(t->it_build), "%s", b ? b : "build");
}

static void
write_file(const char *dir, const char *rel, const char *text)
{
	char	 path[512], *slash;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* Read "mock-llm listening on ADDR:PORT" from the mock's stdout. */
pid_t
it_double_start(const char *name, const char *const *args, int *port)
{
	const char	*b = getenv("SLUICE_BUILD");
	const char	*argv[16];
	char		 bin[300], line[256], want[96];
	size_t		 n = 0;
	int		 p[2];
	pid_t		 pid;
	FILE		*f;

	snprintf(bin, sizeof(bin), "%s/tests/%s", b ? b : "build", name);
	argv[n++] = bin;
	while (args != NULL && *args != NULL && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execv(bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(p[1]);
	ck_assert_ptr_nonnull(f = fdopen(p[0], "r"));
	ck_assert_msg(fgets(line, sizeof(line), f) != NULL,
	    "%s did not start (%s)", name, bin);
	/* the address is 127.0.0.1 unless args chose another */
	snprintf(want, sizeof(want), "%s listening on ", name);
	ck_assert_msg(strncmp(line, want, strlen(want)) == 0 &&
	    strrchr(line, ':') != NULL &&
	    (*port = atoi(strrchr(line, ':') + 1)) > 0,
	    "unexpected %s output: %s", name, line);
	fclose(f);
	return pid;
}

void
it_double_stop(pid_t pid)
{
	int	 st;

	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "a test double ended with status %d", st);
}

void
it_mock_start(struct it *t)
{
	static const char *const args[] = { "--listen", "127.0.0.1:0",
	    "--quiet", NULL };

	build_dir(t);
	t->it_mock = it_double_start("mock-llm", args, &t->it_mock_port);
}

/* A TCP socket bound to 127.0.0.1, any port; that port into *port. */
static int
loopback_socket(int *port)
{
	struct sockaddr_in	 a;
	socklen_t		 len = sizeof(a);
	int			 fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC,
				    0);

	ck_assert_int_ge(fd, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

int
it_dead_port(void)
{
	int	 port;

	close(loopback_socket(&port));
	return port;
}

/* Linux drops a SYN while the listener's accept queue is full; with a
 * backlog of 0 one waiting connection fills it. */
void
it_stuck_open(struct it_stuck *s)
{
	struct sockaddr_in	 a;
	size_t			 i;

	s->s_fd[0] = loopback_socket(&s->s_port);
	ck_assert_int_eq(listen(s->s_fd[0], 0), 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)s->s_port);
	for (i = 1; i < sizeof(s->s_fd) / sizeof(s->s_fd[0]); i++) {
		s->s_fd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		ck_assert_int_ge(s->s_fd[i], 0);
		if (connect(s->s_fd[i], (struct sockaddr *)&a, sizeof(a)) ==
		    -1)
			ck_assert_int_eq(errno, EINPROGRESS);
	}
	it_sleep(50);
}

void
it_stuck_close(struct it_stuck *s)
{
	size_t	 i;

	for (i = 0; i < sizeof(s->s_fd) / sizeof(s->s_fd[0]); i++)
		close(s->s_fd[i]);
}

/* sluice.json's text: the test's settings, after a longer spawn
 * timeout under valgrind (where a worker takes seconds to say HELLO;
 * a key the test sets itself comes later and wins). */
static void
settings_text(char *text, size_t len, const char *settings)
{
	const char	*vg = getenv("SLUICE_VALGRIND");
	bool		 slow = vg != NULL && *vg != '\0';

	snprintf(text, len, "{%s%s%s}\n", slow ? "\"spawn_timeout_s\": 60" :
	    "", slow && settings != NULL && *settings != '\0' ? ", " : "",
	    settings ? settings : "");
}

void
it_settings(struct it *t, const char *settings)
{
	char	 text[2048];

	settings_text(text, sizeof(text), settings);
	write_file(t->it_dir, "sluice.json", text);
}

/* Endpoints/it/Mock.json: endpoint "Mock" at url, with extra members. */
static void
mock_endpoint(struct it *t, const char *url, const char *extra)
{
	char	 text[2048];

	snprintf(text, sizeof(text), "{\"endpoint\": \"%s\","
	    " \"apiTypeConfigFileName\": \"Open-AI-API\","
	    " \"modelNameToSendToAPI\": \"mock-model\", \"promptTemplate\": null,"
	    " \"maxContextTokenSize\": 4096%s%s}\n", url, extra ? ", " : "",
	    extra ? extra : "");
	write_file(t->it_dir, "Endpoints/it/Mock.json", text);
}

void
it_mock_endpoint(struct it *t, const char *extra)
{
	char	 murl[128];

	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d", t->it_mock_port);
	mock_endpoint(t, murl, extra);
}

void
it_config(struct it *t, const char *settings, const char *url)
{
	char	 text[2048], murl[128];

	build_dir(t);
	snprintf(t->it_dir, sizeof(t->it_dir), "/tmp/sluice-it.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t->it_dir));
	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d", t->it_mock_port);
	settings_text(text, sizeof(text), settings);
	write_file(t->it_dir, "sluice.json", text);
	write_file(t->it_dir, "Users/_current-user.json",
	    "{\"currentUser\": \"it\"}\n");
	write_file(t->it_dir, "Users/it.json",
	    "{\"customWorkflowOverride\": true, \"customWorkflow\": \"Main\","
	    " \"chatCompleteAddUserAssistant\": false,"
	    " \"chatCompletionAddMissingAssistantGenerator\": false,"
	    " \"endpointConfigsSubDirectory\": \"it\","
	    " \"connectTimeoutInSeconds\": 2}\n");
	mock_endpoint(t, url ? url : murl, NULL);
	write_file(t->it_dir, "ApiTypes/Open-AI-API.json",
	    "{\"type\": \"openAIChatCompletion\", \"presetType\": \"OpenAI\","
	    " \"maxNewTokensPropertyName\": \"max_tokens\","
	    " \"streamPropertyName\": \"stream\"}\n");
	write_file(t->it_dir, "Presets/OpenAI/it/Mock.json",
	    "{\"temperature\": 0.5}\n");
	write_file(t->it_dir, "Workflows/it/Main.json",
	    "{\"nodes\": [{\"type\": \"Standard\", \"endpointName\": \"Mock\","
	    " \"preset\": \"Mock\", \"systemPrompt\": \"{chat_system_prompt}\","
	    " \"prompt\": \"\", \"lastMessagesToSendInsteadOfPrompt\": 20,"
	    " \"maxResponseSizeInTokens\": 300}]}\n");
}

void
it_file(struct it *t, const char *rel, const char *text)
{
	write_file(t->it_dir, rel, text);
}

char *
it_file_text(const char *path)
{
	struct buf	 b = BUF_INIT;
	FILE		*f = fopen(path, "r");
	char		 chunk[4096];
	size_t		 n;

	buf_adds(&b, "");
	if (f == NULL)
		return buf_take(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	return buf_take(&b);
}

void
it_user_set(struct it *t, const char *key, json_t *value)
{
	char		 path[512];
	json_t		*u;
	json_error_t	 je;

	snprintf(path, sizeof(path), "%s/Users/it.json", t->it_dir);
	u = json_load_file(path, 0, &je);
	ck_assert_msg(u != NULL, "%s: %s", path, je.text);
	json_object_set_new(u, key, value);
	ck_assert_int_eq(json_dump_file(u, path, JSON_INDENT(2)), 0);
	json_decref(u);
}

void
it_allow_shared(struct it *t)
{
	it_user_set(t, "allowSharedWorkflows", json_true());
}

void
it_turns_template(struct it *t)
{
	write_file(t->it_dir, "PromptTemplates/turns.json", "{"
	    "\"promptTemplateSystemPrefix\": \"<|system|>\\n\", "
	    "\"promptTemplateSystemSuffix\": \"\\n<|end|>\\n\", "
	    "\"promptTemplateUserPrefix\": \"<|user|>\\n\", "
	    "\"promptTemplateUserSuffix\": \"\\n<|end|>\\n\", "
	    "\"promptTemplateAssistantPrefix\": \"<|assistant|>\\n\", "
	    "\"promptTemplateAssistantSuffix\": \"\\n<|end|>\\n\", "
	    "\"promptTemplateEndToken\": \"\"}\n");
}

void
it_backend(struct it *t, const char *workflow, const char *ep,
    const char *type, const char *url, const char *at_extra,
    const char *ep_extra)
{
	char	 rel[256], text[1024];

	snprintf(rel, sizeof(rel), "ApiTypes/%s.json", ep);
	snprintf(text, sizeof(text), "{\"type\": \"%s\", "
	    "\"maxNewTokensPropertyName\": \"max_tokens\"%s}\n", type,
	    at_extra);
	write_file(t->it_dir, rel, text);
	snprintf(rel, sizeof(rel), "Endpoints/it/%s.json", ep);
	snprintf(text, sizeof(text), "{\"endpoint\": \"%s\", "
	    "\"apiTypeConfigFileName\": \"%s\", \"modelNameToSendToAPI\": "
	    "\"m\", \"promptTemplate\": \"turns\"%s}\n", url, ep, ep_extra);
	write_file(t->it_dir, rel, text);
	if (workflow == NULL)
		return;
	snprintf(rel, sizeof(rel), "Workflows/_shared/%s/_DefaultWorkflow.json",
	    workflow);
	snprintf(text, sizeof(text), "[{\"type\": \"Standard\", "
	    "\"endpointName\": \"%s\", \"prompt\": \"\", "
	    "\"lastMessagesToSendInsteadOfPrompt\": 5, "
	    "\"maxResponseSizeInTokens\": 300}]\n", ep);
	write_file(t->it_dir, rel, text);
}

const char *
it_way_name(enum it_way w)
{
	static const char *const names[IT_NWAYS] = { "openai",
	    "openai stream", "ollama", "ollama stream" };

	return names[w];
}

bool
it_way_stream(enum it_way w)
{
	return w == IT_OPENAI_STREAM || w == IT_OLLAMA_STREAM;
}

bool
it_way_ollama(enum it_way w)
{
	return w == IT_OLLAMA || w == IT_OLLAMA_STREAM;
}

const char *
it_way_path(enum it_way w)
{
	return it_way_ollama(w) ? "/api/chat" : "/v1/chat/completions";
}

char *
it_way_body(enum it_way w, const char *model, const char *user)
{
	json_t	*b = json_pack("{s:s,s:b,s:[{s:s,s:s}]}", "model", model,
		    "stream", it_way_stream(w), "messages", "role", "user",
		    "content", user);
	char	*s;

	if (w == IT_OPENAI_STREAM)
		json_object_set_new(b, "stream_options", json_pack("{s:b}",
		    "include_usage", 1));
	s = json_dumps(b, 0);
	json_decref(b);
	return s;
}

size_t
it_log_size(struct it *t)
{
	struct stat	 st;

	return stat(t->it_log, &st) == 0 ? (size_t)st.st_size : 0;
}

static char *
read_log(struct it *t, size_t *len)
{
	FILE	*f = fopen(t->it_log, "r");
	char	*s;
	long	 n;

	*len = 0;
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	*len = fread(s, 1, (size_t)n, f);
	s[*len] = '\0';
	fclose(f);
	return s;
}

bool
it_log_wait(struct it *t, const char *needle, size_t *from, int timeout_ms)
{
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;
	size_t		 len;
	char		*s, *hit;

	do {
		s = read_log(t, &len);
		if (s != NULL && *from < len &&
		    (hit = strstr(s + *from, needle)) != NULL) {
			*from = (size_t)(hit - s) + strlen(needle);
			free(s);
			return true;
		}
		free(s);
		it_sleep(10);
	} while (it_now() < end);
	return false;
}

/* "2026-11-22T03:40:26.757Z ..." at the start of the line holding p. */
static long
line_ms(const char *text, const char *p)
{
	int	 h, m, sec, ms;

	while (p > text && p[-1] != '\n')
		p--;
	if (sscanf(p, "%*10sT%d:%d:%d.%dZ", &h, &m, &sec, &ms) != 4)
		return -1;
	return ((h * 60L + m) * 60 + sec) * 1000 + ms;
}

long
it_log_gap(struct it *t, size_t from, const char *first, const char *second)
{
	size_t	 len;
	char	*s = read_log(t, &len), *a, *b;
	long	 r = -1;

	if (s != NULL && from < len && (a = strstr(s + from, first)) != NULL &&
	    (b = strstr(a, second)) != NULL && line_ms(s, a) >= 0 &&
	    line_ms(s, b) >= 0)
		r = line_ms(s, b) - line_ms(s, a);
	free(s);
	return r;
}

/* SLUICE_VALGRIND=DIR (make valgrind): run argv under memcheck, which
 * follows the gateway into the workers it starts; each process writes
 * DIR/vg.<pid>.log, which tests/valgrind/run.sh reads afterwards. */
static void
exec_valgrind(char **argv)
{
	const char	*src = getenv("SLUICE_SRC");
	char		 logf[300], supp[300];
	char		*vg[48] = { "valgrind", "--quiet", "--leak-check=full",
			    "--show-leak-kinds=definite",
			    "--errors-for-leak-kinds=definite",
			    "--error-exitcode=99", "--trace-children=yes",
			    "--child-silent-after-fork=yes", "--num-callers=30",
			    logf, supp };
	int		 n = 11, i;

	snprintf(logf, sizeof(logf), "--log-file=%s/vg.%%p.log",
	    getenv("SLUICE_VALGRIND"));
	snprintf(supp, sizeof(supp), "--suppressions=%s/tests/valgrind/"
	    "sluice.supp", src != NULL ? src : ".");
	for (i = 0; argv[i] != NULL && n < 47; i++)
		vg[n++] = argv[i];
	vg[n] = NULL;
	execvp(vg[0], vg);
}

/* The gateway with the test's folder (its state directory inside), any
 * port, and --user for each of it_users. */
static void
exec_gateway(struct it *t, char *bin)
{
	char	 state[300];
	char	*argv[24] = { bin, "--config-dir", t->it_dir, "--listen",
		    t->it_listen[0] != '\0' ? t->it_listen : "127.0.0.1:0",
		    "--state-dir", state };
	char	*users = strdup(t->it_users), *tok, *save;
	char	*extra = strdup(t->it_args);
	int	 n = 7;

	snprintf(state, sizeof(state), "%s/state", t->it_dir);
	if (t->it_args[0] != '\0') {
		n = 3;
		argv[1] = argv[3];
		argv[2] = argv[4];
		for (tok = strtok_r(extra, " ", &save); tok != NULL && n < 15;
		    tok = strtok_r(NULL, " ", &save))
			argv[n++] = tok;
	}
	for (tok = strtok_r(users, " ", &save); tok != NULL && n < 21;
	    tok = strtok_r(NULL, " ", &save)) {
		argv[n++] = "--user";
		argv[n++] = tok;
	}
	argv[n] = NULL;
	if (it_slow(1) > 1)
		exec_valgrind(argv);
	execv(bin, argv);
}

void
it_gateway_start(struct it *t, const char *env)
{
	char	 bin[300], line[64], needle[96];
	size_t	 from = 0;
	int	 fd;

	/* "listening on 127.0.0.1:", or on the host part of it_listen */
	snprintf(needle, sizeof(needle), "listening on %.*s:",
	    t->it_listen[0] != '\0' ? (int)(strrchr(t->it_listen, ':') -
	    t->it_listen) : 9, t->it_listen[0] != '\0' ? t->it_listen :
	    "127.0.0.1");
	snprintf(bin, sizeof(bin), "%s/sluice-gateway", t->it_build);
	snprintf(t->it_log, sizeof(t->it_log), "%s/gateway.log", t->it_dir);
	t->it_gw = fork();
	ck_assert_int_ge(t->it_gw, 0);
	if (t->it_gw == 0) {
		fd = open(t->it_log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		if (env != NULL) {	/* "A=1;B=2" */
			char	*e = strdup(env), *tok, *save;

			for (tok = strtok_r(e, ";", &save); tok != NULL;
			    tok = strtok_r(NULL, ";", &save))
				putenv(tok);
		}
		exec_gateway(t, bin);
		_exit(127);
	}
	ck_assert_msg(it_log_wait(t, needle, &from, it_slow(5000)),
	    "gateway did not start; see %s", t->it_log);
	{
		size_t	 len;
		char	*s = read_log(t, &len);

		snprintf(line, sizeof(line), "%.10s", s + from);
		free(s);
	}
	t->it_port = atoi(line);
	ck_assert_int_gt(t->it_port, 0);
	if (env == NULL || (strstr(env, "no_hello") == NULL &&
	    strstr(env, "bad_version") == NULL &&
	    strstr(env, "exit_config") == NULL))
		ck_assert_msg(it_log_wait(t, "ready", &from, it_slow(5000)),
		    "no worker became ready; see %s", t->it_log);
}

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int
wait_exit(pid_t pid, int timeout_ms)
{
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;
	int		 st;

	while (it_now() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		it_sleep(5);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

int
it_stop(struct it *t, int timeout_ms)
{
	int	 st = 0;

	if (t->it_gw > 0) {
		kill(t->it_gw, SIGTERM);
		st = wait_exit(t->it_gw, timeout_ms);
		t->it_gw = 0;
	}
	if (t->it_mock > 0) {
		kill(t->it_mock, SIGTERM);
		wait_exit(t->it_mock, 2000);
		t->it_mock = 0;
	}
	if (t->it_dir[0] != '\0' && getenv("IT_KEEP") == NULL)
		nftw(t->it_dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	return st;
}

int
it_gateway_once(const char *const *args, const char *out, const char *err)
{
	const char	*b = getenv("SLUICE_BUILD");
	char		 bin[300], *argv[22] = { bin };
	pid_t		 pid;
	int		 n = 1, st;

	snprintf(bin, sizeof(bin), "%s/sluice-gateway", b ? b : "build");
	for (; *args != NULL && n < 21; args++)
		argv[n++] = (char *)(uintptr_t)*args;
	argv[n] = NULL;
	ck_assert_int_ge(pid = fork(), 0);
	if (pid == 0) {
		if (freopen(out, "w", stdout) == NULL ||
		    freopen(err, "w", stderr) == NULL)
			_exit(126);
		execv(bin, argv);
		_exit(127);
	}
	st = wait_exit(pid, it_slow(20000));
	ck_assert_msg(st != -1, "sluice-gateway %s did not end", argv[1]);
	ck_assert_msg(WIFEXITED(st), "sluice-gateway %s: status %d", argv[1],
	    st);
	return WEXITSTATUS(st);
}

int
it_gateway_job(const char *dir, const char *const *pre,
    const char *const *args, char **out, char **err)
{
	char		 o[300], e[300];
	const char	*argv[21];
	int		 n = 0, st;

	snprintf(o, sizeof(o), "%s/out", dir);
	snprintf(e, sizeof(e), "%s/err", dir);
	for (; *pre != NULL && n < 20; pre++)
		argv[n++] = *pre;
	for (; *args != NULL && n < 20; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	st = it_gateway_once(argv, o, e);
	*out = it_file_text(o);
	*err = it_file_text(e);
	return st;
}

void
it_stop_clean(struct it *t)
{
	int	 st = it_stop(t, it_slow(15000));

	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "gateway did not exit cleanly (status %d)", st);
}

long long
it_mock_stat(struct it *t, const char *name)
{
	struct it_resp	 r;
	json_t		*j;
	long long	 n;

	ck_assert_int_eq(it_request(t, "GET", "mock:/mock/stats", NULL, &r),
	    0);
	j = it_json(r.r_body.b_data);
	ck_assert_msg(json_is_integer(json_object_get(j, name)),
	    "no %s in the mock's stats: %s", name, r.r_body.b_data);
	n = json_integer_value(json_object_get(j, name));
	json_decref(j);
	it_resp_free(&r);
	return n;
}

bool
it_mock_wait(struct it *t, const char *name, long long n, int timeout_ms)
{
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;

	while (it_mock_stat(t, name) < n) {
		if (it_now() >= end)
			return false;
		it_sleep(10);
	}
	return true;
}

long long
it_mock_requests(struct it *t)
{
	return it_mock_stat(t, "requests");
}

json_t *
it_get_json(struct it *t, const char *path)
{
	struct it_resp	 r;
	json_t		*j;

	ck_assert_int_eq(it_request(t, "GET", path, NULL, &r), 0);
	j = it_json(r.r_body.b_data);
	it_resp_free(&r);
	return j;
}

json_t *
it_double_json(int port, const char *path)
{
	char		 url[512];
	struct it_resp	 r;
	json_t		*j;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	ck_assert_int_eq(it_request_url("GET", url, NULL, NULL, &r), 0);
	j = it_json(r.r_body.b_data);
	it_resp_free(&r);
	return j;
}

char *
it_chat_text(struct it *t, bool stream, const char *user, long *status)
{
	enum it_way		 way = stream ? IT_OPENAI_STREAM : IT_OPENAI;
	char			*body = it_way_body(way, "x", user), *out = NULL;
	struct it_resp		 r;
	struct sse_summary	 ss;
	json_t			*j;

	ck_assert_int_eq(it_request(t, "POST", it_way_path(way), body, &r), 0);
	*status = r.r_status;
	if (r.r_status == 200 && stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert(ss.ss_done && !ss.ss_error);
		out = ss.ss_text;
	} else if (r.r_status == 200) {
		j = it_json(r.r_body.b_data);
		out = strdup(json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0),
		    "message"), "content")));
		json_decref(j);
	}
	it_resp_free(&r);
	free(body);
	return out;
}

json_t *
it_mock_log(struct it *t, bool clear)
{
	struct it_resp	 r;
	json_t		*a;

	ck_assert_int_eq(it_request(t, "GET", "mock:/mock/requests", NULL,
	    &r), 0);
	a = it_json(r.r_body.b_data);
	it_resp_free(&r);
	if (clear) {
		ck_assert_int_eq(it_request(t, "DELETE", "mock:/mock/requests",
		    NULL, &r), 0);
		it_resp_free(&r);
	}
	return a;
}

static size_t
collect(char *p, size_t size, size_t n, void *arg)
{
	buf_add(arg, p, size * n);
	return size * n;
}

int
it_request_url(const char *method, const char *url,
    const char *const *hdrs, const char *body, struct it_resp *r)
{
	CURL			*h = curl_easy_init();
	struct curl_slist	*hd = NULL;
	CURLcode		 rc;

	memset(r, 0, sizeof(*r));
	hd = curl_slist_append(hd, "Content-Type: application/json");
	hd = curl_slist_append(hd, "Expect:");
	for (; hdrs != NULL && *hdrs != NULL; hdrs++)
		hd = curl_slist_append(hd, *hdrs);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	if (body != NULL)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->r_body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &r->r_headers);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->r_status);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	buf_adds(&r->r_body, "");
	buf_adds(&r->r_headers, "");
	return rc == CURLE_OK ? 0 : -1;
}

int
it_request(struct it *t, const char *method, const char *path,
    const char *body, struct it_resp *r)
{
	char	 url[512];
	int	 mock = strncmp(path, "mock:", 5) == 0;

	snprintf(url, sizeof(url), "http://%s:%d%s", mock || t->it_host[0] ==
	    '\0' ? "127.0.0.1" : t->it_host, mock ? t->it_mock_port :
	    t->it_port, mock ? path + 5 : path);
	return it_request_url(method, url, NULL, body, r);
}

void
it_resp_free(struct it_resp *r)
{
	buf_free(&r->r_body);
	buf_free(&r->r_headers);
}

const char *
it_header(const struct it_resp *r, const char *name, char *out, size_t len)
{
	return it_header_in(&r->r_headers, name, out, len);
}

const char *
it_header_in(const struct buf *headers, const char *name, char *out,
    size_t len)
{
	const char	*p = headers->b_data;
	size_t		 n = strlen(name), k;

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n') ? strchr(p, '\n') +
	    1 : NULL) {
		if (strncasecmp(p, name, n) != 0 || p[n] != ':')
			continue;
		p += n + 1;
		while (*p == ' ')
			p++;
		for (k = 0; k + 1 < len && p[k] != '\r' && p[k] != '\n'; k++)
			out[k] = p[k];
		out[k] = '\0';
		return out;
	}
	return NULL;
}

json_t *
it_json(const char *text)
{
	json_error_t	 je;
	json_t		*j = json_loads(text, 0, &je);

	ck_assert_msg(j != NULL, "invalid JSON (%s): %.300s", je.text, text);
	return j;
}

struct sctx {
	struct it_stream	*sc_s;
	uint64_t		 sc_t0;
	CURL			*sc_h;
};

static size_t
stream_data(char *p, size_t size, size_t n, void *arg)
{
	struct sctx	*sc = arg;

	if (sc->sc_s->s_out.b_len == 0)
		sc->sc_s->s_first_ms = it_now() - sc->sc_t0;
	buf_add(&sc->sc_s->s_out, p, size * n);
	return size * n;
}

static CURL *
stream_handle(struct it *t, struct sctx *sc, struct curl_slist *hd)
{
	CURL	*h = curl_easy_init();
	char	 url[128];

	snprintf(url, sizeof(url), "http://%s:%d%s", t->it_host[0] != '\0' ?
	    t->it_host : "127.0.0.1",
	    sc->sc_s->s_port != 0 ? sc->sc_s->s_port : t->it_port,
	    sc->sc_s->s_path != NULL ? sc->sc_s->s_path :
	    "/v1/chat/completions");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, sc->sc_s->s_body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, sc);
	curl_easy_setopt(h, CURLOPT_PRIVATE, sc);
	if (sc->sc_s->s_headers != NULL) {
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, collect);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, sc->sc_s->s_headers);
	}
	return h;
}

void
it_streams(struct it *t, struct it_stream *s, size_t n, int timeout_ms,
    void (*tick)(struct it *, struct it_stream *, size_t, void *), void *arg)
{
	CURLM			*m = curl_multi_init();
	struct curl_slist	*hd = NULL;
	struct sctx		*sc = calloc(n, sizeof(*sc));
	uint64_t		 t0 = it_now();
	int			 running = 1, left;
	size_t			 i;
	CURLMsg			*msg;

	hd = curl_slist_append(hd, "Content-Type: application/json");
	for (i = 0; i < n; i++) {
		sc[i] = (struct sctx){ &s[i], t0, NULL };
		sc[i].sc_h = stream_handle(t, &sc[i], hd);
		curl_multi_add_handle(m, sc[i].sc_h);
	}
	while (running > 0 && it_now() - t0 < (uint64_t)timeout_ms) {
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct sctx	*x;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &x);
			curl_easy_getinfo(msg->easy_handle,
			    CURLINFO_RESPONSE_CODE, &x->sc_s->s_status);
			x->sc_s->s_finished = msg->data.result == CURLE_OK;
			x->sc_s->s_end_ms = it_now() - t0;
		}
		if (tick != NULL)
			tick(t, s, n, arg);
		curl_multi_poll(m, NULL, 0, 10, NULL);
	}
	for (i = 0; i < n; i++) {
		buf_adds(&s[i].s_out, "");
		if (s[i].s_headers != NULL)
			buf_adds(s[i].s_headers, "");
		curl_multi_remove_handle(m, sc[i].sc_h);
		curl_easy_cleanup(sc[i].sc_h);
	}
	curl_multi_cleanup(m);
	curl_slist_free_all(hd);
	free(sc);
}

static void
sse_event(struct sse_summary *ss, json_t *j, char *id, size_t idlen)
{
	json_t		*ch = json_array_get(json_object_get(j, "choices"), 0);
	json_t		*d = json_object_get(ch, "delta");
	const char	*c = json_string_value(json_object_get(d, "content"));
	const char	*jid = json_string_value(json_object_get(j, "id"));
	const char	*fin = json_string_value(json_object_get(ch,
			    "finish_reason"));
	char		*old = ss->ss_text;

	if (json_object_get(j, "error") != NULL) {
		ss->ss_error = true;
		return;
	}
	if (ss->ss_chunks++ == 0)
		ss->ss_first_has_role = json_object_get(d, "role") != NULL;
	if (jid != NULL) {
		if (id[0] == '\0')
			snprintf(id, idlen, "%s", jid);
		else if (strcmp(id, jid) != 0)
			ss->ss_one_id = false;
	}
	if (c != NULL) {
		if (asprintf(&ss->ss_text, "%s%s", old, c) == -1)
			abort();
		free(old);
	}
	if (fin != NULL)
		snprintf(ss->ss_finish, sizeof(ss->ss_finish), "%s", fin);
}

void
it_sse_parse(const char *body, struct sse_summary *ss)
{
	const char	*p = body, *e;
	char		 id[128] = "", *line;
	json_t		*j;

	memset(ss, 0, sizeof(*ss));
	ss->ss_text = strdup("");
	ss->ss_one_id = true;
	while ((e = strstr(p, "\n\n")) != NULL) {
		if (strncmp(p, "data: ", 6) == 0) {
			line = strndup(p + 6, (size_t)(e - p - 6));
			if (strcmp(line, "[DONE]") == 0)
				ss->ss_done = true;
			else if ((j = json_loads(line, 0, NULL)) != NULL) {
				sse_event(ss, j, id, sizeof(id));
				json_decref(j);
			}
			free(line);
		}
		p = e + 2;
	}
}

size_t
it_worker_pids(struct it *t, pid_t *out, size_t max)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	char		 path[300], buf[512], *rp;
	size_t		 n = 0;
	int		 ppid, fd;
	ssize_t		 k;

	while (d != NULL && (de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY)) == -1)
			continue;
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		/* pid (comm) state ppid ... ; comm may hold spaces */
		if ((rp = strrchr(buf, ')')) == NULL ||
		    sscanf(rp + 2, "%*c %d", &ppid) != 1)
			continue;
		if (ppid == t->it_gw && rp[2] != 'Z')
			out[n++] = (pid_t)atoi(de->d_name);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

pid_t
it_busy_worker(struct it *t)
{
	return it_worker_in(t, "busy");
}

pid_t
it_worker_in(struct it *t, const char *state)
{
	struct it_resp	 r;
	json_t		*j, *w;
	size_t		 i;
	pid_t		 pid = 0;

	if (it_request(t, "GET", "/admin/workers", NULL, &r) == -1 ||
	    r.r_status != 200) {
		it_resp_free(&r);
		return 0;
	}
	j = it_json(r.r_body.b_data);
	json_array_foreach(json_object_get(j, "workers"), i, w) {
		const char *st = json_string_value(json_object_get(w, "state"));

		if (st != NULL && strcmp(st, state) == 0) {
			pid = (pid_t)json_integer_value(json_object_get(w, "pid"));
			break;
		}
	}
	json_decref(j);
	it_resp_free(&r);
	return pid;
}

int
it_connect(struct it *t)
{
	struct sockaddr_in	 sa;
	int			 fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)t->it_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

void
it_send_post(int fd, const char *path, const char *body, const char *extra)
{
	struct sockaddr_in	 sa;
	socklen_t		 slen = sizeof(sa);
	char			*req;
	int			 n;

	/* HTTP/1.0: streams are close-delimited, so raw readers need not
	 * undo chunked coding. The Host is what curl would send. */
	memset(&sa, 0, sizeof(sa));
	ck_assert_int_eq(getpeername(fd, (struct sockaddr *)&sa, &slen), 0);
	n = asprintf(&req, "POST %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n%s"
	    "\r\n%s", path, ntohs(sa.sin_port), strlen(body),
	    extra ? extra : "", body);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(write(fd, req, (size_t)n), n);
	free(req);
}

bool
it_read_until(int fd, struct buf *out, const char *needle, int timeout_ms)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	uint64_t	 end = it_now() + (uint64_t)timeout_ms;
	char		 tmp[4096];
	ssize_t		 k;

	buf_adds(out, "");
	while (strstr(out->b_data, needle) == NULL) {
		if (it_now() >= end ||
		    poll(&pfd, 1, (int)(end - it_now())) <= 0)
			return false;
		if ((k = read(fd, tmp, sizeof(tmp))) <= 0)
			return strstr(out->b_data, needle) != NULL;
		buf_add(out, tmp, (size_t)k);
	}
	return true;
}

int
it_fd_count(pid_t pid)
{
	char		 path[64];
	DIR		*d;
	int		 n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n - 2;
}

size_t
it_raw(struct it *t, const void *req, size_t n, struct buf *resp,
    int timeout_ms)
{
	struct pollfd		 pfd;
	uint64_t		 end = it_now() + (uint64_t)timeout_ms;
	char			 tmp[4096];
	ssize_t			 k;
	int			 fd = it_connect(t);

	if (n > 0)
		(void)!write(fd, req, n);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (it_now() < end) {
		if (poll(&pfd, 1, (int)(end - it_now())) <= 0)
			break;
		if ((k = read(fd, tmp, sizeof(tmp))) <= 0)
			break;
		buf_add(resp, tmp, (size_t)k);
	}
	close(fd);
	buf_adds(resp, "");
	return resp->b_len;
}

double
it_metric_in(const char *text, const char *series)
{
	const char	*p = text;
	size_t		 n = strlen(series);

	while ((p = strstr(p, series)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return atof(p + n + 1);
		p += n;
	}
	return -1;
}

double
it_metric(struct it *t, const char *series)
{
	struct it_resp	 r;
	double		 v;

	ck_assert_int_eq(it_request(t, "GET", "/metrics", NULL, &r), 0);
	v = it_metric_in(r.r_body.b_data != NULL ? r.r_body.b_data : "",
	    series);
	it_resp_free(&r);
	return v;
}

void
it_wait_idle(struct it *t, int n)
{
	struct it_resp	 r;
	json_t		*j;
	json_int_t	 idle = 0;
	uint64_t	 t0 = it_now();

	while (idle < n && it_now() - t0 < (uint64_t)it_slow(5000)) {
		ck_assert_int_eq(it_request(t, "GET", "/health", NULL, &r), 0);
		j = it_json(r.r_body.b_data);
		idle = json_integer_value(json_object_get(json_object_get(j,
		    "workers"), "idle"));
		json_decref(j);
		it_resp_free(&r);
		if (idle < n)
			it_sleep(20);
	}
	ck_assert_msg(idle >= n, "only %lld idle workers after 5 s",
	    (long long)idle);
}

Suite *
it_suite_fixture(const char *name, const struct it_case *c, size_t n,
    int timeout_s, void (*setup)(void), void (*teardown)(void))
{
	Suite	*s = suite_create(name);
	TCase	*tc;
	size_t	 i;

	for (i = 0; i < n; i++) {
		tc = test_case(s, c[i].ic_name, NULL, timeout_s);
		if (setup != NULL || teardown != NULL)
			tcase_add_checked_fixture(tc, setup, teardown);
		tcase_add_test(tc, c[i].ic_test);
	}
	return s;
}

Suite *
it_suite_cases(const char *name, const struct it_case *c, size_t n, int timeout_s)
{
	return it_suite_fixture(name, c, n, timeout_s, NULL, NULL);
}

int
it_main(Suite *s)
{
	int	 r;

	curl_global_init(CURL_GLOBAL_ALL);
	signal(SIGPIPE, SIG_IGN);
	r = check_main(s);
	curl_global_cleanup();
	return r;
}
