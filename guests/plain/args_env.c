/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Echoes argc, argv and one environment variable. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    printf("argc=%d\n", argc);
    for (int i = 1; i < argc; i++) printf("argv[%d]=%s\n", i, argv[i]);
    const char *v = getenv("LARD_TEST_VAR");
    printf("LARD_TEST_VAR=%s\n", v ? v : "(unset)");
    return 0;
}
