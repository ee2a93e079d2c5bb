/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, racy twin of own_alloc.c: the first thread sets a shared
 * word and then allocates a block; the second starts later, allocates
 * another block and reads the word. No block is freed and handed out
 * again, so nothing orders the two accesses but the allocator's mutex,
 * which is not the program's synchronization. */
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <time.h>

void *mi_malloc(size_t n);
void mi_free(void *p);
unsigned long mi_live(void);

static void *blocks[2];
static unsigned long shared, seen;

static void *first(void *arg) {
    (void)arg;
    shared = 1; /* OTHER: the racing write, reported as the previous access */
    blocks[0] = mi_malloc(64);
    return NULL;
}

static void *second(void *arg) {
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    blocks[1] = mi_malloc(64);
    seen = shared; /* RACE */
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, first, NULL);
    pthread_create(&b, NULL, second, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("seen %lu, live blocks %lu\n", seen, mi_live());
    mi_free(blocks[0]);
    mi_free(blocks[1]);
    printf("live blocks %lu\n", mi_live());
    return 0;
}
