/* jsonw.h - JSON serialisation that matches Python's json.dumps byte for byte. */
#ifndef SLUICE_JSONW_H
#define SLUICE_JSONW_H

#include <jansson.h>

#include "buf.h"

enum jsonw_style {
	JSONW_COMPACT,	/* "," and ":", UTF-8 kept */
	JSONW_PYTHON,	/* ", " and ": ", non-ASCII as \uXXXX: what
			   WilmerAI's requests.post(json=...) sends */
	JSONW_PYFILE,	/* the same with indent=4 (new line and four
			   spaces a level, "," at the end of a line):
			   WilmerAI's discussion files */
};

/* Append v to out. Reals are written as Python's repr() writes them
 * (pyfmt_float: 0.7, 1.0, 1e-05, 1e+16), never as jansson's 17
 * digits. */
void	 jsonw_dump(struct buf *out, const json_t *v, enum jsonw_style);

/* Same, as a new string the caller frees. */
char	*jsonw_dumps(const json_t *v, enum jsonw_style);

#endif
