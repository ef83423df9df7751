/* common.h - what every libFuzzer harness in fuzz/ shares. */
#ifndef SLUICE_FUZZ_COMMON_H
#define SLUICE_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry points; each harness defines TestOneInput, and
 * Initialize when it has set-up to do. */
int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Reports a broken property on stderr as "<program>: what: detail"
 * (detail may be NULL) and aborts, so libFuzzer saves the input. */
void	fuzz_fail(const char *what, const char *detail)
	    __attribute__((noreturn));

#endif
