/* msgs_edit.h - what a node changes in the messages it sends: insertions, merged assistant runs, image limits. */
#ifndef SLUICE_MSGS_EDIT_H
#define SLUICE_MSGS_EDIT_H

#include "msgs.h"

/* Insert a new message (copies of role/content) or a deep copy of m at
 * position pos (0..n). */
void	wmsgs_insert(struct wmsgs *, size_t pos, const char *role,
	    const char *content);
void	wmsgs_insert_copy(struct wmsgs *, size_t pos, const struct wmsg *m);

/* Runs of consecutive assistant messages become the first of the run,
 * its content the run's contents joined by delim. */
void	wmsgs_merge_assistants(struct wmsgs *, const char *delim);

/* Keep the newest max images across the messages (max 0: all; max < 0:
 * none). */
void	wmsgs_limit_images(struct wmsgs *, long max);

/* Append a copy of image (a data URI or raw base64) to m. */
void	wmsg_add_image(struct wmsg *, const char *image);

#endif
