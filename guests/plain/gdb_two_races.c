/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A program tests/tests/gdb.rs debugs as gcc builds it by default (PIE,
 * dynamically linked). Two worker threads meet at a barrier, then both
 * update `balance` in deposit() without synchronization (a read and a
 * write at the line marked RACE1), meet at a second barrier, then both
 * write `audit` in record() (the line marked RACE2). main joins them and
 * prints both: `balance = 3 audit = A` with A the last writer's 1 or 2
 * (deposit reads before it writes; under lard's scheduler the second
 * update sees the first, so balance is 3). Expected: racy (binary mode),
 * three racy PC pairs in two functions. */
#include <pthread.h>
#include <stdio.h>

long balance;
long audit;
static pthread_barrier_t meet, again;

void deposit(long v)
{
    balance = balance + v; /* RACE1 */
}

void record(long v)
{
    audit = v; /* RACE2 */
}

static void *worker(void *arg)
{
    long v = (long)arg;
    pthread_barrier_wait(&meet);
    deposit(v);
    pthread_barrier_wait(&again);
    record(v);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_barrier_init(&meet, NULL, 2);
    pthread_barrier_init(&again, NULL, 2);
    pthread_create(&a, NULL, worker, (void *)1);
    pthread_create(&b, NULL, worker, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("balance = %ld audit = %ld\n", balance, audit);
    return 0;
}
