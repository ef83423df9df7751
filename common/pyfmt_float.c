/* pyfmt_float.c - repr() of a double as Python 3 prints it: the shortest digits that read back, in Python's layout. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyfmt.h"

/* The digits of s, which %.*e wrote for a positive finite double
 * ("d.ddde+XX"), into dig (NUL-terminated) and the exponent into *exp;
 * returns the number of digits. */
static int
split_e(const char *s, char *dig, int *exp)
{
	const char	*p;
	int		 n = 0;

	for (p = s; *p != 'e'; p++)
		if (*p != '.')
			dig[n++] = *p;
	dig[n] = '\0';
	*exp = atoi(p + 1);
	return n;
}

/* Does d.ddd x 10^exp (the digits dig) read back as x? */
static bool
reads_back(const char *dig, int exp, double x)
{
	char	 s[48];

	snprintf(s, sizeof(s), "%c.%se%d", dig[0], dig + 1, exp);
	return strtod(s, NULL) == x;
}

/* Move the n digits dig one unit of their last place up or down, in
 * place: 199 -> 200, 999 -> 100 with *exp + 1, 100 -> 999 with *exp - 1
 * going down (the p-digit number just below 1.00e5 is 9.99e4). */
static void
step(char *dig, int n, int *exp, bool up)
{
	int	 i = n - 1;

	if (up) {
		while (i >= 0 && dig[i] == '9')
			dig[i--] = '0';
		if (i >= 0)
			dig[i]++;
		else {
			dig[0] = '1';
			(*exp)++;
		}
		return;
	}
	while (i > 0 && dig[i] == '0')
		dig[i--] = '9';
	dig[i]--;
	if (dig[0] == '0') {
		memmove(dig, dig + 1, (size_t)n - 1);
		dig[n - 1] = '9';
		(*exp)--;
	}
}

/*
 * The shortest digits that read back as x > 0 (Python's repr, David
 * Gay's mode 0): for 1..17 digits, the correctly rounded candidate
 * printf gives, and, when it misses, its neighbour on the other side
 * of x. The neighbour matters where the gap between doubles changes
 * (at powers of two): the interval that reads back as x is then wider
 * on one side, and 2^-1017 is 7.120236347223045e-307 in 16 digits
 * although the nearest 16-digit number misses it. Returns the digit
 * count, trailing zeros dropped.
 */
static int
shortest(double x, char dig[24], int *exp)
{
	char	 s[40];
	int	 p, n = 0;
	double	 r;

	for (p = 1; p <= 17; p++) {
		snprintf(s, sizeof(s), "%.*e", p - 1, x);
		n = split_e(s, dig, exp);
		if ((r = strtod(s, NULL)) == x)
			break;
		step(dig, n, exp, r < x);
		if (reads_back(dig, *exp, x))
			break;
	}
	while (n > 1 && dig[n - 1] == '0')
		dig[--n] = '\0';
	return n;
}

/* Python's float_repr_style 'short' layout of dig x 10^exp. */
static void
layout(struct buf *out, const char *dig, int n, int exp)
{
	int	 i;

	if (exp < -4 || exp >= 16) {
		buf_addc(out, dig[0]);
		if (n > 1)
			buf_printf(out, ".%s", dig + 1);
		buf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
	} else if (exp < 0) {
		buf_adds(out, "0.");
		for (i = -1; i > exp; i--)
			buf_addc(out, '0');
		buf_adds(out, dig);
	} else {
		for (i = 0; i <= exp; i++)
			buf_addc(out, i < n ? dig[i] : '0');
		buf_printf(out, ".%s", n > exp + 1 ? dig + exp + 1 : "0");
	}
}

void
pyfmt_float(struct buf *out, double d)
{
	char	 dig[24];
	int	 n, exp;

	if (isnan(d)) {			/* -nan too */
		buf_adds(out, "nan");
		return;
	}
	if (signbit(d)) {
		buf_addc(out, '-');
		d = -d;
	}
	if (isinf(d))
		buf_adds(out, "inf");
	else if (d == 0)
		buf_adds(out, "0.0");
	else {
		n = shortest(d, dig, &exp);
		layout(out, dig, n, exp);
	}
}
