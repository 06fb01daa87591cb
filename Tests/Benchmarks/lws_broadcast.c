/*
 * Baseline for `make bench`: the plain libwebsockets broadcast server.
 * One session, no state: answers `join` with a welcome, every other request with an ack,
 * and rebroadcasts drag / camera / selection requests to every client as events with an
 * increasing seq, with one lws_write per message per client (the obvious design).
 * Build: gcc -O2 -o lws_broadcast lws_broadcast.c $(pkg-config --cflags --libs libwebsockets)
 * Run:   lws_broadcast PORT   (prints the same "listening on http://host:PORT" line as meridian)
 */
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLIENTS 20000
#define RING_MAX (1u << 20)

struct msg { int refs; size_t len; unsigned char buf[]; /* LWS_PRE + payload */ };
/* A growable ring of pending messages per client (capacity a power of two). */
struct client { struct lws *wsi; struct msg **ring; unsigned cap, head, tail; };
struct pss { int slot; };

static struct client *clients[MAX_CLIENTS];
static int nclients_hw;
static unsigned long long seq, participant;
static volatile int interrupted;

static struct msg *msg_new(const char *text, size_t len) {
    struct msg *m = malloc(sizeof(*m) + LWS_PRE + len);
    m->refs = 0; m->len = len;
    memcpy(m->buf + LWS_PRE, text, len);
    return m;
}

static void msg_unref(struct msg *m) { if (--m->refs <= 0) free(m); }

static void enqueue(struct client *c, struct msg *m) {
    if (c->tail - c->head >= c->cap) {
        if (c->cap >= RING_MAX) return; /* full: dropped (shows as loss) */
        unsigned cap = c->cap ? c->cap * 2 : 16;
        struct msg **ring = malloc(sizeof(*ring) * cap);
        unsigned n = c->tail - c->head;
        for (unsigned i = 0; i < n; i++) ring[i] = c->ring[(c->head + i) & (c->cap - 1)];
        free(c->ring);
        c->ring = ring; c->cap = cap; c->head = 0; c->tail = n;
    }
    m->refs++;
    c->ring[c->tail++ & (c->cap - 1)] = m;
    lws_callback_on_writable(c->wsi);
}

/* The ref's digits (the load tool sends integer refs), or "null". */
static void read_ref(const char *in, size_t len, char *out, size_t cap) {
    const char *p = memmem(in, len, "\"ref\":", 6);
    size_t n = 0;
    if (p) { p += 6; while (p < in + len && n + 1 < cap && ((*p >= '0' && *p <= '9') || *p == '"' || *p == '-' || (*p >= 'a' && *p <= 'z'))) out[n++] = *p++; }
    if (!n) { strcpy(out, "null"); return; }
    out[n] = 0;
}

static void on_message(struct client *self, const char *in, size_t len) {
    char ref[64], text[4096];
    read_ref(in, len, ref, sizeof ref);
    int n;
    if (memmem(in, len, "\"type\":\"join\"", 13)) {
        n = snprintf(text, sizeof text,
            "{\"type\":\"welcome\",\"ref\":%s,\"session\":\"load-0\",\"epoch\":\"lws\",\"participant\":\"p%llu\",\"seq\":%llu,"
            "\"resumed\":false,\"snapshot\":{\"seq\":%llu,\"annotations\":[],\"participants\":[]}}",
            ref, ++participant, seq, seq);
        enqueue(self, msg_new(text, (size_t)n));
        return;
    }
    int broadcast = memmem(in, len, "\"type\":\"drag\"", 13) || memmem(in, len, "\"type\":\"camera.", 15)
        || memmem(in, len, "\"type\":\"select\"", 15) || memmem(in, len, "\"type\":\"deselect\"", 17);
    if (broadcast) {
        /* Event = {"type":"X","seq":N, + the request after its "ref":R, */
        const char *type_end = memmem(in, len, "\",", 2);
        const char *after_ref = memmem(in, len, "\"ref\":", 6);
        if (type_end && after_ref) {
            after_ref += 6;
            while (after_ref < in + len && *after_ref != ',' && *after_ref != '}') after_ref++;
            if (*after_ref == ',') after_ref++;
            int head = (int)(type_end + 1 - in);
            n = snprintf(text, sizeof text, "%.*s,\"seq\":%llu,%.*s", head, in, ++seq, (int)(in + len - after_ref), after_ref);
            if (n > 0 && (size_t)n < sizeof text) {
                struct msg *m = msg_new(text, (size_t)n);
                m->refs++; /* held while fanning out */
                for (int i = 0; i < nclients_hw; i++) if (clients[i]) enqueue(clients[i], m);
                msg_unref(m);
            }
        }
    }
    n = snprintf(text, sizeof text, "{\"type\":\"ack\",\"ref\":%s,\"seq\":%llu}", ref, seq);
    enqueue(self, msg_new(text, (size_t)n));
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    struct pss *pss = user;
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        for (int i = 0; i < MAX_CLIENTS; i++) if (!clients[i]) {
            clients[i] = calloc(1, sizeof(struct client));
            clients[i]->wsi = wsi;
            pss->slot = i;
            if (i >= nclients_hw) nclients_hw = i + 1;
            return 0;
        }
        return -1;
    case LWS_CALLBACK_CLOSED: {
        struct client *c = clients[pss->slot];
        if (!c) break;
        while (c->head != c->tail) msg_unref(c->ring[c->head++ & (c->cap - 1)]);
        free(c->ring);
        free(c);
        clients[pss->slot] = NULL;
        break;
    }
    case LWS_CALLBACK_RECEIVE: {
        static char acc[65536];
        static size_t acc_len;
        if (lws_is_first_fragment(wsi)) acc_len = 0;
        if (acc_len + len <= sizeof acc) { memcpy(acc + acc_len, in, len); acc_len += len; }
        if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi)) on_message(clients[pss->slot], acc, acc_len);
        break;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        struct client *c = clients[pss->slot];
        if (!c || c->head == c->tail) break;
        struct msg *m = c->ring[c->head++ & (c->cap - 1)];
        int w = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
        msg_unref(m);
        if (w < 0) return -1;
        if (c->head != c->tail) lws_callback_on_writable(wsi);
        break;
    }
    default:
        break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    { "meridian.v1", callback, sizeof(struct pss), 4096, 0, NULL, 4096 },
    { NULL, NULL, 0, 0, 0, NULL, 0 },
};

static void on_signal(int sig) { (void)sig; interrupted = 1; }

int main(int argc, char **argv) {
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = argc > 1 ? atoi(argv[1]) : 9001;
    info.iface = "127.0.0.1";
    info.protocols = protocols;
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
    info.fd_limit_per_thread = 0;
    lws_set_log_level(LLL_ERR, NULL);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    struct lws_context *context = lws_create_context(&info);
    if (!context) return 1;
    printf("lws_broadcast listening on http://127.0.0.1:%d\n", info.port);
    fflush(stdout);
    while (!interrupted && lws_service(context, 0) >= 0) {}
    lws_context_destroy(context);
    return 0;
}
