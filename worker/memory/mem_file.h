/* mem_file.h - the file-style memory ledger: new messages since the last memory, chunked and summarised one chunk at a time. */
#ifndef SLUICE_MEM_FILE_H
#define SLUICE_MEM_FILE_H

#include "memgen.h"

/* The file-style path, settings loaded, the lock held (mem_file.c). */
int	memory_file_run(struct node_ctx *, const struct memory_settings *,
	    const char *key, struct wresult *res);

#endif
