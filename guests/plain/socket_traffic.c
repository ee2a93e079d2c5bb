/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Socket traffic as servers and Go's net package make it: a TCP server on
 * the loopback address accepts (accept4, SOCK_CLOEXEC) a client thread's
 * connection and echoes what it receives (recvfrom/sendto); a UDP
 * datagram carries its sender's address (recvfrom); a UNIX socket pair
 * carries a two-part message with a descriptor (sendmsg/recvmsg,
 * SCM_RIGHTS), and accept on a non-blocking socket with nobody waiting
 * fails with EAGAIN. Output, natively and under lard, is the lines
 * printed below; the exit status is 0. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in server;

static void *client(void *arg)
{
    int c = socket(AF_INET, SOCK_STREAM, 0);
    char back[16] = {0};
    (void)arg;
    if (connect(c, (struct sockaddr *)&server, sizeof server) != 0)
        return "connect failed";
    sendto(c, "ping", 4, 0, NULL, 0);
    recvfrom(c, back, sizeof back - 1, 0, NULL, NULL);
    close(c);
    return strcmp(back, "ping!") == 0 ? "echoed" : "wrong echo";
}

static void tcp(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), c, fl;
    socklen_t len = sizeof server;
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    char buf[16] = {0};
    pthread_t t;
    void *verdict;
    memset(&server, 0, sizeof server);
    server.sin_family = AF_INET;
    server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(s, (struct sockaddr *)&server, sizeof server);
    listen(s, 4);
    getsockname(s, (struct sockaddr *)&server, &len);
    pthread_create(&t, NULL, client, NULL);
    c = accept4(s, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
    fl = fcntl(c, F_GETFD);
    printf("accept4: %s, peer %s, close-on-exec %s\n", c >= 0 ? "a socket" : "failed",
           peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK) ? "loopback" : "elsewhere",
           fl & FD_CLOEXEC ? "set" : "clear");
    printf("recvfrom %zd: %s\n", recvfrom(c, buf, 4, MSG_WAITALL, NULL, NULL), buf);
    printf("sendto %zd\n", sendto(c, "ping!", 5, 0, NULL, 0));
    pthread_join(t, &verdict);
    printf("client: %s\n", (char *)verdict);
    close(c);
    fcntl(s, F_SETFL, O_NONBLOCK);
    c = accept(s, NULL, NULL);
    printf("accept, nobody waiting: %d (%s)\n", c, errno == EAGAIN ? "EAGAIN" : "other");
    close(s);
}

static void udp(void)
{
    int r = socket(AF_INET, SOCK_DGRAM, 0), w = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a, from;
    socklen_t len = sizeof a, flen = sizeof from;
    char buf[16] = {0};
    ssize_t n;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(r, (struct sockaddr *)&a, sizeof a);
    getsockname(r, (struct sockaddr *)&a, &len);
    printf("udp sendto %zd\n", sendto(w, "datagram", 8, 0, (struct sockaddr *)&a, sizeof a));
    n = recvfrom(r, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &flen);
    printf("udp recvfrom %zd: %s from %s (address length %u)\n", n, buf,
           from.sin_addr.s_addr == htonl(INADDR_LOOPBACK) ? "loopback" : "elsewhere",
           (unsigned)flen);
    close(r);
    close(w);
}

static void unix_pair(void)
{
    int sv[2], p[2], got = -1;
    char a[8] = "two ", b[8] = "parts", ra[8] = {0}, rb[8] = {0}, text[8] = {0};
    struct iovec out[2] = {{a, 4}, {b, 5}}, in[2] = {{ra, 4}, {rb, 5}};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl, rctl;
    struct msghdr m, r;
    struct cmsghdr *h;
    ssize_t n;
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    pipe(p);
    memset(&m, 0, sizeof m);
    memset(&ctl, 0, sizeof ctl);
    m.msg_iov = out;
    m.msg_iovlen = 2;
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof ctl.buf;
    h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &p[0], sizeof(int));
    printf("sendmsg %zd\n", sendmsg(sv[0], &m, 0));
    memset(&r, 0, sizeof r);
    r.msg_iov = in;
    r.msg_iovlen = 2;
    r.msg_control = rctl.buf;
    r.msg_controllen = sizeof rctl.buf;
    n = recvmsg(sv[1], &r, 0);
    h = CMSG_FIRSTHDR(&r);
    if (h && h->cmsg_type == SCM_RIGHTS)
        memcpy(&got, CMSG_DATA(h), sizeof(int));
    printf("recvmsg %zd: \"%s%s\", control %s, flags %d\n", n, ra, rb,
           r.msg_controllen == CMSG_SPACE(sizeof(int)) ? "one descriptor" : "unexpected",
           r.msg_flags);
    write(p[1], "via fd", 6);
    read(got, text, 6);
    printf("through the passed descriptor: %s\n", text);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    tcp();
    udp();
    unix_pair();
    return 0;
}
