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
 * worksharing loop (below, "worksharing units").
 * The happens-before table is in docs/lard-cc.md.
 */
#define _GNU_SOURCE
#include "rt.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_team_num(void);

#define FLAG_FINAL (1u << 1)
#define FLAG_IF (1u << 10)
#define FLAG_NOGROUP (1u << 11)

struct task;

struct team {
    struct lardcc_barrier bar;          /* all barriers of the team */
    struct lardcc_vc fork_vc;           /* master's clock at the fork */
    void (*fn)(void *);
    void *data;
    int final_slot;
    struct lardcc_sync ordered;         /* ordered regions, in iteration order */
    struct lardcc_sync copy;            /* single copyprivate broadcast */
    uint32_t cg;                        /* the master's contention group */
    int one;                            /* the program asked for a team of one */
    uint32_t started;                   /* members that took their start */
};

struct group {
    struct group *outer;
    struct task **tasks;
    size_t n, cap;
};

struct dep {
    const void *addr;
    struct task *last_out;
    struct task **ins;
    size_t n, cap;
};

struct task {
    uint32_t id;
    int implicit;
    int final;
    int slot;                           /* barrier phase it completes in */
    volatile int done;
    struct team *team;
    struct task *parent;
    struct group *group;                /* taskgroup it belongs to */
    struct group *cur_group;            /* innermost taskgroup it opened */
    struct task **children;             /* not yet waited for */
    size_t nchildren, capchildren;
    struct task **preds;
    size_t npreds;
    struct dep *deps;                   /* dependences among its children */
    size_t ndeps, capdeps;
    uintptr_t stack_top;                /* implicit task: its frames lie below */
    uintptr_t site;                     /* explicit: the creating call's return address */
    int in_taskloop;                    /* explicit: one of a taskloop's tasks */
    struct lardcc_vc start_vc;
    struct lardcc_vc fin;
    uint32_t cg;                        /* its creator's contention group */
    uint32_t refs;                      /* explicit: see task_unref */
    uint32_t owned;                     /* implicit: its own heap blocks (see owned_*) */
    int asked_num;                      /* implicit: the program asked its thread number */
    struct lardcc_vc units_fin;         /* implicit: its units' ends while it owns some */
};

static uint32_t task_lock;
static __thread struct team *cur_team;
static __thread struct task *cur_task;
static __thread struct task *root_task; /* allocated: keeps static TLS small */

/* Contention groups (OpenMP 5.2 §1.2.2: an initial thread and its
 * descendant threads).  The program's initial thread starts group 0; each
 * team of a `teams` construct is a new one, and everything that team's
 * threads run (nested parallel regions, their tasks) belongs to it.
 * `critical` and the lock routines bind to the contention group (§15.2,
 * §18.9): they order nothing between two teams, however the host fallback
 * runs them.  `atomic` binds to all threads of the device and keeps one
 * sync object. */
static __thread uint32_t cur_cg;
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
    uintptr_t g = cur_cg & 0xffff;
    if (cur_cg != 0 && g == 0)
        g = 1 + (cur_cg >> 16) % 0xffff;
    return (const void *)((uintptr_t)addr ^ ((uintptr_t)g << 48));
}

/* A libgomp entry point a wrapper calls runs on the program's behalf, not
 * as the program: its allocations (work shares, task records) are not the
 * program's own heap memory ("A thread's own heap memory" below).  A
 * program callback from libgomp (a region body, a task, a copy function)
 * is the program again: PROGRAM_CALLBACK. */
#define IN_LIBGOMP(stmt) LARDCC_RUNTIME(stmt)
#define IN_LIBGOMP_EXPR(e)                                                            \
    __extension__({                                                                   \
        __typeof__(e) r_;                                                             \
        lardcc_in_runtime++;                                                          \
        r_ = (e);                                                                     \
        lardcc_in_runtime--;                                                          \
        r_;                                                                           \
    })
#define PROGRAM_CALLBACK(stmt)                                                        \
    do {                                                                              \
        int outer_ = lardcc_in_runtime;                                               \
        lardcc_in_runtime = 0;                                                        \
        stmt;                                                                         \
        lardcc_in_runtime = outer_;                                                   \
    } while (0)

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

/* The worksharing unit this kernel thread runs (below), the static loop it
 * is in ("static loops") and whether it is between a static loop's begin
 * mark and its first iteration (gcc's own omp_get_thread_num call).  A
 * parallel region nested in a unit saves them and starts afresh. */
struct unit {
    uint32_t id;                        /* LARD__NO_THREAD: none runs */
    uint32_t creator;                   /* the task that got it */
};
static __thread struct unit work_unit = {LARD__NO_THREAD, 0};
struct static_loop {
    int split;                          /* chunks run as units */
    long chunk;                         /* iterations per unit */
    long ran;                           /* iterations the running unit ran */
    uintptr_t site;                     /* return address of the begin call */
    struct lardcc_dvc fin;              /* the units' ends */
};
static __thread struct static_loop static_loop;
static __thread int static_prologue;

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
    struct task *t = cur_task;
    if (lardcc_in_runtime || cur_team == NULL || t == NULL || !t->implicit)
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
    if (t != NULL && !static_prologue)
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
    if (cur_task == NULL) {
        if (root_task == NULL)
            root_task = xmalloc(sizeof *root_task);
        root_task->id = lardcc_me();
        root_task->implicit = 1;
        cur_task = root_task;
    }
    return cur_task;
}

static void acquire_vc(const struct lardcc_vc *vc)
{
    lardcc_acquire_vc(vc);
}

/* --------------------------------------------------------- unit names */

/* Natively nothing; under lard a note for race reports (rt.h).  Noinline
 * and using its argument, so that it stays a real function lard can
 * intercept. */
__attribute__((__noinline__, __used__)) void lardcc_note_unit(const struct lardcc_unit_note *n)
{
    __asm__ volatile("" : : "r"(n) : "memory");
}

/* The running language thread starts unit `kind` created or handed out by
 * the call that returns to `site`. */
static void note_unit(uint64_t kind, uintptr_t site, uint64_t a, uint64_t b)
{
    uint32_t id = lardcc_me();
    struct lardcc_unit_note n = {id, lardcc_own(id), kind, site, a, b};
    lardcc_note_unit(&n);
}

/* ------------------------------------------------------------- parallel */

static void team_body(void *arg)
{
    struct team *T = arg;
    struct team *prev_team = cur_team;
    struct task *prev_task = cur_task;
    struct task *implicit = xmalloc(sizeof *implicit);
    uint32_t prev_id = lardcc_me(), id = prev_id, n = (uint32_t)omp_get_num_threads(), stack;
    uint32_t prev_cg;
    int worker = __real_omp_get_thread_num() != 0, slot;
    struct unit saved_unit;
    struct static_loop saved_loop;
    int saved_prologue;
    uint64_t final;
    if (worker) {
        lardcc_clear_dead_stack();
        id = lardcc_id_alloc(&T->fork_vc);
        lardcc_switch(id);
        lardcc_id_idle(prev_id); /* the pool thread's own identity */
    }
    if (__atomic_add_fetch(&T->started, 1, __ATOMIC_ACQ_REL) == n)
        lardcc_starts_pending(-1); /* the fork clock is taken */
    implicit->id = id;
    implicit->implicit = 1;
    implicit->team = T;
    implicit->stack_top = (uintptr_t)__builtin_frame_address(0);
    implicit->cg = T->cg;
    cur_team = T;
    cur_task = implicit;
    prev_cg = cur_cg;
    cur_cg = T->cg;
    saved_unit = work_unit;
    saved_loop = static_loop;
    saved_prologue = static_prologue;
    work_unit.id = LARD__NO_THREAD;
    memset(&static_loop, 0, sizeof static_loop);
    static_prologue = 0;
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(T->fn(T->data));
    lardcc_stack_attach(stack);
    lardcc_dvc_free(&static_loop.fin);
    work_unit = saved_unit;
    static_loop = saved_loop;
    static_prologue = saved_prologue;
    final = lardcc_own(id);
    owned_forget(implicit);
    if (worker)
        lard_note_thread_exit();
    slot = lardcc_barrier_arrive(&T->bar, n);
    if (!worker)
        T->final_slot = slot;
    cur_team = prev_team;
    cur_task = prev_task;
    cur_cg = prev_cg;
    /* Children records stay allocated (tasks may still point at them). */
    if (worker) {
        lardcc_clear_dead_stack();
        lardcc_id_drop_clock(id); /* the barrier has it */
        lardcc_id_retire(id, final);
        lardcc_switch(prev_id);
    }
}

/* Fork: the master's clock before the region happens before every implicit
 * task; join: every member's clock at the region's end (and every task of
 * the last phase) happens before the master continues. */
static void team_begin(struct team *T, void (*fn)(void *), void *data, unsigned nt)
{
    memset(T, 0, sizeof *T);
    lardcc_vc_copy(&T->fork_vc, lardcc_my_clock());
    lardcc_starts_pending(1);
    lardcc_tick();
    T->fn = fn;
    T->data = data;
    T->cg = cur_cg;
    T->one = nt == 1; /* num_threads(1), or an `if` clause that is false */
}

static void team_end(struct team *T)
{
    lardcc_barrier_depart(&T->bar, T->final_slot);
    lardcc_vc_free(&T->fork_vc);
    lardcc_dvc_free(&T->bar.acc[0]);
    lardcc_dvc_free(&T->bar.acc[1]);
    lardcc_floors_alone();
}

void __real_GOMP_parallel(void (*)(void *), void *, unsigned, unsigned);
void __wrap_GOMP_parallel(void (*fn)(void *), void *data, unsigned nt, unsigned flags)
{
    struct team *T = xmalloc(sizeof *T);
    team_begin(T, fn, data, nt);
    IN_LIBGOMP(__real_GOMP_parallel(team_body, T, nt, flags));
    team_end(T);
    free(T);
}

#define PARALLEL_LOOP(name)                                                           \
    void __real_##name(void (*)(void *), void *, unsigned, long, long, long, long,     \
                       unsigned);                                                     \
    void __wrap_##name(void (*fn)(void *), void *data, unsigned nt, long s, long e,    \
                       long inc, long chunk, unsigned flags)                          \
    {                                                                                 \
        struct team *T = xmalloc(sizeof *T);                                          \
        team_begin(T, fn, data, nt);                                                      \
        IN_LIBGOMP(__real_##name(team_body, T, nt, s, e, inc, chunk, flags));         \
        team_end(T);                                                                  \
        free(T);                                                                      \
    }
#define PARALLEL_LOOP_RT(name)                                                        \
    void __real_##name(void (*)(void *), void *, unsigned, long, long, long,           \
                       unsigned);                                                     \
    void __wrap_##name(void (*fn)(void *), void *data, unsigned nt, long s, long e,    \
                       long inc, unsigned flags)                                      \
    {                                                                                 \
        struct team *T = xmalloc(sizeof *T);                                          \
        team_begin(T, fn, data, nt);                                                      \
        IN_LIBGOMP(__real_##name(team_body, T, nt, s, e, inc, flags));                \
        team_end(T);                                                                  \
        free(T);                                                                      \
    }
PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP_RT(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RT(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RT(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

void __real_GOMP_parallel_sections(void (*)(void *), void *, unsigned, unsigned, unsigned);
void __wrap_GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned nt, unsigned count,
                                   unsigned flags)
{
    struct team *T = xmalloc(sizeof *T);
    team_begin(T, fn, data, nt);
    IN_LIBGOMP(__real_GOMP_parallel_sections(team_body, T, nt, count, flags));
    team_end(T);
    free(T);
}

unsigned __real_GOMP_parallel_reductions(void (*)(void *), void *, unsigned, unsigned);
unsigned __wrap_GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned nt,
                                         unsigned flags)
{
    struct team *T = xmalloc(sizeof *T);
    unsigned r;
    team_begin(T, fn, data, nt);
    IN_LIBGOMP(r = __real_GOMP_parallel_reductions(team_body, T, nt, flags));
    team_end(T);
    free(T);
    return r;
}

/* ------------------------------------------------------------- barriers */

static void unit_end(void);

/* Explicit barriers and the implicit barriers at the end of worksharing
 * constructs without nowait: all-to-all among the team, and every task the
 * team created in the phase happens before every member continues. */
#define TEAM_BARRIER(ret_t, name, retexpr, before)                                    \
    ret_t __real_##name(void);                                                        \
    ret_t __wrap_##name(void)                                                         \
    {                                                                                 \
        struct team *T = cur_team;                                                    \
        int slot;                                                                     \
        ret_t r;                                                                      \
        before                                                                        \
        if (T == NULL)                                                                \
            { ret_t r0_; IN_LIBGOMP(r0_ = __real_##name()); return r0_; }             \
        slot = lardcc_barrier_arrive(&T->bar, (uint32_t)omp_get_num_threads());       \
        IN_LIBGOMP(r = __real_##name());                                              \
        if (!r) /* cancelled: members may not have arrived */                         \
            lardcc_floors_barrier(&T->bar, slot, (uint32_t)omp_get_num_threads());   \
        lardcc_barrier_depart(&T->bar, slot);                                         \
        lardcc_prune_mine();                                                          \
        return retexpr;                                                               \
    }
#define TEAM_BARRIER_VOID(name, before)                                               \
    void __real_##name(void);                                                         \
    void __wrap_##name(void)                                                          \
    {                                                                                 \
        struct team *T = cur_team;                                                    \
        int slot;                                                                     \
        before                                                                        \
        if (T == NULL) {                                                              \
            IN_LIBGOMP(__real_##name());                                              \
            return;                                                                   \
        }                                                                             \
        slot = lardcc_barrier_arrive(&T->bar, (uint32_t)omp_get_num_threads());       \
        IN_LIBGOMP(__real_##name());                                                  \
        lardcc_floors_barrier(&T->bar, slot, (uint32_t)omp_get_num_threads());       \
        lardcc_barrier_depart(&T->bar, slot);                                         \
        lardcc_prune_mine();                                                          \
    }
TEAM_BARRIER_VOID(GOMP_barrier, )
TEAM_BARRIER_VOID(GOMP_loop_end, unit_end();)
TEAM_BARRIER(bool, GOMP_barrier_cancel, r, )
TEAM_BARRIER(bool, GOMP_loop_end_cancel, r, unit_end();)

/* ------------------------------------------------- worksharing units */

/* A worksharing unit is what libgomp hands out to the members of a team: a
 * section of a sections construct (GOMP_sections_start/next return its
 * number) or a chunk [istart, iend) of a worksharing loop
 * (GOMP_loop_*_start/next return true and the bounds).  Each is a language
 * thread of its own, forked from the implicit task that got it when libgomp
 * hands it out, so two units are concurrent even when one thread runs both.
 * Its end (the thread's next call for work, or the end of the construct)
 * joins the team's current barrier phase, like a task completing in it: the
 * construct's barrier (or, with nowait, the next one) orders it before the
 * team.  The implicit task continues with its own clock: with nowait, what
 * it does after the construct is concurrent with the units it ran.
 *
 * The units an implicit task runs share its private, firstprivate,
 * lastprivate and reduction copies and a loop's private iteration variable
 * (in its frames, below the team body's): the histories of that stack are
 * cleared when a unit ends, so the units of one implicit task never race on
 * them and the combination after the last unit (reduction, lastprivate
 * copy-out) does not race with the units. */

/* Unit u starts on this kernel thread, forked from the running task. */
static void unit_start(struct unit *u)
{
    u->creator = lardcc_me();
    u->id = lardcc_id_alloc(lardcc_my_clock());
    lardcc_tick();
    lardcc_switch(u->id);
}

/* Unit u, if one runs, ends: its clock joins `join` (NULL: the team's
 * current barrier phase), the histories of the stack below `top` (0: none)
 * are cleared, and the thread continues as the task that got it. */
static void unit_stop(struct unit *u, struct lardcc_dvc *join, uintptr_t top)
{
    uint32_t id = u->id;
    uint64_t final;
    if (id == LARD__NO_THREAD)
        return;
    u->id = LARD__NO_THREAD;
    lard_note_thread_exit();
    if (join != NULL) {
        lardcc_dvc_join(join, lardcc_clock(id));
    } else {
        struct team *T = cur_team;
        lardcc_barrier_contribute(&T->bar,
                                  (int)(__atomic_load_n(&T->bar.gen, __ATOMIC_ACQUIRE) & 1),
                                  lardcc_clock(id));
    }
    if (top != 0)
        lardcc_clear_stack_below(top);
    final = lardcc_own(id);
    lardcc_id_drop_clock(id); /* `join` or the barrier phase has it */
    lardcc_id_retire(id, final);
    lardcc_switch(u->creator);
}

static void unit_end(void)
{
    struct task *me = current_task();
    /* While its task has thread-bound state, the next unit comes after. */
    if (work_unit.id != LARD__NO_THREAD && thread_bound(me))
        lardcc_vc_join(&me->units_fin, lardcc_clock(work_unit.id));
    unit_stop(&work_unit, NULL, me->stack_top);
}

/* libgomp handed a unit to this thread (inside a parallel region: a
 * construct outside any runs as its encountering task); true if it runs as
 * a language thread of its own. */
static bool unit_begin(void)
{
    struct task *me = current_task();
    if (cur_team == NULL || !me->implicit)
        return false;
    unit_start(&work_unit);
    if (thread_bound(me))
        lardcc_acquire_vc(&me->units_fin);
    return true;
}

static unsigned section_begin(unsigned n, void *site)
{
    if (n != 0 && unit_begin())
        note_unit(LARDCC_UNIT_SECTION, (uintptr_t)site, n, 0);
    return n;
}

/* A chunk [*is, *ie) of iterations of type `kind` (LARDCC_UNIT_CHUNK for
 * long, _ULL for unsigned long long), if libgomp handed one out. */
static bool chunk_begin(bool got, void *site, uint64_t kind, const void *is, const void *ie)
{
    if (got && unit_begin()) {
        uint64_t lo, hi;
        if (kind == LARDCC_UNIT_CHUNK) {
            lo = (uint64_t) * (const long *)is;
            hi = (uint64_t) * (const long *)ie;
        } else {
            lo = *(const unsigned long long *)is;
            hi = *(const unsigned long long *)ie;
        }
        note_unit(kind, (uintptr_t)site, lo, hi);
    }
    return got;
}

unsigned __real_GOMP_sections_start(unsigned);
unsigned __wrap_GOMP_sections_start(unsigned count)
{
    unit_end();
    return section_begin(IN_LIBGOMP_EXPR(__real_GOMP_sections_start(count)),
                         __builtin_return_address(0));
}

unsigned __real_GOMP_sections2_start(unsigned, uintptr_t *, void **);
unsigned __wrap_GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem)
{
    unit_end();
    return section_begin(IN_LIBGOMP_EXPR(__real_GOMP_sections2_start(count, reductions, mem)),
                         __builtin_return_address(0));
}

unsigned __real_GOMP_sections_next(void);
unsigned __wrap_GOMP_sections_next(void)
{
    unit_end();
    return section_begin(IN_LIBGOMP_EXPR(__real_GOMP_sections_next()), __builtin_return_address(0));
}

void __real_GOMP_sections_end_nowait(void);
void __wrap_GOMP_sections_end_nowait(void)
{
    unit_end();
    IN_LIBGOMP(__real_GOMP_sections_end_nowait());
}

TEAM_BARRIER_VOID(GOMP_sections_end, unit_end();)
TEAM_BARRIER(bool, GOMP_sections_end_cancel, r, unit_end();)

/* The unit kind of a chunk of T iterations (long or unsigned long long). */
#define CHUNK_KIND(T) _Generic((T)0, long: LARDCC_UNIT_CHUNK, default: LARDCC_UNIT_CHUNK_ULL)

/* Loops: every entry point that hands out a chunk (gcc inlines
 * schedule(static) and schedule(static, c) without ordered: no call, the
 * implicit task is the unit).  T is the iteration type (long, or unsigned
 * long long for the _ull entry points). */
#define LOOP_START(name, T)                                                           \
    bool __real_##name(long, long, long, long, T *, T *);                             \
    bool __wrap_##name(long s, long e, long inc, long chunk, T *is, T *ie)            \
    {                                                                                 \
        unit_end();                                                                   \
        return chunk_begin(IN_LIBGOMP_EXPR(__real_##name(s, e, inc, chunk, is, ie)),  \
                           __builtin_return_address(0), CHUNK_KIND(T), is, ie);       \
    }
#define LOOP_RUNTIME_START(name)                                                      \
    bool __real_##name(long, long, long, long *, long *);                             \
    bool __wrap_##name(long s, long e, long inc, long *is, long *ie)                  \
    {                                                                                 \
        unit_end();                                                                   \
        return chunk_begin(IN_LIBGOMP_EXPR(__real_##name(s, e, inc, is, ie)),              \
                           __builtin_return_address(0),                               \
                           LARDCC_UNIT_CHUNK, is, ie);                                \
    }
#define LOOP_NEXT(name, T)                                                            \
    bool __real_##name(T *, T *);                                                     \
    bool __wrap_##name(T *is, T *ie)                                                  \
    {                                                                                 \
        unit_end();                                                                   \
        return chunk_begin(IN_LIBGOMP_EXPR(__real_##name(is, ie)), __builtin_return_address(0), \
                           CHUNK_KIND(T), is, ie);                                    \
    }
#define ULL unsigned long long
#define LOOP_ULL_START(name)                                                          \
    bool __real_##name(bool, ULL, ULL, ULL, ULL, ULL *, ULL *);                       \
    bool __wrap_##name(bool up, ULL s, ULL e, ULL inc, ULL chunk, ULL *is, ULL *ie)   \
    {                                                                                 \
        unit_end();                                                                   \
        return chunk_begin(IN_LIBGOMP_EXPR(__real_##name(up, s, e, inc, chunk, is, ie)), \
                           __builtin_return_address(0), LARDCC_UNIT_CHUNK_ULL, is, ie); \
    }
#define LOOP_ULL_RUNTIME_START(name)                                                  \
    bool __real_##name(bool, ULL, ULL, ULL, ULL *, ULL *);                            \
    bool __wrap_##name(bool up, ULL s, ULL e, ULL inc, ULL *is, ULL *ie)              \
    {                                                                                 \
        unit_end();                                                                   \
        return chunk_begin(IN_LIBGOMP_EXPR(__real_##name(up, s, e, inc, is, ie)),     \
                           __builtin_return_address(0), LARDCC_UNIT_CHUNK_ULL, is, ie); \
    }

LOOP_START(GOMP_loop_static_start, long)
LOOP_START(GOMP_loop_dynamic_start, long)
LOOP_START(GOMP_loop_guided_start, long)
LOOP_START(GOMP_loop_nonmonotonic_dynamic_start, long)
LOOP_START(GOMP_loop_nonmonotonic_guided_start, long)
LOOP_START(GOMP_loop_ordered_static_start, long)
LOOP_START(GOMP_loop_ordered_dynamic_start, long)
LOOP_START(GOMP_loop_ordered_guided_start, long)
LOOP_RUNTIME_START(GOMP_loop_runtime_start)
LOOP_RUNTIME_START(GOMP_loop_nonmonotonic_runtime_start)
LOOP_RUNTIME_START(GOMP_loop_maybe_nonmonotonic_runtime_start)
LOOP_RUNTIME_START(GOMP_loop_ordered_runtime_start)
LOOP_NEXT(GOMP_loop_static_next, long)
LOOP_NEXT(GOMP_loop_dynamic_next, long)
LOOP_NEXT(GOMP_loop_guided_next, long)
LOOP_NEXT(GOMP_loop_runtime_next, long)
LOOP_NEXT(GOMP_loop_nonmonotonic_dynamic_next, long)
LOOP_NEXT(GOMP_loop_nonmonotonic_guided_next, long)
LOOP_NEXT(GOMP_loop_nonmonotonic_runtime_next, long)
LOOP_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next, long)
LOOP_NEXT(GOMP_loop_ordered_static_next, long)
LOOP_NEXT(GOMP_loop_ordered_dynamic_next, long)
LOOP_NEXT(GOMP_loop_ordered_guided_next, long)
LOOP_NEXT(GOMP_loop_ordered_runtime_next, long)
LOOP_ULL_START(GOMP_loop_ull_static_start)
LOOP_ULL_START(GOMP_loop_ull_dynamic_start)
LOOP_ULL_START(GOMP_loop_ull_guided_start)
LOOP_ULL_START(GOMP_loop_ull_nonmonotonic_dynamic_start)
LOOP_ULL_START(GOMP_loop_ull_nonmonotonic_guided_start)
LOOP_ULL_START(GOMP_loop_ull_ordered_static_start)
LOOP_ULL_START(GOMP_loop_ull_ordered_dynamic_start)
LOOP_ULL_START(GOMP_loop_ull_ordered_guided_start)
LOOP_ULL_RUNTIME_START(GOMP_loop_ull_runtime_start)
LOOP_ULL_RUNTIME_START(GOMP_loop_ull_nonmonotonic_runtime_start)
LOOP_ULL_RUNTIME_START(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
LOOP_ULL_RUNTIME_START(GOMP_loop_ull_ordered_runtime_start)
LOOP_NEXT(GOMP_loop_ull_static_next, ULL)
LOOP_NEXT(GOMP_loop_ull_dynamic_next, ULL)
LOOP_NEXT(GOMP_loop_ull_guided_next, ULL)
LOOP_NEXT(GOMP_loop_ull_runtime_next, ULL)
LOOP_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next, ULL)
LOOP_NEXT(GOMP_loop_ull_nonmonotonic_guided_next, ULL)
LOOP_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next, ULL)
LOOP_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next, ULL)
LOOP_NEXT(GOMP_loop_ull_ordered_static_next, ULL)
LOOP_NEXT(GOMP_loop_ull_ordered_dynamic_next, ULL)
LOOP_NEXT(GOMP_loop_ull_ordered_guided_next, ULL)
LOOP_NEXT(GOMP_loop_ull_ordered_runtime_next, ULL)

/* gcc 9+'s generic entries (loops with task reductions, lastprivate
 * conditional, ...): without istart the call only sets up the work share
 * (an inlined static schedule) and hands out nothing. */
bool __real_GOMP_loop_start(long, long, long, long, long, long *, long *, uintptr_t *, void **);
bool __wrap_GOMP_loop_start(long s, long e, long inc, long sched, long chunk, long *is, long *ie,
                            uintptr_t *reductions, void **mem)
{
    bool r;
    unit_end();
    IN_LIBGOMP(r = __real_GOMP_loop_start(s, e, inc, sched, chunk, is, ie, reductions, mem));
    return is != NULL ? chunk_begin(r, __builtin_return_address(0), LARDCC_UNIT_CHUNK, is, ie) : r;
}

bool __real_GOMP_loop_ordered_start(long, long, long, long, long, long *, long *, uintptr_t *,
                                    void **);
bool __wrap_GOMP_loop_ordered_start(long s, long e, long inc, long sched, long chunk, long *is,
                                    long *ie, uintptr_t *reductions, void **mem)
{
    bool r;
    unit_end();
    IN_LIBGOMP(r = __real_GOMP_loop_ordered_start(s, e, inc, sched, chunk, is, ie, reductions,
                                                  mem));
    return is != NULL ? chunk_begin(r, __builtin_return_address(0), LARDCC_UNIT_CHUNK, is, ie) : r;
}

bool __real_GOMP_loop_ull_start(bool, ULL, ULL, ULL, long, ULL, ULL *, ULL *, uintptr_t *,
                                void **);
bool __wrap_GOMP_loop_ull_start(bool up, ULL s, ULL e, ULL inc, long sched, ULL chunk, ULL *is,
                                ULL *ie, uintptr_t *reductions, void **mem)
{
    bool r;
    unit_end();
    IN_LIBGOMP(r = __real_GOMP_loop_ull_start(up, s, e, inc, sched, chunk, is, ie, reductions,
                                              mem));
    return is != NULL ? chunk_begin(r, __builtin_return_address(0), LARDCC_UNIT_CHUNK_ULL, is, ie)
                      : r;
}

bool __real_GOMP_loop_ull_ordered_start(bool, ULL, ULL, ULL, long, ULL, ULL *, ULL *,
                                        uintptr_t *, void **);
bool __wrap_GOMP_loop_ull_ordered_start(bool up, ULL s, ULL e, ULL inc, long sched, ULL chunk,
                                        ULL *is, ULL *ie, uintptr_t *reductions, void **mem)
{
    bool r;
    unit_end();
    IN_LIBGOMP(r = __real_GOMP_loop_ull_ordered_start(up, s, e, inc, sched, chunk, is, ie,
                                                      reductions, mem));
    return is != NULL ? chunk_begin(r, __builtin_return_address(0), LARDCC_UNIT_CHUNK_ULL, is, ie)
                      : r;
}

void __real_GOMP_loop_end_nowait(void);
void __wrap_GOMP_loop_end_nowait(void)
{
    unit_end();
    IN_LIBGOMP(__real_GOMP_loop_end_nowait());
}

/* ---------------------------------------------------------- static loops */

/* gcc expands schedule(static), schedule(static, c) and schedule(auto) loops
 * without `ordered` inline: each thread computes its share from
 * omp_get_thread_num() and omp_get_num_threads() and calls libgomp for
 * nothing else.  lard-cc's gcc plugin (omp_marks.cc) marks such a loop:
 * __lardcc_omp_static_begin before gcc's bounds computation,
 * __lardcc_omp_static_iter at the start of every iteration and
 * __lardcc_omp_static_end after the loop (before a reduction's combination,
 * the lastprivate copy-out and the barrier).
 *
 * Always: the thread-number call of gcc's bounds computation (between begin
 * and the first iteration) is not the program asking its thread number
 * (thread-bound state, above).
 *
 * With `split` (lard-cc --lard-omp-iterations): every chunk of the thread's
 * share (every iteration without a chunk size: under some team size each
 * runs on a thread of its own) is a worksharing unit, forked from the
 * implicit task like a chunk libgomp hands out — unless the program fixed
 * the team at one thread (num_threads(1), a false `if` clause), where no
 * other team size can run them.  A chunk of a static
 * schedule is `chunk` iterations except the loop's last, which is its
 * thread's last, so counting the iterations finds the boundaries.  The
 * units' ends join `static_loop.fin`, which the implicit task acquires after
 * the loop: what the thread does next — the next static loop of the same shape
 * after a nowait included (OpenMP 5.2 §11.5.3: iteration i runs on the
 * same thread in both) — comes after the iterations it ran. */

/* The running task or unit acquires the ends of a loop's units or lanes,
 * collected in `fin`, which starts empty again. */
static void acquire_ends(struct lardcc_dvc *fin)
{
    if (fin->hi != 0) {
        lardcc_acquire_dvc(fin);
        lardcc_dvc_clear(fin);
    }
}

static void static_unit_end(void)
{
    struct task *me;
    if (work_unit.id == LARD__NO_THREAD)
        return;
    me = current_task();
    if (thread_bound(me))
        lardcc_vc_join(&me->units_fin, lardcc_clock(work_unit.id));
    unit_stop(&work_unit, &static_loop.fin, me->stack_top);
}

void __lardcc_omp_static_begin(long chunk, long split);
void __lardcc_omp_static_begin(long chunk, long split)
{
    static_prologue = 1;
    static_loop.split = split != 0;
    static_loop.chunk = chunk > 0 ? chunk : 1;
    static_loop.ran = 0;
    static_loop.site = (uintptr_t)__builtin_return_address(0);
}

void __lardcc_omp_static_iter(long index);
void __lardcc_omp_static_iter(long index)
{
    struct static_loop *L = &static_loop;
    static_prologue = 0;
    if (!L->split || (L->ran != 0 && L->ran++ < L->chunk))
        return;
    static_unit_end();
    L->ran = 1;
    if (cur_team != NULL && !cur_team->one && unit_begin())
        note_unit(LARDCC_UNIT_ITERATIONS, L->site, (uint64_t)index, (uint64_t)L->chunk);
    else
        L->split = 0; /* no team: the loop runs as its encountering task */
}

void __lardcc_omp_static_end(void);
void __lardcc_omp_static_end(void)
{
    static_prologue = 0;
    if (!static_loop.split)
        return;
    static_loop.split = 0;
    static_unit_end();
    acquire_ends(&static_loop.fin);
    lardcc_floors_alone();
}

/* ------------------------------------------------------------ simd loops */

/* With --lard-omp-iterations the plugin marks simd loops too (not those
 * with an `ordered simd` region): every iteration is a SIMD lane, a
 * language thread of its own forked from the task or unit that runs the
 * loop, since OpenMP lets lanes run concurrently (5.2 §10.4).  With
 * safelen(l), two iterations l or more apart never run concurrently: lane j
 * acquires the end of lane j - l, kept in a ring of the last l ends (for l
 * above LANE_RING, of lane j - LANE_RING: more order, which can hide a race
 * but not invent one).  Every lane's end joins a clock the loop's task
 * acquires at the end mark.  A lane starts with its private copies and the
 * previous lane's dead frames without history.  Nothing that starts threads or
 * worksharing may be nested in a simd loop, so a thread runs one at a
 * time. */
#define LANE_RING 64
struct simd_loop {
    int split;                          /* lanes run as language threads */
    long safelen;                       /* 0: none */
    unsigned long lanes;                /* lanes started */
    uintptr_t site;                     /* return address of the begin call */
    struct unit lane;                   /* the running lane */
    struct lardcc_dvc fin;              /* the lanes' ends */
    struct lardcc_vc *ring;             /* LANE_RING lane ends, allocated once */
};
static __thread struct simd_loop simd_loop = {0, 0, 0, 0, {LARD__NO_THREAD, 0}, {NULL, 0, 0}, NULL};

static unsigned long ring_len(const struct simd_loop *L)
{
    return L->safelen < LANE_RING ? (unsigned long)L->safelen : LANE_RING;
}

static void simd_lane_end(void)
{
    struct simd_loop *L = &simd_loop;
    if (L->lane.id == LARD__NO_THREAD)
        return;
    if (L->safelen > 0)
        lardcc_vc_copy(&L->ring[(L->lanes - 1) % ring_len(L)], lardcc_clock(L->lane.id));
    unit_stop(&L->lane, &L->fin, 0);
}

void __lardcc_omp_simd_begin(long safelen, long split);
void __lardcc_omp_simd_begin(long safelen, long split)
{
    struct simd_loop *L = &simd_loop;
    L->split = split != 0 && !lardcc_in_runtime;
    L->safelen = safelen > 0 ? safelen : 0;
    L->lanes = 0;
    L->site = (uintptr_t)__builtin_return_address(0);
    if (L->split && L->safelen > 0 && L->ring == NULL)
        L->ring = xmalloc(LANE_RING * sizeof *L->ring);
}

void __lardcc_omp_simd_iter(long index);
void __lardcc_omp_simd_iter(long index)
{
    struct simd_loop *L = &simd_loop;
    unsigned long j;
    if (!L->split)
        return;
    simd_lane_end();
    lardcc_clear_dead_stack(); /* the previous lane's calls */
    j = L->lanes++;
    unit_start(&L->lane);
    if (L->safelen > 0 && j >= ring_len(L))
        lardcc_acquire_vc(&L->ring[j % ring_len(L)]);
    note_unit(LARDCC_UNIT_LANE, L->site, (uint64_t)index, (uint64_t)L->safelen);
}

/* A lane's private copy at [addr, addr + size) starts without history: gcc
 * gives every lane of a loop it did not vectorize the same storage (the
 * plugin passes each of the construct's variables that can be memory, and
 * the "omp simd array" slots, after the iteration mark). */
void __lardcc_omp_lane_private(void *addr, long size);
void __lardcc_omp_lane_private(void *addr, long size)
{
    if (simd_loop.split && size > 0)
        lard_clear_history(addr, (size_t)size);
}

void __lardcc_omp_simd_end(void);
void __lardcc_omp_simd_end(void)
{
    struct simd_loop *L = &simd_loop;
    if (!L->split)
        return;
    L->split = 0;
    simd_lane_end();
    acquire_ends(&L->fin);
    lardcc_floors_alone();
}

/* ---------------------------------------------------------------- teams */

/* Each team of a teams construct is a language thread of its own, forked
 * from the encountering task's clock at the construct, however the host
 * fallback runs the teams (one after another on the encountering thread):
 * two teams are concurrent.  The end of every team happens before the
 * encountering task continues after the construct.  A target region
 * (GOMP_target_ext's host fallback) runs as its encountering task.
 *
 * GOMP_teams_reg (teams on the host): libgomp calls the outlined body once
 * per team; each call runs as the team's initial task.  GOMP_teams4 (teams
 * in a target region, loop form): each true return starts the next team as
 * a unit of the encountering task, the next call ends it, a false return
 * ends the construct.  The teams of the loop form share the target
 * region's frames (their private variables): the histories below the
 * target region's entry are cleared when a team ends. */
struct teams {
    void (*fn)(void *);
    void *data;
    uintptr_t site;                     /* the GOMP_teams_reg call's return address */
    struct lardcc_vc fork_vc;           /* the encountering task's clock */
    struct lardcc_vc join;              /* every team's end */
};

static void teams_entry(void *arg)
{
    struct teams *G = arg;
    struct task *prev = cur_task;
    struct team *prev_team = cur_team;
    struct task *initial = xmalloc(sizeof *initial);
    uint32_t prev_id = lardcc_me(), id, stack, prev_cg = cur_cg;
    lardcc_clear_dead_stack();
    id = lardcc_id_alloc(&G->fork_vc);
    lardcc_switch(id);
    note_unit(LARDCC_UNIT_TEAM, G->site, (uint64_t)omp_get_team_num(), 0);
    initial->id = id;
    initial->implicit = 1;
    initial->stack_top = (uintptr_t)__builtin_frame_address(0);
    cur_task = initial;
    cur_team = NULL;
    cur_cg = initial->cg = cg_new();
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(G->fn(G->data));
    lardcc_stack_attach(stack);
    lardcc_clear_dead_stack();
    lardcc_vc_join(&G->join, lardcc_clock(id));
    lard_note_thread_exit();
    lardcc_id_retire(id, lardcc_own(id));
    cur_task = prev;
    cur_team = prev_team;
    cur_cg = prev_cg;
    /* The initial task's record stays allocated (tasks may point at it). */
    lardcc_switch(prev_id);
}

void __real_GOMP_teams_reg(void (*)(void *), void *, unsigned, unsigned, unsigned);
void __wrap_GOMP_teams_reg(void (*fn)(void *), void *data, unsigned num_teams,
                           unsigned thread_limit, unsigned flags)
{
    struct teams *G = xmalloc(sizeof *G);
    G->fn = fn;
    G->data = data;
    G->site = (uintptr_t)__builtin_return_address(0);
    lardcc_vc_copy(&G->fork_vc, lardcc_my_clock());
    lardcc_starts_pending(1);
    lardcc_tick();
    IN_LIBGOMP(__real_GOMP_teams_reg(teams_entry, G, num_teams, thread_limit, flags));
    lardcc_starts_pending(-1);
    lardcc_acquire_vc(&G->join);
    lardcc_vc_free(&G->fork_vc);
    lardcc_vc_free(&G->join);
    free(G);
}

/* Teams of a target region's teams construct without num_teams. */
#define LARDCC_TARGET_DEFAULT_TEAMS 2u

static __thread struct unit team_unit = {LARD__NO_THREAD, 0};
static __thread struct lardcc_dvc teams_join;
static __thread uintptr_t target_top;   /* the innermost target region's frames */
static __thread uint32_t teams_outer_cg; /* the encountering task's contention group */

bool __real_GOMP_teams4(unsigned, unsigned, unsigned, bool);
bool __wrap_GOMP_teams4(unsigned low, unsigned high, unsigned thread_limit, bool first)
{
    bool r;
    unit_stop(&team_unit, &teams_join, target_top);
    if (first) {
        teams_outer_cg = cur_cg;
        /* No num_teams clause: libgomp's host fallback would run one team,
         * hiding every race between teams.  The number is the
         * implementation's choice; lard's binary mode makes the same. */
        if (low == 0 && high == 0)
            low = high = LARDCC_TARGET_DEFAULT_TEAMS;
    }
    IN_LIBGOMP(r = __real_GOMP_teams4(low, high, thread_limit, first));
    if (r) {
        unit_start(&team_unit);
        note_unit(LARDCC_UNIT_TEAM, (uintptr_t)__builtin_return_address(0),
                  (uint64_t)omp_get_team_num(), 0);
        cur_cg = cg_new();
    } else {
        cur_cg = teams_outer_cg;
        lardcc_acquire_dvc(&teams_join);
        lardcc_dvc_free(&teams_join);
    }
    return r;
}

void __real_GOMP_target_ext(int, void (*)(void *), size_t, void **, size_t *, unsigned short *,
                            unsigned, void **, void **);
void __wrap_GOMP_target_ext(int device, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                            size_t *sizes, unsigned short *kinds, unsigned flags, void **depend,
                            void **args)
{
    uintptr_t outer = target_top;
    target_top = (uintptr_t)__builtin_frame_address(0);
    IN_LIBGOMP(__real_GOMP_target_ext(device, fn, mapnum, hostaddrs, sizes, kinds, flags, depend,
                                      args));
    target_top = outer;
}

/* ------------------------------------------- critical, atomic, ordered */

static char critical_key, atomic_key;

#define ACQUIRE_AFTER(name, params, args, key, sync)                                  \
    void __real_##name params;                                                        \
    void __wrap_##name params                                                         \
    {                                                                                 \
        IN_LIBGOMP(__real_##name args);                                               \
        lard_note_acquire(key, 0);                                                    \
        lardcc_acquire(lardcc_sync_of(sync));                                         \
    }
#define RELEASE_BEFORE(name, params, args, key, sync)                                 \
    void __real_##name params;                                                        \
    void __wrap_##name params                                                         \
    {                                                                                 \
        lard_note_release(key);                                                       \
        lardcc_release(lardcc_sync_of(sync));                                         \
        IN_LIBGOMP(__real_##name args);                                               \
    }
ACQUIRE_AFTER(GOMP_critical_start, (void), (), &critical_key, cg_key(&critical_key))
RELEASE_BEFORE(GOMP_critical_end, (void), (), &critical_key, cg_key(&critical_key))
ACQUIRE_AFTER(GOMP_critical_name_start, (void **p), (p), p, cg_key(p))
RELEASE_BEFORE(GOMP_critical_name_end, (void **p), (p), p, cg_key(p))
ACQUIRE_AFTER(GOMP_atomic_start, (void), (), &atomic_key, &atomic_key)
RELEASE_BEFORE(GOMP_atomic_end, (void), (), &atomic_key, &atomic_key)

/* Ordered regions run in iteration order: each one's end happens before the
 * next one's start. */
void __real_GOMP_ordered_start(void);
void __wrap_GOMP_ordered_start(void)
{
    IN_LIBGOMP(__real_GOMP_ordered_start());
    if (cur_team)
        lardcc_acquire(&cur_team->ordered);
}

void __real_GOMP_ordered_end(void);
void __wrap_GOMP_ordered_end(void)
{
    if (cur_team)
        lardcc_release(&cur_team->ordered);
    IN_LIBGOMP(__real_GOMP_ordered_end());
}

/* copyprivate: the single thread's values reach the others. */
void *__real_GOMP_single_copy_start(void);
void *__wrap_GOMP_single_copy_start(void)
{
    void *r = __real_GOMP_single_copy_start();
    if (r != NULL && cur_team)
        lardcc_acquire(&cur_team->copy);
    return r;
}

void __real_GOMP_single_copy_end(void *);
void __wrap_GOMP_single_copy_end(void *data)
{
    if (cur_team)
        lardcc_release_join(&cur_team->copy);
    IN_LIBGOMP(__real_GOMP_single_copy_end(data));
}

/* ---------------------------------------------------------------- locks */


#define LOCK_API(kind)                                                                \
    void __real_omp_init_##kind(void *);                                              \
    void __wrap_omp_init_##kind(void *l)                                              \
    {                                                                                 \
        lardcc_sync_reset(l);                                                         \
        __real_omp_init_##kind(l);                                                    \
    }                                                                                 \
    void __real_omp_set_##kind(void *);                                               \
    void __wrap_omp_set_##kind(void *l)                                               \
    {                                                                                 \
        __real_omp_set_##kind(l);                                                     \
        lard_note_acquire(l, 0);                                                      \
        lardcc_acquire(lardcc_sync_of(cg_key(l)));                                    \
    }                                                                                 \
    void __real_omp_unset_##kind(void *);                                             \
    void __wrap_omp_unset_##kind(void *l)                                             \
    {                                                                                 \
        lard_note_release(l);                                                         \
        lardcc_release(lardcc_sync_of(cg_key(l)));                                    \
        __real_omp_unset_##kind(l);                                                   \
    }                                                                                 \
    int __real_omp_test_##kind(void *);                                               \
    int __wrap_omp_test_##kind(void *l)                                               \
    {                                                                                 \
        int r = __real_omp_test_##kind(l);                                            \
        if (r) {                                                                      \
            lard_note_acquire(l, 0);                                                  \
            lardcc_acquire(lardcc_sync_of(cg_key(l)));                                \
        }                                                                             \
        return r;                                                                     \
    }
LOCK_API(lock)
LOCK_API(nest_lock)

/* ---------------------------------------------------------------- tasks */

/* Where a task's creation puts it: its parent's children (taskwait), its
 * taskgroup, and the barrier phase it completes in. */
static void task_link(struct task *t, struct task *parent)
{
    t->parent = parent;
    t->team = parent->team ? parent->team : cur_team;
    t->cg = cur_cg;
    if (parent->implicit)
        t->slot = t->team ? (int)(__atomic_load_n(&t->team->bar.gen, __ATOMIC_ACQUIRE) & 1) : 0;
    else
        t->slot = parent->slot;
    t->group = parent->cur_group ? parent->cur_group : parent->group;
    lard__lock(&task_lock);
    push(&parent->children, &parent->nchildren, &parent->capchildren, t);
    task_ref(t);
    if (t->group) {
        push(&t->group->tasks, &t->group->n, &t->group->cap, t);
        task_ref(t);
    }
    lard__unlock(&task_lock);
}

/* Creation: the creator's clock so far happens before the task. */
static void task_fork(struct task *t)
{
    lardcc_vc_copy(&t->start_vc, lardcc_my_clock());
    lardcc_starts_pending(1); /* until it (a taskloop: every task) started */
    lardcc_tick();
}

static struct dep *dep_slot(struct task *parent, const void *addr)
{
    size_t i;
    for (i = 0; i < parent->ndeps; i++)
        if (parent->deps[i].addr == addr)
            return &parent->deps[i];
    if (parent->ndeps == parent->capdeps) {
        size_t c = parent->capdeps ? parent->capdeps * 2 : 8;
        struct dep *nd = xmalloc(c * sizeof *nd);
        if (parent->ndeps)
            memcpy(nd, parent->deps, parent->ndeps * sizeof *nd);
        free(parent->deps);
        parent->deps = nd;
        parent->capdeps = c;
    }
    memset(&parent->deps[parent->ndeps], 0, sizeof parent->deps[0]);
    parent->deps[parent->ndeps].addr = addr;
    return &parent->deps[parent->ndeps++];
}

/* Sibling dependences (OpenMP 5.2 §15.9.5): an in-dependence follows the
 * last out/inout sibling on the same address; an out/inout (and
 * mutexinoutset, treated like inout) follows the last out/inout and every in
 * since.  The predecessors' final clocks are acquired when the task starts.
 * With t == NULL (taskwait depend) the predecessors are acquired at once. */
static void deps_apply(struct task *parent, void **depend, struct task *t)
{
    size_t ndep, nout, nmut = 0, nin = 0, first, i;
    struct task **preds = NULL;
    size_t npreds = 0, cap = 0;
    if (depend == NULL)
        return;
    if ((uintptr_t)depend[0] != 0) {
        ndep = (uintptr_t)depend[0];
        nout = (uintptr_t)depend[1];
        nin = ndep - nout;
        first = 2;
    } else {
        ndep = (uintptr_t)depend[1];
        nout = (uintptr_t)depend[2];
        nmut = (uintptr_t)depend[3];
        nin = (uintptr_t)depend[4];
        first = 5;
    }
    lard__lock(&task_lock);
    for (i = 0; i < ndep; i++) {
        const void *addr = depend[first + i];
        int out;
        struct dep *d;
        size_t k;
        if (i < nout + nmut)
            out = 1;
        else if (i < nout + nmut + nin)
            out = 0;
        else {
            /* depobj: {address, kind}; kind 1 = in. */
            void **o = (void **)depend[first + i];
            addr = o[0];
            out = (uintptr_t)o[1] != 1;
        }
        d = dep_slot(parent, addr);
        if (d->last_out) {
            push(&preds, &npreds, &cap, d->last_out);
            task_ref(d->last_out);
        }
        if (out) {
            for (k = 0; k < d->n; k++) {
                push(&preds, &npreds, &cap, d->ins[k]);
                task_ref(d->ins[k]);
            }
            if (t) {
                if (d->last_out)
                    task_unref(d->last_out);
                for (k = 0; k < d->n; k++)
                    task_unref(d->ins[k]);
                d->last_out = t;
                task_ref(t);
                d->n = 0;
            }
        } else if (t) {
            push(&d->ins, &d->n, &d->cap, t);
            task_ref(t);
        }
    }
    lard__unlock(&task_lock);
    if (t) {
        t->preds = preds;
        t->npreds = npreds;
    } else {
        for (i = 0; i < npreds; i++) {
            acquire_vc(&preds[i]->fin);
            task_unref(preds[i]);
        }
        free(preds);
    }
}

/* Takes t's list of children not yet waited for (n of them), leaving it
 * empty. */
static struct task **take_children(struct task *t, size_t *n)
{
    struct task **kids;
    lard__lock(&task_lock);
    kids = t->children;
    *n = t->nchildren;
    t->children = NULL;
    t->nchildren = t->capchildren = 0;
    lard__unlock(&task_lock);
    return kids;
}

/* Task t has ended: the references its own lists held go (its children
 * that it did not wait for complete by a barrier, which does not need the
 * list; its dependence table orders only tasks it created). */
static void task_drop_lists(struct task *t)
{
    size_t n, i, k;
    struct task **kids = take_children(t, &n);
    for (i = 0; i < n; i++)
        task_unref(kids[i]);
    free(kids);
    for (i = 0; i < t->ndeps; i++) {
        struct dep *d = &t->deps[i];
        if (d->last_out)
            task_unref(d->last_out);
        for (k = 0; k < d->n; k++)
            task_unref(d->ins[k]);
        free(d->ins);
    }
    free(t->deps);
    t->deps = NULL;
    t->ndeps = t->capdeps = 0;
}

/* Runs task t's body on this kernel thread under t's own identity. */
static void run_task(struct task *t, void (*fn)(void *), void *arg)
{
    struct task *prev = current_task();
    uint32_t prev_id = lardcc_me(), id, stack, prev_cg = cur_cg;
    size_t i;
    lardcc_clear_dead_stack();
    id = lardcc_id_alloc(&t->start_vc);
    if (!t->in_taskloop)
        lardcc_starts_pending(-1);
    t->id = id;
    lardcc_switch(id);
    note_unit(t->in_taskloop ? LARDCC_UNIT_TASKLOOP_TASK : LARDCC_UNIT_TASK, t->site,
              (uint64_t)(uintptr_t)fn, 0);
    lardcc_vc_free(&t->start_vc);
    for (i = 0; i < t->npreds; i++) {
        lardcc_acquire_vc(&t->preds[i]->fin);
        task_unref(t->preds[i]);
    }
    free(t->preds);
    t->preds = NULL;
    t->npreds = 0;
    cur_task = t;
    cur_cg = t->cg;
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(fn(arg));
    lardcc_stack_attach(stack);
    lardcc_clear_dead_stack();
    lardcc_vc_copy(&t->fin, lardcc_clock(id));
    lard_note_thread_exit();
    if (t->team)
        lardcc_barrier_contribute(&t->team->bar, t->slot, &t->fin);
    lardcc_id_drop_clock(id); /* t->fin has it */
    lardcc_id_retire(id, lardcc_vc_get(&t->fin, id));
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
    cur_task = prev;
    cur_cg = prev_cg;
    lardcc_switch(prev_id);
    task_drop_lists(t);
    task_unref(t);
}

/* The argument block lard-cc hands to libgomp: 16 bytes libgomp may fill
 * (taskloop bounds), the header, then the program's data at `off`. */
struct hdr {
    struct task *t;                     /* GOMP_task */
    struct loop *loop;                  /* GOMP_taskloop */
    size_t off;
    void *orig_data;
    void (*fn)(void *);
    void (*cpyfn)(void *, void *);
};
#define HDR_AT 16

struct loop {
    struct task proto;                  /* start clock, parent, slot, group */
    struct group group;                 /* every task of the taskloop */
    int undeferred;                     /* if(false), included, or bound to no team */
};

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static void task_entry(void *block)
{
    struct hdr *h = (struct hdr *)((char *)block + HDR_AT);
    run_task(h->t, h->fn, (char *)block + h->off);
}

static void task_copy(void *dst, void *src)
{
    struct hdr *h = (struct hdr *)((char *)src + HDR_AT);
    uint32_t stack;
    memcpy(dst, src, h->off);
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(h->cpyfn((char *)dst + h->off, h->orig_data));
    lardcc_stack_attach(stack);
}

void __real_GOMP_task(void (*)(void *), void *, void (*)(void *, void *), long, long, bool,
                      unsigned, void **, int, void *);
void __wrap_GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                      long arg_size, long arg_align, bool if_clause, unsigned flags,
                      void **depend, int priority, void *detach)
{
    struct task *parent = current_task();
    struct task *t = xmalloc(sizeof *t);
    size_t align = arg_align > 16 ? (size_t)arg_align : 16;
    size_t off = round_up(HDR_AT + sizeof(struct hdr), align);
    size_t size = off + (size_t)(arg_size > 0 ? arg_size : 0);
    char *raw = xmalloc(size + align), *block;
    struct hdr *h;
    int included;
    block = (char *)round_up((size_t)(uintptr_t)raw, align);
    h = (struct hdr *)(block + HDR_AT);
    h->t = t;
    h->off = off;
    h->orig_data = data;
    h->fn = fn;
    h->cpyfn = cpyfn;
    if (cpyfn == NULL && arg_size > 0)
        memcpy(block + off, data, (size_t)arg_size);
    t->final = (flags & FLAG_FINAL) != 0 || parent->final;
    t->site = (uintptr_t)__builtin_return_address(0);
    t->refs = 2; /* its run, and this call */
    task_fork(t);
    task_link(t, parent);
    /* Undeferred (if(false)), included (inside a final task), or bound to
     * no team: outside every parallel region, or in a team of a `teams`
     * construct, the binding team is one thread that no team size changes,
     * and that thread runs the task to its end before continuing. */
    included = !if_clause || parent->final || t->team == NULL;
    deps_apply(parent, depend, t);
    IN_LIBGOMP(__real_GOMP_task(task_entry, block, cpyfn ? task_copy : NULL, (long)size,
                                (long)align, if_clause, flags, depend, priority, detach));
    free(raw);
    /* Such a task completes before its creator continues. */
    if (included)
        acquire_vc(&t->fin);
    task_unref(t);
}

static void loop_entry(void *block)
{
    struct hdr *h = (struct hdr *)((char *)block + HDR_AT);
    struct loop *L = h->loop;
    struct task *t = xmalloc(sizeof *t);
    char *data = (char *)block + h->off;
    memcpy(data, block, 2 * sizeof(long)); /* the task's bounds */
    lardcc_vc_copy(&t->start_vc, &L->proto.start_vc);
    t->final = L->proto.final;
    t->parent = L->proto.parent;
    t->team = L->proto.team;
    t->cg = L->proto.cg;
    t->slot = L->proto.slot;
    t->group = L->proto.group;
    t->site = L->proto.site;
    t->in_taskloop = 1;
    /* Its run and its parent's list; the group's below.  The taskloop's
     * own list holds none: it is read only while the parent waits in
     * taskloop_done, and the parent's list keeps the records until then. */
    t->refs = 2;
    lard__lock(&task_lock);
    push(&t->parent->children, &t->parent->nchildren, &t->parent->capchildren, t);
    if (t->group) {
        push(&t->group->tasks, &t->group->n, &t->group->cap, t);
        t->refs++;
    }
    /* Undeferred, the taskloop's tasks run one after another: each after
     * the one before (run_task acquires it). */
    if (L->undeferred && L->group.n > 0) {
        t->preds = xmalloc(sizeof *t->preds);
        t->preds[0] = L->group.tasks[L->group.n - 1];
        t->npreds = 1;
        task_ref(t->preds[0]);
    }
    push(&L->group.tasks, &L->group.n, &L->group.cap, t);
    lard__unlock(&task_lock);
    run_task(t, h->fn, data);
}

static void taskloop_setup(struct loop *L, struct task *parent, unsigned flags)
{
    memset(L, 0, sizeof *L);
    task_fork(&L->proto);
    L->proto.final = (flags & FLAG_FINAL) != 0 || parent->final;
    L->proto.parent = parent;
    /* Its tasks join the parent's list when they start, which may be
     * after the parent's end (nogroup): the parent's record stays. */
    task_ref(parent);
    L->proto.team = parent->team ? parent->team : cur_team;
    L->proto.cg = cur_cg;
    if (parent->implicit)
        L->proto.slot =
            L->proto.team ? (int)(__atomic_load_n(&L->proto.team->bar.gen, __ATOMIC_ACQUIRE) & 1)
                          : 0;
    else
        L->proto.slot = parent->slot;
    L->proto.group = parent->cur_group ? parent->cur_group : parent->group;
    L->undeferred = !(flags & FLAG_IF) || parent->final || L->proto.team == NULL;
}

/* Without nogroup a taskloop is inside an implicit taskgroup: all its tasks
 * happen before the creator continues (likewise when they are undeferred:
 * if(false), included, or bound to no team). */
static void taskloop_done(struct loop *L, unsigned flags)
{
    size_t i;
    if (!(flags & FLAG_NOGROUP) || L->undeferred) {
        for (i = 0; i < L->group.n; i++)
            acquire_vc(&L->group.tasks[i]->fin);
        lardcc_starts_pending(-1); /* every task started */
    }
    /* A nogroup taskloop's tasks may start at any later time: its start
     * clock stays pending, and no floor is raised any more. */
}

#define TASKLOOP(name, T)                                                             \
    void __real_##name(void (*)(void *), void *, void (*)(void *, void *), long, long, \
                       unsigned, unsigned long, int, T, T, T);                        \
    void __wrap_##name(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),  \
                       long arg_size, long arg_align, unsigned flags,                 \
                       unsigned long num_tasks, int priority, T start, T end, T step)  \
    {                                                                                 \
        struct task *parent = current_task();                                         \
        struct loop *L = xmalloc(sizeof *L);                                          \
        size_t align = arg_align > 16 ? (size_t)arg_align : 16;                       \
        size_t off = round_up(HDR_AT + sizeof(struct hdr), align);                    \
        size_t size = off + (size_t)(arg_size > 0 ? arg_size : 0);                    \
        char *raw = xmalloc(size + align), *block;                                    \
        struct hdr *h;                                                                \
        block = (char *)round_up((size_t)(uintptr_t)raw, align);                      \
        h = (struct hdr *)(block + HDR_AT);                                           \
        h->loop = L;                                                                  \
        h->off = off;                                                                 \
        h->orig_data = data;                                                          \
        h->fn = fn;                                                                   \
        h->cpyfn = cpyfn;                                                             \
        if (arg_size > 0)                                                             \
            memcpy(block + off, data, (size_t)arg_size);                              \
        memcpy(block, data, 2 * sizeof(long));                                        \
        taskloop_setup(L, parent, flags);                                             \
        L->proto.site = (uintptr_t)__builtin_return_address(0);                       \
        IN_LIBGOMP(__real_##name(loop_entry, block, cpyfn ? task_copy : NULL, (long)size, \
                      (long)align, flags, num_tasks, priority, start, end, step));     \
        free(raw);                                                                    \
        taskloop_done(L, flags);                                                      \
    }
TASKLOOP(GOMP_taskloop, long)
TASKLOOP(GOMP_taskloop_ull, unsigned long long)

/* taskwait: every child task created so far happens before the waiter
 * continues. */
void __real_GOMP_taskwait(void);
void __wrap_GOMP_taskwait(void)
{
    struct task **kids;
    size_t n, i;
    IN_LIBGOMP(__real_GOMP_taskwait());
    kids = take_children(current_task(), &n);
    for (i = 0; i < n; i++) {
        acquire_vc(&kids[i]->fin);
        task_unref(kids[i]);
    }
    free(kids);
}

void __real_GOMP_taskwait_depend(void **);
void __wrap_GOMP_taskwait_depend(void **depend)
{
    IN_LIBGOMP(__real_GOMP_taskwait_depend(depend));
    deps_apply(current_task(), depend, NULL);
}

void __real_GOMP_taskgroup_start(void);
void __wrap_GOMP_taskgroup_start(void)
{
    struct task *me = current_task();
    struct group *g = xmalloc(sizeof *g);
    g->outer = me->cur_group;
    me->cur_group = g;
    IN_LIBGOMP(__real_GOMP_taskgroup_start());
}

/* taskgroup end: every task of the group (descendants included) happens
 * before the creator continues. */
void __real_GOMP_taskgroup_end(void);
void __wrap_GOMP_taskgroup_end(void)
{
    struct task *me = current_task();
    struct group *g = me->cur_group;
    size_t i;
    IN_LIBGOMP(__real_GOMP_taskgroup_end());
    if (g == NULL)
        return;
    for (i = 0; i < g->n; i++) {
        acquire_vc(&g->tasks[i]->fin);
        task_unref(g->tasks[i]);
    }
    me->cur_group = g->outer;
    free(g->tasks);
    free(g);
}
