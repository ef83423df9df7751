/* clean_toks.c - the cleaner's third stage: special tokens (<|im_end|>, <|eot_id|>, ...) removed. */
#include <string.h>

#include "clean_int.h"

void
tk_init(struct cleaner *c)
{
	const char *const	*t = c->c_conf.cc_special_tokens;
	struct tk		*k = &c->c_tk;

	pset_init(&k->k_set);
	buf_init(&k->k_pend);
	for (; t != NULL && *t != NULL; t++)
		pset_add(&k->k_set, *t, strlen(*t), false, 0);
	pset_done(&k->k_set);
	k->k_on = k->k_set.ps_n > 0;
}

void
tk_free(struct tk *k)
{
	pset_free(&k->k_set);
	buf_free(&k->k_pend);
}

static size_t
tk_step(struct cleaner *c, const char *p, size_t n, bool final)
{
	struct pm	 m;

	pset_scan(&c->c_tk.k_set, p, n, final, NULL, &m);
	if (m.pm_pos > 0)
		px_push(c, p, m.pm_pos);
	return m.pm_kind == PM_FULL ? m.pm_pos + m.pm_len : m.pm_pos;
}

void
tk_push(struct cleaner *c, const char *p, size_t n)
{
	if (!c->c_tk.k_on)
		px_push(c, p, n);
	else
		clean_drive(c, &c->c_tk.k_pend, tk_step, p, n, false);
}

void
tk_finish(struct cleaner *c)
{
	if (c->c_tk.k_on)
		clean_drive(c, &c->c_tk.k_pend, tk_step, NULL, 0, true);
	px_finish(c);
}
