/*
 * The strong baseline for `make bench`: a plain libwebsockets server with rooms, written
 * the fastest way we know on this library (shared/LWS.md, "Throughput").
 *
 * - Each broadcast frame is built once: server frames are unmasked, so the same bytes
 *   (WebSocket header + JSON) serve every member of the room.
 * - Delivering a frame to a member appends those bytes to the member's pending buffer and
 *   asks for one WRITEABLE; on WRITEABLE all pending bytes go out in ONE
 *   lws_write(..., LWS_WRITE_RAW) (no permessage-deflate is offered, so raw framing is safe).
 *   lws keeps whatever the socket did not take and sends it before the next WRITEABLE,
 *   so the buffer is free again as soon as lws_write returns.
 * - Nothing is conflated or dropped below a 256 MiB per-client cap (counted if ever hit).
 *
 * Protocol v1, just enough for `meridian load`: `join` picks the room from its `session`
 * and is answered with a welcome (empty snapshot); every request is acked; drag, camera.*,
 * select and deselect requests are rebroadcast to the room as events with an increasing
 * per-room seq (the request without its ref, with "seq" after the type).
 *
 * Build: gcc -O2 -o lws_rooms lws_rooms.c $(pkg-config --cflags --libs libwebsockets) -lev
 * Run:   lws_rooms PORT [--libev]   (prints "listening on http://127.0.0.1:PORT" like meridian)
 *   --libev: libwebsockets on a libev (epoll) loop instead of its default poll() loop.
 */
#include <libwebsockets.h>
#include <ev.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define CLIENT_CAP (256u << 20)

struct client {
    struct lws *wsi;
    int room, member;          /* room index and position in its member array; room -1 before join */
    unsigned char *buf;        /* LWS_PRE headroom + pending frames */
    size_t len, cap;
    int want_write;
    unsigned char *rx;         /* a fragmented message being assembled */
    size_t rx_len, rx_cap;
};

struct room {
    char name[64];
    unsigned long long seq;
    int *members;
    int count, cap;
};

struct pss { int slot; };

static struct client *clients;
static int nclients, client_cap, *free_slots, nfree;
static struct room *rooms;
static int nrooms, room_cap;
static int *room_index;        /* open addressing over room names, -1 = empty */
static unsigned room_index_cap;
static unsigned long long participants, dropped_bytes;
static volatile sig_atomic_t interrupted;

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n);
    if (!q) { fprintf(stderr, "out of memory\n"); exit(1); }
    return q;
}

static unsigned hash(const char *s, size_t n) {
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void index_insert(int r) {
    unsigned mask = room_index_cap - 1, i = hash(rooms[r].name, strlen(rooms[r].name)) & mask;
    while (room_index[i] >= 0) i = (i + 1) & mask;
    room_index[i] = r;
}

static int room_for(const char *name, size_t n) {
    if (n >= sizeof rooms[0].name) n = sizeof rooms[0].name - 1;
    if (room_index_cap) {
        unsigned mask = room_index_cap - 1, i = hash(name, n) & mask;
        for (; room_index[i] >= 0; i = (i + 1) & mask) {
            struct room *r = &rooms[room_index[i]];
            if (strlen(r->name) == n && !memcmp(r->name, name, n)) return room_index[i];
        }
    }
    if (nrooms == room_cap) {
        room_cap = room_cap ? room_cap * 2 : 64;
        rooms = xrealloc(rooms, sizeof *rooms * room_cap);
    }
    struct room *r = &rooms[nrooms];
    memset(r, 0, sizeof *r);
    memcpy(r->name, name, n);
    nrooms++;
    if ((unsigned)nrooms * 2 > room_index_cap) {
        room_index_cap = room_index_cap ? room_index_cap * 2 : 256;
        room_index = xrealloc(room_index, sizeof *room_index * room_index_cap);
        memset(room_index, 0xff, sizeof *room_index * room_index_cap);
        for (int i = 0; i < nrooms; i++) index_insert(i);
    } else {
        index_insert(nrooms - 1);
    }
    return nrooms - 1;
}

static void room_add(int r, int slot) {
    struct room *room = &rooms[r];
    if (room->count == room->cap) {
        room->cap = room->cap ? room->cap * 2 : 16;
        room->members = xrealloc(room->members, sizeof *room->members * room->cap);
    }
    clients[slot].room = r;
    clients[slot].member = room->count;
    room->members[room->count++] = slot;
}

static void room_remove(int slot) {
    struct client *c = &clients[slot];
    if (c->room < 0) return;
    struct room *room = &rooms[c->room];
    int last = room->members[--room->count];
    room->members[c->member] = last;
    clients[last].member = c->member;
    c->room = -1;
}

/* Appends one whole frame to a client's pending bytes and asks for a WRITEABLE. */
static void deliver(struct client *c, const unsigned char *frame, size_t n) {
    if (c->len + n > c->cap) {
        if (c->len + n > CLIENT_CAP) { dropped_bytes += n; return; }
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n) cap *= 2;
        c->buf = xrealloc(c->buf, LWS_PRE + cap);
        c->cap = cap;
    }
    memcpy(c->buf + LWS_PRE + c->len, frame, n);
    c->len += n;
    if (!c->want_write) { c->want_write = 1; lws_callback_on_writable(c->wsi); }
}

/* Writes an unmasked text frame header for `n` payload bytes; returns its length. */
static size_t frame_header(unsigned char *h, size_t n) {
    h[0] = 0x81;
    if (n < 126) { h[1] = (unsigned char)n; return 2; }
    if (n < 65536) { h[1] = 126; h[2] = (unsigned char)(n >> 8); h[3] = (unsigned char)n; return 4; }
    h[1] = 127;
    for (int i = 0; i < 8; i++) h[2 + i] = (unsigned char)((unsigned long long)n >> (56 - 8 * i));
    return 10;
}

/* A frame under construction: header room first, the JSON after it. */
static unsigned char frame[16 + 65536 + 256];
#define JSON ((char *)frame + 10)
#define JSON_CAP (sizeof frame - 10)

/* Frames the JSON written at JSON (n bytes) in place; returns the frame's start. */
static const unsigned char *seal(size_t n, size_t *out_len) {
    unsigned char h[10];
    size_t hl = frame_header(h, n);
    unsigned char *start = frame + 10 - hl;
    memcpy(start, h, hl);
    *out_len = hl + n;
    return start;
}

/* The value after `"key":` up to ',' or '}' (numbers; strings with their quotes). */
static int field(const char *in, size_t len, const char *key, const char **v, size_t *vn) {
    size_t kn = strlen(key);
    const char *p = memmem(in, len, key, kn);
    if (!p) return 0;
    p += kn;
    const char *e = p;
    if (e < in + len && *e == '"') { e++; while (e < in + len && *e != '"') e++; if (e < in + len) e++; }
    else while (e < in + len && *e != ',' && *e != '}') e++;
    *v = p; *vn = (size_t)(e - p);
    return 1;
}

static void on_message(int slot, const char *in, size_t len) {
    struct client *self = &clients[slot];
    const char *ref = "null", *v;
    size_t refn = 4, vn, n, fl;
    if (field(in, len, "\"ref\":", &v, &vn) && vn) { ref = v; refn = vn; }

    if (len > 16 && !memcmp(in, "{\"type\":\"join\"", 14)) {
        if (!field(in, len, "\"session\":", &v, &vn) || vn < 2) { v = "\"default\""; vn = 9; }
        if (self->room < 0) room_add(room_for(v + 1, vn - 2), slot);
        struct room *r = &rooms[self->room];
        n = (size_t)snprintf(JSON, JSON_CAP,
            "{\"type\":\"welcome\",\"ref\":%.*s,\"session\":\"%s\",\"epoch\":\"lws\",\"participant\":\"p%llu\","
            "\"seq\":%llu,\"resumed\":false,\"snapshot\":{\"seq\":%llu,\"annotations\":[],\"participants\":[]}}",
            (int)refn, ref, r->name, ++participants, r->seq, r->seq);
        const unsigned char *f = seal(n, &fl);
        deliver(self, f, fl);
        return;
    }
    if (self->room < 0) return;
    struct room *r = &rooms[self->room];
    int broadcast = len > 16 && (!memcmp(in, "{\"type\":\"drag\"", 14) || !memcmp(in, "{\"type\":\"camera.", 16)
        || !memcmp(in, "{\"type\":\"select\"", 16) || !memcmp(in, "{\"type\":\"deselect\"", 18));
    if (broadcast) {
        /* {"type":"X","seq":N, + the request after "ref":R, */
        const char *type_end = memchr(in + 9, '"', len - 9);
        const char *rest = memmem(in, len, "\"ref\":", 6);
        if (type_end && rest && (size_t)(type_end + 1 - in) < 64) {
            rest += 6;
            if (rest < in + len && *rest == '"') { rest++; while (rest < in + len && *rest != '"') rest++; rest++; }
            while (rest < in + len && *rest != ',' && *rest != '}') rest++;
            if (rest < in + len && *rest == ',') rest++;
            size_t head = (size_t)(type_end + 1 - in), tail = (size_t)(in + len - rest);
            if (head + tail + 32 < JSON_CAP) {
                memcpy(JSON, in, head);
                n = head + (size_t)sprintf(JSON + head, ",\"seq\":%llu%s", ++r->seq, *rest == '}' ? "" : ",");
                memcpy(JSON + n, rest, tail);
                n += tail;
                const unsigned char *f = seal(n, &fl);
                for (int i = 0; i < r->count; i++) deliver(&clients[r->members[i]], f, fl);
            }
        }
    }
    n = (size_t)snprintf(JSON, JSON_CAP, "{\"type\":\"ack\",\"ref\":%.*s,\"seq\":%llu}", (int)refn, ref, r->seq);
    const unsigned char *f = seal(n, &fl);
    deliver(self, f, fl);
}

static int new_slot(void) {
    if (nfree) return free_slots[--nfree];
    if (nclients == client_cap) {
        client_cap = client_cap ? client_cap * 2 : 1024;
        clients = xrealloc(clients, sizeof *clients * client_cap);
        free_slots = xrealloc(free_slots, sizeof *free_slots * client_cap);
    }
    return nclients++;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    struct pss *pss = user;
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED: {
        int slot = new_slot();
        memset(&clients[slot], 0, sizeof clients[slot]);
        clients[slot].wsi = wsi;
        clients[slot].room = -1;
        pss->slot = slot;
        break;
    }
    case LWS_CALLBACK_CLOSED: {
        struct client *c = &clients[pss->slot];
        room_remove(pss->slot);
        free(c->buf);
        free(c->rx);
        memset(c, 0, sizeof *c);
        c->room = -1;
        free_slots[nfree++] = pss->slot;
        break;
    }
    case LWS_CALLBACK_RECEIVE: {
        struct client *c = &clients[pss->slot];
        int first = lws_is_first_fragment(wsi), last = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
        if (first && last) { on_message(pss->slot, in, len); break; }
        if (first) c->rx_len = 0;
        if (c->rx_len + len > c->rx_cap) { c->rx_cap = (c->rx_len + len) * 2; c->rx = xrealloc(c->rx, c->rx_cap); }
        memcpy(c->rx + c->rx_len, in, len);
        c->rx_len += len;
        if (last) on_message(pss->slot, (const char *)c->rx, c->rx_len);
        break;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        struct client *c = &clients[pss->slot];
        c->want_write = 0;
        if (!c->len) break;
        size_t n = c->len;
        c->len = 0;
        if (lws_write(wsi, c->buf + LWS_PRE, n, LWS_WRITE_RAW) < (int)n) return -1;
        if (c->cap > (1u << 20)) { free(c->buf); c->buf = NULL; c->cap = 0; } /* after a burst */
        break;
    }
    default:
        break;
    }
    return 0;
}

static const struct lws_protocols protocols[] = {
    { "meridian.v1", callback, sizeof(struct pss), 4096, 0, NULL, 0 },
    { NULL, NULL, 0, 0, 0, NULL, 0 },
};

static void on_signal(int sig) { (void)sig; interrupted = 1; }

static void on_ev_signal(struct ev_loop *loop, ev_signal *w, int revents) {
    (void)w; (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

int main(int argc, char **argv) {
    int use_libev = 0;
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = 9001;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--libev")) use_libev = 1;
        else info.port = atoi(argv[i]);
    }
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl)) { rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl); }
    info.iface = "127.0.0.1";
    info.protocols = protocols;
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
    info.pt_serv_buf_size = 64 * 1024;
    lws_set_log_level(LLL_ERR, NULL);

    struct ev_loop *loop = NULL;
    void *foreign[1];
    ev_signal sigint_w, sigterm_w;
    if (use_libev) {
        loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
        if (!loop) { fprintf(stderr, "no libev epoll loop\n"); return 1; }
        ev_signal_init(&sigint_w, on_ev_signal, SIGINT);
        ev_signal_start(loop, &sigint_w);
        ev_signal_init(&sigterm_w, on_ev_signal, SIGTERM);
        ev_signal_start(loop, &sigterm_w);
        foreign[0] = loop;
        info.foreign_loops = foreign;
        info.options |= LWS_SERVER_OPTION_LIBEV;
    } else {
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
    }
    struct lws_context *context = lws_create_context(&info);
    if (!context) return 1;
    printf("lws_rooms (%s) listening on http://127.0.0.1:%d\n", use_libev ? "libev" : "poll", info.port);
    fflush(stdout);
    if (use_libev) ev_run(loop, 0);
    else while (!interrupted && lws_service(context, 0) >= 0) {}
    lws_context_destroy(context);
    if (loop) ev_loop_destroy(loop);
    if (dropped_bytes) fprintf(stderr, "lws_rooms: %llu bytes dropped at the per-client cap\n", dropped_bytes);
    return 0;
}
