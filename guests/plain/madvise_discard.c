/* SPDX-License-Identifier: MIT OR Apache-2.0
 * MADV_DONTNEED on private anonymous memory: the discarded pages read back
 * as zeros, the pages around them keep their bytes, and discarded pages can
 * be written again (glibc's heap trimming relies on all three). Prints what
 * it reads, so the run under lard can be compared with the native one. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned long sum(const unsigned char *p, size_t n) {
    unsigned long s = 0;
    for (size_t i = 0; i < n; i++) s += p[i];
    return s;
}

int main(void) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = 8 * pg;
    unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 2;
    for (size_t i = 0; i < n; i++) m[i] = (unsigned char)(i * 7 + 1);
    unsigned long before = sum(m, n);
    if (madvise(m + 2 * pg, 3 * pg, MADV_DONTNEED) != 0) return 3;
    printf("head %lu, discarded %lu, tail %lu, before %lu\n", sum(m, 2 * pg), sum(m + 2 * pg, 3 * pg),
           sum(m + 5 * pg, 3 * pg), before);
    /* one page, then the whole mapping, written again in between */
    memset(m + 3 * pg, 0x5a, pg);
    if (madvise(m + 3 * pg, pg, MADV_DONTNEED) != 0) return 4;
    printf("page again %lu\n", sum(m + 3 * pg, pg));
    memset(m, 0xa5, n);
    if (madvise(m, n, MADV_DONTNEED) != 0) return 5;
    printf("all %lu\n", sum(m, n));
    m[n - 1] = 9;
    printf("rewritten %lu\n", sum(m, n));
    return munmap(m, n);
}
