/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime core: sync-object table, happens-before primitives,
 * barriers, dead-stack clearing (clocks and language-thread ids: clock.c). */
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

/* create: 1 makes a missing object; 0 returns NULL; HOLD returns NULL with
 * the table lock still held (lardcc_sync_find_held). */
#define HOLD 2

static struct lardcc_sync *lookup(const void *addr, int create)
{
    struct lardcc_sync *s = NULL;
    size_t i, n;
    lard__lock(&table_lock);
    if (table == NULL) {
        if (create != 1) {
            if (create != HOLD)
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
            if (create == 1) {
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
    if (s == NULL && create == HOLD)
        return NULL;
    lard__unlock(&table_lock);
    if (s == NULL && create)
        lard__fatal("lard-cc: too many synchronization objects");
    return s;
}

struct lardcc_sync *lardcc_sync_of(const void *addr)
{
    return lookup(addr, 1);
}

struct lardcc_sync *lardcc_sync_find_held(const void *addr)
{
    return lookup(addr, HOLD);
}

void lardcc_sync_table_release(void)
{
    lard__unlock(&table_lock);
}

void lardcc_sync_reset(const void *addr)
{
    struct lardcc_sync *s = lookup(addr, 0);
    if (s == NULL)
        return;
    lard__lock(&s->lock);
    lardcc_vc_clear(&s->vc);
    lardcc_vc_clear(&s->rvc);
    s->used_rvc = 0;
    lard__unlock(&s->lock);
}

/* ---- the happens-before primitives ---- */

void lardcc_acquire(struct lardcc_sync *s)
{
    lard__lock(&s->lock);
    lardcc_acquire_vc(&s->vc);
    lard__unlock(&s->lock);
}

void lardcc_acquire_all(struct lardcc_sync *s)
{
    lard__lock(&s->lock);
    lardcc_acquire_vc(&s->vc);
    if (s->used_rvc)
        lardcc_acquire_vc(&s->rvc);
    lard__unlock(&s->lock);
}

void lardcc_release(struct lardcc_sync *s)
{
    lard__lock(&s->lock);
    lardcc_vc_copy(&s->vc, lardcc_my_clock());
    lardcc_tick();
    lard__unlock(&s->lock);
}

void lardcc_release_join(struct lardcc_sync *s)
{
    lard__lock(&s->lock);
    lardcc_vc_join(&s->vc, lardcc_my_clock());
    lardcc_tick();
    lard__unlock(&s->lock);
}

void lardcc_release_read(struct lardcc_sync *s)
{
    lard__lock(&s->lock);
    lardcc_vc_join(&s->rvc, lardcc_my_clock());
    s->used_rvc = 1;
    lardcc_tick();
    lard__unlock(&s->lock);
}

/* ---- barriers ---- */

int lardcc_barrier_arrive(struct lardcc_barrier *b, uint32_t n)
{
    int slot;
    lard__lock(&b->lock);
    slot = (int)(b->gen & 1);
    lardcc_dvc_join(&b->acc[slot], lardcc_my_clock());
    lardcc_tick();
    if (++b->count >= n) {
        b->count = 0;
        b->gen++;
        lardcc_dvc_clear(&b->acc[slot ^ 1]);
    }
    lard__unlock(&b->lock);
    return slot;
}

void lardcc_barrier_depart(struct lardcc_barrier *b, int slot)
{
    lard__lock(&b->lock);
    lardcc_acquire_dvc(&b->acc[slot]);
    lard__unlock(&b->lock);
}

void lardcc_barrier_contribute(struct lardcc_barrier *b, int slot, const struct lardcc_vc *vc)
{
    lard__lock(&b->lock);
    lardcc_dvc_join(&b->acc[slot], vc);
    lard__unlock(&b->lock);
}

/* ---- stacks ---- */

__thread uintptr_t lardcc_stack_low;
__thread int lardcc_in_runtime;

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
