/* failover.h - WilmerAI's rule for remote backups: a public address needs the backup's consent. */
#ifndef SLUICE_FAILOVER_H
#define SLUICE_FAILOVER_H

enum failover_where {
	FO_LOCAL,	/* loopback, private, link-local, "localhost" */
	FO_REMOTE,	/* some address of the host is public */
	FO_UNKNOWN,	/* unresolvable or unparsable: allowed, with a warning */
};

/* Where the host of an endpoint URL is. Resolves names (blocking; only
 * on the failover path). */
enum failover_where failover_where(const char *url);

#endif
