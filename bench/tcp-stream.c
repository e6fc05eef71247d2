/* tcp-stream: the bare TCP stream rate of a link, for bench/multihost.sh
 * (iperf's job, without iperf: this machine has none).
 *
 *   tcp-stream -l PORT            receive: every connection's bytes are read
 *                                 and dropped; at its end the receiver
 *                                 answers with the count (8 bytes)
 *   tcp-stream HOST PORT SECONDS  send 1 MiB writes for SECONDS, then
 *                                 print "STREAM,<MiB received>,<s>,<MiB/s>",
 *                                 counted by the receiver, timed until its
 *                                 answer (so nothing still in flight counts)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *drain(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char *buf = malloc(CHUNK);
    uint64_t n = 0;
    ssize_t k;
    while (buf && (k = read(fd, buf, CHUNK)) > 0)
        n += (uint64_t)k;
    if (write(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
        perror("tcp-stream: answer");
    close(fd);
    free(buf);
    return NULL;
}

static int serve(int port)
{
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 16)) {
        perror("tcp-stream: listen");
        return 1;
    }
    for (;;) {
        int fd = accept(l, NULL, NULL);
        pthread_t t;
        if (fd >= 0 && pthread_create(&t, NULL, drain, (void *)(intptr_t)fd) == 0)
            pthread_detach(t);
    }
}

static int send_for(const char *host, const char *port, double secs)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, port, &hints, &ai)) {
        fprintf(stderr, "tcp-stream: cannot resolve %s\n", host);
        return 1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
        perror("tcp-stream: connect");
        return 1;
    }
    freeaddrinfo(ai);
    char *buf = calloc(1, CHUNK);
    double t0 = now();
    while (now() - t0 < secs)
        if (write(fd, buf, CHUNK) < 0) {
            perror("tcp-stream: write");
            return 1;
        }
    shutdown(fd, SHUT_WR);
    uint64_t n = 0;
    if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n)) {
        fprintf(stderr, "tcp-stream: no count from the receiver\n");
        return 1;
    }
    double dt = now() - t0, mib = (double)n / (1 << 20);
    printf("STREAM,%.1f,%.3f,%.1f\n", mib, dt, mib / dt);
    free(buf);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "-l") == 0)
        return serve(atoi(argv[2]));
    if (argc == 4)
        return send_for(argv[1], argv[2], atof(argv[3]));
    fprintf(stderr, "usage: tcp-stream -l PORT | tcp-stream HOST PORT SECONDS\n");
    return 2;
}
