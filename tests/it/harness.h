/* harness.h - integration tests: start the mock, the gateway and its workers; speak HTTP. */
#ifndef SLUICE_IT_HARNESS_H
#define SLUICE_IT_HARNESS_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../common/buf.h"

struct it {
	char	 it_dir[256];		/* temporary config folder */
	char	 it_log[300];		/* gateway stderr */
	char	 it_build[256];		/* where the binaries are */
	pid_t	 it_mock;
	int	 it_mock_port;
	pid_t	 it_gw;
	int	 it_port;
	char	 it_users[128];		/* "a b": --user for each, or "" */
	char	 it_listen[64];		/* --listen "addr:0", or "" for
					   127.0.0.1:0 */
	char	 it_args[256];		/* "--a --b v": WilmerAI's flags
					   instead of --config-dir and
					   --state-dir, or "" */
	char	 it_host[48];		/* the gateway's address for
					   it_request and it_streams, or
					   "": 127.0.0.1 */
	char	 it_store[512];		/* the store's PostgreSQL URL when
					   the test's sluice.json names
					   one (dbq.h reads it there), or
					   "": SQLite in state/ */
};

/* Start the mock backend on a free port. Fails the test on error. */
void	it_mock_start(struct it *);

/* Start the test double $SLUICE_BUILD/tests/NAME (mock-llm, mock-wiki,
 * mock-research) with the NULL-terminated args (NULL: none, at most
 * 14); it prints "NAME listening on ADDR:PORT" once bound (ADDR
 * 127.0.0.1 unless args say --listen). Returns its pid, the port in
 * *port; fails the test when it does not start. */
pid_t	it_double_start(const char *name, const char *const *args,
	    int *port);

/* SIGTERM a test double and reap it; fails the test unless it exited
 * 0 (an ASan build reports leaks through its exit status). */
void	it_double_stop(pid_t);

/* A port on 127.0.0.1 where nothing listens: connecting is refused. */
int	it_dead_port(void);

/* A listener on 127.0.0.1:s_port that never accepts, its accept queue
 * full: connecting there times out. */
struct it_stuck {
	int	 s_fd[4];	/* the listener and what fills its queue */
	int	 s_port;
};
void	it_stuck_open(struct it_stuck *);
void	it_stuck_close(struct it_stuck *);

/* Write a config folder: user "it" whose custom workflow has one
 * streaming-capable Standard node on endpoint "Mock" (the mock, or
 * endpoint_url when not NULL). settings is the body of sluice.json
 * without braces, e.g. "\"min_workers\": 2" (NULL for none). */
void	it_config(struct it *, const char *settings, const char *endpoint_url);

/* Write endpoint "Mock" (the mock) of it_config anew, with extra JSON
 * members (e.g. "\"reasoningOutput\": \"field\""), or none when NULL. */
void	it_mock_endpoint(struct it *, const char *extra);

/* Start the gateway on a free port with the config folder and wait
 * until a worker is ready. env is NULL or "NAME=value" entries joined by
 * ';' for the gateway and its workers (e.g. "SLUICE_FAULT=crash"). */
void	it_gateway_start(struct it *, const char *env);

/* Stop the gateway with SIGTERM and expect a clean exit within
 * timeout_ms (returns its wait status), then the mock; remove the
 * folder. */
int	it_stop(struct it *, int timeout_ms);

/* it_stop, failing the test unless the gateway exited 0 within
 * 15 s. */
void	it_stop_clean(struct it *);

/* Run $SLUICE_BUILD/sluice-gateway (default build/) once with args
 * (NULL-terminated, at most 20), its standard output and error written
 * to the files out and err, as an offline job (--import-wilmer, ...).
 * Fails the test unless it exits within 20 s; returns its exit status. */
int	it_gateway_once(const char *const *args, const char *out,
	    const char *err);

/* it_gateway_once with the NULL-ended lists pre, then args (at most 20
 * in all), its output and errors in dir/out and dir/err and their text
 * in *out and *err (caller frees). Returns its exit status. */
int	it_gateway_job(const char *dir, const char *const *pre,
	    const char *const *args, char **out, char **err);

struct it_resp {
	long		 r_status;
	struct buf	 r_body;
	struct buf	 r_headers;
};

/* One request to the gateway (or to the mock when path starts with
 * "mock:"); body NULL for none. Returns 0 or -1 (transport error). */
int	it_request(struct it *, const char *method, const char *path,
	    const char *body, struct it_resp *);
/* The same to any url, with extra header lines (a NULL-terminated list,
 * or NULL). r is always initialised; the caller frees it. */
int	it_request_url(const char *method, const char *url,
	    const char *const *hdrs, const char *body, struct it_resp *r);
void	it_resp_free(struct it_resp *);

/* Header value (first match, case-insensitive) into out, cut to
 * outlen - 1 bytes; out, or NULL when the response has no such header. */
const char *it_header(const struct it_resp *, const char *name, char *out,
	    size_t outlen);
/* The same in header lines as curl wrote them (headers may be empty). */
const char *it_header_in(const struct buf *headers, const char *name,
	    char *out, size_t outlen);

/* The four ways to ask for a chat: the OpenAI and the Ollama chat
 * route, whole or streamed. */
enum it_way { IT_OPENAI, IT_OPENAI_STREAM, IT_OLLAMA, IT_OLLAMA_STREAM,
	IT_NWAYS };

const char	*it_way_name(enum it_way);	/* "ollama stream", ... */
bool		 it_way_stream(enum it_way);
bool		 it_way_ollama(enum it_way);
const char	*it_way_path(enum it_way);	/* "/api/chat", ... */
/* A body for way: model, stream and one user message; an OpenAI stream
 * asks for include_usage. Caller frees. */
char		*it_way_body(enum it_way, const char *model, const char *user);

/* Concurrent streaming POSTs (to /v1/chat/completions unless s_path). */
struct it_stream {
	const char	*s_body;
	struct buf	 s_out;
	long		 s_status;
	bool		 s_finished;
	uint64_t	 s_first_ms;	/* ms from start to the first byte */
	uint64_t	 s_end_ms;
	const char	*s_path;	/* NULL: /v1/chat/completions */
	int		 s_port;	/* 0: the gateway of the it given to
					   it_streams; else another one's */
	struct buf	*s_headers;	/* NULL, or receives the response's
					   header lines (caller frees) */
};

/* Run n streams to completion (or timeout_ms). tick, if not NULL, runs
 * every ~10 ms with the streams so a test can act mid-flight. */
void	it_streams(struct it *, struct it_stream *, size_t n, int timeout_ms,
	    void (*tick)(struct it *, struct it_stream *, size_t, void *),
	    void *arg);

/* Parse an OpenAI SSE body: concatenated delta.content, whether it ended
 * with [DONE], whether an error event came, the chunk count and
 * whether every chunk had the same id. Caller frees the text. */
struct sse_summary {
	char	*ss_text;
	bool	 ss_done;
	bool	 ss_error;
	bool	 ss_first_has_role;
	bool	 ss_one_id;
	char	 ss_finish[32];
	int	 ss_chunks;
};
void	it_sse_parse(const char *body, struct sse_summary *);

/* Pids of the gateway's children (its workers). */
size_t	it_worker_pids(struct it *, pid_t *, size_t max);

/* Pid of a worker currently busy per /proc state: the one whose
 * /health phase is not idle is unknowable, so tests pick any worker
 * holding a TCP connection to the mock. 0 when none. */
pid_t	it_busy_worker(struct it *);

/* Pid of a worker that /admin/workers lists in state ("busy", "after",
 * ...); 0 when none. */
pid_t	it_worker_in(struct it *, const char *state);

/* Wait for needle in the gateway log after byte *from; on success *from
 * moves past the match. */
bool	it_log_wait(struct it *, const char *needle, size_t *from,
	    int timeout_ms);

/* Milliseconds between the log line holding `first` (after byte from)
 * and the next line after it holding `second`, from the lines' own
 * timestamps; -1 when either is missing. */
long	it_log_gap(struct it *, size_t from, const char *first,
	    const char *second);

/* Size of the gateway log now. */
size_t	it_log_size(struct it *);

/* Send raw bytes on a new connection and read until the server closes or
 * timeout_ms passes. Returns bytes read. */
size_t	it_raw(struct it *, const void *req, size_t n, struct buf *resp,
	    int timeout_ms);

/* A new TCP connection to the gateway (test fails if it cannot). */
int	it_connect(struct it *);

/* Write an HTTP/1.0 POST of body to path on fd (streams come back
 * close-delimited, not chunked), with extra header lines. */
void	it_send_post(int fd, const char *path, const char *body,
	    const char *extra_headers);

/* Read from fd into out until needle appears, the peer closes, or
 * timeout_ms passes. Returns true when needle was seen. */
bool	it_read_until(int fd, struct buf *out, const char *needle,
	    int timeout_ms);

/* The value of one series ("name{labels}") in /metrics text, or -1. */
double	it_metric_in(const char *text, const char *series);

/* The same, fetched from the gateway's /metrics now. */
double	it_metric(struct it *, const char *series);

/* Wait until /health counts at least n idle workers (test fails after
 * 5 s). */
void	it_wait_idle(struct it *, int n);

/* Open descriptors of a process (from /proc). */
int	it_fd_count(pid_t);

/* Let user "it" of it_config run shared workflows too
 * (Workflows/_shared/<name>/, chosen by the model field). */
void	it_allow_shared(struct it *);

/* Set member key of user "it"'s file to value (the reference is
 * taken). */
void	it_user_set(struct it *, const char *key, json_t *value);

/* PromptTemplates/turns.json: <|system|>, <|user|> and <|assistant|>
 * turns whose suffixes start a line, so a "#mock" line ends with its
 * JSON in a completion prompt. */
void	it_turns_template(struct it *);

/* A backend for user "it": ApiTypes/<ep>.json ({"type": type,
 * "maxNewTokensPropertyName": "max_tokens"} and at_extra),
 * Endpoints/it/<ep>.json (url, model "m", the turns template, and
 * ep_extra) and, unless workflow is NULL, the shared workflow
 * Workflows/_shared/<workflow>/ with one Standard node on ep (see
 * it_allow_shared). Each extra is "" or ", \"key\": value, ...". */
void	it_backend(struct it *, const char *workflow, const char *ep,
	    const char *type, const char *url, const char *at_extra,
	    const char *ep_extra);

/* Write a file of the config folder (rel like "Endpoints/it/X.json"),
 * creating folders on the way. */
void	it_file(struct it *, const char *rel, const char *text);

/* The whole text of the file at path, "" when it cannot be read
 * (caller frees). */
char	*it_file_text(const char *path);

/* Write the folder's sluice.json anew (body without braces). */
void	it_settings(struct it *, const char *settings);

/* The mock's log of the requests it received (GET /mock/requests),
 * cleared afterwards when clear is set. Caller decrefs. */
json_t	*it_mock_log(struct it *, bool clear);

/* How many requests the mock has received (its /mock/stats). */
long long	it_mock_requests(struct it *);

/* GET path (as it_request takes it) and its body as JSON; the test
 * fails on a failed request or invalid JSON. Caller decrefs. */
json_t	*it_get_json(struct it *, const char *path);

/* GET http://127.0.0.1:port + path (a test double's) and its body as
 * JSON; the test fails on a failed request or invalid JSON. Caller
 * decrefs. */
json_t	*it_double_json(int port, const char *path);

/* Ask the gateway's OpenAI chat route, streamed or not, with one user
 * message: the HTTP status in *status, and the answer's text when it
 * is 200 (caller frees; NULL otherwise). A stream must end in [DONE]
 * without an error. */
char	*it_chat_text(struct it *, bool stream, const char *user,
	    long *status);

/* One figure of the mock's /mock/stats ("requests", "active",
 * "client_gone"); the test fails when it has none. */
long long	it_mock_stat(struct it *, const char *name);

/* Wait until that figure is at least n; false after timeout_ms. */
bool	it_mock_wait(struct it *, const char *name, long long n,
	    int timeout_ms);

/* Parse JSON (test fails on invalid JSON). */
json_t	*it_json(const char *text);

/* Monotonic milliseconds. */
uint64_t it_now(void);

/* main() of an integration suite: libcurl set up, SIGPIPE ignored,
 * then check_main(s). Returns the process exit status. */
int	it_main(Suite *s);

/* One case of a suite: its name (for CK_RUN_CASE) and its test. */
struct it_case {
	const char	*ic_name;
	const TTest	*ic_test;
};

/* A suite of one TCase per case, each with a timeout of timeout_s. */
Suite	*it_suite_cases(const char *name, const struct it_case *, size_t n,
	    int timeout_s);

/* The same with a checked fixture (run in each test's own process)
 * around every case; either function may be NULL. */
Suite	*it_suite_fixture(const char *name, const struct it_case *, size_t n,
	    int timeout_s, void (*setup)(void), void (*teardown)(void));

/* Sleep milliseconds. */
void	it_sleep(int ms);

/* A timeout of ms for the gateway's own pace: ten times longer under
 * SLUICE_VALGRIND=DIR (make valgrind), which runs the gateway and its
 * workers under valgrind with their reports in DIR. */
int	it_slow(int ms);

#endif
