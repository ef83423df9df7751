/* url.c - endpoint URLs as libcurl reads them: the host it connects to, and the URL as messages may show it. */
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "url.h"

/* What libcurl's transfer passes to curl_url_set for CURLOPT_URL: a
 * missing scheme is guessed, and any scheme parses (the transport then
 * allows http and https only). */
#define URL_FLAGS	(CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME)

/* url parsed, or NULL when libcurl cannot parse it. */
static CURLU *
url_parse(const char *url)
{
	CURLU	*h;

	if (url == NULL || (h = curl_url()) == NULL)
		return NULL;
	if (curl_url_set(h, CURLUPART_URL, url, URL_FLAGS) != CURLUE_OK) {
		curl_url_cleanup(h);
		return NULL;
	}
	return h;
}

/* Part p of h, or NULL when h has none. Free with curl_free. (libcurl
 * 7.88 can fail a punycode conversion and still leave its copy in the
 * result: freed here.) */
static char *
url_part(CURLU *h, CURLUPart p, unsigned int flags)
{
	char	*s = NULL;

	if (curl_url_get(h, p, &s, flags) != CURLUE_OK) {
		curl_free(s);
		return NULL;
	}
	return s;
}

int
url_host(const char *url, char *out, size_t len)
{
	CURLU		*h = url_parse(url);
	char		*host = NULL;
	const char	*p;
	size_t		 n;
	int		 rc = -1;

	if (h != NULL && (host = url_part(h, CURLUPART_HOST,
	    CURLU_PUNYCODE)) != NULL) {
		p = host;
		n = strlen(host);
		if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
			p++;	/* an IPv6 address; its zone is a part apart */
			n -= 2;
		}
		if (n > 0 && n < len) {
			memcpy(out, p, n);
			out[n] = '\0';
			rc = 0;
		}
	}
	curl_free(host);
	curl_url_cleanup(h);
	return rc;
}

/* Whether h carries a user, a password or options (an empty one too,
 * as in "http://@host/"). */
static bool
has_userinfo(CURLU *h)
{
	static const CURLUPart	 parts[] = { CURLUPART_USER,
				    CURLUPART_PASSWORD, CURLUPART_OPTIONS };
	char			*s;
	size_t			 i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if ((s = url_part(h, parts[i], 0)) != NULL) {
			curl_free(s);
			return true;
		}
	return false;
}

void
url_shown(const char *url, char *out, size_t len)
{
	CURLU	*h = url_parse(url);
	char	*s = NULL;

	if (url == NULL)
		url = "";
	if (h == NULL)
		snprintf(out, len, "%s", strchr(url, '@') == NULL ? url :
		    URL_HIDDEN);
	else if (!has_userinfo(h))
		snprintf(out, len, "%s", url);
	else if (curl_url_set(h, CURLUPART_USER, "***", 0) == CURLUE_OK &&
	    curl_url_set(h, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
	    curl_url_set(h, CURLUPART_OPTIONS, NULL, 0) == CURLUE_OK &&
	    (s = url_part(h, CURLUPART_URL, 0)) != NULL)
		snprintf(out, len, "%s", s);
	else
		snprintf(out, len, "%s", URL_HIDDEN);
	curl_free(s);
	curl_url_cleanup(h);
}

/* Scheme, host and port of h ("http://h:80"), or NULL. Caller frees. */
static char *
url_origin(CURLU *h)
{
	char	*sc, *ho, *po, *o = NULL;
	size_t	 n;

	sc = url_part(h, CURLUPART_SCHEME, 0);
	ho = url_part(h, CURLUPART_HOST, 0);
	po = url_part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT);
	if (sc != NULL && ho != NULL && po != NULL) {
		n = strlen(sc) + strlen(ho) + strlen(po) + 5;
		if ((o = malloc(n)) != NULL)
			snprintf(o, n, "%s://%s:%s", sc, ho, po);
	}
	curl_free(sc);
	curl_free(ho);
	curl_free(po);
	return o;
}

int
url_resolve_same_origin(const char *base, const char *ref, char *out,
    size_t len)
{
	CURLU	*h = url_parse(base);
	char	*o1 = NULL, *o2 = NULL, *full = NULL;
	int	 r = -1;

	if (h == NULL)
		return -1;
	o1 = url_origin(h);
	if (curl_url_set(h, CURLUPART_URL, ref, URL_FLAGS) == CURLUE_OK &&
	    (o2 = url_origin(h)) != NULL && o1 != NULL &&
	    strcmp(o1, o2) == 0 && (full = url_part(h, CURLUPART_URL, 0)) !=
	    NULL && strlen(full) < len) {
		memcpy(out, full, strlen(full) + 1);
		r = 0;
	}
	curl_free(full);
	free(o1);
	free(o2);
	curl_url_cleanup(h);
	return r;
}
