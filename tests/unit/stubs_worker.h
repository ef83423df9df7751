/* stubs_worker.h - what the worker stubs record. */
#ifndef SLUICE_STUBS_WORKER_H
#define SLUICE_STUBS_WORKER_H

#include "../../common/buf.h"

extern struct buf	 stub_tokens;	/* every token output_token saw */

#endif
