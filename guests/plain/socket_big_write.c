/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Blocking writes of 1 MiB into a stream socket (many times its buffer)
 * whose reader is another thread of the same process: one with write(),
 * one with send(), one with sendmsg() of two iovecs (the two halves of the
 * buffer). Natively each blocks until the reader has taken what does not
 * fit, and returns the whole length. Output, natively and under
 * lard, is the lines printed below; the exit status is 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define SIZE (1 << 20)
static int sv[2];

static void *writer(void *arg)
{
    char *buf = malloc(SIZE);
    struct iovec iov[2];
    struct msghdr msg = {0};
    long n;
    (void)arg;
    for (int i = 0; i < SIZE; i++)
        buf[i] = (char)(i % 251);
    n = write(sv[1], buf, SIZE);
    n += send(sv[1], buf, SIZE, 0);
    iov[0].iov_base = buf;
    iov[0].iov_len = SIZE / 2;
    iov[1].iov_base = buf + SIZE / 2;
    iov[1].iov_len = SIZE / 2;
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    n += sendmsg(sv[1], &msg, 0);
    shutdown(sv[1], SHUT_WR);
    free(buf);
    return (void *)n;
}

int main(void)
{
    static char in[65536];
    pthread_t t;
    void *wrote;
    long total = 0, sum = 0;
    ssize_t n;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    pthread_create(&t, NULL, writer, NULL);
    while ((n = read(sv[0], in, sizeof in)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum += (unsigned char)in[i] == (total + i) % SIZE % 251;
        total += n;
    }
    pthread_join(t, &wrote);
    printf("write, send and sendmsg returned %ld\n", (long)wrote);
    printf("read %ld bytes, %ld in order\n", total, sum);
    return 0;
}
