/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, racy: two threads write offset 8 of a 64-byte heap block
 * without synchronization; the report names the block and where T1
 * allocated it.  Reads after the joins are ordered. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static long *block;
static void *writer(void *arg) {
    block[1] = (long)arg; /* RACE */
    return NULL;
}
int main(void) {
    pthread_t a, b;
    block = malloc(64); /* ALLOC */
    pthread_create(&a, NULL, writer, (void *)1);
    pthread_create(&b, NULL, writer, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("written = %s\n", block[1] == 1 || block[1] == 2 ? "yes" : "no");
    free(block);
    return 0;
}
