/* vars_json.c - variables from JSON configuration: user-wide and workflow keys, routing categories. */
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/conf.h"
#include "../../common/pyfmt.h"
#include "../../common/xmem.h"
#include "vars.h"
#include "vars_json.h"

/*
 * WilmerAI keeps JSON values as Python objects and str.format shows
 * them with str() (common/pyfmt.h): so 5 is "5", 2.0 is "2.0", true is
 * "True", and a list is "['a', 1]". The categorisation variables
 * category_list and category_descriptions are Python lists, shown the
 * same way.
 */

char *
vars_py_str(json_t *v)
{
	return pyfmt_strdup(v);
}

/* Every member of obj (but "nodes") as a template. */
static void
set_templates(struct vars *vs, json_t *obj)
{
	const char	*key;
	json_t		*v;
	char		*s;

	json_object_foreach(obj, key, v) {
		if (strcmp(key, "nodes") == 0)
			continue;
		s = vars_py_str(v);
		vars_set_template(vs, key, s);
		vars_set_jinja(vs, key, v);	/* Jinja sees the value */
		free(s);
	}
}

void
vars_user_wide(struct vars *vs, const struct conf_user *u)
{
	json_t	*uw;

	if (u == NULL)
		return;
	uw = json_object_get(u->u_file.jf_root, "userWideWorkflowVariables");
	if (json_is_object(uw))
		set_templates(vs, uw);
}

void
vars_workflow(struct vars *vs, json_t *wvars)
{
	if (json_is_object(wvars))
		set_templates(vs, wvars);
}

/* The six category strings under construction. */
struct cats {
	struct buf	 c_colon;	/* "A: d1; B: d2" */
	struct buf	 c_bullet;	/* "\n- A: d1\n- B: d2" */
	struct buf	 c_or;		/* "A or B" */
	struct buf	 c_names;	/* "\n- A\n- B" */
	struct buf	 c_list;	/* "['A', 'B']" */
	struct buf	 c_descs;	/* "['d1', 'd2']" */
	json_t		*c_jlist;	/* the two lists, for Jinja */
	json_t		*c_jdescs;
};

static void
cat_add(struct cats *c, const char *name, json_t *desc, bool first)
{
	char	*d = desc != NULL ? vars_py_str(desc) : xstrdup("");

	if (!first) {
		buf_adds(&c->c_colon, "; ");
		buf_adds(&c->c_or, " or ");
		buf_adds(&c->c_list, ", ");
		buf_adds(&c->c_descs, ", ");
	}
	buf_printf(&c->c_colon, "%s: %s", name, d);
	buf_printf(&c->c_bullet, "\n- %s: %s", name, d);
	buf_adds(&c->c_or, name);
	buf_printf(&c->c_names, "\n- %s", name);
	pyfmt_repr_str(&c->c_list, name, strlen(name));
	if (desc != NULL)
		pyfmt_repr(&c->c_descs, desc);
	else
		pyfmt_repr_str(&c->c_descs, "", 0);
	json_array_append_new(c->c_jlist, json_string(name));
	json_array_append_new(c->c_jdescs, desc != NULL ? json_incref(desc) :
	    json_string(""));
	free(d);
}

int
vars_categories(struct vars *vs, json_t *routing)
{
	struct cats	 c;
	const char	*key;
	json_t		*v;
	bool		 first = true;

	if (!json_is_object(routing))
		return -1;
	memset(&c, 0, sizeof(c));
	c.c_jlist = json_array();
	c.c_jdescs = json_array();
	buf_addc(&c.c_list, '[');
	buf_addc(&c.c_descs, '[');
	json_object_foreach(routing, key, v) {
		cat_add(&c, key, json_object_get(v, "description"), first);
		first = false;
	}
	if (first) {			/* no category: Python's join of [] */
		buf_adds(&c.c_bullet, "\n- ");
		buf_adds(&c.c_names, "\n- ");
	}
	buf_addc(&c.c_list, ']');
	buf_addc(&c.c_descs, ']');
	buf_adds(&c.c_colon, "");
	buf_adds(&c.c_or, "");
	vars_set(vs, "category_colon_descriptions", c.c_colon.b_data);
	vars_set(vs, "category_colon_descriptions_newline_bulletpoint",
	    c.c_bullet.b_data);
	vars_set(vs, "categoriesSeparatedByOr", c.c_or.b_data);
	vars_set(vs, "categoryNameBulletpoints", c.c_names.b_data);
	vars_set(vs, "category_list", c.c_list.b_data);
	vars_set(vs, "category_descriptions", c.c_descs.b_data);
	vars_set_jinja(vs, "category_list", c.c_jlist);
	vars_set_jinja(vs, "category_descriptions", c.c_jdescs);
	json_decref(c.c_jlist);
	json_decref(c.c_jdescs);
	buf_free(&c.c_colon);
	buf_free(&c.c_bullet);
	buf_free(&c.c_or);
	buf_free(&c.c_names);
	buf_free(&c.c_list);
	buf_free(&c.c_descs);
	return 0;
}
