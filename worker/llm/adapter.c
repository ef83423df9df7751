/* adapter.c - the helpers every backend adapter shares, and a call's output record. */
#include <jansson.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "../../common/uuid.h"
#include "adapter.h"

void
node_out_init(struct node_out *o)
{
	memset(o, 0, sizeof(*o));
	o->no_prompt_tokens = o->no_completion_tokens = -1;
}

void
node_out_free(struct node_out *o)
{
	buf_free(&o->no_text);
}

char *
adapter_dump(json_t *root)
{
	char	*s = jsonw_dumps(root, JSONW_PYTHON);

	json_decref(root);
	return s;
}

/* The message of an error object in the dialects' shapes: Ollama's
 * {"error": "..."}, OpenAI's and Claude's {"error": {"message"}},
 * KoboldCpp's {"detail": {"msg"}}, FastAPI's {"detail": "..."} and
 * {"detail": [{"msg"}, ...]}. NULL when it has none. */
static const char *
error_text(json_t *root)
{
	json_t	*e = json_object_get(root, "error");
	json_t	*d = json_object_get(root, "detail");

	if (json_is_string(e))
		return json_string_value(e);
	if (json_is_object(e))
		return json_string_value(json_object_get(e, "message"));
	if (json_is_string(d))
		return json_string_value(d);
	if (json_is_array(d))
		d = json_array_get(d, 0);
	return json_string_value(json_object_get(d, "msg"));
}

bool
adapter_error_message(const char *body, size_t n, char *out, size_t len)
{
	json_t		*root = json_loadb(body != NULL ? body : "", n, 0, NULL);
	const char	*msg = json_is_object(root) ? error_text(root) : NULL;
	bool		 found = msg != NULL && *msg != '\0';
	size_t		 i;

	if (found)
		snprintf(out, len, "%s", msg);
	json_decref(root);		/* msg dies here */
	if (!found)
		return false;
	for (i = 0; out[i] != '\0'; i++)
		if (out[i] == '\n' || out[i] == '\r')
			out[i] = ' ';
	return true;
}

/* A reply carrying "error" (not null): the backend failed it. */
static bool
backend_error(struct call_state *cs, json_t *root)
{
	json_t		*e = json_object_get(root, "error");
	const char	*msg;

	if (e == NULL || json_is_null(e))
		return false;
	msg = error_text(root);
	snprintf(cs->cs_error, sizeof(cs->cs_error), "the backend reported "
	    "an error: %s", msg ? msg : "(no message)");
	return true;
}

json_t *
adapter_reply(struct call_state *cs, const char *text, size_t n,
    const char *what)
{
	json_t		*root;
	json_error_t	 je;

	if ((root = json_loadb(text, n, 0, &je)) == NULL ||
	    !json_is_object(root)) {
		snprintf(cs->cs_error, sizeof(cs->cs_error), "%s is not JSON: "
		    "%.*s", what, n > 60 ? 60 : (int)n, text);
		json_decref(root);
		return NULL;
	}
	if (backend_error(cs, root)) {
		json_decref(root);
		return NULL;
	}
	return root;
}

bool
adapter_blank(const char *text, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (strchr(" \t\r\n\v\f", text[i]) == NULL || text[i] == '\0')
			return false;
	return true;
}

void
adapter_finish_n(struct call_state *cs, const char *reason, size_t n)
{
	snprintf(cs->cs_out->no_finish, sizeof(cs->cs_out->no_finish),
	    "%.*s", n > INT_MAX ? INT_MAX : (int)n, reason);
}

void
adapter_finish(struct call_state *cs, const char *reason)
{
	if (reason != NULL)
		adapter_finish_n(cs, reason, strlen(reason));
}

void
adapter_usage(struct call_state *cs, const json_t *prompt,
    const json_t *completion)
{
	if (json_is_integer(prompt))
		cs->cs_out->no_prompt_tokens = json_integer_value(prompt);
	if (json_is_integer(completion))
		cs->cs_out->no_completion_tokens = json_integer_value(completion);
}

const char *
adapter_raw_image(const char *img)
{
	const char	*b;

	if (strncmp(img, "data:", 5) != 0 ||
	    (b = strstr(img, ";base64,")) == NULL)
		return img;
	return b + 8;
}

void
adapter_tool_call(struct call_state *cs, json_t *call)
{
	if (cs->cs_nc->nc_tool_calls != NULL)
		json_array_append(cs->cs_nc->nc_tool_calls, call);
	json_decref(call);
}

json_t *
adapter_openai_call(long index, const char *id, const char *name,
    const char *arguments)
{
	json_t	*o = json_object();
	char	 hex[33], gen[40];

	if (index >= 0)
		json_object_set_new(o, "index", json_integer(index));
	if (id == NULL) {
		uuid_new_hex(hex);
		snprintf(gen, sizeof(gen), "call_%.24s", hex);
		id = gen;
	}
	json_object_set_new(o, "id", json_string(id));
	json_object_set_new(o, "type", json_string("function"));
	json_object_set_new(o, "function", json_pack("{s:s,s:s}", "name",
	    name != NULL ? name : "", "arguments",
	    arguments != NULL ? arguments : ""));
	return o;
}
