/* transport.h - one backend HTTP call at a time over libcurl, cancellable. */
#ifndef SLUICE_TRANSPORT_H
#define SLUICE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/buf.h"

/* What to send. Everything is borrowed for the duration of transport_perform. */
struct transport_call {
	const char		 *url;
	const char *const	 *headers;	/* NULL-terminated "Name: value" */
	const char		 *body;		/* POST body; NULL means GET */
	size_t			  body_len;
	long			  connect_timeout_ms;
	long			  total_timeout_ms;	/* 0: none */
	/* Response body bytes as they arrive, only for 2xx answers. Return
	 * 0 to go on, -1 to abort the transfer (result: XFER_ABORTED). */
	int			(*on_data)(void *arg, const char *p, size_t n);
	void			 *arg;
	long			  read_timeout_ms;	/* 0: none; else the
						   transfer fails (XFER_TIMEOUT)
						   once no byte came for this
						   long (whole seconds, at
						   least 1) */
	/* For a caller that needs more of libcurl than the fields above
	 * (WebFetch). When set: every response body goes to on_data
	 * whatever the status (err_body stays empty), a body gets no
	 * Content-Type unless headers has one, and on_easy is called with
	 * the easy handle (a CURL *) once every option above is set, to
	 * set its own (method, header callback, proxy, TLS, sockets);
	 * it returns 0, or -1 to fail the call (XFER_CONNECT). */
	int			(*on_easy)(void *arg, void *easy);
	const char		 *method;	/* NULL: GET, or POST with a
						   body; else this verb
						   ("DELETE") */
	struct transport_hdr	 *keep;		/* NULL, or response headers
						   to keep, ended by a NULL
						   th_name: filled before the
						   first on_data and again at
						   the end */
};

/* A response header the caller wants: its value as sent (the last
 * response's, blanks trimmed), "" when absent or too long. */
struct transport_hdr {
	const char	*th_name;
	char		 th_value[256];
};

/* How the caller stays responsive while a transfer runs: transport_perform
 * waits on the transfer's sockets and on wake_fd together, and calls
 * on_wake whenever wake_fd is readable and at least every tick_ms.
 * on_wake returns 1 to cancel the transfer at once, 0 to go on. */
struct transport_hooks {
	int			  wake_fd;	/* -1: none */
	unsigned		  tick_ms;
	int			(*on_wake)(void *arg, bool readable);
	void			 *arg;
};

enum transport_outcome {
	XFER_OK = 0,		/* transfer finished; see status */
	XFER_CANCELLED,		/* on_wake asked for it */
	XFER_ABORTED,		/* on_data returned -1 */
	XFER_CONNECT,		/* could not connect / resolve */
	XFER_TIMEOUT,		/* connect or total timeout */
	XFER_NETWORK,		/* other transport failure mid-way */
};

struct transport_result {
	enum transport_outcome	 outcome;
	long			 status;	/* HTTP status, 0 if none */
	char			 error[256];	/* transport error text */
	struct buf		 err_body;	/* non-2xx body, first 64 KiB */
	char			 retry_after[64];	/* the Retry-After
						   header as sent (blanks
						   trimmed); "" when absent
						   or too long to keep */
};

/* Process-wide setup: one libcurl multi handle so connections to a
 * backend are reused across requests. 0 or -1. */
int	transport_init(void);
void	transport_cleanup(void);

/* fn(arg) is called each time before the transport loop waits, once
 * curl has handed over (on_data) all it read since the last wait; fn
 * NULL: nothing. One for the process: the caller sets it around its
 * transfer and clears it after. */
void	transport_set_idle(void (*fn)(void *), void *arg);

/* Run one call to completion, cancellation or failure; the connection is
 * closed (not reused) when the call is cancelled or aborted, so the
 * backend sees the client leave. res->err_body must be initialised by
 * the caller (BUF_INIT) and freed by it. Returns 0 when outcome is
 * XFER_OK, else -1 (details in res). */
int	transport_perform(const struct transport_call *, const struct transport_hooks *,
	    struct transport_result *res);

/*
 * A transfer left running beside the others (a server's event stream
 * read while requests are posted to it): its on_data runs whenever
 * transport_perform or transport_bg_wait drives the transfers. c and
 * res are borrowed until transport_bg_stop; res->err_body initialised
 * by the caller. on_data must not call transport_* itself.
 */
struct transport_bg;

/* Start it. NULL only when out of memory; a start that failed shows
 * in the first transport_bg_wait (0, res filled). */
struct transport_bg *transport_bg_start(const struct transport_call *c,
	    struct transport_result *res);

/* Drive every transfer until until(arg) (NULL: never; checked first and
 * after each step) says true (1), the transfer ends (0: res filled as
 * transport_perform fills it), or deadline (clock_mono_ms) passes or
 * the hooks cancel (-1, res->outcome XFER_TIMEOUT or XFER_CANCELLED). */
int	transport_bg_wait(struct transport_bg *, const struct transport_hooks *,
	    uint64_t deadline, bool (*until)(void *), void *arg);

/* End it (the connection is closed, not pooled) and free it. NULL-safe. */
void	transport_bg_stop(struct transport_bg *);

#endif
