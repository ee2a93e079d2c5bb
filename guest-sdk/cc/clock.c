/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: sparse vector clocks and the language threads they
 * belong to, without a limit on the number of language threads.
 *
 * A clock lists its non-zero entries sorted by id, so it costs what it
 * names: a recursive task program (fib with tasks: one language thread per
 * task, every task of one subtree unordered with every task of the other)
 * keeps small clocks for its tasks however many there are.  Storage comes
 * from mmap'd arenas in size classes (never from the program's allocator,
 * whose calls the runtime wraps).  Every change of a language thread's
 * clock is mirrored into the detector with WriteVC.
 *
 * Unchanged clocks.  A lock taken again and again by one thread, or handed
 * among a few of many, must not cost the entries of every thread its clock
 * names.  Each clock counts its changes (`ver`; a thread's ticks of its
 * own entry are not counted) and remembers the last that may have lowered
 * an entry (`base`: a clear, a replacement); a copy of a thread's clock
 * remembers whose it is and at which count (`src`, `src_ver`), until it
 * changes otherwise.  Then:
 *   - a join of such a copy into the clock of its own thread, taken at or
 *     after that clock's last lowering, adds nothing: the thread's clock
 *     only grew since (a lock reacquired by its last releaser);
 *   - a copy of a thread's clock into the copy of it at the same count
 *     only needs the thread's own entry (a lock released again by the
 *     thread that released it last and has acquired nothing since).
 * Both give the clocks the full join and copy would, exactly.
 */
#define _GNU_SOURCE
#include "rt.h"

#include <string.h>
#include <sys/mman.h>

/* ---- storage: size classes of 4 << k entries ---- */

#define CLASSES 26
#define ARENA (1u << 22)

static uint32_t store_lock;
static void *free_list[CLASSES];
static char *arena;
static size_t arena_left;

static void *raw(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        lard__fatal("lard-cc: out of memory for vector clocks");
    return p;
}

static int class_of(uint32_t cap)
{
    int k = 0;
    while ((4u << k) < cap)
        k++;
    return k;
}

static struct lardcc_ent *ents_alloc(uint32_t cap)
{
    int k = class_of(cap);
    size_t bytes = (size_t)(4u << k) * sizeof(struct lardcc_ent);
    void *p;
    if (k >= CLASSES)
        lard__fatal("lard-cc: vector clock too large");
    lard__lock(&store_lock);
    if (free_list[k] != NULL) {
        p = free_list[k];
        free_list[k] = *(void **)p;
    } else if (bytes >= ARENA) {
        p = raw(bytes);
    } else {
        if (arena_left < bytes) {
            arena = raw(ARENA);
            arena_left = ARENA;
        }
        p = arena;
        arena += bytes;
        arena_left -= bytes;
    }
    lard__unlock(&store_lock);
    return p;
}

static void ents_free(struct lardcc_ent *e, uint32_t cap)
{
    int k;
    if (e == NULL)
        return;
    k = class_of(cap);
    lard__lock(&store_lock);
    *(void **)e = free_list[k];
    free_list[k] = e;
    lard__unlock(&store_lock);
}

/* ---- clocks ---- */

/* `c` changed (entries raised or added): copies of it are no longer equal. */
static inline void changed(struct lardcc_vc *c)
{
    c->ver++;
    c->src = 0;
}

/* `c` changed in a way that may lower an entry (cleared, replaced). */
static inline void lowered(struct lardcc_vc *c)
{
    changed(c);
    c->base = c->ver;
}

/* Entry `id` of every clock reads at least its floor (below, "Clock
 * floors"): the stored entries at or below it are left out. */
static inline uint64_t floor_of(uint32_t id);
static uint32_t floors_any; /* a floor was raised */

/* The first index in [lo, hi) whose id is at least `id` (hi if none). */
static uint32_t search(const struct lardcc_vc *c, uint32_t lo, uint32_t hi, uint32_t id)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->e[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint32_t find(const struct lardcc_vc *c, uint32_t id)
{
    return search(c, 0, c->n, id);
}

uint64_t lardcc_vc_get(const struct lardcc_vc *c, uint32_t id)
{
    uint32_t i = find(c, id);
    uint64_t v = i < c->n && c->e[i].id == id ? c->e[i].v : 0, f = floor_of(id);
    return v > f ? v : f;
}

static void reserve(struct lardcc_vc *c, uint32_t n)
{
    struct lardcc_ent *e;
    uint32_t cap;
    if (n <= c->cap)
        return;
    cap = 4u << class_of(n);
    e = ents_alloc(cap);
    if (c->n)
        memcpy(e, c->e, c->n * sizeof *e);
    ents_free(c->e, c->cap);
    c->e = e;
    c->cap = cap;
}

/* Entry `id` of `c` := v, the change not counted (a thread's own tick, a
 * copy's own entry of its thread); returns the entry's stored value
 * before (0: none). */
static uint64_t put(struct lardcc_vc *c, uint32_t id, uint64_t v)
{
    uint32_t i = find(c, id);
    uint64_t old;
    if (i < c->n && c->e[i].id == id) {
        old = c->e[i].v;
        c->e[i].v = v;
        return old;
    }
    if (v == 0)
        return 0;
    reserve(c, c->n + 1);
    memmove(&c->e[i + 1], &c->e[i], (c->n - i) * sizeof c->e[0]);
    c->e[i].id = id;
    c->e[i].v = v;
    c->n++;
    return 0;
}

void lardcc_vc_set(struct lardcc_vc *c, uint32_t id, uint64_t v)
{
    uint64_t old = put(c, id, v);
    if (v < old)
        lowered(c);
    else if (v > old)
        changed(c);
}

/* The first index at or after i whose id is at least `id`: a search that
 * doubles its step from i, so a join of a small clock into a large one
 * costs the small one's entries, not the large one's. */
static uint32_t seek(const struct lardcc_vc *c, uint32_t i, uint32_t id)
{
    uint32_t lo = i, hi, step = 1;
    if (i >= c->n || c->e[i].id >= id)
        return i;
    while (step < c->n - lo && c->e[lo + step].id < id) {
        lo += step;
        step *= 2;
    }
    hi = step < c->n - lo ? lo + step : c->n; /* e[lo].id < id <= e[hi].id */
    return search(c, lo + 1, hi, id);
}

/* to := to ⊔ from; with `mirror`, every entry raised is written to the
 * detector (`to` is the current thread's clock).  Costs from's entries
 * (and a logarithm of to's) plus the entries of `to` above the lowest id
 * it gains, which move up in place. */
static void join(struct lardcc_vc *to, const struct lardcc_vc *from, int mirror)
{
    uint32_t i = 0, j, k, extra = 0, raised = 0;
    if (from->n == 0)
        return;
    /* An earlier copy of `to` itself (above, "Unchanged clocks"). */
    if (to->self != 0 && from->src == to->self && from->src_ver >= to->base)
        return;
    /* The ids `to` has are raised in place; the others are counted. */
    for (j = 0; j < from->n; j++) {
        if (from->e[j].v <= floor_of(from->e[j].id))
            continue;
        i = seek(to, i, from->e[j].id);
        if (i < to->n && to->e[i].id == from->e[j].id) {
            if (from->e[j].v > to->e[i].v) {
                to->e[i].v = from->e[j].v;
                raised = 1;
                if (mirror)
                    lard_write_vc(to->e[i].id, to->e[i].v);
            }
            i++; /* the next id of `from` is above this one */
        } else {
            extra++;
        }
    }
    if (raised || extra)
        changed(to);
    if (extra == 0)
        return;
    /* The others merged in from the top down, until all are placed. */
    reserve(to, to->n + extra);
    i = to->n;
    k = to->n + extra;
    j = from->n;
    while (k > i && j > 0) {
        uint32_t id;
        j--;
        if (from->e[j].v <= floor_of(from->e[j].id))
            continue;
        id = from->e[j].id;
        while (i > 0 && to->e[i - 1].id > id)
            to->e[--k] = to->e[--i];
        if (i > 0 && to->e[i - 1].id == id)
            continue; /* raised above */
        to->e[--k] = from->e[j];
        if (mirror)
            lard_write_vc(id, from->e[j].v);
    }
    /* Fewer placed than counted when another thread raised floors
     * meanwhile: the gap closes. */
    if (k > i)
        memmove(&to->e[i], &to->e[k], (to->n + extra - k) * sizeof to->e[0]);
    to->n += extra - (k - i);
}

void lardcc_vc_join(struct lardcc_vc *to, const struct lardcc_vc *from)
{
    join(to, from, 0);
}

void lardcc_vc_copy(struct lardcc_vc *to, const struct lardcc_vc *from)
{
    uint32_t i;
    if (to == from)
        return;
    if (from->self != 0 && to->src == from->self && to->src_ver == from->ver) {
        /* Equal but for the thread's own entry ("Unchanged clocks"). */
        uint32_t id = from->self - 1;
        uint64_t v;
        i = find(from, id);
        v = i < from->n && from->e[i].id == id ? from->e[i].v : 0;
        if (v > floor_of(id) && put(to, id, v) != v)
            to->ver++;
        return;
    }
    lowered(to);
    to->n = 0;
    reserve(to, from->n);
    if (!__atomic_load_n(&floors_any, __ATOMIC_RELAXED)) {
        if (from->n)
            memcpy(to->e, from->e, from->n * sizeof to->e[0]);
        to->n = from->n;
    } else {
        for (i = 0; i < from->n; i++)
            if (from->e[i].v > floor_of(from->e[i].id))
                to->e[to->n++] = from->e[i];
    }
    to->src = from->self != 0 ? from->self : from->src;
    to->src_ver = from->self != 0 ? from->ver : from->src_ver;
}

void lardcc_vc_clear(struct lardcc_vc *c)
{
    lowered(c);
    c->n = 0;
}

/* ---- dense clocks ---- */

void lardcc_dvc_join(struct lardcc_dvc *to, const struct lardcc_vc *from)
{
    uint32_t i, top;
    if (from->n == 0)
        return;
    top = from->e[from->n - 1].id + 1;
    if (top > to->cap) {
        uint32_t cap = to->cap ? to->cap : 1024;
        uint64_t *v;
        while (cap < top)
            cap *= 2;
        v = raw((size_t)cap * sizeof *v); /* zero-filled */
        if (to->hi)
            memcpy(v, to->v, (size_t)to->hi * sizeof *v);
        if (to->v)
            munmap(to->v, (size_t)to->cap * sizeof *v);
        to->v = v;
        to->cap = cap;
    }
    for (i = 0; i < from->n; i++)
        if (from->e[i].v > to->v[from->e[i].id] && from->e[i].v > floor_of(from->e[i].id))
            to->v[from->e[i].id] = from->e[i].v;
    if (top > to->hi)
        to->hi = top;
}

void lardcc_dvc_clear(struct lardcc_dvc *c)
{
    if (c->hi)
        memset(c->v, 0, (size_t)c->hi * sizeof c->v[0]);
    c->hi = 0;
}

void lardcc_dvc_free(struct lardcc_dvc *c)
{
    if (c->v)
        munmap(c->v, (size_t)c->cap * sizeof c->v[0]);
    c->v = NULL;
    c->cap = c->hi = 0;
}

/* ---- language threads ---- */

#define CHUNK_BITS 12
#define CHUNKS 4096 /* 16M language threads */

struct lthread {
    struct lardcc_vc vc;
    int fresh;      /* its clock has not been installed in the detector yet */
    uint32_t live;   /* it can run program code (clock floors) */
    uint32_t pruned; /* floor_epoch when its clock was last pruned */
    uint64_t floor; /* entry `id` of every clock is at least this */
};

static struct lthread *chunks[CHUNKS];
static uint32_t chunks_lock;
/* The language thread the runtime last ran on this kernel thread (adopted,
 * or switched to); the current one (liblard's identity, lard__cur) differs
 * only while liblard runs one of its own here. */
static __thread uint32_t mine = LARD__NO_THREAD;

/* The chunk of `c` the first time it is used (kept out of line). */
__attribute__((noinline)) static struct lthread *new_chunk(uint32_t c)
{
    struct lthread *chunk;
    if (c >= CHUNKS)
        lard__fatal("lard-cc: more than 16M language threads");
    lard__lock(&chunks_lock);
    chunk = chunks[c];
    if (chunk == NULL) {
        uint32_t i;
        chunk = raw(sizeof(struct lthread) << CHUNK_BITS);
        for (i = 0; i < (1u << CHUNK_BITS); i++)
            chunk[i].vc.self = (c << CHUNK_BITS) + i + 1;
        __atomic_store_n(&chunks[c], chunk, __ATOMIC_RELEASE);
    }
    lard__unlock(&chunks_lock);
    return chunk;
}

static inline struct lthread *lthread(uint32_t id)
{
    uint32_t c = id >> CHUNK_BITS;
    struct lthread *chunk = c < CHUNKS ? __atomic_load_n(&chunks[c], __ATOMIC_ACQUIRE) : NULL;
    if (__builtin_expect(chunk == NULL, 0))
        chunk = new_chunk(c);
    return &chunk[id & ((1u << CHUNK_BITS) - 1)];
}

struct lardcc_vc *lardcc_clock(uint32_t id)
{
    return &lthread(id)->vc;
}

/* ---- clock floors ----
 *
 * Entry t of every clock may be raised to a floor v (FloorVC, docs/lard-cc-openmp.md,
 * "Clock floors") once every clock that can still reach a language thread
 * holds t at v or more: the clocks of the language threads that can run
 * program code (`live`: from their start to their end; a libgomp pool
 * thread's own identity is not, it only ever runs implicit tasks forked from
 * the encountering thread) and the start clocks not yet taken (a created
 * task's, a team's fork clock until every member started, a teams
 * construct's).  Then every clock reads t as at least v, so the clocks
 * forked afterwards (the units and tasks of the next phase) leave t out,
 * and joins skip it: a time-step loop of worksharing units keeps clocks of
 * one phase's units instead of every unit ever run.
 *
 * Two situations establish it:
 *   - a team barrier whose team holds every live language thread, with no
 *     start pending: every member departs with the phase's accumulator, so
 *     its entries are floors.  The first member to depart decides; no other
 *     member has departed (and so started or ended anything) before.
 *   - a language thread alone (the only live one, no start pending): its
 *     whole clock is the floor, since everything later is forked from it.
 * A CPU that keeps no floors (a detector that cannot apply them) answers
 * FloorVC with 0: floors then stay off and every clock keeps every entry. */

static uint32_t live_count;     /* language threads that can run program code */
static uint32_t starts_pending; /* start clocks not yet taken */
static uint32_t floors_off;     /* the CPU keeps no floors */
static uint32_t floor_epoch;    /* bumped whenever floors were raised */


static inline uint64_t floor_of(uint32_t id)
{
    const struct lthread *chunk;
    if (!__atomic_load_n(&floors_any, __ATOMIC_RELAXED) || (id >> CHUNK_BITS) >= CHUNKS)
        return 0;
    chunk = __atomic_load_n(&chunks[id >> CHUNK_BITS], __ATOMIC_ACQUIRE);
    return chunk ? __atomic_load_n(&chunk[id & ((1u << CHUNK_BITS) - 1)].floor, __ATOMIC_RELAXED)
                 : 0;
}

static void set_live(uint32_t id, uint32_t on)
{
    if (__atomic_exchange_n(&lthread(id)->live, on, __ATOMIC_ACQ_REL) != on) {
        if (on)
            __atomic_add_fetch(&live_count, 1, __ATOMIC_ACQ_REL);
        else
            __atomic_sub_fetch(&live_count, 1, __ATOMIC_ACQ_REL);
    }
}

void lardcc_id_idle(uint32_t id)
{
    set_live(id, 0);
}

void lardcc_starts_pending(int delta)
{
    __atomic_add_fetch(&starts_pending, (uint32_t)delta, __ATOMIC_ACQ_REL);
}

/* Floor of entry `id` := v; 0 once the CPU turned floors down. */
static int raise_floor(uint32_t id, uint64_t v)
{
    struct lthread *t = lthread(id);
    uint64_t f = __atomic_load_n(&t->floor, __ATOMIC_RELAXED);
    if (v <= f)
        return 1;
    if (lard_floor_vc(id, v) == 0) {
        __atomic_store_n(&floors_off, 1, __ATOMIC_RELAXED);
        return 0;
    }
    while (f < v && !__atomic_compare_exchange_n(&t->floor, &f, v, 0, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
        ;
    __atomic_store_n(&floors_any, 1, __ATOMIC_RELAXED);
    return 1;
}

/* The current language thread's clock loses its entries at or below their
 * floors (its own stays). */
void lardcc_prune_mine(void)
{
    uint32_t me = lardcc_me(), i, k = 0, epoch = __atomic_load_n(&floor_epoch, __ATOMIC_ACQUIRE);
    struct lthread *t = lthread(me);
    struct lardcc_vc *c = &t->vc;
    if (epoch == t->pruned)
        return;
    t->pruned = epoch;
    for (i = 0; i < c->n; i++)
        if (c->e[i].id == me || c->e[i].v > floor_of(c->e[i].id))
            c->e[k++] = c->e[i];
    if (k != c->n)
        changed(c);
    c->n = k;
}

static int floors_may_rise(uint32_t live)
{
    return !__atomic_load_n(&floors_off, __ATOMIC_RELAXED) &&
           __atomic_load_n(&live_count, __ATOMIC_ACQUIRE) == live &&
           __atomic_load_n(&starts_pending, __ATOMIC_ACQUIRE) == 0;
}

void lardcc_floors_alone(void)
{
    uint32_t me = lardcc_me(), i;
    struct lardcc_vc *c = lardcc_clock(me);
    if (!lthread(me)->live || !floors_may_rise(1))
        return;
    for (i = 0; i < c->n; i++)
        if (c->e[i].id != me && !raise_floor(c->e[i].id, c->e[i].v))
            return;
    __atomic_add_fetch(&floor_epoch, 1, __ATOMIC_ACQ_REL);
    lardcc_prune_mine();
}

void lardcc_floors_barrier(struct lardcc_barrier *b, int slot, uint32_t n)
{
    uint32_t gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE), seen, id;
    const struct lardcc_dvc *acc = &b->acc[slot];
    int may = floors_may_rise(n);
    seen = __atomic_load_n(&b->floored, __ATOMIC_ACQUIRE);
    if (seen == gen || !__atomic_compare_exchange_n(&b->floored, &seen, gen, 0,
                                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return; /* another member departed first */
    if (!may)
        return;
    for (id = 0; id < acc->hi; id++)
        if (acc->v[id] != 0 && !raise_floor(id, acc->v[id]))
            return;
    __atomic_add_fetch(&floor_epoch, 1, __ATOMIC_ACQ_REL);
}

/* Install thread `id`'s clock in the detector: every entry. */
static void install(uint32_t id)
{
    struct lardcc_vc *c = lardcc_clock(id);
    uint32_t i;
    for (i = 0; i < c->n; i++)
        lard_write_vc(c->e[i].id, c->e[i].v);
}

/* A kernel thread adopted as a fresh language thread (liblard's identity,
 * which issues its Thread op and own entry 1, the detector's fresh clock):
 * the runtime's clock of it is the same. */
void lard__adopt_hook(uint32_t id)
{
    lardcc_vc_clear(lardcc_clock(id));
    lardcc_vc_set(lardcc_clock(id), id, 1);
    set_live(id, 1);
    mine = id;
}

uint32_t lardcc_me(void)
{
    return lard__current();
}

uint32_t lardcc_me_reclaim(void)
{
    uint32_t me = lardcc_me();
    if (me != mine && mine != LARD__NO_THREAD) {
        me = mine;
        lardcc_switch(me);
    }
    return me;
}

struct lardcc_vc *lardcc_my_clock(void)
{
    return lardcc_clock(lardcc_me());
}

uint64_t lardcc_own(uint32_t id)
{
    return lardcc_vc_get(lardcc_clock(id), id);
}

void lardcc_acquire_vc(const struct lardcc_vc *from)
{
    join(lardcc_my_clock(), from, 1);
}

void lardcc_lend_begin(const struct lardcc_vc *from, struct lardcc_vc *undo)
{
    const struct lardcc_vc *mine = lardcc_my_clock();
    uint32_t i = 0, j;
    changed(undo);
    undo->n = 0;
    for (j = 0; j < from->n; j++) {
        uint32_t id = from->e[j].id;
        uint64_t v = from->e[j].v;
        while (i < mine->n && mine->e[i].id < id)
            i++;
        if (v <= floor_of(id) || (i < mine->n && mine->e[i].id == id && v <= mine->e[i].v))
            continue;
        reserve(undo, undo->n + 1);
        undo->e[undo->n].id = id;
        undo->e[undo->n].v = lard_read_vc(id);
        undo->n++;
        lard_write_vc(id, v);
    }
}

void lardcc_lend_end(struct lardcc_vc *undo)
{
    uint32_t k;
    for (k = 0; k < undo->n; k++)
        lard_write_vc(undo->e[k].id, undo->e[k].v);
    undo->n = 0;
}

void lardcc_acquire_dvc(const struct lardcc_dvc *from)
{
    struct lardcc_vc sparse = {0};
    uint32_t id, n = 0;
    for (id = 0; id < from->hi; id++)
        n += from->v[id] > floor_of(id);
    if (n == 0)
        return;
    reserve(&sparse, n);
    for (id = 0; id < from->hi; id++)
        if (from->v[id] > floor_of(id)) {
            sparse.e[sparse.n].id = id;
            sparse.e[sparse.n].v = from->v[id];
            sparse.n++;
        }
    join(lardcc_my_clock(), &sparse, 1);
    lardcc_vc_free(&sparse);
}

/* thread ⊔= the clock of every language thread that ever had an id (an
 * ended one's last clock stays until its id is reused, and a reuser's
 * clock covers it).  The caller keeps every clock from changing meanwhile
 * (Go's finalizers: go/race.c). */
void lardcc_acquire_every_thread(void)
{
    uint32_t me = lardcc_me(), n = lard__nids(), id;
    struct lardcc_vc all = {0};
    for (id = 0; id < n; id++)
        if (id != me)
            lardcc_vc_join(&all, lardcc_clock(id));
    join(lardcc_my_clock(), &all, 1);
    lardcc_vc_free(&all);
}

void lardcc_tick(void)
{
    uint32_t me = lardcc_me();
    struct lardcc_vc *c = lardcc_clock(me);
    uint64_t v = lardcc_vc_get(c, me) + 1;
    put(c, me, v);
    lard_write_vc(me, v);
}

/* Ids are reused only when the previous holder's final clock happens
 * before the new holder's start (from[id] >= final): the two are then
 * ordered like one thread continuing.  The retired ids wait in a queue
 * (a ring, oldest first).  A few of the most recently retired are tried
 * first (a task's children it just waited for), then a few of the oldest
 * (after a barrier, the previous phase's units), and the oldest not yet
 * ordered go to the back, so that the current phase's units, unordered with
 * each other, never hide the ordered ones behind them; trying a fixed
 * number keeps allocation cheap when thousands are retired.  Binary mode
 * keeps the same queue (emu/src/intercept/hb.rs, IdPool). */
#define REUSE_SCAN 8

static uint32_t ids_lock;
static uint32_t headfree, nfree, capfree; /* a ring of capfree (a power of two) */
static struct lardcc_ent *freed;          /* id, final own entry */

#define FREED(i) freed[(headfree + (i)) & (capfree - 1)]

uint32_t lardcc_id_alloc(const struct lardcc_vc *from)
{
    uint32_t i, newest, id = LARD__NO_THREAD;
    struct lthread *t;
    lard__lock(&ids_lock);
    newest = nfree < REUSE_SCAN / 2 ? nfree : REUSE_SCAN / 2;
    for (i = nfree; i > nfree - newest; i--)
        if (lardcc_vc_get(from, FREED(i - 1).id) >= FREED(i - 1).v) {
            id = FREED(i - 1).id;
            for (; i < nfree; i++)
                FREED(i - 1) = FREED(i);
            nfree--;
            break;
        }
    for (i = 0; id == LARD__NO_THREAD && i < REUSE_SCAN / 2 && i + newest < nfree; i++) {
        struct lardcc_ent e = FREED(0);
        headfree = (headfree + 1) & (capfree - 1);
        if (lardcc_vc_get(from, e.id) >= e.v) {
            id = e.id;
            nfree--;
            break;
        }
        FREED(nfree - 1) = e;
    }
    lard__unlock(&ids_lock);
    if (id == LARD__NO_THREAD)
        id = lard__id_fresh();
    t = lthread(id);
    lardcc_vc_copy(&t->vc, from);
    lardcc_vc_set(&t->vc, id, lardcc_vc_get(from, id) + 1);
    t->fresh = 1;
    set_live(id, 1);
    return id;
}

void lardcc_id_drop_clock(uint32_t id)
{
    lardcc_vc_free(&lthread(id)->vc);
}

void lardcc_id_retire(uint32_t id, uint64_t final)
{
    set_live(id, 0);
    lard__lock(&ids_lock);
    if (nfree == capfree) {
        uint32_t i, cap = capfree ? capfree * 2 : 256;
        struct lardcc_ent *n = ents_alloc(cap);
        for (i = 0; i < nfree; i++)
            n[i] = FREED(i);
        ents_free(freed, capfree);
        freed = n;
        headfree = 0;
        capfree = 4u << class_of(cap);
    }
    FREED(nfree).id = id;
    FREED(nfree).v = final;
    nfree++;
    lard__unlock(&ids_lock);
}

void lardcc_switch(uint32_t id)
{
    struct lthread *t = lthread(id);
    lard__run(id);
    mine = id;
    if (t->fresh) {
        t->fresh = 0;
        install(id);
    }
}

uint64_t lardcc_switch_tick(uint32_t id)
{
    struct lthread *t = lthread(id);
    struct lardcc_vc *c = &t->vc;
    uint32_t i;
    uint64_t v;
    if (t->fresh) {
        lardcc_switch(id);
        lardcc_tick();
        return lardcc_own(id);
    }
    lard__run(id);
    mine = id;
    i = find(c, id);
    if (i < c->n && c->e[i].id == id) {
        v = c->e[i].v + 1;
        c->e[i].v = v;
    } else {
        v = lardcc_vc_get(c, id) + 1;
        put(c, id, v);
    }
    lard_write_vc(id, v);
    return v;
}

void lardcc_vc_free(struct lardcc_vc *c)
{
    lowered(c);
    ents_free(c->e, c->cap);
    c->e = NULL;
    c->n = c->cap = 0;
}
