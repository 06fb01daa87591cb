#ifndef MERIDIAN_LWS_SHIM_H
#define MERIDIAN_LWS_SHIM_H

#include <libwebsockets.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Helpers for libwebsockets macros and layouts that Swift cannot import. */

/* LWS_PRE is a macro: the headroom lws needs before every lws_write payload. */
static inline size_t mrd_lws_pre(void) { return LWS_PRE; }

/* LWS_WRITE_RAW is a macro alias: bytes written as-is, no WebSocket framing. */
static inline enum lws_write_protocol mrd_lws_write_raw(void) { return LWS_WRITE_RAW; }

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

#endif
