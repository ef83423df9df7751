/* conf_fuzz.c - libFuzzer harness for the config loaders: any bytes as a config file; positions that point where they say. */
#include <sys/stat.h>

#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/conf.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../common/names.h"
#include "common.h"

/*
 * Input: 1 header byte, then the bytes of a config file.
 *   h[0]: bits 0-2 which file they are: Users/fz.json, Endpoints/fz.json,
 *         ApiTypes/fz.json, Workflows/fz/fz.json, Routing/fz.json,
 *         Users/_current-user.json, or a preset (6: both as
 *         Endpoints/fzp.json with presetSamplers and as
 *         Presets/P/fzp.json; 7: only the latter) resolved through one
 *         of two api types; bit 3 the second api type
 * 1. jfile_parse: a refusal is "fuzz.json:L:C: message" with L and C
 *    inside the text. For parsed JSON every object member's position
 *    (jfile_memberpos, jfile_keypos) is the opening quote of a string
 *    that decodes to its key, and every array element's position
 *    (jfile_elempos) is the first byte of a value of its type.
 * 2. The loader reads the file from a private config folder (under
 *    $TMPDIR, else /dev/shm, else /tmp; removed at exit). A refusal
 *    carries a message; an "fz.json:L:C:" one has L and C inside the
 *    text. What a loader accepts keeps its promises: folders are safe
 *    relative paths, the port is valid, required strings are there,
 *    nodes are objects, categories name a workflow, a resolved preset is
 *    an object whose normalisation leaves no literal null marker.
 */

#define MAXCHECK	48	/* positions checked per input (each O(n)) */

static char	 dir[64];

static const char *const kinds[8] = {
	"Users/fz.json", "Endpoints/fz.json", "ApiTypes/fz.json",
	"Workflows/fz/fz.json", "Routing/fz.json", "Users/_current-user.json",
	"Endpoints/fzp.json", "Presets/P/fzp.json",
};

static const char *const apitypes[2] = {
	"{\"type\": \"openAIChatCompletion\", \"presetType\": \"P\", "
	    "\"samplerFieldMap\": {\"temperature\": \"temperature\", "
	    "\"top_k\": \"top_k\", \"max_tokens\": \"n_predict\"}, "
	    "\"thinking\": {\"location\": \"chat_template_kwargs\", "
	    "\"field\": \"enable_thinking\", \"mode\": \"bool\"}, "
	    "\"supportsChatTemplateKwargs\": true}",
	"{\"type\": \"ollamaApiChat\", \"presetType\": \"P\", "
	    "\"samplerFieldMap\": {\"seed\": \"seed\", \"stop\": \"stop\"}, "
	    "\"thinking\": {\"field\": \"think\", \"mode\": \"effort\"}}",
};

static struct conf_apitype	*ats[2];

static void
put(const char *rel, const void *p, size_t n)
{
	char	 path[256];
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || (n > 0 && write(fd, p, n) != (ssize_t)n))
		fuzz_fail("cannot write", path);
	close(fd);
}

static void
del(const char *rel)
{
	char	 path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	unlink(path);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

static void
cleanup(void)
{
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const sub[] = { "Users", "Endpoints", "ApiTypes",
	    "Workflows", "Workflows/fz", "Routing", "Presets", "Presets/P" };
	char		 path[256], err[CONF_ERRLEN];
	const char	*tmp;
	size_t		 i;

	log_init(LOG_LVL_ERR);
	/* a file is written per input: memory is much faster than disk */
	tmp = getenv("TMPDIR");
	if (tmp == NULL)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof(dir), "%s/conf_fuzz.XXXXXX", tmp);
	if (strlen(dir) >= sizeof(dir) - 1 || mkdtemp(dir) == NULL)
		fuzz_fail("mkdtemp", dir);
	atexit(cleanup);
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, sub[i]);
		if (mkdir(path, 0700) == -1)
			fuzz_fail("mkdir", path);
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "at%zu", i);
		snprintf(err, sizeof(err), "ApiTypes/%s.json", path);
		put(err, apitypes[i], strlen(apitypes[i]));
		if (conf_apitype_load(dir, path, &ats[i], err) == -1)
			fuzz_fail("fixture api type", err);
	}
	return 0;
}

/* ---- positions ------------------------------------------------------ */

/* The offset json.c's 1-based line and column (characters, as jansson
 * counts them) stand for; -1 when they are outside the text. */
static long
offset_of(const char *t, size_t n, int line, int col)
{
	size_t	 i = 0;
	int	 l = 1, c = 1;

	if (line < 1 || col < 1)
		return -1;
	while (l < line && i < n)
		if (t[i++] == '\n')
			l++;
	if (l < line)
		return -1;
	for (; i < n && t[i] != '\n'; i++) {
		if (((unsigned char)t[i] & 0xc0) == 0x80)
			continue;
		if (c++ == col)
			return (long)i;
	}
	return c == col ? (long)i : -1;
}

/* "name:L:C: ..." must point inside text (name is the path's end). */
static void
check_err(const char *err, const char *name, const char *t, size_t n)
{
	const char	*p;
	int		 line, col;

	if (err[0] == '\0' || memchr(err, '\0', CONF_ERRLEN) == NULL)
		fuzz_fail("a refusal without a message", NULL);
	if ((p = strstr(err, name)) == NULL || p[strlen(name)] != ':' ||
	    sscanf(p + strlen(name), ":%d:%d:", &line, &col) != 2)
		return;		/* "path: strerror" and the like */
	if (offset_of(t, n, line, col) == -1)
		fuzz_fail("the error points outside the text", err);
}

static json_t *
key_at(const struct jfile *jf, int line, int col)
{
	long	 off = offset_of(jf->jf_text, jf->jf_len, line, col);
	size_t	 k;

	if (off == -1 || jf->jf_text[off] != '"')
		return NULL;
	for (k = (size_t)off + 1; k < jf->jf_len && jf->jf_text[k] != '"';
	    k++)
		if (jf->jf_text[k] == '\\')
			k++;
	if (k >= jf->jf_len)
		return NULL;
	return json_loadb(jf->jf_text + off, k + 1 - (size_t)off,
	    JSON_DECODE_ANY, NULL);
}

static void
check_key(const struct jfile *jf, int line, int col, const char *key)
{
	json_t	*k = key_at(jf, line, col);

	if (!json_is_string(k) || strcmp(json_string_value(k), key) != 0) {
		fprintf(stderr, "key '%s' at %d:%d\n", key, line, col);
		fuzz_fail("a member position is not its key", NULL);
	}
	json_decref(k);
}

static void
check_elem(const struct jfile *jf, int line, int col, const json_t *v)
{
	long		 off = offset_of(jf->jf_text, jf->jf_len, line, col);
	const char	*want;
	char		 c;

	if (off == -1)
		fuzz_fail("an element position outside the text", NULL);
	c = jf->jf_text[off];
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		want = "{";
		break;
	case JSON_ARRAY:
		want = "[";
		break;
	case JSON_STRING:
		want = "\"";
		break;
	case JSON_TRUE:
		want = "t";
		break;
	case JSON_FALSE:
		want = "f";
		break;
	case JSON_NULL:
		want = "n";
		break;
	default:
		want = "-0123456789";
		break;
	}
	if (c == '\0' || strchr(want, c) == NULL) {
		fprintf(stderr, "element at %d:%d starts '%c'\n", line, col, c);
		fuzz_fail("an element position is not its value", want);
	}
}

static void
walk(const struct jfile *jf, json_t *v, int *budget)
{
	const char	*k;
	json_t		*c;
	size_t		 i;
	int		 line, col;

	if (json_is_object(v))
		json_object_foreach(v, k, c) {
			if ((*budget)-- <= 0)
				return;
			jfile_memberpos(jf, v, k, &line, &col);
			check_key(jf, line, col, k);
			jfile_keypos(jf, k, &line, &col);
			check_key(jf, line, col, k);
			walk(jf, c, budget);
		}
	else if (json_is_array(v))
		json_array_foreach(v, i, c) {
			if ((*budget)-- <= 0)
				return;
			jfile_elempos(jf, v, i, &line, &col);
			check_elem(jf, line, col, c);
			walk(jf, c, budget);
		}
}

static void
positions(const char *t, size_t n)
{
	struct jfile	 jf;
	char		 err[CONF_ERRLEN];
	int		 budget = MAXCHECK;

	err[0] = '\0';
	if (jfile_parse("fuzz.json", t, n, &jf, err) == -1) {
		check_err(err, "fuzz.json", t, n);
		jfile_free(&jf);
		return;
	}
	if (jf.jf_len != n || memcmp(jf.jf_text, t, n) != 0 ||
	    jf.jf_text[n] != '\0')
		fuzz_fail("the kept text is not the file", NULL);
	walk(&jf, jf.jf_root, &budget);
	jfile_free(&jf);
}

/* ---- loaders -------------------------------------------------------- */

/* A folder the loader accepted: "" or safe names joined by '/'. */
static void
check_folder(const char *f, const char *what)
{
	const char	*s;
	size_t		 n;

	if (f == NULL)
		fuzz_fail("a folder is NULL", what);
	while (*f != '\0') {
		s = strchr(f, '/');
		n = s != NULL ? (size_t)(s - f) : strlen(f);
		if (!name_is_safe(f, n) || (n <= 2 && strncmp(f, "..", n) == 0))
			fuzz_fail("an unsafe folder was accepted", what);
		f += n + (s != NULL);
		if (s != NULL && *f == '\0')
			fuzz_fail("a folder ends in '/'", what);
	}
}

static int
load_user(char *err)
{
	struct conf_user	*u;

	if (conf_user_load(dir, "fz", &u, err) == -1)
		return -1;
	check_folder(u->u_endpoint_subdir, "endpoint folder");
	check_folder(u->u_workflow_folder, "workflow folder");
	check_folder(u->u_preset_subdir, "preset folder");
	check_folder(u->u_shared_folder, "shared folder");
	if (u->u_port < 1 || u->u_port > 65535 || u->u_connect_timeout_s < 1 ||
	    u->u_max_categorization < 1 || u->u_custom_workflow == NULL ||
	    u->u_routing_config == NULL || u->u_chat_template == NULL ||
	    (u->u_sluice != NULL && !json_is_object(u->u_sluice)))
		fuzz_fail("a user config out of its bounds", NULL);
	conf_user_free(u);
	return 0;
}

static int
load_endpoint(char *err)
{
	struct conf_endpoint	*e;
	size_t			 i;

	if (conf_endpoint_load(dir, "", "fz", &e, err) == -1)
		return -1;
	if (e->e_url == NULL || e->e_apitype_name == NULL ||
	    e->e_model == NULL || e->e_api_key == NULL ||
	    e->e_start_text == NULL || e->e_max_concurrent < 0 ||
	    e->e_max_concurrent > 4096)
		fuzz_fail("an endpoint config out of its bounds", NULL);
	for (i = 0; e->e_start_text[i] != NULL; i++)
		;
	conf_endpoint_free(e);
	return 0;
}

static int
load_apitype(char *err)
{
	struct conf_apitype	*a;

	if (conf_apitype_load(dir, "fz", &a, err) == -1)
		return -1;
	if (a->a_type == APIT_UNKNOWN || a->a_type_name == NULL ||
	    a->a_truncate_prop == NULL || a->a_stream_prop == NULL ||
	    a->a_think_location == NULL || a->a_think_mode == NULL)
		fuzz_fail("an api type out of its bounds", NULL);
	conf_apitype_free(a);
	return 0;
}

static int
load_workflow(char *err)
{
	struct conf_workflow	*w;
	json_t			*node, *t;
	size_t			 i;

	if (conf_workflow_load(dir, "fz", "fz", &w, err) == -1)
		return -1;
	if (!json_is_array(w->w_nodes) || !json_is_object(w->w_vars) ||
	    json_object_get(w->w_vars, "nodes") != NULL)
		fuzz_fail("a workflow without its node list", NULL);
	json_array_foreach(w->w_nodes, i, node) {
		t = json_object_get(node, "type");
		if (!json_is_object(node) || (t != NULL && !json_is_null(t) &&
		    !json_is_string(t)))
			fuzz_fail("a workflow node is not an object", NULL);
	}
	conf_workflow_free(w);
	return 0;
}

static int
load_routing(char *err)
{
	struct jfile	 jf;
	const char	*k;
	json_t		*v;

	if (conf_routing_load(dir, "fz", &jf, err) == -1)
		return -1;
	if (json_object_size(jf.jf_root) == 0)
		fuzz_fail("a routing config without categories", NULL);
	json_object_foreach(jf.jf_root, k, v)
		if (!json_is_string(json_object_get(v, "workflow")))
			fuzz_fail("a category without a workflow", k);
	jfile_free(&jf);
	return 0;
}

static int
load_current(char *err)
{
	char	 name[32];

	if (conf_current_user(dir, name, sizeof(name), err) == -1)
		return -1;
	if (memchr(name, '\0', sizeof(name)) == NULL ||
	    !name_is_safe(name, strlen(name)))
		fuzz_fail("an unsafe current user", name);
	return 0;
}

/* No "__wilmer_null__" may survive in a normalised object (outside
 * json_schema, grammar and arrays, which are kept as they are). */
static void
check_normal(json_t *o)
{
	const char	*k;
	json_t		*v;

	json_object_foreach(o, k, v) {
		if (json_is_string(v) && strcmp(json_string_value(v),
		    "__wilmer_null__") == 0)
			fuzz_fail("a literal null marker survived", k);
		if (json_is_object(v) && strcmp(k, "json_schema") != 0 &&
		    strcmp(k, "grammar") != 0) {
			if (json_object_size(v) == 0)
				fuzz_fail("an empty object survived", k);
			check_normal(v);
		}
	}
}

static int
load_preset(int which, char *err)
{
	json_t	*raw, *norm;

	if (conf_preset_resolve(dir, NULL, ats[which], "fzp", &raw,
	    err) == -1)
		return -1;
	if (!json_is_object(raw))
		fuzz_fail("a preset that is not an object", NULL);
	norm = conf_gen_normalize(raw);
	check_normal(norm);
	json_decref(norm);
	json_decref(raw);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*t = (const char *)data + 1;
	char		 err[CONF_ERRLEN];
	size_t		 n;
	int		 k, rc;

	if (size < 1)
		return 0;
	k = data[0] & 7;
	n = size - 1;
	positions(t, n);
	/* 6: the preset in both places, 7: only as a preset file */
	put(kinds[k], t, n);
	if (k == 6)
		put(kinds[7], t, n);
	else if (k == 7)
		del(kinds[6]);
	err[0] = '\0';
	switch (k) {
	case 0:
		rc = load_user(err);
		break;
	case 1:
		rc = load_endpoint(err);
		break;
	case 2:
		rc = load_apitype(err);
		break;
	case 3:
		rc = load_workflow(err);
		break;
	case 4:
		rc = load_routing(err);
		break;
	case 5:
		rc = load_current(err);
		break;
	default:
		rc = load_preset((data[0] >> 3) & 1, err);
		break;
	}
	if (rc == -1)
		check_err(err, k == 5 ? "_current-user.json" : k >= 6 ?
		    "fzp.json" : "fz.json", t, n);
	return 0;
}
