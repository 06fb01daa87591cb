#ifndef MERIDIAN_LWS_SHIM_H
#define MERIDIAN_LWS_SHIM_H

#include <libwebsockets.h>
#include <ev.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Helpers for libwebsockets macros and layouts that Swift cannot import. */

/* LWS_PRE is a macro: the headroom lws needs before every lws_write payload. */
static inline size_t mrd_lws_pre(void) { return LWS_PRE; }

/* LWS_WRITE_RAW is a macro alias: bytes written as-is, no WebSocket framing. */
static inline enum lws_write_protocol mrd_lws_write_raw(void) { return LWS_WRITE_RAW; }

/* LWS_SERVER_OPTION_REQUIRE_VALID_OPENSSL_CLIENT_CERT is an expression macro: mutual TLS. */
static inline uint64_t mrd_lws_require_client_cert(void) { return (uint64_t)LWS_SERVER_OPTION_REQUIRE_VALID_OPENSSL_CLIENT_CERT; }

/* Returns whole free pages of the heap to the system (glibc); a no-op elsewhere. */
static inline void mrd_release_free_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

/* A sorted-usec-list timer with a back pointer to its Swift owner. */
struct mrd_timer {
    lws_sorted_usec_list_t sul;
    void *user;
};

static inline struct mrd_timer *mrd_timer_from_sul(lws_sorted_usec_list_t *sul) {
    return lws_container_of(sul, struct mrd_timer, sul);
}

static inline void mrd_timer_schedule(struct lws_context *context, struct mrd_timer *timer,
                                      sul_cb_t callback, lws_usec_t usec) {
    lws_sul_schedule(context, 0, &timer->sul, callback, usec);
}

static inline void mrd_timer_cancel(struct mrd_timer *timer) {
    lws_sul_cancel(&timer->sul);
}

/* A libev (epoll) loop for LWS_SERVER_OPTION_LIBEV, handed to lws as a foreign loop. lws_service()
 * runs ev_run() on it until ev_break(): a check watcher breaks after every pass, so lws_service()
 * returns once per pass as with the default poll() loop and the caller's loop keeps its shape. */
static void mrd_ev_break_after_pass(struct ev_loop *loop, ev_check *watcher, int revents) {
    (void)watcher; (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

static inline void *mrd_ev_loop_new(void) {
    struct ev_loop *loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV | EVFLAG_NOSIGMASK);
    if (!loop) return NULL;
    ev_check *check = (ev_check *)malloc(sizeof *check);
    if (!check) { ev_loop_destroy(loop); return NULL; }
    ev_check_init(check, mrd_ev_break_after_pass);
    ev_check_start(loop, check);
    ev_unref(loop); /* the check watcher alone does not keep the loop alive */
    ev_set_userdata(loop, check);
    return loop;
}

/* Frees a loop from mrd_ev_loop_new; only after lws_context_destroy. */
static inline void mrd_ev_loop_destroy(void *opaque) {
    struct ev_loop *loop = (struct ev_loop *)opaque;
    ev_check *check = (ev_check *)ev_userdata(loop);
    ev_ref(loop);
    ev_check_stop(loop, check);
    free(check);
    ev_loop_destroy(loop);
}

/* lws's signal_cb for event-library loops: signals stay with the process's own handling. */
static inline void mrd_ignore_signal(void *event_lib_handle, int signum) {
    (void)event_lib_handle; (void)signum;
}

#endif
