/* fault.h - test-only fault injection, driven by the SLUICE_FAULT variable. */
#ifndef SLUICE_FAULT_H
#define SLUICE_FAULT_H

#include <stdint.h>

/* Read SLUICE_FAULT once at start. Values (comma-separated):
 *   crash        abort() when a request arrives
 *   hang         stop all activity (no heartbeats) when a request arrives
 *   exit_config  exit with EX_CONFIG before HELLO
 *   no_hello     never send HELLO
 *   ignore_term  ignore SIGTERM (the gateway must escalate to SIGKILL)
 *   bad_frame    answer a request with a malformed frame
 *   bad_version  say HELLO with the next protocol version
 *   after_ms=N   answer each request as soon as its workflow returns,
 *                then work N ms more after the answer (POST_DONE last)
 *   crash_start=PATH  abort() before HELLO while the file PATH exists
 *                (a crash loop that the test starts and stops)
 *   rogue=DIR    when a request arrives, claim a file of DIR (not a
 *                dotfile) by renaming it; a worker that got one reads
 *                "KIND [COUNT [RQID]]" from it, writes COUNT (10000)
 *                malformed frames of KIND on its channel, then stays
 *                silent until killed (one rogue per file). KIND:
 *                huge (4 GiB length prefix), short (a frame cut short,
 *                then silence), truncated (MessagePack cut short),
 *                garbage (invalid MessagePack), deep (nested 10,000
 *                deep), types (wrong field and envelope types), version
 *                (a frame of another protocol version after HELLO),
 *                foreign (REQ_CHUNK naming request RQID, not its own),
 *                mixed (all of them in turn)
 * Integration tests use these the way Redis tests use DEBUG. Unset in
 * production, where every hook is a no-op. */
void	fault_init(int chan_fd);
void	fault_at_start(void);	/* exit_config, no_hello, ignore_term, */
				/* crash_start */
void	fault_on_request(void);	/* crash, hang, bad_frame, rogue */
int	fault_version_skew(void);	/* 1 with bad_version, else 0 */
uint64_t fault_after_ms(void);		/* N of after_ms=N, else 0 */

#endif
