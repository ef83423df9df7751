/* check_confcheck.c - --check-config: what it follows, what it reports, problems against warnings. */
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/log.h"
#include "../../common/nodetypes.h"
#include "../../gateway/confcheck.h"
#include "../../gateway/confcheck_int.h"
#include "../../gateway/gwconf.h"
#include "../testmain.h"

#define NELEMS(a)	(sizeof(a) / sizeof((a)[0]))

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

/* The whole of path into b (reset first), NUL-terminated. */
static void
slurp(const char *path, struct buf *b)
{
	char	 chunk[4096];
	size_t	 n;
	FILE	*f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	buf_reset(b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(b, chunk, n);
	buf_adds(b, "");
	fclose(f);
}

/* Replace the first from with to in root/rel. */
static void
replace_in(const char *root, const char *rel, const char *from,
    const char *to)
{
	struct buf	 b = BUF_INIT;
	char		 path[PATH_MAX], *p;
	FILE		*f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	slurp(path, &b);
	ck_assert_msg((p = strstr(b.b_data, from)) != NULL, "%s: no %s", path,
	    from);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fwrite(b.b_data, 1, (size_t)(p - b.b_data), f);
	fputs(to, f);
	fputs(p + strlen(from), f);
	fclose(f);
	buf_free(&b);
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
	put("Workflows/u/Main.json", "[{\"type\": \"Bogus\", "
	    "\"endpointName\": \"Good\"}]\n");
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
	    "warning: @/Workflows/u/Main.json:1:3: node 1: unknown node type "
	    "'Bogus': WilmerAI runs it as a Standard node, and so does "
	    "Sluice\n"
	    "configuration OK (4 files checked for user 'u', 1 warning)\n"
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

/* The workflows run per chunk are walked too: the chunk processor's
 * (its chunk is agent1Input, scoped_variables follow) and the RAG
 * node's fileMemoryWorkflowName. */
START_TEST(per_chunk_workflows)
{
	put("Workflows/u/Main.json", "[{\"type\": "
	    "\"ConversationChunkProcessor\", \"id\": \"ev\", "
	    "\"workflowName\": \"Chunk\", \"cursorDirectory\": \"/tmp\", "
	    "\"scoped_variables\": [\"Nope\"]},\n {\"type\": "
	    "\"SlowButQualityRAG\", \"ragTarget\": \"t\", \"ragType\": \"x\", "
	    "\"endpointName\": \"Good\", \"fileMemoryWorkflowName\": "
	    "\"Gone\"}]\n");
	put("Workflows/u/Chunk.json", "[{\"endpointName\": "
	    "\"{agent2Input}\", \"prompt\": \"{agent1Input}\"}]\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Chunk.json:1:3: node 1 "
	    "(endpointName '{agent2Input}' is 'Nope'): Endpoints/Nope.json: no "
	    "such endpoint 'Nope' (looked in @/Endpoints/Nope.json)\n"
	    "@/Workflows/u/Main.json:2:90: node 2: Workflows/u/Gone.json: no "
	    "such workflow 'Gone' (looked in @/Workflows/u/Gone.json)\n");
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
	put("Workflows/u/Main.json", "[{\"title\": \"Wiki\", \"type\": "
	    "\"StaticResponse\"},\n"
	    " {\"type\": \"Bogus\", \"endpointName\": \"Good\"},\n"
	    " {\"endpointName\": \"Good\", \"jinja2\": true},\n"
	    " {\"endpointName\": \"Good\", \"jinja2\": false},\n"
	    " {\"type\": \"ContextCompactor\"}]\n");
	assert_check(0, "warning: @/Workflows/u/Main.json:2:3: node 2: unknown node type "
	    "'Bogus': WilmerAI runs it as a Standard node, and so does "
	    "Sluice\n");
	ck_assert_int_eq(nproblems, 0);
}
END_TEST

START_TEST(standard_needs_endpoint)
{
	put("Workflows/u/Main.json", "[{\"title\": \"Ask\", \"prompt\": "
	    "\"x\"},\n {\"endpointName\": \"{ep}\", \"preset\": \"Nope\"}]\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Main.json:1:2: node 1 \"Ask\": "
	    "a Standard node needs an \"endpointName\"\n"
	    "warning: @/Workflows/u/Main.json:2:3: node 2: endpointName "
	    "'{ep}' cannot be resolved ahead of time (there is no variable "
	    "{ep}): its endpoint is not checked\n");
}
END_TEST

/* ---- {variables} in endpoint and preset names --------------------- */

/* Child's endpoint and preset are its first two inputs: what Main's
 * scoped_variables make of its own keys is checked like a literal. */
START_TEST(scoped_inputs_resolved)
{
	put("Workflows/u/Main.json", "{\"EP\": \"Gone\", \"PR\": \"Warm\", "
	    "\"nodes\": [\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"Child\", "
	    "\"scoped_variables\": [\"{EP}\", \"{PR}\"]},\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"Child\", "
	    "\"scoped_variables\": [\"Good\", \"Cold\"]},\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"Child\", "
	    "\"scoped_variables\": [\"Good\", \"Warm\"]},\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"Child\", "
	    "\"scoped_variables\": [\"\", \"Warm\"]}]}\n");
	put("Workflows/u/Child.json", "[{\"title\": \"Ask\",\n"
	    " \"endpointName\": \"{agent1Input}\",\n"
	    " \"preset\": \"{agent2Input}\"}]\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Child.json:2:2: node 1 \"Ask\" "
	    "(endpointName '{agent1Input}' is 'Gone'): Endpoints/Gone.json: "
	    "no such endpoint 'Gone' (looked in @/Endpoints/Gone.json)\n"
	    "@/Workflows/u/Child.json:3:2: node 1 \"Ask\" (preset "
	    "'{agent2Input}' is 'Cold'): Presets/Chat/Cold.json: no such "
	    "preset 'Cold' (looked in @/Presets/Chat/u/Cold.json and "
	    "@/Presets/Chat/Cold.json)\n"
	    "@/Workflows/u/Child.json:2:2: node 1 \"Ask\" (endpointName "
	    "'{agent1Input}' is ''): no endpoint: requests reaching this node "
	    "fail\n");
}
END_TEST

/* A broken endpoint file reached only through a variable is found, at
 * its own position. */
START_TEST(variable_reaches_broken_endpoint)
{
	put("Workflows/u/Main.json", "{\"EP\": \"{Inner}\", \"Inner\": "
	    "\"Good\", \"nodes\": [{\"title\": \"Ask\", \"endpointName\": "
	    "\"{EP}\"}]}\n");
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\",\n"
	    " \"apiTypeConfigFileName\": \"Chat\"\n \"promptTemplate\": "
	    "null}\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Main.json:1:63: node 1 \"Ask\" "
	    "(endpointName '{EP}' is 'Good'): @/Endpoints/Good.json:3:17: "
	    "'}' expected near '\"promptTemplate\"'\n");
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\",\n"
	    " \"apiTypeConfigFileName\": \"Chat\"}\n");
	put("ApiTypes/Chat.json", "{\"type\": \"openAIChatCompletion\",\n"
	    " \"presetType\": 3}\n");
	assert_check(EX_CONFIG, "@/Endpoints/Good.json:2:2: "
	    "apiTypeConfigFileName: @/ApiTypes/Chat.json:2:2: 'presetType' "
	    "must be a string, not a number\n");
}
END_TEST

/* What cannot be known ahead of time is a warning naming the node and
 * the reason, once per node. */
START_TEST(unresolvable_names_warn)
{
	put("Users/u.json", "{" USER_BASE ", \"customWorkflowOverride\": true, "
	    "\"customWorkflow\": \"Main\",\n \"userWideWorkflowVariables\": "
	    "{\"uw\": \"Good\"}}\n");
	put("Workflows/u/Main.json", "[\n"
	    " {\"title\": \"Top\", \"endpointName\": \"{agent1Input}\"},\n"
	    " {\"title\": \"Wide\", \"endpointName\": \"{uw}\"},\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"Child\", "
	    "\"scoped_variables\": [\"{uw}\", \"{chat_user_prompt_last_one}"
	    "\", \"{agent1Output}\"]},\n"
	    " {\"type\": \"CustomWorkflow\", \"workflowName\": \"Child\", "
	    "\"scoped_variables\": [\"{uw}\", \"{chat_user_prompt_last_one}"
	    "\", \"{agent1Output}\"]}]\n");
	put("Workflows/u/Child.json", "[\n"
	    " {\"title\": \"A\", \"endpointName\": \"{agent1Input}\"},\n"
	    " {\"title\": \"B\", \"endpointName\": \"{agent2Input}\"},\n"
	    " {\"title\": \"C\", \"endpointName\": \"Good\", \"preset\": "
	    "\"{agent3Input}\"},\n"
	    " {\"title\": \"D\", \"endpointName\": \"{agent4Input}\"}]\n");
	assert_check(0, "warning: @/Workflows/u/Main.json:2:19: node 1 "
	    "\"Top\": endpointName '{agent1Input}' cannot be resolved ahead of "
	    "time ({agent1Input} is not set: the workflow runs with no "
	    "scoped_variables here): its endpoint is not checked\n"
	    "warning: @/Workflows/u/Main.json:3:20: node 2 \"Wide\": "
	    "endpointName '{uw}' cannot be resolved ahead of time ({uw} is "
	    "not seen here: endpointName and preset see only the workflow's "
	    "top-level keys and agentNInput): its endpoint is not checked\n"
	    "warning: @/Workflows/u/Child.json:3:17: node 2 \"B\": endpointName"
	    " '{agent2Input}' cannot be resolved ahead of time ({agent2Input} "
	    "is the caller's scoped_variables entry 2 "
	    "({chat_user_prompt_last_one} is set when a request runs)): its "
	    "endpoint is not checked\n"
	    "warning: @/Workflows/u/Child.json:4:41: node 3 \"C\": preset "
	    "'{agent3Input}' cannot be resolved ahead of time ({agent3Input} "
	    "is the caller's scoped_variables entry 3 ({agent1Output} is a "
	    "node's output)): its preset file is not checked\n"
	    "warning: @/Workflows/u/Child.json:5:17: node 4 \"D\": endpointName"
	    " '{agent4Input}' cannot be resolved ahead of time ({agent4Input} "
	    "is not set: the caller passes 3 scoped_variables): its endpoint "
	    "is not checked\n");
	ck_assert_int_eq(nproblems, 0);
}
END_TEST

/* Three levels: an input passed on as an input; "{{" is a brace. */
START_TEST(inputs_pass_through_levels)
{
	put("Workflows/u/Main.json", "{\"M\": \"Gone\", \"nodes\": "
	    "[{\"type\": \"CustomWorkflow\", \"workflowName\": \"Mid\", "
	    "\"scoped_variables\": [\"{M}\", \"x{{y}}\"]}]}\n");
	put("Workflows/u/Mid.json", "[{\"type\": \"ConditionalCustomWorkflow\","
	    " \"conditionalKey\": \"{agent1Output}\", \"conditionalWorkflows\":"
	    " {\"a\": \"Leaf\"}, \"scoped_variables\": [\"{agent2Input}\", "
	    "\"{agent1Input}\"]}]\n");
	put("Workflows/u/Leaf.json", "[{\"endpointName\": \"{agent2Input}\", "
	    "\"preset\": \"{agent1Input}\"}]\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Leaf.json:1:3: node 1 "
	    "(endpointName '{agent2Input}' is 'Gone'): Endpoints/Gone.json: "
	    "no such endpoint 'Gone' (looked in @/Endpoints/Gone.json)\n");
	put("Workflows/u/Main.json", "{\"M\": \"Good\", \"nodes\": "
	    "[{\"type\": \"CustomWorkflow\", \"workflowName\": \"Mid\", "
	    "\"scoped_variables\": [\"{M}\", \"x{{y}}\"]}]}\n");
	assert_check(EX_CONFIG, "@/Workflows/u/Leaf.json:1:36: node 1 (preset "
	    "'{agent1Input}' is 'x{y}'): Presets/Chat/x{y}.json: no such "
	    "preset 'x{y}' (looked in @/Presets/Chat/u/x{y}.json and "
	    "@/Presets/Chat/x{y}.json)\n");
}
END_TEST

/* Shared workflows the user does not list are still selectable by the
 * model field: what is wrong there is a warning. */
START_TEST(unlisted_shared_workflows_warn)
{
	put("Workflows/_shared/quick/_DefaultWorkflow.json", "[{\"title\": "
	    "\"Q\", \"endpointName\": \"Gone\"}]\n");
	assert_check(0, "warning: @/Workflows/_shared/quick/_DefaultWorkflow."
	    "json:1:17: node 1 \"Q\": Endpoints/Gone.json: no such endpoint "
	    "'Gone' (looked in @/Endpoints/Gone.json) (via shared workflow "
	    "'_shared/quick', unlisted as \"allowSharedWorkflows\" is false "
	    "but selectable through the model field)\n");
	put("Users/u.json", "{" USER_BASE ", \"customWorkflowOverride\": true, "
	    "\"customWorkflow\": \"Main\", \"allowSharedWorkflows\": true}\n");
	assert_check(EX_CONFIG, "@/Workflows/_shared/quick/_DefaultWorkflow."
	    "json:1:17: node 1 \"Q\": Endpoints/Gone.json: no such endpoint "
	    "'Gone' (looked in @/Endpoints/Gone.json)\n");
}
END_TEST

/* Users/_current-user.json names a user; it is not one. */
START_TEST(current_user_file_is_not_a_user)
{
	put("Users/_current-user.json", "{\"currentUser\": \"u\"}\n");
	buf_reset(&got);
	ck_assert_int_eq(run_user(dir, "_current-user"), EX_CONFIG);
	buf_addc(&got, '\0');
	ck_assert_ptr_nonnull(strstr(got.b_data, "/Users/_current-user.json:"
	    "1:2: this is the file that names the current user, not a user "
	    "configuration: use --user 'u', or leave --user out to run as "
	    "it\n"));
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
	ck_assert(nodetype_find("OfflineWikiApiFullArticle")->ti_runs);
	ck_assert(nodetype_find("OfflineWikiApiPartialArticle")->ti_runs);
	ck_assert(nodetype_find("ContextCompactor")->ti_runs);
	ck_assert(nodetype_find("MCPToolCall")->ti_runs);
	ck_assert(nodetype_find("WebFetch")->ti_runs);
	ck_assert_ptr_null(nodetype_find("standard"));
	ck_assert_ptr_null(nodetype_find("Bogus"));
	ck_assert_ptr_null(nodetype_find(NULL));
}
END_TEST

/* ---- keys (issue 19 item 4, "nothing silent") ---------------------- */

/* A key WilmerAI reads that Sluice does not, and one neither knows,
 * each with its file:line:column; keys read by neither stay quiet, and
 * so does a left-out key set to its empty default. */
/* A9.1: an embeddings endpoint named for generation is a problem with
 * WilmerAI's message; an embeddingEndpointName (a VectorMemorySearch
 * node's, the memory settings') that is missing or not an embeddings
 * type is a warning, as the worker then searches by keywords. */
START_TEST(a9_1_embeddings_endpoints)
{
	put("ApiTypes/Emb.json", "{\"type\": \"openAIEmbeddings\"}\n");
	put("Endpoints/Vec.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Emb\"}\n");
	put("Users/u.json", "{" USER_BASE ", \"customWorkflowOverride\": true, "
	    "\"customWorkflow\": \"Main\", "
	    "\"discussionIdMemoryFileWorkflowSettings\": \"Mem\", "
	    "\"embeddingEndpointName\": \"Gone\"}\n");
	put("Workflows/u/Mem.json", "{\"embeddingEndpointName\": \"Nope\"}\n");
	put("Workflows/u/Main.json", "[{\"title\": \"Ask\", \"endpointName\": "
	    "\"Vec\"},\n {\"type\": \"VectorMemorySearch\", "
	    "\"embeddingEndpointName\": \"Good\"},\n {\"type\": "
	    "\"VectorMemorySearch\", \"embeddingEndpointName\": \"Vec\"}]\n");
	assert_check(EX_CONFIG, "warning: @/Workflows/u/Mem.json:1:2: "
	    "Endpoints/Nope.json: no such endpoint 'Nope' (looked in "
	    "@/Endpoints/Nope.json): memories are not embedded\n"
	    "warning: @/Users/u.json:1:201: embeddingEndpointName: "
	    "Endpoints/Gone.json: no such endpoint 'Gone' (looked in "
	    "@/Endpoints/Gone.json): /v1/embeddings and /api/embed answer "
	    "HTTP 500\n"
	    "@/Workflows/u/Main.json:1:19: node 1 \"Ask\": Endpoint 'Vec' "
	    "uses embeddings API type 'openAIEmbeddings' and cannot be used "
	    "for text generation. Reference it from an embeddings setting "
	    "(such as 'embeddingEndpointName') instead.\n"
	    "warning: @/Workflows/u/Main.json:2:33: node 2: "
	    "Endpoint 'Good' has API type 'openAIChatCompletion', which is not "
	    "an embeddings type. Use an endpoint whose ApiType is "
	    "'openAIEmbeddings' or 'ollamaEmbeddings'.\n");
}
END_TEST

START_TEST(silent_unimplemented_and_unknown)
{
	put("Users/u.json", "{" USER_BASE ",\n"
	    " \"customWorkflowOverride\": true, \"customWorkflow\": \"Main\",\n"
	    " \"sqlLiteDirectory\": \"db\", \"redactLogOutput\": true,\n"
	    " \"verboseLogging\": true, \"discussionDirectory\": \"\",\n"
	    " \"routingconfig\": \"x\"}\n");
	put("Workflows/u/Main.json", "{\"persona\": \"any key is a variable\",\n"
	    " \"nodes\": [{\"title\": \"Ask\", \"endpointName\": \"Good\",\n"
	    "  \"preset\": \"Warm\", \"maxContextTokenSize\": 4096,\n"
	    "  \"promtp\": \"hi\", \"displayOnlyComment\": \"quiet\"}]}\n");
	assert_check(0, "warning: @/Users/u.json:3:2: key 'sqlLiteDirectory' "
	    "is not implemented by Sluice; ignored (Sluice keeps discussions "
	    "and locks in its database (state_dir/sluice.db); bring "
	    "WilmerAI's files over with --import-wilmer)\n"
	    "warning: @/Users/u.json:5:2: unknown key 'routingconfig' "
	    "(WilmerAI ignores it too; a typo?)\n"
	    "warning: @/Workflows/u/Main.json:4:3: node 1 \"Ask\": unknown key "
	    "'promtp' (WilmerAI ignores it too; a typo?)\n");
}
END_TEST

/* Every kind of file a user reaches has its keys checked: endpoint,
 * api type, prompt template, routing category, memory and compactor
 * settings, MCP server, and the current-user file. */
START_TEST(silent_every_kind)
{
	put("Users/u.json", "{" USER_BASE ", \"routingConfig\": \"R\", "
	    "\"categorizationWorkflow\": \"Main\", "
	    "\"chatPromptTemplateName\": \"chatml\", "
	    "\"discussionIdMemoryFileWorkflowSettings\": \"Mem\", "
	    "\"contextCompactorSettingsFile\": \"Comp\"}\n");
	put("Users/_current-user.json", "{\"currentUser\": \"u\", \"x1\": 1}\n");
	put("Routing/R.json", "{\"A\": {\"workflow\": \"Main\", "
	    "\"descripton\": \"d\"}}\n");
	put("Workflows/u/_DefaultWorkflow.json", "[{\"type\": \"MCPToolCall\", "
	    "\"server\": \"S\", \"tool\": \"t\"}]\n");
	put("Workflows/u/Mem.json", "{\"chunkEstimatedTokenSize\": 1, "
	    "\"x2\": 1}\n");
	put("Workflows/u/Comp.json", "{\"oldContextTokens\": 1, \"x3\": 1}\n");
	put("MCPServers/S.json", "{\"transport\": \"stdio\", \"x4\": 1}\n");
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\", "
	    "\"apiTypeConfigFileName\": \"Chat\", \"promptTemplate\": null, "
	    "\"x5\": 1}\n");
	put("ApiTypes/Chat.json", "{\"type\": \"openAIChatCompletion\", "
	    "\"presetType\": \"Chat\", \"x6\": 1}\n");
	put("PromptTemplates/chatml.json", "{\"promptTemplateUserPrefix\": "
	    "\"\", \"x7\": 1}\n");
	put("Presets/Chat/Warm.json", "{\"temperature\": 0.7, \"any\": 1}\n");
	assert_check(0,
	    "warning: @/Users/_current-user.json:1:22: unknown key 'x1' "
	    "(WilmerAI ignores it too; a typo?)\n"
	    "warning: @/Workflows/u/Mem.json:1:32: unknown key 'x2' "
	    "(WilmerAI ignores it too; a typo?)\n"
	    "warning: @/Workflows/u/Comp.json:1:25: unknown key 'x3' "
	    "(WilmerAI ignores it too; a typo?)\n"
	    "warning: @/PromptTemplates/chatml.json:1:34: unknown key 'x7' "
	    "(WilmerAI ignores it too; a typo?)\n"
	    "warning: @/Endpoints/Good.json:1:93: unknown key 'x5' "
	    "(WilmerAI ignores it too; a typo?)\n"
	    "warning: @/ApiTypes/Chat.json:1:56: unknown key 'x6' "
	    "(WilmerAI ignores it too; a typo?)\n"
	    "warning: @/Routing/R.json:1:28: category 'A': unknown key "
	    "'descripton' (WilmerAI ignores it too; a typo?)\n"
	    "warning: @/MCPServers/S.json:1:24: unknown key 'x4' "
	    "(WilmerAI ignores it too; a typo?)\n");
}
END_TEST

/* A file by its folder: what --check-config says about it alone. */
START_TEST(silent_file_by_folder)
{
	put("Workflows/u/W.json", "[{\"type\": \"Standard\", \"x\": 1}]\n");
	put("Presets/Chat/P.json", "{\"anything\": 1}\n");
	buf_reset(&got);
	ck_assert_int_eq(confcheck_file(dir, "Workflows/u/W.json", collect), 1);
	ck_assert_int_eq(confcheck_file(dir, "Presets/Chat/P.json", collect), 0);
	ck_assert_int_eq(confcheck_file(dir, "Users/none.json", collect), -1);
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

/* What --check-config says about each user file WilmerAI ships: no
 * problem, and these warnings (at least n_must of them contain must[i];
 * "any" lists the only kinds allowed besides). Every endpoint name with
 * variables resolves. The _example_* users run memory nodes that are
 * being implemented: only the kinds of their warnings are fixed. */
struct shipped_user {
	const char	*su_name;
	int		 su_nwarn;		/* -1: any number */
	const char	*su_must[3];
	int		 su_times[3];
};

#define NOT_RUN		"is not run by this version of Sluice"
#define UNLISTED	"(via shared workflow '_shared/"
#define NO_ROUTE	"neither \"customWorkflowOverride\" nor \"routingConfig\""

static const struct shipped_user shipped_users_tab[] = {
	{ "chat-ui", 1, { NO_ROUTE }, { 1 } },
	{ "chat-ui-cot", 1, { NO_ROUTE }, { 1 } },
	{ "chat-ui-discussionid", 1, { NO_ROUTE }, { 1 } },
	{ "chat-ui-cot-discussionid", 1, { NO_ROUTE }, { 1 } },
	{ "_simple_router_no_memory", 0, { NULL }, { 0 } },
	{ "_wikipedia_quick_workflow", 5, { UNLISTED }, { 5 } },
	{ "_wikipedia_multi_step_workflow", 5, { UNLISTED }, { 5 } },
	{ "isevendays-openwebui-norouting-general-offline-mcp", 3,
	    { UNLISTED }, { 3 } },
	{ "_example_assistant_with_vector_memory", -1, { UNLISTED }, { 4 } },
	{ "_example_game_bot_with_file_memory", -1, { UNLISTED }, { 4 } },
};

static int
count_lines_with(const char *text, const char *needle)
{
	const char	*p;
	int		 n = 0;

	for (p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

static void
check_shipped_user(const char *root, const struct shipped_user *su)
{
	const char	*line, *nl;
	int		 rc, nwarn, i;

	buf_reset(&got);
	nproblems = 0;
	rc = run_user(root, su->su_name);
	buf_addc(&got, '\0');
	printf("check_confcheck: %s:\n%s", su->su_name, got.b_data);
	ck_assert_msg(rc == 0 && nproblems == 0, "%s:\n%s", su->su_name,
	    got.b_data);
	nwarn = count_lines_with(got.b_data, "warning: ");
	ck_assert_msg(su->su_nwarn == -1 || nwarn == su->su_nwarn,
	    "%s: %d warnings:\n%s", su->su_name, nwarn, got.b_data);
	for (i = 0; i < 3 && su->su_must[i] != NULL; i++)
		ck_assert_msg(count_lines_with(got.b_data, su->su_must[i]) ==
		    su->su_times[i], "%s: not %d times '%s':\n%s", su->su_name,
		    su->su_times[i], su->su_must[i], got.b_data);
	ck_assert_msg(strstr(got.b_data, "cannot be resolved") == NULL,
	    "%s:\n%s", su->su_name, got.b_data);
	for (line = got.b_data; *line != '\0'; line = nl + 1) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		if (su->su_nwarn == -1)
			ck_assert_msg(memmem(line, (size_t)(nl - line), NOT_RUN,
			    strlen(NOT_RUN)) != NULL || memmem(line,
			    (size_t)(nl - line), UNLISTED, strlen(UNLISTED)) !=
			    NULL, "%s: %.*s", su->su_name, (int)(nl - line),
			    line);
	}
}

/* Every user file of the shipped folder is in the table above. */
START_TEST(shipped_users)
{
	char		 root[PATH_MAX], users[PATH_MAX + 8];
	struct dirent	*de;
	DIR		*d;
	size_t		 i, n, seen = 0;

	if (shipped_root(root) == NULL)
		return;
	for (i = 0; i < NELEMS(shipped_users_tab); i++)
		check_shipped_user(root, &shipped_users_tab[i]);
	snprintf(users, sizeof(users), "%s/Users", root);
	ck_assert_ptr_nonnull(d = opendir(users));
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0 ||
		    strcmp(de->d_name, "_current-user.json") == 0)
			continue;
		for (i = 0; i < NELEMS(shipped_users_tab); i++)
			if (strncmp(shipped_users_tab[i].su_name, de->d_name,
			    n - 5) == 0 &&
			    shipped_users_tab[i].su_name[n - 5] == '\0')
				break;
		ck_assert_msg(i < NELEMS(shipped_users_tab), "user %s is not "
		    "in the table", de->d_name);
		seen++;
	}
	closedir(d);
	ck_assert_uint_eq(seen, NELEMS(shipped_users_tab));
	buf_reset(&got);
	ck_assert_int_eq(run_user(root, "_current-user"), EX_CONFIG);
	buf_addc(&got, '\0');
	ck_assert_ptr_nonnull(strstr(got.b_data, "not a user configuration: "
	    "use --user 'chat-ui'"));
}
END_TEST

/* ---- the list of keys is true -------------------------------------- */

/* Keys Sluice reads under another spelling: the prompt template's are
 * built from the role ("promptTemplate" + "System" + "Prefix", in
 * worker/core/prompt.c). */
static const char *const built_keys_prefix = "promptTemplate";

static struct buf	 src_text;	/* every source file, one after another */
static struct buf	 dir_buf;	/* one file */

static int
src_cb(const char *p, const struct stat *st, int f, struct FTW *w)
{
	size_t	 n = strlen(p);

	if (f == FTW_F && n > 2 && (strcmp(p + n - 2, ".c") == 0 ||
	    strcmp(p + n - 2, ".h") == 0 || strcmp(p + n - 4, ".def") == 0) &&
	    strstr(p, "/confcheck") == NULL) {
		slurp(p, &dir_buf);
		buf_add(&src_text, dir_buf.b_data, dir_buf.b_len);
	}
	return 0;
}

/* Each key the list says Sluice reads is named, quoted, in the source
 * of common/, gateway/ (but --check-config's own files) or worker/. */
START_TEST(silent_catalog_true)
{
	static const char *const dirs[] = { "common", "gateway", "worker" };
	const char	*src = getenv("SLUICE_SRC"), *name;
	struct buf	 missing = BUF_INIT;
	char		 path[PATH_MAX], quoted[128];
	enum ck_kind	 kind;
	size_t		 i;
	bool		 impl;

	for (i = 0; i < NELEMS(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", src != NULL ? src : ".",
		    dirs[i]);
		ck_assert_msg(nftw(path, src_cb, 16, FTW_PHYS) == 0, "%s",
		    path);
	}
	buf_adds(&src_text, "");
	buf_adds(&missing, "");
	for (i = 0; ck_key_at(i, &kind, &name, &impl); i++) {
		snprintf(quoted, sizeof(quoted), "\"%s\"", name);
		if (!impl || strstr(src_text.b_data, quoted) != NULL ||
		    (kind == CKK_TEMPLATE && strncmp(name, built_keys_prefix,
		    strlen(built_keys_prefix)) == 0))
			continue;
		buf_printf(&missing, "%s\n", name);
	}
	ck_assert_msg(missing.b_len == 0, "listed as read by Sluice, but "
	    "not in its source:\n%s", missing.b_data);
	ck_assert_uint_gt(i, 250);
	buf_free(&missing);
	buf_free(&src_text);
	buf_free(&dir_buf);
}
END_TEST

/* ---- nothing silent in what WilmerAI ships ------------------------- */

/* The keys Sluice knows it ignores in the shipped tree, as reported:
 * the archived group-chat user (not selectable: it is not in Users/
 * itself) points its discussion and lock files at D:\Temp, which
 * Sluice keeps in its database. Anything else reported fails. */
static const char *const silent_known[] = {
	"Users/_archived/group-chat-example.json:14:3: key "
	    "'discussionDirectory' is not implemented by Sluice; ignored",
	"Users/_archived/group-chat-example.json:15:3: key "
	    "'sqlLiteDirectory' is not implemented by Sluice; ignored",
};

static const char	*tree_root;
static int		 tree_files;
static struct buf	 tree_bad;	/* lines not in silent_known */
static int		 tree_known;

static void
tree_collect(const char *line, bool warning)
{
	size_t	 i, n = strlen(tree_root) + 1;

	for (i = 0; i < NELEMS(silent_known); i++)
		if (strncmp(line + n, silent_known[i],
		    strlen(silent_known[i])) == 0) {
			tree_known++;
			return;
		}
	buf_printf(&tree_bad, "%s%s\n", warning ? "warning: " : "", line);
}

static int
tree_cb(const char *p, const struct stat *st, int f, struct FTW *w)
{
	size_t	 n = strlen(p);

	if (f != FTW_F || n < 5 || strcmp(p + n - 5, ".json") != 0)
		return 0;
	tree_files++;
	(void)confcheck_file(tree_root, p + strlen(tree_root) + 1,
	    tree_collect);
	return 0;
}

/* Every JSON file WilmerAI ships, each checked as the kind its folder
 * says: no unknown or unimplemented key and no node type that would
 * answer 501, but for silent_known. */
START_TEST(silent_shipped_tree)
{
	char	 root[PATH_MAX];

	if (shipped_root(root) == NULL)
		return;
	tree_root = root;
	tree_files = tree_known = 0;
	buf_reset(&tree_bad);
	buf_adds(&tree_bad, "");
	ck_assert_int_eq(nftw(root, tree_cb, 16, FTW_PHYS), 0);
	printf("check_confcheck: %d shipped JSON files checked\n", tree_files);
	ck_assert_int_ge(tree_files, 190);
	ck_assert_msg(tree_bad.b_len == 0, "shipped files:\n%s",
	    tree_bad.b_data);
	ck_assert_int_eq(tree_known, (int)NELEMS(silent_known));
	buf_free(&tree_bad);
}
END_TEST

/* --check-config for each shipped user: nothing unknown, unimplemented
 * or unrun among all it reaches. */
START_TEST(silent_shipped_users)
{
	static const char *const bad[] = { "not implemented", "unknown key",
	    "not run", "unknown node type" };
	char		 root[PATH_MAX];
	size_t		 i, j;

	if (shipped_root(root) == NULL)
		return;
	for (i = 0; i < NELEMS(shipped_users_tab); i++) {
		buf_reset(&got);
		(void)run_user(root, shipped_users_tab[i].su_name);
		buf_addc(&got, '\0');
		for (j = 0; j < NELEMS(bad); j++)
			ck_assert_msg(strstr(got.b_data, bad[j]) == NULL,
			    "%s:\n%s", shipped_users_tab[i].su_name,
			    got.b_data);
	}
}
END_TEST

/* ---- the command line ---------------------------------------------- */

/* The gateway binary, or NULL (with a note) when there is none to run:
 * make check says where (SLUICE_BUILD); without it, build/ is tried. */
static const char *
gateway_bin(char out[PATH_MAX])
{
	const char	*b = getenv("SLUICE_BUILD");

	snprintf(out, PATH_MAX, "%s/sluice-gateway", b != NULL ? b : "build");
	if (access(out, X_OK) == 0)
		return out;
	ck_assert_msg(b == NULL, "%s: not found", out);
	printf("check_confcheck: no %s (set SLUICE_BUILD); skipped\n", out);
	return NULL;
}

/* Run the gateway with --check-config on confdir as user (NULL: none
 * given); returns its exit status with what it wrote to stdout and
 * stderr. */
static int
run_cli(const char *bin, const char *confdir, const char *user,
    struct buf *out, struct buf *err)
{
	char		 opath[PATH_MAX], epath[PATH_MAX], b[PATH_MAX];
	char		 cd[PATH_MAX], u[128], o1[] = "--config-dir";
	char		 o2[] = "--check-config", o3[] = "--user";
	char		*argv[8] = { b, o1, cd, o2, NULL };
	pid_t		 pid;
	int		 st;

	snprintf(b, sizeof(b), "%s", bin);
	snprintf(cd, sizeof(cd), "%s", confdir);
	if (user != NULL) {
		snprintf(u, sizeof(u), "%s", user);
		argv[4] = o3;
		argv[5] = u;
	}
	snprintf(opath, sizeof(opath), "%s.out", dir);
	snprintf(epath, sizeof(epath), "%s.err", dir);
	if ((pid = fork()) == 0) {
		if (freopen(opath, "w", stdout) == NULL ||
		    freopen(epath, "w", stderr) == NULL)
			_exit(126);
		execv(b, argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	slurp(opath, out);
	slurp(epath, err);
	unlink(opath);
	unlink(epath);
	return WEXITSTATUS(st);
}

/* A good folder: status 0, the summary alone; a broken endpoint: status
 * EX_CONFIG and "file:line:column: message" lines. */
START_TEST(cli_good_and_bad)
{
	struct buf	 out = BUF_INIT, err = BUF_INIT, exp = BUF_INIT;
	char		 bin[PATH_MAX];

	if (gateway_bin(bin) == NULL)
		return;
	ck_assert_int_eq(run_cli(bin, dir, "u", &out, &err), 0);
	ck_assert_str_eq(out.b_data, "");
	ck_assert_str_eq(err.b_data, "configuration OK (5 files checked for "
	    "user 'u')\n");
	put("Users/_current-user.json", "{\"currentUser\": \"u\"}\n");
	put("Endpoints/Good.json", "{\"endpoint\": \"http://127.0.0.1:9\",\n"
	    " \"apiTypeConfigFileName\": 7}\n");
	ck_assert_int_eq(run_cli(bin, dir, NULL, &out, &err), EX_CONFIG);
	ck_assert_str_eq(out.b_data, "");
	expand(&exp, "@/Workflows/u/Main.json:1:19: node 1 \"Ask\": "
	    "@/Endpoints/Good.json:2:2: 'apiTypeConfigFileName' must be a "
	    "string, not a number\n1 problem in @\n");
	ck_assert_str_eq(err.b_data, exp.b_data);
	ck_assert_int_eq(run_cli(bin, dir, "_current-user", &out, &err),
	    EX_CONFIG);
	ck_assert_ptr_nonnull(strstr(err.b_data, "/Users/_current-user.json:"
	    "1:2: this is the file that names the current user, not a user "
	    "configuration: use --user 'u', or leave --user out to run as "
	    "it\n"));
	buf_free(&out);
	buf_free(&err);
	buf_free(&exp);
}
END_TEST

/* In a copy of the shipped folder: chat-ui's endpoints are reached only
 * through {agentNInput}; breaking one, or their api type, is found. */
START_TEST(cli_shipped_copy)
{
	struct buf	 out = BUF_INIT, err = BUF_INIT, exp = BUF_INIT;
	char		 bin[PATH_MAX], root[PATH_MAX], cmd[PATH_MAX * 2 + 64];
	char		 copy[128];

	if (gateway_bin(bin) == NULL || shipped_root(root) == NULL)
		return;
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s'", root, copy);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(run_cli(bin, copy, "chat-ui", &out, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.b_data, "configuration OK (21 files "
	    "checked for user 'chat-ui', 1 warning)\n"));
	replace_in(copy, "Endpoints/_shared/General-Endpoint.json",
	    "\"LlamaCppServer\",", "\"LlamaCppServer\"");
	ck_assert_int_eq(run_cli(bin, copy, "chat-ui", &out, &err), EX_CONFIG);
	expand(&exp, "@/copy/Workflows/_common/General.json:8:5: node 1 "
	    "\"Responding Agent\" (endpointName '{agent1Input}' is "
	    "'General-Endpoint'): @/copy/Endpoints/_shared/General-Endpoint."
	    "json:5:23: '}' expected\n");
	ck_assert_msg(strstr(err.b_data, exp.b_data) != NULL, "%s",
	    err.b_data);
	ck_assert_ptr_nonnull(strstr(err.b_data, "1 problem, 1 warning in "));
	replace_in(copy, "Endpoints/_shared/General-Endpoint.json",
	    "\"LlamaCppServer\"", "\"LlamaCppServer\",");
	replace_in(copy, "ApiTypes/LlamaCppServer.json",
	    "\"openAIChatCompletion\"", "\"openAIChat\"");
	ck_assert_int_eq(run_cli(bin, copy, "chat-ui", &out, &err), EX_CONFIG);
	buf_reset(&exp);
	expand(&exp, "@/copy/Endpoints/_shared/General-Endpoint.json:4:3: "
	    "apiTypeConfigFileName: @/copy/ApiTypes/LlamaCppServer.json:3:3: ");
	ck_assert_msg(strstr(err.b_data, exp.b_data) != NULL, "%s",
	    err.b_data);
	ck_assert_ptr_nonnull(strstr(err.b_data, "5 problems, 1 warning in "));
	buf_free(&out);
	buf_free(&err);
	buf_free(&exp);
}
END_TEST

/* One TCase of tests[0..n) with the temporary folder around each. */
static void
add_case(Suite *s, const char *name, const TTest *const *tests, size_t n)
{
	TCase	*tc = tcase_create(name);
	size_t	 i;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	for (i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
}

#define ADD_CASE(s, name, ...) do {					\
	const TTest *const t_[] = { __VA_ARGS__ };			\
	add_case((s), (name), t_, NELEMS(t_));				\
} while (0)

static Suite *
suite(void)
{
	Suite	*s = suite_create("confcheck");

	ADD_CASE(s, "references", good_config, summary_line,
	    nested_missing_endpoint, conditional_missing_branch,
	    standard_needs_endpoint, per_chunk_workflows);
	ADD_CASE(s, "cycles", workflow_cycles, backup_chain, backup_missing);
	ADD_CASE(s, "routing", routing_missing_category, routing_no_default);
	ADD_CASE(s, "templates", completion_template, user_template);
	ADD_CASE(s, "variables", scoped_inputs_resolved,
	    variable_reaches_broken_endpoint, unresolvable_names_warn,
	    inputs_pass_through_levels, unlisted_shared_workflows_warn,
	    current_user_file_is_not_a_user);
	ADD_CASE(s, "node_types", unsupported_types, node_types);
	ADD_CASE(s, "shipped", shipped_users);
	ADD_CASE(s, "embeddings", a9_1_embeddings_endpoints);
	ADD_CASE(s, "silent", silent_unimplemented_and_unknown,
	    silent_every_kind, silent_file_by_folder, silent_shipped_tree,
	    silent_shipped_users, silent_catalog_true);
	ADD_CASE(s, "command_line", cli_good_and_bad, cli_shipped_copy);
	return s;
}

int
main(void)
{
	return check_main(suite());
}
