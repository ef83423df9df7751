/* memory.c - what every memory feature shares: the discussion's key, the settings file, LLM calls, helper workflows, the generation lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../../common/clock.h"
#include "../../common/log.h"
#include "../../common/names.h"
#include "../../common/xmem.h"
#include "../llm/ask_node.h"
#include "../store/store_lock.h"
#include "memory.h"

char *
memory_key(const struct node_ctx *x)
{
	return memory_key_of(x->nx_discussion_id, x->nx_key_scope);
}

char *
memory_key_of(const char *discussion, struct str scope)
{
	if (discussion == NULL || *discussion == '\0')
		return NULL;
	if (scope.n > 0)
		return xasprintf("%.*s/%s", (int)scope.n, scope.p, discussion);
	return xstrdup(discussion);
}

/* ---- the settings file ---------------------------------------------- */

static const char *
sget(json_t *root, const char *key, const char *def)
{
	const char	*s = json_string_value(json_object_get(root, key));

	return s != NULL && *s != '\0' ? s : def;
}

static long
lget(json_t *root, const char *key, long def)
{
	json_t	*v = json_object_get(root, key);

	if (json_is_integer(v))
		return (long)json_integer_value(v);
	if (json_is_real(v))
		return (long)json_real_value(v);
	return def;
}

static double
level(json_t *root)
{
	static const struct { const char *n; double f; } lv[] = {
		{ "conservative", 1.0 }, { "balanced", 1.25 },
		{ "aggressive", 1.5 }, { "xaggressive", 1.85 } };
	const char	*s = sget(root, "wilmerContextEstimationLevel", NULL);
	size_t		 i;

	for (i = 0; s != NULL && i < sizeof(lv) / sizeof(lv[0]); i++)
		if (strcasecmp(s, lv[i].n) == 0)
			return lv[i].f;
	return 1.0;
}

static void
fill_settings(struct memory_settings *ms, json_t *r)
{
	ms->ms_endpoint = sget(r, "endpointName", NULL);
	ms->ms_preset = sget(r, "preset", NULL);
	ms->ms_max_tokens = lget(r, "maxResponseSizeInTokens", 400);
	ms->ms_lookback = lget(r, "lookbackStartTurn", 3);
	ms->ms_system = sget(r, "systemPrompt", "");
	ms->ms_prompt = sget(r, "prompt", "");
	ms->ms_file_workflow = sget(r, "fileMemoryWorkflowName", NULL);
	ms->ms_chunk_tokens = lget(r, "chunkEstimatedTokenSize", 1000);
	ms->ms_max_between = lget(r, "maxMessagesBetweenChunks", 5);
	ms->ms_use_vector = json_is_true(json_object_get(r,
	    "useVectorForQualityMemory"));
	ms->ms_vector_workflow = sget(r, "vectorMemoryWorkflowName", NULL);
	ms->ms_vector_endpoint = sget(r, "vectorMemoryEndpointName", NULL);
	ms->ms_vector_preset = sget(r, "vectorMemoryPreset", NULL);
	ms->ms_vector_max_tokens = lget(r,
	    "vectorMemoryMaxResponseSizeInTokens", 1024);
	ms->ms_vector_chunk_tokens = lget(r,
	    "vectorMemoryChunkEstimatedTokenSize", 1000);
	ms->ms_vector_max_between = lget(r,
	    "vectorMemoryMaxMessagesBetweenChunks", 5);
	ms->ms_vector_topics = json_is_true(json_object_get(r,
	    "vectorMemoryIndexTopics"));
	ms->ms_condense = json_is_true(json_object_get(r, "condenseMemories"));
	ms->ms_condense_count = lget(r, "memoriesBeforeCondensation", 0);
	ms->ms_condense_buffer = lget(r, "memoryCondensationBuffer", 0);
	ms->ms_condense_lock_s = lget(r, "condensationLockTimeoutSeconds", 600);
	ms->ms_level = level(r);
}

int
memory_settings_load(struct node_ctx *x, struct memory_settings *ms,
    struct wresult *res)
{
	const struct conf_user	*u = x->nx_user;
	const char		*name = json_string_value(json_object_get(
				    u->u_file.jf_root,
				    "discussionIdMemoryFileWorkflowSettings"));
	char			 err[CONF_ERRLEN], *path;
	int			 rc = 0;

	memset(ms, 0, sizeof(*ms));
	if (name != NULL && *name != '\0') {
		if (!name_is_safe(name, strlen(name)))
			return node_fail(x, res, 500, "refusing unsafe memory "
			    "settings name '%s'", name);
		path = xasprintf("%s/Workflows/%s/%s.json", x->nx_confdir,
		    u->u_workflow_folder, name);
		if (jfile_load(path, &ms->ms_file, err) == -1)
			rc = node_fail(x, res, 500, "memory settings: %s", err);
		else if (!json_is_object(ms->ms_file.jf_root))
			rc = node_fail(x, res, 500, "%s: the memory settings "
			    "must be a JSON object", path);
		free(path);
	}
	fill_settings(ms, ms->ms_file.jf_root);
	return rc;
}

void
memory_settings_free(struct memory_settings *ms)
{
	jfile_free(&ms->ms_file);
	memset(ms, 0, sizeof(*ms));
}

const char *
memory_setting_str(const struct memory_settings *ms, const char *key,
    const char *def)
{
	return sget(ms->ms_file.jf_root, key, def);
}

long
memory_setting_long(const struct memory_settings *ms, const char *key,
    long def)
{
	return lget(ms->ms_file.jf_root, key, def);
}

double
memory_setting_double(const struct memory_settings *ms, const char *key,
    double def)
{
	json_t	*v = json_object_get(ms->ms_file.jf_root, key);

	return json_is_number(v) ? json_number_value(v) : def;
}

bool
memory_setting_bool(const struct memory_settings *ms, const char *key,
    bool def)
{
	json_t	*v = json_object_get(ms->ms_file.jf_root, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

/* ---- calls ------------------------------------------------------------ */

/* Ask as a step of node x that does not answer the client itself. */
static int
ask_quietly(struct node_ctx *x, const struct llm_ask *a, struct buf *out,
    struct wresult *res)
{
	struct node_ctx	 y = *x;

	y.nx_responder = y.nx_deliver = y.nx_stream = false;
	y.nx_image = NULL;
	return ask_run(&y, a, out, res);
}

int
memory_llm(struct node_ctx *x, const char *endpoint, const char *preset,
    const char *system, const char *prompt, long max_tokens,
    struct buf *out, struct wresult *res)
{
	struct llm_ask	 a;

	if (endpoint == NULL || *endpoint == '\0')
		return node_fail(x, res, 500, "the memory settings name no "
		    "endpointName");
	memset(&a, 0, sizeof(a));
	a.la_endpoint = endpoint;
	a.la_preset = preset != NULL ? preset : "";
	a.la_system = system;
	a.la_prompt = prompt;
	a.la_max_tokens = max_tokens;
	return ask_quietly(x, &a, out, res);
}

int
memory_llm_node(struct node_ctx *x, const char *system, const char *prompt,
    struct buf *out, struct wresult *res)
{
	struct llm_ask	 a;
	int		 rc;

	if ((rc = ask_of_node(x, &a, res)) == 0) {
		a.la_system = system;
		a.la_prompt = prompt;
		rc = ask_quietly(x, &a, out, res);
	}
	ask_clear(&a);
	return rc;
}

int
memory_workflow(struct node_ctx *x, const char *name, char *const *inputs,
    struct buf *out, struct wresult *res)
{
	struct rq_flowcall	 c;
	bool		 delivered;

	memset(&c, 0, sizeof(c));
	c.fc_folder = x->nx_user->u_workflow_folder;
	c.fc_name = name;
	c.fc_inputs = inputs;
	c.fc_parent = x->nx_run;
	return rq_run_flow(x->nx_rq, &c, out, &delivered, res) == -1 ? -1 : 0;
}

struct store *
memory_store(struct node_ctx *x, struct wresult *res)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = rq_store(x->nx_rq, err);

	if (s == NULL)
		node_fail(x, res, 500, "the memory store: %s", err);
	return s;
}

/* ---- the generation lock ------------------------------------------- */

#define LOCK_POLL_MS	250

static char *
lock_name(const char *key)
{
	return xasprintf("memory:%s", key);
}

static void
nap(unsigned ms)
{
	struct timespec	 ts = { 0, (long)ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* One try: 1 taken, 0 held by another, -1 error (res filled). */
static int
try_lock(struct node_ctx *x, struct store *s, const char *name,
    struct wresult *res)
{
	int	 r = store_lock(s, name, x->nx_rq->rq_id, MEMORY_LOCK_TTL_S);

	if (r != -1)
		return r;
	if (store_gave_up(s) || rq_stopped(x->nx_rq)) {
		res->r_status = RQ_CANCELLED;
		return -1;
	}
	return node_fail(x, res, 500, "%s", store_err(s));
}

int
memory_lock(struct node_ctx *x, const char *name, const char *what,
    long wait_s, struct wresult *res)
{
	struct store	*s = memory_store(x, res);
	uint64_t	 t0 = clock_mono_ms();
	int		 r;

	if (s == NULL)
		return -1;
	while ((r = try_lock(x, s, name, res)) == 0) {
		if (wait_s > 0 && clock_mono_ms() - t0 >= (uint64_t)wait_s * 1000)
			break;
		rq_phase(x->nx_rq, "%s node %zu/%zu: waiting for another "
		    "request's %s", x->nx_workflow, x->nx_index + 1,
		    x->nx_count, what);
		if (rq_stopped(x->nx_rq)) {
			res->r_status = RQ_CANCELLED;
			r = -1;
			break;
		}
		nap(LOCK_POLL_MS);
	}
	return r;
}

void
memory_lock_renew(struct node_ctx *x, const char *name)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = rq_store(x->nx_rq, err);

	if (s != NULL && store_lock(s, name, x->nx_rq->rq_id,
	    MEMORY_LOCK_TTL_S) != 1)
		log_warnx("[rq %s] cannot renew the lock '%s': %s",
		    x->nx_rq->rq_id, name, store_err(s));
}

void
memory_unlock(struct node_ctx *x, const char *name)
{
	char		 err[STORE_ERRLEN];
	struct store	*s = rq_store(x->nx_rq, err);

	if (s != NULL && store_unlock(s, name, x->nx_rq->rq_id) == -1)
		log_warnx("[rq %s] cannot give back the lock '%s' (it "
		    "expires by itself): %s", x->nx_rq->rq_id, name,
		    store_err(s));
}

int
memory_gen_lock(struct node_ctx *x, const char *key, long wait_s,
    struct wresult *res)
{
	char	*name = lock_name(key);
	int	 r = memory_lock(x, name, "memory generation", wait_s, res);

	if (r == 0)
		log_warnx("[rq %s] memory generation for discussion '%s' is "
		    "busy in another request for %ld s; skipped this round",
		    x->nx_rq->rq_id, key, wait_s);
	free(name);
	return r;
}

void
memory_gen_renew(struct node_ctx *x, const char *key)
{
	char	*name = lock_name(key);

	memory_lock_renew(x, name);
	free(name);
}

void
memory_gen_unlock(struct node_ctx *x, const char *key)
{
	char	*name = lock_name(key);

	memory_unlock(x, name);
	free(name);
}
