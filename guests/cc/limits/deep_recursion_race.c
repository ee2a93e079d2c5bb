/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Racy, 200 calls deep: a thread recurses through descend() 200 times and
 * writes `depth_reached` at the bottom; main reads it without ordering.
 * The lard-cc runtime records 128 frames per thread, so the report shows
 * the write's own frame, one line saying calls were not recorded, then the
 * recorded outer frames down to the thread function
 * (tests/tests/lard_cc.rs). */
#include <pthread.h>
#include <stdio.h>

static int depth_reached;

__attribute__((noinline)) static int descend(int n)
{
    if (n == 0) {
        depth_reached = 200; /* RACE */
        return 0;
    }
    return descend(n - 1) + 1; /* CALL descend */
}

static void *worker(void *arg)
{
    (void)arg;
    descend(200); /* CALL worker */
    return NULL;
}

int main(void)
{
    pthread_t t;
    int seen;
    pthread_create(&t, NULL, worker, NULL);
    seen = depth_reached; /* RACE */
    pthread_join(t, NULL);
    printf("depth %d\n", depth_reached + 0 * seen);
    return 0;
}
