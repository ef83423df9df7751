/* chaos.c - the chaos suite's shared helpers: modes, processes, the gateway log, the pool, figures. */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"

bool
chaos_full(void)
{
	const char	*e = getenv("CHAOS_FULL");

	return e != NULL && *e != '\0' && strcmp(e, "0") != 0;
}

long
chaos_limit(long normal, long asan)
{
	return CHAOS_ASAN ? asan : normal;
}

void
chaos_tcase(Suite *s, const char *name, const TTest *test, int timeout_s)
{
	TCase	*tc = tcase_create(name);

	tcase_set_timeout(tc, timeout_s);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

void
chaos_prepare(struct it *t, const char *settings)
{
	char	 s[1024];

	snprintf(s, sizeof(s), "\"min_workers\": %d, \"max_workers\": %d%s%s",
	    CHAOS_WORKERS, CHAOS_WORKERS, settings != NULL ? ", " : "",
	    settings != NULL ? settings : "");
	memset(t, 0, sizeof(*t));
	it_mock_start(t);
	it_config(t, s, NULL);
}

void
chaos_launch(struct it *t, const char *env)
{
	it_gateway_start(t, env);
	it_wait_idle(t, CHAOS_WORKERS);
}

void
chaos_start(struct it *t, const char *settings, const char *env)
{
	chaos_prepare(t, settings);
	chaos_launch(t, env);
}

char *
chaos_body(bool stream, const char *mock_json)
{
	json_t	*b = json_pack("{s:s,s:b,s:[{s:s,s:s+}]}", "model", "chaos",
		    "stream", stream, "messages", "role", "user", "content",
		    "#mock ", mock_json);
	char	*s = json_dumps(b, 0);

	json_decref(b);
	return s;
}

/* The text of /proc/pid/<what> into buf; its length or -1. */
static ssize_t
proc_read(pid_t pid, const char *what, char *buf, size_t len)
{
	char	 path[64];
	int	 fd;
	ssize_t	 n;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	if ((fd = open(path, O_RDONLY)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

char
chaos_proc_state(pid_t pid)
{
	char	 buf[512], *rp;

	if (proc_read(pid, "stat", buf, sizeof(buf)) <= 0 ||
	    (rp = strrchr(buf, ')')) == NULL || rp[1] == '\0')
		return 0;
	return rp[2];
}

long
chaos_rss_kib(pid_t pid)
{
	char	 buf[4096], *p;

	if (proc_read(pid, "status", buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, "VmRSS:")) == NULL)
		return -1;
	return strtol(p + 6, NULL, 10);
}

size_t
chaos_children(pid_t parent, char state, pid_t *out, size_t max)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	char		 buf[512], *rp;
	size_t		 n = 0;
	int		 ppid;
	pid_t		 pid;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (proc_read(pid, "stat", buf, sizeof(buf)) <= 0 ||
		    (rp = strrchr(buf, ')')) == NULL ||
		    sscanf(rp + 2, "%*c %d", &ppid) != 1 || ppid != parent ||
		    (state != 0 && rp[2] != state))
			continue;
		if (out != NULL && n < max)
			out[n] = pid;
		n++;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

static void
worker_fill(struct chaos_worker *cw, json_t *w)
{
	memset(cw, 0, sizeof(*cw));
	cw->cw_slot = (unsigned)json_integer_value(json_object_get(w, "slot"));
	cw->cw_pid = (pid_t)json_integer_value(json_object_get(w, "pid"));
	cw->cw_age_s = json_number_value(json_object_get(w, "age_s"));
	snprintf(cw->cw_state, sizeof(cw->cw_state), "%s",
	    json_string_value(json_object_get(w, "state")));
	snprintf(cw->cw_rqid, sizeof(cw->cw_rqid), "%s",
	    json_string_value(json_object_get(w, "request_id")));
}

size_t
chaos_workers(struct it *t, struct chaos_worker *out, size_t max)
{
	struct it_resp	 r;
	json_t		*j, *w;
	size_t		 i, n = 0;

	if (it_request(t, "GET", "/admin/workers", NULL, &r) == -1 ||
	    r.r_status != 200) {
		it_resp_free(&r);
		return 0;
	}
	j = it_json(r.r_body.b_data);
	json_array_foreach(json_object_get(j, "workers"), i, w)
		if (n < max)
			worker_fill(&out[n++], w);
	json_decref(j);
	it_resp_free(&r);
	return n;
}

long
chaos_health(struct it *t, const char *key, char *status, size_t len)
{
	struct it_resp	 r;
	json_t		*j, *v;
	long		 x = -1;

	if (it_request(t, "GET", "/health", NULL, &r) == -1 ||
	    r.r_body.b_len == 0) {
		it_resp_free(&r);
		return -1;
	}
	j = it_json(r.r_body.b_data);
	if ((v = json_object_get(j, key)) == NULL)
		v = json_object_get(json_object_get(j, "workers"), key);
	if (json_is_string(v) && status != NULL)
		snprintf(status, len, "%s", json_string_value(v));
	if (json_is_integer(v))
		x = (long)json_integer_value(v);
	else if (json_is_string(v))
		x = r.r_status;
	json_decref(j);
	it_resp_free(&r);
	return x;
}

void
chaos_mock_stats(struct it *t, long *active, long *gone)
{
	struct it_resp	 r;
	json_t		*j;

	ck_assert_int_eq(it_request(t, "GET", "mock:/mock/stats", NULL, &r),
	    0);
	j = it_json(r.r_body.b_data);
	*active = (long)json_integer_value(json_object_get(j, "active"));
	*gone = (long)json_integer_value(json_object_get(j, "client_gone"));
	json_decref(j);
	it_resp_free(&r);
}

char *
chaos_log(struct it *t, size_t *len)
{
	FILE	*f = fopen(t->it_log, "r");
	char	*s;
	long	 n;

	*len = 0;
	if (f == NULL)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	*len = fread(s, 1, (size_t)n, f);
	s[*len] = '\0';
	fclose(f);
	return s;
}

int64_t
chaos_line_ms(const char *log, const char *p)
{
	struct tm	 tm;
	int		 ms;

	while (p > log && p[-1] != '\n')
		p--;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(p, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
	    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000 + ms;
}

long
chaos_access_worker(const char *log, const char *rqid)
{
	char		 tag[96];
	const char	*p = log, *bol, *w;

	snprintf(tag, sizeof(tag), "[rq %s]", rqid);
	while ((p = strstr(p, tag)) != NULL) {
		for (bol = p; bol > log && bol[-1] != '\n'; bol--)
			;
		w = strstr(bol, " worker=");
		if (w != NULL && w < p && strstr(bol, "\"POST ") != NULL &&
		    strstr(bol, "\"POST ") < p)
			return strtol(w + 8, NULL, 10);
		p += strlen(tag);
	}
	return -1;
}

const char *
chaos_find_line(const char *log, size_t from, const char *const *needles)
{
	const char	*p = log + from, *e;
	size_t		 i;
	char		*line;

	for (; *p != '\0'; p = *e == '\0' ? e : e + 1) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		line = strndup(p, (size_t)(e - p));
		for (i = 0; needles[i] != NULL; i++)
			if (strstr(line, needles[i]) == NULL)
				break;
		free(line);
		if (needles[i] == NULL)
			return p;
	}
	return NULL;
}

static int
cmp_long(const void *a, const void *b)
{
	long	 x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

long
chaos_pct(long *v, size_t n, double pct)
{
	size_t	 k;

	if (n == 0)
		return -1;
	qsort(v, n, sizeof(*v), cmp_long);
	/* Nearest rank: the smallest value with pct% of them at or below. */
	k = (size_t)((pct / 100.0) * (double)n + 0.999999);
	return v[k == 0 ? 0 : (k > n ? n : k) - 1];
}

void
chaos_say(const char *fmt, ...)
{
	va_list	 ap;

	printf("chaos: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void
chaos_put(const char *path, const char *text)
{
	char	 tmp[600], *slash;
	FILE	*f;

	/* A dotfile beside it: rogue workers never claim those. */
	slash = strrchr(path, '/');
	snprintf(tmp, sizeof(tmp), "%.*s/.tmp-%s", (int)(slash - path), path,
	    slash + 1);
	f = fopen(tmp, "w");
	ck_assert_msg(f != NULL, "cannot write %s", tmp);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(rename(tmp, path), 0);
}
