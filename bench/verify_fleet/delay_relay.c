/* GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
 *
 * delay_relay: a TCP relay that puts a fixed network delay between its clients and their servers.
 *
 * This kernel has no netem qdisc (and no fq qdisc for a BPF earliest-departure-time delay), so the
 * delay is made here: every chunk of bytes read from one side is written to the other side no earlier
 * than HALF_RTT ms after it was read (one-way delay, each direction), in order. A request and its
 * answer then take one RTT more than on the direct path, whatever their size.
 *
 * TCP's own handshake happens between the client and this relay at once; to keep the round trip it
 * costs on a real path, the relay opens its connection to the server 3 * HALF_RTT after it accepted
 * (SYN, SYN-ACK, ACK reaching the server), so a MySQL server's greeting reaches the client 2 RTT after
 * its connect(), as over a real link. The client's connect() itself returns at once.
 *
 * The listening sockets live in the network namespace given with -n (a path under /run/netns), where
 * one local route (ip route add local PREFIX dev lo) lets the relay answer on every address of a
 * prefix: each bench host has its own address. The connections to the servers are made from the
 * relay's own namespace. One process, one thread, epoll; bytes are copied once, never per byte.
 *
 * usage: delay_relay -d HALF_RTT_MS [-n NETNS_PATH] LISTEN_PORT=SERVER_IP:SERVER_PORT ...
 * Prints "ready" on stdout once every port listens; SIGTERM ends it, and its counters go to stderr
 * (connections, the most open at once, chunks, bytes, failed).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTEN 64
#define CHUNK 65536

struct chunk {              /* bytes read from one side, due on the other side at `due` */
    struct chunk *next;     /* next chunk of the same direction */
    struct chunk *gnext;    /* next chunk in the global order of arrival (= order of due times) */
    struct pipe_ *dir;
    int64_t due;
    size_t len, off;
    int eof;                /* the reading side closed: shut the writing side down once due */
    char data[];
};

struct pipe_ {              /* one direction of one relayed connection */
    struct conn *conn;
    int from, to;           /* index 0 = client, 1 = server */
    struct chunk *head, *tail;
    int ready;              /* chunks at the head that are due (count) */
    int closed;
};

struct conn {
    int fd[2];              /* client, server (-1 until connected) */
    int upstream;           /* listen index */
    int64_t connect_at;
    int connecting;
    struct pipe_ dir[2];    /* dir[0]: client -> server, dir[1]: server -> client */
    int dead;
    struct conn *wnext;     /* waiting to connect, in order */
};

struct tag { struct conn *conn; int side; int listen; };

static int64_t half_ns;
static int ep;
static struct sockaddr_in upstreams[MAX_LISTEN];
static int listen_fds[MAX_LISTEN];
static struct tag listen_tags[MAX_LISTEN];
static int n_listen;
static struct chunk *gq_head, *gq_tail;            /* chunks not yet due, in order */
static struct conn *wait_head, *wait_tail;         /* accepted, server connection not opened yet */
static volatile sig_atomic_t stop;
static unsigned long long n_accepted, n_bytes, n_chunks, n_failed, n_open, n_peak;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_term(int sig) { (void)sig; stop = 1; }

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void watch(int fd, struct tag *tag, uint32_t events, int op)
{
    struct epoll_event ev;
    ev.events = events;
    ev.data.ptr = tag;
    if (epoll_ctl(ep, op, fd, &ev) < 0 && op != EPOLL_CTL_DEL)
        die("epoll_ctl");
}

static void conn_close(struct conn *c)
{
    int i;
    if (c->dead)
        return;
    c->dead = 1;
    n_open--;
    for (i = 0; i < 2; i++)
        if (c->fd[i] >= 0) {
            close(c->fd[i]);
            c->fd[i] = -1;
        }
    /* chunks still queued are freed as the global queue reaches them (they point at a dead conn);
       ready ones are freed here, and the conn itself once no chunk refers to it */
}

/* A closed connection's memory is kept until the relay ends (about 300 bytes each): an event of the same
   epoll batch may still name it. The bench's relay lives for one run. */
static void conn_maybe_free(struct conn *c)
{
    (void)c;
}

static void drop_ready(struct pipe_ *p)
{
    while (p->ready > 0 && p->head) {
        struct chunk *ch = p->head;
        p->head = ch->next;
        if (!p->head)
            p->tail = NULL;
        p->ready--;
        free(ch);
    }
}

/* Write the due chunks of one direction; returns -1 when the connection failed, 1 when both sides ended. */
static int flush(struct pipe_ *p)
{
    struct conn *c = p->conn;
    int fd = c->fd[p->to];
    if (fd < 0)
        return 0;
    while (p->ready > 0 && p->head) {
        struct chunk *ch = p->head;
        if (ch->eof) {
            shutdown(fd, SHUT_WR);
            p->closed = 1;
        } else {
            while (ch->off < ch->len) {
                ssize_t n = send(fd, ch->data + ch->off, ch->len - ch->off, MSG_NOSIGNAL);
                if (n < 0) {
                    if (errno == EAGAIN || errno == EWOULDBLOCK)
                        return 0;   /* EPOLLOUT on fd wakes us */
                    return -1;
                }
                ch->off += (size_t)n;
                n_bytes += (unsigned long long)n;
            }
        }
        p->head = ch->next;
        if (!p->head)
            p->tail = NULL;
        p->ready--;
        free(ch);
    }
    if (c->dir[0].closed && c->dir[1].closed)
        return 1;   /* both sides done */
    return 0;
}

static void enqueue(struct pipe_ *p, const char *data, size_t len, int eof)
{
    struct chunk *ch = malloc(sizeof(*ch) + len);
    if (!ch)
        die("malloc");
    ch->next = ch->gnext = NULL;
    ch->dir = p;
    ch->due = now_ns() + half_ns;
    ch->len = len;
    ch->off = 0;
    ch->eof = eof;
    if (len)
        memcpy(ch->data, data, len);
    if (p->tail)
        p->tail->next = ch;
    else
        p->head = ch;
    p->tail = ch;
    if (gq_tail)
        gq_tail->gnext = ch;
    else
        gq_head = ch;
    gq_tail = ch;
    n_chunks++;
}

static void fail(struct conn *c)
{
    n_failed++;
    conn_close(c);
    drop_ready(&c->dir[0]);
    drop_ready(&c->dir[1]);
}

static void on_readable(struct conn *c, int side)
{
    char buf[CHUNK];
    struct pipe_ *p = &c->dir[side];
    for (;;) {
        ssize_t n = recv(c->fd[side], buf, sizeof(buf), 0);
        if (n > 0) {
            enqueue(p, buf, (size_t)n, 0);
            continue;
        }
        if (n == 0) {
            enqueue(p, NULL, 0, 1);
            watch(c->fd[side], NULL, 0, EPOLL_CTL_DEL);
            return;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return;
        fail(c);
        return;
    }
}

static void start_connect(struct conn *c)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    c->connecting = 0;
    if (c->dead) {
        conn_maybe_free(c);
        return;
    }
    if (fd < 0) {
        fail(c);
        return;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&upstreams[c->upstream], sizeof(upstreams[0])) < 0 && errno != EINPROGRESS) {
        close(fd);
        fail(c);
        return;
    }
    c->fd[1] = fd;
    {
        struct tag *t = malloc(sizeof(*t));
        t->conn = c;
        t->side = 1;
        t->listen = -1;
        watch(fd, t, EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, EPOLL_CTL_ADD);
    }
}

static void on_accept(int li)
{
    for (;;) {
        int fd = accept4(listen_fds[li], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        int one = 1;
        struct conn *c;
        struct tag *t;
        if (fd < 0)
            return;
        n_accepted++;
        if (++n_open > n_peak)
            n_peak = n_open;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c = calloc(1, sizeof(*c));
        t = malloc(sizeof(*t));
        if (!c || !t)
            die("malloc");
        c->fd[0] = fd;
        c->fd[1] = -1;
        c->upstream = li;
        c->connecting = 1;
        c->connect_at = now_ns() + 3 * half_ns;
        c->dir[0].conn = c->dir[1].conn = c;
        c->dir[0].from = 0; c->dir[0].to = 1;
        c->dir[1].from = 1; c->dir[1].to = 0;
        t->conn = c;
        t->side = 0;
        t->listen = -1;
        watch(fd, t, EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, EPOLL_CTL_ADD);
        if (wait_tail)
            wait_tail->wnext = c;
        else
            wait_head = c;
        wait_tail = c;
    }
}

/* Make due what is due; returns ms until the next thing is due (-1: nothing pending). */
static int advance(void)
{
    int64_t now = now_ns();
    while (wait_head && wait_head->connect_at <= now) {
        struct conn *c = wait_head;
        wait_head = c->wnext;
        if (!wait_head)
            wait_tail = NULL;
        start_connect(c);
    }
    while (gq_head && gq_head->due <= now) {
        struct chunk *ch = gq_head;
        struct pipe_ *p = ch->dir;
        struct conn *c = p->conn;
        gq_head = ch->gnext;
        if (!gq_head)
            gq_tail = NULL;
        p->ready++;
        if (c->dead) {
            drop_ready(p);
            conn_maybe_free(c);
        } else if (flush(p) != 0) {
            conn_close(c);
            drop_ready(&c->dir[0]);
            drop_ready(&c->dir[1]);
            conn_maybe_free(c);
        }
    }
    {
        int64_t next = -1;
        if (gq_head)
            next = gq_head->due;
        if (wait_head && (next < 0 || wait_head->connect_at < next))
            next = wait_head->connect_at;
        if (next < 0)
            return -1;
        next -= now;
        return next <= 0 ? 0 : (int)((next + 999999) / 1000000);
    }
}

static int listen_on(int port)
{
    struct sockaddr_in a;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket");
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* answer on any address routed here (the namespace's local route for the bench's prefix) */
    setsockopt(fd, SOL_IP, IP_FREEBIND, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        die("bind");
    if (listen(fd, 4096) < 0)
        die("listen");
    return fd;
}

int main(int argc, char **argv)
{
    const char *netns = NULL;
    double half_ms = -1;
    int opt, i, own_ns = -1, other_ns = -1;
    struct epoll_event events[512];
    struct rlimit rl;

    while ((opt = getopt(argc, argv, "d:n:")) != -1) {
        if (opt == 'd')
            half_ms = atof(optarg);
        else if (opt == 'n')
            netns = optarg;
        else
            return 2;
    }
    if (half_ms < 0 || optind >= argc) {
        fprintf(stderr, "usage: delay_relay -d HALF_RTT_MS [-n NETNS_PATH] LISTEN_PORT=SERVER_IP:SERVER_PORT ...\n");
        return 2;
    }
    half_ns = (int64_t)(half_ms * 1000000.0);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    signal(SIGPIPE, SIG_IGN);
    if (netns) {
        own_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        other_ns = open(netns, O_RDONLY | O_CLOEXEC);
        if (own_ns < 0 || other_ns < 0)
            die(netns);
        if (setns(other_ns, CLONE_NEWNET) < 0)
            die("setns");
    }
    for (i = optind; i < argc && n_listen < MAX_LISTEN; i++) {
        int port, sport;
        char ip[64];
        if (sscanf(argv[i], "%d=%63[^:]:%d", &port, ip, &sport) != 3) {
            fprintf(stderr, "bad mapping %s (LISTEN_PORT=SERVER_IP:SERVER_PORT)\n", argv[i]);
            return 2;
        }
        memset(&upstreams[n_listen], 0, sizeof(upstreams[0]));
        upstreams[n_listen].sin_family = AF_INET;
        upstreams[n_listen].sin_port = htons((uint16_t)sport);
        if (inet_pton(AF_INET, ip, &upstreams[n_listen].sin_addr) != 1) {
            fprintf(stderr, "bad server address %s\n", ip);
            return 2;
        }
        listen_fds[n_listen] = listen_on(port);
        n_listen++;
    }
    if (netns && setns(own_ns, CLONE_NEWNET) < 0)   /* the servers are reached from here */
        die("setns back");
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1");
    for (i = 0; i < n_listen; i++) {
        listen_tags[i].conn = NULL;
        listen_tags[i].listen = i;
        watch(listen_fds[i], &listen_tags[i], EPOLLIN, EPOLL_CTL_ADD);
    }
    printf("ready\n");
    fflush(stdout);
    while (!stop) {
        int timeout = advance();
        int n = epoll_wait(ep, events, 512, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (i = 0; i < n; i++) {
            struct tag *t = events[i].data.ptr;
            struct conn *c;
            if (t->listen >= 0) {
                on_accept(t->listen);
                continue;
            }
            c = t->conn;
            if (c->dead)
                continue;
            if (events[i].events & EPOLLERR) {
                fail(c);
                continue;
            }
            if (events[i].events & EPOLLOUT) {
                int r = flush(&c->dir[t->side ? 0 : 1]);
                if (r != 0) {
                    if (r < 0)
                        fail(c);
                    else
                        conn_close(c);
                    continue;
                }
            }
            if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))
                on_readable(c, t->side);
        }
    }
    fprintf(stderr, "delay_relay: %llu connections, %llu at most at once, %llu chunks, %llu bytes relayed, %llu failed\n",
            n_accepted, n_peak, n_chunks, n_bytes, n_failed);
    return 0;
}
