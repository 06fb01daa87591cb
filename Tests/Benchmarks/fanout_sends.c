/* One fan-out's writes, made one `send` each or in io_uring batches: the kernel's cost per write
 * that a server pays for every delivery. 100 loopback TCP connections; the writer on CPU 0, a
 * reader draining all of them (epoll) on CPU 1; each round writes 200 bytes to every connection,
 * then waits 300 µs.
 *
 *   gcc -O2 -o /tmp/fanout_sends Tests/Benchmarks/fanout_sends.c -luring -lpthread
 *   /tmp/fanout_sends MODE ROUNDS [BATCH]
 *     MODE 0: one send(2) per write
 *     MODE 1: io_uring, BATCH writes per io_uring_enter (default: the whole fan-out)
 *     MODE 2: as 1, with the sockets registered (fixed files)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MEMBERS 100
#define FRAME 200

static int server_side[MEMBERS], client_side[MEMBERS];

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void *reader(void *unused) {
    (void)unused;
    pin(1);
    int set = epoll_create1(0);
    for (int i = 0; i < MEMBERS; i++) {
        struct epoll_event event = { .events = EPOLLIN, .data.fd = client_side[i] };
        epoll_ctl(set, EPOLL_CTL_ADD, client_side[i], &event);
    }
    struct epoll_event events[MEMBERS];
    static char buffer[65536];
    for (;;) {
        int n = epoll_wait(set, events, MEMBERS, -1);
        for (int i = 0; i < n; i++) (void)!read(events[i].data.fd, buffer, sizeof buffer);
    }
    return NULL;
}

static double micros(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODE ROUNDS [BATCH]\n", argv[0]);
        return 2;
    }
    int mode = atoi(argv[1]), rounds = atoi(argv[2]);
    int batch = argc > 3 ? atoi(argv[3]) : MEMBERS;
    if (batch < 1 || batch > MEMBERS) batch = MEMBERS;

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, MEMBERS * 2)
        || getsockname(listener, (struct sockaddr *)&address, &length)) {
        perror("listen");
        return 1;
    }
    for (int i = 0; i < MEMBERS; i++) {
        client_side[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(client_side[i], (struct sockaddr *)&address, sizeof address)) { perror("connect"); return 1; }
        server_side[i] = accept(listener, NULL, NULL);
        int one = 1;
        setsockopt(server_side[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(server_side[i], F_SETFL, O_NONBLOCK);
    }
    pthread_t thread;
    pthread_create(&thread, NULL, reader, NULL);
    pin(0);

    char frame[FRAME];
    memset(frame, 'x', sizeof frame);
    struct io_uring ring;
    if (mode > 0 && io_uring_queue_init(MEMBERS, &ring, 0) < 0) { fprintf(stderr, "io_uring unavailable\n"); return 1; }
    if (mode == 2 && io_uring_register_files(&ring, server_side, MEMBERS) < 0) { fprintf(stderr, "cannot register\n"); return 1; }

    double total = 0;
    long short_writes = 0;
    for (int round = 0; round < rounds; round++) {
        double start = micros();
        if (mode == 0) {
            for (int i = 0; i < MEMBERS; i++)
                if (send(server_side[i], frame, FRAME, MSG_NOSIGNAL) != FRAME) short_writes++;
        } else {
            for (int i = 0; i < MEMBERS; i++) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
                io_uring_prep_send(sqe, mode == 2 ? i : server_side[i], frame, FRAME, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (mode == 2) sqe->flags |= IOSQE_FIXED_FILE;
                if ((i + 1) % batch == 0 || i == MEMBERS - 1) {
                    int queued = i % batch + 1;
                    io_uring_submit_and_wait(&ring, queued);
                    struct io_uring_cqe *cqe;
                    unsigned head, seen = 0;
                    io_uring_for_each_cqe(&ring, head, cqe) {
                        if (cqe->res != FRAME) short_writes++;
                        seen++;
                    }
                    io_uring_cq_advance(&ring, seen);
                }
            }
        }
        total += micros() - start;
        usleep(300);
    }
    printf("mode %d batch %d: %.1f us per fan-out of %d, %.3f us per write, %ld short\n",
           mode, mode == 0 ? 1 : batch, total / rounds, MEMBERS, total / rounds / MEMBERS, short_writes);
    return 0;
}
