/* Compute-bound benchmark guest: a register-only hash loop.
 *
 * usage: compute_bound [MITER]   (default 100: 100 * 10^6 iterations)
 *
 * Each iteration is a serial xorshift64 step mixed into a multiply-add
 * accumulator (16 instructions with gcc -O2, no memory accesses in the loop). The
 * dependency chain keeps the compiler from vectorising or folding the loop;
 * the checksum printed at the end keeps it from deleting it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t work(uint64_t iters, uint64_t seed)
{
    uint64_t x = seed | 1, acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc = acc * 0x9E3779B97F4A7C15ull + (x ^ i);
    }
    return acc ^ x;
}

int main(int argc, char **argv)
{
    uint64_t miter = argc > 1 ? strtoull(argv[1], NULL, 10) : 100;
    /* The seed comes from argc so the compiler cannot precompute anything. */
    uint64_t sum = work(miter * 1000000ull, 0x2545F4914F6CDD1Dull + (uint64_t)argc);
    printf("compute_bound miter=%llu checksum=%016llx\n",
           (unsigned long long)miter, (unsigned long long)sum);
    return 0;
}
