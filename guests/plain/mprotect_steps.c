/* SPDX-License-Identifier: MIT OR Apache-2.0
 * mprotect in steps, as glibc grows a thread's heap: a reserved PROT_NONE
 * mapping made readable and writable one page at a time, each page written
 * as it arrives; then permissions cut out of the middle and put back. The
 * pages keep their bytes through every change, a write to a page made
 * PROT_NONE or read-only faults (and is caught), and the same page written
 * again once allowed. Prints what it reads and catches, so the run under
 * lard can be compared with the native one. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 512

static sigjmp_buf env;

static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(env, 1);
}

static int write_faults(volatile unsigned char *p)
{
    if (sigsetjmp(env, 1))
        return 1;
    *p = 1;
    return 0;
}

static unsigned long sum(const unsigned char *p, size_t n)
{
    unsigned long s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i] * (i % 251 + 1);
    return s;
}

int main(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = PAGES * pg;
    unsigned char *m = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa;
    int faults = 0;
    if (m == MAP_FAILED)
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    for (size_t i = 0; i < PAGES; i++) {
        if (mprotect(m, (i + 1) * pg, PROT_READ | PROT_WRITE) != 0)
            return 3;
        memset(m + i * pg, (int)(i * 13 + 1), pg);
        faults += i + 1 < PAGES && write_faults(m + (i + 1) * pg);
    }
    printf("grown: %zu pages, sum %lu, faults beyond the top %d\n", (size_t)PAGES, sum(m, n),
           faults);
    if (mprotect(m + 100 * pg, 10 * pg, PROT_NONE) != 0 ||
        mprotect(m + 300 * pg, pg, PROT_READ) != 0)
        return 4;
    printf("cut: none %d, read-only %d, below %d, between %d, above %d\n",
           write_faults(m + 105 * pg), write_faults(m + 300 * pg), write_faults(m + 99 * pg),
           write_faults(m + 200 * pg), write_faults(m + 301 * pg));
    printf("read-only page still reads %lu\n", sum(m + 300 * pg, pg));
    if (mprotect(m, n, PROT_READ | PROT_WRITE) != 0)
        return 5;
    printf("restored: sum %lu, writable %d %d\n", sum(m, n), !write_faults(m + 105 * pg),
           !write_faults(m + 300 * pg));
    memset(m + 100 * pg, 0x77, 201 * pg);
    printf("rewritten: sum %lu\n", sum(m, n));
    return munmap(m, n) != 0;
}
