/* Memory-bound benchmark guest: repeated passes over an array.
 *
 * usage: memory_bound [PASSES [KIB]]   (defaults: 150 passes over 256 KiB)
 *
 * Per element: one sequential load, one data-dependent load, one store,
 * plus a handful of register instructions (about 3 data accesses per
 * ~15 instructions). The data-dependent index keeps the loop scalar, and the
 * checksum printed at the end keeps the work from being optimised away.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t work(uint32_t *a, uint32_t mask, uint64_t passes)
{
    uint32_t h = 0x811C9DC5u;
    for (uint64_t p = 0; p < passes; p++) {
        for (uint32_t i = 0; i <= mask; i++) {
            uint32_t x = a[i];
            uint32_t y = a[(x + h) & mask];
            h = (h ^ y) * 0x9E3779B1u + i;
            a[i] = x + (h >> 7);
        }
    }
    return h;
}

int main(int argc, char **argv)
{
    uint64_t passes = argc > 1 ? strtoull(argv[1], NULL, 10) : 150;
    uint64_t kib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
    uint64_t n = kib * 1024 / sizeof(uint32_t);
    if (n == 0 || (n & (n - 1)) != 0) {
        fprintf(stderr, "memory_bound: KIB must give a power-of-two element count\n");
        return 2;
    }
    uint32_t *a = malloc(n * sizeof *a);
    if (!a)
        return 1;
    for (uint64_t i = 0; i < n; i++)
        a[i] = (uint32_t)(i * 2654435761u);
    uint32_t h = work(a, (uint32_t)(n - 1), passes);
    uint32_t sum = h;
    for (uint64_t i = 0; i < n; i++)
        sum = sum * 31 + a[i];
    printf("memory_bound passes=%llu kib=%llu checksum=%08x\n",
           (unsigned long long)passes, (unsigned long long)kib, sum);
    free(a);
    return 0;
}
