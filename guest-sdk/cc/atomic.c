/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: atomics and fences of the ThreadSanitizer
 * instrumentation ABI (the bookkeeping entry points: abi.c).
 *
 * Atomic accesses are synchronization, and accesses the detector checks:
 * a load (or a failed compare-exchange) as a Tracked read, a store or
 * read-modify-write as a Tracked write, made by the runtime under the
 * location's lock on the program's behalf (attributed to the program's
 * call, site.S).  Two atomics never race with each other (C11 5.1.2.4):
 * for its Tracked access the detector's clock of the thread is lent the
 * epochs of every earlier atomic access to the location (its `avc`,
 * clock.c lardcc_lend_begin), and only the plain accesses that neither
 * that nor the thread's own clock orders race with it.  A plain access a
 * thread made before its own atomic access to the same location is
 * covered by that epoch too: another thread's unordered atomic access to
 * the location is then not found racing with it (ThreadSanitizer's
 * shadow keeps both).
 * Edges by memory order (C11 7.17.3):
 *   load acquire/seq_cst          thread ⊔= clock(a)
 *   store release/seq_cst         clock(a) := thread, tick
 *   RMW release/acq_rel/seq_cst   clock(a) ⊔= thread, tick (an RMW continues
 *                                 the release sequence of earlier stores)
 *   RMW acquire/acq_rel/seq_cst   thread ⊔= clock(a)
 *   relaxed                       no edge
 * The operation and its clock update happen together under the location's
 * internal lock, so an acquire that reads a value also sees the clock
 * released with it.  Fences: a release fence snapshots the thread's clock;
 * later relaxed stores/RMWs release that snapshot (fence-atomic
 * synchronization); relaxed loads collect the locations' clocks, which an
 * acquire fence then acquires (atomic-fence synchronization).
 */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

typedef unsigned char a8;
typedef unsigned short a16;
typedef unsigned int a32;
typedef unsigned long long a64;
typedef unsigned __int128 a128;

enum { mo_relaxed, mo_consume, mo_acquire, mo_release, mo_acq_rel, mo_seq_cst };

static int is_acquire(int mo)
{
    return mo == mo_consume || mo == mo_acquire || mo == mo_acq_rel || mo == mo_seq_cst;
}

static int is_release(int mo)
{
    return mo == mo_release || mo == mo_acq_rel || mo == mo_seq_cst;
}

/* Per kernel thread fence state (a language thread switch resets nothing:
 * fences are rare and the state only ever adds edges the program asked for).
 * The clocks are allocated on a thread's first fence or relaxed access to a
 * location with a clock, so that the static TLS block stays small. */
struct fences {
    struct lardcc_vc rel;
    struct lardcc_vc acq;
};
static __thread int fence_rel_valid;
static __thread int fence_acq_pending;
static __thread struct fences *fence_clocks;

static struct fences *fences(void)
{
    if (fence_clocks == NULL) {
        LARDCC_RUNTIME(fence_clocks = calloc(1, sizeof *fence_clocks));
        if (fence_clocks == NULL)
            lard__fatal("lard-cc: out of memory (fence clocks)");
    }
    return fence_clocks;
}
#define fence_rel (&fences()->rel)
#define fence_acq (&fences()->acq)

/* 128-bit atomics are emulated under one lock (every access to them goes
 * through this runtime, so the lock makes them atomic). */
static uint32_t lock128;

/* The kinds of operation. */
enum { K_LOAD, K_STORE, K_RMW };

struct op_ctx {
    struct lardcc_sync *s;
    int kind, mo;
};

/* The Tracked accesses of site.S. */
#define SITE(N)                                                                      \
    void __lardcc_site_read##N(const volatile void *a, void *pc, uint32_t stack);  \
    void __lardcc_site_write##N(const volatile void *a, void *pc, uint32_t stack);
SITE(1)
SITE(2)
SITE(4)
SITE(8)
SITE(16)

static void tracked(const volatile void *a, int bytes, int write, void *pc)
{
    uint32_t stack = lardcc_stack_id;
    switch (bytes) {
    case 1:
        (write ? __lardcc_site_write1 : __lardcc_site_read1)(a, pc, stack);
        break;
    case 2:
        (write ? __lardcc_site_write2 : __lardcc_site_read2)(a, pc, stack);
        break;
    case 4:
        (write ? __lardcc_site_write4 : __lardcc_site_read4)(a, pc, stack);
        break;
    case 8:
        (write ? __lardcc_site_write8 : __lardcc_site_read8)(a, pc, stack);
        break;
    default:
        (write ? __lardcc_site_write16 : __lardcc_site_read16)(a, pc, stack);
        break;
    }
}

/* The program counter an atomic access is attributed to (set by the
 * caller of each operation) and the entries lardcc_lend_begin raised
 * (storage kept), per kernel thread. */
__thread void *lardcc_site_pc;
static __thread struct lardcc_vc lent;

static void op_begin(struct op_ctx *c, volatile void *a, int kind, int mo)
{
    c->kind = kind;
    c->mo = mo;
    c->s = lardcc_sync_of((const void *)a);
    lard__lock(&c->s->lock);
}

/* The operation's Tracked access, made after it under the location's
 * lock: ordered after every earlier atomic access to the location (their
 * epochs lent for the access), which then records its own epoch. */
static void op_access(struct op_ctx *c, const volatile void *a, int bytes, int write)
{
    uint32_t me = lardcc_me();
    lardcc_lend_begin(&c->s->avc, &lent);
    tracked(a, bytes, write, lardcc_site_pc);
    lardcc_lend_end(&lent);
    lardcc_vc_set(&c->s->avc, me, lardcc_own(me));
}

static void op_end(struct op_ctx *c, int success)
{
    struct lardcc_sync *s = c->s;
    if (success && c->kind != K_LOAD) {
        if (is_release(c->mo)) {
            if (c->kind == K_STORE)
                lardcc_vc_copy(&s->vc, lardcc_my_clock());
            else
                lardcc_vc_join(&s->vc, lardcc_my_clock());
            lardcc_tick();
        } else if (fence_rel_valid) {
            lardcc_vc_join(&s->vc, fence_rel);
        }
    }
    if (c->kind != K_STORE) {
        int mo = success ? c->mo : mo_relaxed;
        if (is_acquire(mo))
            lardcc_acquire_vc(&s->vc);
        else {
            lardcc_vc_join(fence_acq, &s->vc);
            fence_acq_pending = 1;
        }
    }
    lard__unlock(&s->lock);
}

/* For compare-exchange the failure order applies to the load on failure. */
static void op_end_cas(struct op_ctx *c, int success, int fmo)
{
    if (!success && is_acquire(fmo)) {
        lardcc_acquire_vc(&c->s->vc);
        lard__unlock(&c->s->lock);
        return;
    }
    op_end(c, success);
}

#define ORD(mo) __ATOMIC_SEQ_CST
/* The runtime performs every operation seq_cst (x86 gives it nearly free);
 * the program's requested order only decides the happens-before edges. */

/* Each operation is reached from its `__tsan_atomic*` stub in access.S,
 * which sets lardcc_site_pc to the program's return address (Go's runtime
 * sets it to the Go caller's, go/race.c). */
#define IMPL(N, name) __attribute__((visibility("hidden"))) __lardcc_atomic##N##_##name

#define DEFINE_ATOMICS(N, T)                                                       \
    T IMPL(N, load)(const volatile T *a, int mo)                                   \
    {                                                                              \
        struct op_ctx c;                                                           \
        T v;                                                                       \
        op_begin(&c, (volatile void *)a, K_LOAD, mo);                              \
        v = LOAD_##N(a);                                                           \
        op_access(&c, a, N / 8, 0);                                                \
        op_end(&c, 1);                                                             \
        return v;                                                                  \
    }                                                                              \
    void IMPL(N, store)(volatile T *a, T v, int mo)                                \
    {                                                                              \
        struct op_ctx c;                                                           \
        op_begin(&c, a, K_STORE, mo);                                              \
        STORE_##N(a, v);                                                           \
        op_access(&c, a, N / 8, 1);                                                \
        op_end(&c, 1);                                                             \
    }                                                                              \
    RMW(N, T, exchange, XCHG_##N)                                                  \
    RMW(N, T, fetch_add, ADD_##N)                                                  \
    RMW(N, T, fetch_sub, SUB_##N)                                                  \
    RMW(N, T, fetch_and, AND_##N)                                                  \
    RMW(N, T, fetch_or, OR_##N)                                                    \
    RMW(N, T, fetch_xor, XOR_##N)                                                  \
    RMW(N, T, fetch_nand, NAND_##N)                                                \
    int IMPL(N, compare_exchange_strong)(volatile T *a, T *cmp, T xchg, int mo,    \
                                         int fmo)                                  \
    {                                                                              \
        struct op_ctx c;                                                           \
        int ok;                                                                    \
        op_begin(&c, a, K_RMW, mo);                                                \
        ok = CAS_##N(a, cmp, xchg);                                                \
        op_access(&c, a, N / 8, ok);                                               \
        op_end_cas(&c, ok, fmo);                                                   \
        return ok;                                                                 \
    }                                                                              \
    int IMPL(N, compare_exchange_weak)(volatile T *a, T *cmp, T xchg, int mo,      \
                                       int fmo)                                    \
    {                                                                              \
        return __lardcc_atomic##N##_compare_exchange_strong(a, cmp, xchg, mo, fmo); \
    }                                                                              \
    T IMPL(N, compare_exchange_val)(volatile T *a, T cmp, T xchg, int mo, int fmo) \
    {                                                                              \
        __lardcc_atomic##N##_compare_exchange_strong(a, &cmp, xchg, mo, fmo);      \
        return cmp;                                                                \
    }

#define RMW(N, T, name, OP)                                                        \
    T IMPL(N, name)(volatile T *a, T v, int mo)                                    \
    {                                                                              \
        struct op_ctx c;                                                           \
        T old;                                                                     \
        op_begin(&c, a, K_RMW, mo);                                                \
        old = OP(a, v);                                                            \
        op_access(&c, a, N / 8, 1);                                                \
        op_end(&c, 1);                                                             \
        return old;                                                                \
    }

#define LOAD_N(a) __atomic_load_n(a, ORD(0))
#define STORE_N(a, v) __atomic_store_n(a, v, ORD(0))
#define XCHG_N(a, v) __atomic_exchange_n(a, v, ORD(0))
#define ADD_N(a, v) __atomic_fetch_add(a, v, ORD(0))
#define SUB_N(a, v) __atomic_fetch_sub(a, v, ORD(0))
#define AND_N(a, v) __atomic_fetch_and(a, v, ORD(0))
#define OR_N(a, v) __atomic_fetch_or(a, v, ORD(0))
#define XOR_N(a, v) __atomic_fetch_xor(a, v, ORD(0))
#define NAND_N(a, v) __atomic_fetch_nand(a, v, ORD(0))
#define CAS_N(a, cmp, x) __atomic_compare_exchange_n(a, cmp, x, 0, ORD(0), ORD(0))

#define LOAD_8 LOAD_N
#define LOAD_16 LOAD_N
#define LOAD_32 LOAD_N
#define LOAD_64 LOAD_N
#define STORE_8 STORE_N
#define STORE_16 STORE_N
#define STORE_32 STORE_N
#define STORE_64 STORE_N
#define XCHG_8 XCHG_N
#define XCHG_16 XCHG_N
#define XCHG_32 XCHG_N
#define XCHG_64 XCHG_N
#define ADD_8 ADD_N
#define ADD_16 ADD_N
#define ADD_32 ADD_N
#define ADD_64 ADD_N
#define SUB_8 SUB_N
#define SUB_16 SUB_N
#define SUB_32 SUB_N
#define SUB_64 SUB_N
#define AND_8 AND_N
#define AND_16 AND_N
#define AND_32 AND_N
#define AND_64 AND_N
#define OR_8 OR_N
#define OR_16 OR_N
#define OR_32 OR_N
#define OR_64 OR_N
#define XOR_8 XOR_N
#define XOR_16 XOR_N
#define XOR_32 XOR_N
#define XOR_64 XOR_N
#define NAND_8 NAND_N
#define NAND_16 NAND_N
#define NAND_32 NAND_N
#define NAND_64 NAND_N
#define CAS_8 CAS_N
#define CAS_16 CAS_N
#define CAS_32 CAS_N
#define CAS_64 CAS_N

/* 128 bits: plain operations under lock128. */
static a128 l128(const volatile a128 *a) { a128 v; lard__lock(&lock128); v = *a; lard__unlock(&lock128); return v; }
static void s128(volatile a128 *a, a128 v) { lard__lock(&lock128); *a = v; lard__unlock(&lock128); }
#define RMW128(name, expr)                                                         \
    static a128 name(volatile a128 *a, a128 v)                                     \
    {                                                                              \
        a128 old;                                                                  \
        lard__lock(&lock128);                                                      \
        old = *a;                                                                  \
        *a = (expr);                                                               \
        lard__unlock(&lock128);                                                    \
        return old;                                                                \
    }
RMW128(x128, v)
RMW128(add128, old + v)
RMW128(sub128, old - v)
RMW128(and128, old & v)
RMW128(or128, old | v)
RMW128(xor128, old ^ v)
RMW128(rmw_nand128, ~(old & v))
static int cas128(volatile a128 *a, a128 *cmp, a128 x)
{
    int ok;
    lard__lock(&lock128);
    ok = *a == *cmp;
    if (ok)
        *a = x;
    else
        *cmp = *a;
    lard__unlock(&lock128);
    return ok;
}
#define LOAD_128 l128
#define STORE_128 s128
#define XCHG_128 x128
#define ADD_128 add128
#define SUB_128 sub128
#define AND_128 and128
#define OR_128 or128
#define XOR_128 xor128
#define NAND_128 rmw_nand128
#define CAS_128 cas128

DEFINE_ATOMICS(8, a8)
DEFINE_ATOMICS(16, a16)
DEFINE_ATOMICS(32, a32)
DEFINE_ATOMICS(64, a64)
DEFINE_ATOMICS(128, a128)

void __tsan_atomic_thread_fence(int mo)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (is_acquire(mo) && fence_acq_pending) {
        lardcc_acquire_vc(fence_acq);
        lardcc_vc_clear(fence_acq);
        fence_acq_pending = 0;
    }
    if (is_release(mo)) {
        lardcc_vc_copy(fence_rel, lardcc_my_clock());
        fence_rel_valid = 1;
        lardcc_tick();
    }
}

void __tsan_atomic_signal_fence(int mo)
{
    LARDCC_UNUSED(mo);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
