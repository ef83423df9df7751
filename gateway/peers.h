/* peers.h - cancellation across gateways: a DELETE for a request that does not run here is asked of every peer in "peers". */
#ifndef SLUICE_PEERS_H
#define SLUICE_PEERS_H

#include <stdbool.h>
#include <stddef.h>

struct gw;
struct http_conn;
struct http_request;

/* The header a forwarded DELETE carries: its value is the sender's node
 * name, and a gateway never forwards such a DELETE again. */
#define PEERS_HEADER	"X-Sluice-Forwarded"

/* How long a peer has to answer, in seconds. */
#define PEERS_TIMEOUT_S	2

/* Answer the client's DELETE: cancelled (200) or not found (404). */
typedef void	(*peers_answer_fn)(struct http_conn *, const char *id,
		    bool cancelled);

/* Ask the peers of g (sluice.json "peers") to cancel request id, which
 * does not run here; r is the client's DELETE, c its connection. The
 * reply to c is sent once a peer has cancelled it (200) or every peer
 * said no or did not answer (404), through answer. Returns 0 when the forward runs (the
 * reply is ours), -1 when there is nothing to ask (no peers, or r was
 * itself forwarded): the caller answers. */
int	peers_cancel(struct gw *g, struct http_conn *c,
	    const struct http_request *r, const char *id,
	    peers_answer_fn answer);

/* Stop every forward still waiting (gateway exit); their clients get
 * no reply. NULL-safe on a gateway that never forwarded. */
void	peers_free(struct gw *g);

/* The node name for /admin/workers and forwarded DELETEs: sluice.json
 * "node_name", else the host name. Borrowed from g or static. */
const char	*peers_node_name(const struct gw *g);

#endif
