/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime, OpenMP: the types and macros its parts share (gomp.c and
 * the files of this folder, which gomp.c includes: one translation unit).
 */
#ifndef LARDCC_OMP_INTERNAL_H
#define LARDCC_OMP_INTERNAL_H

#include "../rt.h"

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

struct doacross;

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
    uint32_t doacross_lock;
    struct doacross *doacross;          /* its doacross loops (omp/doacross.c) */
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


/* The worksharing unit this kernel thread runs (below), the static loop it
 * is in ("static loops") and whether it is between a static loop's begin
 * mark and its first iteration (gcc's own omp_get_thread_num call).  A
 * parallel region nested in a unit saves them and starts afresh. */
struct unit {
    uint32_t id;                        /* LARD__NO_THREAD: none runs */
    uint32_t creator;                   /* the task that got it */
};
/* Units of one loop on one task run in a window of language threads
 * (omp/window.c). */
struct window_slot {
    uint32_t id;                        /* LARD__NO_THREAD: not used yet */
    int renote;                         /* its next unit needs a note */
    uint64_t start;                     /* own entry when its unit started */
    long index;                         /* that unit's first index */
};
struct window {
    long w;                             /* slots (0: no window) */
    unsigned long units;                /* units started in this loop */
    struct window_slot *slot;           /* WINDOW_MAX, allocated once */
    long running;                       /* slot of the running unit, or -1 */
    uint32_t creator;                   /* the task or unit they fork from */
    long first, step;                   /* unit 0's first index; index step per unit */
    uint64_t kind;                      /* LARDCC_UNIT_ITERATIONS or _LANE */
    uintptr_t site;                     /* return address of the begin call */
    long count;                         /* iterations per unit, or safelen */
    int chain;                          /* unit k comes after every unit up
                                         * to k - w (safelen) */
    struct lardcc_vc before;            /* chain: the ends of those units */
};

/* The units a thread ran in a static loop with nowait, kept for the next
 * static loop of the same shape in the same team before a barrier: unit k
 * of that loop comes after ids[k mod w] (a window of w) or ids[k] (w = 0,
 * every unit its own). */
struct kept_units {
    uint32_t *ids;                      /* the units' language threads */
    unsigned long n, cap;
    long w;
    long iterations, chunk;             /* the loop's shape */
    struct team *team;                  /* NULL: none kept */
};
static void kept_add(struct kept_units *k, uint32_t id); /* omp/worksharing.c */
static void static_loops_settle(void);

struct static_loop {
    int split;                          /* chunks run as units */
    long chunk;                         /* iterations per unit */
    long iterations;                    /* logical iterations, -1: unknown */
    int nowait;                         /* no barrier at its end */
    long ran;                           /* iterations the running unit ran */
    unsigned long units;                /* units started (every unit its own) */
    uintptr_t site;                     /* return address of the begin call */
    struct lardcc_dvc fin;              /* the units' ends, until a barrier */
    struct window win;                  /* w > 0: the units run in a window */
    struct kept_units kept;             /* the previous loop's, same shape */
    int after_kept;                     /* this loop's units follow `kept` */
    struct kept_units keeping;          /* this loop's, with nowait */
};

/* A simd loop (omp/simd.c). */
struct simd_loop {
    int split;                          /* lanes run as language threads */
    long safelen;                       /* 0: none */
    uintptr_t site;                     /* return address of the begin call */
    struct unit lane;                   /* the running lane (every lane its own) */
    struct lardcc_dvc fin;              /* the lanes' ends */
    struct window win;                  /* w > 0: the lanes run in a window */
};

/* What one kernel thread keeps of the OpenMP constructs it runs: the
 * runtime's only thread-local state, `thr` (gomp.c). */
struct omp_thread {
    struct team *cur_team;              /* the team it runs in */
    struct task *cur_task;              /* the task it runs */
    struct task *root_task;             /* allocated: keeps static TLS small */
    uint32_t cur_cg;                    /* its contention group (gomp.c) */
    struct unit work_unit;              /* the worksharing unit it runs */
    struct static_loop static_loop;     /* the static loop it is in */
    struct doacross *doacross;          /* the doacross loop it runs */
    uint32_t doacross_seq;              /* doacross loops it started in the team */
    struct window_slot *spare_slots;    /* a nested region's window slots */
    struct lardcc_dvc spare_fin;        /* and its units' ends, cleared */
    int static_prologue;                /* between a static loop's begin
                                         * mark and its first iteration */
    struct simd_loop simd_loop;         /* the simd loop it runs */
    struct unit team_unit;              /* GOMP_teams4: the running team */
    struct lardcc_dvc teams_join;       /* GOMP_teams4: every team's end */
    uintptr_t target_top;               /* the innermost target region's frames */
    uint32_t teams_outer_cg;            /* the encountering task's contention group */
};

#endif
