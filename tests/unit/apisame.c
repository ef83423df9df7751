/* apisame.c - api_parse checked against the jansson-tree path it replaced: the same answer, byte for byte. */
#include <check.h>
#include <ctype.h>
#include <string.h>

#include "apisame.h"

/* The ids openai_tool_calls draws ("call_" and 24 hex digits) blanked. */
static void
mask_ids(struct buf *b)
{
	char	*p = b->b_data, *end = b->b_data + b->b_len;
	size_t	 i;

	while (p != NULL && (p = memmem(p, (size_t)(end - p), "call_", 5)) !=
	    NULL) {
		p += 5;
		for (i = 0; i < 24 && p + i < end && isxdigit((unsigned char)
		    p[i]); i++)
			;
		if (i == 24)
			memset(p, 'x', 24);
	}
}

int
api_parse_same(int api, const char *body, size_t len, const char *rqid,
    const struct api_limits *lim, struct api_req *out, int *status,
    char err[API_ERRLEN])
{
	struct api_req	 old;
	char		 olderr[API_ERRLEN] = "";
	int		 oldst = 0, r, oldr;

	oldr = api_parse_tree(api, body, len, rqid, lim, &old, &oldst, olderr);
	err[0] = '\0';
	r = api_parse(api, body, len, rqid, lim, out, status, err);
	ck_assert_msg(r == oldr, "api %d: scanned %d, tree %d: %.*s", api, r,
	    oldr, (int)(len > 200 ? 200 : len), body);
	if (r == -1) {
		ck_assert_int_eq(*status, oldst);
		ck_assert_str_eq(err, olderr);
	} else {
		struct buf	 a = BUF_INIT;

		buf_add(&a, out->ar_start.b_data, out->ar_start.b_len);
		mask_ids(&a);
		mask_ids(&old.ar_start);
		ck_assert_msg(a.b_len == old.ar_start.b_len && memcmp(a.b_data,
		    old.ar_start.b_data, a.b_len) == 0, "api %d: frames "
		    "differ: %.*s", api, (int)(len > 200 ? 200 : len), body);
		buf_free(&a);
	}
	api_req_clear(&old);
	return r;
}
