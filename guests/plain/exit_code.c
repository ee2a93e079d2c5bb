/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Exits with the status given as argv[1]; from a second thread if argv[2] is "thread". */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
static int code;
static void *bye(void *a) { (void)a; exit(code); }
int main(int argc, char **argv) {
    code = argc > 1 ? atoi(argv[1]) : 0;
    if (argc > 2 && strcmp(argv[2], "thread") == 0) { pthread_t t; pthread_create(&t, NULL, bye, NULL); pthread_join(t, NULL); }
    return code;
}
