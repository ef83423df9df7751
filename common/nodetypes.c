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
	{ "RecentMemory",			false },
	{ "RecentMemorySummarizerTool",		false },
	{ "ConversationMemory",			false },
	{ "FullChatSummary",			false },
	{ "ChatSummaryMemoryGatheringTool",	false },
	{ "GetCurrentSummaryFromFile",		false },
	{ "GetCurrentMemoryFromFile",		false },
	{ "chatSummarySummarizer",		false },
	{ "WriteCurrentSummaryToFileAndReturnIt", false },
	{ "QualityMemory",			false },
	{ "VectorMemorySearch",			false },
	{ "GetCurrentStateDocument",		false },
	{ "ConversationalKeywordSearchPerformerTool", false },
	{ "MemoryKeywordSearchPerformerTool",	false },
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
