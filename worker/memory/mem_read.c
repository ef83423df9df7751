/* mem_read.c - reading memories back for prompts: recent chat as memory text, memories new since the rolling summary. */
#include <stdlib.h>
#include <string.h>

#include "../../common/xmem.h"
#include "mem_chunk.h"
#include "mem_read.h"
#include "memgen.h"

#define NOTHING_YET	"There are no memories to grab yet"
#define CHAT_CHUNK	400
#define NO_PRECEDING	"No preceding memories to show"
#define MEM_SEP		"\n--------------\n"

char *
memread_recent(const struct mem_blocks *mem, size_t n)
{
	size_t	 first = n == 0 || n > mem->n ? 0 : mem->n - n;
	char	*j = memread_join(mem, first, mem->n - first, MEM_SEP), *r;

	r = memory_strip(*j != '\0' ? j : NO_PRECEDING);
	free(j);
	return r;
}

char *
memread_unlabel(const char *text)
{
	static const char *const labels[] = { "User: ", "USER: ",
	    "Assistant: ", "ASSISTANT: ", "systemMes: ", "SYSTEMMES: " };
	char	*cur = xstrdup(text), *next;
	size_t	 i;

	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		next = memory_replace(cur, labels[i], "");
		free(cur);
		cur = next;
	}
	return cur;
}

char *
memread_recent_chat(const struct wmsgs *msgs, long max_turns, long lookback,
    const char *sep)
{
	struct mem_chunks	 ch;
	struct buf		 b = BUF_INIT;
	size_t			 start, end, i;
	char			*t;

	if (lookback < 0)
		lookback = 0;
	if (msgs->n <= 1 || (size_t)lookback >= msgs->n)
		return xstrdup(NOTHING_YET);
	start = msgs->n - (size_t)lookback;
	end = max_turns > 0 && (size_t)max_turns < start ?
	    start - (size_t)max_turns : max_turns > 0 ? 0 : start;
	if (end == start)
		return xstrdup(NOTHING_YET);
	/* get_message_chunks leaves the last of them out */
	mem_chunks_make(msgs, end, start - end - 1, CHAT_CHUNK, &ch);
	buf_adds(&b, "");
	for (i = 0; i < ch.n; i++) {
		if (ch.v[i].mc_text[0] == '\0')
			continue;
		if (b.b_len > 0)
			buf_adds(&b, sep);
		t = memread_unlabel(ch.v[i].mc_text);
		buf_adds(&b, t);
		free(t);
	}
	mem_chunks_free(&ch);
	return buf_take(&b);
}

long
memread_new_since(const struct mem_blocks *mem, const char *summary_hash)
{
	size_t	 i;

	if (mem->n == 0)
		return -1;
	if (summary_hash == NULL)
		return (long)mem->n;
	for (i = mem->n; i-- > 0;)
		if (strcmp(mem->v[i].mb_hash, summary_hash) == 0)
			return (long)(mem->n - 1 - i);
	return -1;
}

size_t
memread_unsummarised(const struct mem_blocks *mem, const char *summary_hash,
    size_t *first)
{
	long	 k = memread_new_since(mem, summary_hash);
	size_t	 n = k >= 0 ? (size_t)k : mem->n;

	*first = mem->n - n;
	return n;
}

char *
memread_join(const struct mem_blocks *mem, size_t first, size_t n,
    const char *sep)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_adds(&b, sep);
		buf_adds(&b, mem->v[first + i].mb_text);
	}
	return buf_take(&b);
}
