#ifndef MERIDIAN_HIREDIS_SHIM_H
#define MERIDIAN_HIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <sys/time.h>
#include <sys/eventfd.h>

/* Reply types are macros: Swift sees them through these. */
static inline int mrd_redis_reply_string(void) { return REDIS_REPLY_STRING; }
static inline int mrd_redis_reply_array(void) { return REDIS_REPLY_ARRAY; }
static inline int mrd_redis_reply_integer(void) { return REDIS_REPLY_INTEGER; }
static inline int mrd_redis_reply_nil(void) { return REDIS_REPLY_NIL; }
static inline int mrd_redis_reply_status(void) { return REDIS_REPLY_STATUS; }
static inline int mrd_redis_reply_error(void) { return REDIS_REPLY_ERROR; }
static inline int mrd_redis_ok(void) { return REDIS_OK; }

/* A non-blocking eventfd: how another thread wakes a subscriber waiting in poll(). */
static inline int mrd_wake_descriptor(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

#endif
