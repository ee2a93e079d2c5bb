/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Makes an unknown system call twice and prints what came back. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    for (int i = 0; i < 2; i++) {
        long r = syscall(1000);
        printf("syscall(1000) = %ld errno=%d\n", r, r < 0 ? errno : 0);
    }
    return 0;
}
