/* gw.h - the gateway process: its event loop, pool, server and counters. */
#ifndef SLUICE_GW_H
#define SLUICE_GW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "gwconf.h"
#include "storehealth.h"

struct event_base;
struct event;
struct http_server;
struct sup;
struct chan;
struct greq;
struct gw_metrics;
struct gw_user;
struct slots;
struct gate;

/* Counters for /health and /metrics. */
struct gw_counters {
	uint64_t	 gc_requests;		/* HTTP requests routed */
	uint64_t	 gc_completions;	/* chat/completion requests */
	uint64_t	 gc_ok;			/* answered by a worker */
	uint64_t	 gc_errors;		/* failed after dispatch */
	uint64_t	 gc_rejected;		/* 4xx before dispatch */
	uint64_t	 gc_client_gone;	/* client left first */
};

TAILQ_HEAD(greq_list, greq);

struct gw {
	struct event_base	*g_base;
	struct gw_conf		 g_conf;
	struct http_server	*g_http;
	struct sup		*g_sup;
	struct chan		**g_chans;	/* one per worker slot */
	unsigned		 g_nchans;
	struct event		*g_sup_timer;
	struct event		*g_sigchld;
	struct slots		*g_slots;	/* per-endpoint limits */
	struct event		*g_slots_timer;
	struct gate		*g_gate;	/* --concurrency */
	struct event		*g_reaper;	/* frees closed requests */
	struct greq_list	 g_live;	/* requests in flight */
	struct greq_list	 g_dead;	/* waiting for the reaper */
	char			 g_worker_bin[4096];
	struct gw_user		*g_users;	/* users.c */
	size_t			 g_nusers;
	struct event		*g_sigs[8];
	uint64_t		 g_started_ms;
	bool			 g_ready;	/* a worker said HELLO */
	bool			 g_stopping;
	struct gw_counters	 g_cnt;
	struct gw_metrics	*g_metrics;
	struct gw_store		 g_store;	/* the shared database's health */
	struct peers		*g_peers;	/* DELETEs asked of peers */
	struct event		*g_tick_ev;	/* 1 s supervisor maintenance */
	struct event		*g_drain_ev;	/* stopping: wait for clients */
	uint64_t		 g_drain_deadline;
	bool			 g_pool_draining;
	struct event		*g_status_ev;	/* systemd STATUS= */
	struct event		*g_watchdog_ev;	/* systemd WATCHDOG=1 */
	uint64_t		 g_last_tick_ms;
	bool			 g_wedge_test;	/* SLUICE_FAULT=wedge_gateway */
	int			 g_argc;	/* for reloads */
	char			**g_argv;
};

#endif
