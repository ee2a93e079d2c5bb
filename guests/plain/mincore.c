/* SPDX-License-Identifier: MIT OR Apache-2.0
 * mincore as Go's runtime and allocators probe memory: an unaligned
 * address is EINVAL, a range with an unmapped page ENOMEM, and pages the
 * program has written are resident. Output, natively and under lard, is
 * the lines printed below; the exit status is 0. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned char vec[4] = {0};
    char *p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 1;
    memset(p, 1, 2 * page);
    int r = mincore(p + 1, page, vec);
    printf("unaligned: %d %s\n", r, r ? strerror(errno) : "");
    munmap(p + 3 * page, page);
    r = mincore(p, 4 * page, vec);
    printf("unmapped page: %d %s\n", r, r ? strerror(errno) : "");
    r = mincore(p, 2 * page - 1, vec);
    printf("written: %d, resident %d %d\n", r, vec[0] & 1, vec[1] & 1);
    return 0;
}
