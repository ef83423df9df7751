/* node_cond.c - Conditional: a small comparison language evaluated to "TRUE" or "FALSE". */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../common/xmem.h"
#include "../core/node.h"

/* Deeper nesting is treated as an error (FALSE) rather than recursed. */
#define COND_MAX_DEPTH	100

enum ctt { CT_VAL, CT_CMP, CT_LP, CT_RP, CT_AND, CT_OR };
enum cop { OP_EQ, OP_NE, OP_GE, OP_LE, OP_GT, OP_LT };

struct ctok {
	enum ctt	 t_type;
	enum cop	 t_op;
	const char	*t_p;		/* CT_VAL: the text as written */
	size_t		 t_n;
};

struct cval {
	enum { CV_BOOL, CV_NUM, CV_STR } v_kind;
	double		 v_num;		/* CV_BOOL: 0 or 1 (Python's bool) */
	const char	*v_p;
	size_t		 v_n;
};

struct cparse {
	const struct ctok	*c_tok;
	size_t			 c_n, c_i;
	int			 c_depth;
	bool			 c_err;
};

/* Python's \w, with every non-ASCII byte counted as a letter. */
static bool
cond_wordc(const char *s, size_t i)
{
	unsigned char	 c = (unsigned char)s[i];

	return isalnum(c) || c == '_' || c >= 0x80;
}

/* Length of [a-zA-Z_][a-zA-Z0-9_]* at p, or 0. */
static size_t
cond_word(const char *p)
{
	size_t	 n = 0;

	if (!isalpha((unsigned char)*p) && *p != '_')
		return 0;
	while (isalnum((unsigned char)p[n]) || p[n] == '_')
		n++;
	return n;
}

/* Length of \d+(\.\d+)? at p, or 0. */
static size_t
cond_number(const char *p)
{
	size_t	 n = 0;

	while (isdigit((unsigned char)p[n]))
		n++;
	if (n > 0 && p[n] == '.' && isdigit((unsigned char)p[n + 1]))
		for (n++; isdigit((unsigned char)p[n]); n++)
			;
	return n;
}

/* \bWORD\b case-insensitively at s[i]. */
static bool
cond_keyword(const char *s, size_t i, const char *w)
{
	size_t	 n = strlen(w);

	return strncasecmp(s + i, w, n) == 0 && (i == 0 ||
	    !cond_wordc(s, i - 1)) && (s[i + n] == '\0' ||
	    !cond_wordc(s, i + n));
}

/* Comparison operator at p: its length (and *op), or 0. */
static size_t
cond_cmp(const char *p, enum cop *op)
{
	static const struct { const char *s; enum cop op; } ops[] = {
		{ "==", OP_EQ }, { "!=", OP_NE }, { ">=", OP_GE },
		{ "<=", OP_LE }, { ">", OP_GT }, { "<", OP_LT },
	};
	size_t	 i, n;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		n = strlen(ops[i].s);
		if (strncmp(p, ops[i].s, n) == 0) {
			*op = ops[i].op;
			return n;
		}
	}
	return 0;
}

/* One token at s[i], tried in WilmerAI's order (number, quoted string,
 * comparison, parenthesis, AND/OR, word). Returns its length, 0 when
 * nothing matches there (WilmerAI's findall skips such characters). */
static size_t
cond_token(const char *s, size_t i, struct ctok *t)
{
	const char	*p = s + i, *q;
	size_t		 n;

	t->t_type = CT_VAL;
	t->t_p = p;
	if ((n = cond_number(p)) > 0)
		return t->t_n = n;
	if ((*p == '\'' || *p == '"') && (q = strchr(p + 1, *p)) != NULL)
		return t->t_n = (size_t)(q - p) + 1;
	if ((n = cond_cmp(p, &t->t_op)) > 0) {
		t->t_type = CT_CMP;
		return n;
	}
	if (*p == '(' || *p == ')') {
		t->t_type = *p == '(' ? CT_LP : CT_RP;
		return 1;
	}
	if (cond_keyword(s, i, "AND") || cond_keyword(s, i, "OR")) {
		t->t_type = toupper((unsigned char)*p) == 'A' ? CT_AND : CT_OR;
		return t->t_type == CT_AND ? 3 : 2;
	}
	return t->t_n = cond_word(p);
}

/* Split s into tokens; *n is their count. Caller frees. */
static struct ctok *
cond_lex(const char *s, size_t *n)
{
	size_t		 len = strlen(s), i = 0, k, cap = 16;
	struct ctok	*v = xcalloc(cap, sizeof(*v));

	*n = 0;
	while (i < len) {
		if (*n == cap) {
			v = xreallocarray(v, cap * 2, sizeof(*v));
			cap *= 2;
		}
		if ((k = cond_token(s, i, &v[*n])) == 0) {
			i++;	/* whitespace or an unknown character */
			continue;
		}
		(*n)++;
		i += k;
	}
	return v;
}

/* WilmerAI's _parse_operand: TRUE/FALSE, a quoted string, a float
 * (float() also takes inf, infinity and nan), else the text itself. */
static struct cval
cond_operand(const struct ctok *t)
{
	struct cval	 v = { CV_STR, 0, t->t_p, t->t_n };
	char		*s = xstrndup(t->t_p, t->t_n), *end;

	if (strcasecmp(s, "TRUE") == 0 || strcasecmp(s, "FALSE") == 0) {
		v.v_kind = CV_BOOL;
		v.v_num = toupper((unsigned char)s[0]) == 'T';
	} else if (t->t_n >= 2 && (s[0] == '\'' || s[0] == '"') &&
	    s[t->t_n - 1] == s[0]) {
		v.v_p++;
		v.v_n -= 2;
	} else if (isdigit((unsigned char)s[0]) ||
	    strcasecmp(s, "inf") == 0 || strcasecmp(s, "infinity") == 0 ||
	    strcasecmp(s, "nan") == 0) {
		v.v_kind = CV_NUM;
		v.v_num = strtod(s, &end);
	}
	free(s);
	return v;
}

/* Python semantics: == between a bool and a number compares values,
 * strings compare with strings, anything else is unequal; ordering is
 * only defined between numbers (bools count as 0 and 1). */
static bool
cond_compare(struct cval a, enum cop op, struct cval b)
{
	bool	 num = a.v_kind != CV_STR && b.v_kind != CV_STR;
	bool	 eq;

	if (op == OP_EQ || op == OP_NE) {
		if (num)
			eq = a.v_num == b.v_num;
		else
			eq = a.v_kind == CV_STR && b.v_kind == CV_STR &&
			    a.v_n == b.v_n && memcmp(a.v_p, b.v_p, a.v_n) == 0;
		return op == OP_EQ ? eq : !eq;
	}
	if (!num)
		return false;
	switch (op) {
	case OP_GT:
		return a.v_num > b.v_num;
	case OP_LT:
		return a.v_num < b.v_num;
	case OP_GE:
		return a.v_num >= b.v_num;
	default:
		return a.v_num <= b.v_num;
	}
}

static bool	cond_or(struct cparse *);

static bool
cond_peek(struct cparse *c, enum ctt type)
{
	return c->c_i < c->c_n && c->c_tok[c->c_i].t_type == type;
}

/* A value alone is tested for truth as Python's bool() would. */
static bool
cond_truth(struct cval v)
{
	return v.v_kind == CV_STR ? v.v_n > 0 : v.v_num != 0;
}

/* primary := '(' or ')' | value [cmp value] */
static bool
cond_primary(struct cparse *c)
{
	struct cval	 a;
	enum cop	 op;
	bool		 v;

	if (cond_peek(c, CT_LP)) {
		if (++c->c_depth > COND_MAX_DEPTH) {
			c->c_err = true;
			return false;
		}
		c->c_i++;
		v = cond_or(c);
		if (!cond_peek(c, CT_RP))
			c->c_err = true;
		c->c_i++;
		c->c_depth--;
		return v;
	}
	if (!cond_peek(c, CT_VAL)) {
		c->c_err = true;
		return false;
	}
	a = cond_operand(&c->c_tok[c->c_i++]);
	if (!cond_peek(c, CT_CMP))
		return cond_truth(a);
	op = c->c_tok[c->c_i++].t_op;
	if (!cond_peek(c, CT_VAL)) {
		c->c_err = true;
		return false;
	}
	return cond_compare(a, op, cond_operand(&c->c_tok[c->c_i++]));
}

/* and := primary (AND primary)*; both sides are always parsed. */
static bool
cond_and(struct cparse *c)
{
	bool	 v = cond_primary(c), r;

	while (!c->c_err && cond_peek(c, CT_AND)) {
		c->c_i++;
		r = cond_primary(c);
		v = v && r;
	}
	return v;
}

/* or := and (OR and)* */
static bool
cond_or(struct cparse *c)
{
	bool	 v = cond_and(c), r;

	while (!c->c_err && cond_peek(c, CT_OR)) {
		c->c_i++;
		r = cond_and(c);
		v = v || r;
	}
	return v;
}

/* Any syntax error gives FALSE, as in WilmerAI. */
static int
cond_run(struct node_ctx *x, struct buf *out, bool *streamed,
    struct wresult *res)
{
	char		*s = node_str(x, "condition");
	struct cparse	 c = { NULL, 0, 0, 0, false };
	struct ctok	*tok;
	bool		 v;

	tok = cond_lex(s, &c.c_n);
	c.c_tok = tok;
	v = cond_or(&c);
	if (c.c_i != c.c_n)
		c.c_err = true;
	buf_adds(out, v && !c.c_err ? "TRUE" : "FALSE");
	free(tok);
	free(s);
	return 0;
}

const struct node_type node_cond = { "Conditional", cond_run, false };
