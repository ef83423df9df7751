/* prompt.c - what a node's backend is sent: prompt templates, endpoint prompt injections, completion prompts. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/conf_template.h"
#include "../../common/json.h"
#include "../../common/names.h"
#include "../../common/pystr.h"
#include "../../common/xmem.h"
#include "prompt.h"

struct prompt_template {
	struct jfile	 pt_file;
};

/* WilmerAI's role tags, in the order of its regular expression. */
static const char *const tags[] = {
	"[Beg_Sys]", "[Beg_User]", "[Beg_Assistant]", "[Beg_SysMes]",
};

/* ---- templates -------------------------------------------------------- */

const char *
prompt_template_name(const struct conf_endpoint *ep,
    const struct conf_user *u)
{
	if (ep != NULL && ep->e_prompt_template != NULL)
		return ep->e_prompt_template;
	if (u != NULL && u->u_chat_template != NULL &&
	    u->u_chat_template[0] != '\0')
		return u->u_chat_template;
	return NULL;
}

int
prompt_template_load(const char *confdir, const char *name,
    struct prompt_template **out, char err[CONF_ERRLEN])
{
	struct prompt_template	*pt = xcalloc(1, sizeof(*pt));

	if (conf_template_load(confdir, name, &pt->pt_file, err) == -1) {
		free(pt);
		*out = NULL;
		return -1;
	}
	*out = pt;
	return 0;
}

void
prompt_template_free(struct prompt_template *pt)
{
	if (pt == NULL)
		return;
	jfile_free(&pt->pt_file);
	free(pt);
}

static const char *
member(const struct prompt_template *pt, const char *key)
{
	const char	*v;

	if (pt == NULL)
		return "";
	v = json_string_value(json_object_get(pt->pt_file.jf_root, key));
	return v != NULL ? v : "";
}

const char *
prompt_template_get(const struct prompt_template *pt, const char *role,
    const char *part)
{
	struct buf	 key = BUF_INIT;
	const char	*v;
	size_t		 i;

	buf_adds(&key, "promptTemplate");
	for (i = 0; role[i] != '\0'; i++)
		buf_addc(&key, (char)(i == 0 ? toupper((unsigned char)role[i]) :
		    tolower((unsigned char)role[i])));
	buf_adds(&key, part);
	v = member(pt, key.b_data);
	buf_free(&key);
	return v;
}

const char *
prompt_template_end(const struct prompt_template *pt)
{
	return member(pt, "promptTemplateEndToken");
}

/* ---- tags and strings ------------------------------------------------- */

#define NTAGS	(sizeof(tags) / sizeof(tags[0]))

static void
strip_tags_into(struct buf *out, const char *s)
{
	size_t	 i, t, len;

	while (*s != '\0') {
		for (t = 0; *s == '[' && t < NTAGS; t++) {
			len = strlen(tags[t]);
			if (strncmp(s, tags[t], len) == 0)
				break;
		}
		if (*s == '[' && t < NTAGS) {
			s += strlen(tags[t]);
			continue;
		}
		for (i = 1; s[i] != '\0' && s[i] != '['; i++)
			;
		buf_add(out, s, i);
		s += i;
	}
}

char *
prompt_strip_tags(const char *s)
{
	struct buf	 b = BUF_INIT;

	buf_adds(&b, "");
	strip_tags_into(&b, s);
	return buf_take(&b);
}

/* a + b + c with the role tags stripped, replacing *dst (freed). */
static void
render(char **dst, const char *a, const char *b, const char *c)
{
	char	*joined = xasprintf("%s%s%s", a, b, c);

	free(*dst);
	*dst = prompt_strip_tags(joined);
	free(joined);
}

bool
prompt_is_completion(enum conf_apitype_kind t)
{
	return t == APIT_OPENAI_COMPLETION || t == APIT_KOBOLD ||
	    t == APIT_OLLAMA_GENERATE;
}

/* ---- endpoint injections ---------------------------------------------- */

/* The endpoint's prompt injection settings; a text is NULL when its
 * flag is off or the text is empty (WilmerAI tests both for truth). */
struct inject {
	const char	*in_system;	/* textToAddToStartOfSystem */
	const char	*in_prompt;	/* textToAddToStartOfPrompt */
	const char	*in_completion;	/* textToAddToStartOfCompletion */
	bool		 in_ensure;	/* ensureTextAddedToAssistantWhen... */
};

static int
inject_one(const struct jfile *jf, const char *flag, const char *textkey,
    const char **out, char err[CONF_ERRLEN])
{
	bool		 on;
	const char	*text;

	*out = NULL;
	if (jget_bool(jf, jf->jf_root, flag, false, &on, err) == -1 ||
	    jget_str(jf, jf->jf_root, textkey, "", &text, err) == -1)
		return -1;
	if (on && text[0] != '\0')
		*out = text;
	return 0;
}

static int
inject_load(const struct conf_endpoint *ep, struct inject *in,
    char err[CONF_ERRLEN])
{
	const struct jfile	*jf = &ep->e_file;

	memset(in, 0, sizeof(*in));
	if (!json_is_object(jf->jf_root))
		return 0;		/* an endpoint built in memory */
	if (inject_one(jf, "addTextToStartOfSystem", "textToAddToStartOfSystem",
	    &in->in_system, err) == -1 ||
	    inject_one(jf, "addTextToStartOfPrompt", "textToAddToStartOfPrompt",
	    &in->in_prompt, err) == -1 ||
	    inject_one(jf, "addTextToStartOfCompletion",
	    "textToAddToStartOfCompletion", &in->in_completion, err) == -1)
		return -1;
	return jget_bool(jf, jf->jf_root,
	    "ensureTextAddedToAssistantWhenChatCompletion", false,
	    &in->in_ensure, err);
}

/* *content = a + *content + b. */
static void
wrap(char **content, const char *a, const char *b)
{
	char	*s = xasprintf("%s%s%s", a, *content, b);

	free(*content);
	*content = s;
}

/* Append a role/text message and move it to the front. */
static void
insert_first(struct wmsgs *l, const char *role, const char *text)
{
	struct wmsg	 m;

	wmsgs_add(l, role, text);
	m = l->v[l->n - 1];
	memmove(&l->v[1], &l->v[0], (l->n - 1) * sizeof(l->v[0]));
	l->v[0] = m;
}

static void
inject_system(struct wmsgs *l, const char *text)
{
	size_t	 i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].m_role, "system") == 0) {
			wrap(&l->v[i].m_content, text, "");
			return;
		}
	insert_first(l, "system", text);
}

static void
inject_prompt(struct wmsgs *l, const char *text)
{
	size_t	 i;

	for (i = l->n; i > 0; i--)
		if (strcmp(l->v[i - 1].m_role, "user") == 0) {
			wrap(&l->v[i - 1].m_content, text, "");
			return;
		}
	wmsgs_add(l, "user", text);
}

static void
inject_completion(struct wmsgs *l, const char *text, bool ensure)
{
	if (l->n == 0 || (ensure &&
	    strcmp(l->v[l->n - 1].m_role, "assistant") != 0))
		wmsgs_add(l, "assistant", text);
	else
		wrap(&l->v[l->n - 1].m_content, "", text);
}

int
prompt_chat(const struct conf_endpoint *ep, struct wmsgs *l,
    char err[CONF_ERRLEN])
{
	struct inject	 in;
	size_t		 i;

	if (inject_load(ep, &in, err) == -1)
		return -1;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].m_role, "systemMes") == 0) {
			free(l->v[i].m_role);
			l->v[i].m_role = xstrdup("system");
		}
	if (in.in_system != NULL)
		inject_system(l, in.in_system);
	if (in.in_prompt != NULL)
		inject_prompt(l, in.in_prompt);
	if (in.in_completion != NULL)
		inject_completion(l, in.in_completion, in.in_ensure);
	return 0;
}

/* ---- completion prompts ----------------------------------------------- */

/* The last n non-"system" messages of conv, each rendered Prefix +
 * content + Suffix with its tags stripped (no suffix on a final
 * assistant message), concatenated. n follows Python's l[-n:]: 0 takes
 * every message, a negative n skips the first -n. */
static char *
last_turns(const struct prompt_template *pt, const struct wmsgs *conv,
    long n)
{
	struct buf	 out = BUF_INIT;
	char		*piece;
	size_t		 i, cnt = 0, skip, k = 0;
	size_t		 total = conv != NULL ? conv->n : 0;

	for (i = 0; i < total; i++)
		cnt += strcmp(conv->v[i].m_role, "system") != 0;
	if (n >= 0)
		skip = n == 0 || (size_t)n >= cnt ? 0 : cnt - (size_t)n;
	else
		skip = n <= -(long)cnt ? cnt : (size_t)-n;
	buf_adds(&out, "");
	for (i = 0; i < total; i++) {
		const struct wmsg	*m = &conv->v[i];
		bool			 final;

		if (strcmp(m->m_role, "system") == 0 || k++ < skip)
			continue;
		final = k == cnt && strcmp(m->m_role, "assistant") == 0;
		piece = xasprintf("%s%s%s", prompt_template_get(pt, m->m_role,
		    "Prefix"), m->m_content, final ? "" :
		    prompt_template_get(pt, m->m_role, "Suffix"));
		strip_tags_into(&out, piece);
		free(piece);
	}
	return buf_take(&out);
}

/* The node's prompt through the template steps the flags ask for. */
static char *
templated_prompt(const struct prompt_template *pt, const struct wmsgs *conv,
    const struct prompt_node *pn)
{
	char	*p;

	p = pn->pn_prompt != NULL ? xstrdup(pn->pn_prompt) :
	    last_turns(pt, conv, pn->pn_last_n < LONG_MAX ? pn->pn_last_n + 1 :
	    LONG_MAX);
	if (pn->pn_user_turn)
		render(&p, prompt_template_get(pt, "user", "Prefix"), p,
		    prompt_template_get(pt, "user", "Suffix"));
	if (pn->pn_open_turn)
		render(&p, prompt_template_get(pt, "assistant", "Prefix"), p, "");
	if (pn->pn_gen_prompt)
		render(&p, p, prompt_template_get(pt, "assistant", "Prefix"),
		    prompt_template_end(pt));
	return p;
}

char *
prompt_completion(const struct conf_endpoint *ep,
    const struct prompt_template *pt, const struct wmsgs *conv,
    const struct prompt_node *pn, char err[CONF_ERRLEN])
{
	struct inject	 in;
	struct buf	 full = BUF_INIT;
	char		*prompt, *system = NULL;
	size_t		 off, len;

	if (inject_load(ep, &in, err) == -1)
		return NULL;
	prompt = templated_prompt(pt, conv, pn);
	render(&system, prompt_template_get(pt, "system", "Prefix"),
	    pn->pn_system != NULL ? pn->pn_system : "",
	    prompt_template_get(pt, "system", "Suffix"));
	if (in.in_system != NULL)
		wrap(&system, in.in_system, "");
	if (in.in_prompt != NULL)
		wrap(&prompt, in.in_prompt, "");
	buf_adds(&full, system);
	buf_adds(&full, prompt);
	pystr_strip(full.b_data, full.b_len, true, true, &off, &len);
	memmove(full.b_data, full.b_data + off, len);
	full.b_len = len;
	full.b_data[len] = '\0';
	if (in.in_completion != NULL)
		buf_adds(&full, in.in_completion);
	free(prompt);
	free(system);
	return buf_take(&full);
}
