/* begtags.h - WilmerAI's [Beg_*] prompt tags turned into chat messages. */
#ifndef SLUICE_BEGTAGS_H
#define SLUICE_BEGTAGS_H

#include <stddef.h>

/* One parsed message; role and content point into owned storage of the
 * begtags result. */
struct begmsg {
	const char	*bm_role;	/* system, systemMes, user, assistant */
	char		*bm_content;	/* stripped */
};

struct begtags {
	struct begmsg	*bt_msgs;
	size_t		 bt_n;
};

/* Split text at [Beg_User], [Beg_Assistant], [Beg_Sys], [Beg_SysMes]
 * (any [Beg_<word>] tag starts a message): the first Sys is "system",
 * later Sys and every SysMes are "systemMes", unknown words are "user".
 * Contents are stripped of surrounding whitespace. Text before the first
 * tag, or text without any tag, becomes a user message (WilmerAI drops
 * it, leaving an empty conversation: see docs/migrating-from-wilmer.md). Empty text
 * gives no messages. */
void	begtags_parse(const char *text, size_t len, struct begtags *out);
void	begtags_free(struct begtags *);

#endif
