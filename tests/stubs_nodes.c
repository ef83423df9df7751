/* stubs_nodes.c - the node types check_nodes does not link, as stubs the registry can name. */
#include "../worker/core/node.h"

/* The engine's own node types, which these tests do not run. */
static int
not_here(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	return node_fail(x, res, 500, "not in this test");
}

const struct node_type node_standard = { "Standard", not_here, false };
const struct node_type node_custom = { "CustomWorkflow", not_here, false };
const struct node_type node_conditional = { "ConditionalCustomWorkflow",
    not_here, false };
const struct node_type node_image = { "ImageProcessor", not_here, false };
const struct node_type node_lock = { "WorkflowLock", not_here, false };
const struct node_type node_quality_memory = { "QualityMemory", not_here,
    false };
const struct node_type node_recent_memory = { "RecentMemory", not_here, false };
const struct node_type node_conversation_memory = { "ConversationMemory",
    not_here, false };
const struct node_type node_full_summary = { "FullChatSummary", not_here,
    false };
const struct node_type node_recent_summarizer = {
    "RecentMemorySummarizerTool", not_here, false };
const struct node_type node_current_memory = { "GetCurrentMemoryFromFile",
    not_here, false };
const struct node_type node_current_summary = { "GetCurrentSummaryFromFile",
    not_here, false };
const struct node_type node_summary_gathering = {
    "ChatSummaryMemoryGatheringTool", not_here, false };
const struct node_type node_summarizer = { "chatSummarySummarizer", not_here,
    false };
const struct node_type node_write_summary = {
    "WriteCurrentSummaryToFileAndReturnIt", not_here, false };
const struct node_type node_state_document = { "GetCurrentStateDocument",
    not_here, false };
const struct node_type node_vecsearch = { "VectorMemorySearch", not_here,
    false };
const struct node_type node_conv_kwsearch = {
    "ConversationalKeywordSearchPerformerTool", not_here, false };
const struct node_type node_mem_kwsearch = {
    "MemoryKeywordSearchPerformerTool", not_here, false };
