/* Detector benchmark guest: the memory-bound loop of memory_bound.c with
 * every data access Tracked (lard_load32/lard_store32), on two language
 * threads working on disjoint halves (race-free), joined at the end.
 *
 * usage: tracked_memory [PASSES [KIB]]   (defaults: 40 passes over 256 KiB)
 */
#include <lard.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct job { uint32_t *a; uint32_t mask; uint64_t passes; uint32_t h; };

static void *work(void *arg)
{
    struct job *j = arg;
    uint32_t h = 0x811C9DC5u;
    for (uint64_t p = 0; p < j->passes; p++) {
        for (uint32_t i = 0; i <= j->mask; i++) {
            uint32_t x = lard_load32(&j->a[i]);
            uint32_t y = lard_load32(&j->a[(x + h) & j->mask]);
            h = (h ^ y) * 0x9E3779B1u + i;
            lard_store32(&j->a[i], x + (h >> 7));
        }
    }
    j->h = h;
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t passes = argc > 1 ? strtoull(argv[1], NULL, 10) : 40;
    uint64_t kib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
    uint64_t n = kib * 1024 / sizeof(uint32_t) / 2;
    if (n == 0 || (n & (n - 1)) != 0) {
        fprintf(stderr, "tracked_memory: KIB must give a power-of-two element count\n");
        return 2;
    }
    uint32_t *a = malloc(2 * n * sizeof *a);
    if (!a)
        return 1;
    for (uint64_t i = 0; i < 2 * n; i++)
        a[i] = (uint32_t)(i * 2654435761u);
    struct job jobs[2] = {{a, (uint32_t)(n - 1), passes, 0}, {a + n, (uint32_t)(n - 1), passes, 0}};
    lard_thread_t t[2];
    for (int k = 0; k < 2; k++)
        lard_spawn(&t[k], work, &jobs[k]);
    for (int k = 0; k < 2; k++)
        lard_join(t[k], NULL);
    printf("tracked_memory passes=%llu kib=%llu checksum=%08x\n", (unsigned long long)passes,
           (unsigned long long)kib, jobs[0].h ^ jobs[1].h);
    return 0;
}
