/* node_arith.c - ArithmeticProcessor: one "number operator number" sum, printed as Python would. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/pyfmt.h"
#include "../../common/pystr.h"
#include "../core/node.h"

/* Past Python's whitespace (re's \s on a str) from p, before end. */
static const char *
arith_skip(const char *p, const char *end)
{
	int	 w;

	while (p < end && (w = pystr_space(p, (size_t)(end - p))) > 0)
		p += w;
	return p;
}

/* -?\d+(\.\d+)? at p: the end of the number, or NULL. */
static const char *
arith_number(const char *p)
{
	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.' && isdigit((unsigned char)p[1])) {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p;
}

/* Match ^-?\d+(\.\d+)?\s*[+\-*\/]\s*-?\d+(\.\d+)?$ on s[0..end) and
 * read the operands. Returns the operator, or 0 when it does not match. */
static char
arith_parse(const char *s, const char *end, double *a, double *b)
{
	const char	*p, *q;
	char		 op;

	if ((p = arith_number(s)) == NULL)
		return 0;
	*a = strtod(s, NULL);
	p = arith_skip(p, end);
	if (p >= end || strchr("+-*/", *p) == NULL)
		return 0;
	op = *p++;
	p = arith_skip(p, end);
	if ((q = arith_number(p)) == NULL || q != end)
		return 0;
	*b = strtod(p, NULL);
	return op;
}

/* WilmerAI: str(int(r)) when r.is_integer(), else str(r). Python's int
 * of a double is exact, which is what %.0f prints; inf and nan are not
 * integers and print as inf/nan. */
static void
arith_print(struct buf *out, double r)
{
	if (isnan(r))
		buf_adds(out, "nan");
	else if (isinf(r))
		buf_adds(out, r < 0 ? "-inf" : "inf");
	else if (r == 0)
		buf_adds(out, "0");	/* int(-0.0) is 0 */
	else if (r == floor(r))
		buf_printf(out, "%.0f", r);
	else
		pyfmt_float(out, r);
}

static int
arith_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char		*s = node_str(x, "expression"), *p, *end;
	double		 a = 0, b = 0, r;
	size_t		 off, len;
	char		 op;

	pystr_strip(s, strlen(s), true, true, &off, &len);
	p = s + off;
	end = p + len;
	op = arith_parse(p, end, &a, &b);
	if (op == 0 || (op == '/' && b == 0)) {
		buf_adds(out, "-1");
		free(s);
		return 0;
	}
	if (op == '+')
		r = a + b;
	else if (op == '-')
		r = a - b;
	else if (op == '*')
		r = a * b;
	else
		r = a / b;
	arith_print(out, r);
	free(s);
	return 0;
}

const struct node_type node_arith = { "ArithmeticProcessor", arith_run,
    false };
