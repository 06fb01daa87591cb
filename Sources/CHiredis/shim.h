#ifndef MERIDIAN_HIREDIS_SHIM_H
#define MERIDIAN_HIREDIS_SHIM_H

/* The Redis client's C: hiredis (the RESP reader and command formatting) and OpenSSL (TLS to
 * Redis, rediss://). */
#include <hiredis/hiredis.h>
#include <sys/time.h>
#include <sys/eventfd.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

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

/* OpenSSL's macros, as functions. */
static inline int mrd_ssl_set_server_name(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
static inline int mrd_ssl_ctx_min_tls12(SSL_CTX *ctx) { return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }
static inline int mrd_ssl_error_want_read(void) { return SSL_ERROR_WANT_READ; }
static inline int mrd_ssl_error_want_write(void) { return SSL_ERROR_WANT_WRITE; }
static inline int mrd_ssl_error_zero_return(void) { return SSL_ERROR_ZERO_RETURN; }
static inline int mrd_ssl_verify_peer(void) { return SSL_VERIFY_PEER; }

#endif
