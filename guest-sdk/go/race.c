/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard's Go race runtime: Go's race-detector interface (runtime/race.go,
 * race_amd64.s; the functions ThreadSanitizer's Go runtime defines) in
 * LARDx86.  `lard go build` links it where Go links its race runtime
 * (runtime/race/race_linux_amd64.syso), together with the lard-cc runtime
 * it is built on, so a `go build -race` program reports every
 * language-level event to a LARD CPU (docs/go.md):
 *
 *   goroutine            a language thread (Thread when one starts running
 *                        on a kernel thread: goroutines multiplexed on one
 *                        kernel thread are distinct)
 *   __tsan_go_start      fork: the child's clock is the parent's, which ticks
 *   __tsan_acquire       thread ⊔= clock(addr)
 *   __tsan_release       clock(addr) := thread, tick
 *   __tsan_release_merge clock(addr) ⊔= thread, tick
 *   __tsan_release_acquire  both, as one step
 *   sync/atomic          the lard-cc atomics, sequentially consistent
 *   __tsan_read/write    Tracked accesses at the Go pc (access.S)
 *   __tsan_malloc/free   ClearHistory of the block; a freed block's clocks go
 *
 * Every happens-before rule is lard-cc's (cc/core.c, cc/atomic.c): this
 * file only maps Go's calls onto them.  It is system code: nothing here is
 * Tracked but the program's accesses.  Go calls it on the g0 stack
 * (racecall), with the goroutine's context `thr` first.
 */
#define _GNU_SOURCE
#include "../cc/rt.h"

#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

/* A goroutine's context (Go's g.racectx). */
struct lardgo_thr {
    uint32_t id;          /* its language thread */
    uint32_t stack;       /* call-stack id (cc/stack.c) */
    uint32_t depth;       /* frames entered, the recorded ones first */
    int32_t ignore_sync;  /* inside __tsan_go_ignore_sync_begin/end */
    int running;          /* it had an event */
    int accessed;         /* an access since own entry `seen_own` */
    uint64_t seen_own;    /* own entry after its last synchronization */
    struct lardgo_thr *next_free;
};

void __lardgo_read(const void *addr, const void *pc, uint32_t stack);
void __lardgo_write(const void *addr, const void *pc, uint32_t stack);
void __lardgo_read_range(const void *addr, uintptr_t n, const void *pc, uint32_t stack);
void __lardgo_write_range(const void *addr, uintptr_t n, const void *pc, uint32_t stack);

/* The lard-cc atomics (cc/atomic.c), seq_cst. */
#define MO_SEQ_CST 5
#define ATOMIC_DECLS(N, T)                                                              \
    T __lardcc_atomic##N##_load(const volatile T *a, int mo);                           \
    void __lardcc_atomic##N##_store(volatile T *a, T v, int mo);                        \
    T __lardcc_atomic##N##_exchange(volatile T *a, T v, int mo);                        \
    T __lardcc_atomic##N##_fetch_add(volatile T *a, T v, int mo);                       \
    T __lardcc_atomic##N##_fetch_and(volatile T *a, T v, int mo);                       \
    T __lardcc_atomic##N##_fetch_or(volatile T *a, T v, int mo);                        \
    int __lardcc_atomic##N##_compare_exchange_strong(volatile T *a, T *cmp, T xchg,     \
                                                     int mo, int fmo);
ATOMIC_DECLS(32, unsigned int)
ATOMIC_DECLS(64, unsigned long long)

/* ---- goroutine contexts: mmap'd chunks and a free list ---- */

#define THR_CHUNK 4096
static uint32_t thr_lock;
static struct lardgo_thr *thr_free;

static struct lardgo_thr *thr_new(uint32_t id)
{
    struct lardgo_thr *t;
    lard__lock(&thr_lock);
    if (thr_free == NULL) {
        size_t i;
        struct lardgo_thr *c = mmap(NULL, sizeof *c * THR_CHUNK, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (c == MAP_FAILED)
            lard__fatal("lard go: out of memory for goroutines");
        for (i = 0; i < THR_CHUNK; i++) {
            c[i].next_free = thr_free;
            thr_free = &c[i];
        }
    }
    t = thr_free;
    thr_free = t->next_free;
    lard__unlock(&thr_lock);
    memset(t, 0, sizeof *t);
    t->id = id;
    return t;
}

static void thr_drop(struct lardgo_thr *t)
{
    lard__lock(&thr_lock);
    t->next_free = thr_free;
    thr_free = t;
    lard__unlock(&thr_lock);
}

/* The kernel thread runs goroutine `t` from here on (a Thread op when it
 * ran another, and at the goroutine's first event: an ended goroutine's id
 * may be the new one's, and its clock must be installed). */
static inline void run(struct lardgo_thr *t)
{
    if (lard__cur != t->id || !t->running) {
        lardcc_switch(t->id);
        t->running = 1;
    }
}

/* ---- clock changes and the finalizer's view of every clock ----
 *
 * Every call that changes a goroutine's clock runs inside sync_begin/end
 * (shared); the finalizer goroutine, which acquires every goroutine's clock
 * (as ThreadSanitizer's AcquireGlobal), waits until none does and keeps
 * them out meanwhile. */

static uint32_t sync_active, sync_excluded, sync_exclusive_lock;

static void sync_begin(void)
{
    for (;;) {
        while (__atomic_load_n(&sync_excluded, __ATOMIC_ACQUIRE))
            sched_yield();
        __atomic_add_fetch(&sync_active, 1, __ATOMIC_ACQ_REL);
        if (!__atomic_load_n(&sync_excluded, __ATOMIC_ACQUIRE))
            return;
        __atomic_sub_fetch(&sync_active, 1, __ATOMIC_ACQ_REL);
    }
}

/* The goroutine `thr` (NULL: none) synchronized.  A tick moved its own
 * entry past every epoch it accessed or released in so far (releases tick
 * after they publish), so its accesses from here on are in the new one. */
static void sync_end(struct lardgo_thr *thr)
{
    __atomic_sub_fetch(&sync_active, 1, __ATOMIC_ACQ_REL);
    if (thr != NULL) {
        uint64_t own = lardcc_own(thr->id);
        if (own != thr->seen_own) {
            thr->seen_own = own;
            thr->accessed = 0;
        }
    }
}

static void acquire_every_goroutine(void)
{
    lard__lock(&sync_exclusive_lock);
    __atomic_store_n(&sync_excluded, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&sync_active, __ATOMIC_ACQUIRE) != 0)
        sched_yield();
    lardcc_acquire_every_thread();
    __atomic_store_n(&sync_excluded, 0, __ATOMIC_RELEASE);
    lard__unlock(&sync_exclusive_lock);
}

/* ---- start-up, processors, goroutines ---- */

static void (*go_callback)(uintptr_t, void *);

void __tsan_init(struct lardgo_thr **thr, void **proc, void (*cb)(uintptr_t, void *))
{
    go_callback = cb;
    /* The main goroutine is the main kernel thread's language thread. */
    *thr = thr_new(lardcc_me());
    *proc = (void *)1;
}

/* Go's os.Exit and the end of main.main: ThreadSanitizer exits here with
 * its exit code; lard reports when the process exits. */
void __tsan_fini(void)
{
    _exit(0);
}

void __tsan_proc_create(void **proc)
{
    *proc = (void *)1;
}

void __tsan_proc_destroy(void *proc)
{
    LARDCC_UNUSED(proc);
}

void __tsan_map_shadow(void *addr, uintptr_t size)
{
    LARDCC_UNUSED(addr);
    LARDCC_UNUSED(size);
}

/* Go's race.Errors: after each test, `testing` fails the test if the count
 * grew.  lard prints the races it has not printed yet, in Go's format, and
 * stores the count (natively it stays 0). */
void __tsan_report_count(uint64_t *n)
{
    *n = 0;
    lard_note_report_count(n);
}

/* For reports: goroutine `id` was created by the go statement that returns
 * to `pc`, in a goroutine whose call stack was `stack`. */
static void note_goroutine(uint32_t id, void *pc, uint32_t stack)
{
    struct lardcc_unit_note n = {id, lardcc_own(id), LARDCC_UNIT_GOROUTINE,
                                 (uint64_t)(uintptr_t)pc, stack, 0, 0};
    lardcc_note_unit(&n);
}

/* A goroutine started by `parent`; by none (NULL) when the runtime starts
 * one on its own stack (the context its timers run in), which then starts
 * with a clock of its own only. */
void __tsan_go_start(struct lardgo_thr *parent, struct lardgo_thr **child, void *pc)
{
    static const struct lardcc_vc none = {0};
    uint32_t id;
    LARDCC_UNUSED(pc);
    if (parent == NULL) {
        sync_begin();
        *child = thr_new(lardcc_id_alloc(&none));
        sync_end(NULL);
        note_goroutine((*child)->id, pc, 0);
        return;
    }
    run(parent);
    sync_begin();
    id = lardcc_id_alloc(lardcc_my_clock());
    lardcc_tick();
    sync_end(parent);
    *child = thr_new(id);
    note_goroutine(id, pc, parent->stack);
}

void __tsan_go_end(struct lardgo_thr *thr)
{
    uint32_t id = thr->id;
    uint64_t final;
    run(thr);
    lard_note_thread_exit();
    /* The goroutine's last epoch, when it accessed nothing in it since the
     * tick that began it, holds nothing: its final epoch is the one before,
     * the one its last release published (a goroutine that ends right
     * after `wg.Done()` or a channel send).  A goroutine started by one
     * that acquired that release may take the id over, so a program that
     * starts and waits for goroutines in a loop keeps reusing a few ids
     * instead of growing every clock by one entry per goroutine. */
    final = lardcc_own(id);
    if (!thr->accessed && final == thr->seen_own && final > 1)
        final--;
    lardcc_id_retire(id, final);
    thr_drop(thr);
}

/* A finalizer runs after everything before the object became unreachable;
 * no address carries that edge, so the finalizer goroutine acquires every
 * goroutine's clock (ThreadSanitizer's AcquireGlobal). */
void __tsan_finalizer_goroutine(struct lardgo_thr *thr)
{
    run(thr);
    acquire_every_goroutine();
}

/* ---- synchronization ---- */

/* Go's edge on `addr`: one of lard-cc's primitives, unless the goroutine
 * ignores synchronization. */
static void edge(struct lardgo_thr *thr, void *addr, void (*primitive)(struct lardcc_sync *))
{
    run(thr);
    if (thr->ignore_sync != 0)
        return;
    sync_begin();
    primitive(lardcc_sync_of(addr));
    sync_end(thr);
}

void __tsan_acquire(struct lardgo_thr *thr, void *addr)
{
    edge(thr, addr, lardcc_acquire);
}

void __tsan_release(struct lardgo_thr *thr, void *addr)
{
    edge(thr, addr, lardcc_release);
}

void __tsan_release_merge(struct lardgo_thr *thr, void *addr)
{
    edge(thr, addr, lardcc_release_join);
}

/* The clock of the object becomes the goroutine's, and the goroutine
 * acquires what the object held (an unbuffered channel's rendezvous). */
static void release_acquire(struct lardcc_sync *s)
{
    struct lardcc_vc held = {0};
    lard__lock(&s->lock);
    lardcc_vc_copy(&held, &s->vc);
    lard__unlock(&s->lock);
    lardcc_release(s);
    lardcc_acquire_vc(&held);
    lardcc_vc_free(&held);
}

void __tsan_release_acquire(struct lardgo_thr *thr, void *addr)
{
    edge(thr, addr, release_acquire);
}

void __tsan_go_ignore_sync_begin(struct lardgo_thr *thr)
{
    thr->ignore_sync++;
}

void __tsan_go_ignore_sync_end(struct lardgo_thr *thr)
{
    thr->ignore_sync--;
}

/* ---- memory ---- */

void __tsan_malloc(struct lardgo_thr *thr, uintptr_t pc, uintptr_t p, uintptr_t size)
{
    LARDCC_UNUSED(pc);
    if (thr != NULL)
        run(thr);
    lard_clear_history((void *)p, size);
}

void __tsan_free(uintptr_t p, uintptr_t size)
{
    lard_clear_history((void *)p, size);
    lardcc_sync_forget_range((const void *)p, size);
}

/* ---- accesses ---- */

void __tsan_read(struct lardgo_thr *thr, void *addr, void *pc)
{
    run(thr);
    thr->accessed = 1;
    __lardgo_read(addr, pc, thr->stack);
}

void __tsan_write(struct lardgo_thr *thr, void *addr, void *pc)
{
    run(thr);
    thr->accessed = 1;
    __lardgo_write(addr, pc, thr->stack);
}

/* An access the runtime makes for the program (a map lookup, a channel's
 * buffer): at `pc`, in the runtime function, called from `callpc`, which
 * is a frame of the access's stack (as in ThreadSanitizer's Go runtime). */
void __tsan_func_enter(struct lardgo_thr *thr, void *callpc);
void __tsan_func_exit(struct lardgo_thr *thr);

static void access_in_runtime(struct lardgo_thr *thr, void *addr, void *callpc, void *pc,
                              void (*access)(const void *, const void *, uint32_t))
{
    run(thr);
    thr->accessed = 1;
    if (callpc != NULL)
        __tsan_func_enter(thr, callpc);
    access(addr, pc, thr->stack);
    if (callpc != NULL)
        __tsan_func_exit(thr);
}

void __tsan_read_pc(struct lardgo_thr *thr, void *addr, void *callpc, void *pc)
{
    access_in_runtime(thr, addr, callpc, pc, __lardgo_read);
}

void __tsan_write_pc(struct lardgo_thr *thr, void *addr, void *callpc, void *pc)
{
    access_in_runtime(thr, addr, callpc, pc, __lardgo_write);
}

void __tsan_read_range(struct lardgo_thr *thr, void *addr, uintptr_t size, void *pc)
{
    run(thr);
    thr->accessed = 1;
    __lardgo_read_range(addr, size, pc, thr->stack);
}

void __tsan_write_range(struct lardgo_thr *thr, void *addr, uintptr_t size, void *pc)
{
    run(thr);
    thr->accessed = 1;
    __lardgo_write_range(addr, size, pc, thr->stack);
}

/* ---- call stacks (cc/stack.c's tree, one path per goroutine) ---- */

void __tsan_func_enter(struct lardgo_thr *thr, void *callpc)
{
    if (thr->depth < LARDCC_STACK_DEPTH)
        thr->stack = lardcc_stack_intern(thr->stack, (uint64_t)(uintptr_t)callpc);
    else if (thr->depth == LARDCC_STACK_DEPTH)
        thr->stack = lardcc_stack_intern(thr->stack, LARDCC_STACK_GAP_PC);
    thr->depth++;
}

void __tsan_func_exit(struct lardgo_thr *thr)
{
    if (thr->depth == 0)
        return;
    thr->depth--;
    if (thr->depth <= LARDCC_STACK_DEPTH)
        thr->stack = lardcc_stack_nodes[thr->stack].parent;
}

/* ---- sync/atomic ----
 *
 * Go passes the goroutine, the caller's pc, the pc in sync/atomic and a
 * pointer to the Go arguments: the address, then the operands, then the
 * results, each at its Go frame offset.  Each is a lard-cc atomic
 * (cc/atomic.c): checked as a read (a load) or a write against the plain
 * accesses, never racing with another atomic. */

#define ARG(T, off) (*(T *)(a + (off)))

/* The operation's Tracked access (cc/atomic.c) is attributed to the Go
 * caller `cpc` with the goroutine's call stack: set for the operation,
 * the kernel thread's call stack restored after. */
#define ATOMIC_SITE(thr, cpc, op)                                                        \
    do {                                                                                  \
        uint32_t kernel_stack = lardcc_stack_id;                                          \
        lardcc_stack_id = (thr)->stack;                                                   \
        lardcc_site_pc = (cpc);                                                           \
        op;                                                                               \
        lardcc_stack_id = kernel_stack;                                                   \
    } while (0)

/* A read-modify-write `op` (lard-cc's `__lardcc_atomicN_op`, the builtin
 * `raw` under ignore_sync): operand at +8, result at ROFF. */
#define GO_RMW(N, T, ROFF, op, raw)                                                      \
    void __tsan_go_atomic##N##_##op(struct lardgo_thr *thr, void *cpc, void *pc,          \
                                    uint8_t *a)                                           \
    {                                                                                     \
        T *p = ARG(T *, 0);                                                               \
        LARDCC_UNUSED(pc);                                                                \
        run(thr);                                                                         \
        if (thr->ignore_sync) {                                                           \
            ARG(T, ROFF) = raw(p, ARG(T, 8), __ATOMIC_SEQ_CST);                           \
            return;                                                                       \
        }                                                                                 \
        thr->accessed = 1;                                                                \
        sync_begin();                                                                     \
        ATOMIC_SITE(thr, cpc,                                                             \
                    ARG(T, ROFF) = __lardcc_atomic##N##_##op(p, ARG(T, 8), MO_SEQ_CST));  \
        sync_end(thr);                                                                    \
    }

#define GO_ATOMICS(N, T, VOFF, ROFF, CASOFF)                                             \
    void __tsan_go_atomic##N##_load(struct lardgo_thr *thr, void *cpc, void *pc,          \
                                    uint8_t *a)                                           \
    {                                                                                     \
        T *p = ARG(T *, 0);                                                               \
        LARDCC_UNUSED(pc);                                                                \
        run(thr);                                                                         \
        if (thr->ignore_sync) {                                                           \
            ARG(T, 8) = __atomic_load_n(p, __ATOMIC_SEQ_CST);                             \
            return;                                                                       \
        }                                                                                 \
        thr->accessed = 1;                                                                \
        sync_begin();                                                                     \
        ATOMIC_SITE(thr, cpc, ARG(T, 8) = __lardcc_atomic##N##_load(p, MO_SEQ_CST));      \
        sync_end(thr);                                                                    \
    }                                                                                     \
    void __tsan_go_atomic##N##_store(struct lardgo_thr *thr, void *cpc, void *pc,         \
                                     uint8_t *a)                                          \
    {                                                                                     \
        LARDCC_UNUSED(pc);                                                                \
        run(thr);                                                                         \
        if (thr->ignore_sync) {                                                           \
            __atomic_store_n(ARG(T *, 0), ARG(T, 8), __ATOMIC_SEQ_CST);                   \
            return;                                                                       \
        }                                                                                 \
        thr->accessed = 1;                                                                \
        sync_begin();                                                                     \
        ATOMIC_SITE(thr, cpc,                                                             \
                    __lardcc_atomic##N##_store(ARG(T *, 0), ARG(T, 8), MO_SEQ_CST));      \
        sync_end(thr);                                                                    \
    }                                                                                     \
    GO_RMW(N, T, ROFF, exchange, __atomic_exchange_n)                                     \
    GO_RMW(N, T, ROFF, fetch_add, __atomic_fetch_add)                                     \
    GO_RMW(N, T, ROFF, fetch_and, __atomic_fetch_and)                                     \
    GO_RMW(N, T, ROFF, fetch_or, __atomic_fetch_or)                                       \
    void __tsan_go_atomic##N##_compare_exchange(struct lardgo_thr *thr, void *cpc,        \
                                                void *pc, uint8_t *a)                     \
    {                                                                                     \
        T *p = ARG(T *, 0), old = ARG(T, 8);                                              \
        LARDCC_UNUSED(pc);                                                                \
        run(thr);                                                                         \
        if (thr->ignore_sync) {                                                           \
            ARG(uint8_t, CASOFF) = (uint8_t)__atomic_compare_exchange_n(                  \
                p, &old, ARG(T, VOFF), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);            \
            return;                                                                       \
        }                                                                                 \
        thr->accessed = 1;                                                                \
        sync_begin();                                                                     \
        ATOMIC_SITE(thr, cpc,                                                             \
                    ARG(uint8_t, CASOFF) = (uint8_t)__lardcc_atomic##N##_compare_exchange_strong( \
                        p, &old, ARG(T, VOFF), MO_SEQ_CST, MO_SEQ_CST));                  \
        sync_end(thr);                                                                    \
    }

/* 32-bit: addr+0, val+8 (new+12 for CAS), result +16; 64-bit: +8, +16, +24. */
GO_ATOMICS(32, unsigned int, 12, 16, 16)
GO_ATOMICS(64, unsigned long long, 16, 16, 24)
