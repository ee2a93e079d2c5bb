// SPDX-License-Identifier: MIT OR Apache-2.0
// Many threads, little work each (bench/threads.py): how the cost of
// synchronization grows with the number of threads a program makes.
//
//   threads mutex N [G]  N threads started together, each taking a mutex
//                        200 times; G threads share each mutex (0: one
//                        mutex for all)
//   threads pool N       a pool of 8 workers that replaces each worker after
//                        20 tasks from a locked queue, N workers in all
//   threads forkjoin N   rounds of 8 threads writing their own slice of an
//                        array, joined by the main thread, which reads it
//                        back: N threads in all
//
// Race-free; prints a checksum that does not depend on the schedule.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK (64 * 1024)
#define ITERS 200
#define POOL 8
#define TASKS 20
#define SLICE 64

static pthread_attr_t attr;

static void start(pthread_t *t, void *(*fn)(void *), void *arg) {
    if (pthread_create(t, &attr, fn, arg) != 0) {
        perror("pthread_create");
        exit(2);
    }
}

// mutex: each thread adds to its group's counter under its group's lock.
struct group {
    pthread_mutex_t lock;
    unsigned long count;
};
static struct group *groups;
static long per_group;

static void *locker(void *arg) {
    long i = (long)arg;
    struct group *g = &groups[per_group ? i / per_group : 0];
    for (int k = 0; k < ITERS; k++) {
        pthread_mutex_lock(&g->lock);
        g->count += (unsigned long)(i + k);
        pthread_mutex_unlock(&g->lock);
    }
    return NULL;
}

static unsigned long run_mutex(long n, long g) {
    long ngroups = g ? (n + g - 1) / g : 1;
    per_group = g;
    groups = calloc(ngroups, sizeof *groups);
    pthread_t *ts = calloc(n, sizeof *ts);
    for (long i = 0; i < ngroups; i++)
        pthread_mutex_init(&groups[i].lock, NULL);
    for (long i = 0; i < n; i++)
        start(&ts[i], locker, (void *)i);
    for (long i = 0; i < n; i++)
        pthread_join(ts[i], NULL);
    unsigned long sum = 0;
    for (long i = 0; i < ngroups; i++)
        sum += groups[i].count;
    return sum;
}

// pool: a queue of task numbers behind one lock; a worker takes TASKS of
// them and ends; the main thread joins the oldest worker and starts a new
// one, keeping POOL alive.
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static long next_task;
static unsigned long done_sum;

static void *worker(void *arg) {
    (void)arg;
    for (int k = 0; k < TASKS; k++) {
        pthread_mutex_lock(&qlock);
        long t = next_task++;
        done_sum += (unsigned long)t * 3 + 1;
        pthread_mutex_unlock(&qlock);
    }
    return NULL;
}

static unsigned long run_pool(long n) {
    pthread_t ring[POOL];
    for (long i = 0; i < n; i++) {
        if (i >= POOL)
            pthread_join(ring[i % POOL], NULL);
        start(&ring[i % POOL], worker, NULL);
    }
    for (long i = n > POOL ? n - POOL : 0; i < n; i++)
        pthread_join(ring[i % POOL], NULL);
    return done_sum + (unsigned long)next_task;
}

// forkjoin: the main thread's array, one slice per thread of a round.
static unsigned long data[POOL * SLICE];

struct slice {
    long round, part;
};

static void *fill(void *arg) {
    struct slice *s = arg;
    unsigned long *d = &data[s->part * SLICE];
    for (int k = 0; k < SLICE; k++)
        d[k] += (unsigned long)(s->round * 7 + s->part * 3 + k);
    return NULL;
}

static unsigned long run_forkjoin(long n) {
    pthread_t ts[POOL];
    struct slice sl[POOL];
    unsigned long sum = 0;
    for (long r = 0; r * POOL < n; r++) {
        long m = n - r * POOL < POOL ? n - r * POOL : POOL;
        for (long p = 0; p < m; p++) {
            sl[p] = (struct slice){r, p};
            start(&ts[p], fill, &sl[p]);
        }
        for (long p = 0; p < m; p++)
            pthread_join(ts[p], NULL);
        for (long k = 0; k < POOL * SLICE; k++)
            sum += data[k];
    }
    return sum;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: threads mutex|pool|forkjoin N [G]\n");
        return 2;
    }
    long n = atol(argv[2]);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK);
    unsigned long sum;
    if (!strcmp(argv[1], "mutex"))
        sum = run_mutex(n, argc > 3 ? atol(argv[3]) : 0);
    else if (!strcmp(argv[1], "pool"))
        sum = run_pool(n);
    else if (!strcmp(argv[1], "forkjoin"))
        sum = run_forkjoin(n);
    else {
        fprintf(stderr, "threads: unknown workload %s\n", argv[1]);
        return 2;
    }
    printf("%s %ld: %lu\n", argv[1], n, sum);
    return 0;
}
