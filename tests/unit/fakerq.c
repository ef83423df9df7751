/* fakerq.c - a stand-in for the worker's loop behind the request seam (worker/rq.h), recording what the code under test asks of it. */
#include <stdio.h>
#include <string.h>

#include "../../worker/store/store.h"
#include "fakerq.h"

static struct fakerq *
fake_of(struct rq *rq)
{
	return rq->rq_loop;
}

static void
fake_emit(struct rq *rq, struct str content, struct str reasoning)
{
	struct fakerq	*f = fake_of(rq);

	if (content.n == 0 && reasoning.n == 0)
		return;
	f->fr_emits++;
	buf_add(&f->fr_text, content.p, content.n);
	buf_add(&f->fr_reasoning, reasoning.p, reasoning.n);
}

static void
fake_emit_tools(struct rq *rq, struct str calls)
{
	struct fakerq	*f = fake_of(rq);

	buf_add(&f->fr_tools, calls.p, calls.n);
	buf_addc(&f->fr_tools, '\n');
}

static void
fake_phase(struct rq *rq, const char *phase)
{
	struct fakerq	*f = fake_of(rq);

	snprintf(f->fr_phase, sizeof(f->fr_phase), "%s", phase);
	f->fr_phases++;
}

static bool
cancel_due(const struct fakerq *f)
{
	return f->fr_cancel_at > 0 &&
	    f->fr_wakes + f->fr_stops >= f->fr_cancel_at;
}

static bool
fake_stopped(struct rq *rq)
{
	struct fakerq	*f = fake_of(rq);

	f->fr_stops++;
	return f->fr_stopped || cancel_due(f);
}

static int
fake_wake(struct rq *rq, bool readable)
{
	struct fakerq	*f = fake_of(rq);

	f->fr_wakes++;
	if (readable)
		f->fr_wakes_readable++;
	return f->fr_stopped || cancel_due(f) ||
	    (readable && f->fr_cancel_on_readable);
}

static void
fake_send(struct rq *rq, const struct proto_msg *m)
{
	struct fakerq	*f = fake_of(rq);

	if (m->m_type < sizeof(f->fr_sent) / sizeof(f->fr_sent[0]))
		f->fr_sent[m->m_type]++;
}

static enum rq_slot
fake_slot_take(struct rq *rq, const char *ep, unsigned limit)
{
	struct fakerq	*f = fake_of(rq);

	f->fr_slot_takes++;
	snprintf(f->fr_slot_ep, sizeof(f->fr_slot_ep), "%s", ep);
	f->fr_slot_limit = limit;
	return f->fr_slot_answer;
}

static void
fake_slot_give(struct rq *rq, const char *ep, unsigned limit)
{
	fake_of(rq)->fr_slot_gives++;
}

static struct store *
fake_store(struct rq *rq, char *err)
{
	struct fakerq	*f = fake_of(rq);

	if (f->fr_store == NULL)
		snprintf(err, STORE_ERRLEN, "no database in this test");
	return f->fr_store;
}

static void
fake_answer(struct rq *rq, const struct wresult *res)
{
	struct fakerq	*f = fake_of(rq);

	f->fr_answered = true;
	f->fr_answer = *res;
}

static bool
fake_answered(struct rq *rq)
{
	return fake_of(rq)->fr_answered;
}

static const struct rq_ops fake_ops = {
	.ro_emit = fake_emit,
	.ro_emit_tools = fake_emit_tools,
	.ro_phase = fake_phase,
	.ro_stopped = fake_stopped,
	.ro_wake = fake_wake,
	.ro_send = fake_send,
	.ro_slot_take = fake_slot_take,
	.ro_slot_give = fake_slot_give,
	.ro_store = fake_store,
	.ro_answer = fake_answer,
	.ro_answered = fake_answered,
};

void
fakerq_init(struct fakerq *f, const char *id, int wake_fd)
{
	memset(f, 0, sizeof(*f));
	f->fr_rq.rq_ops = &fake_ops;
	f->fr_rq.rq_loop = f;
	f->fr_rq.rq_id = id;
	f->fr_rq.rq_wake_fd = wake_fd;
	f->fr_slot_answer = RQ_SLOT_OK;
}

void
fakerq_free(struct fakerq *f)
{
	buf_free(&f->fr_text);
	buf_free(&f->fr_reasoning);
	buf_free(&f->fr_tools);
}
