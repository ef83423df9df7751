/* stubs_ask.h - unit suites above the LLM call: ask_run (worker/llm/ask.h; ask_node.c, linked for real, calls it) answering what the test queued, recording every call. */
#ifndef SLUICE_STUBS_ASK_H
#define SLUICE_STUBS_ASK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A suite links tests/stubs_ask.c instead of worker/llm/: each LLM call
 * takes the next queued answer (a text, an error or a cancellation) and
 * is recorded as the backend would see it. A call with nothing queued
 * fails the test. The state is per process, and every Check test runs
 * in its own.
 */

/* One call, as asked. */
struct fakeask_call {
	char	*ac_endpoint;	/* la_endpoint */
	char	*ac_preset;	/* la_preset ("" none) */
	char	*ac_system;	/* la_system after the variable pass, as a
				   backend would be sent it ("" none) */
	char	*ac_prompt;	/* la_prompt the same way; NULL when the
				   call sends the conversation instead */
	char	*ac_system_raw;	/* the templates as given (NULL: none) */
	char	*ac_prompt_raw;
	long	 ac_max_tokens;
	char	*ac_image;	/* the node's nx_image, or NULL */
	char	*ac_type;	/* the asking node's "type", or NULL */
	bool	 ac_responder;	/* the node's flags at the call */
	bool	 ac_deliver;
	bool	 ac_stream;
};

/* Forget every call and queued answer (a suite's setup). */
void	fakeask_reset(void);

/* Queue the next call's answer: text (streamed to the client, as one
 * chunk, when the asking node streams); an error (node_fail with http
 * and msg); a cancellation (RQ_CANCELLED). */
void	fakeask_answer(const char *text);
void	fakeask_fail(int http, const char *msg);
void	fakeask_cancel(void);

/* Called at the start of every call, with the call's index (0 first),
 * before it is answered: what another worker does meanwhile. */
void	fakeask_hook(void (*fn)(size_t call, void *arg), void *arg);

/* The calls so far, and answers queued but not taken. */
size_t	fakeask_ncalls(void);
const struct fakeask_call *fakeask_call(size_t i);	/* fails the test
							   past the end */
size_t	fakeask_left(void);

#endif
