/* stubs_nodes.c - the worker loop's calls node handlers make, recorded for check_nodes. */
#include <stdarg.h>
#include <stdio.h>

#include "../worker/node.h"
#include "../worker/wloop.h"

/* Read and set by check_nodes.c (declared there). */
int	stub_wake_calls;	/* wloop_on_wake calls so far */
int	stub_wake_readable;	/* ...saying the channel was readable */
int	stub_cancel_at;		/* wloop_on_wake says "stop" from this call on
				   (0: never) */
int	stub_cancel_on_readable; /* ...or when the channel is readable */
int	stub_phase_calls;
char	stub_phase[256];	/* the last wloop_phase text */

int
wloop_on_wake(void *arg, bool readable)
{
	stub_wake_calls++;
	if (readable)
		stub_wake_readable++;
	return (stub_cancel_at > 0 && stub_wake_calls >= stub_cancel_at) ||
	    (stub_cancel_on_readable && readable);
}

void
wloop_phase(struct wctx *wc, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(stub_phase, sizeof(stub_phase), fmt, ap);
	va_end(ap);
	stub_phase_calls++;
}

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
