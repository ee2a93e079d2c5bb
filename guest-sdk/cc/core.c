/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime core: sync-object table, happens-before primitives,
 * barriers, language-thread ids, dead-stack clearing. */
#define _GNU_SOURCE
#include "rt.h"

#include <string.h>
#include <sys/mman.h>

/* ---- sync objects: open addressing in mmap'd memory, never shrinks ---- */

#define TABLE_BITS 14
#define TABLE_SIZE (1u << TABLE_BITS)
#define POOL_CHUNK 256

struct slot {
    const void *addr;
    struct lardcc_sync *sync;
};

static uint32_t table_lock;
static struct slot *table;
static struct lardcc_sync *pool;
static size_t pool_left;

static void *raw_alloc(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        lard__fatal("lard-cc: out of memory for synchronization clocks");
    return p;
}

static size_t hash(const void *a)
{
    uint64_t x = (uint64_t)(uintptr_t)a;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)(x & (TABLE_SIZE - 1));
}

static struct lardcc_sync *lookup(const void *addr, int create)
{
    struct lardcc_sync *s = NULL;
    size_t i, n;
    lard__lock(&table_lock);
    if (table == NULL) {
        if (!create) {
            lard__unlock(&table_lock);
            return NULL;
        }
        table = raw_alloc(sizeof(struct slot) * TABLE_SIZE);
    }
    for (i = hash(addr), n = 0; n < TABLE_SIZE; i = (i + 1) & (TABLE_SIZE - 1), n++) {
        if (table[i].addr == addr) {
            s = table[i].sync;
            break;
        }
        if (table[i].addr == NULL) {
            if (create) {
                if (pool_left == 0) {
                    pool = raw_alloc(sizeof(struct lardcc_sync) * POOL_CHUNK);
                    pool_left = POOL_CHUNK;
                }
                s = pool++;
                pool_left--;
                s->addr = addr;
                table[i].addr = addr;
                table[i].sync = s;
            }
            break;
        }
    }
    lard__unlock(&table_lock);
    if (s == NULL && create)
        lard__fatal("lard-cc: too many synchronization objects");
    return s;
}

struct lardcc_sync *lardcc_sync_of(const void *addr)
{
    return lookup(addr, 1);
}

struct lardcc_sync *lardcc_sync_find(const void *addr)
{
    return lookup(addr, 0);
}

void lardcc_sync_reset(const void *addr)
{
    struct lardcc_sync *s = lookup(addr, 0);
    if (s == NULL)
        return;
    lard__lock(&s->lock);
    memset(s->vc, 0, sizeof s->vc);
    memset(s->rvc, 0, sizeof s->rvc);
    s->used_rvc = 0;
    lard__unlock(&s->lock);
}

/* ---- the happens-before primitives ---- */

uint32_t lardcc_me(void)
{
    uint32_t me;
    lard__me(&me);
    return me;
}

void lardcc_acquire(struct lardcc_sync *s)
{
    uint32_t me = lardcc_me();
    lard__lock(&s->lock);
    lard__acquire(me, s->vc);
    lard__unlock(&s->lock);
}

void lardcc_acquire_all(struct lardcc_sync *s)
{
    uint32_t me = lardcc_me();
    lard__lock(&s->lock);
    lard__acquire(me, s->vc);
    if (s->used_rvc)
        lard__acquire(me, s->rvc);
    lard__unlock(&s->lock);
}

void lardcc_release(struct lardcc_sync *s)
{
    uint32_t me;
    struct lard__lthread *t = lard__me(&me);
    lard__lock(&s->lock);
    memcpy(s->vc, t->vc, sizeof s->vc);
    lard__tick(me);
    lard__unlock(&s->lock);
}

void lardcc_release_join(struct lardcc_sync *s)
{
    uint32_t me;
    struct lard__lthread *t = lard__me(&me);
    lard__lock(&s->lock);
    lard__join_into(s->vc, t->vc);
    lard__tick(me);
    lard__unlock(&s->lock);
}

void lardcc_release_read(struct lardcc_sync *s)
{
    uint32_t me;
    struct lard__lthread *t = lard__me(&me);
    lard__lock(&s->lock);
    lard__join_into(s->rvc, t->vc);
    s->used_rvc = 1;
    lard__tick(me);
    lard__unlock(&s->lock);
}

/* ---- barriers ---- */

int lardcc_barrier_arrive(struct lardcc_barrier *b, uint32_t n)
{
    uint32_t me;
    int slot;
    struct lard__lthread *t = lard__me(&me);
    lard__lock(&b->lock);
    slot = (int)(b->gen & 1);
    lard__join_into(b->acc[slot], t->vc);
    lard__tick(me);
    if (++b->count >= n) {
        b->count = 0;
        b->gen++;
        memset(b->acc[slot ^ 1], 0, sizeof b->acc[0]);
    }
    lard__unlock(&b->lock);
    return slot;
}

void lardcc_barrier_depart(struct lardcc_barrier *b, int slot)
{
    uint32_t me = lardcc_me();
    lard__lock(&b->lock);
    lard__acquire(me, b->acc[slot]);
    lard__unlock(&b->lock);
}

void lardcc_barrier_contribute(struct lardcc_barrier *b, int slot, const uint64_t *vc)
{
    lard__lock(&b->lock);
    lard__join_into(b->acc[slot], vc);
    lard__unlock(&b->lock);
}

/* ---- language-thread ids ---- */

static uint32_t ids_lock;
static uint32_t nfree;
static uint32_t free_ids[LARD_MAX_THREADS];
static uint64_t free_final[LARD_MAX_THREADS];

/* Ids run out when more than LARD_MAX_THREADS language threads are
 * unordered with each other: every task of a recursive task program (fib)
 * is concurrent with every task of another subtree, so none can take over a
 * finished one's id.  Exact detection needs a vector-clock entry for each;
 * on a LARD CPU the run therefore ends with that reason (docs/lard-cc.md,
 * "Limits").  On a CPU without LARD (ReadVC returns 0) ids and clocks mean
 * nothing: a retired id, else any, is taken again, so the program runs
 * natively like its plain build. */
#define LARDCC_STR2(x) #x
#define LARDCC_STR(x) LARDCC_STR2(x)
static uint32_t out_of_ids(void)
{
    static uint32_t next_shared;
    uint32_t id;
    if (lard_read_vc(lardcc_me()) != 0)
        lard__fatal("lard-cc: more than " LARDCC_STR(LARD_MAX_THREADS) " language threads unordered with each other "
                    "(OpenMP tasks, threads): exact detection needs a vector-clock entry "
                    "for each (docs/lard-cc.md, Limits)");
    if (nfree > 0) {
        id = free_ids[--nfree];
    } else {
        id = 1 + next_shared % (LARD_MAX_THREADS - 1);
        next_shared++;
    }
    return id;
}

uint32_t lardcc_id_alloc(const uint64_t *from)
{
    uint32_t i, id = LARD__NO_THREAD;
    lard__lock(&ids_lock);
    for (i = 0; i < nfree; i++)
        if (from[free_ids[i]] >= free_final[i]) {
            id = free_ids[i];
            free_ids[i] = free_ids[nfree - 1];
            free_final[i] = free_final[nfree - 1];
            nfree--;
            break;
        }
    if (id == LARD__NO_THREAD && lard__nids() >= LARD_MAX_THREADS)
        id = out_of_ids();
    lard__unlock(&ids_lock);
    if (id == LARD__NO_THREAD)
        id = lard__new_id();
    lard__fork_from(id, from);
    return id;
}

void lardcc_id_retire(uint32_t id, uint64_t final)
{
    lard__lock(&ids_lock);
    /* (Natively an id may be held twice: keep the list within bounds.) */
    if (nfree < LARD_MAX_THREADS) {
        free_ids[nfree] = id;
        free_final[nfree] = final;
        nfree++;
    }
    lard__unlock(&ids_lock);
}

void lardcc_switch(uint32_t id)
{
    lard_lang_switch(id);
}

/* ---- stacks ---- */

__thread uintptr_t lardcc_stack_low;

void lardcc_forget(void *p, size_t n)
{
    lard_clear_history(p, n);
}

/* Clears the histories of [low - slack, here): frames that have returned
 * since the last clear (slack covers the red zone and alloca below the
 * lowest function-entry stack pointer).  `here` is the caller's stack
 * pointer at the call (this frame's base + saved rbp + return address): the
 * returned frames reached up to there, and this function's own frame, in
 * the same place, holds no Tracked data. */
__attribute__((noinline)) void lardcc_clear_dead_stack(void)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0) + 16;
    uintptr_t low = lardcc_stack_low;
    const uintptr_t slack = 16384;
    if (low != 0 && low < here) {
        low = low > slack ? low - slack : 0;
        lard_clear_history((void *)low, here - low);
    }
    lardcc_stack_low = here;
}

/* Clears the histories of [low - slack, top): the frames of the current
 * implicit task below `top` (its private copies) and the dead frames below
 * them. */
__attribute__((noinline)) void lardcc_clear_stack_below(uintptr_t top)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0) + 16;
    uintptr_t low = lardcc_stack_low;
    const uintptr_t slack = 16384;
    if (low == 0 || low > here)
        low = here;
    low = low > slack ? low - slack : 0;
    if (top > low)
        lard_clear_history((void *)low, top - low);
    lardcc_stack_low = here;
}
