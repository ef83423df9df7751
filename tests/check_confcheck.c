/* check_confcheck.c - --check-config: what it follows, what it reports, problems against warnings. */
#include <check.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../common/nodetypes.h"
#include "../gateway/confcheck.h"
#include "../gateway/gwconf.h"
#include "testmain.h"

static char		 dir[64];
static struct buf	 got;		/* the lines reported, one a line */
static int		 nproblems;

/* Write dir/rel, making its folders. */
static void
put(const char *rel, const char *text)
{
	char	 path[512], *p;
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define USER_BASE	"\"chatCompleteAddUserAssistant\": false, " \
			"\"chatCompletionAddMissingAssistantGenerator\": false"

/* A user whose custom workflow "Main" calls endpoint Good with preset
 * Warm, both fine; each test breaks or extends it. */
static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_confcheck.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	put("Users/u.json", "{" USER_BASE ", \"customWorkflowOverride\": true, "
	    "\"customWorkflow\": \"Main\"}\n");
	put("ApiTypes/Chat.json", "{\"type\": \"openAIChatCompletion\", "
	    "\"presetType\": \"Chat\"}\n");
	put("ApiTypes/Comp.json", "{\"type\": \"koboldCppGenerate\", "
	    "\"presetType\": \"Comp\"}\n");
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Chat\", \"promptTemplate\": null}\n");
	put("Presets/Chat/Warm.json", "{\"temperature\": 0.7}\n");
	put("Presets/Comp/Warm.json", "{\"temperature\": 0.7}\n");
	put("PromptTemplates/chatml.json", "{\"promptTemplateUserPrefix\": "
	    "\"<|im_start|>user\\n\", \"promptTemplateEndToken\": \"\"}\n");
	put("Workflows/u/Main.json", "[{\"title\": \"Ask\", \"endpointName\": "
	    "\"Good\", \"preset\": \"Warm\"}]\n");
}

static int
rm_cb(const char *p, const struct stat *st, int f, struct FTW *w)
{
	return remove(p);
}

static void
teardown(void)
{
	nftw(dir, rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	buf_free(&got);
}

static void
collect(const char *line, bool warning)
{
	if (warning)
		buf_adds(&got, "warning: ");
	else
		nproblems++;
	buf_adds(&got, line);
	buf_addc(&got, '\n');
}

static int
run_user(const char *confdir, const char *user)
{
	char		 d[PATH_MAX], u[64];
	struct gw_conf	 c;

	snprintf(d, sizeof(d), "%s", confdir);
	snprintf(u, sizeof(u), "%s", user);
	memset(&c, 0, sizeof(c));
	c.c_config_dir = d;
	c.c_user = c.c_users[0] = u;
	return confcheck_run(&c, collect);
}

/* want with each '@' standing for dir, NUL-terminated in *exp. */
static void
expand(struct buf *exp, const char *want)
{
	const char	*p;

	for (p = want; *p != '\0'; p++)
		if (*p == '@')
			buf_adds(exp, dir);
		else
			buf_addc(exp, *p);
	buf_addc(exp, '\0');
}

/* Check user u in dir: it returns rc and reports the lines of want. */
static void
assert_check(int rc, const char *want)
{
	struct buf	 exp = BUF_INIT;

	expand(&exp, want);
	buf_reset(&got);
	nproblems = 0;
	ck_assert_int_eq(run_user(dir, "u"), rc);
	buf_addc(&got, '\0');
	ck_assert_str_eq(got.b_data, exp.b_data);
	buf_free(&exp);
}

START_TEST(good_config)
{
	assert_check(0, "");
	ck_assert_int_eq(nproblems, 0);
}
END_TEST

/* Without a report function: stderr, warnings marked, then a summary. */
START_TEST(summary_line)
{
	struct buf	 exp = BUF_INIT;
	char		 path[128], text[4096], u[] = "u";
	struct gw_conf	 c;
	FILE		*f;
	size_t		 n;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	ck_assert_ptr_nonnull(freopen(path, "w", stderr));
	memset(&c, 0, sizeof(c));
	c.c_config_dir = dir;
	c.c_user = c.c_users[0] = u;
	/* The user, Main, Good, Chat, and Warm for Good. */
	ck_assert_int_eq(confcheck_run(&c, NULL), 0);
	put("Workflows/u/Main.json", "[{\"type\": \"WebFetch\"}]\n");
	ck_assert_int_eq(confcheck_run(&c, NULL), 0);
	put("Workflows/u/Main.json", "[{\"endpointName\": \"Nope\"}]\n");
	ck_assert_int_eq(confcheck_run(&c, NULL), EX_CONFIG);
	fflush(stderr);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	expand(&exp, "configuration OK (5 files checked for user 'u')\n"
	    "warning: @/Workflows/u/Main.json:1:3: node 1 (WebFetch) is not "
	    "run by this version of Sluice; requests reaching it get HTTP "
	    "501\n"
	    "configuration OK (2 files checked for user 'u', 1 warning)\n"
	    "@/Workflows/u/Main.json:1:3: node 1: Endpoints/Nope.json: no such "
	    "endpoint 'Nope' (looked in @/Endpoints/Nope.json)\n"
	    "1 problem in @\n");
	ck_assert_str_eq(text, exp.b_data);
	buf_free(&exp);
}
END_TEST

START_TEST(nested_missing_endpoint)
{
	put("Workflows/u/Main.json", "[{\"type\": \"CustomWorkflow\", "
	    "\"workflowName\": \"Child\"},\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"{var}\"}]\n");
	put("Workflows/u/Child.json", "{\"nodes\": [{\"title\": \"Ask\", "
	    "\"endpointName\": \"Nope\"}]}\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Child.json:1:29: node 1 "
	    "\"Ask\": Endpoints/Nope.json: no such endpoint 'Nope' (looked in "
	    "@/Endpoints/Nope.json)\n");
}
END_TEST

START_TEST(conditional_missing_branch)
{
	put("Workflows/u/Main.json", "[{\"title\": \"Route\", \"type\": "
	    "\"ConditionalCustomWorkflow\", \"conditionalKey\": "
	    "\"{agent1Output}\",\n \"conditionalWorkflows\": {\"Yes\": "
	    "\"Child\", \"No\": \"Gone\", \"Maybe\": \"{pick}\", \"Never\": "
	    "\"\"}}]\n");
	put("Workflows/u/Child.json", "[{\"type\": \"StaticResponse\", "
	    "\"content\": \"hi\"}]\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Main.json:2:43: node 1 "
	    "\"Route\", branch 'No': Workflows/u/Gone.json: no such workflow "
	    "'Gone' (looked in @/Workflows/u/Gone.json)\n");
}
END_TEST

START_TEST(workflow_cycles)
{
	/* Main calls itself, and A and B call each other twice over. */
	put("Workflows/u/Main.json", "[{\"type\": \"CustomWorkflow\", "
	    "\"workflowName\": \"Main\"},\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"A\"}]\n");
	put("Workflows/u/A.json", "[{\"type\": \"CustomWorkflow\", "
	    "\"workflowName\": \"B\"}]\n");
	put("Workflows/u/B.json", "[{\"type\": \"CustomWorkflow\", "
	    "\"workflowName\": \"A\"},\n {\"type\": \"CustomWorkflow\", "
	    "\"workflowName\": \"A\"}]\n");
	assert_check(EX_CONFIG,
	    "@/Workflows/u/Main.json:1:29: node 1: workflow cycle: Main -> "
	    "Main\n"
	    "@/Workflows/u/B.json:1:29: node 1: workflow cycle: A -> B -> A\n");
}
END_TEST

static void
routing_user(void)
{
	put("Users/u.json", "{" USER_BASE ",\n \"routingConfig\": \"R\", "
	    "\"categorizationWorkflow\": \"Cat\"}\n");
	put("Routing/R.json", "{\"CODE\": {\"description\": \"code\", "
	    "\"workflow\": \"Main\"},\n \"CHAT\": {\"description\": \"chat\", "
	    "\"workflow\": \"Talk\"}}\n");
	put("Workflows/u/Cat.json", "[{\"endpointName\": \"Good\"}]\n");
}

START_TEST(routing_missing_category)
{
	routing_user();
	put("Workflows/u/_DefaultWorkflow.json", "[{\"endpointName\": "
	    "\"Good\"}]\n");
	assert_check(EX_CONFIG, "@/Routing/R.json:2:34: category 'CHAT': "
	    "Workflows/u/Talk.json: no such workflow 'Talk' (looked in "
	    "@/Workflows/u/Talk.json)\n");
}
END_TEST

START_TEST(routing_no_default)
{
	routing_user();
	put("Workflows/u/Talk.json", "[{\"endpointName\": \"Good\"}]\n");
	assert_check(0, "warning: @/Users/u.json:2:2: routingConfig: "
	    "Workflows/u/_DefaultWorkflow.json: no such workflow (looked in "
	    "@/Workflows/u/_DefaultWorkflow.json): a categoriser answer that "
	    "names no category will fail\n");
	ck_assert_int_eq(nproblems, 0);
}
END_TEST

START_TEST(backup_chain)
{
	/* Good -> B1 -> B2 -> B1; B2 gets B1's backupPresetName. */
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Chat\", \"backupEndpointName\": "
	    "\"B1\"}\n");
	put("Endpoints/B1.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Chat\",\n \"backupEndpointName\": "
	    "\"B2\", \"backupPresetName\": \"Cold\"}\n");
	put("Endpoints/B2.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Chat\",\n \"backupEndpointName\": "
	    "\"B1\"}\n");
	assert_check(EX_CONFIG, "@/Endpoints/B1.json:2:30: backupPresetName: "
	    "Presets/Chat/Cold.json: no such preset 'Cold' (looked in "
	    "@/Presets/Chat/u/Cold.json and @/Presets/Chat/Cold.json) (for "
	    "backup endpoint 'B2')\n"
	    "@/Endpoints/B2.json:2:2: backupEndpointName: failover cycle: "
	    "B1 -> B2 -> B1\n");
}
END_TEST

START_TEST(backup_missing)
{
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Chat\", \"backupEndpointName\": "
	    "\"Gone\"}\n");
	assert_check(EX_CONFIG, "@/Endpoints/Good.json:1:69: "
	    "backupEndpointName: Endpoints/Gone.json: no such endpoint 'Gone' "
	    "(looked in @/Endpoints/Gone.json)\n");
}
END_TEST

START_TEST(completion_template)
{
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Comp\", \"promptTemplate\": "
	    "\"nope\"}\n");
	assert_check(EX_CONFIG, "@/Endpoints/Good.json:1:69: promptTemplate: "
	    "PromptTemplates/nope.json: no such prompt template 'nope' (looked "
	    "in @/PromptTemplates/nope.json)\n");
}
END_TEST

START_TEST(user_template)
{
	/* Null promptTemplate: the user's, which must exist. */
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Comp\", \"promptTemplate\": null}\n");
	assert_check(0, "warning: @/Endpoints/Good.json:1:69: api type 'Comp' "
	    "sends one prompt string, but neither \"promptTemplate\" nor the "
	    "user's \"chatPromptTemplateName\" names a prompt template: "
	    "prompts go without role markers\n");
	put("Users/u.json", "{" USER_BASE ", \"customWorkflowOverride\": true, "
	    "\"customWorkflow\": \"Main\",\n \"chatPromptTemplateName\": "
	    "\"chatml\"}\n");
	assert_check(0, "");
	put("PromptTemplates/chatml.json", "{\"promptTemplateUserPrefix\": "
	    "3}\n");
	assert_check(EX_CONFIG, "@/Users/u.json:2:2: chatPromptTemplateName: "
	    "@/PromptTemplates/chatml.json:1:2: 'promptTemplateUserPrefix' "
	    "must be a string, not a number\n");
}
END_TEST

START_TEST(unsupported_types)
{
	put("Workflows/u/Main.json", "[{\"title\": \"Mem\", \"type\": "
	    "\"QualityMemory\"},\n"
	    " {\"type\": \"Bogus\", \"endpointName\": \"Good\"},\n"
	    " {\"endpointName\": \"Good\", \"jinja2\": true},\n"
	    " {\"endpointName\": \"Good\", \"jinja2\": false},\n"
	    " {\"type\": \"VectorMemorySearch\"}]\n");
	assert_check(0, "warning: @/Workflows/u/Main.json:1:19: node 1 \"Mem\" "
	    "(QualityMemory) is not run by this version of Sluice; requests "
	    "reaching it get HTTP 501\n"
	    "warning: @/Workflows/u/Main.json:2:3: node 2: unknown node type "
	    "'Bogus': WilmerAI runs it as a Standard node, and so does "
	    "Sluice\n"
	    "warning: @/Workflows/u/Main.json:3:27: node 3: \"jinja2\" prompt "
	    "templates are not supported by Sluice; requests reaching this "
	    "node get HTTP 501\n"
	    "warning: @/Workflows/u/Main.json:5:3: node 5 "
	    "(VectorMemorySearch) is not run by this version of Sluice; "
	    "requests reaching it get HTTP 501\n");
	ck_assert_int_eq(nproblems, 0);
}
END_TEST

START_TEST(standard_needs_endpoint)
{
	put("Workflows/u/Main.json", "[{\"title\": \"Ask\", \"prompt\": "
	    "\"x\"},\n {\"endpointName\": \"{ep}\", \"preset\": \"Nope\"}]\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Main.json:1:2: node 1 \"Ask\": "
	    "a Standard node needs an \"endpointName\"\n");
}
END_TEST

START_TEST(node_types)
{
	const struct node_type_info	*ti;

	ti = nodetype_find("Standard");
	ck_assert_ptr_nonnull(ti);
	ck_assert(ti->ti_runs);
	ck_assert(nodetype_find("PythonModule")->ti_runs);
	ck_assert(nodetype_find("DelimitedChunker")->ti_runs);
	ck_assert(!nodetype_find("QualityMemory")->ti_runs);
	ck_assert(!nodetype_find("chatSummarySummarizer")->ti_runs);
	ck_assert(!nodetype_find("MCPToolCall")->ti_runs);
	ck_assert_ptr_null(nodetype_find("standard"));
	ck_assert_ptr_null(nodetype_find("Bogus"));
	ck_assert_ptr_null(nodetype_find(NULL));
}
END_TEST

/* ---- WilmerAI's shipped configs ------------------------------------ */

static const char *
shipped_root(char out[PATH_MAX])
{
	const char	*src = getenv("SLUICE_SRC");
	struct stat	 st;

	if (src != NULL) {
		snprintf(out, PATH_MAX, "%s/../shared/reference/wilmer-configs",
		    src);
		if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
			return out;
	}
	printf("check_confcheck: WilmerAI's shipped configs not found "
	    "(SLUICE_SRC=%s); skipping\n", src != NULL ? src : "unset");
	return NULL;
}

START_TEST(shipped_users)
{
	static const char *const users[] = { "chat-ui",
	    "_simple_router_no_memory", "chat-ui-cot" };
	char		 root[PATH_MAX];
	size_t		 i;
	int		 rc;

	if (shipped_root(root) == NULL)
		return;
	for (i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		buf_reset(&got);
		nproblems = 0;
		rc = run_user(root, users[i]);
		buf_addc(&got, '\0');
		printf("check_confcheck: %s: %d problems\n%s", users[i],
		    nproblems, got.b_data);
		ck_assert_msg(rc == 0 && nproblems == 0, "%s:\n%s", users[i],
		    got.b_data);
	}
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("confcheck");
	TCase	*tc;

	tc = tcase_create("references");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, good_config);
	tcase_add_test(tc, summary_line);
	tcase_add_test(tc, nested_missing_endpoint);
	tcase_add_test(tc, conditional_missing_branch);
	tcase_add_test(tc, standard_needs_endpoint);
	suite_add_tcase(s, tc);

	tc = tcase_create("cycles");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, workflow_cycles);
	tcase_add_test(tc, backup_chain);
	tcase_add_test(tc, backup_missing);
	suite_add_tcase(s, tc);

	tc = tcase_create("routing");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, routing_missing_category);
	tcase_add_test(tc, routing_no_default);
	suite_add_tcase(s, tc);

	tc = tcase_create("templates");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, completion_template);
	tcase_add_test(tc, user_template);
	suite_add_tcase(s, tc);

	tc = tcase_create("node_types");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, unsupported_types);
	tcase_add_test(tc, node_types);
	suite_add_tcase(s, tc);

	tc = tcase_create("shipped");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, shipped_users);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return check_main(suite());
}
