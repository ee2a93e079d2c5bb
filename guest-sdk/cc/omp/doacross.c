/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: doacross loops (included by cc/gomp.c). */

#include <stdarg.h>

/* ------------------------------------------------------- doacross loops */

/* A loop with ordered(n) and `depend(sink: v)` / `depend(source)` orders
 * its iterations pairwise: `depend(source)` in iteration v
 * (GOMP_doacross_post, the iteration's vector of logical iteration
 * numbers) happens before every `depend(sink: v)` that waits for it
 * (GOMP_doacross_wait, the sink vector as variadic arguments).  Each
 * iteration vector of one loop is a sync object of its own: the loop
 * reserves an address range of one byte per iteration, outside the
 * canonical address space so that no program object shares it, and the
 * vector's linear index picks the byte (lardcc_sync_of).  Every team
 * member starts the loop (GOMP_loop_doacross_*_start), the k-th doacross
 * loop of each member being the same loop, which the first member to reach
 * it registers with the team; the team forgets the ranges' clocks at its
 * end.  The chunks libgomp hands out are worksharing units as for every
 * loop. */

#define DOACROSS_MAX 16 /* dimensions a wait passes on (ordered(n), n <= 16) */

struct doacross {
    uint32_t seq;          /* the member's k-th doacross loop in the team */
    unsigned n;            /* dimensions */
    uintptr_t base;        /* the reserved range */
    uint64_t total;        /* its length: the iteration count */
    struct doacross *next;
    uint64_t dims[];       /* iterations per dimension */
};

static uint64_t doacross_space = 1ull << 62; /* next free reserved address */

/* The member starts its next doacross loop of `n` dimensions whose
 * iteration counts are `counts` (unsigned long long when `ull`). */
static void doacross_begin(unsigned n, const void *counts, int ull)
{
    struct team *T = thr.cur_team;
    struct doacross *d;
    uint32_t seq;
    thr.doacross = NULL;
    if (T == NULL || n == 0 || n > DOACROSS_MAX)
        return;
    seq = thr.doacross_seq++;
    lard__lock(&T->doacross_lock);
    for (d = T->doacross; d != NULL && d->seq != seq; d = d->next)
        ;
    if (d == NULL) {
        uint64_t total = 1;
        unsigned i;
        d = xmalloc(sizeof *d + n * sizeof d->dims[0]);
        d->seq = seq;
        d->n = n;
        for (i = 0; i < n; i++) {
            uint64_t c = ull ? ((const unsigned long long *)counts)[i]
                             : (uint64_t)((const long *)counts)[i];
            d->dims[i] = c;
            total = c != 0 && total > (1ull << 40) / c ? 1ull << 40 : total * c;
        }
        d->total = total;
        d->base = (uintptr_t)__atomic_fetch_add(&doacross_space, (total + 4095) & ~4095ull,
                                                __ATOMIC_RELAXED);
        d->next = T->doacross;
        T->doacross = d;
    }
    lard__unlock(&T->doacross_lock);
    thr.doacross = d;
}

/* The sync object of iteration vector `v` of the running doacross loop, or
 * NULL for a vector outside its iteration space. */
static struct lardcc_sync *doacross_sync(const uint64_t *v)
{
    const struct doacross *d = thr.doacross;
    uint64_t index = 0;
    unsigned i;
    if (d == NULL)
        return NULL;
    for (i = 0; i < d->n; i++) {
        if (v[i] >= d->dims[i])
            return NULL;
        index = index * d->dims[i] + v[i];
    }
    return index < d->total ? lardcc_sync_of((const void *)(d->base + index)) : NULL;
}

/* The team's end: the loops' clocks go. */
static void doacross_forget(struct team *T)
{
    struct doacross *d = T->doacross, *next;
    for (; d != NULL; d = next) {
        next = d->next;
        lardcc_sync_forget_range((const void *)d->base, d->total);
        free(d);
    }
    T->doacross = NULL;
}

#define DOACROSS_START(name, T)                                                       \
    bool __real_##name(unsigned, T *, T, T *, T *);                                   \
    bool __wrap_##name(unsigned n, T *counts, T chunk, T *is, T *ie)                  \
    {                                                                                 \
        unit_end();                                                                   \
        doacross_begin(n, counts, CHUNK_KIND(T) != LARDCC_UNIT_CHUNK);                \
        return chunk_begin(IN_LIBGOMP_EXPR(__real_##name(n, counts, chunk, is, ie)),  \
                           __builtin_return_address(0), CHUNK_KIND(T), is, ie);       \
    }
#define DOACROSS_RUNTIME_START(name, T)                                               \
    bool __real_##name(unsigned, T *, T *, T *);                                      \
    bool __wrap_##name(unsigned n, T *counts, T *is, T *ie)                           \
    {                                                                                 \
        unit_end();                                                                   \
        doacross_begin(n, counts, CHUNK_KIND(T) != LARDCC_UNIT_CHUNK);                \
        return chunk_begin(IN_LIBGOMP_EXPR(__real_##name(n, counts, is, ie)),         \
                           __builtin_return_address(0), CHUNK_KIND(T), is, ie);       \
    }
DOACROSS_START(GOMP_loop_doacross_static_start, long)
DOACROSS_START(GOMP_loop_doacross_dynamic_start, long)
DOACROSS_START(GOMP_loop_doacross_guided_start, long)
DOACROSS_RUNTIME_START(GOMP_loop_doacross_runtime_start, long)
DOACROSS_START(GOMP_loop_ull_doacross_static_start, ULL)
DOACROSS_START(GOMP_loop_ull_doacross_dynamic_start, ULL)
DOACROSS_START(GOMP_loop_ull_doacross_guided_start, ULL)
DOACROSS_RUNTIME_START(GOMP_loop_ull_doacross_runtime_start, ULL)

bool __real_GOMP_loop_doacross_start(unsigned, long *, long, long, long *, long *, uintptr_t *,
                                     void **);
bool __wrap_GOMP_loop_doacross_start(unsigned n, long *counts, long sched, long chunk, long *is,
                                     long *ie, uintptr_t *reductions, void **mem)
{
    bool r;
    unit_end();
    doacross_begin(n, counts, 0);
    IN_LIBGOMP(r = __real_GOMP_loop_doacross_start(n, counts, sched, chunk, is, ie, reductions,
                                                   mem));
    return is != NULL ? chunk_begin(r, __builtin_return_address(0), LARDCC_UNIT_CHUNK, is, ie) : r;
}

/* depend(source): the iteration's clock so far reaches its waiters. */
#define DOACROSS_POST(name, T)                                                        \
    void __real_##name(T *);                                                          \
    void __wrap_##name(T *counts)                                                     \
    {                                                                                 \
        uint64_t v[DOACROSS_MAX];                                                     \
        unsigned i, n = thr.doacross != NULL ? thr.doacross->n : 0;                   \
        struct lardcc_sync *s;                                                        \
        for (i = 0; i < n; i++)                                                       \
            v[i] = (uint64_t)counts[i];                                               \
        if ((s = doacross_sync(v)) != NULL)                                           \
            lardcc_release_join(s);                                                   \
        IN_LIBGOMP(__real_##name(counts));                                            \
    }
DOACROSS_POST(GOMP_doacross_post, long)
DOACROSS_POST(GOMP_doacross_ull_post, ULL)

/* depend(sink: v): after libgomp's wait, the iteration acquires v's
 * posts.  The variadic vector is passed on whole (a callee reads the
 * arguments it expects, and extra ones are harmless). */
#define DOACROSS_WAIT(name, T)                                                        \
    void __real_##name(T, ...);                                                       \
    void __wrap_##name(T first, ...)                                                  \
    {                                                                                 \
        uint64_t v[DOACROSS_MAX] = {(uint64_t)first};                                 \
        T a[DOACROSS_MAX] = {first};                                                  \
        unsigned i, n = thr.doacross != NULL ? thr.doacross->n : 1;                   \
        struct lardcc_sync *s;                                                        \
        va_list ap;                                                                   \
        va_start(ap, first);                                                          \
        for (i = 1; i < n; i++)                                                       \
            v[i] = (uint64_t)(a[i] = va_arg(ap, T));                                  \
        va_end(ap);                                                                   \
        IN_LIBGOMP(__real_##name(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], \
                                 a[9], a[10], a[11], a[12], a[13], a[14], a[15]));    \
        if ((s = doacross_sync(v)) != NULL)                                           \
            lardcc_acquire(s);                                                        \
    }
DOACROSS_WAIT(GOMP_doacross_wait, long)
DOACROSS_WAIT(GOMP_doacross_ull_wait, ULL)
