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
 * Integration tests use these the way Redis tests use DEBUG. Unset in
 * production, where every hook is a no-op. */
void	fault_init(int chan_fd);
void	fault_at_start(void);	/* exit_config, no_hello, ignore_term */
void	fault_on_request(void);	/* crash, hang, bad_frame */
int	fault_version_skew(void);	/* 1 with bad_version, else 0 */
uint64_t fault_after_ms(void);		/* N of after_ms=N, else 0 */

#endif
