/* failover.h - WilmerAI's rule for remote backups: a public address needs the backup's consent. */
#ifndef SLUICE_FAILOVER_H
#define SLUICE_FAILOVER_H

enum failover_where {
	FO_LOCAL,	/* loopback, private, link-local, "localhost" */
	FO_REMOTE,	/* some address of the host is public */
	FO_UNKNOWN,	/* unresolvable or unparsable: allowed, with a warning */
};

/* Where the host libcurl connects to for an endpoint URL is (url.h:
 * url_host): "localhost" and names under it are local, as libcurl
 * makes them; other names are resolved (blocking; only on the
 * failover path) and local when every address is. */
enum failover_where failover_where(const char *url);

#endif
