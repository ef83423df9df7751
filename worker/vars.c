/* vars.c - workflow variables and {name} substitution. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/xmem.h"
#include "msgs.h"
#include "vars.h"

struct var {
	char	*v_name;
	char	*v_value;
};

struct vars {
	struct var	*vs_v;
	size_t		 vs_n;
};

struct vars *
vars_new(void)
{
	return xcalloc(1, sizeof(struct vars));
}

void
vars_free(struct vars *vs)
{
	size_t	 i;

	if (vs == NULL)
		return;
	for (i = 0; i < vs->vs_n; i++) {
		free(vs->vs_v[i].v_name);
		free(vs->vs_v[i].v_value);
	}
	free(vs->vs_v);
	free(vs);
}

const char *
vars_get(const struct vars *vs, const char *name, size_t n)
{
	size_t	 i;

	for (i = 0; i < vs->vs_n; i++)
		if (strncmp(vs->vs_v[i].v_name, name, n) == 0 &&
		    vs->vs_v[i].v_name[n] == '\0')
			return vs->vs_v[i].v_value;
	return NULL;
}

void
vars_set(struct vars *vs, const char *name, const char *value)
{
	size_t	 i;

	for (i = 0; i < vs->vs_n; i++)
		if (strcmp(vs->vs_v[i].v_name, name) == 0) {
			free(vs->vs_v[i].v_value);
			vs->vs_v[i].v_value = xstrdup(value);
			return;
		}
	vs->vs_v = xreallocarray(vs->vs_v, vs->vs_n + 1, sizeof(*vs->vs_v));
	vs->vs_v[vs->vs_n].v_name = xstrdup(name);
	vs->vs_v[vs->vs_n++].v_value = xstrdup(value);
}

char *
vars_format(const struct vars *vs, const char *t)
{
	struct buf	 b = BUF_INIT;
	const char	*close, *val;

	buf_adds(&b, "");
	while (*t != '\0') {
		if ((t[0] == '{' && t[1] == '{') || (t[0] == '}' && t[1] == '}')) {
			buf_addc(&b, t[0]);
			t += 2;
			continue;
		}
		if (t[0] != '{' || (close = strchr(t + 1, '}')) == NULL ||
		    memchr(t + 1, '{', (size_t)(close - t - 1)) != NULL ||
		    (val = vars_get(vs, t + 1, (size_t)(close - t - 1))) ==
		    NULL) {
			buf_addc(&b, *t++);
			continue;
		}
		buf_adds(&b, val);
		t = close + 1;
	}
	return buf_take(&b);
}

/* Messages after the leading system messages, last n, joined "\n". */
static char *
last_messages(const struct wmsgs *l, size_t n)
{
	struct buf	 b = BUF_INIT;
	size_t		 first = 0, i;

	while (first < l->n && strcmp(l->v[first].m_role, "system") == 0)
		first++;
	i = l->n - first > n ? l->n - n : first;
	buf_adds(&b, "");
	for (; i < l->n; i++) {
		if (b.b_len > 0)
			buf_addc(&b, '\n');
		buf_adds(&b, l->v[i].m_content);
	}
	return buf_take(&b);
}

static void
conversation_vars(struct vars *vs, const struct wmsgs *l)
{
	static const struct { const char *n; size_t k; } lasts[] = {
		{ "one", 1 }, { "two", 2 }, { "three", 3 }, { "four", 4 },
		{ "five", 5 }, { "ten", 10 }, { "twenty", 20 } };
	struct buf	 sys = BUF_INIT;
	char		 name[48], *v;
	size_t		 i;

	buf_adds(&sys, "");
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].m_role, "system") == 0)
			buf_adds(&sys, l->v[i].m_content);
	vars_set(vs, "chat_system_prompt", sys.b_data);
	buf_free(&sys);
	for (i = 0; i < sizeof(lasts) / sizeof(lasts[0]); i++) {
		snprintf(name, sizeof(name), "chat_user_prompt_last_%s",
		    lasts[i].n);
		v = last_messages(l, lasts[i].k);
		vars_set(vs, name, v);
		free(v);
	}
}

void
vars_clock(struct vars *vs, time_t now)
{
	struct tm	 tm;
	char		 s[64];
	int		 h;

	localtime_r(&now, &tm);
	strftime(s, sizeof(s), "%B %d, %Y", &tm);
	vars_set(vs, "todays_date_pretty", s);
	strftime(s, sizeof(s), "%Y-%m-%d", &tm);
	vars_set(vs, "todays_date_iso", s);
	strftime(s, sizeof(s), "%Y_%m_%d", &tm);
	vars_set(vs, "YYYY_MM_DD", s);
	h = tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12;
	snprintf(s, sizeof(s), "%d:%02d %s", h, tm.tm_min,
	    tm.tm_hour < 12 ? "AM" : "PM");
	vars_set(vs, "current_time_12h", s);
	strftime(s, sizeof(s), "%H:%M", &tm);
	vars_set(vs, "current_time_24h", s);
	strftime(s, sizeof(s), "%B", &tm);
	vars_set(vs, "current_month_full", s);
	strftime(s, sizeof(s), "%A", &tm);
	vars_set(vs, "current_day_of_week", s);
	strftime(s, sizeof(s), "%d", &tm);
	vars_set(vs, "current_day_of_month", s);
}

void
vars_conversation(struct vars *vs, const struct wmsgs *l)
{
	vars_set(vs, "Discussion_Id", "");
	vars_set(vs, "time_context_summary", "");
	conversation_vars(vs, l);
}
