/* SPDX-License-Identifier: MIT OR Apache-2.0
 * System calls managed runtimes (V8/node, the JVM) make at start-up, each
 * printing what the kernel answered; the output is the same natively and
 * under lard:
 *  - prctl(PR_SET_NAME/PR_GET_NAME): thread names, inherited by new threads;
 *  - mmap with an address hint whose range partly overlaps a mapping: the
 *    hint is not taken, the mapping goes elsewhere (V8's code range);
 *  - mmap with a free hint: taken;
 *  - ioctl(FIONBIO) on a pipe: O_NONBLOCK, as fcntl sets it (libuv);
 *  - pkey_alloc: no protection key, or one (printed as "answered"). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static void *worker(void *arg)
{
    char n[16];
    (void)arg;
    prctl(PR_GET_NAME, n);
    printf("new thread starts as %s\n", n);
    prctl(PR_SET_NAME, "a-name-longer-than-fifteen");
    prctl(PR_GET_NAME, n);
    printf("renamed to %s\n", n);
    return NULL;
}

int main(void)
{
    char n[16];
    prctl(PR_SET_NAME, "boss");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    prctl(PR_GET_NAME, n);
    printf("main thread is still %s\n", n);

    long page = sysconf(_SC_PAGESIZE);
    char *block = mmap(NULL, 16 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(block + 8 * page, 8 * page);
    /* The hint's first half is mapped: the kernel picks another place. */
    char *moved = mmap(block + 4 * page, 8 * page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("overlapping hint taken: %s\n", moved == block + 4 * page ? "yes" : "no");
    printf("mapping usable: %s\n", moved != MAP_FAILED && (moved[0] = 1) ? "yes" : "no");
    char *free_hint = mmap(block + 8 * page, 8 * page, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("free hint taken: %s\n", free_hint == block + 8 * page ? "yes" : "no");

    int p[2];
    pipe(p);
    int on = 1;
    printf("FIONBIO: %d\n", ioctl(p[1], FIONBIO, &on));
    printf("O_NONBLOCK set: %s\n", fcntl(p[1], F_GETFL) & O_NONBLOCK ? "yes" : "no");
    write(p[1], "abc", 3);
    int ready = 0;
    ioctl(p[0], FIONREAD, &ready);
    printf("FIONREAD: %d\n", ready);
    long key = syscall(330, 0L, 0L);
    printf("pkey_alloc answered\n");
    (void)key;
    return 0;
}
