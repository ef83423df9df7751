/* mem_chunk.c - which messages become memory text: WilmerAI's threshold trigger and hashed chunks. */
#include <stdlib.h>
#include <string.h>

#include "../../common/textchunk.h"
#include "../../common/tokens.h"
#include "../../common/xmem.h"
#include "mem_chunk.h"
#include "memgen.h"

void
mem_chunks_free(struct mem_chunks *c)
{
	size_t	 i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].mc_text);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* Contents of msgs[first..first+count) joined by "\n". */
static char *
joined(const struct wmsgs *msgs, size_t first, size_t count)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	buf_adds(&b, "");
	for (i = 0; i < count; i++) {
		if (i > 0)
			buf_addc(&b, '\n');
		buf_adds(&b, msgs->v[first + i].m_content);
	}
	return buf_take(&b);
}

void
mem_chunks_make(const struct wmsgs *msgs, size_t first, size_t count,
    long size, struct mem_chunks *out)
{
	const char		**contents = xcalloc(count + 1, sizeof(*contents));
	struct text_chunk	*tc;
	size_t			 i, n;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < count; i++)
		contents[i] = msgs->v[first + i].m_content;
	tc = text_chunk_messages(contents, count, size, &n);
	out->v = xcalloc(n + 1, sizeof(*out->v));
	for (i = 0; i < n; i++) {
		out->v[i].mc_text = joined(msgs, first + tc[i].tc_first,
		    tc[i].tc_count);
		memory_hash(&msgs->v[first + tc[i].tc_first +
		    tc[i].tc_count - 1], out->v[i].mc_hash);
	}
	out->n = n;
	free(tc);
	free(contents);
}

bool
mem_triggered(const struct wmsgs *msgs, size_t first, size_t count,
    long size, bool by_count, long max_between)
{
	char	*text = joined(msgs, first, count);
	long	 est = tokens_estimate(text, strlen(text), TOKENS_MARGIN);

	free(text);
	return est >= size || (by_count && (long)count >= max_between);
}

long
mem_scaled(long size, double level)
{
	return (long)((double)size * (level > 0 ? level : 1.0));
}
