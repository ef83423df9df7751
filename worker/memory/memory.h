/* memory.h - what every memory feature shares: the discussion's key, the settings file, LLM calls, helper workflows, the generation lock. */
#ifndef SLUICE_MEMORY_H
#define SLUICE_MEMORY_H

#include <jansson.h>
#include <stdbool.h>

#include "../../common/buf.h"
#include "../../common/json.h"
#include "../core/msgs.h"
#include "../core/node.h"
#include "../store/store.h"
#include "mem_text.h"

/* The store key of the request's discussion: its [DiscussionId], after
 * the API key's scope when the request had a key ("<scope>/<id>", as
 * WilmerAI's per-key sub-folder). NULL when the request names no
 * discussion. Caller frees. */
char	*memory_key(const struct node_ctx *);

/* The same from the discussion id ("" or NULL: none) and the key's
 * scope. Caller frees; NULL when there is no discussion. */
char	*memory_key_of(const char *discussion, struct str scope);

/* The user's memory settings file (discussionIdMemoryFileWorkflowSettings,
 * in the user's workflow folder), spec 7.3. Every value has its
 * WilmerAI default when the user names no file or the key is absent. */
struct memory_settings {
	struct jfile	 ms_file;		/* empty when none */
	const char	*ms_endpoint;		/* endpointName, NULL none */
	const char	*ms_preset;
	long		 ms_max_tokens;		/* maxResponseSizeInTokens 400 */
	long		 ms_lookback;		/* lookbackStartTurn 3 */
	const char	*ms_system;		/* systemPrompt "" */
	const char	*ms_prompt;		/* prompt "" */
	const char	*ms_file_workflow;	/* fileMemoryWorkflowName */
	long		 ms_chunk_tokens;	/* chunkEstimatedTokenSize 1000 */
	long		 ms_max_between;	/* maxMessagesBetweenChunks 5 */
	bool		 ms_use_vector;		/* useVectorForQualityMemory */
	const char	*ms_vector_workflow;	/* vectorMemoryWorkflowName */
	const char	*ms_vector_endpoint;	/* vectorMemoryEndpointName */
	const char	*ms_vector_preset;
	long		 ms_vector_max_tokens;	/* ...MaxResponseSizeInTokens 1024 */
	long		 ms_vector_chunk_tokens; /* ...ChunkEstimatedTokenSize 1000 */
	long		 ms_vector_max_between;	/* ...MaxMessagesBetweenChunks 5 */
	bool		 ms_vector_topics;	/* vectorMemoryIndexTopics */
	bool		 ms_condense;		/* condenseMemories */
	long		 ms_condense_count;	/* memoriesBeforeCondensation 0 */
	long		 ms_condense_buffer;	/* memoryCondensationBuffer 0 */
	long		 ms_condense_lock_s;	/* condensationLockTimeoutSeconds 600 */
	double		 ms_level;		/* wilmerContextEstimationLevel 1.0 */
};

/* Load the settings (0), or -1 with res filled (500 naming the file). */
int	 memory_settings_load(struct node_ctx *, struct memory_settings *,
	    struct wresult *res);
void	 memory_settings_free(struct memory_settings *);

/* A string member of the settings file (condense*, other keys), or
 * def. Borrowed. */
const char *memory_setting_str(const struct memory_settings *,
	    const char *key, const char *def);
long	 memory_setting_long(const struct memory_settings *, const char *key,
	    long def);
double	 memory_setting_double(const struct memory_settings *,
	    const char *key, double def);
bool	 memory_setting_bool(const struct memory_settings *, const char *key,
	    bool def);

/* One LLM call of a memory feature through endpoint/preset, with the
 * failover, retries, cleaning and slots of a Standard node. system and
 * prompt are templates: their {variables} are substituted as a Standard
 * node's would be (for this endpoint), so text put in for a memory
 * placeholder ([TextChunk], [Memory_file], ...) must come through
 * memory_fill. Not streamed. Returns 0 with the answer in out, or -1
 * with res filled. */
int	 memory_llm(struct node_ctx *, const char *endpoint, const char *preset,
	    const char *system, const char *prompt, long max_tokens,
	    struct buf *out, struct wresult *res);

/* The node's own LLM call (its endpointName, preset and every other
 * field) with systemPrompt and prompt replaced by these templates (see
 * memory_llm). Not streamed. Returns 0 with the answer in out, or -1
 * with res filled. */
int	 memory_llm_node(struct node_ctx *, const char *system,
	    const char *prompt, struct buf *out, struct wresult *res);

/* Run helper workflow name (the user's workflow folder) as a
 * non-responder with inputs as agent1Input.. (NULL-terminated); its
 * result in out. Returns 0, or -1 with res filled. */
int	 memory_workflow(struct node_ctx *, const char *name,
	    char *const *inputs, struct buf *out, struct wresult *res);

/* The discussion's memory-generation lock, so that one worker at a
 * time writes a discussion's memories ("memory:" + key in
 * workflow_locks, owned by the request, expiring MEMORY_LOCK_TTL_S after
 * it was last taken or renewed; the engine drops it when the request's
 * workflow ends). Waits up to wait_s seconds (<= 0: as long as it
 * takes) while another request holds it, heartbeating. Returns 1 when
 * held, 0 when the wait ran out (skip this round: the work is still
 * there next turn), -1 with res filled (cancelled, or a database
 * error). */
#define MEMORY_LOCK_TTL_S	600
int	 memory_gen_lock(struct node_ctx *, const char *key, long wait_s,
	    struct wresult *res);

/* Push the lock's expiry back (between long steps: each LLM call);
 * memory_gen_unlock gives it back. Errors are logged. */
void	 memory_gen_renew(struct node_ctx *, const char *key);
void	 memory_gen_unlock(struct node_ctx *, const char *key);

/* The same for any lock name of the shared store (memory_gen_lock is
 * this with "memory:" + key); what names the work waited for in the
 * phase ("memory generation"). 1 held, 0 the wait ran out, -1 with res
 * filled. memory_lock_renew and memory_unlock as below; errors are
 * logged. */
int	 memory_lock(struct node_ctx *, const char *name, const char *what,
	    long wait_s, struct wresult *res);
void	 memory_lock_renew(struct node_ctx *, const char *name);
void	 memory_unlock(struct node_ctx *, const char *name);

/* The shared database, opened on first use. NULL with res filled (500)
 * when it cannot be opened. */
struct store *memory_store(struct node_ctx *, struct wresult *res);

#endif
