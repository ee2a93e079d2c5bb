/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Calls mark(1), counts for about 2*10^7 instructions (several of lard's
 * reverse-execution checkpoint intervals), calls mark(2) and prints the
 * count: tests/tests/gdb.rs goes back from the second mark to the first
 * under `lard run --gdb`. -O0 -g. */
#include <stdio.h>

volatile unsigned long n;

void mark(int which)
{
    n += which;
}

int main(void)
{
    mark(1);
    for (unsigned long i = 0; i < 3000000; i++)
        n += i;
    mark(2);
    printf("n = %lu\n", n);
    return 0;
}
