/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Faults: argv[1] = "null" writes through a null pointer,
 * "rodata" writes into a string literal (read-only memory). */
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    volatile char *p = (char *)0;
    if (argc > 1 && strcmp(argv[1], "rodata") == 0) p = (volatile char *)"constant";
    printf("about to fault\n");
    fflush(stdout);
    *p = 'x';
    return 0;
}
