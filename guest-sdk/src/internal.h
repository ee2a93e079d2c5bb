/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Internals of liblard.  Everything here is "system" code in LARD's sense:
 * its memory accesses are untracked (plain C, never lard_loadN/lard_storeN)
 * and its own synchronization (futex locks, pthread create/join) is never
 * reported; the only happens-before edges the detector sees are the WriteVC
 * ops issued when a language-level clock changes.
 */
#ifndef LARD_INTERNAL_H
#define LARD_INTERNAL_H

#include "lard.h"

#include <stdint.h>

#define LARD__NO_THREAD UINT32_MAX

/* One language thread: its vector clock, mirrored into the detector. */
struct lard__lthread {
    uint64_t vc[LARD_MAX_THREADS];
    unsigned long pthread;                /* pthread_t of a lard_spawn thread */
    void *(*fn)(void *);
    void *arg;
    void *ret;
    int spawned;
};

extern struct lard__lthread lard__threads[LARD_MAX_THREADS];

/* Thread identity (identity.c), one for liblard and any runtime linked with
 * it.  Ids count up from 1 (0 is the main thread's), never reused by
 * liblard; every kernel thread runs one language thread at a time. */
/* Number of ids handed out so far (entries >= this are 0 in every clock). */
uint32_t lard__nids(void);
/* Hands out a fresh id, with no limit of its own. */
uint32_t lard__id_fresh(void);
/* The language thread this kernel thread runs; LARD__NO_THREAD before its
 * first one. */
extern __thread uint32_t lard__cur;
/* This kernel thread becomes a fresh language thread (the main thread id
 * 0, any other a fresh id): every runtime's fresh clock for it, then
 * Thread and WriteVC of its own entry 1.  Returns the id. */
uint32_t lard__adopt(void);
/* The current language thread of this kernel thread (adopting it if none). */
static inline uint32_t lard__current(void)
{
    uint32_t id = lard__cur;
    return id == LARD__NO_THREAD ? lard__adopt() : id;
}
/* This kernel thread runs language thread `id` from now on (Thread). */
void lard__run(uint32_t id);
/* Called by lard__adopt, defined by a runtime linked with liblard that
 * keeps clocks of its own (the lard-cc runtime): its fresh clock for the
 * adopted id `id` (own entry 1).  Absent (null) with liblard alone. */
void lard__adopt_hook(uint32_t id) __attribute__((weak));

/* liblard's clocks (thread.c), for ids below LARD_MAX_THREADS: the ids it
 * hands out itself and adopted ones. */
/* Hands out a fresh id (aborts past LARD_MAX_THREADS). */
uint32_t lard__new_id(void);
/* liblard's clock of adopted id `id`: own entry 1 (nothing past the array). */
void lard__fresh_clock(uint32_t id);
/* The current language thread of this kernel thread (adopting it if none);
 * aborts when its id is past LARD_MAX_THREADS (a thread of another
 * runtime's, which liblard keeps no clock for). */
struct lard__lthread *lard__me(uint32_t *id);

/* Clock helpers: every change to the current thread's clock is mirrored
 * with WriteVC, entry by entry, only for the entries that change. */
void lard__acquire(uint32_t me, const uint64_t *from);   /* me := me ⊔ from */
void lard__tick(uint32_t me);                             /* me[me] += 1     */
void lard__join_into(uint64_t *to, const uint64_t *from); /* to := to ⊔ from */
/* Fork: clock(id) := from, clock(id)[id] += 1 (the creator ticks itself). */
void lard__fork_from(uint32_t id, const uint64_t *from);

/* Internal futex lock (never reported to the detector). */
void lard__lock(uint32_t *l);
void lard__unlock(uint32_t *l);
void lard__futex_wait(uint32_t *addr, uint32_t val);
void lard__futex_wake(uint32_t *addr, int n);

void lard__fatal(const char *msg);

#endif
