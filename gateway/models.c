/* models.c - the model routes' bodies: /v1/models, /api/tags, /api/ps and /api/show, each model the gateway lists in its API's shape. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/jsonw.h"
#include "../common/sha256.h"
#include "../common/xmem.h"
#include "models.h"
#include "users.h"

/*
 * Sluice serves workflows, not weights: it knows nothing of a backend
 * model's size, format or quantization. Ollama's fields that describe
 * them get WilmerAI's placeholders (its /api/tags), the same on every
 * route, and what would be made up otherwise is left out.
 */
#define MODIFIED_AT	"2024-11-23T00:00:00Z"	/* WilmerAI's fixed date */
#define NEVER_UNLOADED	"9999-12-31T23:59:59Z"	/* `ollama ps`: "Forever" */

/* Ollama's "details" of a model: one copy for tags, ps and show. */
static json_t *
details(void)
{
	return json_pack("{s:s,s:s,s:s,s:n,s:s,s:s}", "parent_model", "",
	    "format", "gguf", "family", "sluice", "families",
	    "parameter_size", "N/A", "quantization_level", "Q8");
}

/* What /api/tags (ps false) or /api/ps (ps true) says of model id; the
 * digest is sha256 of the name (WilmerAI). */
static json_t *
ollama_entry(const char *id, bool ps)
{
	char	 h[SHA256_HEXLEN], *latest = xasprintf("%s:latest", id);
	json_t	*o = json_pack("{s:s,s:s}", "name", id, "model", latest);

	free(latest);
	sha256_hex(id, strlen(id), h);
	if (!ps)
		json_object_set_new(o, "modified_at", json_string(MODIFIED_AT));
	json_object_set_new(o, "size", json_integer(1));
	json_object_set_new(o, "digest", json_string(h));
	json_object_set_new(o, "details", details());
	if (ps) {
		json_object_set_new(o, "expires_at",
		    json_string(NEVER_UNLOADED));
		json_object_set_new(o, "size_vram", json_integer(0));
	}
	return o;
}

static void
add_tag(void *arg, const char *id)
{
	json_array_append_new(arg, ollama_entry(id, false));
}

static void
add_running(void *arg, const char *id)
{
	json_array_append_new(arg, ollama_entry(id, true));
}

static void
add_openai(void *arg, const char *id)
{
	json_array_append_new(arg, json_pack("{s:s,s:s,s:I,s:s}", "id", id,
	    "object", "model", "created", (json_int_t)time(NULL), "owned_by",
	    "sluice"));
}

/* {key: [one entry per listed model]}, with "object": "list" first for
 * OpenAI. */
static void
list(struct gw *g, struct buf *out, const char *key, bool openai,
    void (*entry)(void *, const char *))
{
	json_t	*root = openai ? json_pack("{s:s}", "object", "list") :
		    json_object();
	json_t	*a = json_array();

	users_models(g, entry, a);
	json_object_set_new(root, key, a);
	jsonw_dump(out, root, JSONW_COMPACT);
	json_decref(root);
}

void
models_openai(struct gw *g, struct buf *out)
{
	list(g, out, "data", true, add_openai);
}

void
models_tags(struct gw *g, struct buf *out)
{
	list(g, out, "models", false, add_tag);
}

void
models_ps(struct gw *g, struct buf *out)
{
	list(g, out, "models", false, add_running);
}

/* Looks for one name among the listed models. */
struct lookup {
	const char	*lk_name;
	size_t		 lk_len;	/* without ":latest" */
	bool		 lk_found;
};

static void
match(void *arg, const char *id)
{
	struct lookup	*lk = arg;

	if (strlen(id) == lk->lk_len && strncmp(id, lk->lk_name,
	    lk->lk_len) == 0)
		lk->lk_found = true;
}

/* The answer for a listed model: its details as /api/tags has them,
 * and what Sluice can say for itself. */
static void
show_json(const char *name, size_t len, struct buf *out)
{
	char	*mf = xasprintf("# Sluice serves \"%.*s\" with a workflow; "
		    "it has no Modelfile.\n", (int)len, name);
	json_t	*o = json_pack("{s:s,s:s,s:s,s:o,s:{s:s},s:[s,s,s],s:s}",
		    "modelfile", mf, "parameters", "", "template", "",
		    "details", details(), "model_info", "general.architecture",
		    "sluice", "capabilities", "completion", "tools", "vision",
		    "modified_at", MODIFIED_AT);

	jsonw_dump(out, o, JSONW_COMPACT);
	json_decref(o);
	free(mf);
}

/* The name asked for: "model", else the older "name". NULL with err
 * when neither is a non-empty string. */
static const char *
show_name(json_t *root, char err[API_ERRLEN])
{
	json_t		*m = json_object_get(root, "model");
	json_t		*n = json_object_get(root, "name");

	if ((m != NULL && !json_is_null(m) && !json_is_string(m)) ||
	    (n != NULL && !json_is_null(n) && !json_is_string(n))) {
		snprintf(err, API_ERRLEN, "'model' must be a string.");
		return NULL;
	}
	if (json_string_length(m) > 0)
		return json_string_value(m);
	if (json_string_length(n) > 0)
		return json_string_value(n);
	snprintf(err, API_ERRLEN, "model is required");	/* Ollama's words */
	return NULL;
}

int
models_show(struct gw *g, const char *body, size_t len, struct buf *out,
    char err[API_ERRLEN])
{
	struct lookup	 lk;
	json_t		*root;
	int		 status = 200;

	if (api_load(body, len, &root, &status, err) == -1)
		return status;
	if ((lk.lk_name = show_name(root, err)) == NULL) {
		json_decref(root);
		return 400;
	}
	lk.lk_len = users_model_len(lk.lk_name);
	lk.lk_found = false;
	users_models(g, match, &lk);
	if (lk.lk_found)
		show_json(lk.lk_name, lk.lk_len, out);
	else {
		snprintf(err, API_ERRLEN, "model '%.200s' not found",
		    lk.lk_name);
		status = 404;
	}
	json_decref(root);
	return status;
}
