/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Copies stdin to stdout four bytes at a time, each chunk through got():
 * tests/tests/gdb.rs runs it under `lard run --gdb` with stdin from a file
 * and goes back and forth over the reads, which must replay the same bytes
 * and print each of them once. -O0 -g. */
#include <stdio.h>
#include <unistd.h>

void got(const char *b, int n)
{
    printf("%.*s", n, b);
    fflush(stdout);
}

int main(void)
{
    char b[4];
    int n;
    while ((n = read(0, b, sizeof b)) > 0)
        got(b, n);
    return 0;
}
