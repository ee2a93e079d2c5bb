/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime core: sync-object table, happens-before primitives,
 * barriers, dead-stack clearing (clocks and language-thread ids: clock.c). */
#define _GNU_SOURCE
#include "rt.h"

#include <string.h>
#include <sys/mman.h>

/* ---- sync objects ----
 *
 * Two open-addressing tables in mmap'd memory, both doubled at half load:
 * objects by address, and by 4 KiB page the list of the objects whose
 * address is in the page, so that a freed block forgets its objects
 * (lardcc_sync_forget_range) in time proportional to its pages.  Removed
 * slots are tombstones until the next doubling.  A forgotten object's
 * storage goes on a free list for the next object.
 *
 * A count of objects per page-hash bucket lets a freed block whose pages
 * hold no object (nearly every free) pass without the table's lock.
 *
 * Each kernel thread keeps the objects it found last in a small cache; an
 * entry holds while its object still stands for the address (a forgotten
 * object's address is cleared, and a recycled one's is its new object's):
 * without it
 * every lock operation of every thread took the table's lock, and a thread
 * preempted while holding it stopped all the others, one futex wait each,
 * so the cost of an operation grew with the number of threads. */

#define PAGE_SHIFT 12
#define POOL_CHUNK 256
#define TOMB ((const void *)1)

struct slot {
    const void *addr; /* NULL: empty; TOMB: removed */
    struct lardcc_sync *sync;
};
struct page_slot {
    uintptr_t page; /* page number + 1; 0: empty; TOMB_PAGE: removed */
    struct lardcc_sync *head;
};
#define TOMB_PAGE ((uintptr_t)-1)

static uint32_t table_lock;
static struct slot *table;
static size_t table_cap, table_used; /* used: live + tombstones */
static struct page_slot *pages;
static size_t pages_cap, pages_used;
static struct lardcc_sync *pool, *free_syncs;
static size_t pool_left;

#define BUCKETS 16384
static uint32_t bucket_objects[BUCKETS]; /* objects whose page hashes here */

#define CACHE 32
struct cached {
    const void *addr;
    struct lardcc_sync *sync;
};
static __thread struct cached cache[CACHE];

static void *raw_alloc(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        lard__fatal("lard-cc: out of memory for synchronization clocks");
    return p;
}

static size_t hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static struct slot *slot_of(struct slot *t, size_t cap, const void *addr, int for_insert)
{
    size_t i = hash((uint64_t)(uintptr_t)addr) & (cap - 1);
    struct slot *tomb = NULL;
    for (;; i = (i + 1) & (cap - 1)) {
        if (t[i].addr == addr)
            return &t[i];
        if (t[i].addr == TOMB && tomb == NULL)
            tomb = &t[i];
        if (t[i].addr == NULL)
            return for_insert && tomb ? tomb : &t[i];
    }
}

/* The object count of the bucket of page number `page` (+ 1). */
static uint32_t *bucket_of(uintptr_t page)
{
    return &bucket_objects[hash(page) & (BUCKETS - 1)];
}

static struct page_slot *page_slot_of(struct page_slot *t, size_t cap, uintptr_t page,
                                      int for_insert)
{
    size_t i = hash(page) & (cap - 1);
    struct page_slot *tomb = NULL;
    for (;; i = (i + 1) & (cap - 1)) {
        if (t[i].page == page)
            return &t[i];
        if (t[i].page == TOMB_PAGE && tomb == NULL)
            tomb = &t[i];
        if (t[i].page == 0)
            return for_insert && tomb ? tomb : &t[i];
    }
}

/* Room for one more object (and its page) at under half load. */
static void reserve_one(void)
{
    if (2 * (table_used + 1) > table_cap) {
        size_t i, cap = table_cap ? table_cap * 2 : 1u << 14, live = 0;
        struct slot *t = raw_alloc(sizeof(struct slot) * cap);
        for (i = 0; i < table_cap; i++)
            if (table[i].addr != NULL && table[i].addr != TOMB) {
                *slot_of(t, cap, table[i].addr, 1) = table[i];
                live++;
            }
        if (table)
            munmap(table, sizeof(struct slot) * table_cap);
        table = t;
        table_cap = cap;
        table_used = live;
    }
    if (2 * (pages_used + 1) > pages_cap) {
        size_t i, cap = pages_cap ? pages_cap * 2 : 1u << 12, live = 0;
        struct page_slot *t = raw_alloc(sizeof(struct page_slot) * cap);
        for (i = 0; i < pages_cap; i++)
            if (pages[i].page != 0 && pages[i].page != TOMB_PAGE) {
                *page_slot_of(t, cap, pages[i].page, 1) = pages[i];
                live++;
            }
        if (pages)
            munmap(pages, sizeof(struct page_slot) * pages_cap);
        pages = t;
        pages_cap = cap;
        pages_used = live;
    }
}

static struct lardcc_sync *make(const void *addr)
{
    struct lardcc_sync *s;
    struct slot *sl;
    struct page_slot *ps;
    uintptr_t page = ((uintptr_t)addr >> PAGE_SHIFT) + 1;
    reserve_one();
    if (free_syncs != NULL) {
        s = free_syncs;
        free_syncs = s->page_next;
    } else {
        if (pool_left == 0) {
            pool = raw_alloc(sizeof(struct lardcc_sync) * POOL_CHUNK);
            pool_left = POOL_CHUNK;
        }
        s = pool++;
        pool_left--;
    }
    memset(s, 0, sizeof *s);
    __atomic_store_n(&s->addr, addr, __ATOMIC_RELEASE);
    sl = slot_of(table, table_cap, addr, 1);
    if (sl->addr == NULL)
        table_used++;
    sl->addr = addr;
    sl->sync = s;
    ps = page_slot_of(pages, pages_cap, page, 1);
    if (ps->page != page) {
        if (ps->page == 0)
            pages_used++;
        ps->page = page;
        ps->head = NULL;
    }
    s->page_next = ps->head;
    ps->head = s;
    __atomic_add_fetch(bucket_of(page), 1, __ATOMIC_RELAXED);
    return s;
}

/* create: 1 makes a missing object; 0 returns NULL; HOLD returns NULL with
 * the table lock still held (lardcc_sync_find_held). */
#define HOLD 2

static struct lardcc_sync *lookup(const void *addr, int create)
{
    struct lardcc_sync *s = NULL;
    struct cached *c = &cache[hash((uint64_t)(uintptr_t)addr) & (CACHE - 1)];
    if (create != HOLD && c->addr == addr && c->sync != NULL &&
        __atomic_load_n(&c->sync->addr, __ATOMIC_ACQUIRE) == addr)
        return c->sync;
    lard__lock(&table_lock);
    if (table != NULL) {
        struct slot *sl = slot_of(table, table_cap, addr, 0);
        if (sl->addr == addr)
            s = sl->sync;
    }
    if (s == NULL && create == 1)
        s = make(addr);
    if (s == NULL && create == HOLD)
        return NULL;
    lard__unlock(&table_lock);
    if (s != NULL) {
        c->addr = addr;
        c->sync = s;
    }
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

void lardcc_sync_forget_range(const void *p, size_t n)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + n, page;
    if (n == 0)
        return;
    /* A block of a few pages none of whose buckets counts an object. */
    if (((hi - 1) >> PAGE_SHIFT) - (lo >> PAGE_SHIFT) < 64) {
        for (page = (lo >> PAGE_SHIFT) + 1; page <= ((hi - 1) >> PAGE_SHIFT) + 1; page++)
            if (__atomic_load_n(bucket_of(page), __ATOMIC_RELAXED) != 0)
                break;
        if (page > ((hi - 1) >> PAGE_SHIFT) + 1)
            return;
    }
    lard__lock(&table_lock);
    if (pages == NULL) {
        lard__unlock(&table_lock);
        return;
    }
    for (page = (lo >> PAGE_SHIFT) + 1; page <= ((hi - 1) >> PAGE_SHIFT) + 1; page++) {
        struct page_slot *ps = page_slot_of(pages, pages_cap, page, 0);
        struct lardcc_sync **link;
        if (ps->page != page)
            continue;
        for (link = &ps->head; *link != NULL;) {
            struct lardcc_sync *s = *link;
            if ((uintptr_t)s->addr < lo || (uintptr_t)s->addr >= hi) {
                link = &s->page_next;
                continue;
            }
            *link = s->page_next;
            __atomic_sub_fetch(bucket_of(page), 1, __ATOMIC_RELAXED);
            slot_of(table, table_cap, s->addr, 0)->addr = TOMB;
            __atomic_store_n(&s->addr, NULL, __ATOMIC_RELEASE);
            lardcc_vc_free(&s->vc);
            lardcc_vc_free(&s->rvc);
            lardcc_vc_free(&s->avc);
            s->page_next = free_syncs;
            free_syncs = s;
        }
        if (ps->head == NULL)
            ps->page = TOMB_PAGE;
    }
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

/* ---- unit names ---- */

/* Natively nothing; under lard a note for race reports (rt.h).  Noinline
 * and using its argument, so that it stays a real function lard can
 * intercept. */
__attribute__((__noinline__, __used__)) void lardcc_note_unit(const struct lardcc_unit_note *n)
{
    __asm__ volatile("" : : "r"(n) : "memory");
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
 * them.  When no function was entered below the caller since the last
 * clear (a unit whose body made no call), the dead frames have no history
 * newer than that clear, and [caller, top) is enough. */
__attribute__((noinline)) void lardcc_clear_stack_below(uintptr_t top)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0) + 16;
    uintptr_t low = lardcc_stack_low;
    const uintptr_t slack = 16384;
    if (low == 0)
        low = here > slack ? here - slack : 0;
    else if (low < here)
        low = low > slack ? low - slack : 0;
    else
        low = here;
    if (top > low)
        lard_clear_history((void *)low, top - low);
    lardcc_stack_low = here;
}
