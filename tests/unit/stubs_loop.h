/* stubs_loop.h - for check_loop: a fake engine (flow_run) and response-cache clear, driven by the request. */
#ifndef SLUICE_STUBS_LOOP_H
#define SLUICE_STUBS_LOOP_H

/*
 * flow_run does what the request's model field names, with the content
 * of its last message as the argument:
 *   echo         a chunk "<request's user>|<worker's user>|<argument>",
 *                usage 3 prompt and 4 completion tokens
 *   fail         RQ_ERROR 503 backend_error "the backend is down" of
 *                endpoint "Fast", Retry-After "30"
 *   wait         until rq_stopped (20 s at most), then cancelled
 *   wake         the same through rq_wake, sleeping on rq_wake_fd
 *   phase        rq_phase "node 1/2: <argument>", then a chunk "ok"
 *   deltas       a reasoning delta "hmm", then tool calls
 *                [{"index":0}], then a content delta "done"
 *   send         a CACHE frame through rq_send (hit, answer, 7 entries)
 *   early        a chunk "answer", rq_answer, then a chunk "dropped";
 *                waits as "wait" for up to <argument> ms (0 without
 *                one); argument "fail": then fails
 *   wait_answer  until rq_stopped, then rq_answer as if it succeeded
 *   slot         rq_slot_take on endpoint <argument> with limit 2: a
 *                chunk "granted" (then rq_slot_give), "timeout" or
 *                "stopped" (then cancelled)
 *   store        rq_store: "no store: <err>", or "same"/"other" (a
 *                second rq_store) and " lock <n>" (store_lock of lock
 *                "wf-lock" by the request, 600 s); argument "hold":
 *                then as wait
 *   hooked       a chunk: how many times stub_loop_hook was called
 * callcache_clear_request answers a chunk "cleared".
 */

/* A struct wloop_faults wf_on_request that counts its calls. */
void	stub_loop_hook(void);

#endif
