/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* About 1.5*10^8 instructions of counting, then done(): bench/debugging.py
 * times gdb's reverse steps at the end of a long run. */
#include <stdio.h>

volatile unsigned long n;

void done(void)
{
    printf("n = %lu\n", n);
}

int main(void)
{
    for (unsigned long i = 0; i < 25000000; i++)
        n += i;
    done();
    return 0;
}
