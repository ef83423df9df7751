/* mock_wiki.c - a fake OfflineWikipediaTextApi server (addendum A1.2) for the wiki tests, with controls to make it misbehave. */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/queue.h>
#include <sys/socket.h>

/*
 * GET /articles, /summaries, /top_article, /top_n_articles as the real
 * server answers them, over a small corpus (or --corpus FILE, a JSON
 * array of {"title", "text"}). A hit is an article sharing words with
 * the prompt; its similarity is the share of the prompt's words its
 * text holds, kept when >= percentile, best first. Controls:
 *   GET /_mode?set=NAME  how the search endpoints answer from now on:
 *	normal, status500, status503, notjson, object, notext,
 *	nonobject, empty, hang (never answers)
 *   GET /_last           {"count": N, "path", "query", "headers": {}}
 *			  of the last search request (N: how many came)
 */

#define MW_MAXWORDS	256

static json_t		*corpus;
static char		 mode[32] = "normal";
static json_t		*last;
static long		 count;
static struct event_base *base;

static const char	*builtin =
    "[{\"title\": \"Python (programming language)\", \"text\": \"Python is "
    "a programming language that lets you work quickly.\"},"
    " {\"title\": \"Ball python\", \"text\": \"The ball python is a snake "
    "found in Africa. It is not a programming language.\"},"
    " {\"title\": \"Paris\", \"text\": \"Paris is the capital of France.\"}]";

/* The lower-cased \w+ words of s (ASCII letters, digits, _). */
static size_t
words(const char *s, char w[][64], size_t max)
{
	size_t	 n = 0, k;

	while (*s != '\0' && n < max) {
		if (!isalnum((unsigned char)*s) && *s != '_') {
			s++;
			continue;
		}
		for (k = 0; (isalnum((unsigned char)*s) || *s == '_'); s++)
			if (k < 63)
				w[n][k++] = (char)tolower((unsigned char)*s);
		w[n++][k] = '\0';
	}
	return n;
}

/* |a ∩ b| as multisets. */
static size_t
common(char a[][64], size_t na, char b[][64], size_t nb)
{
	char	 used[MW_MAXWORDS] = { 0 };
	size_t	 i, j, n = 0;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			if (!used[j] && strcmp(a[i], b[j]) == 0) {
				used[j] = 1;
				n++;
				break;
			}
	return n;
}

static char	 pw[MW_MAXWORDS][64], tw[MW_MAXWORDS][64];

/* The score 2*|P∩title| + |P∩text|, or the similarity when sim. */
static double
score(const char *p, const json_t *a, int sim)
{
	size_t	 np = words(p, pw, MW_MAXWORDS), nt, s;

	nt = words(json_string_value(json_object_get(a, "text")), tw,
	    MW_MAXWORDS);
	s = common(pw, np, tw, nt);
	if (sim)
		return np ? (double)s / (double)np : 0;
	nt = words(json_string_value(json_object_get(a, "title")), tw,
	    MW_MAXWORDS);
	return 2.0 * (double)common(pw, np, tw, nt) + (double)s;
}

static void
reply(struct evhttp_request *req, int code, const char *body)
{
	struct evbuffer	*b = evbuffer_new();

	evbuffer_add(b, body, strlen(body));
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, code, code == 200 ? "OK" : "Error", b);
	evbuffer_free(b);
}

static void
reply_json(struct evhttp_request *req, int code, json_t *v)
{
	char	*s = json_dumps(v, JSON_ENCODE_ANY);

	reply(req, code, s);
	free(s);
	json_decref(v);
}

/* Record the request for /_last. */
static void
record(struct evhttp_request *req, const char *path, const char *query)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct evkeyval		*kv;
	json_t			*hs = json_object();

	TAILQ_FOREACH(kv, h, next)
		json_object_set_new(hs, kv->key, json_string(kv->value));
	json_decref(last);
	last = json_pack("{s:s, s:s, s:o}", "path", path, "query",
	    query ? query : "", "headers", hs);
	count++;
}

/* A parameter as a number: 0, or -1 when present and malformed. */
static int
param(struct evkeyvalq *q, const char *key, double def, int integer,
    double *out)
{
	const char	*v = evhttp_find_header(q, key);
	char		*end;

	*out = def;
	if (v == NULL)
		return 0;
	*out = integer ? (double)strtol(v, &end, 10) : strtod(v, &end);
	return end == v || *end != '\0' ? -1 : 0;
}

/* The hits: articles with similarity >= pct, best first, at most n. */
static json_t *
search(const char *p, double pct, long n)
{
	json_t	*hits = json_array(), *a;
	size_t	 i, j, k = json_array_size(corpus);
	double	 s[64];
	int	 taken[64] = { 0 }, best;

	for (i = 0; i < k && i < 64; i++)
		s[i] = score(p, json_array_get(corpus, i), 1);
	while ((long)json_array_size(hits) < n) {
		best = -1;
		for (j = 0; j < k && j < 64; j++)
			if (!taken[j] && s[j] > 0 && s[j] >= pct &&
			    (best < 0 || s[j] > s[best]))
				best = (int)j;
		if (best < 0)
			break;
		taken[best] = 1;
		a = json_array_get(corpus, (size_t)best);
		json_array_append(hits, a);
	}
	return hits;
}

/* /top_n_articles' order: by score, stable; negative n keeps the last
 * |n| of the ascending order. */
static json_t *
top_n(const char *p, json_t *hits, long n)
{
	json_t	*out = json_array();
	size_t	 m = json_array_size(hits), i, j, idx[64];
	double	 sc[64];
	long	 want = n < 0 ? -n : n;

	for (i = 0; i < m && i < 64; i++) {
		idx[i] = i;
		sc[i] = score(p, json_array_get(hits, i), 0);
	}
	for (i = 1; i < m && i < 64; i++)	/* stable insertion sort */
		for (j = i; j > 0 && (n >= 0 ? sc[idx[j]] > sc[idx[j - 1]] :
		    sc[idx[j]] < sc[idx[j - 1]]); j--) {
			size_t	 t = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (i = n >= 0 ? 0 : (m > (size_t)want ? m - (size_t)want : 0);
	    i < m && (n < 0 || (long)i < want); i++)
		json_array_append(out, json_array_get(hits, idx[i]));
	return out;
}

/* A forced answer for the current mode; 0 when the mode is normal. */
static int
forced(struct evhttp_request *req, int object)
{
	if (strcmp(mode, "hang") == 0)
		return 1;	/* never answered */
	if (strcmp(mode, "status500") == 0)
		reply(req, 500, "{\"detail\": \"Search error: forced\"}");
	else if (strcmp(mode, "status503") == 0)
		reply(req, 503, "unavailable");
	else if (strcmp(mode, "notjson") == 0)
		reply(req, 200, "<html>not json</html>");
	else if (strcmp(mode, "object") == 0)
		reply(req, 200, "{\"alpha\": 1, \"beta\": {\"x\": 2}}");
	else if (strcmp(mode, "notext") == 0)
		reply(req, 200, object ? "{\"title\": \"T\"}" :
		    "[{\"title\": \"T\"}, {\"text\": \"only text\"}]");
	else if (strcmp(mode, "nonobject") == 0)
		reply(req, 200, "[\"plain\", 42, {\"title\": \"X\", "
		    "\"text\": \"Y\"}]");
	else if (strcmp(mode, "empty") == 0)
		reply(req, 200, object ? "{}" : "[]");
	else
		return 0;
	return 1;
}

/* The success body of each endpoint from its hits. */
static void
answer(struct evhttp_request *req, const char *path, const char *p,
    json_t *hits, long top)
{
	json_t	*a, *out = json_array();
	size_t	 i, best = 0;
	char	 cut[501];

	if (strcmp(path, "/top_article") == 0) {
		for (i = 1; i < json_array_size(hits); i++)
			if (score(p, json_array_get(hits, i), 0) >
			    score(p, json_array_get(hits, best), 0))
				best = i;
		json_decref(out);
		out = json_incref(json_array_get(hits, best));
	} else if (strcmp(path, "/top_n_articles") == 0) {
		json_decref(out);
		out = top_n(p, hits, top);
	} else if (strcmp(path, "/summaries") == 0) {
		json_array_foreach(hits, i, a) {
			snprintf(cut, sizeof(cut), "%s", json_string_value(
			    json_object_get(a, "text")));
			json_array_append_new(out, json_pack("{s:O, s:s}",
			    "title", json_object_get(a, "title"), "text", cut));
		}
	} else
		json_array_extend(out, hits);
	json_decref(hits);
	reply_json(req, 200, out);
}

/* One search endpoint. */
static void
on_search(struct evhttp_request *req, const char *path, const char *query)
{
	struct evkeyvalq	 q;
	const char		*p0;
	char			 p[1024], *d;
	double			 pct, n, top;
	int			 topn = strcmp(path, "/top_n_articles") == 0;
	json_t			*hits;

	record(req, path, query);
	if (forced(req, strcmp(path, "/top_article") == 0))
		return;
	TAILQ_INIT(&q);
	evhttp_parse_query_str(query ? query : "", &q);
	if ((p0 = evhttp_find_header(&q, "prompt")) == NULL ||
	    param(&q, "percentile", 0.5, 0, &pct) ||
	    param(&q, "num_results", topn ? 20 : 5, 1, &n) ||
	    param(&q, "num_top_articles", 8, 1, &top)) {
		reply(req, 422, "{\"detail\": [{\"type\": \"parsing\", "
		    "\"msg\": \"malformed parameter\"}]}");
		evhttp_clear_headers(&q);
		return;
	}
	for (d = p; *p0 != '\0' && d < p + sizeof(p) - 1; p0++)
		if (strchr("'\";", *p0) == NULL)
			*d++ = *p0;
	*d = '\0';
	evhttp_clear_headers(&q);
	hits = search(p, pct, (long)n);
	if (json_array_size(hits) == 0) {
		json_decref(hits);
		reply(req, 404, "{\"detail\":\"No results found for prompt\"}");
		return;
	}
	answer(req, path, p, hits, (long)top);
}

static void
on_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri	*u = evhttp_request_get_evhttp_uri(req);
	const char		*path = evhttp_uri_get_path(u);
	const char		*query = evhttp_uri_get_query(u);
	struct evkeyvalq	 q;
	const char		*set;

	if (strcmp(path, "/_last") == 0) {
		reply_json(req, 200, json_pack("{s:i, s:O}", "count",
		    (json_int_t)count, "last", last ? last : json_null()));
	} else if (strcmp(path, "/_mode") == 0) {
		TAILQ_INIT(&q);
		evhttp_parse_query_str(query ? query : "", &q);
		if ((set = evhttp_find_header(&q, "set")) != NULL)
			snprintf(mode, sizeof(mode), "%s", set);
		evhttp_clear_headers(&q);
		reply(req, 200, "{}");
	} else if (strcmp(path, "/articles") == 0 ||
	    strcmp(path, "/summaries") == 0 ||
	    strcmp(path, "/top_article") == 0 ||
	    strcmp(path, "/top_n_articles") == 0)
		on_search(req, path, query);
	else
		reply(req, 404, "{\"detail\": \"Not Found\"}");
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
	event_base_loopexit(base, NULL);
}

/* The corpus: the file's JSON array, or the built-in one. */
static int
load_corpus(const char *file)
{
	json_error_t	 je;

	corpus = file ? json_load_file(file, 0, &je) :
	    json_loads(builtin, 0, &je);
	if (!json_is_array(corpus)) {
		fprintf(stderr, "mock-wiki: bad corpus: %s\n", je.text);
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	const char			*file = NULL;
	struct evhttp			*http;
	struct evhttp_bound_socket	*bs;
	struct event			*ev;
	struct sockaddr_in		 sa;
	ev_socklen_t			 len = sizeof(sa);

	if (argc == 3 && strcmp(argv[1], "--corpus") == 0)
		file = argv[2];
	else if (argc != 1) {
		fprintf(stderr, "usage: mock-wiki [--corpus FILE]\n");
		return 2;
	}
	if (load_corpus(file) != 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	base = event_base_new();
	http = evhttp_new(base);
	evhttp_set_gencb(http, on_request, NULL);
	if ((bs = evhttp_bind_socket_with_handle(http, "127.0.0.1", 0)) ==
	    NULL || getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&sa, &len) != 0)
		return 1;
	/* The handler first: a test may stop the mock right after it
	 * reads this line. */
	ev = evsignal_new(base, SIGTERM, on_signal, NULL);
	event_add(ev, NULL);
	printf("mock-wiki listening on 127.0.0.1:%d\n", ntohs(sa.sin_port));
	fflush(stdout);
	event_base_dispatch(base);
	event_free(ev);
	evhttp_free(http);
	event_base_free(base);
	json_decref(corpus);
	json_decref(last);
	return 0;
}
