/* check_memory_it.c - integration: file-style memories, the rolling summary and condensation, written by workers into the shared database and read back by later turns; a full disk under it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/sha256.h"
#include "../testmain.h"
#include "../unit/pgtmp.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;

/* Memory LLM calls echo their prompt (the mock's "echo"), so a memory's
 * text shows which messages it was made from; the system prompt shows
 * the memories before it. Chunks of 10 estimated tokens hold one of
 * the test's messages each. */
static const char settings[] = "{\"endpointName\": \"Mock\", \"preset\":"
    " \"Mock\", \"maxResponseSizeInTokens\": 100,"
    " \"systemPrompt\": \"Memories so far: [Memory_file]\","
    " \"prompt\": \"Summarise [TextChunk]\\n#mock {\\\"echo\\\": true}\","
    " \"chunkEstimatedTokenSize\": 10, \"maxMessagesBetweenChunks\": 2,"
    " \"lookbackStartTurn\": 2 %s}\n";

static const char user[] = "{\"customWorkflowOverride\": true,"
    " \"customWorkflow\": \"Main\", \"chatCompleteAddUserAssistant\": false,"
    " \"chatCompletionAddMissingAssistantGenerator\": false,"
    " \"endpointConfigsSubDirectory\": \"it\","
    " \"discussionIdMemoryFileWorkflowSettings\": \"MemSettings\","
    " \"chatSummaryToolWorkflow\": \"SummaryTool\"}\n";

/* The answer, then memories (the usual place: after the responder). */
static const char writer[] = "{\"nodes\": ["
    "{\"type\": \"StaticResponse\", \"content\": \"ok\", \"returnToUser\":"
    " true}, {\"type\": \"QualityMemory\"}]}\n";

/* The suite's PostgreSQL cluster (main starts it) and, for a test on
 * PostgreSQL, its database's URL: the store of the test's gateway. */
static struct pgtmp	 M_cluster;
static char		 M_store[512];

/* The test's folder, its mock and files; the gateway not yet. */
static void
configure(const char *main_wf, const char *extra_settings)
{
	char	 s[1024], gw[900];

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	snprintf(gw, sizeof(gw), "\"min_workers\": 2, \"max_workers\": 2%s%s%s",
	    M_store[0] != '\0' ? ", \"store\": {\"url\": \"" : "", M_store,
	    M_store[0] != '\0' ? "\"}" : "");
	snprintf(T.it_store, sizeof(T.it_store), "%s", M_store);
	it_config(&T, gw, NULL);
	it_file(&T, "Users/it.json", user);
	snprintf(s, sizeof(s), settings, extra_settings);
	it_file(&T, "Workflows/it/MemSettings.json", s);
	it_file(&T, "Workflows/it/Main.json", main_wf);
}

static void
start(const char *main_wf, const char *extra_settings)
{
	configure(main_wf, extra_settings);
	it_gateway_start(&T, NULL);
}

/* Message k of the test conversations: about 11 estimated tokens. */
static char *
msg(int k, char *out, size_t outlen)
{
	snprintf(out, outlen, "Msg %d alpha beta gamma delta epsilon zeta", k);
	return out;
}

/* A conversation of n turns in discussion id; the answer must be want.
 * Returns the answer text (caller frees). */
static char *
turn(const char *id, int n, bool stream)
{
	json_t			*msgs = json_array(), *b, *j;
	char			 sys[128], text[64], *body, *ans;
	struct it_resp		 r;
	struct sse_summary	 ss;
	int			 k;

	snprintf(sys, sizeof(sys), "You are kind. [DiscussionId]%s"
	    "[/DiscussionId]", id);
	json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system",
	    "content", sys));
	for (k = 1; k <= n; k++)
		json_array_append_new(msgs, json_pack("{s:s,s:s}", "role",
		    k % 2 ? "user" : "assistant", "content",
		    msg(k, text, sizeof(text))));
	b = json_pack("{s:s,s:b,s:o}", "model", "it", "stream", stream,
	    "messages", msgs);
	body = json_dumps(b, 0);
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions", body,
	    &r), 0);
	ck_assert_msg(r.r_status == 200, "%ld %s", r.r_status,
	    r.r_body.b_data);
	if (stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ans = ss.ss_text;
	} else {
		j = it_json(r.r_body.b_data);
		ans = strdup(json_string_value(json_object_get(json_object_get(
		    json_array_get(json_object_get(j, "choices"), 0),
		    "message"), "content")));
		json_decref(j);
	}
	it_resp_free(&r);
	json_decref(b);
	free(body);
	return ans;
}

static void
turn_ok(const char *id, int n)
{
	char	*a = turn(id, n, false);

	ck_assert_str_eq(a, "ok");
	free(a);
}

/* The ledger of discussion id, texts joined by '|'. */
static char *
ledger(const char *id)
{
	char	 sql[256];

	snprintf(sql, sizeof(sql), "SELECT coalesce(group_concat(text, '|'), "
	    "'') FROM (SELECT text FROM memories WHERE discussion = '%s' "
	    "ORDER BY id)", id);
	return it_db_text(&T, sql);
}

static void
wait_count(const char *id, long long n)
{
	char	 sql[256];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM memories WHERE "
	    "discussion = '%s'", id);
	ck_assert_msg(it_db_wait(&T, sql, n, 5000), "discussion %s: not %lld "
	    "memories (%lld)", id, n, it_db_int(&T, sql));
	it_wait_idle(&T, 2);
}

/* Content of message m of backend request i. */
static const char *
sent(json_t *log, size_t i, size_t m)
{
	return json_string_value(json_object_get(json_array_get(
	    json_object_get(json_object_get(json_array_get(log, i), "body"),
	    "messages"), m), "content"));
}

/* Turn 1: 5 turns, the last 2 held back, no ledger yet (so only the
 * token threshold counts): three memories, one per message, each
 * prompt showing the memories before it. Turn 2: 7 turns; the new
 * messages are those after the one the last memory ended with. */
START_TEST(file_memories_resume_by_hash)
{
	json_t	*log;
	char	*l, text[64], want[256], hash[65];

	start(writer, "");
	turn_ok("conv1", 5);
	wait_count("conv1", 3);
	l = ledger("conv1");
	ck_assert_str_eq(l, "Summarise Msg 1 alpha beta "
	    "gamma delta epsilon zeta|Summarise Msg 2 alpha beta gamma delta "
	    "epsilon zeta|Summarise Msg 3 alpha beta gamma delta epsilon zeta");
	free(l);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 3);
	ck_assert_str_eq(sent(log, 0, 0), "Memories so far: No preceding "
	    "memories to show");
	ck_assert_str_eq(sent(log, 2, 0), "Memories so far: Summarise Msg 1 "
	    "alpha beta gamma delta epsilon zeta\n--------------\nSummarise "
	    "Msg 2 alpha beta gamma delta epsilon zeta");
	json_decref(log);
	msg(3, text, sizeof(text));
	sha256_hex(text, strlen(text), hash);
	snprintf(want, sizeof(want), "SELECT count(*) FROM memories WHERE "
	    "discussion = 'conv1' AND id = (SELECT max(id) FROM memories) AND "
	    "hash = '%s'", hash);
	ck_assert_int_eq(it_db_int(&T, want), 1);

	turn_ok("conv1", 7);
	wait_count("conv1", 5);
	l = ledger("conv1");
	ck_assert_ptr_nonnull(strstr(l, "zeta|Summarise "
	    "Msg 4 alpha beta gamma delta epsilon zeta|Summarise Msg 5 "));
	free(l);
	json_decref(it_mock_log(&T, true));
	/* the same turn again: nothing new */
	turn_ok("conv1", 7);
	it_wait_idle(&T, 2);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 0);
	json_decref(log);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories"), 5);
	it_stop_clean(&T);
}
END_TEST

/* Below both thresholds nothing is written; with the ledger there,
 * maxMessagesBetweenChunks alone is enough. Another discussion's
 * ledger is its own. */
START_TEST(thresholds_and_discussions)
{
	start(writer, ", \"chunkEstimatedTokenSize\": 1000");
	turn_ok("a", 5);		/* 3 eligible, ~33 tokens: no */
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories"), 0);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memory_ledgers "
	    "WHERE discussion = 'a'"), 1);
	turn_ok("a", 6);		/* ledger there, 4 >= 2 messages */
	wait_count("a", 1);		/* one chunk: 1000 tokens hold all */
	turn_ok("b", 5);
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories WHERE "
	    "discussion = 'b'"), 0);
	it_stop_clean(&T);
}
END_TEST

/* Later turns read the memories: GetCurrentMemoryFromFile (delimiter),
 * RecentMemorySummarizerTool (the last N), in the answer itself. */
static void
read_back(void)
{
	char	*a;

	start(writer, "");
	turn_ok("r", 7);		/* 5 eligible: 5 memories */
	wait_count("r", 5);
	it_file(&T, "Workflows/it/Main.json", "{\"nodes\": ["
	    "{\"type\": \"GetCurrentMemoryFromFile\", \"customDelimiter\":"
	    " \" / \"},"
	    "{\"type\": \"RecentMemorySummarizerTool\", \"maxTurnsToPull\": 0,"
	    " \"maxSummaryChunksFromFile\": 2, \"customDelimiter\": \"#\"},"
	    "{\"type\": \"StaticResponse\", \"content\":"
	    " \"[{agent1Output}] [{agent2Output}]\"}]}\n");
	a = turn("r", 7, true);
	ck_assert_str_eq(a, "[Summarise Msg 1 alpha beta gamma delta epsilon "
	    "zeta / Summarise Msg 2 alpha beta gamma delta epsilon zeta / "
	    "Summarise Msg 3 alpha beta gamma delta epsilon zeta / Summarise "
	    "Msg 4 alpha beta gamma delta epsilon zeta / Summarise Msg 5 alpha "
	    "beta gamma delta epsilon zeta] [Summarise Msg 4 alpha beta gamma "
	    "delta epsilon zeta#Summarise Msg 5 alpha beta gamma delta epsilon "
	    "zeta]");
	free(a);
	a = turn("nothing-here", 3, false);
	ck_assert_str_eq(a, "[There are not yet any memories] [No memories "
	    "have been generated yet]");
	free(a);
}

START_TEST(memories_read_back)
{
	read_back();
	it_stop_clean(&T);
}
END_TEST

/* Whether secret shows in a worker's command line. */
static bool
in_worker_args(const char *secret)
{
	char	 path[64], args[4096];
	pid_t	 pids[4];
	size_t	 i, n, np = it_worker_pids(&T, pids, 4);
	FILE	*f;
	bool	 found = false;

	ck_assert_uint_ge(np, 1);
	for (i = 0; i < np && !found; i++) {
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pids[i]);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(args, 1, sizeof(args) - 1, f);
		fclose(f);
		args[n] = '\0';
		while (n-- > 0)		/* NULs between arguments */
			if (args[n] == '\0')
				args[n] = ' ';
		found = strstr(args, secret) != NULL;
	}
	return found;
}

/*
 * The same on PostgreSQL, chosen by sluice.json's "store": the memories
 * are written to and read back from the database of the URL (no
 * SQLite file is made), and the URL's password (ignored by the test
 * cluster, which trusts its socket) shows in no worker's command line
 * and in no log.
 */
START_TEST(pg_memories_read_back)
{
	char	 path[300], *log;

	ck_assert_int_eq(pgtmp_newdb(&M_cluster, M_store, sizeof(M_store)), 0);
	strncat(M_store, "&password=Pw-s3cret", sizeof(M_store) -
	    strlen(M_store) - 1);
	read_back();
	ck_assert_msg(!in_worker_args("s3cret"), "the store's password is on "
	    "a worker's command line");
	snprintf(path, sizeof(path), "%s/state/sluice.db", T.it_dir);
	ck_assert_msg(access(path, F_OK) == -1, "%s was made", path);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories WHERE "
	    "discussion = 'r'"), 5);
	log = it_file_text(T.it_log);
	ck_assert_msg(strstr(log, "the shared database: PostgreSQL "
	    "postgresql:///") != NULL, "%s", log);
	ck_assert_msg(strstr(log, "s3cret") == NULL, "the password is "
	    "logged: %s", log);
	free(log);
	it_stop_clean(&T);
	M_store[0] = '\0';
}
END_TEST

/* chatSummarySummarizer folds the memories the summary does not hold
 * in batches of loopIfMemoriesExceed, the last only when it has
 * minMemoriesPerSummary; GetCurrentSummaryFromFile reads it back. */
START_TEST(rolling_summary)
{
	char	*a, *s, text[64], hash[65], sql[256];

	start(writer, "");
	turn_ok("s", 7);
	wait_count("s", 5);
	it_file(&T, "Workflows/it/Main.json", "{\"nodes\": ["
	    "{\"type\": \"chatSummarySummarizer\", \"endpointName\": \"Mock\","
	    " \"preset\": \"Mock\", \"systemPrompt\": \"sum\", \"prompt\":"
	    " \"<[CHAT_SUMMARY]>[LATEST_MEMORIES]\\n#mock {\\\"echo\\\": true}\","
	    " \"loopIfMemoriesExceed\": 2, \"minMemoriesPerSummary\": 2},"
	    "{\"type\": \"GetCurrentSummaryFromFile\"},"
	    "{\"type\": \"StaticResponse\", \"content\": \"{agent2Output}\"}]}\n");
	a = turn("s", 7, false);
	s = it_db_text(&T, "SELECT text FROM summaries WHERE discussion = 's'");
	ck_assert_str_eq(a, s);
	ck_assert_str_eq(s, "<<There is not yet a summary file>Summarise Msg 1 "
	    "alpha beta gamma delta epsilon zeta\n------------\nSummarise Msg 2 "
	    "alpha beta gamma delta epsilon zeta>Summarise Msg 3 alpha beta "
	    "gamma delta epsilon zeta\n------------\nSummarise Msg 4 alpha beta "
	    "gamma delta epsilon zeta");
	msg(4, text, sizeof(text));
	sha256_hex(text, strlen(text), hash);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM summaries WHERE "
	    "hash = '%s'", hash);
	ck_assert_int_eq(it_db_int(&T, sql), 1);
	free(a);
	free(s);
	it_stop_clean(&T);
}
END_TEST

/* Condensation: the tracker is seeded on a new ledger; two new
 * memories after it are condensed into one, in place, with the three
 * before them shown as preceding. */
START_TEST(condensation)
{
	json_t	*log;
	char	*l;
	size_t	 i;

	start(writer, ", \"condenseMemories\": true,"
	    " \"memoriesBeforeCondensation\": 2,"
	    " \"condenseMemoriesSystemPrompt\": \"Before: "
	    "[Memories_Before_Memories_to_Condense]\","
	    " \"condenseMemoriesPrompt\": \"Condense [MemoriesToCondense]\\n"
	    "#mock {\\\"echo\\\": true}\"");
	turn_ok("c", 5);
	wait_count("c", 3);
	json_decref(it_mock_log(&T, true));
	turn_ok("c", 7);
	wait_count("c", 4);
	l = ledger("c");
	ck_assert_str_eq(l, "Summarise Msg 1 alpha beta gamma "
	    "delta epsilon zeta|Summarise Msg 2 alpha beta gamma delta epsilon "
	    "zeta|Summarise Msg 3 alpha beta gamma delta epsilon zeta|Condense "
	    "Summarise Msg 4 alpha beta gamma delta epsilon zeta\n"
	    "--------------\nSummarise Msg 5 alpha beta gamma delta epsilon "
	    "zeta");
	free(l);
	log = it_mock_log(&T, true);
	ck_assert_int_eq(json_array_size(log), 3);	/* 2 memories + 1 */
	i = json_array_size(log) - 1;
	ck_assert_ptr_nonnull(strstr(sent(log, i, 0), "Before: Summarise Msg "
	    "1 "));
	json_decref(log);
	it_stop_clean(&T);
}
END_TEST

/* FullChatSummary writes memories first; with more than one new since
 * the summary it runs the user's chatSummaryToolWorkflow, else it
 * returns the summary, which WriteCurrentSummaryToFileAndReturnIt set
 * up to the latest memory. */
START_TEST(full_chat_summary)
{
	char	*a;

	start("{\"nodes\": [{\"type\": \"FullChatSummary\"},"
	    " {\"type\": \"StaticResponse\", \"content\": \"{agent1Output}\"}"
	    "]}\n", "");
	it_file(&T, "Workflows/it/SummaryTool.json", "[{\"type\":"
	    " \"StaticResponse\", \"content\": \"the tool ran\"}]\n");
	a = turn("f", 7, false);
	ck_assert_str_eq(a, "the tool ran");
	free(a);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories"), 5);
	it_file(&T, "Workflows/it/Main.json", "{\"nodes\": ["
	    "{\"type\": \"WriteCurrentSummaryToFileAndReturnIt\", \"input\":"
	    " \"all {Discussion_Id} so far\"},"
	    "{\"type\": \"FullChatSummary\"},"
	    "{\"type\": \"FullChatSummary\", \"isManualConfig\": true},"
	    "{\"type\": \"StaticResponse\", \"content\":"
	    " \"{agent1Output}/{agent2Output}/{agent3Output}\"}]}\n");
	a = turn("f", 7, false);
	ck_assert_str_eq(a, "all f so far/all f so far/all f so far");
	free(a);
	it_stop_clean(&T);
}
END_TEST

/* A node that needs a helper workflow the user file does not name
 * fails with a message naming the setting. */
START_TEST(missing_tool_workflow)
{
	struct it_resp	 r;
	json_t		*j;

	start("{\"nodes\": [{\"type\": \"ConversationMemory\"},"
	    " {\"type\": \"StaticResponse\", \"content\": \"x\"}]}\n", "");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"model\": \"it\", \"messages\": [{\"role\": \"user\","
	    " \"content\": \"[DiscussionId]m[/DiscussionId] hi\"}]}", &r), 0);
	ck_assert_int_eq(r.r_status, 500);
	j = it_json(r.r_body.b_data);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
	    json_object_get(j, "error"), "message")),
	    "'conversationMemoryToolWorkflow' names, and it names none"));
	json_decref(j);
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* Without [DiscussionId] nothing is stored, and the nodes say so. */
START_TEST(no_discussion_id)
{
	struct it_resp	 r;

	start("{\"nodes\": [{\"type\": \"QualityMemory\"},"
	    " {\"type\": \"GetCurrentSummaryFromFile\"},"
	    " {\"type\": \"StaticResponse\", \"content\":"
	    " \"{agent1Output} / {agent2Output}\"}]}\n", "");
	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    "{\"model\": \"it\", \"messages\": [{\"role\": \"user\", \"content\":"
	    " \"a\"}, {\"role\": \"assistant\", \"content\": \"b\"},"
	    " {\"role\": \"user\", \"content\": \"c\"}]}", &r), 0);
	ck_assert_ptr_nonnull(strstr(r.r_body.b_data, "No discussionId on this "
	    "request; memories were not generated. / There is not yet a "
	    "summary file"));
	it_resp_free(&r);
	it_stop_clean(&T);
}
END_TEST

/* ---- a full disk under the database ---- */

static char	 state[320];

/* The mount point that holds path: the longest mount point of
 * /proc/self/mountinfo that is a prefix of it ("/" in a chroot is
 * often none, so "/" cannot be assumed). False when none shows. */
static bool
mount_of(const char *path, char *out, size_t outlen)
{
	FILE	*f = fopen("/proc/self/mountinfo", "r");
	char	 line[4096], mp[2048];
	size_t	 n, best = 0;

	ck_assert_ptr_nonnull(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*s %*s %*s %*s %2047s", mp) != 1)
			continue;
		n = strlen(mp);
		if (n >= best && strncmp(path, mp, n) == 0 && (n == 1 ||
		    path[n] == '/' || path[n] == '\0')) {
			best = n;
			snprintf(out, outlen, "%s", mp);
		}
	}
	fclose(f);
	return out[0] != '\0';
}

/*
 * The state directory on a 4 MiB tmpfs of our own: a mount namespace of
 * the test process, inherited by the gateway and its workers, gone with
 * them. The mount that holds the test's folder is made private first,
 * so the tmpfs is not propagated back to the machine's namespace.
 * False when this process may not make one (not root).
 */
static bool
small_state_dir(void)
{
	char	 mp[2048];

	if (unshare(CLONE_NEWNS) == -1) {
		fprintf(stderr, "*** check_memory_it: full disk SKIPPED, cannot "
		    "make a mount namespace (%s): run as root to test it\n",
		    strerror(errno));
		return false;
	}
	if (!mount_of(T.it_dir, mp, sizeof(mp))) {
		fprintf(stderr, "*** check_memory_it: full disk SKIPPED, no "
		    "mount of this root holds %s\n", T.it_dir);
		return false;
	}
	ck_assert_msg(mount(NULL, mp, NULL, MS_REC | MS_PRIVATE, NULL) == 0,
	    "make %s private: %s", mp, strerror(errno));
	snprintf(state, sizeof(state), "%s/state", T.it_dir);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_msg(mount("sluice-it", state, "tmpfs", 0, "size=4m,mode=0700")
	    == 0, "mount tmpfs: %s", strerror(errno));
	return true;
}

/* Fill the tmpfs to the last byte; the file's path into out. */
static void
fill(char *out, size_t outlen)
{
	static char	 block[65536];
	ssize_t		 n;
	int		 fd;

	snprintf(out, outlen, "%s/filler", state);
	ck_assert_int_ge(fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), 0);
	memset(block, 'x', sizeof(block));
	while ((n = write(fd, block, sizeof(block))) > 0)
		;
	while ((n = write(fd, block, 1)) > 0)	/* the last partial block */
		;
	ck_assert_int_eq(errno, ENOSPC);
	close(fd);
}

/* /health's status and store member. Caller decrefs *store. */
static char *
health(json_t **store)
{
	json_t	*h = it_get_json(&T, "/health");
	char	*status;

	ck_assert_ptr_nonnull(h);
	status = strdup(json_string_value(json_object_get(h, "status")));
	*store = json_incref(json_object_get(h, "store"));
	ck_assert_ptr_nonnull(*store);
	json_decref(h);
	return status;
}

/* Wait until /health's store member says want ("ok", "failing"). */
static json_t *
wait_store(const char *want)
{
	uint64_t	 end = it_now() + (uint64_t)it_slow(5000);
	json_t		*st;
	char		*status;

	for (;;) {
		status = health(&st);
		if (strcmp(json_string_value(json_object_get(st, "status")),
		    want) == 0) {
			ck_assert_str_eq(status, strcmp(want, "ok") == 0 ?
			    "ok" : "degraded");
			free(status);
			return st;
		}
		free(status);
		json_decref(st);
		ck_assert_msg(it_now() < end, "/health: store never %s", want);
		it_sleep(50);
	}
}

/* Turn 1 writes three memories. The disk fills: turn 2 still answers,
 * its memories cannot be written, and that shows everywhere. Room
 * again: turn 2 once more writes the memories it lost, and /health is
 * ok. */
START_TEST(full_disk_degrades_and_recovers)
{
	char		 filler[400];
	json_t		*st;
	size_t		 from;
	double		 errors;

	configure(writer, "");
	if (!small_state_dir()) {
		it_stop_clean(&T);
		return;
	}
	it_gateway_start(&T, NULL);

	turn_ok("full", 5);
	wait_count("full", 3);
	st = wait_store("ok");
	ck_assert_int_eq(json_integer_value(json_object_get(st, "errors")), 0);
	json_decref(st);
	ck_assert(it_metric(&T, "sluice_store_errors_total") == 0);

	fill(filler, sizeof(filler));
	from = it_log_size(&T);
	turn_ok("full", 7);		/* the answer does not need the disk */
	st = wait_store("failing");
	ck_assert_msg(strstr(json_string_value(json_object_get(st, "reason")),
	    "full") != NULL, "reason: %s", json_string_value(
	    json_object_get(st, "reason")));
	ck_assert_int_gt(json_integer_value(json_object_get(st, "errors")), 0);
	json_decref(st);
	ck_assert(it_log_wait(&T, "discussion 'full': ", &from, 5000));
	ck_assert(it_log_wait(&T, "the shared database is failing", &from,
	    5000));
	errors = it_metric(&T, "sluice_store_errors_total");
	ck_assert(errors >= 1);
	ck_assert(it_metric(&T, "sluice_store_failing") == 1);
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM memories"), 3);

	ck_assert_int_eq(unlink(filler), 0);
	turn_ok("full", 7);		/* the same turn: made again */
	wait_count("full", 5);
	st = wait_store("ok");
	json_decref(st);
	ck_assert(it_log_wait(&T, "the shared database works again", &from,
	    5000));
	ck_assert(it_metric(&T, "sluice_store_failing") == 0);
	ck_assert(it_metric(&T, "sluice_store_errors_total") == errors);

	/* Detached now, the tmpfs lives on until the workers close it, and
	 * the folder under it is removed with the test's. */
	ck_assert_int_eq(umount2(state, MNT_DETACH), 0);
	it_stop_clean(&T);
}
END_TEST

static Suite *
memory_it_suite(bool pg)
{
	Suite	*s = suite_create("memory_it");
	TCase	*tc = tcase_create("file");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, file_memories_resume_by_hash);
	tcase_add_test(tc, thresholds_and_discussions);
	tcase_add_test(tc, memories_read_back);
	tcase_add_test(tc, rolling_summary);
	tcase_add_test(tc, condensation);
	tcase_add_test(tc, full_chat_summary);
	tcase_add_test(tc, missing_tool_workflow);
	tcase_add_test(tc, no_discussion_id);
	suite_add_tcase(s, tc);
	tc = tcase_create("disk");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, full_disk_degrades_and_recovers);
	suite_add_tcase(s, tc);
	if (!pg)
		return s;
	tc = tcase_create("pg");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, pg_memories_read_back);
	suite_add_tcase(s, tc);
	return s;
}

/* The PostgreSQL cases need the cluster: started here, once, and
 * stopped when every case has run (skipped, loudly, without
 * PostgreSQL). */
int
main(void)
{
	bool	 pg = pgtmp_start(&M_cluster, "check_memory_it") == 0;
	int	 rc = check_main(memory_it_suite(pg));

	pgtmp_stop(&M_cluster);
	return rc;
}
