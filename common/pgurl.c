/* pgurl.c - a PostgreSQL URL: recognised, shown without its password, and the passwords it holds. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pgurl.h"
#include "xmem.h"

/* Where a secret sits in a URL: [at, at + len) is left out of the
 * name, the secret itself is [sec, sec + seclen). */
struct span {
	size_t	 sp_at, sp_len;
	size_t	 sp_sec, sp_seclen;
};

bool
pgurl_is(const char *path)
{
	return strncmp(path, "postgresql://", 13) == 0 ||
	    strncmp(path, "postgres://", 11) == 0;
}

/* user:PASSWORD@host: the ':' and the password. */
static bool
user_span(const char *url, struct span *sp)
{
	const char	*a = strstr(url, "://"), *end, *at = NULL, *colon;
	const char	*p;

	if (a == NULL)
		return false;
	a += 3;
	end = a + strcspn(a, "/?#");
	for (p = a; p < end; p++)
		if (*p == '@')
			at = p;
	if (at == NULL || (colon = memchr(a, ':', (size_t)(at - a))) == NULL)
		return false;
	sp->sp_at = (size_t)(colon - url);
	sp->sp_len = (size_t)(at - colon);
	sp->sp_sec = sp->sp_at + 1;
	sp->sp_seclen = sp->sp_len - 1;
	return true;
}

/* ?password=X or &password=X: the parameter and one '&' beside it. */
static bool
param_span(const char *url, struct span *sp)
{
	const char	*q = strchr(url, '?'), *p, *v;
	size_t		 vlen;

	for (p = q; p != NULL; p = strchr(p + 1, '&'))
		if (strncmp(p + 1, "password=", 9) == 0)
			break;
	if (p == NULL)
		return false;
	v = p + 10;
	vlen = strcspn(v, "&#");
	sp->sp_sec = (size_t)(v - url);
	sp->sp_seclen = vlen;
	if (*p == '&' || v[vlen] != '&') {
		/* "&password=X", or the last of "?password=X" ('?' kept) */
		sp->sp_at = (size_t)(p - url) + (*p == '?');
		sp->sp_len = (size_t)(v + vlen - url) - sp->sp_at;
	} else {
		sp->sp_at = (size_t)(p + 1 - url);	/* "password=X&" */
		sp->sp_len = (size_t)(v + vlen + 1 - url) - sp->sp_at;
	}
	return true;
}

char *
pgurl_name(const char *url)
{
	struct span	 u, p;
	struct buf	 b = BUF_INIT;
	bool		 hu = user_span(url, &u), hp = param_span(url, &p);
	size_t		 i, n = strlen(url);

	for (i = 0; i < n; i++) {
		if (hu && i == u.sp_at) {
			i += u.sp_len - 1;
			continue;
		}
		if (hp && i == p.sp_at) {
			i += p.sp_len - 1;
			continue;
		}
		buf_addc(&b, url[i]);
	}
	buf_adds(&b, "");
	if (b.b_len > 0 && b.b_data[b.b_len - 1] == '?')
		b.b_data[--b.b_len] = '\0';	/* "?password=X" was all */
	return buf_take(&b);
}

void
pgurl_secrets(const char *url, char **user_pw, char **param_pw)
{
	struct span	 sp;

	*user_pw = *param_pw = NULL;
	if (user_span(url, &sp) && sp.sp_seclen > 0)
		*user_pw = xstrndup(url + sp.sp_sec, sp.sp_seclen);
	if (param_span(url, &sp) && sp.sp_seclen > 0)
		*param_pw = xstrndup(url + sp.sp_sec, sp.sp_seclen);
}

bool
pgurl_has_password(const char *url)
{
	struct span	 sp;

	return user_span(url, &sp) || param_span(url, &sp);
}
