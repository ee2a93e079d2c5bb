/* SPDX-License-Identifier: MIT OR Apache-2.0
 * One blocking write of 1 MiB into a pipe (16 times its capacity) whose
 * reader is another thread of the same process, as a logger thread or Go's
 * os.File writes: natively the write blocks until the reader has taken
 * what does not fit, and returns the whole length. Output, natively and
 * under lard, is the lines printed below; the exit status is 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SIZE (1 << 20)
static int fds[2];

static void *writer(void *arg)
{
    char *buf = malloc(SIZE);
    ssize_t n;
    (void)arg;
    for (int i = 0; i < SIZE; i++)
        buf[i] = (char)(i % 251);
    n = write(fds[1], buf, SIZE);
    close(fds[1]);
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
    if (pipe(fds) != 0)
        return 1;
    pthread_create(&t, NULL, writer, NULL);
    while ((n = read(fds[0], in, sizeof in)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum += (unsigned char)in[i] == (total + i) % 251;
        total += n;
    }
    pthread_join(t, &wrote);
    printf("write returned %ld\n", (long)wrote);
    printf("read %ld bytes, %ld in order\n", total, sum);
    return 0;
}
