/* netlab.c - integration tests: hosts of a small network for a cluster test, as network namespaces on a bridge or, without the rights, as loopback addresses; removed afterwards. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/watchdog.h"
#include "netlab.h"

static const char *const host_name[NL_NHOSTS] = { "host", "db", "a", "b" };

/* Debian's iproute2 puts ip in /usr/sbin (/sbin on older systems). */
static const char *
ip_bin(void)
{
	static const char *const where[] = { "/usr/sbin/ip", "/sbin/ip",
	    "/usr/bin/ip", "/bin/ip" };
	size_t	 i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

/* Run `ip` with the words of fmt (split on spaces), its output appended
 * to the lab's ip.log. 0 when it exits 0, else -1. */
static int
ip(const struct netlab *nl, const char *fmt, ...)
{
	char		 line[256], log[96], *argv[16], *save, *w;
	const char	*bin = ip_bin();
	va_list		 ap;
	size_t		 n = 0;
	pid_t		 pid;
	int		 st, fd;

	if (bin == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	argv[n++] = "ip";
	for (w = strtok_r(line, " ", &save); w != NULL && n < 15;
	    w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	snprintf(log, sizeof(log), "%s/ip.log", nl->nl_dir);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		/* the lab's folder is gone when a watchdog cleans again */
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) ==
		    -1)
			fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(bin, argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* One namespace on the bridge: its end of a veth pair is eth0 with the
 * host's address, the other end is on the bridge. */
static int
ns_host(const struct netlab *nl, enum nl_host h)
{
	const char	*t = nl->nl_tag, *n = host_name[h];

	if (ip(nl, "netns add %s-%s", t, n) == -1 ||
	    ip(nl, "link add %s-%s type veth peer name eth0 netns %s-%s",
	    t, n, t, n) == -1 ||
	    ip(nl, "link set %s-%s master %s", t, n, t) == -1 ||
	    ip(nl, "link set %s-%s up", t, n) == -1 ||
	    ip(nl, "-n %s-%s addr add %s/24 dev eth0", t, n,
	    nl->nl_addr[h]) == -1 ||
	    ip(nl, "-n %s-%s link set eth0 up", t, n) == -1 ||
	    ip(nl, "-n %s-%s link set lo up", t, n) == -1)
		return -1;
	return 0;
}

/* The bridge and the namespaces; -1 (nl_why says why) when any step
 * fails. */
static int
ns_make(struct netlab *nl)
{
	int	 h, sub = 20 + (int)(getpid() % 200);

	if (getenv("SLUICE_NETLAB_NO_NS") != NULL) {
		snprintf(nl->nl_why, sizeof(nl->nl_why), "SLUICE_NETLAB_NO_NS "
		    "is set");
		return -1;
	}
	if (geteuid() != 0) {
		snprintf(nl->nl_why, sizeof(nl->nl_why), "not root");
		return -1;
	}
	if (ip_bin() == NULL) {
		snprintf(nl->nl_why, sizeof(nl->nl_why), "no ip command "
		    "(Debian: apt-get install iproute2)");
		return -1;
	}
	for (h = 0; h < NL_NHOSTS; h++)
		snprintf(nl->nl_addr[h], sizeof(nl->nl_addr[h]),
		    "10.231.%d.%d", sub, h + 1);
	if (ip(nl, "link add %s type bridge", nl->nl_tag) == -1 ||
	    ip(nl, "addr add %s/24 dev %s", nl->nl_addr[NL_HOST],
	    nl->nl_tag) == -1 || ip(nl, "link set %s up", nl->nl_tag) == -1) {
		snprintf(nl->nl_why, sizeof(nl->nl_why), "`ip link add ... "
		    "type bridge` failed (see %s/ip.log)", nl->nl_dir);
		return -1;
	}
	for (h = NL_DB; h < NL_NHOSTS; h++)
		if (ns_host(nl, h) == -1) {
			snprintf(nl->nl_why, sizeof(nl->nl_why), "`ip netns "
			    "add` or its veth pair failed (see %s/ip.log)",
			    nl->nl_dir);
			return -1;
		}
	return 0;
}

/* Whether pid's environment holds an entry starting with want. */
static bool
environ_has(pid_t pid, const char *want)
{
	char	 path[64], env[65536];
	size_t	 n, len = strlen(want), i;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	n = fread(env, 1, sizeof(env) - 1, f);
	fclose(f);
	env[n] = '\0';
	for (i = 0; i < n; i += strlen(env + i) + 1)
		if (strncmp(env + i, want, len) == 0)
			return true;
	return false;
}

/* Pids (not ours) whose environment has an entry starting with want. */
static size_t
pids_with(const char *want, pid_t *out, size_t max)
{
	DIR		*d = opendir("/proc");
	struct dirent	*e;
	size_t		 n = 0;
	pid_t		 pid;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		if ((pid = (pid_t)atoi(e->d_name)) <= 0 || pid == getpid())
			continue;
		if (environ_has(pid, want))
			out[n++] = pid;
	}
	closedir(d);
	return n;
}

const char *
netlab_mark(const struct netlab *nl, enum nl_host h)
{
	static char	 mark[NL_NHOSTS][48];

	snprintf(mark[h], sizeof(mark[h]), "SLUICE_NETLAB=%s-%s", nl->nl_tag,
	    host_name[h]);
	return mark[h];
}

size_t
netlab_pids(const struct netlab *nl, enum nl_host h, pid_t *out, size_t max)
{
	return pids_with(netlab_mark(nl, h), out, max);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

/* Remove each folder listed in the lab's "owned" file, then the lab's. */
static void
rm_owned(const struct netlab *nl)
{
	char	 path[96], line[300];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/owned", nl->nl_dir);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			line[strcspn(line, "\n")] = '\0';
			if (strncmp(line, "/tmp/sluice-", 12) == 0)
				nftw(line, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		}
		fclose(f);
	}
	nftw(nl->nl_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Everything the lab made goes: marked processes (SIGKILL), the
 * namespaces (the veth pairs go with them), the bridge, the folders. */
static void
cleanup(const struct netlab *nl)
{
	char	 want[48];
	pid_t	 pids[256];
	size_t	 i, n;
	int	 h, round;

	snprintf(want, sizeof(want), "SLUICE_NETLAB=%s-", nl->nl_tag);
	for (round = 0; round < 3; round++) {	/* forks between scans */
		n = pids_with(want, pids, 256);
		for (i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		if (n == 0)
			break;
		usleep(50000);
	}
	if (nl->nl_ns) {
		for (h = NL_DB; h < NL_NHOSTS; h++)
			ip(nl, "netns del %s-%s", nl->nl_tag, host_name[h]);
		ip(nl, "link del %s", nl->nl_tag);
	}
	rm_owned(nl);
}

/* The watchdog's cleanup (test_watchdog). */
static void
cleanup_cb(void *nl)
{
	cleanup(nl);
}

/* `ip netns` mounts /run/netns, and a file a namespace, where every
 * process of the machine sees them; a run that fails or is killed
 * leaves them behind (a fresh-machine root could not be removed). In a
 * mount namespace of the test's own, made before the watchdog is
 * forked, they go when its last process does. 0, or -1 with the
 * reason in nl_why. */
static int
private_mounts(struct netlab *nl)
{
	if (unshare(CLONE_NEWNS) == 0 &&
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		return 0;
	snprintf(nl->nl_why, sizeof(nl->nl_why), "a mount namespace of its "
	    "own: %s", strerror(errno));
	return -1;
}

void
netlab_up(struct netlab *nl)
{
	int	 h;

	memset(nl, 0, sizeof(*nl));
	nl->nl_root = -1;
	snprintf(nl->nl_tag, sizeof(nl->nl_tag), "slc%d", (int)getpid());
	snprintf(nl->nl_dir, sizeof(nl->nl_dir), "/tmp/sluice-netlab.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(nl->nl_dir));
	/* what there is to undo: nothing without a mount namespace */
	nl->nl_ns = private_mounts(nl) == 0;
	if (nl->nl_ns) {
		test_watchdog(cleanup_cb, nl);
		if (ns_make(nl) == 0 && (nl->nl_root = open("/proc/self/ns/net",
		    O_RDONLY | O_CLOEXEC)) != -1)
			return;
	}
	if (nl->nl_why[0] == '\0')
		snprintf(nl->nl_why, sizeof(nl->nl_why), "/proc/self/ns/net: "
		    "%s", strerror(errno));
	cleanup(nl);	/* the half-made network; the folder too */
	ck_assert_ptr_nonnull(mkdtemp(strcpy(nl->nl_dir,
	    "/tmp/sluice-netlab.XXXXXX")));
	nl->nl_ns = false;
	test_watchdog(cleanup_cb, nl);
	for (h = 0; h < NL_NHOSTS; h++)
		snprintf(nl->nl_addr[h], sizeof(nl->nl_addr[h]),
		    "127.0.0.%d", h + 1);
	fprintf(stderr, "\n*** check_cluster: NO NETWORK NAMESPACES (%s).\n"
	    "*** The cluster runs on loopback addresses 127.0.0.1-4 in this "
	    "machine's own network instead:\n*** the same scenarios, but "
	    "nodes are not separate hosts. Run as root with iproute2 for "
	    "the real test.\n\n", nl->nl_why);
}

void
netlab_down(struct netlab *nl)
{
	if (nl->nl_dir[0] == '\0')
		return;
	if (nl->nl_root != -1) {
		setns(nl->nl_root, CLONE_NEWNET);
		close(nl->nl_root);
		nl->nl_root = -1;
	}
	cleanup(nl);
	nl->nl_dir[0] = '\0';
}

void
netlab_enter(struct netlab *nl, enum nl_host h)
{
	char	 path[96];
	int	 fd;

	if (!nl->nl_ns)
		return;
	if (h == NL_HOST) {
		ck_assert_msg(setns(nl->nl_root, CLONE_NEWNET) == 0,
		    "setns back: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "/run/netns/%s-%s", nl->nl_tag,
	    host_name[h]);
	ck_assert_msg((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1,
	    "%s: %s", path, strerror(errno));
	ck_assert_msg(setns(fd, CLONE_NEWNET) == 0, "setns %s: %s", path,
	    strerror(errno));
	close(fd);
}

int
netlab_cable(const struct netlab *nl, enum nl_host h, bool up)
{
	if (!nl->nl_ns || h == NL_HOST)
		return -1;
	return ip(nl, "link set %s-%s %s", nl->nl_tag, host_name[h],
	    up ? "up" : "down");
}

void
netlab_own(struct netlab *nl, const char *dir)
{
	char	 path[96];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/owned", nl->nl_dir);
	ck_assert_ptr_nonnull(f = fopen(path, "a"));
	fprintf(f, "%s\n", dir);
	fclose(f);
}
