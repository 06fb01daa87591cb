#ifndef MERIDIAN_LWS_SHIM_H
#define MERIDIAN_LWS_SHIM_H

#include <libwebsockets.h>
#include <ev.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <errno.h>
#include <liburing.h>
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
 * returns once per pass as with the default poll() loop and the caller's loop keeps its shape.
 * An idle watcher, started by mrd_ev_dont_wait() and stopped after the pass, makes the next pass
 * look for what is ready without sleeping (no wake-up through lws's pipe). */
struct mrd_ev_watchers {
    ev_check check;
    ev_idle idle;
    ev_io held;
};

static void mrd_ev_break_after_pass(struct ev_loop *loop, ev_check *watcher, int revents) {
    (void)revents;
    struct mrd_ev_watchers *watchers = (struct mrd_ev_watchers *)watcher;
    ev_idle_stop(loop, &watchers->idle);
    ev_break(loop, EVBREAK_ONE);
}

static void mrd_ev_idle_noop(struct ev_loop *loop, ev_idle *watcher, int revents) {
    (void)loop; (void)watcher; (void)revents;
}

/* Nothing to do here: waking the loop is the point; the work follows the pass (HandshakeGate). */
static void mrd_ev_held_ready(struct ev_loop *loop, ev_io *watcher, int revents) {
    (void)loop; (void)watcher; (void)revents;
}

static inline void *mrd_ev_loop_new(void) {
    struct ev_loop *loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV | EVFLAG_NOSIGMASK);
    if (!loop) return NULL;
    struct mrd_ev_watchers *watchers = (struct mrd_ev_watchers *)malloc(sizeof *watchers);
    if (!watchers) { ev_loop_destroy(loop); return NULL; }
    ev_check_init(&watchers->check, mrd_ev_break_after_pass);
    ev_check_start(loop, &watchers->check);
    ev_unref(loop); /* the check watcher alone does not keep the loop alive */
    ev_idle_init(&watchers->idle, mrd_ev_idle_noop);
    ev_init(&watchers->held, mrd_ev_held_ready);
    ev_set_userdata(loop, watchers);
    return loop;
}

/* The next pass of the loop (on its own thread) does not sleep. */
static inline void mrd_ev_dont_wait(void *opaque) {
    struct ev_loop *loop = (struct ev_loop *)opaque;
    struct mrd_ev_watchers *watchers = (struct mrd_ev_watchers *)ev_userdata(loop);
    ev_idle_start(loop, &watchers->idle);
}

/* The loop wakes while any socket of the epoll set `set` has input (level-triggered); once. */
static inline void mrd_ev_watch_set(void *opaque, int set) {
    struct ev_loop *loop = (struct ev_loop *)opaque;
    struct mrd_ev_watchers *watchers = (struct mrd_ev_watchers *)ev_userdata(loop);
    if (ev_is_active(&watchers->held)) return;
    ev_io_set(&watchers->held, set, EV_READ);
    ev_io_start(loop, &watchers->held);
    ev_unref(loop); /* nor does this one */
}

/* Frees a loop from mrd_ev_loop_new; only after lws_context_destroy. */
static inline void mrd_ev_loop_destroy(void *opaque) {
    struct ev_loop *loop = (struct ev_loop *)opaque;
    struct mrd_ev_watchers *watchers = (struct mrd_ev_watchers *)ev_userdata(loop);
    ev_idle_stop(loop, &watchers->idle);
    if (ev_is_active(&watchers->held)) {
        ev_ref(loop);
        ev_io_stop(loop, &watchers->held);
    }
    ev_ref(loop);
    ev_check_stop(loop, &watchers->check);
    free(watchers);
    ev_loop_destroy(loop);
}

/* An epoll set of sockets watched for input (level-triggered), asked without sleeping: whether
 * any of them has input waiting, without a pass of the event loop. */
static inline int mrd_readiness_new(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/* 0, or -1 when `socket` cannot be watched. */
static inline int mrd_readiness_watch(int set, int socket) {
    struct epoll_event event = { .events = EPOLLIN, .data = { .fd = socket } };
    return epoll_ctl(set, EPOLL_CTL_ADD, socket, &event);
}

/* Up to `max` (at most 64) sockets of `set` with input waiting, into `sockets`: their count, or -1. */
static inline int mrd_readiness_take(int set, int *sockets, int max) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(set, events, max, 0);
    for (int i = 0; i < n; i++) sockets[i] = events[i].data.fd;
    return n;
}

static inline void mrd_readiness_forget(int set, int socket) {
    struct epoll_event event = { 0 };
    (void)epoll_ctl(set, EPOLL_CTL_DEL, socket, &event);
}

/* 1 when a watched socket has input (or hung up), 0 when none has, -1 on failure. */
static inline int mrd_readiness_any(int set) {
    struct epoll_event event;
    return epoll_wait(set, &event, 1, 0);
}

/* A batch of socket writes made in one system call (io_uring): queued with mrd_send_ring_queue,
 * made in order by mrd_send_ring_flush. A write the socket cannot take at once answers -EAGAIN
 * (never waits in the kernel), a short write its count, a failed one -errno. */
struct mrd_send_ring {
    struct io_uring ring;
    unsigned queued;
};

/* A ring for `entries` writes a batch, or NULL with `*error` set (io_uring unavailable: old
 * kernel, seccomp, kernel.io_uring_disabled). */
static inline struct mrd_send_ring *mrd_send_ring_new(unsigned entries, int *error) {
    struct mrd_send_ring *ring = calloc(1, sizeof(struct mrd_send_ring));
    if (ring == NULL) { *error = ENOMEM; return NULL; }
    int result = io_uring_queue_init(entries, &ring->ring, 0);
    if (result < 0) { free(ring); *error = -result; return NULL; }
    *error = 0;
    return ring;
}

static inline void mrd_send_ring_free(struct mrd_send_ring *ring) {
    io_uring_queue_exit(&ring->ring);
    free(ring);
}

/* 0, or -1 when the batch is full. `tag` comes back with the write's result. */
static inline int mrd_send_ring_queue(struct mrd_send_ring *ring, int socket, const void *bytes,
                                      size_t count, uint64_t tag) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring->ring);
    if (sqe == NULL) return -1;
    io_uring_prep_send(sqe, socket, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT);
    io_uring_sqe_set_data64(sqe, tag);
    ring->queued += 1;
    return 0;
}

/* Makes the queued writes and waits for all of them: each one's result into `results` at its
 * tag (tags below `capacity`; results of writes not made are left as they were). 0, or -errno
 * when not all of the batch could be submitted: the ring must not be used again. */
static inline int mrd_send_ring_flush(struct mrd_send_ring *ring, int32_t *results, unsigned capacity) {
    unsigned expected = ring->queued;
    if (expected == 0) return 0;
    ring->queued = 0;
    int submitted = io_uring_submit_and_wait(&ring->ring, expected);
    int failure = 0;
    if (submitted < 0) {
        failure = submitted;
        submitted = 0;
    } else if ((unsigned)submitted < expected) {
        failure = -EBUSY;
    }
    unsigned seen = 0;
    while (seen < (unsigned)submitted) {
        struct io_uring_cqe *cqe;
        int waited = io_uring_wait_cqe(&ring->ring, &cqe);
        if (waited == -EINTR) continue;
        if (waited < 0) { failure = waited; break; }
        uint64_t tag = io_uring_cqe_get_data64(cqe);
        if (tag < capacity) results[tag] = cqe->res;
        io_uring_cqe_seen(&ring->ring, cqe);
        seen += 1;
    }
    return failure;
}

/* lws's signal_cb for event-library loops: signals stay with the process's own handling. */
static inline void mrd_ignore_signal(void *event_lib_handle, int signum) {
    (void)event_lib_handle; (void)signum;
}

#endif
