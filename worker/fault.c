/* fault.c - test-only fault injection, driven by the SLUICE_FAULT variable. */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../proto/frame.h"
#include "../proto/proto.h"
#include "fault.h"

#define ROGUE_DEPTH	10000	/* nesting of a "deep" rogue frame */

/* The ways a rogue worker breaks the protocol (rogue=PATH). */
enum rogue_kind {
	R_HUGE, R_SHORT, R_TRUNC, R_GARBAGE, R_DEEP, R_TYPES, R_VERSION,
	R_FOREIGN, R_MIXED, R_NKINDS
};

static const char *const rogue_names[R_NKINDS] = {
	"huge", "short", "truncated", "garbage", "deep", "types", "version",
	"foreign", "mixed",
};

static const char	*faults;
static int		 fault_fd = -1;

static bool
has(const char *name)
{
	const char	*p;
	size_t		 n = strlen(name);

	for (p = faults; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == faults || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/* The N of a "name=N" entry, or 0 without one. */
static uint64_t
number(const char *name)
{
	const char	*p;
	size_t		 n = strlen(name);

	for (p = faults; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == faults || p[-1] == ',') && p[n] == '=')
			return strtoull(p + n + 1, NULL, 10);
	return 0;
}

/* The VALUE of a "name=VALUE" entry into out; false without one. */
static bool
text(const char *name, char *out, size_t len)
{
	const char	*p, *e;
	size_t		 n = strlen(name);

	for (p = faults; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == faults || p[-1] == ',') && p[n] == '=') {
			p += n + 1;
			e = strchr(p, ',');
			snprintf(out, len, "%.*s", (int)(e != NULL ? e - p :
			    (ptrdiff_t)strlen(p)), p);
			return true;
		}
	return false;
}

void
fault_init(int chan_fd)
{
	faults = getenv("SLUICE_FAULT");
	fault_fd = chan_fd;
	if (faults != NULL && *faults != '\0')
		log_warnx("fault injection active: %s", faults);
}

void
fault_at_start(void)
{
	char	 path[PATH_MAX];

	if (faults == NULL)
		return;
	if (text("crash_start", path, sizeof(path)) &&
	    access(path, F_OK) == 0) {
		log_warnx("fault: crash_start: %s exists", path);
		abort();
	}
	if (has("exit_config"))
		fatalx_code(EX_CONFIG, "fault: exit_config");
	if (has("ignore_term"))
		signal(SIGTERM, SIG_IGN);
	if (has("no_hello"))
		for (;;)
			pause();
}

/* Append a frame whose header says hdrlen, then n bytes of p. */
static void
raw_frame(struct buf *b, uint32_t hdrlen, const void *p, size_t n)
{
	unsigned char	 h[FRAME_HDRLEN];

	frame_hdr_put(h, hdrlen);
	buf_add(b, h, sizeof(h));
	buf_add(b, p, n);
}

/* A well-formed REQ_CHUNK naming rqid: valid in every way but the id. */
static void
chunk_frame(struct buf *b, const char *rqid, uint64_t seq)
{
	struct proto_msg m;

	proto_msg_init(&m, PROTO_REQ_CHUNK, rqid);
	m.m_u.req_chunk.seq = seq;
	m.m_u.req_chunk.content = str_from("rogue");
	(void)proto_encode(b, &m);
}

/* Half of a REQ_CHUNK's MessagePack, with a header that matches the
 * half: the frame is whole, its payload is cut short. */
static void
trunc_frame(struct buf *b, const char *rqid)
{
	struct buf	 t = BUF_INIT;
	size_t		 n;

	chunk_frame(&t, rqid, 0);
	n = (t.b_len - FRAME_HDRLEN) / 2;
	raw_frame(b, (uint32_t)n, t.b_data + FRAME_HDRLEN, n);
	buf_free(&t);
}

/* ROGUE_DEPTH one-element arrays, one inside the other. */
static void
deep_frame(struct buf *b)
{
	unsigned char	 h[FRAME_HDRLEN];
	size_t		 i;

	frame_hdr_put(h, ROGUE_DEPTH + 1);
	buf_add(b, h, sizeof(h));
	buf_reserve(b, ROGUE_DEPTH + 1);
	for (i = 0; i < ROGUE_DEPTH; i++)
		buf_addc(b, (char)0x91);
	buf_addc(b, (char)0xc0);
}

/* Frame i of a rogue burst of kind k, appended to b. */
static void
rogue_frame(struct buf *b, enum rogue_kind k, const char *rqid, unsigned i)
{
	/* REQ_CHUNK whose seq is a string and content a number, then an
	 * envelope whose version is a string. */
	static const unsigned char body_types[] = { 0x94, PROTO_VERSION,
	    PROTO_REQ_CHUNK, 0xc0, 0x82, 0xa3, 's', 'e', 'q', 0xa1, 'x',
	    0xa1, 'c', 0x2a };
	static const unsigned char env_types[] = { 0x94, 0xa1, '6', 0x03,
	    0xc0, 0x80 };
	/* A HEARTBEAT of protocol version 99: a rogue, not an upgrade. */
	static const unsigned char version[] = { 0x94, 99, PROTO_HEARTBEAT,
	    0xc0, 0x80 };
	static const unsigned char garbage[] = { 0xc1, 0xc1, 0xc1, 0xc1,
	    0xc1, 0xc1, 0xc1, 0xc1 };

	switch (k) {
	case R_HUGE:	raw_frame(b, UINT32_MAX, garbage, 8); break;
	case R_SHORT:	raw_frame(b, 1000, garbage, 8); break;
	case R_TRUNC:	trunc_frame(b, rqid); break;
	case R_GARBAGE:	raw_frame(b, sizeof(garbage), garbage,
			    sizeof(garbage)); break;
	case R_DEEP:	deep_frame(b); break;
	case R_TYPES:	if (i % 2 == 0)
				raw_frame(b, sizeof(body_types), body_types,
				    sizeof(body_types));
			else
				raw_frame(b, sizeof(env_types), env_types,
				    sizeof(env_types));
			break;
	case R_VERSION:	raw_frame(b, sizeof(version), version,
			    sizeof(version)); break;
	case R_FOREIGN:	chunk_frame(b, rqid, i); break;
	default:	/* mixed: every kind in turn but the silent one */
			k = (enum rogue_kind)(i % R_MIXED);
			rogue_frame(b, k == R_SHORT ? R_GARBAGE : k, rqid, i);
			break;
	}
}

/* Read and remove the claimed trigger file: "KIND [COUNT [RQID]]".
 * Returns the kind, or -1 when it names none. */
static int
rogue_spec(const char *claimed, unsigned *count, char *rqid)
{
	char	 kind[16] = "";
	FILE	*f = fopen(claimed, "r");
	int	 k;

	if (f != NULL) {
		if (fscanf(f, "%15s %u %64s", kind, count, rqid) < 1)
			kind[0] = '\0';
		fclose(f);
	}
	unlink(claimed);
	for (k = 0; k < R_NKINDS; k++)
		if (strcmp(kind, rogue_names[k]) == 0)
			return k;
	log_warnx("fault: rogue: unknown kind '%s'", kind);
	return -1;
}

/* Take one trigger file of dir by renaming it to a hidden name of our
 * own (the rename decides between workers); false when none is left. */
static bool
rogue_claim(const char *dir, char *claimed, size_t len)
{
	DIR		*d = opendir(dir);
	struct dirent	*de;
	char		 from[PATH_MAX];
	bool		 ok = false;

	while (d != NULL && !ok && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(from, sizeof(from), "%s/%s", dir,
		    de->d_name) >= sizeof(from) ||
		    (size_t)snprintf(claimed, len, "%s/.%s.%d", dir,
		    de->d_name, (int)getpid()) >= len)
			continue;
		ok = rename(from, claimed) == 0;
	}
	if (d != NULL)
		closedir(d);
	return ok;
}

/* rogue=DIR: a worker that claims a trigger file of DIR writes the
 * malformed frames it asks for on its channel, then stays silent until
 * it is killed. The others carry on. */
static void
rogue_run(const char *dir)
{
	char		 claimed[PATH_MAX], rqid[PROTO_MAX_RQID + 1] = "rogue";
	unsigned	 count = 10000, i;
	struct buf	 b = BUF_INIT;
	int		 k;

	if (!rogue_claim(dir, claimed, sizeof(claimed)) ||
	    (k = rogue_spec(claimed, &count, rqid)) == -1)
		return;
	log_warnx("fault: rogue: %u %s frames", count, rogue_names[k]);
	for (i = 0; i < count; i++) {
		buf_reset(&b);
		rogue_frame(&b, (enum rogue_kind)k, rqid, i);
		if (frame_write_all(fault_fd, b.b_data, b.b_len) == -1 ||
		    k == R_SHORT)
			break;
	}
	buf_free(&b);
	for (;;)
		pause();
}

void
fault_on_request(void)
{
	static const unsigned char bad[] = { 0, 0, 0, 3, 0xc1, 0xc1, 0xc1 };
	char	 dir[PATH_MAX];

	if (faults == NULL)
		return;
	if (text("rogue", dir, sizeof(dir)))
		rogue_run(dir);
	if (has("crash"))
		abort();
	if (has("bad_frame"))
		(void)!write(fault_fd, bad, sizeof(bad));
	if (has("hang"))
		for (;;)
			pause();
}

int
fault_version_skew(void)
{
	return faults != NULL && has("bad_version") ? 1 : 0;
}

uint64_t
fault_after_ms(void)
{
	return number("after_ms");
}
