/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, race-free: two threads allocate a 64-byte block each from
 * the allocator of mi_alloc.c (linked in, under mimalloc's names), fill
 * it, sum it and free it. The second thread starts after the first freed
 * its block and gets the same block back: the allocator wrote its free
 * list into it in between, and the reuse is ordered by the free and the
 * allocation, not by the allocator's mutex (binary mode does not take
 * it for the program's synchronization). */
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <time.h>

void *mi_malloc(size_t n);
void mi_free(void *p);
unsigned long mi_live(void);

static void *blocks[2];
static unsigned long sums[2];

static void *work(void *arg) {
    long id = (long)arg;
    if (id == 1) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    unsigned long *p = mi_malloc(64);
    unsigned long s = 0;
    for (int i = 0; i < 8; i++)
        p[i] = id * 1000 + i;
    for (int i = 0; i < 8; i++)
        s += p[i];
    blocks[id] = p;
    sums[id] = s;
    mi_free(p);
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sums %lu %lu, block reused: %d, live blocks %lu\n", sums[0], sums[1],
           blocks[0] == blocks[1], mi_live());
    return 0;
}
