/* jinjabench.c - the cost of one Jinja2 render through worker/tools/jinja (a kept python3 helper); prints one JSON line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/buf.h"
#include "../common/clock.h"
#include "../common/log.h"
#include "../worker/tools/jinja.h"

/*
 * Cases, each rendered N times (argv[1], default 2000) after one warm
 * render: tiny ("{{ a }}", one variable), chat (a ChatML template over
 * 20 messages of 400 bytes, as a jinja2 Standard node's prompt sees
 * them). start_ms is the first render of a fresh helper (python3,
 * import jinja2).
 */

static json_t *
chat_ctx(void)
{
	json_t	*msgs = json_array();
	char	 text[401];
	int	 i;

	memset(text, 'w', 400);
	text[400] = '\0';
	for (i = 0; i < 20; i++)
		json_array_append_new(msgs, json_pack("{s:s, s:s}", "role",
		    i % 2 ? "assistant" : "user", "content", text));
	return json_pack("{s:o, s:s}", "messages", msgs, "user_name", "Ann");
}

/* Mean microseconds a render of tmpl with ctx over n renders. */
static double
per_render(const char *tmpl, json_t *ctx, int n)
{
	struct buf	 out = BUF_INIT, err = BUF_INIT;
	uint64_t	 t0;
	long		 line;
	int		 i;

	t0 = clock_mono_ms();
	for (i = 0; i < n; i++) {
		buf_reset(&out);
		if (jinja_render(tmpl, ctx, NULL, NULL, &out, &err, &line) !=
		    JINJA_OK)
			fatalx("render failed: %s", err.b_data);
	}
	buf_free(&out);
	buf_free(&err);
	return (double)(clock_mono_ms() - t0) * 1000.0 / n;
}

int
main(int argc, char **argv)
{
	static const char *chat = "{% for m in messages %}<|im_start|>{{ "
	    "m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
	    "<|im_start|>assistant\n";
	json_t		*tiny = json_pack("{s:s}", "a", "x"), *c = chat_ctx();
	int		 n = argc > 1 ? atoi(argv[1]) : 2000;
	uint64_t	 t0;
	double		 start, t, ch;

	log_init(0);
	t0 = clock_mono_ms();
	per_render("{{ a }}", tiny, 1);
	start = (double)(clock_mono_ms() - t0);
	t = per_render("{{ a }}", tiny, n);
	per_render(chat, c, 1);
	ch = per_render(chat, c, n);
	printf("{\"renders\": %d, \"start_ms\": %.0f, \"tiny_us\": %.1f, "
	    "\"chat20_us\": %.1f}\n", n, start, t, ch);
	jinja_shutdown();
	json_decref(tiny);
	json_decref(c);
	return 0;
}
