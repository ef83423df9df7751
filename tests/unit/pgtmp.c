/* pgtmp.c - tests: a throwaway PostgreSQL cluster in a temporary folder, on a Unix socket (and loopback TCP if asked), removed afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pgtmp.h"
#include "watchdog.h"

#define PG_BINDIR	"/usr/lib/postgresql/15/bin"	/* Debian 12 */
#define PG_USER		"sluice"	/* the cluster's superuser */

/* Where initdb and pg_ctl are: SLUICE_PG_BINDIR, else what pg_config
 * says, else Debian 12's folder. */
static void
bindir(char *out, size_t len)
{
	const char	*env = getenv("SLUICE_PG_BINDIR");
	FILE		*p;

	snprintf(out, len, "%s", env != NULL ? env : PG_BINDIR);
	if (env != NULL || (p = popen("pg_config --bindir 2>/dev/null",
	    "r")) == NULL)
		return;
	if (fgets(out, (int)len, p) == NULL)
		snprintf(out, len, "%s", PG_BINDIR);
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

/*
 * initdb and the server refuse to run as root (a server bug must not
 * own the machine). The test suites run as root in CI, so there the
 * cluster's folder goes to "nobody" and the commands run as nobody
 * after a setuid in the child; as anyone else they run as is.
 */
static int
drop_root(const char *dir)
{
	struct passwd	*pw;

	if (geteuid() != 0)
		return 0;
	if ((pw = getpwnam("nobody")) == NULL) {
		fprintf(stderr, "pgtmp: running as root and there is no user "
		    "'nobody' to run PostgreSQL as\n");
		return -1;
	}
	if (dir != NULL)
		return chown(dir, pw->pw_uid, pw->pw_gid);
	if (setgroups(0, NULL) == -1 || setgid(pw->pw_gid) == -1 ||
	    setuid(pw->pw_uid) == -1)
		return -1;
	return 0;
}

/* Run argv (as nobody when root), its output appended to DIR/pgtmp.log.
 * Its exit status, or -1. */
static int
run(struct pgtmp *pt, char *const argv[])
{
	char	 log[96];
	pid_t	 pid;
	int	 st, fd;

	snprintf(log, sizeof(log), "%s/pgtmp.log", pt->pt_dir);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) ==
		    -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1 ||
		    drop_root(NULL) == -1 || chdir(pt->pt_dir) == -1)
			_exit(126);
		close(fd);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Show what went wrong: the commands' output and the server's log. */
static void
show_logs(const struct pgtmp *pt, const char *what, const char *step)
{
	const char	*logs[] = { "pgtmp.log", "server.log" };
	char		 path[96], line[512];
	FILE		*f;
	size_t		 i;

	fprintf(stderr, "*** %s: PostgreSQL cluster in %s: %s failed\n", what,
	    pt->pt_dir, step);
	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", pt->pt_dir, logs[i]);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			fprintf(stderr, "    %s", line);
		fclose(f);
	}
}

/* Clients on other hosts (other network namespaces) may connect
 * without a password, as local ones may: the cluster listens on a
 * private test address only. 0, or -1. */
static int
hba_any(const struct pgtmp *pt)
{
	char	 path[96];
	FILE	*f;
	int	 rc;

	snprintf(path, sizeof(path), "%s/data/pg_hba.conf", pt->pt_dir);
	if ((f = fopen(path, "a")) == NULL)
		return -1;
	rc = fputs("host all all 0.0.0.0/0 trust\n", f) < 0 ? -1 : 0;
	return fclose(f) == 0 ? rc : -1;
}

/* pg_ctl start on the cluster's data folder: 0, or -1. */
static int
server_start(struct pgtmp *pt, const char *bin)
{
	char	 pg_ctl[192], data[96], slog[96], opts[320];
	char	*start_argv[] = { pg_ctl, "start", "-w", "-t", "60", "-D",
		    data, "-l", slog, "-o", opts, NULL };

	snprintf(pg_ctl, sizeof(pg_ctl), "%s/pg_ctl", bin);
	snprintf(data, sizeof(data), "%s/data", pt->pt_dir);
	snprintf(slog, sizeof(slog), "%s/server.log", pt->pt_dir);
	/* no TCP unless asked: the socket in our own folder, whose port
	 * number only names it (.s.PGSQL.<port>), so no other cluster is
	 * met */
	snprintf(opts, sizeof(opts), "-c listen_addresses='%s' "
	    "-c unix_socket_directories='%s' -p %d -c fsync=off "
	    "-c full_page_writes=off -c synchronous_commit=off "
	    "-c shared_buffers=16MB -c min_wal_size=32MB "
	    "-c max_wal_size=32MB", pt->pt_addr[0] != '\0' ? pt->pt_addr :
	    pt->pt_tcp ? "127.0.0.1" : "", pt->pt_dir, pt->pt_port);
	return run(pt, start_argv) == 0 ? 0 : -1;
}

static int
init_and_start(struct pgtmp *pt, const char *bin, const char *what)
{
	char	 initdb[192], data[96];
	char	*init_argv[] = { initdb, "-D", data, "-U", PG_USER,
		    "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync",
		    "--no-instructions", NULL };

	snprintf(initdb, sizeof(initdb), "%s/initdb", bin);
	snprintf(data, sizeof(data), "%s/data", pt->pt_dir);
	if (run(pt, init_argv) != 0) {
		show_logs(pt, what, "initdb");
		return -1;
	}
	if (pt->pt_addr[0] != '\0' && hba_any(pt) == -1) {
		show_logs(pt, what, "writing pg_hba.conf");
		return -1;
	}
	if (server_start(pt, bin) == -1) {
		show_logs(pt, what, "pg_ctl start");
		return -1;
	}
	pt->pt_up = true;
	return 0;
}

/* The watchdog's cleanup (test_watchdog): a cluster must not outlive
 * the tests that use it, even killed. */
static void
stop_cb(void *pt)
{
	pgtmp_stop(pt);
}

/* A TCP port of 127.0.0.1 that is free now, or 0. */
static int
free_port(void)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 fd, port = 0;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

static int
start(struct pgtmp *pt, const char *what, bool tcp, const char *addr)
{
	char	 bin[160], path[192];

	memset(pt, 0, sizeof(*pt));
	pt->pt_tcp = tcp;
	snprintf(pt->pt_addr, sizeof(pt->pt_addr), "%s", addr);
	bindir(bin, sizeof(bin));
	snprintf(path, sizeof(path), "%s/initdb", bin);
	if (access(path, X_OK) == -1) {
		fprintf(stderr, "*** %s: PostgreSQL tests SKIPPED: PostgreSQL "
		    "not installed (no %s; Debian: apt-get install "
		    "postgresql)\n", what, path);
		return -1;
	}
	snprintf(pt->pt_dir, sizeof(pt->pt_dir), "/tmp/sluice-pg.XXXXXX");
	if (mkdtemp(pt->pt_dir) == NULL || drop_root(pt->pt_dir) == -1) {
		fprintf(stderr, "*** %s: PostgreSQL cluster: %s: %s\n", what,
		    pt->pt_dir, strerror(errno));
		return -1;
	}
	pt->pt_port = tcp ? free_port() : 20000 + (int)(getpid() % 30000);
	if (pt->pt_port == 0 || init_and_start(pt, bin, what) == -1) {
		if (pt->pt_port == 0)
			fprintf(stderr, "*** %s: PostgreSQL cluster: no free "
			    "TCP port\n", what);
		pgtmp_stop(pt);
		return -1;
	}
	test_watchdog(stop_cb, pt);
	return 0;
}

int
pgtmp_start(struct pgtmp *pt, const char *what)
{
	return start(pt, what, false, "");
}

int
pgtmp_start_tcp(struct pgtmp *pt, const char *what)
{
	return start(pt, what, true, "");
}

int
pgtmp_start_on(struct pgtmp *pt, const char *what, const char *addr)
{
	return start(pt, what, true, addr);
}

/* A connection to the cluster's "postgres" database, or NULL after
 * saying why on stderr. */
static PGconn *
admin_conn(const struct pgtmp *pt)
{
	char	 conninfo[160];
	PGconn	*c;

	snprintf(conninfo, sizeof(conninfo), "host=%s port=%d user=" PG_USER
	    " dbname=postgres", pt->pt_dir, pt->pt_port);
	c = PQconnectdb(conninfo);
	if (PQstatus(c) == CONNECTION_OK)
		return c;
	fprintf(stderr, "pgtmp: %s", PQerrorMessage(c));
	PQfinish(c);
	return NULL;
}

/* Run sql on c; 0 when it did, else -1 with the reason on stderr. */
static int
admin_exec(PGconn *c, const char *sql)
{
	PGresult	*r = PQexec(c, sql);
	int		 ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
			    PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		fprintf(stderr, "pgtmp: %s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	return ok ? 0 : -1;
}

int
pgtmp_newdb(struct pgtmp *pt, char *url, size_t len)
{
	char		 sql[96], name[48];
	struct timespec	 ts;
	PGconn		*c;
	int		 rc;

	/* unique in every forked test process; pgtmp_dropdbs finds the
	 * process's own by the t<pid>_ prefix */
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(name, sizeof(name), "t%d_%u_%ld", (int)getpid(),
	    pt->pt_ndb++, ts.tv_nsec);
	if ((c = admin_conn(pt)) == NULL)
		return -1;
	/* FILE_COPY: the template's files are copied, not written through
	 * the WAL (PostgreSQL 15's default), which would cost the suite
	 * hundreds of megabytes of disk */
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s STRATEGY FILE_COPY",
	    name);
	rc = admin_exec(c, sql);
	PQfinish(c);
	if (pt->pt_addr[0] != '\0')
		snprintf(url, len, "postgresql://" PG_USER "@%s:%d/%s",
		    pt->pt_addr, pt->pt_port, name);
	else
		snprintf(url, len, "postgresql:///%s?host=%s&port=%d&user="
		    PG_USER, name, pt->pt_dir, pt->pt_port);
	return rc;
}

int
pgtmp_dropdbs(struct pgtmp *pt)
{
	char		 sql[160];
	PGconn		*c;
	PGresult	*r;
	int		 i, rc = 0;

	if (pt->pt_ndb == 0)
		return 0;
	if ((c = admin_conn(pt)) == NULL)
		return -1;
	snprintf(sql, sizeof(sql), "SELECT datname FROM pg_database WHERE "
	    "datname LIKE 't%d\\_%%'", (int)getpid());
	r = PQexec(c, sql);
	for (i = 0; PQresultStatus(r) == PGRES_TUPLES_OK && i < PQntuples(r);
	    i++) {
		snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)",
		    PQgetvalue(r, i, 0));
		rc |= admin_exec(c, sql);
	}
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "pgtmp: %s", PQresultErrorMessage(r));
		rc = -1;
	}
	PQclear(r);
	PQfinish(c);
	pt->pt_ndb = 0;
	return rc;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

int
pgtmp_pause(struct pgtmp *pt)
{
	char	 bin[160], pg_ctl[192], data[96];
	char	*stop_argv[] = { pg_ctl, "stop", "-m", "immediate", "-w",
		    "-D", data, NULL };

	if (!pt->pt_up)
		return 0;
	snprintf(data, sizeof(data), "%s/data", pt->pt_dir);
	bindir(bin, sizeof(bin));
	snprintf(pg_ctl, sizeof(pg_ctl), "%s/pg_ctl", bin);
	pt->pt_up = false;
	if (run(pt, stop_argv) == 0)
		return 0;
	fprintf(stderr, "pgtmp: pg_ctl stop failed in %s\n", pt->pt_dir);
	return -1;
}

int
pgtmp_resume(struct pgtmp *pt)
{
	char	 bin[160];

	if (pt->pt_up || pt->pt_dir[0] == '\0')
		return pt->pt_up ? 0 : -1;
	bindir(bin, sizeof(bin));
	if (server_start(pt, bin) == -1) {
		show_logs(pt, "pgtmp_resume", "pg_ctl start");
		return -1;
	}
	pt->pt_up = true;
	return 0;
}

void
pgtmp_stop(struct pgtmp *pt)
{
	char	 data[96];

	if (pt->pt_dir[0] == '\0')
		return;
	snprintf(data, sizeof(data), "%s/data", pt->pt_dir);
	if (access(data, F_OK) == -1)
		pt->pt_up = false;	/* stopped and removed already */
	pgtmp_pause(pt);
	if (getenv("STORE_KEEP") == NULL)
		nftw(pt->pt_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	pt->pt_dir[0] = '\0';
}
