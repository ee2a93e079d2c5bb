// SPDX-License-Identifier: MIT OR Apache-2.0
// The lard-cc runtime's clocks (guest-sdk/cc/clock.c, core.c) against plain
// dense vector clocks, under random operations: language threads forked,
// switched to on one kernel thread and ended as an OpenMP task ends (its
// final clock kept, its id retired and reused by a later fork that the
// final clock happens before), and the happens-before primitives every
// wrapper uses (acquire, acquire_all, release, release_join, release_read,
// an object's reset, a join of a live or ended thread's clock) on a few
// synchronization objects, biased towards a thread taking the same object
// again (the runtime skips what cannot have changed there).
// After every operation the runtime's clocks that it touched, and the
// detector's copy of the current thread's clock (ReadVC), must read as the
// plain clocks do; at the end every clock is compared.
//
//   clocks_differential SEED OPS MAXTHREADS
//
// Built with plain gcc against the installed runtime archives (no
// instrumentation: the model's own memory is not the program's), run
// under lard.  Prints "clocks agree: ..." and exits 0, or names the first
// difference and exits 1.
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 128
#define OBJS 6

static uint64_t C[MAXT][MAXT];     // thread clocks
static uint64_t S[OBJS][MAXT];     // objects' release clocks
static uint64_t R[OBJS][MAXT];     // objects' readers' clocks
static int used_r[OBJS];
static uint64_t F[MAXT][MAXT];     // ended threads' final clocks
static struct lardcc_vc fin[MAXT]; // the runtime's copies of them
static int ended[MAXT];
static uint32_t ids[MAXT];         // the runtime's id of model thread k
static int nthreads, me;           // model threads; the current one
static char objs[OBJS][64];        // the objects' addresses
static uint64_t rng;
static long step;

static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void join(uint64_t *to, const uint64_t *from) {
    for (int i = 0; i < MAXT; i++)
        if (from[i] > to[i])
            to[i] = from[i];
}

static void tick(void) {
    C[me][ids[me]]++;
}

static void fail(const char *what, int k, uint32_t id, uint64_t got, uint64_t want) {
    printf("step %ld: %s %d entry %u reads %llu, plain clocks %llu\n", step, what, k, id,
           (unsigned long long)got, (unsigned long long)want);
    exit(1);
}

static void check_thread(int k) {
    if (ended[k])
        return;
    for (int i = 0; i < nthreads; i++) {
        uint64_t got = lardcc_vc_get(lardcc_clock(ids[k]), ids[i]);
        if (got != C[k][ids[i]])
            fail("thread", k, ids[i], got, C[k][ids[i]]);
    }
}

static void check_object(int o) {
    struct lardcc_sync *s = lardcc_sync_of(objs[o]);
    for (int i = 0; i < nthreads; i++) {
        uint64_t got = lardcc_vc_get(&s->vc, ids[i]);
        if (got != S[o][ids[i]])
            fail("object", o, ids[i], got, S[o][ids[i]]);
        got = lardcc_vc_get(&s->rvc, ids[i]);
        if (got != R[o][ids[i]])
            fail("object (readers)", o, ids[i], got, R[o][ids[i]]);
    }
}

static void check_final(int k) {
    for (int i = 0; i < nthreads; i++) {
        uint64_t got = lardcc_vc_get(&fin[k], ids[i]);
        if (got != F[k][ids[i]])
            fail("final clock of thread", k, ids[i], got, F[k][ids[i]]);
    }
}

// A live model thread other than `not` (-1: any); -1 if none.
static int live_thread(int not) {
    int k = (int)(next() % nthreads);
    for (int n = 0; n < nthreads; n++, k = (k + 1) % nthreads)
        if (!ended[k] && k != not)
            return k;
    return -1;
}

// An ended model thread, -1 if none.
static int ended_thread(void) {
    int k = (int)(next() % nthreads);
    for (int n = 0; n < nthreads; n++, k = (k + 1) % nthreads)
        if (ended[k])
            return k;
    return -1;
}

static void check_detector(void) {
    for (int i = 0; i < nthreads; i++) {
        uint64_t got = lard_read_vc(ids[i]);
        if (got != C[me][ids[i]])
            fail("detector's clock of thread", me, ids[i], got, C[me][ids[i]]);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: clocks_differential SEED OPS MAXTHREADS\n");
        return 2;
    }
    rng = strtoull(argv[1], NULL, 10) * 0x9e3779b97f4a7c15ULL + 1;
    long ops = atol(argv[2]);
    int maxt = atoi(argv[3]);
    if (maxt < 2 || maxt > MAXT) {
        fprintf(stderr, "clocks_differential: MAXTHREADS must be 2..%d\n", MAXT);
        return 2;
    }
    ids[0] = lardcc_me();
    C[0][ids[0]] = lardcc_own(ids[0]);
    nthreads = 1;
    int last = 0;
    long kinds[11] = {0}, reused = 0;
    for (step = 0; step < ops; step++) {
        unsigned r = next() % 100;
        // Mostly the object this thread used last: the repeated lock.
        int o = next() % 4 ? last : (int)(next() % OBJS);
        struct lardcc_sync *s = lardcc_sync_of(objs[o]);
        int kind;
        if (r < 6 && nthreads < maxt) {
            kind = 0; // fork, as pthread_create: the child starts from my clock
            uint32_t id = lardcc_id_alloc(lardcc_my_clock());
            int k = nthreads++;
            if (id >= MAXT)
                fail("fork: id out of range of thread", k, id, 0, 0);
            for (int i = 0; i < k; i++)
                if (ids[i] == id) {
                    reused++;
                    break;
                }
            ids[k] = id;
            memcpy(C[k], C[me], sizeof C[k]);
            C[k][id] = C[me][id] + 1;
            lardcc_tick();
            tick();
            check_thread(k);
        } else if (r < 20) {
            kind = 1; // another thread runs
            me = live_thread(-1);
            lardcc_switch(ids[me]);
        } else if (r < 45) {
            kind = 2;
            lardcc_acquire(s);
            join(C[me], S[o]);
        } else if (r < 75) {
            kind = 3;
            lardcc_release(s);
            memcpy(S[o], C[me], sizeof S[o]);
            tick();
        } else if (r < 81) {
            kind = 4;
            lardcc_release_join(s);
            join(S[o], C[me]);
            tick();
        } else if (r < 87) {
            kind = 5;
            lardcc_release_read(s);
            join(R[o], C[me]);
            used_r[o] = 1;
            tick();
        } else if (r < 93) {
            kind = 6;
            lardcc_acquire_all(s);
            join(C[me], S[o]);
            if (used_r[o])
                join(C[me], R[o]);
        } else if (r < 94) {
            kind = 7; // a joiner takes another thread's clock
            int k = live_thread(-1);
            lardcc_acquire_vc(lardcc_clock(ids[k]));
            join(C[me], C[k]);
        } else if (r < 96 && me != 0) {
            kind = 9; // the current thread ends (as an OpenMP task does)
            uint32_t id = ids[me];
            lardcc_vc_copy(&fin[me], lardcc_clock(id));
            memcpy(F[me], C[me], sizeof F[me]);
            lard_note_thread_exit();
            lardcc_id_drop_clock(id);
            lardcc_id_retire(id, lardcc_vc_get(&fin[me], id));
            ended[me] = 1;
            check_final(me);
            me = live_thread(me);
            lardcc_switch(ids[me]);
        } else if (r < 98 && ended_thread() >= 0) {
            kind = 10; // a joiner takes an ended thread's final clock
            int k = ended_thread();
            lardcc_acquire_vc(&fin[k]);
            join(C[me], F[k]);
        } else {
            kind = 8; // re-initialized (pthread_mutex_init)
            lardcc_sync_reset(objs[o]);
            memset(S[o], 0, sizeof S[o]);
            memset(R[o], 0, sizeof R[o]);
            used_r[o] = 0;
        }
        kinds[kind]++;
        last = o;
        check_thread(me);
        check_object(o);
        check_detector();
    }
    for (int k = 0; k < nthreads; k++) {
        check_thread(k);
        if (ended[k])
            check_final(k);
    }
    for (int o = 0; o < OBJS; o++)
        check_object(o);
    printf("clocks agree: %ld operations, %d threads (forks %ld, switches %ld, acquires %ld, "
           "releases %ld, joining releases %ld, read releases %ld, writer acquires %ld, "
           "thread joins %ld, resets %ld, ends %ld, joins of ended threads %ld, ids reused %ld)\n",
           ops, nthreads, kinds[0], kinds[1], kinds[2], kinds[3], kinds[4], kinds[5], kinds[6],
           kinds[7], kinds[8], kinds[9], kinds[10], reused);
    return 0;
}
