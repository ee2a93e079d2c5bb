/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * An "outside" program: it knows nothing of this repository and is built
 * against an INSTALLED guest SDK only, through pkg-config:
 *
 *   make -C guest-sdk install PREFIX=/opt/lard
 *   export PKG_CONFIG_PATH=/opt/lard/lib/pkgconfig
 *   cc -static -O2 -o consumer consumer.c $(pkg-config --cflags --libs lard)
 *
 * (tests/tests/sdk_install.rs does this with gcc, clang and musl-gcc.)
 *
 * Four language threads each fill a lard_malloc'ed buffer with Tracked
 * stores, sum it with Tracked loads, free it (the next thread may get the
 * same block: lard_free clears its histories), publish the sum in its job
 * record and add it to a shared total under a lard_mutex.  Race-free, and
 * the output does not depend on the schedule.
 *
 * With -DRACY the write of the shared `last` word moves out of the critical
 * section: a write-write race between the workers that the detector must
 * report.  `last` is never printed, so the output stays the same.
 *
 * Also valid C++ (the SDK's tests compile it with g++ to check that the
 * runtime's declarations have C linkage).
 */
#include <lard.h>
#include <stdio.h>

#define NTHREADS 4
#define N 256

struct job {
    uint64_t sum;                         /* written by the worker (Tracked) */
    uint16_t id;                          /* written by main (Tracked) */
};

static struct job jobs[NTHREADS];
static uint64_t total;                    /* under `lock` */
static uint64_t last;                     /* under `lock`, except with RACY */
static uint8_t go;                        /* set by main before the spawns */
static lard_mutex_t lock = LARD_MUTEX_INIT;

static void *worker(void *arg)
{
    struct job *j = (struct job *)arg;
    uint64_t id = lard_load16(&j->id), s = 0;
    uint32_t *buf;
    uint32_t i;

    if (lard_load8(&go) != 1)
        return (void *)1;
    buf = (uint32_t *)lard_malloc(N * sizeof *buf);
    if (buf == NULL)
        return (void *)1;
    for (i = 0; i < N; i++)
        lard_store32(&buf[i], (uint32_t)(i * (id + 1)));
    for (i = 0; i < N; i++)
        s += lard_load32(&buf[i]);
    lard_free(buf);
    lard_store64(&j->sum, s);

    lard_mutex_lock(&lock);
    lard_store64(&total, lard_load64(&total) + s);
#ifndef RACY
    lard_store64(&last, id);
#endif
    lard_mutex_unlock(&lock);
#ifdef RACY
    lard_store64(&last, id); /* RACE */
#endif
    return NULL;
}

int main(void)
{
    lard_thread_t t[NTHREADS];
    uint64_t sum = 0;
    int i, bad = 0;

    lard_store8(&go, 1);
    for (i = 0; i < NTHREADS; i++) {
        lard_store16(&jobs[i].id, (uint16_t)i);
        if (lard_spawn(&t[i], worker, &jobs[i]) != 0) {
            printf("spawn failed\n");
            return 2;
        }
    }
    for (i = 0; i < NTHREADS; i++) {
        void *ret = NULL;
        lard_join(t[i], &ret);
        bad |= ret != NULL;
    }
    for (i = 0; i < NTHREADS; i++) {
        uint64_t s = lard_load64(&jobs[i].sum);
        printf("thread %d: sum = %llu\n", i, (unsigned long long)s);
        sum += s;
    }
    printf("total = %llu (main is language thread %u)\n",
           (unsigned long long)lard_load64(&total), (unsigned)lard_self());
    bad |= sum != lard_load64(&total) || lard_load64(&last) >= NTHREADS;
    return bad ? 1 : 0;
}
