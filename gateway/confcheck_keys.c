/* confcheck_keys.c - --check-config: the keys each kind of config file may hold, and the warnings for the others. */
#include <stdio.h>
#include <string.h>

#include "confcheck_int.h"

/* What a key does. */
enum ck_keystate {
	KS_IMPL,	/* Sluice reads it (or a Sluice extension) */
	KS_NOT_IMPL,	/* WilmerAI reads it, Sluice does not: warned */
	KS_QUIET	/* read by neither (documentation, legacy) */
};

struct ck_key {
	enum ck_kind		 kk_kind;
	const char		*kk_name;
	enum ck_keystate	 kk_state;
	const char		*kk_note;	/* KS_NOT_IMPL: why (required) */
};

#define I(k, n)		{ (k), (n), KS_IMPL, NULL }
#define N(k, n, why)	{ (k), (n), KS_NOT_IMPL, (why) }
#define Q(k, n)		{ (k), (n), KS_QUIET, NULL }

#define NO_FILES	"Sluice keeps discussions and locks in its database " \
			"(state_dir/sluice.db); bring WilmerAI's files over " \
			"with --import-wilmer"

/*
 * The one list. KS_IMPL means the key's string is read by common/conf.c,
 * gateway/ or worker/ (found by grep, not guessed); the spec's sections
 * name the WilmerAI side (wilmer-spec.md 2.x, 4, 7.3; addendum A1-A11).
 * Workflow top-level keys are variables and preset keys are sampler
 * fields: neither is listed nor checked. Node keys are one list for all
 * node types.
 */
static const struct ck_key keys[] = {
	/* Users/<name>.json (spec 2.1, A1.1, A2.1, A8, A10) */
	I(CKK_USER, "port"),
	I(CKK_USER, "customWorkflowOverride"),
	I(CKK_USER, "customWorkflow"),
	I(CKK_USER, "routingConfig"),
	I(CKK_USER, "categorizationWorkflow"),
	I(CKK_USER, "maxCategorizationAttempts"),
	I(CKK_USER, "discussionIdMemoryFileWorkflowSettings"),
	I(CKK_USER, "chatSummaryToolWorkflow"),
	I(CKK_USER, "conversationMemoryToolWorkflow"),
	I(CKK_USER, "recentMemoryToolWorkflow"),
	I(CKK_USER, "endpointConfigsSubDirectory"),
	I(CKK_USER, "workflowConfigsSubDirectoryOverride"),
	I(CKK_USER, "presetConfigsSubDirectoryOverride"),
	I(CKK_USER, "sharedWorkflowsSubDirectoryOverride"),
	I(CKK_USER, "structuredOutputConfigsSubDirectory"),
	I(CKK_USER, "chatPromptTemplateName"),
	I(CKK_USER, "chatCompleteAddUserAssistant"),
	I(CKK_USER, "chatCompletionAddMissingAssistantGenerator"),
	I(CKK_USER, "separateConversationInVariables"),
	I(CKK_USER, "conversationSeparationDelimiter"),
	I(CKK_USER, "userWideWorkflowVariables"),
	I(CKK_USER, "allowSharedWorkflows"),
	I(CKK_USER, "useOfflineWikiApi"),
	I(CKK_USER, "offlineWikiApiHost"),
	I(CKK_USER, "offlineWikiApiPort"),
	I(CKK_USER, "useOfflineResearcherApi"),
	I(CKK_USER, "offlineResearcherApiHost"),
	I(CKK_USER, "offlineResearcherApiPort"),
	I(CKK_USER, "useFileLogging"),
	I(CKK_USER, "encryptUsingApiKey"),
	I(CKK_USER, "interceptOpenWebUIToolRequests"),
	I(CKK_USER, "livenessToolCall"),
	I(CKK_USER, "contextCompactorSettingsFile"),
	I(CKK_USER, "connectTimeoutInSeconds"),
	I(CKK_USER, "clampPromptToContextWindow"),
	I(CKK_USER, "sluice"),			/* Sluice's own section */
	I(CKK_USER, "embeddingEndpointName"),	/* Sluice: /v1/embeddings */
	I(CKK_USER, "responseFilters"),		/* Sluice */
	I(CKK_USER, "sluiceFileDirectories"),	/* Sluice */
	N(CKK_USER, "discussionDirectory", NO_FILES),
	N(CKK_USER, "sqlLiteDirectory", NO_FILES),
	I(CKK_USER, "redactLogOutput"),
	Q(CKK_USER, "stream"),			/* legacy: the request decides */
	Q(CKK_USER, "fileMemoryToolWorkflow"),
	Q(CKK_USER, "verboseLogging"),
	Q(CKK_USER, "defaultParallelProcessWorkflow"),
	Q(CKK_USER, "description"),
	Q(CKK_USER, "MCPO_URL"),		/* for the example scripts */

	/* Users/_current-user.json */
	I(CKK_CURRENT_USER, "currentUser"),

	/* Endpoints/<sub>/<name>.json (spec 2.2, A8, A9) */
	I(CKK_ENDPOINT, "endpoint"),
	I(CKK_ENDPOINT, "apiTypeConfigFileName"),
	I(CKK_ENDPOINT, "modelNameToSendToAPI"),
	I(CKK_ENDPOINT, "dontIncludeModel"),
	I(CKK_ENDPOINT, "promptTemplate"),
	I(CKK_ENDPOINT, "maxContextTokenSize"),
	I(CKK_ENDPOINT, "apiKey"),
	I(CKK_ENDPOINT, "addGenerationPrompt"),
	I(CKK_ENDPOINT, "addTextToStartOfSystem"),
	I(CKK_ENDPOINT, "textToAddToStartOfSystem"),
	I(CKK_ENDPOINT, "addTextToStartOfPrompt"),
	I(CKK_ENDPOINT, "textToAddToStartOfPrompt"),
	I(CKK_ENDPOINT, "addTextToStartOfCompletion"),
	I(CKK_ENDPOINT, "textToAddToStartOfCompletion"),
	I(CKK_ENDPOINT, "ensureTextAddedToAssistantWhenChatCompletion"),
	I(CKK_ENDPOINT, "removeThinking"),
	I(CKK_ENDPOINT, "startThinkTag"),
	I(CKK_ENDPOINT, "endThinkTag"),
	I(CKK_ENDPOINT, "openingTagGracePeriod"),
	I(CKK_ENDPOINT, "expectOnlyClosingThinkTag"),
	I(CKK_ENDPOINT, "removeCustomTextFromResponseStartEndpointWide"),
	I(CKK_ENDPOINT, "responseStartTextToRemoveEndpointWide"),
	I(CKK_ENDPOINT, "trimBeginningAndEndLineBreaks"),
	I(CKK_ENDPOINT, "presetSamplers"),
	I(CKK_ENDPOINT, "appendPresetName"),
	I(CKK_ENDPOINT, "backupEndpointName"),
	I(CKK_ENDPOINT, "backupPresetName"),
	I(CKK_ENDPOINT, "allowRemoteBackup"),
	I(CKK_ENDPOINT, "clampPromptToContextWindow"),
	I(CKK_ENDPOINT, "wilmerContextEstimationLevel"),
	I(CKK_ENDPOINT, "backendSupportsToolTurns"),
	I(CKK_ENDPOINT, "maxConcurrentRequests"),	/* Sluice */
	I(CKK_ENDPOINT, "reasoningTags"),		/* Sluice */
	I(CKK_ENDPOINT, "gptOssChannels"),		/* Sluice */
	I(CKK_ENDPOINT, "parseToolCallMarkers"),	/* Sluice */
	I(CKK_ENDPOINT, "reasoningOutput"),		/* Sluice */
	I(CKK_ENDPOINT, "removeSpecialTokens"),		/* Sluice */
	Q(CKK_ENDPOINT, "modelNameForDisplayOnly"),
	Q(CKK_ENDPOINT, "thinkTagText"),	/* older WilmerAI releases */

	/* ApiTypes/<name>.json (spec 2.3, A8.5) */
	I(CKK_APITYPE, "type"),
	I(CKK_APITYPE, "presetType"),
	I(CKK_APITYPE, "truncateLengthPropertyName"),
	I(CKK_APITYPE, "maxNewTokensPropertyName"),
	I(CKK_APITYPE, "streamPropertyName"),
	I(CKK_APITYPE, "supportsChatTemplateKwargs"),
	I(CKK_APITYPE, "thinking"),
	I(CKK_APITYPE, "samplerFieldMap"),
	I(CKK_APITYPE, "structuredOutput"),
	I(CKK_APITYPE, "streamIncludeUsage"),	/* Sluice */
	Q(CKK_APITYPE, "nameForDisplayOnly"),

	/* PromptTemplates/<name>.json (spec 2.5; worker/core/prompt.c
	 * builds the names from the role) */
	I(CKK_TEMPLATE, "promptTemplateSystemPrefix"),
	I(CKK_TEMPLATE, "promptTemplateSystemSuffix"),
	I(CKK_TEMPLATE, "promptTemplateUserPrefix"),
	I(CKK_TEMPLATE, "promptTemplateUserSuffix"),
	I(CKK_TEMPLATE, "promptTemplateAssistantPrefix"),
	I(CKK_TEMPLATE, "promptTemplateAssistantSuffix"),
	I(CKK_TEMPLATE, "promptTemplateSystemmesPrefix"),
	I(CKK_TEMPLATE, "promptTemplateSystemmesSuffix"),
	I(CKK_TEMPLATE, "promptTemplateEndToken"),
	Q(CKK_TEMPLATE, "promptTemplateGenSeparator"),

	/* Routing/<name>.json, each category (spec 2.6) */
	I(CKK_ROUTING, "description"),
	I(CKK_ROUTING, "workflow"),

	/* the memory settings file (spec 7.3, A9) */
	I(CKK_MEMORY, "endpointName"),
	I(CKK_MEMORY, "preset"),
	I(CKK_MEMORY, "maxResponseSizeInTokens"),
	I(CKK_MEMORY, "lookbackStartTurn"),
	I(CKK_MEMORY, "systemPrompt"),
	I(CKK_MEMORY, "prompt"),
	I(CKK_MEMORY, "fileMemoryWorkflowName"),
	I(CKK_MEMORY, "chunkEstimatedTokenSize"),
	I(CKK_MEMORY, "maxMessagesBetweenChunks"),
	I(CKK_MEMORY, "useVectorForQualityMemory"),
	I(CKK_MEMORY, "vectorMemoryWorkflowName"),
	I(CKK_MEMORY, "vectorMemoryEndpointName"),
	I(CKK_MEMORY, "vectorMemoryPreset"),
	I(CKK_MEMORY, "vectorMemoryMaxResponseSizeInTokens"),
	I(CKK_MEMORY, "vectorMemoryChunkEstimatedTokenSize"),
	I(CKK_MEMORY, "vectorMemoryMaxMessagesBetweenChunks"),
	I(CKK_MEMORY, "vectorMemoryIndexTopics"),
	I(CKK_MEMORY, "embeddingEndpointName"),
	I(CKK_MEMORY, "embeddingBackfillBatchSize"),
	I(CKK_MEMORY, "useStateDocument"),
	I(CKK_MEMORY, "stateDocumentWorkflowName"),
	I(CKK_MEMORY, "stateDocumentMinRetentionRatio"),
	I(CKK_MEMORY, "condenseMemories"),
	I(CKK_MEMORY, "memoriesBeforeCondensation"),
	I(CKK_MEMORY, "memoryCondensationBuffer"),
	I(CKK_MEMORY, "condenseMemoriesEndpointName"),
	I(CKK_MEMORY, "condenseMemoriesPreset"),
	I(CKK_MEMORY, "condenseMemoriesSystemPrompt"),
	I(CKK_MEMORY, "condenseMemoriesPrompt"),
	I(CKK_MEMORY, "condenseMemoriesMaxResponseSizeInTokens"),
	I(CKK_MEMORY, "condensationLockTimeoutSeconds"),
	I(CKK_MEMORY, "wilmerContextEstimationLevel"),
	Q(CKK_MEMORY, "Display_Only_Description"),

	/* the ContextCompactor settings file (A5.1) */
	I(CKK_COMPACTOR, "endpointName"),
	I(CKK_COMPACTOR, "preset"),
	I(CKK_COMPACTOR, "maxResponseSizeInTokens"),
	I(CKK_COMPACTOR, "recentContextTokens"),
	I(CKK_COMPACTOR, "oldContextTokens"),
	I(CKK_COMPACTOR, "lookbackStartTurn"),
	I(CKK_COMPACTOR, "wilmerContextEstimationLevel"),
	I(CKK_COMPACTOR, "oldSectionSystemPrompt"),
	I(CKK_COMPACTOR, "oldSectionPrompt"),
	I(CKK_COMPACTOR, "neutralSummarySystemPrompt"),
	I(CKK_COMPACTOR, "neutralSummaryPrompt"),
	I(CKK_COMPACTOR, "oldestUpdateSystemPrompt"),
	I(CKK_COMPACTOR, "oldestUpdatePrompt"),

	/* MCPServers/<name>.json (A4.1) */
	I(CKK_MCP, "transport"),
	I(CKK_MCP, "command"),
	I(CKK_MCP, "args"),
	I(CKK_MCP, "env"),
	I(CKK_MCP, "cwd"),
	I(CKK_MCP, "url"),
	I(CKK_MCP, "headers"),

	/* a workflow node, any type (spec 2.7, 4, 5, 7; A1-A9) */
	I(CKK_NODE, "type"),
	I(CKK_NODE, "is_responder"),
	I(CKK_NODE, "returnToUser"),
	Q(CKK_NODE, "isResponder"),		/* WilmerAI ignores it too */
	Q(CKK_NODE, "title"),
	Q(CKK_NODE, "agentName"),
	Q(CKK_NODE, "displayOnlyComment"),
	/* Standard and the other nodes that ask an LLM */
	I(CKK_NODE, "endpointName"),
	I(CKK_NODE, "preset"),
	I(CKK_NODE, "systemPrompt"),
	I(CKK_NODE, "prompt"),
	I(CKK_NODE, "lastMessagesToSendInsteadOfPrompt"),
	I(CKK_NODE, "maxResponseSizeInTokens"),
	I(CKK_NODE, "jinja2"),
	I(CKK_NODE, "addUserTurnTemplate"),
	I(CKK_NODE, "addOpenEndedAssistantTurnTemplate"),
	I(CKK_NODE, "blockGenerationPrompt"),
	I(CKK_NODE, "forceGenerationPromptIfEndpointAllows"),
	I(CKK_NODE, "addUserAssistantTags"),
	I(CKK_NODE, "acceptImages"),
	I(CKK_NODE, "maxImagesToSend"),
	I(CKK_NODE, "allowTools"),
	I(CKK_NODE, "lowercaseToolCallFunctionNames"),
	I(CKK_NODE, "includeToolCallsInConversation"),
	I(CKK_NODE, "mergeConsecutiveAssistantMessages"),
	I(CKK_NODE, "mergeConsecutiveAssistantMessagesDelimiter"),
	I(CKK_NODE, "insertUserTurnBetweenAssistantMessages"),
	I(CKK_NODE, "insertedUserTurnText"),
	I(CKK_NODE, "addDiscussionIdTimestampsForLLM"),
	I(CKK_NODE, "useRelativeTimestamps"),
	I(CKK_NODE, "useGroupChatTimestampLogic"),
	I(CKK_NODE, "removeCustomTextFromResponseStart"),
	I(CKK_NODE, "responseStartTextToRemove"),
	I(CKK_NODE, "minMessagesInVariable"),
	I(CKK_NODE, "maxEstimatedTokensInVariable"),
	I(CKK_NODE, "nMessagesToIncludeInVariable"),
	I(CKK_NODE, "estimatedTokensToIncludeInVariable"),
	I(CKK_NODE, "appendNativeToolExchange"),
	I(CKK_NODE, "structuredOutputFile"),
	I(CKK_NODE, "injectLivenessToolCall"),
	I(CKK_NODE, "clampPromptToContextWindow"),
	I(CKK_NODE, "lastMessagesToSendInsteadOfPromptMaxTokenSize"),
	/* WilmerAI hands it to the LLM handler, which sends the endpoint's */
	Q(CKK_NODE, "maxContextTokenSize"),
	/* sub-workflows (spec 3.4, A6) */
	I(CKK_NODE, "workflowName"),
	I(CKK_NODE, "workflowUserFolderOverride"),
	I(CKK_NODE, "scoped_variables"),
	I(CKK_NODE, "conditionalKey"),
	I(CKK_NODE, "conditionalWorkflows"),
	I(CKK_NODE, "routeOverrides"),
	I(CKK_NODE, "systemPromptOverride"),
	I(CKK_NODE, "promptOverride"),
	I(CKK_NODE, "firstNodeSystemPromptOverride"),
	I(CKK_NODE, "firstNodePromptOverride"),
	I(CKK_NODE, "UseDefaultContentInsteadOfWorkflow"),
	I(CKK_NODE, "id"),
	I(CKK_NODE, "chunkSize"),
	I(CKK_NODE, "lookbackMessages"),
	I(CKK_NODE, "cursorDirectory"),
	I(CKK_NODE, "returnFile"),
	/* text, files, PythonModule, locks */
	I(CKK_NODE, "content"),
	I(CKK_NODE, "strings"),
	I(CKK_NODE, "delimiter"),
	I(CKK_NODE, "expression"),
	I(CKK_NODE, "condition"),
	I(CKK_NODE, "jsonToExtractFrom"),
	I(CKK_NODE, "fieldToExtract"),
	I(CKK_NODE, "tagToExtractFrom"),
	I(CKK_NODE, "defaultText"),
	I(CKK_NODE, "mode"),
	I(CKK_NODE, "count"),
	I(CKK_NODE, "filepath"),
	I(CKK_NODE, "customReturnDelimiter"),
	I(CKK_NODE, "headCount"),
	I(CKK_NODE, "tailCount"),
	I(CKK_NODE, "chunkDelimiter"),
	I(CKK_NODE, "find"),
	I(CKK_NODE, "addAsUserMessage"),
	I(CKK_NODE, "message"),
	I(CKK_NODE, "saveVisionResponsesToDiscussionId"),
	I(CKK_NODE, "visionScanMessageLimit"),
	I(CKK_NODE, "module_path"),
	I(CKK_NODE, "args"),
	I(CKK_NODE, "kwargs"),
	I(CKK_NODE, "workflowLockId"),
	/* memory (spec 7, A6.2, A9.5) */
	I(CKK_NODE, "maxTurnsToPull"),
	I(CKK_NODE, "maxSummaryChunksFromFile"),
	I(CKK_NODE, "lookbackStart"),
	I(CKK_NODE, "customDelimiter"),
	I(CKK_NODE, "isManualConfig"),
	I(CKK_NODE, "loopIfMemoriesExceed"),
	I(CKK_NODE, "minMemoriesPerSummary"),
	I(CKK_NODE, "input"),
	I(CKK_NODE, "limit"),
	I(CKK_NODE, "bm25Weights"),
	I(CKK_NODE, "useRecencyScoring"),
	I(CKK_NODE, "includeDates"),
	I(CKK_NODE, "useEntityExpansion"),
	I(CKK_NODE, "searchMode"),
	I(CKK_NODE, "semanticQuery"),
	I(CKK_NODE, "embeddingEndpointName"),
	I(CKK_NODE, "keywords"),
	I(CKK_NODE, "searchTarget"),
	I(CKK_NODE, "lookbackStartTurn"),
	I(CKK_NODE, "ragTarget"),
	I(CKK_NODE, "ragType"),
	I(CKK_NODE, "fileMemoryWorkflowName"),
	Q(CKK_NODE, "chunksPerMemory"),		/* passed along, unused */
	/* outside services (A1-A4) */
	I(CKK_NODE, "promptToSearch"),
	I(CKK_NODE, "num_results"),
	I(CKK_NODE, "percentile"),
	I(CKK_NODE, "top_n_articles"),
	I(CKK_NODE, "maxIterations"),
	I(CKK_NODE, "timeoutSeconds"),
	I(CKK_NODE, "includeSources"),
	I(CKK_NODE, "url"),
	I(CKK_NODE, "method"),
	I(CKK_NODE, "headers"),
	I(CKK_NODE, "body"),
	I(CKK_NODE, "timeout"),
	I(CKK_NODE, "outputFormat"),
	I(CKK_NODE, "onError"),
	I(CKK_NODE, "proxy"),
	I(CKK_NODE, "caBundle"),
	I(CKK_NODE, "verify"),
	I(CKK_NODE, "allowRedirects"),
	I(CKK_NODE, "maxResponseBytes"),
	I(CKK_NODE, "blockPrivateAddresses"),
	I(CKK_NODE, "allowedHosts"),
	I(CKK_NODE, "blockOptionInjection"),
	I(CKK_NODE, "allowSchemeInjection"),
	I(CKK_NODE, "server"),
	I(CKK_NODE, "tool"),
	I(CKK_NODE, "arguments"),
};

#define NKEYS	(sizeof(keys) / sizeof(keys[0]))

/* The entry for name in a file of kind, or NULL. A file found only by
 * its folder (CKK_SETTINGS) may be either settings file. */
static const struct ck_key *
key_find(enum ck_kind kind, const char *name)
{
	size_t	 i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].kk_name, name) == 0 &&
		    (keys[i].kk_kind == kind || (kind == CKK_SETTINGS &&
		    (keys[i].kk_kind == CKK_MEMORY ||
		    keys[i].kk_kind == CKK_COMPACTOR))))
			return &keys[i];
	return NULL;
}

/* A value that asks for nothing (null, false, "", [] or {}): WilmerAI's
 * default for every key Sluice leaves out, so it changes nothing. */
static bool
is_empty(const json_t *v)
{
	return json_is_null(v) || json_is_false(v) ||
	    (json_is_string(v) && json_string_length(v) == 0) ||
	    (json_is_array(v) && json_array_size(v) == 0) ||
	    (json_is_object(v) && json_object_size(v) == 0);
}

void
ck_keys(struct check *k, enum ck_kind kind, const struct jfile *jf,
    json_t *obj, const char *what)
{
	struct ck_ref		 r = { jf, obj, NULL, NULL, 0, what };
	const struct ck_key	*e;
	const char		*name;
	json_t			*v;

	if (!json_is_object(obj) || kind == CKK_NONE)
		return;
	json_object_foreach(obj, name, v) {
		r.rf_key = name;
		if ((e = key_find(kind, name)) == NULL)
			ck_report(k, true, &r, "unknown key '%.64s' (WilmerAI "
			    "ignores it too; a typo?)", name);
		else if (e->kk_state == KS_NOT_IMPL && !is_empty(v))
			ck_report(k, true, &r, "key '%s' is not implemented "
			    "by Sluice; ignored (%s)", name, e->kk_note);
	}
}

bool
ck_key_at(size_t i, enum ck_kind *kind, const char **name, bool *impl)
{
	if (i >= NKEYS)
		return false;
	*kind = keys[i].kk_kind;
	*name = keys[i].kk_name;
	*impl = keys[i].kk_state == KS_IMPL;
	return true;
}
