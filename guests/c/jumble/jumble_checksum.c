/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* JUMBLE's raytracer: worker threads each compute a checksum of their part
 * of the work and, when done, add it to the global checksum with no
 * synchronization (a lost-update race).  The program validates the total
 * and fails (exit 1) if it is wrong.  Under sequential consistency the two
 * accesses of each addition run back to back and the total is right; a
 * stale read loses an update.
 * Expected: racy; JUMBLE verdict destructive. */
#include <lard.h>
#include <stdio.h>

#define WORKERS 4
#define ROWS 200

static uint64_t checksum;                   /* shared, Tracked */

static void *render(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg, local = 0;
    for (uint64_t r = 0; r < ROWS; r++)
        local += (id * ROWS + r) * 7 % 1000;
    uint64_t c = lard_load64(&checksum); /* RACE */
    lard_store64(&checksum, c + local); /* RACE */
    return NULL;
}

int main(void)
{
    lard_thread_t t[WORKERS];
    uint64_t expected = 0;
    for (uint64_t i = 0; i < WORKERS * ROWS; i++)
        expected += i * 7 % 1000;
    for (int i = 0; i < WORKERS; i++)
        lard_spawn(&t[i], render, (void *)(uintptr_t)i);
    for (int i = 0; i < WORKERS; i++)
        lard_join(t[i], NULL);
    if (lard_load64(&checksum) != expected) {
        printf("checksum FAILED\n");
        return 1;
    }
    printf("checksum ok\n");
    return 0;
}
