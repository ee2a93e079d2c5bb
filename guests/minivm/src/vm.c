/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm: options, language threads (1:1 and M:N), vector clocks, handles,
 * safepoints and the stop-the-world protocol, monitors, volatiles.
 *
 * LARD ops issued here:
 *   Thread   -- 1:1: once when a language thread starts on its pthread;
 *               M:N: by the worker every time it switches a language thread
 *               in (Rule 5).
 *   WriteVC  -- whenever a language thread's vector clock changes: fork,
 *               join, monitor enter/exit, volatile get/set (Rule 2).  The
 *               runtime's own synchronization (stop-the-world, run queue,
 *               heap lock, monitor/volatile internals) is never reported.
 */
#include "internal.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#define VM_NOIPA __attribute__((__noinline__, __noipa__))
#else
#define VM_NOIPA __attribute__((__noinline__))
#endif

struct vm_opts vm__opts;
struct vm_thread vm__threads[VM_MAX_THREADS];
__thread int32_t vm__budget;

static uint32_t next_id;                  /* ids handed out (atomic) */
static __thread struct vm_thread *tls_cur;

/* Stop-the-world state (internal, unreported). */
static pthread_mutex_t gc_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gc_cond = PTHREAD_COND_INITIALIZER;
static int gc_requested;                  /* atomic reads outside gc_mutex */
static unsigned running;                  /* kernel threads running mutator
                                             or scheduler code, not parked */
static uint64_t gc_count;

/* M:N scheduler state (internal, unreported). */
static uint32_t rq_lock;
static struct vm_thread *rq[VM_MAX_THREADS + 1];
static unsigned rq_head, rq_tail;
static uint32_t live;                     /* language threads not DONE */
static struct vm_worker workers[64];

void vm__fatal(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("minivm: fatal: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* ---- TLS through opaque accessors (green threads migrate) -------------- */

VM_NOIPA struct vm_thread *vm__self(void)
{
    return tls_cur;
}

static VM_NOIPA void set_self(struct vm_thread *t)
{
    tls_cur = t;
}

static inline void budget_set(int32_t v)
{
    __asm__ __volatile__("movl %0, %%fs:vm__budget@tpoff" : : "r"(v) : "memory");
}

static void spin_lock(uint32_t *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) != 0)
        while (__atomic_load_n(l, __ATOMIC_RELAXED) != 0)
            sched_yield();
}

static void spin_unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* ---- vector clocks (mirrored with WriteVC, entry by entry) ------------- */

uint32_t vm__nids(void)
{
    return __atomic_load_n(&next_id, __ATOMIC_ACQUIRE);
}

static uint32_t new_id(void)
{
    uint32_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_ACQ_REL);
    if (id >= VM_MAX_THREADS)
        vm__fatal("too many language threads (max %d)", VM_MAX_THREADS);
    return id;
}

/* t := t ⊔ from (t is the current language thread). */
static void vc_acquire(struct vm_thread *t, const uint64_t *from)
{
    uint32_t n = vm__nids(), i;
    for (i = 0; i < n && i < VM_MAX_THREADS; i++)
        if (from[i] > t->vc[i]) {
            t->vc[i] = from[i];
            lard_write_vc(i, t->vc[i]);
        }
}

static void vc_tick(struct vm_thread *t)
{
    t->vc[t->id] += 1;
    lard_write_vc(t->id, t->vc[t->id]);
}

/* Writes t's whole software clock into the detector (the current identity
 * must be t): needed once, when t first runs (its fork clock). */
static void vc_install(struct vm_thread *t)
{
    uint32_t n = vm__nids(), i;
    for (i = 0; i < n && i < VM_MAX_THREADS; i++)
        if (t->vc[i] != 0 || i == t->id)
            lard_write_vc(i, t->vc[i]);
}

/* ---- handles ------------------------------------------------------------ */

vm_ref vm__push(vm_obj *o)
{
    struct vm_thread *t = vm__self();
    if (t->nroots >= VM_MAX_ROOTS)
        vm__fatal("thread %u: handle stack overflow", t->id);
    t->roots[t->nroots] = o;
    return &t->roots[t->nroots++];
}

size_t vm_frame(void)
{
    return vm__self()->nroots;
}

void vm_unframe(size_t mark)
{
    struct vm_thread *t = vm__self();
    if (mark > t->nroots)
        vm__fatal("vm_unframe: bad mark");
    t->nroots = mark;
}

vm_ref vm_local(void)
{
    return vm__push(NULL);
}

void vm_assign(vm_ref dst, vm_ref src)
{
    *dst = src ? *src : NULL;
}

void vm__bad_index(vm_ref h, uint32_t i)
{
    if (*h == NULL)
        vm__fatal("null pointer dereference");
    vm__fatal("index %u out of bounds (length %u, class %u)", i, (*h)->length,
              (*h)->cls);
}

uintptr_t vm_address(vm_ref h)
{
    return (uintptr_t)*h;
}

uint32_t vm_thread_id(void)
{
    return vm__self()->id;
}

/* ---- safepoints and stop-the-world (never reported) -------------------- */

/* This kernel thread stops running mutator code until the collection ends.
 * Everything its language thread references is in its shadow stack. */
static void park(void)
{
    pthread_mutex_lock(&gc_mutex);
    running--;
    pthread_cond_broadcast(&gc_cond);
    while (gc_requested)
        pthread_cond_wait(&gc_cond, &gc_mutex);
    running++;
    pthread_mutex_unlock(&gc_mutex);
}

static void poll_gc(void)
{
    if (__atomic_load_n(&gc_requested, __ATOMIC_ACQUIRE))
        park();
}

void vm__collect(void)
{
    pthread_mutex_lock(&gc_mutex);
    if (gc_requested) {                   /* someone else collects: park */
        running--;
        pthread_cond_broadcast(&gc_cond);
        while (gc_requested)
            pthread_cond_wait(&gc_cond, &gc_mutex);
        running++;
        pthread_mutex_unlock(&gc_mutex);
        return;
    }
    __atomic_store_n(&gc_requested, 1, __ATOMIC_RELEASE);
    while (running > 1)                   /* everybody else at a safepoint */
        pthread_cond_wait(&gc_cond, &gc_mutex);
    pthread_mutex_unlock(&gc_mutex);

    vm__heap_collect();

    pthread_mutex_lock(&gc_mutex);
    gc_count++;
    __atomic_store_n(&gc_requested, 0, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&gc_cond);
    pthread_mutex_unlock(&gc_mutex);
}

void vm_gc(void)
{
    vm__collect();
}

uint64_t vm_gc_count(void)
{
    uint64_t n;
    pthread_mutex_lock(&gc_mutex);
    n = gc_count;
    pthread_mutex_unlock(&gc_mutex);
    return n;
}

/* M:N: give the kernel thread back to the worker's scheduler loop; returns
 * when some worker (maybe another one) switches this thread in again. */
static void green_yield(struct vm_thread *t)
{
    __atomic_store_n(&t->state, VM_T_RUNNABLE, __ATOMIC_RELEASE);
    vm__ctx_switch(&t->sp, t->worker->sp);
}

void vm__safepoint_slow(void)
{
    budget_set(vm__opts.quantum);
    poll_gc();
    if (vm__opts.threads == VM_THREADS_MN)
        green_yield(vm__self());
}

void vm_yield(void)
{
    budget_set(vm__opts.quantum);
    poll_gc();
    if (vm__opts.threads == VM_THREADS_MN)
        green_yield(vm__self());
    else
        sched_yield();
}

/* ---- M:N scheduler ------------------------------------------------------ */

static void rq_push(struct vm_thread *t)
{
    spin_lock(&rq_lock);
    rq[rq_tail] = t;
    rq_tail = (rq_tail + 1) % (VM_MAX_THREADS + 1);
    spin_unlock(&rq_lock);
}

static struct vm_thread *rq_pop(void)
{
    struct vm_thread *t = NULL;
    spin_lock(&rq_lock);
    if (rq_head != rq_tail) {
        t = rq[rq_head];
        rq_head = (rq_head + 1) % (VM_MAX_THREADS + 1);
    }
    spin_unlock(&rq_lock);
    return t;
}

static void thread_body(struct vm_thread *t)
{
    if (t->main_fn)
        t->exit_code = t->main_fn();
    else
        t->fn(&t->roots[0]);
}

static void thread_finish(struct vm_thread *t)
{
    lard_note_thread_exit();              /* runs as t: reports t's end */
    t->nroots = 0;
    __atomic_store_n(&t->state, VM_T_DONE, __ATOMIC_RELEASE);
}

/* First code of a green thread, on its own stack; the worker has already
 * issued Thread(t). */
static void green_entry(struct vm_thread *t)
{
    vc_install(t);                        /* the fork clock, once */
    thread_body(t);
    thread_finish(t);
    vm__ctx_switch(&t->sp, t->worker->sp);
    vm__fatal("a finished green thread was resumed");
}

#define GREEN_STACK (256u * 1024u)

static void green_prepare(struct vm_thread *t)
{
    uint64_t *top, *sp;
    t->stack = malloc(GREEN_STACK);
    if (t->stack == NULL)
        vm__fatal("out of memory (green stack)");
    top = (uint64_t *)(((uintptr_t)t->stack + GREEN_STACK) & ~(uintptr_t)15);
    sp = top - 9;                         /* sp ≡ 8 (mod 16) */
    memset(sp, 0, 9 * sizeof *sp);
    sp[2] = (uint64_t)(uintptr_t)t;                    /* r13: argument */
    sp[3] = (uint64_t)(uintptr_t)green_entry;          /* r12: function */
    sp[6] = (uint64_t)(uintptr_t)vm__ctx_start;        /* return address */
    t->sp = sp;
}

static void worker_loop(struct vm_worker *w)
{
    for (;;) {
        struct vm_thread *t;
        poll_gc();
        if (__atomic_load_n(&live, __ATOMIC_ACQUIRE) == 0)
            break;
        t = rq_pop();
        if (t == NULL) {
            sched_yield();
            continue;
        }
        t->worker = w;
        __atomic_store_n(&t->state, VM_T_RUNNING, __ATOMIC_RELEASE);
        set_self(t);
        budget_set(vm__opts.quantum);
        lard_thread(t->id);               /* Rule 5: on EVERY switch-in */
        if (vm__opts.reinstall_clock && t->started)
            vc_install(t);                /* redundant: see docs/minivm.md */
        t->started = 1;
        vm__ctx_switch(&w->sp, t->sp);
        set_self(NULL);
        if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == VM_T_DONE)
            __atomic_fetch_sub(&live, 1, __ATOMIC_ACQ_REL);
        else
            rq_push(t);
    }
    pthread_mutex_lock(&gc_mutex);
    running--;
    pthread_cond_broadcast(&gc_cond);
    pthread_mutex_unlock(&gc_mutex);
}

static void *worker_main(void *arg)
{
    worker_loop((struct vm_worker *)arg);
    return NULL;
}

/* ---- 1:1 ---------------------------------------------------------------- */

static void *pthread_entry(void *arg)
{
    struct vm_thread *t = (struct vm_thread *)arg;
    set_self(t);
    budget_set(vm__opts.quantum);
    lard_thread(t->id);                   /* once: 1:1 */
    vc_install(t);
    poll_gc();
    thread_body(t);
    thread_finish(t);
    pthread_mutex_lock(&gc_mutex);
    running--;
    pthread_cond_broadcast(&gc_cond);
    pthread_mutex_unlock(&gc_mutex);
    return NULL;
}

/* ---- spawn / join ------------------------------------------------------- */

/* Fork edge: child := parent's clock with child[child] = 1; parent ticks. */
static struct vm_thread *new_thread(struct vm_thread *parent)
{
    uint32_t id = new_id();
    struct vm_thread *c = &vm__threads[id];
    c->id = id;
    c->nroots = 0;
    if (parent) {
        memcpy(c->vc, parent->vc, sizeof c->vc);
        c->vc[id] = 1;
        vc_tick(parent);
    } else {
        memset(c->vc, 0, sizeof c->vc);
        c->vc[id] = 1;
    }
    __atomic_fetch_add(&live, 1, __ATOMIC_ACQ_REL);
    return c;
}

static void start_thread(struct vm_thread *c)
{
    __atomic_store_n(&c->state, VM_T_RUNNABLE, __ATOMIC_RELEASE);
    if (vm__opts.threads == VM_THREADS_MN) {
        green_prepare(c);
        rq_push(c);
    } else {
        int err;
        pthread_mutex_lock(&gc_mutex);
        running++;                        /* counted before it exists */
        pthread_mutex_unlock(&gc_mutex);
        err = pthread_create(&c->pthread, NULL, pthread_entry, c);
        if (err != 0)
            vm__fatal("pthread_create: %s", strerror(err));
        c->has_pthread = 1;
    }
}

int vm_spawn(void (*fn)(vm_ref), vm_ref arg)
{
    struct vm_thread *me = vm__self();
    struct vm_thread *c;
    poll_gc();
    c = new_thread(me);
    c->fn = fn;
    c->main_fn = NULL;
    c->roots[c->nroots++] = arg ? *arg : NULL;
    start_thread(c);
    return (int)c->id;
}

/* Join edge: current := current ⊔ final clock of tid. */
void vm_join(int tid)
{
    struct vm_thread *c;
    if (tid < 0 || (uint32_t)tid >= vm__nids())
        vm__fatal("vm_join: no thread %d", tid);
    c = &vm__threads[tid];
    while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != VM_T_DONE)
        vm_yield();
    vc_acquire(vm__self(), c->vc);
}

/* ---- monitors ----------------------------------------------------------- */

static struct vm_monitor *monitor_of(vm_obj *o)
{
    uint64_t m = __atomic_load_n(&o->monitor, __ATOMIC_ACQUIRE);
    if (m == 0) {
        struct vm_monitor *n = calloc(1, sizeof *n);
        uint64_t zero = 0;
        if (n == NULL)
            vm__fatal("out of memory (monitor)");
        if (__atomic_compare_exchange_n(&o->monitor, &zero, (uint64_t)(uintptr_t)n,
                                        0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            m = (uint64_t)(uintptr_t)n;
        else {
            free(n);
            m = zero;
        }
    }
    return (struct vm_monitor *)(uintptr_t)m;
}

/* Acquire: thread := thread ⊔ monitor (WriteVC for each entry that grows).
 * Every enter and exit is reported with the monitor record's address as
 * the lock's identity (lard_note_acquire/release: it does not move when a
 * collector moves the object).
 * Contended: poll the safepoint and yield (the object may move meanwhile;
 * its monitor record does not). */
void vm_monitor_enter(vm_ref h)
{
    struct vm_thread *t = vm__self();
    uint32_t me = t->id + 1;
    for (;;) {
        struct vm_monitor *m;
        uint32_t cur;
        if (*h == NULL)
            vm__fatal("vm_monitor_enter: null");
        m = monitor_of(*h);
        cur = __atomic_load_n(&m->owner, __ATOMIC_ACQUIRE);
        if (cur == me) {
            m->count++;
            lard_note_acquire(m, 0);
            return;
        }
        if (cur == 0 && __atomic_compare_exchange_n(&m->owner, &cur, me, 0,
                                                    __ATOMIC_ACQUIRE,
                                                    __ATOMIC_RELAXED)) {
            m->count = 1;
            vc_acquire(t, m->vc);
            lard_note_acquire(m, 0);
            return;
        }
        vm_yield();
    }
}

/* Release: monitor := thread; thread[me] += 1 (WriteVC). */
void vm_monitor_exit(vm_ref h)
{
    struct vm_thread *t = vm__self();
    struct vm_monitor *m;
    if (*h == NULL)
        vm__fatal("vm_monitor_exit: null");
    m = (struct vm_monitor *)(uintptr_t)(*h)->monitor;
    if (m == NULL || __atomic_load_n(&m->owner, __ATOMIC_RELAXED) != t->id + 1)
        vm__fatal("vm_monitor_exit: not the owner (IllegalMonitorState)");
    lard_note_release(m);
    if (--m->count == 0) {
        memcpy(m->vc, t->vc, sizeof m->vc);
        vc_tick(t);
        __atomic_store_n(&m->owner, 0, __ATOMIC_RELEASE);
    }
}

/* ---- volatiles ---------------------------------------------------------- */

static struct vm_volrec *volrec_of(vm_obj *o, uint32_t slot)
{
    uint64_t *p;
    uint64_t r;
    if (o == NULL)
        vm__fatal("volatile access: null");
    if (o->cls < VM_CLS_FIRST_USER || slot + 1 >= o->length ||
        !(vm__class_volmap(o->cls) >> slot & 1))
        vm__fatal("slot %u of class %u is not volatile", slot, o->cls);
    p = &vm__slots(o)[slot + 1];
    r = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    if (r == 0) {
        struct vm_volrec *n = calloc(1, sizeof *n);
        uint64_t zero = 0;
        if (n == NULL)
            vm__fatal("out of memory (volatile)");
        if (__atomic_compare_exchange_n(p, &zero, (uint64_t)(uintptr_t)n, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            r = (uint64_t)(uintptr_t)n;
        else {
            free(n);
            r = zero;
        }
    }
    return (struct vm_volrec *)(uintptr_t)r;
}

/* Acquire: value and clock observed together under the record's internal
 * lock; thread := thread ⊔ volatile.  The value is read untracked. */
int64_t vm_volatile_get(vm_ref h, uint32_t slot)
{
    struct vm_thread *t = vm__self();
    struct vm_volrec *r;
    int64_t v;
    vm__poll();
    r = volrec_of(*h, slot);
    spin_lock(&r->lock);
    v = (int64_t)__atomic_load_n(&vm__slots(*h)[slot], __ATOMIC_ACQUIRE);
    vc_acquire(t, r->vc);
    spin_unlock(&r->lock);
    return v;
}

/* Release: volatile := volatile ⊔ thread; value := v; thread[me] += 1. */
void vm_volatile_set(vm_ref h, uint32_t slot, int64_t v)
{
    struct vm_thread *t = vm__self();
    struct vm_volrec *r;
    uint32_t n, i;
    vm__poll();
    r = volrec_of(*h, slot);
    spin_lock(&r->lock);
    n = vm__nids();
    for (i = 0; i < n && i < VM_MAX_THREADS; i++)
        if (t->vc[i] > r->vc[i])
            r->vc[i] = t->vc[i];
    __atomic_store_n(&vm__slots(*h)[slot], (uint64_t)v, __ATOMIC_RELEASE);
    vc_tick(t);
    spin_unlock(&r->lock);
}

/* ---- options and vm_run ------------------------------------------------- */

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    if (*end != '\0' || v == 0)
        vm__fatal("bad size '%s'", s);
    return (size_t)v;
}

static void set_opt(const char *key, const char *val)
{
    if (strcmp(key, "gc") == 0) {
        if (strcmp(val, "marksweep") == 0 || strcmp(val, "ms") == 0)
            vm__opts.gc = VM_GC_MARKSWEEP;
        else if (strcmp(val, "semispace") == 0 || strcmp(val, "ss") == 0)
            vm__opts.gc = VM_GC_SEMISPACE;
        else
            vm__fatal("--gc=marksweep|semispace, not '%s'", val);
    } else if (strcmp(key, "threads") == 0) {
        if (strcmp(val, "1:1") == 0)
            vm__opts.threads = VM_THREADS_1TO1;
        else if (strcmp(val, "m:n") == 0 || strcmp(val, "M:N") == 0)
            vm__opts.threads = VM_THREADS_MN;
        else
            vm__fatal("--threads=1:1|m:n, not '%s'", val);
    } else if (strcmp(key, "kthreads") == 0) {
        long m = strtol(val, NULL, 10);
        if (m < 1 || m > 64)
            vm__fatal("--kthreads=1..64, not '%s'", val);
        vm__opts.kthreads = (unsigned)m;
    } else if (strcmp(key, "heap") == 0) {
        vm__opts.heap_bytes = parse_size(val);
    } else if (strcmp(key, "quantum") == 0) {
        long q = strtol(val, NULL, 10);
        if (q < 1 || q > 1000000000)
            vm__fatal("--quantum=K with K >= 1, not '%s'", val);
        vm__opts.quantum = (int32_t)q;
    } else if (strcmp(key, "reinstall-clock") == 0) {
        vm__opts.reinstall_clock = strcmp(val, "0") != 0;
    } else if (strcmp(key, "verbose") == 0) {
        vm__opts.verbose = strcmp(val, "0") != 0;
    } else {
        vm__fatal("unknown option --%s", key);
    }
}

static void parse_options(int argc, char **argv, const vm_defaults *d)
{
    static const struct { const char *env, *key; } envs[] = {
        {"MINIVM_GC", "gc"}, {"MINIVM_THREADS", "threads"},
        {"MINIVM_KTHREADS", "kthreads"}, {"MINIVM_HEAP", "heap"},
        {"MINIVM_QUANTUM", "quantum"}, {"MINIVM_REINSTALL_CLOCK", "reinstall-clock"},
        {"MINIVM_VERBOSE", "verbose"},
    };
    unsigned i;
    int a;
    vm__opts.gc = VM_GC_MARKSWEEP;
    vm__opts.threads = VM_THREADS_1TO1;
    vm__opts.kthreads = 2;
    vm__opts.heap_bytes = d && d->heap_bytes ? d->heap_bytes : 1024 * 1024;
    vm__opts.quantum = 50;
    for (i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        const char *v = getenv(envs[i].env);
        if (v && *v)
            set_opt(envs[i].key, v);
    }
    for (a = 1; a < argc; a++) {
        char key[64];
        const char *arg = argv[a], *eq;
        size_t n;
        if (strncmp(arg, "--", 2) != 0)
            vm__fatal("unexpected argument '%s'", arg);
        arg += 2;
        eq = strchr(arg, '=');
        n = eq ? (size_t)(eq - arg) : strlen(arg);
        if (n >= sizeof key)
            vm__fatal("bad option '%s'", argv[a]);
        memcpy(key, arg, n);
        key[n] = '\0';
        set_opt(key, eq ? eq + 1 : "1");
    }
}

int vm_run(int argc, char **argv, const vm_defaults *defaults, int (*main_fn)(void))
{
    struct vm_thread *t0;
    int code;
    unsigned i;
    parse_options(argc, argv, defaults);
    vm__heap_init();
    t0 = new_thread(NULL);                /* language thread 0 */
    t0->main_fn = main_fn;
    if (vm__opts.threads == VM_THREADS_1TO1) {
        running = 1;
        __atomic_store_n(&t0->state, VM_T_RUNNING, __ATOMIC_RELEASE);
        set_self(t0);
        budget_set(vm__opts.quantum);
        lard_thread(0);
        vc_install(t0);
        thread_body(t0);
        code = t0->exit_code;
        /* Java semantics: the VM ends when every language thread has. */
        for (i = 1; i < vm__nids(); i++)
            while (__atomic_load_n(&vm__threads[i].state, __ATOMIC_ACQUIRE) != VM_T_DONE)
                vm_yield();
        thread_finish(t0);
        for (i = 1; i < vm__nids(); i++)
            if (vm__threads[i].has_pthread)
                pthread_join(vm__threads[i].pthread, NULL);
    } else {
        unsigned m = vm__opts.kthreads;
        __atomic_store_n(&t0->state, VM_T_RUNNABLE, __ATOMIC_RELEASE);
        green_prepare(t0);
        rq_push(t0);
        running = m;                      /* every worker counts from now */
        for (i = 0; i < m; i++)
            workers[i].index = i;
        for (i = 1; i < m; i++) {
            int err = pthread_create(&workers[i].pthread, NULL, worker_main, &workers[i]);
            if (err != 0)
                vm__fatal("pthread_create: %s", strerror(err));
        }
        worker_loop(&workers[0]);         /* the main kernel thread is worker 0 */
        for (i = 1; i < m; i++)
            pthread_join(workers[i].pthread, NULL);
        code = t0->exit_code;
        for (i = 0; i < vm__nids(); i++)
            free(vm__threads[i].stack);
    }
    if (vm__opts.verbose)
        vm__heap_stats();
    fflush(stdout);
    return code;
}
