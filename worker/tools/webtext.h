/* webtext.h - a WebFetch response's body as text (addendum A3.3.2). */
#ifndef SLUICE_WEBTEXT_H
#define SLUICE_WEBTEXT_H

#include "../../common/buf.h"
#include "webfetch.h"

/* The body as text, appended to out as UTF-8 (requests' .text): the
 * Content-Type's charset (utf-8, iso-8859-1, us-ascii, windows-1252
 * and their aliases; any other as UTF-8), ISO-8859-1 for a text type
 * without one, UTF-8 for application/json, and for anything else a
 * guess (UTF-8 when the bytes are valid UTF-8, else windows-1252);
 * bad bytes become U+FFFD. */
void	webtext(const struct webfetch_resp *, struct buf *out);

#endif
