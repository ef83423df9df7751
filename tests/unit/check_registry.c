/* check_registry.c - the two views of common/nodetypes.def agree: --check-config's table and the worker's handlers. */
#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "../../common/nodetypes.h"
#include "../../worker/core/node.h"
#include "../../worker/engine/registry.h"
#include "../../worker/nodes/nodes.h"
#include "../testmain.h"

struct row {
	const char	*rw_name;
	const char	*rw_runs;	/* "IMPLEMENTED" or "NOT_IMPLEMENTED" */
};

/* The list itself, read here as text. */
static const struct row rows[] = {
#define NODETYPE(name, id, runs)	{ name, #runs },
#include "../../common/nodetypes.def"
#undef NODETYPE
};

#define NROWS	(sizeof(rows) / sizeof(rows[0]))

static bool
row_runs(const struct row *rw)
{
	return strcmp(rw->rw_runs, "IMPLEMENTED") == 0;
}

/* An IMPLEMENTED row finds a handler of its own that carries its name;
 * a NOT_IMPLEMENTED row finds the shared 501 handler. */
START_TEST(every_row_meets_its_handler)
{
	const struct row	*rw = &rows[_i];
	const struct node_type	*nt = node_type_find(rw->rw_name);

	ck_assert_msg(nt != NULL, "%s: no handler", rw->rw_name);
	ck_assert_ptr_nonnull(nt->nt_run);
	if (!row_runs(rw)) {
		ck_assert_msg(nt == &node_unsupported, "%s: NOT_IMPLEMENTED, "
		    "but has a handler of its own", rw->rw_name);
		return;
	}
	ck_assert_msg(nt != &node_unsupported, "%s", rw->rw_name);
	ck_assert_msg(nt->nt_name != NULL && strcmp(nt->nt_name,
	    rw->rw_name) == 0, "row '%s' reaches the handler of '%s'",
	    rw->rw_name, nt->nt_name != NULL ? nt->nt_name : "(null)");
}
END_TEST

/* --check-config's table says the same of every row. */
START_TEST(every_row_in_the_check_table)
{
	const struct row		*rw = &rows[_i];
	const struct node_type_info	*ti = nodetype_find(rw->rw_name);

	ck_assert_msg(ti != NULL, "%s: unknown to --check-config",
	    rw->rw_name);
	ck_assert_str_eq(ti->ti_name, rw->rw_name);
	ck_assert_msg(ti->ti_runs == row_runs(rw), "%s is %s, but "
	    "--check-config says it %s", rw->rw_name, rw->rw_runs,
	    ti->ti_runs ? "runs" : "does not run");
}
END_TEST

/* No two rows share a name or a handler (a copied row left unedited). */
START_TEST(rows_and_handlers_are_distinct)
{
	const struct node_type	*a, *b;
	size_t			 i, j;

	for (i = 0; i < NROWS; i++)
		for (j = i + 1; j < NROWS; j++) {
			ck_assert_msg(strcmp(rows[i].rw_name, rows[j].rw_name)
			    != 0, "row '%s' twice", rows[i].rw_name);
			a = node_type_find(rows[i].rw_name);
			b = node_type_find(rows[j].rw_name);
			ck_assert_msg(a != b || a == &node_unsupported, "'%s' "
			    "and '%s' share a handler", rows[i].rw_name,
			    rows[j].rw_name);
		}
}
END_TEST

/* Names off the list: neither view knows them (case matters). */
START_TEST(names_off_the_list)
{
	const char	*names[] = { "standard", "STANDARD", "Standard ",
			    "NoSuchType", "", NULL };
	size_t		 i;

	for (i = 0; names[i] != NULL; i++) {
		ck_assert_ptr_null(node_type_find(names[i]));
		ck_assert_ptr_null(nodetype_find(names[i]));
	}
	ck_assert_ptr_null(node_type_find(NULL));
	ck_assert_ptr_null(nodetype_find(NULL));
	ck_assert_ptr_eq(node_type_find("Standard"), &node_standard);
	ck_assert_ptr_null(node_unsupported.nt_name);
}
END_TEST

static Suite *
registry_suite(void)
{
	Suite	*s = suite_create("registry");
	TCase	*tc = tcase_create("rows");

	tcase_add_loop_test(tc, every_row_meets_its_handler, 0, (int)NROWS);
	tcase_add_loop_test(tc, every_row_in_the_check_table, 0, (int)NROWS);
	tcase_add_test(tc, rows_and_handlers_are_distinct);
	tcase_add_test(tc, names_off_the_list);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(registry_suite());
}
