/* conf.h - WilmerAI-layout configuration: users, endpoints, api types, presets, workflows. */
#ifndef SLUICE_CONF_H
#define SLUICE_CONF_H

#include <jansson.h>
#include <stdbool.h>

#include "json.h"

/* Every loader below reads its file fresh from disk (WilmerAI re-reads
 * configs on every use, which gives hot reload). Names passed in must
 * already be safe flat names (names.h); loaders check again and refuse
 * others. Errors are "path:line:col: message". Returned objects are
 * owned by the caller and freed with the matching _free (NULL-safe);
 * their const char * members are borrowed from the object's own JSON.
 * Folder arguments (subdir, folder) may hold several components
 * ("_shared/general"), each of which must be a safe name; "" means none.
 * A missing file gives "Kind/sub/name.json: no such <kind> 'name'
 * (looked in <full path>)". */

/* ---- Users/<name>.json (spec section 2.1) ---- */
struct conf_user {
	char		*u_name;		/* lower-cased file name */
	struct jfile	 u_file;
	const char	*u_endpoint_subdir;	/* endpointConfigsSubDirectory "" */
	const char	*u_workflow_folder;	/* workflowConfigsSubDirectoryOverride, name */
	const char	*u_preset_subdir;	/* presetConfigsSubDirectoryOverride, name */
	const char	*u_shared_folder;	/* sharedWorkflowsSubDirectoryOverride "_shared" */
	/* (the three above fall back to their default when "" too) */
	bool		 u_custom_override;	/* customWorkflowOverride */
	const char	*u_custom_workflow;	/* customWorkflow "" */
	const char	*u_routing_config;	/* routingConfig "" */
	const char	*u_categorization_workflow;
	const char	*u_chat_template;	/* chatPromptTemplateName "" */
	bool		 u_allow_shared;	/* allowSharedWorkflows false */
	const char	*u_embed_endpoint;	/* embeddingEndpointName "" (Sluice:
						 * what /v1/embeddings uses) */
	bool		 u_add_user_assistant;	/* chatCompleteAddUserAssistant (required) */
	bool		 u_add_missing_assistant; /* chatCompletionAddMissingAssistantGenerator (required) */
	long		 u_connect_timeout_s;	/* connectTimeoutInSeconds 30, min 1 */
	long		 u_port;		/* port 5000 */
	long		 u_max_categorization;	/* maxCategorizationAttempts 1 */
	json_t		*u_sluice;		/* "sluice" section or NULL (borrowed) */
	char		*u_given_name;		/* name as passed (owned): WilmerAI's
						 * default workflow/preset folder */
};

int	conf_user_load(const char *confdir, const char *name,
	    struct conf_user **out, char err[CONF_ERRLEN]);
void	conf_user_free(struct conf_user *);

/* WilmerAI's redactLogOutput, truthy as Python's bool(): conversation
 * content of this user's requests stays out of the logs (log_text).
 * Encryption with an API key (encryptUsingApiKey) redacts too; that is
 * the caller's to add. False for NULL. */
bool	conf_user_redacts(const struct conf_user *u);

/* Routing/<name>.json: an object of categories, each an object with a
 * "workflow" string (and a "description"). Returns 0 with jf loaded
 * (jfile_free it), or -1 with err. */
int	conf_routing_load(const char *confdir, const char *name,
	    struct jfile *jf, char err[CONF_ERRLEN]);

/* Users/_current-user.json {"currentUser": "..."}: copy into out. */
int	conf_current_user(const char *confdir, char *out, size_t outlen,
	    char err[CONF_ERRLEN]);

/* ---- ApiTypes/<name>.json (2.3) ----
 * (The enum tag cannot be conf_apitype: C puts enum and struct tags in
 * one namespace, so it is conf_apitype_kind.) */
enum conf_apitype_kind {
	APIT_UNKNOWN = 0,
	APIT_OPENAI_CHAT,		/* openAIChatCompletion, openAIApiChatImageSpecific */
	APIT_OPENAI_COMPLETION,		/* openAIV1Completion */
	APIT_CLAUDE,			/* claudeMessages */
	APIT_KOBOLD,			/* koboldCppGenerate(+ImageSpecific) */
	APIT_OLLAMA_CHAT,		/* ollamaApiChat(+ImageSpecific) */
	APIT_OLLAMA_GENERATE,		/* ollamaApiGenerate */
	APIT_OPENAI_EMBED,		/* openAIEmbeddings */
	APIT_OLLAMA_EMBED,		/* ollamaEmbeddings */
};

struct conf_apitype {
	char			*a_name;
	struct jfile		 a_file;
	enum conf_apitype_kind	 a_type;
	const char		*a_type_name;		/* as written */
	const char		*a_preset_type;		/* presetType */
	const char		*a_truncate_prop;	/* "" = none */
	const char		*a_max_tokens_prop;	/* "" = none */
	const char		*a_stream_prop;		/* default "stream" */
	bool			 a_chat_template_kwargs;
	bool			 a_stream_usage;	/* streamIncludeUsage
							   (default true) */
	json_t			*a_sampler_map;		/* object or NULL (borrowed) */
	/* thinking {location, field, mode}; mode "unsupported" when absent */
	const char		*a_think_location;	/* default "top" */
	const char		*a_think_field;		/* default "" */
	const char		*a_think_mode;		/* default "unsupported" */
};

int	conf_apitype_load(const char *confdir, const char *name,
	    struct conf_apitype **out, char err[CONF_ERRLEN]);
void	conf_apitype_free(struct conf_apitype *);

/* True for the embeddings api types (openAIEmbeddings,
 * ollamaEmbeddings), which cannot generate text (A9.1). */
bool	conf_apitype_embeds(enum conf_apitype_kind);

/* WilmerAI's refusal of embeddings endpoint endpoint (of api type type)
 * named for text generation, into err. */
void	conf_embed_not_for_generation(const char *endpoint, const char *type,
	    char *err, size_t len);

/* WilmerAI's refusal of endpoint (of api type type) named in an
 * embeddings setting though its type is not an embeddings type. */
void	conf_embed_not_embeddings(const char *endpoint, const char *type,
	    char *err, size_t len);

/* ---- Endpoints/<user's endpoint subdir>/<name>.json (2.2) ---- */
struct conf_endpoint {
	char		*e_name;
	struct jfile	 e_file;
	const char	*e_url;			/* endpoint (required) */
	const char	*e_apitype_name;	/* apiTypeConfigFileName (required) */
	const char	*e_model;		/* modelNameToSendToAPI "" */
	bool		 e_dont_include_model;
	const char	*e_prompt_template;	/* NULL: user's template */
	long		 e_max_context;		/* maxContextTokenSize, -1 unset */
	const char	*e_api_key;		/* apiKey "" */
	bool		 e_add_generation_prompt;
	bool		 e_remove_thinking;
	const char	*e_start_think_tag;
	const char	*e_end_think_tag;
	long		 e_think_grace;		/* openingTagGracePeriod 100 */
	bool		 e_only_closing_think;	/* expectOnlyClosingThinkTag */
	bool		 e_trim_linebreaks;	/* trimBeginningAndEndLineBreaks */
	bool		 e_remove_start_text;	/* removeCustomTextFromResponseStartEndpointWide */
	const char	**e_start_text;		/* responseStartTextToRemoveEndpointWide */
	json_t		*e_preset_samplers;	/* presetSamplers or NULL (borrowed) */
	const char	*e_backup_endpoint;	/* backupEndpointName or NULL */
	const char	*e_backup_preset;	/* backupPresetName or NULL */
	const char	*e_append_preset;	/* appendPresetName or NULL */
	long		 e_max_concurrent;	/* maxConcurrentRequests, 0 none */
};

/* subdir is the user's u_endpoint_subdir ("" = Endpoints/ itself). */
int	conf_endpoint_load(const char *confdir, const char *subdir,
	    const char *name, struct conf_endpoint **out,
	    char err[CONF_ERRLEN]);
void	conf_endpoint_free(struct conf_endpoint *);

/* ---- Presets (2.4) ----
 * Resolve preset `preset` for endpoint `ep` of api type `at` for user u:
 * an endpoint named `preset` with presetSamplers is translated through
 * at's samplerFieldMap; otherwise
 * Presets/<presetType>/<user preset subdir>/<preset>.json, falling back
 * to Presets/<presetType>/<preset>.json. *out is a new reference to an
 * object whose key order is the file's, as written: null values (which
 * mean "omit this key", and stop the injection of max-tokens and
 * context fields) and "__wilmer_null__" are left for
 * conf_gen_normalize, after the injection. */
int	conf_preset_resolve(const char *confdir, const struct conf_user *u,
	    const struct conf_apitype *at, const char *preset, json_t **out,
	    char err[CONF_ERRLEN]);

/* The same for node endpoint ep (may be NULL), then ep's appendPresetName
 * preset file (native names, not translated) deep-merged on top before
 * nulls are dropped; at must be ep's api type. u may be NULL (endpoint
 * sub-directory "", no user preset sub-directory). */
int	conf_preset_resolve_ep(const char *confdir, const struct conf_user *u,
	    const struct conf_endpoint *ep, const struct conf_apitype *at,
	    const char *preset, json_t **out, char err[CONF_ERRLEN]);

/* WilmerAI's normalize_gen_input, the emission pass over a request's
 * generation fields: nulls dropped, "__wilmer_null__" made null, nested
 * objects cleaned and dropped when they become empty; json_schema and
 * grammar objects and all arrays are kept as they are. Returns a new
 * object; obj is unchanged. */
json_t	*conf_gen_normalize(json_t *obj);

/* ---- Workflows/<folder>/<name>.json (2.7) ---- */
struct conf_workflow {
	char		*w_name;
	struct jfile	 w_file;
	json_t		*w_nodes;	/* array of node objects (borrowed) */
	json_t		*w_vars;	/* object of custom top-level keys (owned) */
};

/* Workflows/<folder>/<name>.json, else Workflows/_overrides/<folder>/
 * <name>.json (WilmerAI's folder for user overrides).
 * Array form or {"nodes": [...], other keys = variables}. Every node
 * must be an object (with a string "type" when it has one). An object
 * without "nodes" (e.g. a memory settings file that lives in the same
 * folder) is refused as "not a workflow". */
int	conf_workflow_load(const char *confdir, const char *folder,
	    const char *name, struct conf_workflow **out,
	    char err[CONF_ERRLEN]);
void	conf_workflow_free(struct conf_workflow *);

/* True when Workflows/<folder>/<name>/ is a directory inside confdir
 * once symbolic links are resolved (a shared workflow selectable
 * through the model field); a link out of the config folder is not. */
bool	conf_shared_workflow_exists(const char *confdir, const char *folder,
	    const char *name);

/* Sorted names of the sub-directories of Workflows/<folder>/ that do not
 * start with '_' and do not link out of confdir. NULL-terminated malloc'ed array of malloc'ed strings,
 * freed with conf_names_free. Never NULL (empty on error). */
char	**conf_shared_workflows(const char *confdir, const char *folder);
void	  conf_names_free(char **);

#endif
