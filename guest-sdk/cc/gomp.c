/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: OpenMP on libgomp (gcc's GOMP_* entry points and the
 * omp_*_lock API), linked with -Wl,--wrap (guest-sdk/cc/wrap-gomp.txt).
 *
 * Identities: a team's master keeps its language thread; each other member
 * runs its implicit task as a language thread forked from the master's clock
 * at the fork; every explicit task is a language thread of its own (forked
 * from its creator's clock at creation), whichever kernel thread runs it, so
 * sibling tasks are concurrent even when one thread runs both; so is every
 * section of a sections construct and every chunk libgomp hands out of a
 * worksharing loop ("worksharing units", omp/worksharing.c).
 * The happens-before table is in docs/lard-cc-openmp.md.
 *
 * This file holds the state and helpers every construct uses (contention
 * groups, worksharing state of a thread, thread-bound state, unit names)
 * and includes one file per construct from omp/ (parallel, barriers,
 * worksharing, simd, teams, synchronization, tasks), with their shared
 * types in omp/internal.h.  They form one translation unit, so the helpers
 * stay static and are inlined as before.
 */
#define _GNU_SOURCE
#include "rt.h"
#include "omp/internal.h"

static uint32_t task_lock;
static __thread struct omp_thread thr = {
    .work_unit = {LARD__NO_THREAD, 0},
    .simd_loop = {.lane = {LARD__NO_THREAD, 0}},
    .team_unit = {LARD__NO_THREAD, 0},
};

/* Contention groups (OpenMP 5.2 §1.2.2: an initial thread and its
 * descendant threads).  The program's initial thread starts group 0; each
 * team of a `teams` construct is a new one, and everything that team's
 * threads run (nested parallel regions, their tasks) belongs to it.
 * `critical` and the lock routines bind to the contention group (§15.2,
 * §18.9): they order nothing between two teams, however the host fallback
 * runs them.  `atomic` binds to all threads of the device and keeps one
 * sync object. */
static uint32_t cg_count;

static uint32_t cg_new(void)
{
    return __atomic_add_fetch(&cg_count, 1, __ATOMIC_RELAXED);
}

/* The sync object of `critical` or an OpenMP lock at `addr` in the running
 * contention group: the address itself in group 0, otherwise the address
 * with the group in bits 48..63, which no user-space address has. */
static const void *cg_key(const void *addr)
{
    uintptr_t g = thr.cur_cg & 0xffff;
    if (thr.cur_cg != 0 && g == 0)
        g = 1 + (thr.cur_cg >> 16) % 0xffff;
    return (const void *)((uintptr_t)addr ^ ((uintptr_t)g << 48));
}


static void *xmalloc(size_t n)
{
    void *p;
    LARDCC_RUNTIME(p = calloc(1, n));
    if (p == NULL)
        lard__fatal("lard-cc: out of memory (OpenMP bookkeeping)");
    return p;
}

static void push(struct task ***v, size_t *n, size_t *cap, struct task *t)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        struct task **nv = xmalloc(c * sizeof *nv);
        if (*n)
            memcpy(nv, *v, *n * sizeof *nv);
        free(*v);
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = t;
}

/* ------------------------------------------- worksharing state of a thread */

/* ------------------------------------------------- thread-bound state */

/* A worksharing unit could have run on another thread, except when what it
 * touches depends on the thread that runs it.  A heap block the program
 * allocates inside a parallel region, in an implicit task or one of its
 * worksharing units, is that implicit task's own until it is freed (a
 * per-thread buffer reached through a private pointer); and a program that
 * asks its thread number may index by it (partial[tid]).  While an
 * implicit task owns such blocks, or once it asked its thread number, its
 * worksharing units run one after another, as its thread runs them: each
 * unit's end joins the task's units_fin, and the next unit acquires it.
 * Under any team size or schedule each thread would use its own buffer or
 * element, so two units of one task never race on it; unordered, they
 * would.  Races between two units one thread ran are then missed for that
 * task.  Binary mode has the same rule
 * (emu/src/intercept/runtime/worksharing.rs).
 *
 * The blocks are found by address in an open-addressing table (linear
 * probing, deletion by backward shift), empty and never touched by a
 * program that allocates nothing in its parallel regions. */
/* The implicit task running on this thread (outside the runtime and
 * libgomp), if any. */
static struct task *own_task(void)
{
    struct task *t = thr.cur_task;
    if (lardcc_in_runtime || thr.cur_team == NULL || t == NULL || !t->implicit)
        return NULL;
    return t;
}

static int thread_bound(struct task *t)
{
    return __atomic_load_n(&t->owned, __ATOMIC_RELAXED) != 0 || t->asked_num;
}

int __real_omp_get_thread_num(void);
int __wrap_omp_get_thread_num(void)
{
    struct task *t = own_task();
    if (t != NULL && !thr.static_prologue)
        t->asked_num = 1;
    return __real_omp_get_thread_num();
}

struct owned_block {
    uintptr_t addr;                     /* 0: empty slot */
    struct task *owner;
};
static uint32_t owned_lock;
static struct owned_block *owned_tab;
static size_t owned_cap;                /* a power of two, or 0 */
static size_t owned_n;                  /* live entries (read without the lock) */

static size_t owned_slot(uintptr_t a)
{
    return (size_t)(((uint64_t)a >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (owned_cap - 1);
}

static void owned_put(uintptr_t a, struct task *t)
{
    size_t i = owned_slot(a);
    while (owned_tab[i].addr != 0 && owned_tab[i].addr != a)
        i = (i + 1) & (owned_cap - 1);
    if (owned_tab[i].addr == 0)
        owned_n++;
    owned_tab[i].addr = a;
    owned_tab[i].owner = t;
}

static void owned_grow(void)
{
    struct owned_block *old = owned_tab;
    size_t n = owned_cap, i;
    owned_cap = n ? n * 2 : 64;
    owned_tab = xmalloc(owned_cap * sizeof *owned_tab);
    owned_n = 0;
    for (i = 0; i < n; i++)
        if (old[i].addr != 0)
            owned_put(old[i].addr, old[i].owner);
    LARDCC_RUNTIME(free(old));
}

/* Removes a's entry; its owner, or NULL. */
static struct task *owned_take(uintptr_t a)
{
    size_t i = owned_slot(a), j;
    struct task *t;
    while (owned_tab[i].addr != a) {
        if (owned_tab[i].addr == 0)
            return NULL;
        i = (i + 1) & (owned_cap - 1);
    }
    t = owned_tab[i].owner;
    owned_tab[i].addr = 0;
    owned_n--;
    /* Move back the entries of the run after i that probed past it. */
    for (j = (i + 1) & (owned_cap - 1); owned_tab[j].addr != 0; j = (j + 1) & (owned_cap - 1)) {
        size_t home = owned_slot(owned_tab[j].addr);
        if (((j - home) & (owned_cap - 1)) >= ((j - i) & (owned_cap - 1))) {
            owned_tab[i] = owned_tab[j];
            owned_tab[j].addr = 0;
            i = j;
        }
    }
    return t;
}

void lardcc_omp_heap(void *p, int alloc)
{
    struct task *t;
    if (alloc) {
        t = own_task();
        if (t == NULL)
            return;
        lard__lock(&owned_lock);
        if (2 * (owned_n + 1) > owned_cap)
            owned_grow();
        owned_put((uintptr_t)p, t);
        lard__unlock(&owned_lock);
        __atomic_add_fetch(&t->owned, 1, __ATOMIC_RELAXED);
        return;
    }
    if (__atomic_load_n(&owned_n, __ATOMIC_RELAXED) == 0)
        return;
    lard__lock(&owned_lock);
    t = owned_cap ? owned_take((uintptr_t)p) : NULL;
    lard__unlock(&owned_lock);
    if (t != NULL)
        __atomic_sub_fetch(&t->owned, 1, __ATOMIC_RELAXED);
}

/* Implicit task t ends: blocks it still owns are no one's. */
static void owned_forget(struct task *t)
{
    size_t i;
    if (__atomic_load_n(&t->owned, __ATOMIC_RELAXED) != 0) {
        lard__lock(&owned_lock);
        for (i = 0; i < owned_cap; i++)
            while (owned_tab[i].addr != 0 && owned_tab[i].owner == t)
                owned_take(owned_tab[i].addr);
        lard__unlock(&owned_lock);
        t->owned = 0;
    }
    lardcc_vc_free(&t->units_fin);
}

/* An explicit task's record lives while anything may still read it: its
 * run (until its body's end), its creator (until the creating call
 * returns), its parent's list of children (until the parent's taskwait or
 * end), its taskgroup (until the group ends), its parent's dependence
 * table (until another task replaces it there, or the parent ends) and the
 * predecessor lists of tasks that depend on it (until they start).  Each
 * holds one reference; the last one frees the record and its final clock,
 * so a recursive task program keeps the records of the tasks that can
 * still be waited for, not of every task that ran.  Implicit tasks are not
 * counted (their records stay). */
static void task_ref(struct task *t)
{
    if (!t->implicit)
        __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
}

static void task_unref(struct task *t)
{
    if (t->implicit || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    lardcc_vc_free(&t->start_vc);
    lardcc_vc_free(&t->fin);
    free(t->children);
    free(t->preds);
    free(t);
}

static struct task *current_task(void)
{
    if (thr.cur_task == NULL) {
        if (thr.root_task == NULL)
            thr.root_task = xmalloc(sizeof *thr.root_task);
        thr.root_task->id = lardcc_me();
        thr.root_task->implicit = 1;
        thr.cur_task = thr.root_task;
    }
    return thr.cur_task;
}

static void acquire_vc(const struct lardcc_vc *vc)
{
    lardcc_acquire_vc(vc);
}

/* --------------------------------------------------------- unit names */

/* The running language thread starts unit `kind` created or handed out by
 * the call that returns to `site`. */
static void note_unit(uint64_t kind, uintptr_t site, uint64_t a, uint64_t b)
{
    uint32_t id = lardcc_me();
    struct lardcc_unit_note n = {id, lardcc_own(id), kind, site, a, b, 0};
    lardcc_note_unit(&n);
}

/* The constructs, in this order (one translation unit: the helpers above
 * stay static and inline as before). */
static void doacross_forget(struct team *T);

#include "omp/parallel.c"
#include "omp/barrier.c"
#include "omp/window.c"
#include "omp/worksharing.c"
#include "omp/doacross.c"
#include "omp/simd.c"
#include "omp/teams.c"
#include "omp/sync.c"
#include "omp/tasks.c"
