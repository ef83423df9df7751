/* vars_fuzz.c - libFuzzer harness for {name} substitution: vars_format against a plain reading of its rules. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/log.h"
#include "../worker/core/vars.h"
#include "common.h"

/*
 * Input: a count byte (bits 0-4), then that many variables (a kind
 * byte: bit 0 template, bit 1 a fixed name chosen by bits 2-4, else a
 * name of 0-7 bytes; a value of 0-63 bytes; each length-prefixed), then
 * the template: the rest. NUL bytes become '.', since
 * names, values and templates are C strings. Names repeat often (the
 * kind byte can pick one of eight fixed names), so later sets replace
 * earlier ones of either kind; the count byte's top bit adds 80 filler
 * variables so the table grows and rehashes.
 * Every name must read back its last value (vars_get), vars_dump must
 * have one line per distinct name (plus the newlines of names, which it
 * prints unescaped: it is a debugging aid), and vars_format must give exactly
 * what a direct, unoptimised reading of vars.h's rules gives (then the
 * brace sentinels turned back into braces): "{{" and
 * "}}" are braces, {name} of a set name is its value (a template's own
 * {name}s expanded once, by the same rules, with templates inserted
 * raw), anything else is copied as it is.
 */

#define MAXV	128

struct ref {
	char	*r_name[MAXV];
	char	*r_value[MAXV];
	int	 r_tmpl[MAXV];
	size_t	 r_n;
};

static const char *const fixed[8] = {
	"a", "name", "agent1Output", "persona", "", "x y", "{", "chat",
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init(LOG_LVL_ERR);
	return 0;
}

/* Up to max bytes of the input as a C string (NUL made '.'). */
static char *
take(const uint8_t **p, size_t *n, size_t max)
{
	size_t	 k = 0, i;
	char	*s;

	if (*n > 0) {
		k = **p % (max + 1);
		(*p)++;
		(*n)--;
	}
	if (k > *n)
		k = *n;
	if ((s = malloc(k + 1)) == NULL)
		abort();
	for (i = 0; i < k; i++)
		s[i] = (*p)[i] != '\0' ? (char)(*p)[i] : '.';
	s[k] = '\0';
	*p += k;
	*n -= k;
	return s;
}

static void
ref_set(struct ref *r, struct vars *vs, char *name, char *value, int tmpl)
{
	size_t	 i;

	if (tmpl)
		vars_set_template(vs, name, value);
	else
		vars_set(vs, name, value);
	for (i = 0; i < r->r_n; i++)
		if (strcmp(r->r_name[i], name) == 0)
			break;
	if (i == r->r_n) {
		if (r->r_n == MAXV)
			fuzz_fail("too many variables", NULL);
		r->r_name[r->r_n++] = name;
	} else {
		free(name);
		free(r->r_value[i]);
	}
	r->r_value[i] = value;
	r->r_tmpl[i] = tmpl;
}

static int
ref_find(const struct ref *r, const char *name, size_t n)
{
	size_t	 i;

	for (i = 0; i < r->r_n; i++)
		if (strlen(r->r_name[i]) == n &&
		    memcmp(r->r_name[i], name, n) == 0)
			return (int)i;
	return -1;
}

/* The rules of vars.h, one character at a time. */
static void
ref_format(const struct ref *r, const char *t, int depth, struct buf *out)
{
	size_t	 i = 0, j;
	int	 v;

	while (t[i] != '\0') {
		if ((t[i] == '{' || t[i] == '}') && t[i + 1] == t[i]) {
			buf_addc(out, t[i]);
			i += 2;
			continue;
		}
		if (t[i] != '{') {
			buf_addc(out, t[i++]);
			continue;
		}
		for (j = i + 1; t[j] != '\0' && t[j] != '{' && t[j] != '}'; j++)
			;
		if (t[j] != '}') {
			buf_addc(out, t[i++]);	/* a lone '{' */
			continue;
		}
		v = ref_find(r, t + i + 1, j - i - 1);
		if (v == -1)
			buf_add(out, t + i, j + 1 - i);
		else if (r->r_tmpl[v] && depth == 0)
			ref_format(r, r->r_value[v], 1, out);
		else
			buf_adds(out, r->r_value[v]);
		i = j + 1;
	}
}

/* WilmerAI's brace sentinels in the result become braces again, left
 * to right, each once. */
static void
ref_restore(struct buf *b)
{
	static const char	 l[] = "__WILMER_L_CURLY__";
	static const char	 rr[] = "__WILMER_R_CURLY__";
	struct buf		 o = BUF_INIT;
	size_t			 i = 0, n = sizeof(l) - 1;

	buf_adds(&o, "");
	while (i < b->b_len) {
		if (b->b_len - i >= n && memcmp(b->b_data + i, l, n) == 0) {
			buf_addc(&o, '{');
			i += n;
		} else if (b->b_len - i >= n && memcmp(b->b_data + i, rr, n) ==
		    0) {
			buf_addc(&o, '}');
			i += n;
		} else
			buf_addc(&o, b->b_data[i++]);
	}
	buf_free(b);
	*b = o;
}

static void
check_table(const struct ref *r, const struct vars *vs)
{
	struct buf	 d = BUF_INIT;
	const char	*got, *c;
	size_t		 i, lines = 0, want = r->r_n;

	for (i = 0; i < r->r_n; i++) {
		got = vars_get(vs, r->r_name[i], strlen(r->r_name[i]));
		if (got == NULL || strcmp(got, r->r_value[i]) != 0)
			fuzz_fail("vars_get lost a value", r->r_name[i]);
		/* names are printed as they are (values are escaped) */
		for (c = r->r_name[i]; (c = strchr(c, '\n')) != NULL; c++)
			want++;
	}
	vars_dump(vs, &d);
	for (i = 0; i < d.b_len; i++)
		lines += d.b_data[i] == '\n';
	if (lines != want)
		fuzz_fail("vars_dump does not list every variable once", NULL);
	buf_free(&d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ref	 r;
	struct vars	*vs;
	struct buf	 want = BUF_INIT;
	char		*tmpl, *got, filler[16];
	size_t		 i, n;
	uint8_t		 kind;

	if (size < 1)
		return 0;
	memset(&r, 0, sizeof(r));
	vs = vars_new();
	n = data[0] & 0x1f;
	for (i = 0; (data[0] & 0x80) && i < 80; i++) {
		snprintf(filler, sizeof(filler), "f%zu", i);
		ref_set(&r, vs, strdup(filler), strdup(filler + 1), 0);
	}
	data++;
	size--;
	for (i = 0; i < n && size > 0; i++) {
		kind = *data++;
		size--;
		ref_set(&r, vs, kind & 2 ? strdup(fixed[(kind >> 2) & 7]) :
		    take(&data, &size, 7), take(&data, &size, 63), kind & 1);
	}
	if ((tmpl = malloc(size + 1)) == NULL)
		abort();
	for (i = 0; i < size; i++)
		tmpl[i] = data[i] != '\0' ? (char)data[i] : '.';
	tmpl[size] = '\0';
	check_table(&r, vs);
	got = vars_format(vs, tmpl);
	ref_format(&r, tmpl, 0, &want);
	ref_restore(&want);
	if (strcmp(got, want.b_data != NULL ? want.b_data : "") != 0) {
		fprintf(stderr, "template '%s'\n  got  '%s'\n  want '%s'\n",
		    tmpl, got, want.b_data);
		fuzz_fail("vars_format differs from the rules", NULL);
	}
	free(got);
	buf_free(&want);
	free(tmpl);
	for (i = 0; i < r.r_n; i++) {
		free(r.r_name[i]);
		free(r.r_value[i]);
	}
	vars_free(vs);
	return 0;
}
