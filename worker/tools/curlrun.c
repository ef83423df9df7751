/* curlrun.c - CurlCommand's curl run without a shell, under its timeout and cap, and its result shaped as WilmerAI shapes it (addendum A3.4.4). */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#include "../../common/clock.h"
#include "../../common/jsonw.h"
#include "../../common/pystr.h"
#include "../../common/utf8.h"
#include "child.h"
#include "childrun.h"
#include "curlrun.h"

#define CR_MAX_WAIT_S	(30.0 * 86400)	/* a longer timeout waits this */

/* What curl left: its output decoded as Python decodes it. */
struct cr_res {
	struct buf	 r_out;		/* stdout, U+FFFD for bad bytes */
	struct buf	 r_err;		/* stderr, likewise */
	int		 r_rc;		/* Python's returncode */
};

/* {"stdout": s, "stderr": e, "returncode": rc|null[, "error": msg]}
 * as Python's json.dumps writes it. */
static void
cr_full(struct buf *out, const struct cr_res *r, bool rc, const char *msg)
{
	json_t	*o = json_object();

	json_object_set_new(o, "stdout", json_stringn(r->r_out.b_data != NULL ?
	    r->r_out.b_data : "", r->r_out.b_len));
	json_object_set_new(o, "stderr", json_stringn(r->r_err.b_data != NULL ?
	    r->r_err.b_data : "", r->r_err.b_len));
	json_object_set_new(o, "returncode", rc ? json_integer(r->r_rc) :
	    json_null());
	if (msg != NULL)
		json_object_set_new(o, "error", json_string(msg));
	jsonw_dump(out, o, JSONW_PYTHON);
	json_decref(o);
}

/* A timeout or the cap: msg raised, or returned as the format says. */
static enum curl_end
cr_failed(const struct curlcmd *cc, const struct cr_res *r, const char *msg,
    struct buf *out, struct buf *err)
{
	if (!cc->cc_return) {
		buf_adds(err, msg);
		return CURL_RAISE;
	}
	if (cc->cc_fmt == CURL_FULL)
		cr_full(out, r, false, msg);
	else
		buf_adds(out, msg);
	return CURL_OUTPUT;
}

/* curl ran to its end (exit status r_rc). */
static enum curl_end
cr_done(const struct curlcmd *cc, const struct cr_res *r, struct buf *out,
    struct buf *err)
{
	const char	*e = r->r_err.b_data != NULL ? r->r_err.b_data : "";
	size_t		 off, len;

	if (r->r_rc != 0 && !cc->cc_return) {
		pystr_strip(e, r->r_err.b_len, true, true, &off, &len);
		buf_printf(err, "CurlCommand exited with status %d: ",
		    r->r_rc);
		buf_add(err, e + off, len);
		return CURL_RAISE;
	}
	if (cc->cc_fmt == CURL_FULL) {
		cr_full(out, r, true, NULL);
		return CURL_OUTPUT;
	}
	buf_add(out, r->r_out.b_data, r->r_out.b_len);
	if (cc->cc_fmt == CURL_BOTH)
		buf_add(out, r->r_err.b_data, r->r_err.b_len);
	return CURL_OUTPUT;
}

/* How the run ended, shaped. */
static enum curl_end
cr_judge(const struct curlcmd *cc, const struct child *c,
    enum child_end end, const struct cr_res *r, struct buf *out,
    struct buf *err)
{
	struct buf	 msg = BUF_INIT;
	enum curl_end	 e;

	switch (end) {
	case CHILD_CANCELLED:
		return CURL_CANCELLED;
	case CHILD_TIMEOUT:
		buf_adds(&msg, "curl timed out after ");
		xf_num_repr(&msg, &cc->cc_timeout);
		buf_adds(&msg, " seconds");
		break;
	case CHILD_CAP:
		buf_printf(&msg, "CurlCommand response exceeded the %lld-byte "
		    "cap (maxResponseBytes).", cc->cc_maxbytes);
		break;
	case CHILD_FAILED:
		buf_adds(err, "CurlCommand lost track of curl");
		return CURL_RAISE;
	case CHILD_DONE:
		if (c->ch_lost) {
			buf_adds(err, "CurlCommand lost track of curl");
			return CURL_RAISE;
		}
		return cr_done(cc, r, out, err);
	}
	e = cr_failed(cc, r, msg.b_data, out, err);
	buf_free(&msg);
	return e;
}

enum curl_end
curlcmd_run(const struct curlcmd *cc, const struct transport_hooks *hooks,
    struct buf *out, struct buf *err)
{
	struct child_spec	 cs = { "curl", cc->cc_argv, NULL, NULL, false,
				    true };
	size_t			 cap = cc->cc_maxbytes > 0 ?
				    (size_t)cc->cc_maxbytes : SIZE_MAX;
	struct child_io		 io = { NULL, 0, cap, cap, BUF_INIT, BUF_INIT };
	struct cr_res		 r = { BUF_INIT, BUF_INIT, 0 };
	struct child		 c;
	double			 t = cc->cc_timeout.xn_v;
	enum child_end		 end;
	enum curl_end		 e;

	if (child_spawn(&c, &cs, err) == -1)
		return CURL_RAISE;
	if (!(t < CR_MAX_WAIT_S))
		t = CR_MAX_WAIT_S;
	end = child_run(&c, &io, clock_mono_ms() + (uint64_t)(t * 1000),
	    hooks);
	if (end == CHILD_DONE)
		child_kill(&c);
	else
		child_run_end(&c, &io);
	utf8_repair(&r.r_out, io.ci_out.b_data, io.ci_out.b_len);
	utf8_repair(&r.r_err, io.ci_err.b_data, io.ci_err.b_len);
	r.r_rc = WIFEXITED(c.ch_status) ? WEXITSTATUS(c.ch_status) :
	    -WTERMSIG(c.ch_status);
	e = cr_judge(cc, &c, end, &r, out, err);
	buf_free(&io.ci_out);
	buf_free(&io.ci_err);
	buf_free(&r.r_out);
	buf_free(&r.r_err);
	return e;
}
