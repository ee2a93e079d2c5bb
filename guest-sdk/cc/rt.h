/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime internals.  Everything here is system code in LARD's
 * sense: plain (untracked) accesses, unreported internal locks.  The program's
 * synchronization reaches the detector only through the runtime's sparse
 * clock operations (clock.c), which mirror every clock change with WriteVC.
 * The happens-before rules per library are in docs/lard-cc.md.
 */
#ifndef LARDCC_RT_H
#define LARDCC_RT_H

#include "../src/internal.h"

#include <stddef.h>
#include <stdint.h>

/* A sparse vector clock (clock.c): its non-zero entries sorted by id.
 * All-zero bytes are the empty clock.  The other fields let an acquire or
 * a release skip what cannot have changed (clock.c, "Unchanged clocks"). */
struct lardcc_ent {
    uint32_t id;
    uint64_t v;
};
struct lardcc_vc {
    uint32_t n, cap;
    struct lardcc_ent *e;
    uint64_t ver;     /* bumped by every change but its thread's own ticks */
    uint64_t base;    /* ver at the last change that may have lowered an entry */
    uint64_t src_ver; /* with src: thread src - 1's clock's ver it equals */
    uint32_t self;    /* id + 1 of the language thread whose clock this is */
    uint32_t src;     /* id + 1: equal to that thread's clock at src_ver
                       * but for its own entry, which may read lower */
};
uint64_t lardcc_vc_get(const struct lardcc_vc *c, uint32_t id);
void lardcc_vc_set(struct lardcc_vc *c, uint32_t id, uint64_t v);
void lardcc_vc_join(struct lardcc_vc *to, const struct lardcc_vc *from); /* to ⊔= from */
void lardcc_vc_copy(struct lardcc_vc *to, const struct lardcc_vc *from);
void lardcc_vc_clear(struct lardcc_vc *c);
void lardcc_vc_free(struct lardcc_vc *c); /* empty, storage returned */

/* A dense clock: entry `id` at v[id], for accumulators that many clocks are
 * joined into (a barrier phase collects every task's final clock): a join
 * costs what the joined clock names, not what the accumulator holds. */
struct lardcc_dvc {
    uint64_t *v;
    uint32_t cap, hi; /* entries [hi, cap) are 0 */
};
void lardcc_dvc_join(struct lardcc_dvc *to, const struct lardcc_vc *from); /* to ⊔= from */
void lardcc_dvc_clear(struct lardcc_dvc *c);
void lardcc_dvc_free(struct lardcc_dvc *c);

/* Language threads (clock.c): the clock of thread `id`; the current
 * thread's; its own entry.  Clock changes of the current thread go through
 * acquire_vc (me ⊔= from) and tick (me[me] += 1), mirrored with WriteVC. */
struct lardcc_vc *lardcc_clock(uint32_t id);
struct lardcc_vc *lardcc_my_clock(void);
uint64_t lardcc_own(uint32_t id);
void lardcc_acquire_vc(const struct lardcc_vc *from);
void lardcc_acquire_dvc(const struct lardcc_dvc *from); /* me ⊔= from */
void lardcc_tick(void);
/* thread ⊔= every language thread's clock; the caller keeps every clock
 * from changing meanwhile. */
void lardcc_acquire_every_thread(void);

/* The clock of a program synchronization object (mutex, rwlock, semaphore,
 * atomic location, OpenMP critical/lock/ordered, finished pthread ...),
 * found by address in a table in runtime memory. */
struct lardcc_sync {
    const void *addr;              /* the program object */
    uint32_t lock;                 /* internal futex lock */
    uint32_t used_rvc;
    void *ext;                     /* attached runtime data (a barrier) */
    struct lardcc_vc vc;           /* release clock (writers) */
    struct lardcc_vc rvc;          /* join of readers' releases (rwlock) */
    struct lardcc_vc avc;          /* epochs of the atomic accesses (atomic.c) */
    struct lardcc_sync *page_next; /* the table's: next object in the page */
};

/* The sync object of `addr`, created on first use (never NULL). */
struct lardcc_sync *lardcc_sync_of(const void *addr);
/* The sync object of `addr` if one exists; if none does, NULL with the
 * object table locked, so that no object for `addr` is made (and no
 * clock-carrying store to it starts) until lardcc_sync_table_release. */
struct lardcc_sync *lardcc_sync_find_held(const void *addr);
void lardcc_sync_table_release(void);
/* Forget the clocks of the object at `addr` (re-initialized). */
void lardcc_sync_reset(const void *addr);
/* Forget every object whose address is in [p, p+n) (freed memory): a
 * later object there starts with empty clocks. */
void lardcc_sync_forget_range(const void *p, size_t n);

/* Happens-before primitives (the one definition every wrapper uses):
 *   acquire:       thread := thread ⊔ s.vc
 *   acquire_all:   thread := thread ⊔ s.vc ⊔ s.rvc     (rwlock writer)
 *   release:       s.vc := thread; thread[me] += 1      (lock release, store)
 *   release_join:  s.vc := s.vc ⊔ thread; thread[me]++  (RMW, sem_post)
 *   release_read:  s.rvc := s.rvc ⊔ thread; thread[me]++ (rwlock reader) */
/* For the accesses in between, the detector's copy of the current
 * thread's clock is raised to thread ⊔ from (the runtime's copy is not):
 * lardcc_lend_end writes back the entries lardcc_lend_begin raised, which
 * it keeps in `undo` (storage reused from call to call). */
void lardcc_lend_begin(const struct lardcc_vc *from, struct lardcc_vc *undo);
void lardcc_lend_end(struct lardcc_vc *undo);
void lardcc_acquire(struct lardcc_sync *s);
void lardcc_acquire_all(struct lardcc_sync *s);
void lardcc_release(struct lardcc_sync *s);
void lardcc_release_join(struct lardcc_sync *s);
void lardcc_release_read(struct lardcc_sync *s);

/* An all-to-all barrier among n participants, reusable phase after phase.
 * arrive(): join my clock into the phase's accumulator, tick; returns the
 * phase slot.  depart(slot) after the real barrier: acquire the accumulator.
 * Two slots: the last arriver of phase g clears slot (g+1)&1, which nobody
 * can still be reading (they all arrived at g after acquiring g-1). */
struct lardcc_barrier {
    uint32_t lock;
    uint32_t gen;
    uint32_t count;
    uint32_t n;
    uint32_t floored; /* the last phase (gen) whose floors were decided */
    struct lardcc_dvc acc[2];
};
int lardcc_barrier_arrive(struct lardcc_barrier *b, uint32_t n);
void lardcc_barrier_depart(struct lardcc_barrier *b, int slot);
/* Join `vc` into slot `slot` (a task completing inside a barrier phase). */
void lardcc_barrier_contribute(struct lardcc_barrier *b, int slot, const struct lardcc_vc *vc);

/* Language-thread ids: a new id for a language thread whose start clock is
 * `from`.  An id whose previous holder ended with own entry f may be reused
 * when from[id] >= f: the old holder's whole final clock then happens before
 * the new one's start, so the two are ordered like one thread continuing. */
uint32_t lardcc_id_alloc(const struct lardcc_vc *from);
/* Language thread `id` has ended; `final` is the own entry of the last clock it published (to a joiner, barrier or task waiter). */
void lardcc_id_retire(uint32_t id, uint64_t final);
/* The runtime's copy of id's clock is no longer needed (its holder has
 * ended and runs nothing more before lardcc_id_retire): its storage goes. */
void lardcc_id_drop_clock(uint32_t id);

/* Clock floors (clock.c, docs/lard-cc-openmp.md "Clock floors").  A language
 * thread is live from lardcc_id_alloc (or its kernel thread's first use)
 * to lardcc_id_retire; lardcc_id_idle: `id` runs no program code until a
 * runtime switch forks it anew (a libgomp pool thread's own identity).
 * lardcc_starts_pending(+1/-1) brackets a clock that will start language
 * threads without the creator's current clock (a task's start clock, a
 * team's fork clock).  lardcc_floors_barrier, between a team barrier's
 * real wait and lardcc_barrier_depart, raises the floors the phase allows
 * (n: the team's size); lardcc_floors_alone raises the current thread's
 * whole clock when it is the only live one; lardcc_prune_mine drops the
 * entries of the current clock at or below their floors. */
void lardcc_id_idle(uint32_t id);
void lardcc_starts_pending(int delta);
void lardcc_floors_barrier(struct lardcc_barrier *b, int slot, uint32_t n);
void lardcc_floors_alone(void);
void lardcc_prune_mine(void);

/* The current language thread of this kernel thread (liblard's identity,
 * src/identity.c: one id space and one current thread for both runtimes). */
uint32_t lardcc_me(void);
/* The same, after switching back to the language thread the runtime last
 * ran here when liblard has switched this kernel thread to one of its own
 * (lard_spawn's child, a lard_lang_switch green thread), whose clock the
 * runtime does not keep. */
uint32_t lardcc_me_reclaim(void);
/* Switch this kernel thread to language thread `id` (unreported). */
void lardcc_switch(uint32_t id);
/* Switch to `id` and tick its own entry (a window slot's next unit,
 * omp/window.c); returns the new own entry. */
uint64_t lardcc_switch_tick(uint32_t id);

/* What an OpenMP unit or a goroutine is, for race reports (core.c): lard intercepts
 * lardcc_note_unit(n) and reads the seven words (emu/src/intercept/names.rs);
 * natively it does nothing.  `clock` is the language thread's own entry
 * when the unit starts: ids are reused, and a report tells their holders
 * apart by the clock of the racing access. */
struct lardcc_unit_note {
    uint64_t id, clock;
    uint64_t kind;                      /* LARDCC_UNIT_* */
    uint64_t site;                      /* return address of the program's call */
    uint64_t a, b;                      /* task: body; section, team: number; chunk: [a, b) */
    uint64_t stride;                    /* iterations, lane: a window slot's
                                         * later holders, one tick each, start
                                         * at a + stride, a + 2 stride, ... */
};
enum {
    LARDCC_UNIT_TASK = 1,
    LARDCC_UNIT_TASKLOOP_TASK = 2,
    LARDCC_UNIT_SECTION = 3,
    LARDCC_UNIT_CHUNK = 4,              /* long iterations */
    LARDCC_UNIT_CHUNK_ULL = 5,          /* unsigned long long iterations */
    LARDCC_UNIT_TEAM = 6,
    LARDCC_UNIT_ITERATIONS = 7,         /* static loop: first index a, b per unit */
    LARDCC_UNIT_LANE = 8,               /* simd lane: index a, safelen b (0: none) */
    LARDCC_UNIT_GOROUTINE = 9,          /* goroutine: site the go statement, a the creator's call stack */
};
void lardcc_note_unit(const struct lardcc_unit_note *n);

/* Stack memory of finished frames: the lowest stack pointer seen at
 * function entry since the last reset; on every change of language thread
 * on a kernel thread (task start/end, implicit task end, thread exit) the
 * histories of the stack below the current frame are cleared, since that
 * memory is reused by the next frames (Rule 3 for stacks). */
void lardcc_clear_dead_stack(void);
/* The same, up to `top` instead of the caller's frame: also the live frames
 * between the caller and `top` (an implicit task's private copies, which
 * the sections it runs share). */
void lardcc_clear_stack_below(uintptr_t top);

/* Call stacks (stack.c): the current stack of this kernel thread as an id
 * into lardcc_stack_nodes, the hash-consed tree the emulator reads when it
 * prints a report.  Ids fit in LARDCC_STACK_BITS bits (the emulator keeps
 * them beside a PC's 47 bits); 0 is the empty stack. */
#define LARDCC_STACK_BITS 17
#define LARDCC_STACK_SLOTS (1u << LARDCC_STACK_BITS)
#define LARDCC_STACK_UNKNOWN (LARDCC_STACK_SLOTS - 1) /* not recorded */
#define LARDCC_STACK_DEPTH 128
/* The pc of the node that stands for the calls between a thread's deepest
 * recorded frame and its current one (deeper than LARDCC_STACK_DEPTH): the
 * report prints it as a gap.  No return address is 0. */
#define LARDCC_STACK_GAP_PC 0
struct lardcc_stack_node {
    uint64_t pc;     /* return address into the caller */
    uint32_t parent; /* the caller's stack */
    uint32_t used;   /* published (release) after pc and parent */
};
extern struct lardcc_stack_node lardcc_stack_nodes[LARDCC_STACK_SLOTS];
extern __thread uint32_t lardcc_stack_id;
/* The program counter the next atomic operation's Tracked access is
 * attributed to (atomic.c). */
extern __thread void *lardcc_site_pc;

/* Nonzero while the runtime, or a libgomp entry point it called, runs on
 * this thread's behalf rather than the program (a program callback from
 * libgomp sets it back to 0): heap blocks allocated then are not the
 * program's own (gomp.c, "A thread's own heap memory"). */
extern __thread int lardcc_in_runtime;
#define LARDCC_RUNTIME(stmt)                                                          \
    do {                                                                              \
        lardcc_in_runtime++;                                                          \
        stmt;                                                                         \
        lardcc_in_runtime--;                                                          \
    } while (0)
/* A heap block the program allocated (alloc != 0) or freed; defined by the
 * OpenMP part of the runtime (gomp.c) when it is linked. */
void lardcc_omp_heap(void *p, int alloc) __attribute__((weak));
uint32_t lardcc_stack_intern(uint32_t parent, uint64_t pc);
/* __tsan_func_entry/exit: `sp` is the entry's frame address. */
void lardcc_stack_enter(uintptr_t sp, uint64_t caller_pc);
void lardcc_stack_exit(void);
/* Around a call from the runtime into program code (a thread, task or
 * once routine): the program's frames start from the empty stack, as in
 * ThreadSanitizer, so no runtime frame ever appears in a report. */
uint32_t lardcc_stack_detach(void);
void lardcc_stack_attach(uint32_t saved);

/* Memory reuse hooks. */
void lardcc_forget(void *p, size_t n);

#define LARDCC_UNUSED(x) (void)(x)

#endif
