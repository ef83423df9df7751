/* common.c - helpers every libFuzzer harness in fuzz/ shares. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

void
fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "%s: %s%s%s\n", program_invocation_short_name, what,
	    detail != NULL ? ": " : "", detail != NULL ? detail : "");
	abort();
}
