/* mcp_text.c - an MCP tool result as text: structured content, text blocks, other blocks as the SDK's models dump them. */
#include <jansson.h>
#include <string.h>

#include "../../common/jsonw.h"
#include "mcp_text.h"

/*
 * WilmerAI writes a block without text as json.dumps(block.model_dump()):
 * every field of the SDK's model in declaration order, nulls included,
 * _meta under its field name "meta", extra members after them. The
 * field lists below are the mcp 1.28 models'; a block of a type they do
 * not know is written as the server sent it.
 */

static const char *const f_media[] = { "type", "data", "mimeType",
	"annotations", "meta", NULL };
static const char *const f_resource[] = { "type", "resource",
	"annotations", "meta", NULL };
static const char *const f_link[] = { "name", "title", "uri",
	"description", "mimeType", "size", "icons", "annotations", "meta",
	"type", NULL };
static const char *const f_text_rc[] = { "uri", "mimeType", "meta",
	"text", NULL };
static const char *const f_blob_rc[] = { "uri", "mimeType", "meta",
	"blob", NULL };

static const char *const *
fields_of(const json_t *b)
{
	const char	*t = json_string_value(json_object_get(b, "type"));

	if (t == NULL)
		return NULL;
	if (strcmp(t, "image") == 0 || strcmp(t, "audio") == 0)
		return f_media;
	if (strcmp(t, "resource") == 0)
		return f_resource;
	if (strcmp(t, "resource_link") == 0)
		return f_link;
	return NULL;
}

static bool
listed(const char *const *f, const char *k)
{
	for (; *f != NULL; f++)
		if (strcmp(*f, k) == 0)
			return true;
	return false;
}

/* A new object: the fields f in order (member "_meta" for "meta",
 * null when absent), then members f does not name. */
static json_t *
dumped(json_t *o, const char *const *f)
{
	json_t		*d = json_object(), *v;
	const char	*k;
	size_t		 i;

	for (i = 0; f[i] != NULL; i++) {
		v = json_object_get(o, strcmp(f[i], "meta") == 0 ? "_meta" :
		    f[i]);
		json_object_set(d, f[i], v != NULL ? v : json_null());
	}
	json_object_foreach(o, k, v)
		if (!listed(f, k) && strcmp(k, "_meta") != 0)
			json_object_set(d, k, v);
	return d;
}

static void
block_dump(json_t *b, struct buf *out)
{
	const char *const	*f = fields_of(b);
	json_t			*d, *rc;

	if (f == NULL) {
		jsonw_dump(out, b, JSONW_PYTHON);
		return;
	}
	d = dumped(b, f);
	rc = json_object_get(b, "resource");
	if (f == f_resource && json_is_object(rc))
		json_object_set_new(d, "resource", dumped(rc,
		    json_object_get(rc, "blob") != NULL ? f_blob_rc :
		    f_text_rc));
	jsonw_dump(out, d, JSONW_PYTHON);
	json_decref(d);
}

void
mcp_text_content(const json_t *content, struct buf *out)
{
	json_t		*b, *t;
	size_t		 i;

	for (i = 0; i < json_array_size(content); i++) {
		b = json_array_get(content, i);
		if ((t = json_object_get(b, "text")) != NULL &&
		    json_is_string(t))
			buf_add(out, json_string_value(t),
			    json_string_length(t));
		else
			block_dump(b, out);
	}
}

void
mcp_text_result(const json_t *result, struct buf *out)
{
	const json_t	*sc = json_object_get(result, "structuredContent");

	if (sc != NULL && !json_is_null(sc))
		jsonw_dump(out, sc, JSONW_PYTHON);
	else
		mcp_text_content(json_object_get(result, "content"), out);
}
