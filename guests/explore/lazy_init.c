/* SPDX-License-Identifier: MIT OR Apache-2.0
 * An atomicity violation that crashes only under a preemption.
 *
 * Two workers share a table created on first use. get_table() checks the
 * shared pointer, creates the table, publishes the pointer and only then
 * fills the table's slots (the publication belongs after the loop, under a
 * lock or pthread_once). A worker preempted between the publication and
 * the end of the loop lets the other worker find the pointer set, read a
 * slot that is still NULL and die of SIGSEGV. Without that preemption
 * (lard run's default schedule: each worker's work fits in a quantum) the
 * program prints "sum=9920" and exits 0.
 *
 * The shared pointer and the slots are read and written without
 * synchronization: lard reports those races on every schedule. */
#include <pthread.h>
#include <stdio.h>

#define SLOTS 32
#define ROUNDS 10

struct table {
    int *slot[SLOTS];
};

static struct table *volatile shared;
static long sums[2];

static int values[SLOTS];
static struct table the_table;
static volatile int spin;

/* One slot: a few basic blocks of work per slot, so the window between
 * the publication and the last slot spans many of them. */
static __attribute__((noinline)) int *make_slot(int i) {
    for (int k = 0; k < 4; k++)
        spin += k;
    values[i] = i;
    return &values[i];
}

static struct table *get_table(void) {
    if (shared == NULL) { /* check */
        struct table *t = &the_table;
        shared = t; /* publish: too early */
        for (int i = 0; i < SLOTS; i++)
            t->slot[i] = make_slot(i); /* fill */
    }
    return shared;
}

static void *worker(void *arg) {
    long id = (long)arg, sum = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct table *t = get_table();
        for (int i = 0; i < SLOTS; i++)
            sum += *t->slot[i]; /* crashes on a slot not filled yet */
    }
    sums[id] = sum;
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sum=%ld\n", sums[0] + sums[1]);
    return 0;
}
