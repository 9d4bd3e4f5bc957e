/*
 * GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
 *
 * mcget: memcache `get` of existing keys at a fixed request rate, for bench/memcached.
 *
 *   mcget HOST PORT RATE CONNECTIONS SECONDS ROWS PREFIX
 *
 * CONNECTIONS threads, each with one TCP connection, each sending RATE/CONNECTIONS gets per second
 * on a fixed schedule (a get is sent at its scheduled time, or at once when the thread is behind;
 * nothing is skipped), one get per round trip (not pipelined). Key n (uniform in 1..ROWS) is
 * PREFIX followed by n as 32 zero-padded digits, e.g. "@@token.00000000000000000000000000000042".
 * Prints one JSON object: gets sent, hits, misses, errors, seconds, achieved rate, how far the
 * schedule slipped at worst, and round-trip latency percentiles.
 *
 * Built by bench/memcached/run.py with the system compiler: cc -O2 -pthread -o mcget mcget.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LAT_BUCKETS 20000 /* 10 us each: up to 200 ms */
#define LAT_STEP_NS 10000

struct worker {
    pthread_t thread;
    int fd;
    uint64_t seed;
    double interval;     /* seconds between two gets of this thread */
    double start, stop;  /* CLOCK_MONOTONIC seconds */
    long sent, hits, misses, errors;
    double worst_slip;
    long lat[LAT_BUCKETS + 1];
};

static const char *g_host, *g_prefix;
static int g_port;
static long g_rows;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static uint64_t next_rand(uint64_t *s)
{
    /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

static int dial(void)
{
    struct addrinfo hints, *res;
    char port[16];
    int fd, one = 1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%d", g_port);
    if (getaddrinfo(g_host, port, &hints, &res) != 0)
        return -1;
    fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* One get; returns 1 hit, 0 miss, -1 error. */
static int get_one(struct worker *w, long n)
{
    char req[256], buf[4096];
    int len = snprintf(req, sizeof(req), "get %s%032ld\r\n", g_prefix, n);
    size_t have = 0;

    if (write(w->fd, req, len) != len)
        return -1;
    for (;;) {
        ssize_t got = read(w->fd, buf + have, sizeof(buf) - 1 - have);
        if (got <= 0)
            return -1;
        have += got;
        buf[have] = 0;
        if (have >= 5 && memcmp(buf + have - 5, "END\r\n", 5) == 0)
            return strncmp(buf, "VALUE ", 6) == 0 ? 1 : 0;
        if (have >= 2 && memcmp(buf + have - 2, "\r\n", 2) == 0 &&
            (strncmp(buf, "ERROR", 5) == 0 || strncmp(buf, "SERVER_ERROR", 12) == 0 ||
             strncmp(buf, "CLIENT_ERROR", 12) == 0))
            return -1;
        if (have >= sizeof(buf) - 1)
            return -1;
    }
}

static void *run(void *arg)
{
    struct worker *w = arg;
    double due = w->start;

    while (due < w->stop) {
        double t0 = now(), t1;
        long bucket;
        int r;

        if (t0 < due) {
            sleep_until(due);
            t0 = now();
        } else if (t0 - due > w->worst_slip) {
            w->worst_slip = t0 - due;
        }
        r = get_one(w, 1 + (long)(next_rand(&w->seed) % (uint64_t)g_rows));
        t1 = now();
        w->sent++;
        if (r > 0)
            w->hits++;
        else if (r == 0)
            w->misses++;
        else {
            w->errors++;
            close(w->fd);
            w->fd = dial();
            if (w->fd < 0)
                break;
        }
        bucket = (long)((t1 - t0) * 1e9 / LAT_STEP_NS);
        w->lat[bucket > LAT_BUCKETS ? LAT_BUCKETS : bucket]++;
        due += w->interval;
    }
    return NULL;
}

static double percentile(struct worker *ws, int n, long total, double p)
{
    long want = (long)(total * p), seen = 0;
    for (int b = 0; b <= LAT_BUCKETS; b++) {
        for (int i = 0; i < n; i++)
            seen += ws[i].lat[b];
        if (seen > want)
            return (b + 1) * LAT_STEP_NS / 1e6;
    }
    return LAT_BUCKETS * LAT_STEP_NS / 1e6;
}

int main(int argc, char **argv)
{
    double rate, seconds, start, elapsed, slip = 0;
    long sent = 0, hits = 0, misses = 0, errors = 0;
    int conns;
    struct worker *ws;

    if (argc != 8) {
        fprintf(stderr, "usage: %s HOST PORT RATE CONNECTIONS SECONDS ROWS PREFIX\n", argv[0]);
        return 2;
    }
    g_host = argv[1];
    g_port = atoi(argv[2]);
    rate = atof(argv[3]);
    conns = atoi(argv[4]);
    seconds = atof(argv[5]);
    g_rows = atol(argv[6]);
    g_prefix = argv[7];
    if (g_port <= 0 || rate <= 0 || conns <= 0 || seconds <= 0 || g_rows <= 0) {
        fprintf(stderr, "%s: PORT, RATE, CONNECTIONS, SECONDS and ROWS must be positive\n", argv[0]);
        return 2;
    }
    ws = calloc(conns, sizeof(*ws));
    if (!ws)
        return 1;
    for (int i = 0; i < conns; i++) {
        ws[i].fd = dial();
        if (ws[i].fd < 0) {
            fprintf(stderr, "%s: cannot connect to %s:%d: %s\n", argv[0], g_host, g_port, strerror(errno));
            return 1;
        }
    }
    start = now() + 0.05;
    for (int i = 0; i < conns; i++) {
        ws[i].seed = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
        ws[i].interval = conns / rate;
        /* spread the threads' schedules over one interval */
        ws[i].start = start + ws[i].interval * i / conns;
        ws[i].stop = start + seconds;
        pthread_create(&ws[i].thread, NULL, run, &ws[i]);
    }
    for (int i = 0; i < conns; i++) {
        pthread_join(ws[i].thread, NULL);
        sent += ws[i].sent;
        hits += ws[i].hits;
        misses += ws[i].misses;
        errors += ws[i].errors;
        if (ws[i].worst_slip > slip)
            slip = ws[i].worst_slip;
        if (ws[i].fd >= 0)
            close(ws[i].fd);
    }
    elapsed = now() - start;
    printf("{\"sent\": %ld, \"hits\": %ld, \"misses\": %ld, \"errors\": %ld, \"seconds\": %.3f, "
           "\"rate\": %.1f, \"worst_slip_ms\": %.1f, \"latency_ms_p50\": %.3f, \"latency_ms_p99\": %.3f}\n",
           sent, hits, misses, errors, elapsed, sent / elapsed, slip * 1000,
           percentile(ws, conns, sent, 0.5), percentile(ws, conns, sent, 0.99));
    free(ws);
    return errors ? 3 : 0;
}
