/* check_store_it.c - integration: the workers' shared database in the state directory, and WorkflowLock. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../testmain.h"
#include "dbq.h"
#include "harness.h"

static struct it	 T;

#define T_UMASK	022	/* set by main() for the gateway it starts */

/* The answer, a lock, then a backend call: the mock counts the calls
 * that happened after the lock was taken. */
static const char workflow[] = "{\"nodes\": ["
    "{\"type\": \"StaticResponse\", \"content\": \"hi\","
    " \"returnToUser\": true},"
    "{\"type\": \"WorkflowLock\", \"workflowLockId\": \"{lock_name}\"},"
    "{\"type\": \"Standard\", \"endpointName\": \"Mock\", \"preset\":"
    " \"Mock\", \"prompt\": \"\", \"lastMessagesToSendInsteadOfPrompt\": 5,"
    " \"maxResponseSizeInTokens\": 50}],"
    " \"lock_name\": \"L\"}\n";

static void
start(const char *wf)
{
	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 2, \"max_workers\": 2", NULL);
	it_file(&T, "Workflows/it/Main.json", wf);
	it_gateway_start(&T, NULL);
}

static char *
state_file(const char *name, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/state/%s", T.it_dir, name);
	return out;
}

/* ---- requests ---- */

/* A chat request whose answer must be "hi"; user is the user text. */
static void
ask_hi(bool stream, const char *user)
{
	json_t			*b = json_pack("{s:s,s:b,s:[{s:s,s:s}]}",
				    "model", "x", "stream", stream, "messages",
				    "role", "user", "content", user);
	char			*body = json_dumps(b, 0);
	struct it_resp		 r;
	struct sse_summary	 ss;
	json_t			*j;

	ck_assert_int_eq(it_request(&T, "POST", "/v1/chat/completions",
	    body, &r), 0);
	ck_assert_msg(r.r_status == 200, "status %ld: %s", r.r_status,
	    r.r_body.b_data);
	if (stream) {
		it_sse_parse(r.r_body.b_data, &ss);
		ck_assert_str_eq(ss.ss_text, "hi");
		ck_assert(ss.ss_done && !ss.ss_error);
		free(ss.ss_text);
	} else {
		j = it_json(r.r_body.b_data);
		ck_assert_str_eq(json_string_value(json_object_get(
		    json_object_get(json_array_get(json_object_get(j,
		    "choices"), 0), "message"), "content")), "hi");
		json_decref(j);
	}
	it_resp_free(&r);
	json_decref(b);
	free(body);
}

/* The request's run takes the lock, the node after it runs, and the
 * lock goes when the workflow ends. The database lives in the state
 * directory, in WAL mode. */
START_TEST(lock_taken_and_dropped)
{
	char		 path[512];
	struct stat	 sb;

	start(workflow);
	ck_assert_int_eq(it_mock_requests(&T), 0);
	ask_hi(false, "hello");
	it_wait_idle(&T, 2);		/* the nodes after the answer ran */
	ck_assert_int_eq(it_mock_requests(&T), 1);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM workflow_locks"),
	    0);
	/* the newest step of worker/store/store_schema.c */
	ck_assert_int_eq(it_db_int(&T, "PRAGMA user_version"), 6);
	ck_assert_int_eq(stat(state_file("", path, sizeof(path)), &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0750 & ~T_UMASK);
	ck_assert_int_eq(stat(state_file("sluice.db", path, sizeof(path)),
	    &sb), 0);
	ck_assert_int_eq(stat(state_file("sluice.db-wal", path,
	    sizeof(path)), &sb), 0);
	ck_assert_int_eq(stat(state_file("sluice.db-shm", path,
	    sizeof(path)), &sb), 0);
	it_stop_clean(&T);
}
END_TEST

/* Held by another run: the answer still comes, the workflow ends at
 * the lock, and the other run's lock stays. Once it has expired, the
 * lock is taken over. */
START_TEST(lock_held_ends_the_workflow)
{
	size_t	 from = 0;

	start(workflow);
	ask_hi(false, "hello");		/* makes the database */
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	it_db_exec(&T, "INSERT INTO workflow_locks (lock_id, owner, "
	    "expires_at) VALUES ('L', 'someone-else', unixepoch() + 600)");
	ask_hi(false, "hello");
	ask_hi(true, "hello");
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_mock_requests(&T), 1);
	ck_assert_msg(it_log_wait(&T, "workflow lock 'L' is held by another "
	    "run", &from, 1000), "no log line for the held lock");
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM workflow_locks "
	    "WHERE lock_id = 'L' AND owner = 'someone-else'"), 1);

	it_db_exec(&T, "UPDATE workflow_locks SET expires_at = "
	    "unixepoch() - 1");
	ask_hi(false, "hello");
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_mock_requests(&T), 2);
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM workflow_locks"),
	    0);
	it_stop_clean(&T);
}
END_TEST

/* Two workers: the first holds the lock during a slow backend call
 * after its answer; the second sees its row and stops at the lock. */
START_TEST(second_worker_sees_the_lock)
{
	uint64_t	 t0;
	long long	 n = 0;
	char		 err[256];

	start(workflow);
	ask_hi(false, "first\n#mock {\"head_delay_ms\": 2000}");
	for (t0 = it_now(); n <= 0 && it_now() - t0 < 3000; it_sleep(20))
		if (it_db_try(&T, "SELECT count(*) FROM workflow_locks WHERE "
		    "lock_id = 'L'", &n, err, sizeof(err)) == -1)
			n = 0;
	ck_assert_msg(n == 1, "the first request's lock never showed");
	ck_assert_msg(it_worker_in(&T, "after") != 0,
	    "the first worker is not busy after its answer");
	ask_hi(false, "second");
	it_wait_idle(&T, 2);
	ck_assert_int_eq(it_mock_requests(&T), 1);	/* the first's call only */
	ck_assert_int_eq(it_db_int(&T, "SELECT count(*) FROM workflow_locks"),
	    0);
	it_stop_clean(&T);
}
END_TEST

/* A lock node without its id fails the request's post-answer work, and
 * says why; the answer was already given. */
START_TEST(lock_without_id)
{
	size_t	 from = 0;

	start("{\"nodes\": [{\"type\": \"StaticResponse\", \"content\":"
	    " \"hi\", \"returnToUser\": true}, {\"type\": \"WorkflowLock\"}]}");
	ask_hi(false, "hello");
	ck_assert_msg(it_log_wait(&T, "A WorkflowLock node must have a "
	    "'workflowLockId'", &from, 3000), "no error logged");
	it_stop_clean(&T);
}
END_TEST

/* The workers are told where the database is and how to sync it. */
START_TEST(workers_get_state_dir_and_sync)
{
	char	 want[600], path[64], args[4096];
	pid_t	 pids[4];
	FILE	*f;
	size_t	 n, i;

	memset(&T, 0, sizeof(T));
	it_mock_start(&T);
	it_config(&T, "\"min_workers\": 1, \"db_synchronous\": \"full\"",
	    NULL);
	it_gateway_start(&T, NULL);
	ck_assert_uint_ge(it_worker_pids(&T, pids, 4), 1);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pids[0]);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(args, 1, sizeof(args) - 1, f);
	fclose(f);
	for (i = 0; i < n; i++)		/* NULs between arguments */
		if (args[i] == '\0')
			args[i] = ' ';
	args[n] = '\0';
	snprintf(want, sizeof(want), "--state-dir %s/state --db-sync full ",
	    T.it_dir);
	ck_assert_msg(strstr(args, want) != NULL, "worker args: %s", args);
	it_stop_clean(&T);
}
END_TEST

/* A state_dir that cannot be one stops the gateway at start, with a
 * message saying so; the path is left alone. */
START_TEST(state_dir_must_be_a_directory)
{
	char	 bin[300], file[300], log[300], buf[2048];
	pid_t	 pid;
	int	 st, fd;
	FILE	*f;
	size_t	 n;

	memset(&T, 0, sizeof(T));
	it_config(&T, NULL, NULL);
	snprintf(bin, sizeof(bin), "%s/sluice-gateway", T.it_build);
	snprintf(file, sizeof(file), "%s/a-file", T.it_dir);
	snprintf(log, sizeof(log), "%s/gateway.log", T.it_dir);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fclose(f);
	if ((pid = fork()) == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execl(bin, bin, "--config-dir", T.it_dir, "--listen",
		    "127.0.0.1:0", "--state-dir", file, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 78,
	    "status %d, want exit 78 (EX_CONFIG)", st);
	ck_assert_ptr_nonnull(f = fopen(log, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	ck_assert_msg(strstr(buf, "a-file (state_dir, --state-dir) exists but "
	    "is not a directory") != NULL, "log: %s", buf);
	ck_assert_int_eq(access(file, F_OK), 0);
	it_stop(&T, 1000);
}
END_TEST

static Suite *
store_it_suite(void)
{
	Suite	*s = suite_create("store_it");
	TCase	*tc = tcase_create("lock");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, lock_taken_and_dropped);
	tcase_add_test(tc, lock_held_ends_the_workflow);
	tcase_add_test(tc, second_worker_sees_the_lock);
	tcase_add_test(tc, lock_without_id);
	tcase_add_test(tc, workers_get_state_dir_and_sync);
	tcase_add_test(tc, state_dir_must_be_a_directory);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	umask(T_UMASK);
	return check_main(store_it_suite());
}
