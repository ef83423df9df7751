/* stubs_worker.c - output.c's output_token for adapter tests: tokens go to a buffer. */
#include "../../worker/llm/output.h"
#include "stubs_worker.h"

struct buf	 stub_tokens = BUF_INIT;

void
output_token(struct call_state *cs, const char *p, size_t n)
{
	cs->cs_any = true;
	buf_add(&stub_tokens, p, n);
	buf_add(&cs->cs_out->no_text, p, n);
}
