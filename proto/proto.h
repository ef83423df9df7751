/* proto.h - gateway<->worker messages: types, encoding and strict decoding. */
#ifndef SLUICE_PROTO_H
#define SLUICE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/buf.h"
#include "frame.h"

/* Bump on every incompatible change. A worker with another version is
 * killed and its slot is not respawned. */
#define PROTO_VERSION	9
#define PROTO_ERRLEN	256
#define PROTO_MAX_DEPTH	16	/* deepest MessagePack nesting accepted */
#define PROTO_MAX_RQID	64	/* longest request id accepted */

enum proto_type {
	PROTO_NONE = 0,
#define MSG(name, id, dir, body)	PROTO_##name = id,
#include "msg.def"
#undef MSG
};

enum proto_dir { G2W = 1, W2G = 2 };

enum proto_api {
	API_OPENAI_CHAT = 1,
	API_OPENAI_COMPLETION = 2,
	API_OLLAMA_CHAT = 3,
	API_OLLAMA_GENERATE = 4,
	/* Not a chat: the worker empties the response cache and answers
	 * one REQ_CHUNK whose content is how many entries it removed,
	 * then REQ_DONE (DELETE /admin/cache). */
	API_CACHE_CLEAR = 5,
	/* Not a chat either: each message's content is one text to embed
	 * with the user's embeddingEndpointName; the worker answers
	 * REQ_CHUNKs whose contents joined are one JSON object
	 * {"model", "prompt_tokens", "embeddings": [[...], ...]}, then
	 * REQ_DONE. The gateway shapes the client's answer (POST
	 * /v1/embeddings; /api/embed and /api/embeddings). */
	API_OPENAI_EMBED = 6,
	API_OLLAMA_EMBED = 7,
};

enum proto_status { RQ_OK = 0, RQ_CANCELLED = 1, RQ_ERROR = 2 };

/* REQ_DONE's code when the worker stopped the request at its deadline
 * (HTTP 504, as a backend's timeout is too). */
#define PROTO_CODE_DEADLINE	"deadline"

/* All struct str members below are borrowed views into the decoded frame
 * (no NUL terminator) and die with proto_msg_free(). A NULL .p means the
 * key was absent. JSON-valued fields carry JSON text. */

struct proto_message {
	struct str	 role;
	struct str	 content;
	struct str	 name;
	struct str	 tool_call_id;
	struct str	 tool_calls;	/* JSON array text */
	struct str	*images;	/* base64 or data: URIs */
	size_t		 nimages;
};

struct proto_hello {
	uint32_t	 version;	/* PROTO_VERSION of the worker */
	int64_t		 pid;
	struct str	 build;
};

struct proto_req_start {
	uint32_t		 api;		/* enum proto_api */
	bool			 stream;
	struct str		 model;		/* client's model field */
	struct proto_message	*msgs;
	size_t			 nmsgs;
	struct str		 options;	/* JSON object text */
	struct str		 tools;		/* JSON array text */
	struct str		 tool_choice;	/* JSON text */
	uint64_t		 deadline_ms;	/* budget from receipt */
	uint32_t		 ep_limit;	/* endpoint slots when an endpoint
						   sets none; 0 = unlimited */
	uint64_t		 ep_wait_ms;	/* longest wait for a slot */
	struct str		 user;		/* the user whose workflows run;
						   empty: the worker's --user */
	struct str		 workflow;	/* a shared workflow the model
						   field chose, or empty */
	struct str		 key_scope;	/* sha256(API key)[:16]: scopes
						   memories per key; or empty */
	struct str		 think;		/* the client's Ollama "think"
						   as JSON text (true, false,
						   "high", ...); absent when
						   it sent none */
	struct str		 api_key;	/* the Bearer key, sent only when
						   the user encrypts its
						   discussions with it
						   (encryptUsingApiKey); the
						   worker wipes it after use */
};

struct proto_req_chunk {
	uint64_t	 seq;
	struct str	 content;
	struct str	 reasoning;
	struct str	 tool_calls;	/* JSON array of OpenAI deltas */
};

struct proto_req_done {
	uint32_t	 status;	/* enum proto_status */
	struct str	 finish;	/* "stop", "length", "tool_calls" */
	int64_t		 prompt_tokens;	/* -1 when unknown */
	int64_t		 completion_tokens;
	bool		 usage_estimated;
	uint32_t	 http_status;	/* for RQ_ERROR: 4xx/5xx to answer */
	struct str	 code;		/* machine-readable error code */
	struct str	 message;	/* human-readable error */
	bool		 retiring;	/* last request: exits 0 next */
	struct str	 endpoint;	/* the failing endpoint, for errors */
	bool		 background;	/* RQ_OK only: the answer is complete
					   and the client may have it now;
					   the worker keeps working on the
					   request and sends POST_DONE */
	struct str	 retry_after;	/* for RQ_ERROR: the backend's
					   Retry-After as it sent it */
};

/* The work after the answer (nodes after the responder) is over. The
 * client already has its answer; a failure is only logged. */
struct proto_post_done {
	bool		 retiring;	/* as in REQ_DONE */
	bool		 failed;	/* a node after the responder failed */
	struct str	 message;	/* why, when failed */
};

/* One lookup of the response cache by an LLM call of the request. */
struct proto_cache {
	bool		 hit;		/* served from the cache */
	bool		 answer;	/* the call answers the client
					   (X-Sluice-Cache) */
	int64_t		 entries;	/* entries in the cache now, -1 unknown */
};

/* What the request's calls to the shared database came to, sent before
 * REQ_DONE or POST_DONE when it wrote to it or a call failed. */
struct proto_store {
	uint64_t	 errors;	/* failed calls during the request */
	bool		 failing;	/* the last call was a failure, not a
					   successful write */
	struct str	 why;		/* the last failure, in the database
					   engine's words (no path) */
	struct str	 discussion;	/* the request's discussion id, or
					   absent */
};

struct proto_heartbeat {
	struct str	 phase;		/* "node 2/4: waiting for backend" */
};

struct proto_retire {
	struct str	 reason;
};

/* Per-endpoint concurrency slots held by the gateway (SLOT_*). */
struct proto_slot {
	struct str	 endpoint;	/* the endpoint's name */
	uint32_t	 limit;		/* SLOT_ACQUIRE: calls at once */
	uint64_t	 timeout_ms;	/* SLOT_ACQUIRE: longest wait */
	bool		 granted;	/* SLOT_GRANT: false = timed out */
};

/* One member per body named in msg.def (CANCEL and SHUTDOWN have none). */
union proto_body {
	struct proto_hello	 hello;
	struct proto_req_start	 req_start;
	struct proto_req_chunk	 req_chunk;
	struct proto_req_done	 req_done;
	struct proto_post_done	 post_done;
	struct proto_heartbeat	 heartbeat;
	struct proto_cache	 cache;
	struct proto_store	 store;
	struct proto_retire	 retire;
	struct proto_slot	 slot;
};

struct proto_msg {
	uint32_t	 m_version;
	uint32_t	 m_type;	/* enum proto_type */
	struct str	 m_rqid;	/* NULL .p when absent */
	union proto_body m_u;
	void		*m_priv;	/* decoder storage */
};

/* Name of a message type for logs ("REQ_DONE"); "UNKNOWN" otherwise. */
const char	*proto_type_name(uint32_t type);

/* Direction of a type (G2W or W2G), 0 for an unknown type. */
int		 proto_type_dir(uint32_t type);

/* Initialise m as a message of the given type with every optional field
 * at its default (strings absent, tokens -1). rqid may be NULL. */
void		 proto_msg_init(struct proto_msg *m, uint32_t type,
		    const char *rqid);

/* Append one complete frame (length prefix + MessagePack) for m to out.
 * Returns 0, or -1 if the payload would exceed PROTO_MAX_FRAME (out is
 * left unchanged). */
int		 proto_encode(struct buf *out, const struct proto_msg *m);

/* Decode one frame payload into m. Returns 0, or -1 with a message in
 * err. On failure m_version and m_type are still set when the envelope
 * could be read, so a version mismatch can be told apart. Call
 * proto_msg_free() after either result. */
int		 proto_decode(const void *p, size_t n, struct proto_msg *m,
		    char err[PROTO_ERRLEN]);

/* Release decoder storage; every view into m dies. */
void		 proto_msg_free(struct proto_msg *m);

#endif
