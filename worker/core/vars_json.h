/* vars_json.h - variables from JSON configuration: user-wide and workflow keys, routing categories. */
#ifndef SLUICE_VARS_JSON_H
#define SLUICE_VARS_JSON_H

#include "vars.h"

/* Python's str() of a JSON value (pyfmt_strdup): a string as it is,
 * a real as repr() (2.0, 1e+16), True/False/None, lists and objects as
 * Python shows them (['a', 1], {'k': 'v'}). Caller frees. */
char		*vars_py_str(json_t *);

/* Spec 5 item 1: every member of the user's userWideWorkflowVariables
 * object, as a template (vars_py_str for non-strings). Nothing when u
 * is NULL or the member is missing or not an object. */
void		 vars_user_wide(struct vars *, const struct conf_user *u);

/* Spec 5 item 3: every member of a workflow's top-level object except
 * "nodes" (conf_workflow's w_vars), as a template (vars_py_str). */
void		 vars_workflow(struct vars *, json_t *wvars);

/* Spec 5 item 7, from a Routing file's object ({"CAT": {"description":
 * ..., "workflow": ...}, ...}, in file order), as data:
 * category_colon_descriptions "A: d1; B: d2",
 * category_colon_descriptions_newline_bulletpoint "\n- A: d1\n- B: d2",
 * categoriesSeparatedByOr "A or B", categoryNameBulletpoints
 * "\n- A\n- B", category_list and category_descriptions as Python list
 * reprs (['A', 'B']). A missing description counts as "", a
 * non-string one as vars_py_str shows it. 0, or -1 (nothing set) when
 * routing is not an object. */
int		 vars_categories(struct vars *, json_t *routing);

#endif
