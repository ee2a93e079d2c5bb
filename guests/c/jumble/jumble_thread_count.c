/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* JUMBLE's mtrt: the parent counts the workers it creates in threadCount
 * and each worker decrements it when done, with no synchronization.  The
 * count can be corrupted, but nothing ever uses its value.
 * Expected: racy; JUMBLE verdict benign. */
#include <lard.h>
#include <stdio.h>

#define WORKERS 3

static uint64_t thread_count;               /* Tracked, never used */
static uint64_t pixels[WORKERS];

static void *runner(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg, sum = 0;
    for (uint64_t i = 0; i < 300; i++)
        sum += (i * i + id) % 17;
    lard_store64(&pixels[id], sum);
    lard_store64(&thread_count, lard_load64(&thread_count) - 1); /* RACE */
    return NULL;
}

int main(void)
{
    lard_thread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        lard_store64(&thread_count, lard_load64(&thread_count) + 1); /* RACE */
        lard_spawn(&t[i], runner, (void *)(uintptr_t)i);
    }
    for (int i = 0; i < WORKERS; i++)
        lard_join(t[i], NULL);
    for (int i = 0; i < WORKERS; i++)
        printf("pixels %d = %llu\n", i, (unsigned long long)lard_load64(&pixels[i]));
    return 0;
}
