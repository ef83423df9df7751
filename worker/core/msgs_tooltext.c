/* msgs_tooltext.c - includeToolCallsInConversation: tool calls and results written into the messages' text, for the conversation variables (addendum A8.4). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/pyfmt.h"
#include "../../common/utf8.h"
#include "../../common/xmem.h"
#include "msgs_tooltext.h"

#define SUMMARY_MAX	200	/* characters (code points) */

/* The label map: a call's id and what a result of it is called. */
struct label {
	char	*l_id;
	char	*l_text;
};

struct labels {
	struct label	*v;
	size_t		 n;
};

/* s cut to SUMMARY_MAX code points, appended to out. */
static void
cut(struct buf *out, const char *s, size_t n)
{
	size_t	 i = 0, k = 0, len;

	while (i < n && k++ < SUMMARY_MAX) {
		(void)utf8_next(s + i, n - i, &len);
		i += len;
	}
	buf_add(out, s, i);
}

/* WilmerAI's summary of a call's arguments into out: a string is read
 * as JSON when it is JSON; of an object, the first string member; of a
 * string, its text; null gives nothing; anything else its str(). */
static void
summary(struct buf *out, json_t *args)
{
	json_t		*parsed = NULL, *v;
	const char	*k;
	char		*s;

	if (json_is_string(args) && (parsed = json_loads(json_string_value(
	    args), JSON_DECODE_ANY, NULL)) != NULL)
		args = parsed;
	if (json_is_object(args)) {
		json_object_foreach(args, k, v)
			if (json_is_string(v)) {
				cut(out, json_string_value(v),
				    json_string_length(v));
				break;
			}
	} else if (json_is_string(args))
		cut(out, json_string_value(args), json_string_length(args));
	else if (args != NULL && !json_is_null(args)) {
		s = pyfmt_strdup(args);
		cut(out, s, strlen(s));
		free(s);
	}
	json_decref(parsed);
}

/* A call's function name, "unknown" when it has none. */
static const char *
call_name(const json_t *call)
{
	const json_t	*n = json_object_get(json_object_get(call, "function"),
			    "name");

	return json_is_string(n) ? json_string_value(n) : "unknown";
}

/* Remember what a result of call is called, when the call has an id. */
static void
label_add(struct labels *l, const json_t *call, const char *sum)
{
	const json_t	*id = json_object_get(call, "id");
	const char	*name = call_name(call);

	if (!json_is_string(id) || json_string_length(id) == 0)
		return;
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n].l_id = xstrdup(json_string_value(id));
	l->v[l->n++].l_text = *sum != '\0' ? xasprintf("%s %s", name, sum) :
	    xstrdup(name);
}

/* An assistant message's calls as text lines after its content; their
 * labels remembered. */
static void
calls_text(struct wmsg *m, json_t *calls, struct labels *l)
{
	struct buf	 t = BUF_INIT, sum = BUF_INIT;
	json_t		*c;
	size_t		 i, lines = 0;

	if (m->m_content[0] != '\0')
		buf_printf(&t, "%s\n", m->m_content);
	json_array_foreach(calls, i, c) {
		if (!json_is_object(c))
			continue;
		buf_reset(&sum);
		buf_adds(&sum, "");
		summary(&sum, json_object_get(json_object_get(c, "function"),
		    "arguments"));
		buf_printf(&t, "%s[Tool Call: %s] %s", lines++ > 0 ? "\n" : "",
		    call_name(c), sum.b_data);
		label_add(l, c, sum.b_data);
	}
	buf_adds(&t, "");
	free(m->m_content);
	m->m_content = buf_take(&t);
	buf_free(&sum);
}

/* A tool result's text. */
static void
result_text(struct wmsg *m, const struct labels *l)
{
	const char	*name = m->m_name != NULL ? m->m_name : "unknown_tool";
	char		*s;
	size_t		 i;

	for (i = 0; m->m_tool_call_id != NULL && i < l->n; i++)
		if (strcmp(l->v[i].l_id, m->m_tool_call_id) == 0) {
			name = l->v[i].l_text;
			break;
		}
	s = xasprintf("[Tool Result: %s] %s", name, m->m_content);
	free(m->m_content);
	m->m_content = s;
}

/* The calls of an assistant message, when it has any. Caller
 * decrefs. */
static json_t *
calls_of(const struct wmsg *m)
{
	return strcmp(m->m_role, "assistant") == 0 ? wmsg_calls(m) : NULL;
}

void
wmsgs_tool_text(struct wmsgs *out, const struct wmsgs *in)
{
	struct labels	 l = { NULL, 0 };
	json_t		*calls;
	size_t		 i;

	for (i = 0; i < in->n; i++) {
		wmsgs_add_copy(out, &in->v[i]);
		if ((calls = calls_of(&in->v[i])) != NULL)
			calls_text(&out->v[out->n - 1], calls, &l);
		else if (strcmp(in->v[i].m_role, "tool") == 0)
			result_text(&out->v[out->n - 1], &l);
		json_decref(calls);
	}
	for (i = 0; i < l.n; i++) {
		free(l.v[i].l_id);
		free(l.v[i].l_text);
	}
	free(l.v);
}
