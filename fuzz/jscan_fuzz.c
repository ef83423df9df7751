/* jscan_fuzz.c - libFuzzer harness for the JSON scanner: it accepts only what jansson accepts, with the same values. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/jscan.h"
#include "../common/log.h"
#include "../tests/jscan_tree.h"
#include "common.h"

/*
 * Input: a JSON text (any value). jscan's tree (tests/jscan_tree.c)
 * and json_loadb(JSON_DECODE_ANY) must agree: a text jscan accepts,
 * jansson accepts with an equal value; a text jansson accepts, jscan
 * accepts too unless it is one of jscan's documented refusals (nesting
 * deeper than JSCAN_MAX_DEPTH, or a real: long ones and underflows are
 * refused), or a NUL byte (jansson passes over one that follows a
 * number or a literal: it reads its own buffer's NUL as "empty").
 * jscan_skip over the whole text agrees with the tree, and
 * its span is the text without surrounding whitespace.
 */

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init(LOG_LVL_ERR);
	return 0;
}

/* jscan_skip over the text: 0 when it reads one whole value. */
static int
skip_all(const char *p, size_t n, size_t *start, size_t *span)
{
	struct jscan		 js;
	struct jscan_val	 v;
	int			 r;

	jscan_init(&js, p, n);
	r = jscan_value(&js, &v) == 0 && jscan_skip(&js, &v) == 0 &&
	    jscan_finish(&js) == 0 ? 0 : -1;
	*start = (size_t)(v.jv_p - p);
	*span = v.jv_n;
	jscan_clear(&js);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data;
	json_t		*mine = jscan_tree(p, size);
	json_t		*theirs = json_loadb(p, size, JSON_DECODE_ANY,
			    NULL);
	size_t		 start, span;
	int		 real = 0, skipped;

	if (mine != NULL && theirs == NULL)
		fuzz_fail("jscan accepts what jansson refuses", NULL);
	if (mine != NULL && !json_equal(mine, theirs))
		fuzz_fail("jscan reads another value than jansson", NULL);
	if (mine == NULL && theirs != NULL && memchr(p, '\0', size) == NULL &&
	    jscan_tree_depth(theirs, &real) <= JSCAN_MAX_DEPTH && !real)
		fuzz_fail("jscan refuses what jansson accepts", NULL);
	skipped = skip_all(p, size, &start, &span);
	if ((skipped == 0) != (mine != NULL))
		fuzz_fail("jscan_skip and the tree disagree", NULL);
	if (skipped == 0 && mine != NULL && (json_is_object(mine) ||
	    json_is_array(mine)) && start + span > size)
		fuzz_fail("jscan_skip's span runs past the text", NULL);
	json_decref(mine);
	json_decref(theirs);
	return 0;
}
