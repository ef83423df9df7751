/* routing.c - WilmerAI's prompt routing: a categorisation workflow picks the workflow that answers. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/log.h"
#include "../../common/xmem.h"
#include "routing.h"

/* Upper-cased, ASCII punctuation removed (Python's string.punctuation
 * is exactly C's ispunct in the C locale). Caller frees. */
static char *
squash(const char *s)
{
	char	*o = xmalloc(strlen(s) + 1), *p = o;

	for (; *s != '\0'; s++)
		if (!ispunct((unsigned char)*s))
			*p++ = (char)toupper((unsigned char)*s);
	*p = '\0';
	return o;
}

static const char *
match_word(json_t *routing, const char *word)
{
	const char	*cat;
	json_t		*v;
	char		*c;
	bool		 hit;

	json_object_foreach(routing, cat, v) {
		c = squash(cat);
		hit = c[0] != '\0' && strstr(word, c) != NULL;
		free(c);
		if (hit)
			return cat;
	}
	return NULL;
}

const char *
routing_match(json_t *routing, const char *output)
{
	char		*all = squash(output), *save = NULL, *w;
	const char	*cat = NULL;

	for (w = strtok_r(all, " \t\n\v\f\r", &save); w != NULL && cat == NULL;
	    w = strtok_r(NULL, " \t\n\v\f\r", &save))
		cat = match_word(routing, w);
	free(all);
	return cat;
}

static void
fail_config(struct flow *f, const char *msg)
{
	f->f_res->r_status = RQ_ERROR;
	f->f_res->r_http = 500;
	snprintf(f->f_res->r_code, sizeof(f->f_res->r_code), "config_error");
	snprintf(f->f_res->r_message, sizeof(f->f_res->r_message), "%s", msg);
}

/* Run the categoriser until it names a category; NULL when it never
 * did. -1 on a failure of the categoriser itself; NODE_END when it
 * ended early, which ends the request as it does any workflow's
 * caller. */
static int
categorise(struct flow *f, json_t *routing, const char **cat)
{
	const struct conf_user	*u = f->f_user;
	struct rq_flowcall		 c;
	struct buf		 out = BUF_INIT;
	bool			 delivered;
	long			 i;
	int			 rc;

	memset(&c, 0, sizeof(c));
	c.fc_folder = u->u_workflow_folder;
	c.fc_name = u->u_categorization_workflow;
	c.fc_routing = routing;
	*cat = NULL;
	for (i = 0; i < u->u_max_categorization && *cat == NULL; i++) {
		if ((rc = wf_run(f, &c, &out, &delivered)) != 0) {
			buf_free(&out);
			return rc;
		}
		buf_addc(&out, '\0');
		*cat = routing_match(routing, out.b_data);
		log_info("[rq %s] routing: attempt %ld: '%.80s' -> %s",
		    f->f_rq->rq_id, i + 1, log_text(out.b_data), *cat ? *cat :
		    "no category");
	}
	buf_free(&out);
	return 0;
}

int
routing_run(struct flow *f, const struct rq_flowcall *top, struct buf *out,
    bool *delivered)
{
	const struct conf_user	*u = f->f_user;
	struct rq_flowcall		 c = *top;
	struct jfile		 jf;
	char			 err[CONF_ERRLEN];
	const char		*cat;
	int			 rc = -1;

	if (u->u_routing_config[0] == '\0' ||
	    u->u_categorization_workflow[0] == '\0') {
		snprintf(err, sizeof(err), "user '%s' selects no workflow: set "
		    "\"customWorkflowOverride\": true and \"customWorkflow\", "
		    "or \"routingConfig\" and \"categorizationWorkflow\" in the "
		    "user file, or name a shared workflow in the model field",
		    u->u_name);
		fail_config(f, err);
		return -1;
	}
	if (conf_routing_load(f->f_rq->rq_confdir, u->u_routing_config, &jf,
	    err) == -1) {
		fail_config(f, err);
		return -1;
	}
	if ((rc = categorise(f, jf.jf_root, &cat)) == 0) {
		c.fc_folder = u->u_workflow_folder;
		c.fc_name = cat != NULL ? json_string_value(json_object_get(
		    json_object_get(jf.jf_root, cat), "workflow")) :
		    "_DefaultWorkflow";
		rc = wf_run(f, &c, out, delivered);
	}
	jfile_free(&jf);
	return rc;
}
