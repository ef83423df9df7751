/* nodetypes.c - WilmerAI's workflow node types, and which of them Sluice runs. */
#include <stddef.h>
#include <string.h>

#include "nodetypes.h"

/* Spec section 4 (Middleware/common/constants.py VALID_NODE_TYPES). */
static const struct node_type_info types[] = {
	{ "Standard",				true },
	{ "CustomWorkflow",			true },
	{ "ConditionalCustomWorkflow",		true },
	{ "StaticResponse",			true },
	{ "StringConcatenator",			true },
	{ "ArithmeticProcessor",		true },
	{ "Conditional",			true },
	{ "JsonExtractor",			true },
	{ "TagTextExtractor",			true },
	{ "DelimitedChunker",			true },
	{ "GetCustomFile",			true },
	{ "SaveCustomFile",			true },
	{ "PythonModule",			true },
	{ "ConversationChunkProcessor",		false },
	{ "ImageProcessor",			true },
	{ "WorkflowLock",			true },
	/* memory (spec section 7) */
	{ "RecentMemory",			true },
	{ "RecentMemorySummarizerTool",		true },
	{ "ConversationMemory",			true },
	{ "FullChatSummary",			true },
	{ "ChatSummaryMemoryGatheringTool",	true },
	{ "GetCurrentSummaryFromFile",		true },
	{ "GetCurrentMemoryFromFile",		true },
	{ "chatSummarySummarizer",		true },
	{ "WriteCurrentSummaryToFileAndReturnIt", true },
	{ "QualityMemory",			true },
	{ "VectorMemorySearch",			true },
	{ "GetCurrentStateDocument",		true },
	{ "ConversationalKeywordSearchPerformerTool", true },
	{ "MemoryKeywordSearchPerformerTool",	true },
	{ "SlowButQualityRAG",			false },
	/* outside services */
	{ "OfflineWikiApiFullArticle",		false },
	{ "OfflineWikiApiBestFullArticle",	false },
	{ "OfflineWikiApiTopNFullArticles",	false },
	{ "OfflineWikiApiPartialArticle",	false },
	{ "OfflineResearcherApiQuickSearch",	false },
	{ "OfflineResearcherApiDeepResearch",	false },
	{ "ContextCompactor",			false },
	{ "WebFetch",				false },
	{ "CurlCommand",			false },
	{ "MCPToolCall",			false },
};

const struct node_type_info *
nodetype_find(const char *name)
{
	size_t	 i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i].ti_name, name) == 0)
			return &types[i];
	return NULL;
}
