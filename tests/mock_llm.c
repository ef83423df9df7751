/* mock_llm.c - scriptable mock LLM backends for the tests and the bench. */
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <jansson.h>

#include "../common/buf.h"
#include "../common/clock.h"
#include "../common/log.h"
#include "../common/xmem.h"
#include "mock_embed.h"

#define LOG_MAX		256		/* requests kept for /mock/requests */
#define OUT_HIWAT	(256 * 1024)	/* pause a stream above this output */
#define MAX_BODY	(64 * 1024 * 1024)
#define BACKLOG		4096		/* the paced bench connects 1,024 at once */
#define MAX_DELAY_MS	(24 * 3600 * 1000)
#define ARGS_CHUNK	8		/* tool arguments piece, code points */
#define EVQ_MAX		8		/* events queued in one step */
#define DEFAULT_TEXT	"The quick brown fox jumps over the lazy dog."
#define MOCK_MARK	"#mock "
#define MOCK_MARK_LEN	(sizeof(MOCK_MARK) - 1)
#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

/* The backend dialects; each LLM route speaks one. */
enum dkind {
	DK_CHAT, DK_COMPL, DK_OCHAT, DK_OGEN, DK_KOBOLD, DK_CLAUDE
};

/* How a stream is cut into events. */
enum framing {
	FR_SSE,			/* [event: X] data: JSON, blank line */
	FR_NDJSON		/* one JSON object a line */
};

/* Whether the request streams. */
enum smode {
	SM_FIELD,		/* "stream": true */
	SM_UNLESS_FALSE,	/* unless "stream": false (Ollama) */
	SM_ALWAYS,
	SM_NEVER
};

/* How scripted tool calls are streamed. */
enum tmode {
	TL_NONE,		/* ignored */
	TL_DELTAS,		/* a head piece, then argument fragments */
	TL_LINE			/* all calls in one piece (Ollama) */
};

enum pkind { PK_TEXT, PK_TOOL_HEAD, PK_TOOL_ARGS, PK_TOOL_LINE };

/* Stages of a reply; non-stream replies go from MS_HEAD straight out.
 * MS_FIRST waits first_ms before MS_OPEN sends the opening events. */
enum mstage {
	MS_HEAD, MS_FIRST, MS_OPEN, MS_SILENT, MS_PIECES, MS_TAIL, MS_END,
	MS_CUT
};

/* What a stage did: go on, wait for a timer, or the request is gone. */
enum step { STEP_NEXT, STEP_WAIT, STEP_GONE };

/* An owned string that may hold NUL bytes. */
struct mstr {
	char	*ms_p;
	size_t	 ms_n;
};

/* A scripted tool call. */
struct mtool {
	struct mstr	 t_name;
	struct mstr	 t_args;	/* the arguments as JSON text */
	bool		 t_obj;		/* t_args is a JSON object */
};

/* The per-request behaviour: flags, then "#mock {...}" overrides. */
struct script {
	struct mstr	 sc_text;
	struct mstr	 sc_finish;
	struct mstr	 sc_redirect;		/* Location; empty: none */
	struct mstr	 sc_error;		/* status message; empty: default */
	struct mstr	 sc_retry_after;	/* Retry-After; empty: none */
	struct mtool	*sc_tools;
	size_t		 sc_ntools;
	int		 sc_chunk;
	int		 sc_delay_ms;
	int		 sc_head_delay_ms;
	int		 sc_first_ms;		/* head to the first event */
	int		 sc_silent_ms;
	int		 sc_status;		/* 0: answer normally */
	int		 sc_status_times;	/* 0: status every time */
	int		 sc_disconnect_after;	/* -1: never */
	int		 sc_split;		/* 0: whole events */
	bool		 sc_hang;
	bool		 sc_garbage;
	bool		 sc_usage;
	bool		 sc_no_done;
	bool		 sc_forever;
	bool		 sc_crlf;
	bool		 sc_echo;
	bool		 sc_text_set;	/* "text" was scripted */
	bool		 sc_finish_set;	/* "finish_reason" was */
};

/* A slice of the text (PK_TEXT) or of a tool's arguments. */
struct piece {
	size_t		 p_off;
	size_t		 p_len;
	enum pkind	 p_kind;
	int		 p_tool;
};

struct mreq;

/* One backend dialect: its route and how it answers. The emitters
 * write whole events with ev_open/ev_close; NULL ones send nothing. */
struct dialect {
	const char	*d_path;
	enum dkind	 d_kind;
	enum framing	 d_framing;
	enum smode	 d_smode;
	enum tmode	 d_tools;
	const char	*d_finish;	/* default finish reason */
	const char	*d_tfinish;	/* the same with tool calls */
	/* Checks the body; copies the scripted text to user. */
	int		(*d_parse)(struct mreq *, const json_t *,
			    struct buf *, const char **);
	/* An error body: code 0 for a bad request, else a scripted one. */
	void		(*d_error)(struct buf *, int, const char *);
	void		(*d_prefix)(struct mreq *);
	void		(*d_full)(struct mreq *, struct buf *);
	void		(*d_head)(struct mreq *);
	void		(*d_piece)(struct mreq *, const struct piece *);
	void		(*d_tail)(struct mreq *);
};

/* One LLM request being answered. Freed exactly once, by whoever ends
 * it: the reply's end, the client leaving, a cut, or shutdown. */
struct mreq {
	TAILQ_ENTRY(mreq)	 m_entry;
	struct evhttp_request	*m_req;
	struct evhttp_connection *m_evcon;
	json_t			*m_rec;		/* log record, one ref */
	const struct dialect	*m_dl;
	struct script		 m_sc;
	enum mstage		 m_stage;
	bool			 m_stream;
	bool			 m_usage;
	bool			 m_delayed;	/* delay_ms done for next */
	bool			 m_direct;	/* --pace, chunked: write
						   events straight out */
	bool			 m_paced;	/* --pace: waits run to m_due */
	uint64_t		 m_due;		/* --pace: when the next
						   event is due, us */
	int			 m_block;	/* Claude: open block, -1 */
	struct event		*m_timer;
	struct event		*m_watch;	/* EOF watch before the head */
	struct piece		*m_pieces;
	size_t			 m_npieces;
	size_t			 m_cap;
	size_t			 m_ntext;	/* text pieces (first) */
	size_t			 m_next;	/* next piece index */
	size_t			 m_sent;	/* pieces sent */
	size_t			 m_ptokens;
	size_t			 m_evq[EVQ_MAX]; /* split: lengths */
	size_t			 m_nevq;
	long long		 m_created;
	char			 m_stamp[40];	/* created_at (UTC) */
	struct buf		 m_model;	/* JSON-encoded model name */
	struct buf		 m_prefix;	/* JSON events start so */
	struct buf		 m_ev;		/* event being built */
	struct buf		 m_out;		/* split: bytes still to send */
};

TAILQ_HEAD(mreq_list, mreq);

struct mock {
	struct event_base	*mk_base;
	struct evhttp		*mk_http;
	struct evconnlistener	*mk_lev;
	struct event		*mk_relisten;
	struct event		*mk_sigterm;
	struct event		*mk_sigint;
	struct evbuffer		*mk_scratch;
	struct mreq_list	 mk_active;
	json_t			*mk_log[LOG_MAX];
	size_t			 mk_log_head;	/* index of the oldest */
	size_t			 mk_log_len;
	unsigned long long	 mk_nrequests;
	unsigned long long	 mk_nactive;
	unsigned long long	 mk_ngone;
	json_t			*mk_seen;	/* status_times: "#mock" line
						   -> requests that carried it */
	const char		*mk_listen;
	const char		*mk_text;
	int			 mk_chunk;
	int			 mk_delay_ms;
	int			 mk_first_ms;
	int			 mk_pace_events;	/* --pace: 0 = off */
	char			*mk_pace_text;	/* its text, owned */
	bool			 mk_quiet;
};

static struct mock	 mk;

static void	stream_run(struct mreq *);

/* ---- small helpers ---------------------------------------------- */

static void
mstr_set(struct mstr *s, const char *p, size_t n)
{
	free(s->ms_p);
	s->ms_p = xmalloc(n + 1);
	if (n > 0)
		memcpy(s->ms_p, p, n);
	s->ms_p[n] = '\0';
	s->ms_n = n;
}

/* Appends s as a JSON string literal; s is UTF-8 and may hold NULs. */
static void
json_str(struct buf *b, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i, run = 0;
	unsigned char		 c;
	char			 esc[7];

	buf_reserve(b, n + 2);
	buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_add(b, s + run, i - run);
		run = i + 1;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			buf_add(b, esc, 2);
		} else if (c == '\n')
			buf_adds(b, "\\n");
		else if (c == '\r')
			buf_adds(b, "\\r");
		else if (c == '\t')
			buf_adds(b, "\\t");
		else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			buf_add(b, esc, 6);
		}
	}
	buf_add(b, s + run, n - run);
	buf_addc(b, '"');
}

/* A JSON string for untrusted bytes: invalid UTF-8 becomes '?'. */
static json_t *
json_lossy(const char *s, size_t n)
{
	json_t	*j;
	char	*copy;
	size_t	 i;

	if ((j = json_stringn(s, n)) != NULL)
		return j;
	copy = xmalloc(n + 1);
	for (i = 0; i < n; i++)
		copy[i] = ((unsigned char)s[i] & 0x80) ? '?' : s[i];
	j = json_stringn(copy, n);
	free(copy);
	return j != NULL ? j : json_string("");
}

static size_t
utf8_len(const char *s, size_t n)
{
	size_t	 i, k = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			k++;
	return k;
}

static bool
is_ws(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static const char *
method_name(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return "GET";
	case EVHTTP_REQ_POST:
		return "POST";
	case EVHTTP_REQ_HEAD:
		return "HEAD";
	case EVHTTP_REQ_PUT:
		return "PUT";
	case EVHTTP_REQ_DELETE:
		return "DELETE";
	default:
		return "OTHER";
	}
}

static void
json_mstr(struct buf *b, const struct mstr *s)
{
	json_str(b, s->ms_p, s->ms_n);
}

/* "2026-01-02T03:04:05.678Z" for a wall-clock time in ms. */
static void
iso_stamp(char *s, size_t n, uint64_t ms)
{
	time_t		 t = (time_t)(ms / 1000);
	struct tm	 tm;
	size_t		 k;

	if (gmtime_r(&t, &tm) == NULL ||
	    (k = strftime(s, n, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
		snprintf(s, n, "1970-01-01T00:00:00.000Z");
		return;
	}
	snprintf(s + k, n - k, ".%03uZ", (unsigned)(ms % 1000));
}

/* ---- plain replies ---------------------------------------------- */

static void
send_json(struct evhttp_request *req, int code, const char *body, size_t n)
{
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evbuffer_add(mk.mk_scratch, body, n);
	evhttp_send_reply(req, code, NULL, mk.mk_scratch);
	evbuffer_drain(mk.mk_scratch, evbuffer_get_length(mk.mk_scratch));
}

static void
error_body(struct buf *b, const char *msg, const char *type)
{
	buf_adds(b, "{\"error\":{\"message\":");
	json_str(b, msg, strlen(msg));
	buf_adds(b, ",\"type\":");
	json_str(b, type, strlen(type));
	buf_adds(b, "}}");
}

static void
send_error(struct evhttp_request *req, int code, const char *msg)
{
	struct buf	 b = BUF_INIT;

	error_body(&b, msg, "invalid_request_error");
	send_json(req, code, b.b_data, b.b_len);
	buf_free(&b);
}

/* ---- request log ------------------------------------------------ */

static void
log_push(json_t *rec)
{
	size_t	 i;

	if (mk.mk_log_len == LOG_MAX) {
		json_decref(mk.mk_log[mk.mk_log_head]);
		mk.mk_log[mk.mk_log_head] = json_incref(rec);
		mk.mk_log_head = (mk.mk_log_head + 1) % LOG_MAX;
		return;
	}
	i = (mk.mk_log_head + mk.mk_log_len) % LOG_MAX;
	mk.mk_log[i] = json_incref(rec);
	mk.mk_log_len++;
}

static void
log_clear(void)
{
	size_t	 i;

	for (i = 0; i < mk.mk_log_len; i++)
		json_decref(mk.mk_log[(mk.mk_log_head + i) % LOG_MAX]);
	mk.mk_log_head = mk.mk_log_len = 0;
}

/* Headers as an object; a repeated name gets its values joined. */
static json_t *
log_headers(struct evhttp_request *req)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;
	json_t			*o = json_object(), *old;
	char			*joined;

	TAILQ_FOREACH(kv, h, next) {
		old = json_object_get(o, kv->key);
		if (old == NULL) {
			json_object_set_new(o, kv->key,
			    json_lossy(kv->value, strlen(kv->value)));
			continue;
		}
		joined = xasprintf("%s, %s", json_string_value(old),
		    kv->value);
		json_object_set_new(o, kv->key,
		    json_lossy(joined, strlen(joined)));
		free(joined);
	}
	return o;
}

/* Records a request in the ring; returns a reference for the caller. */
static json_t *
log_record(struct evhttp_request *req, const char *path, json_t *body,
    const char *raw, size_t rawlen)
{
	json_t	*r = json_object();

	json_object_set_new(r, "t_ms", json_integer(
	    (json_int_t)clock_mono_ms()));
	json_object_set_new(r, "t_end_ms", json_null());
	json_object_set_new(r, "method", json_string(
	    method_name(evhttp_request_get_command(req))));
	json_object_set_new(r, "path", json_lossy(path, strlen(path)));
	json_object_set_new(r, "headers", log_headers(req));
	json_object_set_new(r, "body", body != NULL ? json_incref(body) :
	    json_lossy(raw, rawlen));
	log_push(r);
	return r;
}

/* Stamps the end time and drops the caller's reference. */
static void
rec_close(json_t *rec)
{
	json_object_set_new(rec, "t_end_ms", json_integer(
	    (json_int_t)clock_mono_ms()));
	json_decref(rec);
}

/* ---- script ----------------------------------------------------- */

enum sk_type { SK_INT, SK_BOOL, SK_STR, SK_TOOLS };

struct skey {
	const char	*k_name;
	enum sk_type	 k_type;
	size_t		 k_off;
	int		 k_min;
	int		 k_max;
};

#define SK(n, t, f, lo, hi)	{ n, t, offsetof(struct script, f), lo, hi }
static const struct skey skeys[] = {
	SK("text", SK_STR, sc_text, 0, 0),
	SK("finish_reason", SK_STR, sc_finish, 0, 0),
	SK("chunk", SK_INT, sc_chunk, 0, INT_MAX),
	SK("delay_ms", SK_INT, sc_delay_ms, 0, MAX_DELAY_MS),
	SK("head_delay_ms", SK_INT, sc_head_delay_ms, 0, MAX_DELAY_MS),
	SK("first_ms", SK_INT, sc_first_ms, 0, MAX_DELAY_MS),
	SK("silent_ms", SK_INT, sc_silent_ms, 0, MAX_DELAY_MS),
	SK("status", SK_INT, sc_status, 100, 599),
	SK("status_times", SK_INT, sc_status_times, 1, INT_MAX),
	SK("disconnect_after", SK_INT, sc_disconnect_after, 0, INT_MAX),
	SK("split", SK_INT, sc_split, 0, INT_MAX),
	SK("hang", SK_BOOL, sc_hang, 0, 0),
	SK("garbage", SK_BOOL, sc_garbage, 0, 0),
	SK("usage", SK_BOOL, sc_usage, 0, 0),
	SK("no_done", SK_BOOL, sc_no_done, 0, 0),
	SK("forever", SK_BOOL, sc_forever, 0, 0),
	SK("crlf", SK_BOOL, sc_crlf, 0, 0),
	SK("echo", SK_BOOL, sc_echo, 0, 0),
	SK("tool_calls", SK_TOOLS, sc_tools, 0, 0),
	SK("redirect", SK_STR, sc_redirect, 0, 0),
	SK("error", SK_STR, sc_error, 0, 0),
	SK("retry_after", SK_STR, sc_retry_after, 0, 0),
};
#undef SK

static void
script_init(struct script *sc)
{
	memset(sc, 0, sizeof(*sc));
	mstr_set(&sc->sc_text, mk.mk_text, strlen(mk.mk_text));
	mstr_set(&sc->sc_finish, "stop", 4);
	sc->sc_chunk = mk.mk_chunk;
	sc->sc_delay_ms = mk.mk_delay_ms;
	sc->sc_first_ms = mk.mk_first_ms;
	sc->sc_disconnect_after = -1;
}

static void
tools_free(struct script *sc)
{
	size_t	 i;

	for (i = 0; i < sc->sc_ntools; i++) {
		free(sc->sc_tools[i].t_name.ms_p);
		free(sc->sc_tools[i].t_args.ms_p);
	}
	free(sc->sc_tools);
	sc->sc_tools = NULL;
	sc->sc_ntools = 0;
}

static void
script_free(struct script *sc)
{
	free(sc->sc_text.ms_p);
	free(sc->sc_finish.ms_p);
	free(sc->sc_redirect.ms_p);
	free(sc->sc_error.ms_p);
	free(sc->sc_retry_after.ms_p);
	sc->sc_text.ms_p = sc->sc_finish.ms_p = sc->sc_redirect.ms_p = NULL;
	sc->sc_error.ms_p = sc->sc_retry_after.ms_p = NULL;
	tools_free(sc);
}

/* One checked tool call: its name, and its arguments as JSON text (an
 * object is written compactly, a string is taken as it is). */
static void
tool_set(struct mtool *tl, const json_t *t)
{
	const json_t	*name = json_object_get(t, "name");
	const json_t	*args = json_object_get(t, "arguments");
	json_t		*o;
	char		*s = NULL;

	mstr_set(&tl->t_name, json_string_value(name),
	    json_string_length(name));
	if (json_is_string(args)) {
		mstr_set(&tl->t_args, json_string_value(args),
		    json_string_length(args));
		o = json_loadb(tl->t_args.ms_p, tl->t_args.ms_n, 0, NULL);
		tl->t_obj = json_is_object(o);
		json_decref(o);
		return;
	}
	if (args != NULL && (s = json_dumps(args, JSON_COMPACT)) == NULL)
		fatalx("json_dumps");
	mstr_set(&tl->t_args, s != NULL ? s : "{}", s != NULL ?
	    strlen(s) : 2);
	free(s);
	tl->t_obj = true;
}

/* "tool_calls": [{"name": S, "arguments": {...} or "..."}, ...] */
static int
script_tools(struct script *sc, const json_t *v)
{
	const json_t	*t, *args;
	size_t		 i, n;

	if (!json_is_array(v))
		return -1;
	n = json_array_size(v);
	for (i = 0; i < n; i++) {
		t = json_array_get(v, i);
		args = json_object_get(t, "arguments");
		if (!json_is_string(json_object_get(t, "name")) ||
		    (args != NULL && !json_is_object(args) &&
		    !json_is_string(args)))
			return -1;
	}
	tools_free(sc);
	if (n == 0)
		return 0;
	sc->sc_tools = xcalloc(n, sizeof(*sc->sc_tools));
	sc->sc_ntools = n;
	for (i = 0; i < n; i++)
		tool_set(&sc->sc_tools[i], json_array_get(v, i));
	return 0;
}

/* One "#mock" key; a bad key or value is reported and skipped. */
static void
script_set(struct script *sc, const char *key, const json_t *v)
{
	const struct skey	*k;
	char			*base = (char *)sc;
	json_int_t		 i;

	for (k = skeys; k < skeys + nitems(skeys); k++)
		if (strcmp(k->k_name, key) == 0)
			break;
	if (k == skeys + nitems(skeys)) {
		log_warnx("#mock: unknown key \"%s\" ignored", key);
		return;
	}
	switch (k->k_type) {
	case SK_INT:
		i = json_is_integer(v) ? json_integer_value(v) : -1;
		if (!json_is_integer(v) || i < k->k_min || i > k->k_max)
			break;
		*(int *)(void *)(base + k->k_off) = (int)i;
		return;
	case SK_BOOL:
		if (!json_is_boolean(v))
			break;
		*(bool *)(void *)(base + k->k_off) = json_is_true(v);
		return;
	case SK_STR:
		if (!json_is_string(v))
			break;
		mstr_set((struct mstr *)(void *)(base + k->k_off),
		    json_string_value(v), json_string_length(v));
		return;
	case SK_TOOLS:
		if (script_tools(sc, v) == -1)
			break;
		return;
	}
	log_warnx("#mock: bad value for \"%s\" ignored", key);
}

/* echo: s without the "#mock" line (and the line break before it when
 * it is the last line). */
static void
script_echo(struct script *sc, const char *s, size_t n, const char *mark)
{
	size_t		 pre = (size_t)(mark - s), post;
	const char	*eol = memchr(mark, '\n', n - pre);
	struct buf	 b = BUF_INIT;

	post = eol != NULL ? (size_t)(eol - s) + 1 : n;
	if (post == n && pre > 0 && s[pre - 1] == '\n') {
		pre--;
		if (pre > 0 && s[pre - 1] == '\r')
			pre--;
	}
	buf_add(&b, s, pre);
	buf_add(&b, s + post, n - post);
	mstr_set(&sc->sc_text, b.b_data, b.b_len);
	buf_free(&b);
}

/* status_times: how many requests (this one included) carried the
 * script line js[0..jn). */
static json_int_t
script_seen(const char *js, size_t jn)
{
	char		*key = xmalloc(jn + 1);
	json_int_t	 n;

	memcpy(key, js, jn);
	key[jn] = '\0';
	if (mk.mk_seen == NULL)
		mk.mk_seen = json_object();
	n = json_integer_value(json_object_get(mk.mk_seen, key)) + 1;
	json_object_set_new(mk.mk_seen, key, json_integer(n));
	free(key);
	return n;
}

/* Applies "#mock {json}" found in the user text s, if any. */
static void
script_parse(struct script *sc, const char *s, size_t n)
{
	const char	*mark, *js, *eol;
	size_t		 jn;
	json_t		*o;
	void		*it;
	json_error_t	 je;

	if (s == NULL || (mark = memmem(s, n, MOCK_MARK,
	    MOCK_MARK_LEN)) == NULL)
		return;
	js = mark + MOCK_MARK_LEN;
	eol = memchr(js, '\n', n - (size_t)(js - s));
	jn = (size_t)((eol != NULL ? eol : s + n) - js);
	if (jn > 0 && js[jn - 1] == '\r')
		jn--;
	o = json_loadb(js, jn, 0, &je);
	if (!json_is_object(o)) {
		log_warnx("#mock: not a JSON object: %s", o != NULL ?
		    "wrong type" : je.text);
		json_decref(o);
		return;
	}
	for (it = json_object_iter(o); it != NULL;
	    it = json_object_iter_next(o, it))
		script_set(sc, json_object_iter_key(it),
		    json_object_iter_value(it));
	sc->sc_text_set = json_is_string(json_object_get(o, "text"));
	sc->sc_finish_set = json_is_string(json_object_get(o,
	    "finish_reason"));
	json_decref(o);
	/* A backend that recovers: the status only for the first few
	 * requests with this very line. */
	if (sc->sc_status != 0 && sc->sc_status_times > 0 &&
	    script_seen(js, jn) > sc->sc_status_times)
		sc->sc_status = 0;
	if (sc->sc_echo)
		script_echo(sc, s, n, mark);
}

/* What the dialect makes of the script: tool calls only where it has
 * them; with tool calls the text defaults to empty; its finish reason. */
static void
script_dialect(struct script *sc, const struct dialect *d)
{
	const char	*fin;

	if (d->d_tools == TL_NONE)
		tools_free(sc);
	if (sc->sc_ntools > 0 && !sc->sc_text_set && !sc->sc_echo)
		mstr_set(&sc->sc_text, "", 0);
	if (!sc->sc_finish_set) {
		fin = sc->sc_ntools > 0 ? d->d_tfinish : d->d_finish;
		mstr_set(&sc->sc_finish, fin, strlen(fin));
	}
}

/* ---- per-request state ------------------------------------------ */

static void	on_close(struct evhttp_connection *, void *);
static void	on_timer(evutil_socket_t, short, void *);
static void	on_watch(evutil_socket_t, short, void *);

static struct mreq *
mreq_new(struct evhttp_request *req, json_t *rec, const struct dialect *d)
{
	struct mreq	*m = xcalloc(1, sizeof(*m));

	m->m_req = req;
	m->m_evcon = evhttp_request_get_connection(req);
	m->m_rec = rec;
	m->m_dl = d;
	m->m_block = -1;
	buf_init(&m->m_model);
	buf_init(&m->m_prefix);
	buf_init(&m->m_ev);
	buf_init(&m->m_out);
	script_init(&m->m_sc);
	TAILQ_INSERT_TAIL(&mk.mk_active, m, m_entry);
	mk.mk_nactive++;
	evhttp_connection_set_closecb(m->m_evcon, on_close, m);
	return m;
}

static void
watch_stop(struct mreq *m)
{
	if (m->m_watch != NULL)
		event_free(m->m_watch);
	m->m_watch = NULL;
}

/* Forgets m; the caller has dealt with the request and closecb. */
static void
mreq_free(struct mreq *m)
{
	TAILQ_REMOVE(&mk.mk_active, m, m_entry);
	mk.mk_nactive--;
	if (m->m_timer != NULL)
		event_free(m->m_timer);
	watch_stop(m);
	buf_free(&m->m_model);
	buf_free(&m->m_prefix);
	buf_free(&m->m_ev);
	buf_free(&m->m_out);
	script_free(&m->m_sc);
	free(m->m_pieces);
	json_decref(m->m_rec);
	free(m);
}

static void
rec_end(struct mreq *m)
{
	json_object_set_new(m->m_rec, "t_end_ms", json_integer(
	    (json_int_t)clock_mono_ms()));
}

/* Answers the whole reply at once and frees m. */
static void
mreq_reply(struct mreq *m, int code, const char *body, size_t n)
{
	rec_end(m);
	evhttp_connection_set_closecb(m->m_evcon, NULL, NULL);
	send_json(m->m_req, code, body, n);
	mreq_free(m);
}

static void
mreq_error(struct mreq *m, int code, const char *msg)
{
	struct buf	 b = BUF_INIT;

	m->m_dl->d_error(&b, 0, msg);
	mreq_reply(m, code, b.b_data, b.b_len);
	buf_free(&b);
}

/* Ends a started stream normally and frees m. */
static void
mreq_end_stream(struct mreq *m)
{
	rec_end(m);
	evhttp_connection_set_closecb(m->m_evcon, NULL, NULL);
	evhttp_send_reply_end(m->m_req);
	mreq_free(m);
}

/* Closes the connection without (finishing) a reply: a cut, or a client
 * seen gone before the head. libevent frees the request with it. */
static void
mreq_drop(struct mreq *m, bool gone)
{
	struct evhttp_connection	*evcon = m->m_evcon;

	if (gone)
		mk.mk_ngone++;
	rec_end(m);
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	mreq_free(m);
	evhttp_connection_free(evcon);
}

/* The connection is going away. A request detached from it (client
 * gone mid-reply) is still ours to end, exactly once. */
static void
on_close(struct evhttp_connection *evcon, void *arg)
{
	struct mreq	*m = arg;

	if (evhttp_request_get_connection(m->m_req) != NULL) {
		mreq_free(m);
		return;
	}
	mk.mk_ngone++;
	rec_end(m);
	evhttp_send_reply_end(m->m_req);
	mreq_free(m);
}

static void
arm_tv(struct mreq *m, const struct timeval *tv)
{
	if (m->m_timer == NULL &&
	    (m->m_timer = evtimer_new(mk.mk_base, on_timer, m)) == NULL)
		fatalx("evtimer_new");
	if (evtimer_add(m->m_timer, tv) == -1)
		fatalx("evtimer_add");
}

static void
arm(struct mreq *m, int ms)
{
	struct timeval	 tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	arm_tv(m, &tv);
}

static uint64_t
mono_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* A wait of ms in --pace: counted from when the last one was due, not
 * from now, so that late wake-ups on a busy machine do not add up and
 * event k leaves first_ms + k * gap after the head. Elsewhere: arm. */
static void
arm_paced(struct mreq *m, int ms)
{
	struct timeval	 tv;
	uint64_t	 now, wait;

	if (!m->m_paced) {
		arm(m, ms);
		return;
	}
	now = mono_us();
	m->m_due += (uint64_t)ms * 1000;
	wait = m->m_due > now ? m->m_due - now : 0;
	tv.tv_sec = (time_t)(wait / 1000000);
	tv.tv_usec = (suseconds_t)(wait % 1000000);
	arm_tv(m, &tv);
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	stream_run(arg);
}

/* Before the head, evhttp does not read the socket, so it cannot see
 * the client leave: peek at it ourselves. */
static void
watch_start(struct mreq *m)
{
	struct bufferevent	*bev;
	evutil_socket_t		 fd;

	bev = evhttp_connection_get_bufferevent(m->m_evcon);
	fd = bufferevent_getfd(bev);
	m->m_watch = event_new(mk.mk_base, fd, EV_READ | EV_PERSIST,
	    on_watch, m);
	if (m->m_watch == NULL || event_add(m->m_watch, NULL) == -1)
		fatalx("watch_start: event_new");
}

static void
on_watch(evutil_socket_t fd, short what, void *arg)
{
	struct mreq	*m = arg;
	char		 c;
	ssize_t		 n;

	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n > 0) {
		/* Pipelined bytes: EOF can no longer be seen; stop. */
		watch_stop(m);
		return;
	}
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	mreq_drop(m, true);
}

static size_t
out_len(const struct mreq *m)
{
	struct bufferevent	*bev;

	bev = evhttp_connection_get_bufferevent(m->m_evcon);
	return evbuffer_get_length(bufferevent_get_output(bev));
}

/* ---- events (SSE or NDJSON) ------------------------------------- */

/* Whether m's events may skip evhttp (chunk_direct): in --pace, once
 * evhttp_send_reply_start has chosen chunked encoding. */
static bool
direct_ok(struct mreq *m)
{
	const char	*te;

	if (mk.mk_pace_events == 0)
		return false;
	te = evhttp_find_header(evhttp_request_get_output_headers(m->m_req),
	    "Transfer-Encoding");
	return te != NULL && strcasecmp(te, "chunked") == 0;
}

/* --pace: one HTTP chunk straight to the socket when nothing is queued
 * before it, sparing the bufferevent's write event (two epoll_ctl
 * calls and a wake-up per event). What the socket does not take now is
 * queued on the bufferevent. False when evhttp must send it: not
 * m_direct, bytes queued, or the write failed (evhttp then queues it,
 * or meets the same error). */
static bool
chunk_direct(struct mreq *m, const char *p, size_t n)
{
	struct bufferevent	*bev;
	char			 head[24];
	struct iovec		 iov[3];
	ssize_t			 w;
	size_t			 i, off;

	if (!m->m_direct || n == 0)
		return false;
	bev = evhttp_connection_get_bufferevent(m->m_evcon);
	if (evbuffer_get_length(bufferevent_get_output(bev)) > 0)
		return false;
	iov[0].iov_base = head;
	iov[0].iov_len = (size_t)snprintf(head, sizeof(head), "%zx\r\n", n);
	iov[1].iov_base = (void *)(uintptr_t)p;
	iov[1].iov_len = n;
	iov[2].iov_base = (void *)(uintptr_t)"\r\n";
	iov[2].iov_len = 2;
	if ((w = writev(bufferevent_getfd(bev), iov, 3)) == -1)
		return false;
	for (i = 0, off = (size_t)w; i < 3; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		bufferevent_write(bev, (char *)iov[i].iov_base + off,
		    iov[i].iov_len - off);
		off = 0;
	}
	return true;
}

static void
send_chunk(struct mreq *m, const char *p, size_t n)
{
	if (chunk_direct(m, p, n))
		return;
	evbuffer_add(mk.mk_scratch, p, n);
	evhttp_send_reply_chunk(m->m_req, mk.mk_scratch);
	evbuffer_drain(mk.mk_scratch, evbuffer_get_length(mk.mk_scratch));
}

static const char *
eol(const struct mreq *m)
{
	return m->m_sc.sc_crlf ? "\r\n" : "\n";
}

/* Terminates the event in m_ev and sends it, or queues it for split. */
static void
ev_close(struct mreq *m)
{
	struct buf	*b = &m->m_ev;

	buf_adds(b, eol(m));
	if (m->m_dl->d_framing == FR_SSE)
		buf_adds(b, eol(m));
	if (m->m_sc.sc_split == 0) {
		send_chunk(m, b->b_data, b->b_len);
		return;
	}
	if (m->m_nevq == EVQ_MAX)
		fatalx("ev_close: too many events in one step");
	m->m_evq[m->m_nevq++] = b->b_len;
	buf_add(&m->m_out, b->b_data, b->b_len);
}

/* Starts an event: its "event:" line when named, "data: " for SSE, then
 * the dialect's JSON prefix. In garbage mode the event is sent with a
 * payload that is not JSON, and NULL is returned. */
static struct buf *
ev_open(struct mreq *m, const char *event)
{
	struct buf	*b = &m->m_ev;

	buf_reset(b);
	if (event != NULL) {
		buf_adds(b, "event: ");
		buf_adds(b, event);
		buf_adds(b, eol(m));
	}
	if (m->m_dl->d_framing == FR_SSE)
		buf_adds(b, "data: ");
	if (!m->m_sc.sc_garbage) {
		buf_add(b, m->m_prefix.b_data, m->m_prefix.b_len);
		return b;
	}
	buf_adds(b, "this is not json");
	ev_close(m);
	return NULL;
}

/* An event with fixed data (printf-style). */
static void __attribute__((format(printf, 3, 4)))
ev_fixed(struct mreq *m, const char *event, const char *fmt, ...)
{
	struct buf	*b;
	va_list		 ap;
	char		*s;

	if ((b = ev_open(m, event)) == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		fatalx("vasprintf");
	va_end(ap);
	buf_adds(b, s);
	free(s);
	ev_close(m);
}

/* The scripted status, as the dialect writes its errors: the scripted
 * "error" message or "mock error N", and the scripted Retry-After. */
static void
reply_status(struct mreq *m)
{
	struct buf	*b = &m->m_ev;
	int		 code = m->m_sc.sc_status;
	char		 msg[32];

	snprintf(msg, sizeof(msg), "mock error %d", code);
	buf_reset(b);
	m->m_dl->d_error(b, code, m->m_sc.sc_error.ms_n > 0 ?
	    m->m_sc.sc_error.ms_p : msg);
	if (m->m_sc.sc_retry_after.ms_n > 0)
		evhttp_add_header(evhttp_request_get_output_headers(m->m_req),
		    "Retry-After", m->m_sc.sc_retry_after.ms_p);
	mreq_reply(m, code, b->b_data, b->b_len);
}

/* "redirect": 302 (or the scripted 3xx status) to that Location. */
static void
reply_redirect(struct mreq *m)
{
	int	 code = m->m_sc.sc_status;

	if (code < 300 || code > 399)
		code = 302;
	evhttp_add_header(evhttp_request_get_output_headers(m->m_req),
	    "Location", m->m_sc.sc_redirect.ms_p);
	mreq_reply(m, code, "", 0);
}

/* The non-stream answer (or a cut, or garbage). */
static void
reply_full(struct mreq *m)
{
	struct buf	*b = &m->m_ev;

	if (m->m_sc.sc_disconnect_after >= 0) {
		mreq_drop(m, false);
		return;
	}
	buf_reset(b);
	if (m->m_sc.sc_garbage)
		buf_adds(b, "this is not json");
	else
		m->m_dl->d_full(m, b);
	mreq_reply(m, 200, b->b_data, b->b_len);
}

/* ---- OpenAI: /v1/chat/completions, /v1/completions -------------- */

static void
oa_error(struct buf *b, int code, const char *msg)
{
	if (code == 0) {
		error_body(b, msg, "invalid_request_error");
		return;
	}
	buf_adds(b, "{\"error\":{\"message\":");
	json_str(b, msg, strlen(msg));
	buf_printf(b, ",\"type\":\"server_error\",\"code\":%d}}", code);
}

/* {"id":..,"object":..,"created":..,"model":..,"choices": */
static void
oa_obj(struct buf *b, const struct mreq *m, const char *object)
{
	buf_printf(b, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,"
	    "\"model\":", m->m_dl->d_kind == DK_CHAT ? "chatcmpl-mock" :
	    "cmpl-mock", object, m->m_created);
	buf_add(b, m->m_model.b_data, m->m_model.b_len);
	buf_adds(b, ",\"choices\":");
}

static void
oa_prefix(struct mreq *m)
{
	if (m->m_stream)
		oa_obj(&m->m_prefix, m, m->m_dl->d_kind == DK_CHAT ?
		    "chat.completion.chunk" : "text_completion");
}

static void
oa_usage(struct buf *b, const struct mreq *m, size_t ctokens)
{
	buf_printf(b, "\"usage\":{\"prompt_tokens\":%zu,"
	    "\"completion_tokens\":%zu,\"total_tokens\":%zu}",
	    m->m_ptokens, ctokens, m->m_ptokens + ctokens);
}

static void
oa_finish(struct buf *b, const struct mreq *m)
{
	buf_adds(b, "\"finish_reason\":");
	json_mstr(b, &m->m_sc.sc_finish);
}

/* ,"tool_calls":[{"id":"call_mock_0","type":"function","function":..}] */
static void
oa_tool_calls(struct buf *b, const struct script *sc)
{
	size_t	 i;

	buf_adds(b, ",\"tool_calls\":[");
	for (i = 0; i < sc->sc_ntools; i++) {
		buf_printf(b, "%s{\"id\":\"call_mock_%zu\",\"type\":"
		    "\"function\",\"function\":{\"name\":", i > 0 ? "," : "",
		    i);
		json_mstr(b, &sc->sc_tools[i].t_name);
		buf_adds(b, ",\"arguments\":");
		json_mstr(b, &sc->sc_tools[i].t_args);
		buf_adds(b, "}}");
	}
	buf_addc(b, ']');
}

static void
oa_full(struct mreq *m, struct buf *b)
{
	const struct script	*sc = &m->m_sc;

	if (m->m_dl->d_kind == DK_CHAT) {
		oa_obj(b, m, "chat.completion");
		buf_adds(b, "[{\"index\":0,\"message\":{\"role\":"
		    "\"assistant\",\"content\":");
		if (sc->sc_ntools > 0 && sc->sc_text.ms_n == 0)
			buf_adds(b, "null");
		else
			json_mstr(b, &sc->sc_text);
		if (sc->sc_ntools > 0)
			oa_tool_calls(b, sc);
		buf_adds(b, "},");
	} else {
		oa_obj(b, m, "text_completion");
		buf_adds(b, "[{\"index\":0,\"text\":");
		json_mstr(b, &sc->sc_text);
		buf_adds(b, ",\"logprobs\":null,");
	}
	oa_finish(b, m);
	buf_adds(b, "}],");
	oa_usage(b, m, m->m_npieces);
	buf_addc(b, '}');
}

static void
oa_head(struct mreq *m)
{
	if (m->m_dl->d_kind == DK_CHAT)
		ev_fixed(m, NULL, "[{\"index\":0,\"delta\":{\"role\":"
		    "\"assistant\",\"content\":\"\"},\"finish_reason\":"
		    "null}]}");
}

/* A tool call's first delta (id, type, name), or an arguments part. */
static void
oa_tool_piece(struct mreq *m, const struct piece *p)
{
	const struct mtool	*t = &m->m_sc.sc_tools[p->p_tool];
	struct buf		*b;

	if ((b = ev_open(m, NULL)) == NULL)
		return;
	buf_printf(b, "[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":"
	    "%d,", p->p_tool);
	if (p->p_kind == PK_TOOL_HEAD) {
		buf_printf(b, "\"id\":\"call_mock_%d\",\"type\":\"function\","
		    "\"function\":{\"name\":", p->p_tool);
		json_mstr(b, &t->t_name);
		buf_adds(b, ",\"arguments\":\"\"");
	} else {
		buf_adds(b, "\"function\":{\"arguments\":");
		json_str(b, t->t_args.ms_p + p->p_off, p->p_len);
	}
	buf_adds(b, "}}]},\"finish_reason\":null}]}");
	ev_close(m);
}

static void
oa_piece(struct mreq *m, const struct piece *p)
{
	const char	*s = m->m_sc.sc_text.ms_p + p->p_off;
	struct buf	*b;

	if (p->p_kind != PK_TEXT) {
		oa_tool_piece(m, p);
		return;
	}
	if ((b = ev_open(m, NULL)) == NULL)
		return;
	if (m->m_dl->d_kind == DK_CHAT) {
		buf_adds(b, "[{\"index\":0,\"delta\":{\"content\":");
		json_str(b, s, p->p_len);
		buf_adds(b, "},\"finish_reason\":null}]}");
	} else {
		buf_adds(b, "[{\"index\":0,\"text\":");
		json_str(b, s, p->p_len);
		buf_adds(b, ",\"logprobs\":null,\"finish_reason\":null}]}");
	}
	ev_close(m);
}

/* The finish chunk, the usage chunk when asked for, [DONE]. */
static void
oa_tail(struct mreq *m)
{
	struct buf	*b;

	if ((b = ev_open(m, NULL)) != NULL) {
		if (m->m_dl->d_kind == DK_CHAT)
			buf_adds(b, "[{\"index\":0,\"delta\":{},");
		else
			buf_adds(b, "[{\"index\":0,\"text\":\"\","
			    "\"logprobs\":null,");
		oa_finish(b, m);
		buf_adds(b, "}]}");
		ev_close(m);
	}
	if (m->m_usage && (b = ev_open(m, NULL)) != NULL) {
		buf_adds(b, "[],");
		oa_usage(b, m, m->m_sent);
		buf_addc(b, '}');
		ev_close(m);
	}
	buf_reset(&m->m_ev);
	buf_adds(&m->m_ev, "data: [DONE]");
	ev_close(m);
}

/* ---- Ollama: /api/chat, /api/generate (NDJSON) ------------------ */

static void
ol_error(struct buf *b, int code, const char *msg)
{
	buf_adds(b, "{\"error\":");
	json_str(b, msg, strlen(msg));
	buf_addc(b, '}');
}

/* {"model":M,"created_at":"...", */
static void
ol_prefix(struct mreq *m)
{
	buf_adds(&m->m_prefix, "{\"model\":");
	buf_add(&m->m_prefix, m->m_model.b_data, m->m_model.b_len);
	buf_printf(&m->m_prefix, ",\"created_at\":\"%s\",", m->m_stamp);
}

/* Arguments as an object when they are one, else as a string. */
static void
tool_args_obj(struct buf *b, const struct mtool *t)
{
	if (t->t_obj)
		buf_add(b, t->t_args.ms_p, t->t_args.ms_n);
	else
		json_mstr(b, &t->t_args);
}

/* ,"tool_calls":[{"function":{"name":N,"arguments":{...}}}] */
static void
ol_tool_calls(struct buf *b, const struct script *sc)
{
	size_t	 i;

	buf_adds(b, ",\"tool_calls\":[");
	for (i = 0; i < sc->sc_ntools; i++) {
		buf_adds(b, i > 0 ? ",{\"function\":{\"name\":" :
		    "{\"function\":{\"name\":");
		json_mstr(b, &sc->sc_tools[i].t_name);
		buf_adds(b, ",\"arguments\":");
		tool_args_obj(b, &sc->sc_tools[i]);
		buf_adds(b, "}}");
	}
	buf_addc(b, ']');
}

/* "message":{"role":"assistant","content":S[,"tool_calls":..]} for
 * chat, "response":S for generate. */
static void
ol_content(struct buf *b, const struct mreq *m, const char *s, size_t n,
    bool tools)
{
	if (m->m_dl->d_kind == DK_OGEN) {
		buf_adds(b, "\"response\":");
		json_str(b, s, n);
		return;
	}
	buf_adds(b, "\"message\":{\"role\":\"assistant\",\"content\":");
	json_str(b, s, n);
	if (tools)
		ol_tool_calls(b, &m->m_sc);
	buf_addc(b, '}');
}

/* ,"done":true,... and the fake timings: 1 ms a token, 1 ms to load. */
static void
ol_done(struct buf *b, const struct mreq *m, size_t ctokens)
{
	unsigned long long	 p = m->m_ptokens, c = ctokens;

	buf_adds(b, ",\"done\":true,\"done_reason\":");
	json_mstr(b, &m->m_sc.sc_finish);
	buf_printf(b, ",\"total_duration\":%llu,\"load_duration\":1000000,"
	    "\"prompt_eval_count\":%llu,\"prompt_eval_duration\":%llu,"
	    "\"eval_count\":%llu,\"eval_duration\":%llu}",
	    (1 + p + c) * 1000000, p, p * 1000000, c, c * 1000000);
}

static void
ol_full(struct mreq *m, struct buf *b)
{
	buf_add(b, m->m_prefix.b_data, m->m_prefix.b_len);
	ol_content(b, m, m->m_sc.sc_text.ms_p, m->m_sc.sc_text.ms_n,
	    m->m_sc.sc_ntools > 0);
	ol_done(b, m, m->m_npieces);
}

/* A text piece, or the line with every tool call. */
static void
ol_piece(struct mreq *m, const struct piece *p)
{
	struct buf	*b;

	if ((b = ev_open(m, NULL)) == NULL)
		return;
	if (p->p_kind == PK_TOOL_LINE)
		ol_content(b, m, "", 0, true);
	else
		ol_content(b, m, m->m_sc.sc_text.ms_p + p->p_off, p->p_len,
		    false);
	buf_adds(b, ",\"done\":false}");
	ev_close(m);
}

static void
ol_tail(struct mreq *m)
{
	struct buf	*b;

	if ((b = ev_open(m, NULL)) == NULL)
		return;
	ol_content(b, m, "", 0, false);
	ol_done(b, m, m->m_sent);
	ev_close(m);
}

/* ---- KoboldCpp: /api/v1/generate, /api/extra/generate/stream ---- */

static void
kb_error(struct buf *b, int code, const char *msg)
{
	buf_adds(b, "{\"detail\":{\"msg\":");
	json_str(b, msg, strlen(msg));
	buf_printf(b, ",\"type\":\"%s\"}}", code == 0 ? "bad_request" :
	    "server_error");
}

/* A finish reason only when scripted (as newer KoboldCpp sends it). */
static void
kb_finish(struct buf *b, const struct mreq *m)
{
	if (!m->m_sc.sc_finish_set)
		return;
	buf_adds(b, ",\"finish_reason\":");
	json_mstr(b, &m->m_sc.sc_finish);
}

static void
kb_full(struct mreq *m, struct buf *b)
{
	buf_adds(b, "{\"results\":[{\"text\":");
	json_mstr(b, &m->m_sc.sc_text);
	kb_finish(b, m);
	buf_adds(b, "}]}");
}

static void
kb_piece(struct mreq *m, const struct piece *p)
{
	struct buf	*b;

	if ((b = ev_open(m, "message")) == NULL)
		return;
	buf_adds(b, "{\"token\":");
	json_str(b, m->m_sc.sc_text.ms_p + p->p_off, p->p_len);
	buf_addc(b, '}');
	ev_close(m);
}

/* No end marker, unless finish_reason is scripted: then a last event
 * {"token":"","finish_reason":FIN}. */
static void
kb_tail(struct mreq *m)
{
	struct buf	*b;

	if (!m->m_sc.sc_finish_set || (b = ev_open(m, "message")) == NULL)
		return;
	buf_adds(b, "{\"token\":\"\"");
	kb_finish(b, m);
	buf_addc(b, '}');
	ev_close(m);
}

/* ---- Claude: /v1/messages --------------------------------------- */

static void
cl_error(struct buf *b, int code, const char *msg)
{
	buf_printf(b, "{\"type\":\"error\",\"error\":{\"type\":\"%s\","
	    "\"message\":", code == 0 ? "invalid_request_error" :
	    "api_error");
	json_str(b, msg, strlen(msg));
	buf_adds(b, "}}");
}

/* Content block 0 is the text, unless it is empty and tools follow. */
static int
cl_ntext(const struct mreq *m)
{
	return m->m_sc.sc_text.ms_n > 0 || m->m_sc.sc_ntools == 0;
}

static void
cl_full(struct mreq *m, struct buf *b)
{
	const struct script	*sc = &m->m_sc;
	size_t			 i;

	buf_adds(b, "{\"id\":\"msg_mock\",\"type\":\"message\",\"role\":"
	    "\"assistant\",\"model\":");
	buf_add(b, m->m_model.b_data, m->m_model.b_len);
	buf_adds(b, ",\"content\":[");
	if (cl_ntext(m)) {
		buf_adds(b, "{\"type\":\"text\",\"text\":");
		json_mstr(b, &sc->sc_text);
		buf_addc(b, '}');
	}
	for (i = 0; i < sc->sc_ntools; i++) {
		buf_printf(b, "%s{\"type\":\"tool_use\",\"id\":"
		    "\"toolu_mock_%zu\",\"name\":", i > 0 || cl_ntext(m) ?
		    "," : "", i);
		json_mstr(b, &sc->sc_tools[i].t_name);
		buf_adds(b, ",\"input\":");
		tool_args_obj(b, &sc->sc_tools[i]);
		buf_addc(b, '}');
	}
	buf_adds(b, "],\"stop_reason\":");
	json_mstr(b, &sc->sc_finish);
	buf_printf(b, ",\"stop_sequence\":null,\"usage\":{\"input_tokens\":"
	    "%zu,\"output_tokens\":%zu}}", m->m_ptokens, m->m_npieces);
}

/* message_start, the text block's content_block_start, ping. */
static void
cl_head(struct mreq *m)
{
	struct buf	*b;

	if ((b = ev_open(m, "message_start")) != NULL) {
		buf_adds(b, "{\"type\":\"message_start\",\"message\":{\"id\":"
		    "\"msg_mock\",\"type\":\"message\",\"role\":\"assistant\","
		    "\"model\":");
		buf_add(b, m->m_model.b_data, m->m_model.b_len);
		buf_printf(b, ",\"content\":[],\"stop_reason\":null,"
		    "\"stop_sequence\":null,\"usage\":{\"input_tokens\":%zu,"
		    "\"output_tokens\":0}}}", m->m_ptokens);
		ev_close(m);
	}
	if (cl_ntext(m)) {
		m->m_block = 0;
		ev_fixed(m, "content_block_start", "{\"type\":"
		    "\"content_block_start\",\"index\":0,\"content_block\":"
		    "{\"type\":\"text\",\"text\":\"\"}}");
	}
	ev_fixed(m, "ping", "{\"type\":\"ping\"}");
}

static void
cl_block_stop(struct mreq *m)
{
	if (m->m_block >= 0)
		ev_fixed(m, "content_block_stop", "{\"type\":"
		    "\"content_block_stop\",\"index\":%d}", m->m_block);
	m->m_block = -1;
}

/* A tool call opens a tool_use block (closing the one before); its
 * arguments come as input_json_delta parts. */
static void
cl_tool_piece(struct mreq *m, const struct piece *p)
{
	const struct mtool	*t = &m->m_sc.sc_tools[p->p_tool];
	int			 idx = cl_ntext(m) + p->p_tool;
	struct buf		*b;

	if (p->p_kind == PK_TOOL_HEAD) {
		cl_block_stop(m);
		m->m_block = idx;
		if ((b = ev_open(m, "content_block_start")) == NULL)
			return;
		buf_printf(b, "{\"type\":\"content_block_start\",\"index\":"
		    "%d,\"content_block\":{\"type\":\"tool_use\",\"id\":"
		    "\"toolu_mock_%d\",\"name\":", idx, p->p_tool);
		json_mstr(b, &t->t_name);
		buf_adds(b, ",\"input\":{}}}");
	} else {
		if ((b = ev_open(m, "content_block_delta")) == NULL)
			return;
		buf_printf(b, "{\"type\":\"content_block_delta\",\"index\":"
		    "%d,\"delta\":{\"type\":\"input_json_delta\","
		    "\"partial_json\":", idx);
		json_str(b, t->t_args.ms_p + p->p_off, p->p_len);
		buf_adds(b, "}}");
	}
	ev_close(m);
}

static void
cl_piece(struct mreq *m, const struct piece *p)
{
	struct buf	*b;

	if (p->p_kind != PK_TEXT) {
		cl_tool_piece(m, p);
		return;
	}
	if ((b = ev_open(m, "content_block_delta")) == NULL)
		return;
	buf_adds(b, "{\"type\":\"content_block_delta\",\"index\":0,"
	    "\"delta\":{\"type\":\"text_delta\",\"text\":");
	json_str(b, m->m_sc.sc_text.ms_p + p->p_off, p->p_len);
	buf_adds(b, "}}");
	ev_close(m);
}

/* content_block_stop, message_delta (stop reason, usage), message_stop. */
static void
cl_tail(struct mreq *m)
{
	struct buf	*b;

	cl_block_stop(m);
	if ((b = ev_open(m, "message_delta")) != NULL) {
		buf_adds(b, "{\"type\":\"message_delta\",\"delta\":"
		    "{\"stop_reason\":");
		json_mstr(b, &m->m_sc.sc_finish);
		buf_printf(b, ",\"stop_sequence\":null},\"usage\":"
		    "{\"output_tokens\":%zu}}", m->m_sent);
		ev_close(m);
	}
	ev_fixed(m, "message_stop", "{\"type\":\"message_stop\"}");
}

/* ---- the stream state machine ----------------------------------- */

/* Sends the next split part of the first queued event, then waits. */
static enum step
split_part(struct mreq *m)
{
	size_t	 n = m->m_evq[0];

	if (n > (size_t)m->m_sc.sc_split)
		n = (size_t)m->m_sc.sc_split;
	send_chunk(m, m->m_out.b_data, n);
	buf_drain(&m->m_out, n);
	if ((m->m_evq[0] -= n) == 0) {
		m->m_nevq--;
		memmove(m->m_evq, m->m_evq + 1, m->m_nevq *
		    sizeof(m->m_evq[0]));
	}
	arm(m, 1);
	return STEP_WAIT;
}

static enum step
stage_head(struct mreq *m)
{
	struct evkeyvalq	*oh;

	watch_stop(m);
	if (m->m_sc.sc_redirect.ms_n > 0) {
		reply_redirect(m);
		return STEP_GONE;
	}
	if (m->m_sc.sc_status != 0) {
		reply_status(m);
		return STEP_GONE;
	}
	if (!m->m_stream) {
		reply_full(m);
		return STEP_GONE;
	}
	oh = evhttp_request_get_output_headers(m->m_req);
	if (m->m_dl->d_framing == FR_SSE) {
		evhttp_add_header(oh, "Content-Type", "text/event-stream");
		evhttp_add_header(oh, "Cache-Control", "no-cache");
	} else
		evhttp_add_header(oh, "Content-Type", "application/x-ndjson");
	evhttp_send_reply_start(m->m_req, 200, "OK");
	m->m_direct = direct_ok(m);
	m->m_paced = mk.mk_pace_events > 0;
	m->m_due = mono_us();
	m->m_stage = MS_FIRST;
	return STEP_NEXT;
}

static enum step
stage_piece(struct mreq *m)
{
	const struct script	*sc = &m->m_sc;

	if (sc->sc_disconnect_after >= 0 &&
	    m->m_sent >= (size_t)sc->sc_disconnect_after) {
		m->m_stage = MS_CUT;
		return STEP_NEXT;
	}
	/* forever repeats the text pieces; tool calls never come. */
	if (m->m_next >= (sc->sc_forever ? m->m_ntext : m->m_npieces)) {
		if (!sc->sc_forever) {
			m->m_stage = MS_TAIL;
			return STEP_NEXT;
		}
		/* Empty text: idle until the client leaves. */
		if (m->m_ntext == 0)
			return STEP_WAIT;
		m->m_next = 0;
	}
	if (m->m_sent > 0 && sc->sc_delay_ms > 0 && !m->m_delayed) {
		m->m_delayed = true;
		arm_paced(m, sc->sc_delay_ms);
		return STEP_WAIT;
	}
	if (out_len(m) >= OUT_HIWAT) {
		arm(m, 1);		/* slow reader: let it drain */
		return STEP_WAIT;
	}
	m->m_delayed = false;
	m->m_dl->d_piece(m, &m->m_pieces[m->m_next++]);
	m->m_sent++;
	return STEP_NEXT;
}

/* disconnect_after: let what was sent reach the socket, then close. */
static enum step
stage_cut(struct mreq *m)
{
	if (out_len(m) > 0) {
		arm(m, 1);
		return STEP_WAIT;
	}
	mreq_drop(m, false);
	return STEP_GONE;
}

static enum step
stream_stage(struct mreq *m)
{
	switch (m->m_stage) {
	case MS_HEAD:
		return stage_head(m);
	case MS_FIRST:
		m->m_stage = MS_OPEN;
		if (m->m_sc.sc_first_ms <= 0)
			return STEP_NEXT;
		arm_paced(m, m->m_sc.sc_first_ms);
		return STEP_WAIT;
	case MS_OPEN:
		if (m->m_dl->d_head != NULL)
			m->m_dl->d_head(m);
		m->m_stage = MS_SILENT;
		return STEP_NEXT;
	case MS_SILENT:
		m->m_stage = MS_PIECES;
		if (m->m_sc.sc_silent_ms <= 0)
			return STEP_NEXT;
		arm(m, m->m_sc.sc_silent_ms);
		return STEP_WAIT;
	case MS_PIECES:
		return stage_piece(m);
	case MS_TAIL:
		m->m_stage = MS_END;
		if (!m->m_sc.sc_no_done && m->m_dl->d_tail != NULL)
			m->m_dl->d_tail(m);
		return STEP_NEXT;
	case MS_END:
		mreq_end_stream(m);
		return STEP_GONE;
	case MS_CUT:
		return stage_cut(m);
	}
	return STEP_GONE;
}

/* Runs m until it has to wait for a timer or is gone. */
static void
stream_run(struct mreq *m)
{
	enum step	 r;

	do {
		if (m->m_nevq > 0)
			r = split_part(m);
		else
			r = stream_stage(m);
	} while (r == STEP_NEXT);
}

/* ---- request bodies --------------------------------------------- */

static void
content_text(const json_t *c, struct buf *out)
{
	const json_t	*part, *t;
	size_t		 i;

	if (json_is_string(c)) {
		buf_add(out, json_string_value(c), json_string_length(c));
		return;
	}
	if (!json_is_array(c))
		return;
	for (i = 0; i < json_array_size(c); i++) {
		part = json_array_get(c, i);
		t = json_object_get(part, "text");
		if (json_is_string(t))
			buf_add(out, json_string_value(t),
			    json_string_length(t));
	}
}

static size_t
prompt_tokens(size_t chars)
{
	return chars / 4 > 0 ? chars / 4 : 1;
}

/* Adds up the code points of all contents; copies the last user
 * message to user. */
static int
msgs_scan(const json_t *body, struct buf *user, size_t *chars,
    const char **err)
{
	const json_t	*msgs = json_object_get(body, "messages");
	const json_t	*msg, *role, *last = NULL;
	struct buf	 tmp = BUF_INIT;
	size_t		 i;

	if (!json_is_array(msgs)) {
		*err = "messages must be an array";
		return -1;
	}
	for (i = 0; i < json_array_size(msgs); i++) {
		msg = json_array_get(msgs, i);
		buf_reset(&tmp);
		content_text(json_object_get(msg, "content"), &tmp);
		*chars += utf8_len(tmp.b_data, tmp.b_len);
		role = json_object_get(msg, "role");
		if (json_is_string(role) &&
		    strcmp(json_string_value(role), "user") == 0)
			last = msg;
	}
	buf_free(&tmp);
	if (last != NULL)
		content_text(json_object_get(last, "content"), user);
	return 0;
}

/* OpenAI and Ollama chat. */
static int
chat_parse(struct mreq *m, const json_t *body, struct buf *user,
    const char **err)
{
	size_t	 chars = 0;

	if (msgs_scan(body, user, &chars, err) == -1)
		return -1;
	m->m_ptokens = prompt_tokens(chars);
	return 0;
}

/* Claude: the messages and the top-level system (string or blocks). */
static int
claude_parse(struct mreq *m, const json_t *body, struct buf *user,
    const char **err)
{
	struct buf	 sys = BUF_INIT;
	size_t		 chars = 0;

	if (msgs_scan(body, user, &chars, err) == -1)
		return -1;
	content_text(json_object_get(body, "system"), &sys);
	chars += utf8_len(sys.b_data, sys.b_len);
	buf_free(&sys);
	m->m_ptokens = prompt_tokens(chars);
	return 0;
}

/* Completions: a string prompt, or strings (the last one is scripted). */
static int
compl_parse(struct mreq *m, const json_t *body, struct buf *user,
    const char **err)
{
	const json_t	*p = json_object_get(body, "prompt"), *e;
	size_t		 i, chars = 0;

	*err = "prompt must be a string or an array of strings";
	if (json_is_string(p)) {
		buf_add(user, json_string_value(p), json_string_length(p));
		chars = utf8_len(user->b_data, user->b_len);
	} else if (json_is_array(p)) {
		for (i = 0; i < json_array_size(p); i++) {
			e = json_array_get(p, i);
			if (!json_is_string(e))
				return -1;
			buf_reset(user);
			buf_add(user, json_string_value(e),
			    json_string_length(e));
			chars += utf8_len(user->b_data, user->b_len);
		}
	} else
		return -1;
	m->m_ptokens = prompt_tokens(chars);
	return 0;
}

/* Ollama generate, KoboldCpp: "prompt" is a string (absent: empty). */
static int
prompt_parse(struct mreq *m, const json_t *body, struct buf *user,
    const char **err)
{
	const json_t	*p = json_object_get(body, "prompt");

	if (p != NULL && !json_is_string(p)) {
		*err = "prompt must be a string";
		return -1;
	}
	if (p != NULL)
		buf_add(user, json_string_value(p), json_string_length(p));
	m->m_ptokens = prompt_tokens(utf8_len(user->b_data, user->b_len));
	return 0;
}

static void
piece_add(struct mreq *m, size_t off, size_t len, enum pkind kind,
    int tool)
{
	struct piece	*p;

	if (m->m_npieces == m->m_cap) {
		m->m_cap = m->m_cap ? m->m_cap * 2 : 16;
		m->m_pieces = xreallocarray(m->m_pieces, m->m_cap,
		    sizeof(*m->m_pieces));
	}
	p = &m->m_pieces[m->m_npieces++];
	p->p_off = off;
	p->p_len = len;
	p->p_kind = kind;
	p->p_tool = tool;
}

/* chunk > 0: that many code points a piece; 0: a word and the
 * whitespace before it. Trailing whitespace is a piece of its own. */
static void
pieces_split(struct mreq *m, const struct mstr *ms, size_t chunk,
    enum pkind kind, int tool)
{
	const char	*s = ms->ms_p;
	size_t		 n = ms->ms_n, i = 0, start, k;

	while (i < n) {
		start = i;
		if (chunk > 0) {
			for (k = 0; i < n && k < chunk; k++) {
				i++;
				while (i < n &&
				    ((unsigned char)s[i] & 0xC0) == 0x80)
					i++;
			}
		} else {
			while (i < n && is_ws(s[i]))
				i++;
			while (i < n && !is_ws(s[i]))
				i++;
		}
		piece_add(m, start, i - start, kind, tool);
	}
}

/* The text pieces, then the tool calls' pieces. */
static void
pieces_build(struct mreq *m)
{
	const struct script	*sc = &m->m_sc;
	size_t			 chunk = (size_t)sc->sc_chunk, i;

	pieces_split(m, &sc->sc_text, chunk, PK_TEXT, 0);
	m->m_ntext = m->m_npieces;
	if (sc->sc_ntools == 0)
		return;
	if (m->m_dl->d_tools == TL_LINE) {
		piece_add(m, 0, 0, PK_TOOL_LINE, 0);
		return;
	}
	for (i = 0; i < sc->sc_ntools; i++) {
		piece_add(m, 0, 0, PK_TOOL_HEAD, (int)i);
		pieces_split(m, &sc->sc_tools[i].t_args, chunk > 0 ? chunk :
		    ARGS_CHUNK, PK_TOOL_ARGS, (int)i);
	}
}

static void
llm_options(struct mreq *m, const json_t *body)
{
	const json_t	*model = json_object_get(body, "model");
	const json_t	*so = json_object_get(body, "stream_options");
	const json_t	*st = json_object_get(body, "stream");
	uint64_t	 now = clock_wall_ms();

	if (m->m_dl->d_smode == SM_FIELD)
		m->m_stream = json_is_true(st);
	else if (m->m_dl->d_smode == SM_UNLESS_FALSE)
		m->m_stream = !json_is_false(st);
	else
		m->m_stream = m->m_dl->d_smode == SM_ALWAYS;
	m->m_usage = m->m_sc.sc_usage ||
	    json_is_true(json_object_get(so, "include_usage"));
	m->m_created = (long long)(now / 1000);
	iso_stamp(m->m_stamp, sizeof(m->m_stamp), now);
	if (json_is_string(model))
		json_str(&m->m_model, json_string_value(model),
		    json_string_length(model));
	else
		buf_adds(&m->m_model, "\"mock\"");
	if (m->m_dl->d_prefix != NULL)
		m->m_dl->d_prefix(m);
}

/* Takes the caller's reference on rec. */
static void
llm_start(struct evhttp_request *req, json_t *rec, const json_t *body,
    const struct dialect *d)
{
	struct mreq	*m;
	struct buf	 user = BUF_INIT;
	const char	*err = NULL;

	m = mreq_new(req, rec, d);
	if (!json_is_object(body)) {
		mreq_error(m, 400, "bad json");
		return;
	}
	if (d->d_parse(m, body, &user, &err) == -1) {
		buf_free(&user);
		mreq_error(m, 400, err);
		return;
	}
	script_parse(&m->m_sc, user.b_data, user.b_len);
	buf_free(&user);
	script_dialect(&m->m_sc, d);
	llm_options(m, body);
	pieces_build(m);
	m->m_stage = MS_HEAD;
	if (m->m_sc.sc_hang || m->m_sc.sc_head_delay_ms > 0)
		watch_start(m);
	if (m->m_sc.sc_hang)
		return;
	if (m->m_sc.sc_head_delay_ms > 0)
		arm(m, m->m_sc.sc_head_delay_ms);
	else
		stream_run(m);
}

/* The body as JSON (any value), or NULL with the raw bytes. */
static json_t *
body_parse(struct evhttp_request *req, const char **raw, size_t *rawlen)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	json_error_t	 je;

	*rawlen = evbuffer_get_length(in);
	if (*rawlen == 0) {
		*raw = "";
		return NULL;
	}
	*raw = (const char *)evbuffer_pullup(in, -1);
	return json_loadb(*raw, *rawlen, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    &je);
}

/* ---- routes ----------------------------------------------------- */

#define DL_OPENAI	oa_error, oa_prefix, oa_full, oa_head, oa_piece, \
			oa_tail
#define DL_OLLAMA	ol_error, ol_prefix, ol_full, NULL, ol_piece, ol_tail
#define DL_KOBOLD	kb_error, NULL, kb_full, NULL, kb_piece, kb_tail
#define DL_CLAUDE	cl_error, NULL, cl_full, cl_head, cl_piece, cl_tail
static const struct dialect dialects[] = {
	{ "/v1/chat/completions", DK_CHAT, FR_SSE, SM_FIELD, TL_DELTAS,
	    "stop", "tool_calls", chat_parse, DL_OPENAI },
	{ "/v1/completions", DK_COMPL, FR_SSE, SM_FIELD, TL_NONE,
	    "stop", "stop", compl_parse, DL_OPENAI },
	{ "/v1/messages", DK_CLAUDE, FR_SSE, SM_FIELD, TL_DELTAS,
	    "end_turn", "tool_use", claude_parse, DL_CLAUDE },
	{ "/api/chat", DK_OCHAT, FR_NDJSON, SM_UNLESS_FALSE, TL_LINE,
	    "stop", "stop", chat_parse, DL_OLLAMA },
	{ "/api/generate", DK_OGEN, FR_NDJSON, SM_UNLESS_FALSE, TL_NONE,
	    "stop", "stop", prompt_parse, DL_OLLAMA },
	{ "/api/v1/generate", DK_KOBOLD, FR_SSE, SM_NEVER, TL_NONE,
	    "stop", "stop", prompt_parse, DL_KOBOLD },
	{ "/api/extra/generate/stream", DK_KOBOLD, FR_SSE, SM_ALWAYS,
	    TL_NONE, "stop", "stop", prompt_parse, DL_KOBOLD },
};
#undef DL_OPENAI
#undef DL_OLLAMA
#undef DL_KOBOLD
#undef DL_CLAUDE

/* GET routes with a fixed answer. */
static const struct {
	const char	*f_path;
	const char	*f_body;
} fixed[] = {
	{ "/v1/models", "{\"object\":\"list\",\"data\":[{\"id\":\"mock\","
	    "\"object\":\"model\"}]}" },
	{ "/api/tags", "{\"models\":[{\"name\":\"mock:latest\",\"model\":"
	    "\"mock:latest\",\"modified_at\":\"2024-01-01T00:00:00Z\","
	    "\"size\":0,\"digest\":\"0000000000000000\",\"details\":"
	    "{\"format\":\"gguf\",\"family\":\"mock\",\"parameter_size\":"
	    "\"0B\",\"quantization_level\":\"Q0\"}}]}" },
	{ "/api/version", "{\"version\":\"0.9.0\"}" },
	{ "/api/v1/model", "{\"result\":\"koboldcpp/mock\"}" },
};

static const struct dialect *
dialect_find(const char *path)
{
	size_t	 i;

	for (i = 0; i < nitems(dialects); i++)
		if (strcmp(dialects[i].d_path, path) == 0)
			return &dialects[i];
	return NULL;
}

static const char *
fixed_find(const char *path)
{
	size_t	 i;

	for (i = 0; i < nitems(fixed); i++)
		if (strcmp(fixed[i].f_path, path) == 0)
			return fixed[i].f_body;
	return NULL;
}

/* 404 or 405, shaped like the dialect's errors (Ollama's under /api/). */
static void
route_error(struct evhttp_request *req, const char *path,
    const struct dialect *d, int code, const char *msg)
{
	struct buf	 b = BUF_INIT;

	if (d != NULL)
		d->d_error(&b, 0, msg);
	else if (strncmp(path, "/api/", 5) == 0)
		ol_error(&b, 0, msg);
	else
		oa_error(&b, 0, msg);
	send_json(req, code, b.b_data, b.b_len);
	buf_free(&b);
}

/* An embeddings request: answered at once (tests/mock_embed.c). */
static void
on_embed(struct evhttp_request *req, json_t *rec, const char *path,
    const json_t *body)
{
	struct buf	 b = BUF_INIT;
	int		 st = mock_embed_answer(path, body, &b);

	rec_close(rec);
	send_json(req, st, b.b_data, b.b_len);
	buf_free(&b);
}

/* Every request under /v1/ and /api/ is counted and logged. */
static void
on_llm(struct evhttp_request *req, const char *path,
    enum evhttp_cmd_type cmd)
{
	const struct dialect	*d = dialect_find(path);
	const char		*fx = fixed_find(path), *raw;
	json_t			*body, *rec;
	size_t			 rawlen;

	mk.mk_nrequests++;
	body = body_parse(req, &raw, &rawlen);
	rec = log_record(req, path, body, raw, rawlen);
	if (!mk.mk_quiet)
		log_info("%s %s", method_name(cmd), path);
	if (d != NULL && cmd == EVHTTP_REQ_POST)
		llm_start(req, rec, body, d);
	else if (mock_embed_path(path) && cmd == EVHTTP_REQ_POST)
		on_embed(req, rec, path, body);
	else {
		rec_close(rec);
		if (fx != NULL && cmd == EVHTTP_REQ_GET)
			send_json(req, 200, fx, strlen(fx));
		else if (d != NULL)
			route_error(req, path, d, 405, "method not allowed");
		else
			route_error(req, path, NULL, 404, "not found");
	}
	json_decref(body);
}

/* ---- /mock routes ----------------------------------------------- */

static void
on_mock_requests(struct evhttp_request *req, enum evhttp_cmd_type cmd)
{
	json_t	*a;
	char	*s;
	size_t	 i;

	if (cmd == EVHTTP_REQ_DELETE) {
		log_clear();
		send_json(req, 200, "{\"cleared\":true}", 16);
		return;
	}
	if (cmd != EVHTTP_REQ_GET) {
		send_error(req, 405, "method not allowed");
		return;
	}
	a = json_array();
	for (i = 0; i < mk.mk_log_len; i++)
		json_array_append(a, mk.mk_log[(mk.mk_log_head + i) %
		    LOG_MAX]);
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	if (s == NULL) {
		send_error(req, 500, "cannot encode the log");
		return;
	}
	send_json(req, 200, s, strlen(s));
	free(s);
}

static void
on_stats(struct evhttp_request *req)
{
	char	 s[160];
	int	 n;

	n = snprintf(s, sizeof(s), "{\"requests\":%llu,\"active\":%llu,"
	    "\"client_gone\":%llu}", mk.mk_nrequests, mk.mk_nactive,
	    mk.mk_ngone);
	send_json(req, 200, s, (size_t)n);
}

static void
on_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri	*uri = evhttp_request_get_evhttp_uri(req);
	const char		*path = NULL;
	enum evhttp_cmd_type	 cmd = evhttp_request_get_command(req);

	if (uri != NULL)
		path = evhttp_uri_get_path(uri);
	if (path == NULL || *path == '\0')
		path = "/";
	if (strncmp(path, "/v1/", 4) == 0 || strncmp(path, "/api/", 5) == 0)
		on_llm(req, path, cmd);
	else if (strcmp(path, "/mock/requests") == 0)
		on_mock_requests(req, cmd);
	else if (strcmp(path, "/mock/stats") == 0 && cmd == EVHTTP_REQ_GET)
		on_stats(req);
	else
		send_error(req, 404, "not found");
}

/* ---- listening, signals, main ----------------------------------- */

static void
on_relisten(evutil_socket_t fd, short what, void *arg)
{
	evconnlistener_enable(mk.mk_lev);
}

/* accept() failed (EMFILE...): pause instead of spinning. */
static void
on_accept_error(struct evconnlistener *lev, void *arg)
{
	struct timeval	 tv = { 0, 100 * 1000 };

	log_warn("accept");
	evconnlistener_disable(lev);
	evtimer_add(mk.mk_relisten, &tv);
}

static void
print_addr(evutil_socket_t fd)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	char			 host[INET6_ADDRSTRLEN], port[16];

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		fatal("getsockname");
	if (getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host),
	    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		fatalx("getnameinfo failed");
	if (ss.ss_family == AF_INET6)
		printf("mock-llm listening on [%s]:%s\n", host, port);
	else
		printf("mock-llm listening on %s:%s\n", host, port);
	fflush(stdout);
}

static struct addrinfo *
resolve(const char *spec)
{
	struct addrinfo	 hints, *ai;
	char		*host = xstrdup(spec), *port, *h;
	int		 e;

	if ((port = strrchr(host, ':')) == NULL)
		fatalx_code(EX_USAGE, "--listen %s: want HOST:PORT", spec);
	*port++ = '\0';
	h = host;
	if (*h == '[' && port - host >= 3 && port[-2] == ']') {
		h++;
		port[-2] = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((e = getaddrinfo(h, port, &hints, &ai)) != 0)
		fatalx_code(EX_USAGE, "--listen %s: %s", spec,
		    gai_strerror(e));
	free(host);
	return ai;
}

static void
listen_on(const char *spec)
{
	struct addrinfo	*ai = resolve(spec);
	evutil_socket_t	 fd;
	int		 one = 1;

	mk.mk_lev = evconnlistener_new_bind(mk.mk_base, NULL, NULL,
	    LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
	    BACKLOG, ai->ai_addr, (int)ai->ai_addrlen);
	freeaddrinfo(ai);
	if (mk.mk_lev == NULL)
		fatal("listen on %s", spec);
	fd = evconnlistener_get_fd(mk.mk_lev);
	/* Accepted sockets inherit it: split parts must not be merged. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		log_warn("TCP_NODELAY");
	evconnlistener_set_error_cb(mk.mk_lev, on_accept_error);
	if (evhttp_bind_listener(mk.mk_http, mk.mk_lev) == NULL)
		fatalx("evhttp_bind_listener failed");
	print_addr(fd);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopbreak(mk.mk_base);
}

static void
raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* A precise clock: libevent's default (CLOCK_MONOTONIC_COARSE) ticks
 * every few ms and would turn the 1 ms split gaps into 4 ms. */
static struct event_base *
base_new(void)
{
	struct event_config	*cfg;
	struct event_base	*base;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

static void
setup(void)
{
	TAILQ_INIT(&mk.mk_active);
	if ((mk.mk_base = base_new()) == NULL ||
	    (mk.mk_http = evhttp_new(mk.mk_base)) == NULL ||
	    (mk.mk_scratch = evbuffer_new()) == NULL)
		fatalx("libevent setup failed");
	evhttp_set_gencb(mk.mk_http, on_request, NULL);
	evhttp_set_max_body_size(mk.mk_http, MAX_BODY);
	evhttp_set_default_content_type(mk.mk_http, "application/json");
	mk.mk_relisten = evtimer_new(mk.mk_base, on_relisten, NULL);
	mk.mk_sigterm = evsignal_new(mk.mk_base, SIGTERM, on_signal, NULL);
	mk.mk_sigint = evsignal_new(mk.mk_base, SIGINT, on_signal, NULL);
	if (mk.mk_relisten == NULL || mk.mk_sigterm == NULL ||
	    mk.mk_sigint == NULL || event_add(mk.mk_sigterm, NULL) == -1 ||
	    event_add(mk.mk_sigint, NULL) == -1)
		fatalx("libevent events setup failed");
}

/* Drops every request in flight, then everything else. */
static void
teardown(void)
{
	struct mreq	*m;

	while ((m = TAILQ_FIRST(&mk.mk_active)) != NULL) {
		evhttp_connection_set_closecb(m->m_evcon, NULL, NULL);
		mreq_free(m);
	}
	evhttp_free(mk.mk_http);	/* connections, requests, listener */
	log_clear();
	json_decref(mk.mk_seen);
	event_free(mk.mk_relisten);
	event_free(mk.mk_sigterm);
	event_free(mk.mk_sigint);
	evbuffer_free(mk.mk_scratch);
	event_base_free(mk.mk_base);
	libevent_global_shutdown();
	free(mk.mk_pace_text);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: mock-llm [--listen HOST:PORT] [--text TEXT] "
	    "[--chunk N] [--delay-ms N]\n"
	    "                [--pace FIRST_MS,EVENTS,GAP_MS] [--quiet]\n");
	exit(EX_USAGE);
}

static int
num_arg(const char *name, const char *s, int max)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max)
		fatalx_code(EX_USAGE, "--%s %s: want 0..%d", name, s, max);
	return (int)v;
}

/* --pace FIRST_MS,EVENTS,GAP_MS: the first event FIRST_MS after the
 * head, then EVENTS word pieces GAP_MS apart. */
static void
pace_arg(const char *s)
{
	int	 v[3], i;
	char	*dup = xstrdup(s), *p = dup, *f;

	for (i = 0; i < 3; i++) {
		if ((f = strsep(&p, ",")) == NULL)
			fatalx_code(EX_USAGE, "--pace %s: want FIRST_MS,EVENTS,"
			    "GAP_MS", s);
		v[i] = num_arg("pace", f, i == 1 ? INT_MAX : MAX_DELAY_MS);
	}
	if (p != NULL || v[1] < 1)
		fatalx_code(EX_USAGE, "--pace %s: want FIRST_MS,EVENTS,GAP_MS "
		    "with EVENTS >= 1", s);
	free(dup);
	mk.mk_first_ms = v[0];
	mk.mk_pace_events = v[1];
	mk.mk_delay_ms = v[2];
}

/* The --pace text: n words, the words of text over and over, so that
 * word pieces make n events. Caller frees. */
static char *
pace_text(const char *text, int n)
{
	struct buf	 b = BUF_INIT;
	const char	*w = text;
	size_t		 len;
	int		 i;

	for (i = 0; i < n; i++) {
		w += strspn(w, " \t\r\n");
		if (*w == '\0') {
			w = text + strspn(text, " \t\r\n");
			if (*w == '\0')
				fatalx_code(EX_USAGE, "--pace: --text has no "
				    "words");
		}
		len = strcspn(w, " \t\r\n");
		if (i > 0)
			buf_addc(&b, ' ');
		buf_add(&b, w, len);
		w += len;
	}
	return buf_take(&b);
}

static void
parse_args(int argc, char *argv[])
{
	static const struct option	 opts[] = {
		{ "listen",	required_argument,	NULL, 'l' },
		{ "text",	required_argument,	NULL, 't' },
		{ "chunk",	required_argument,	NULL, 'c' },
		{ "delay-ms",	required_argument,	NULL, 'd' },
		{ "pace",	required_argument,	NULL, 'p' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 }
	};
	int				 ch;

	mk.mk_listen = "127.0.0.1:0";
	mk.mk_text = DEFAULT_TEXT;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			mk.mk_listen = optarg;
			break;
		case 't':
			mk.mk_text = optarg;
			break;
		case 'c':
			mk.mk_chunk = num_arg("chunk", optarg, INT_MAX);
			break;
		case 'd':
			mk.mk_delay_ms = num_arg("delay-ms", optarg,
			    MAX_DELAY_MS);
			break;
		case 'p':
			pace_arg(optarg);
			break;
		case 'q':
			mk.mk_quiet = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (mk.mk_pace_events > 0) {
		mk.mk_chunk = 0;
		mk.mk_text = mk.mk_pace_text = pace_text(mk.mk_text,
		    mk.mk_pace_events);
	}
}

int
main(int argc, char *argv[])
{
	json_t	*t;

	parse_args(argc, argv);
	log_procinit("mock-llm");
	log_init(mk.mk_quiet ? LOG_LVL_WARN : LOG_LVL_INFO);
	if ((t = json_string(mk.mk_text)) == NULL)
		fatalx_code(EX_USAGE, "--text is not valid UTF-8");
	json_decref(t);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	setup();
	listen_on(mk.mk_listen);
	event_base_dispatch(mk.mk_base);
	if (!mk.mk_quiet)
		log_info("exiting");
	teardown();
	return 0;
}
