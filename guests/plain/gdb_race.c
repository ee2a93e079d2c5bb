/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The program tests/tests/gdb.rs debugs under `lard run --gdb`. Two writer
 * threads meet at a barrier (so that all three threads are alive after it),
 * then both write `shared` without synchronization: a write-write race at
 * the line marked RACE. After joining them, main writes `watched` once (the
 * line marked WATCHED) and prints it. Built with -O0 -g so that every
 * statement has its own instructions for gdb to step. Expected: racy
 * (binary mode). */
#include <pthread.h>
#include <stdio.h>

long shared;
long watched;
static pthread_barrier_t meet;

static void *writer(void *arg)
{
    long v = (long)arg;
    pthread_barrier_wait(&meet);
    shared = v; /* RACE */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_barrier_init(&meet, NULL, 2);
    pthread_create(&a, NULL, writer, (void *)1);
    pthread_create(&b, NULL, writer, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    watched = shared + 40; /* WATCHED */
    printf("watched = %ld\n", watched);
    return 0;
}
