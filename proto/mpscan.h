/* mpscan.h - validate MessagePack structure before msgpack-c allocates. */
#ifndef SLUICE_MPSCAN_H
#define SLUICE_MPSCAN_H

#include <stddef.h>

/* Check that p[0..n) is exactly one well-formed MessagePack value, no
 * deeper than max_depth, without ext types, and whose declared container
 * sizes fit in the bytes present (so msgpack-c cannot be made to allocate
 * for elements that do not exist). Returns 0, or -1 with a message in
 * err (errlen bytes). */
int	mpscan(const void *p, size_t n, int max_depth, char *err,
	    size_t errlen);

#endif
