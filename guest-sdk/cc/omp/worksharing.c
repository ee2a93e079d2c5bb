/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: worksharing units: sections, loops and static loops
 * (included by cc/gomp.c). */

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
 * are cleared, and the thread continues as the task that got it.  With
 * `keep`, its language thread stays there (its id not retired yet). */
static void unit_stop(struct unit *u, struct lardcc_dvc *join, uintptr_t top,
                      struct kept_units *keep)
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
        struct team *T = thr.cur_team;
        lardcc_barrier_contribute(&T->bar,
                                  (int)(__atomic_load_n(&T->bar.gen, __ATOMIC_ACQUIRE) & 1),
                                  lardcc_clock(id));
    }
    if (top != 0)
        lardcc_clear_stack_below(top);
    if (keep != NULL) {
        kept_add(keep, id);
    } else {
        final = lardcc_own(id);
        lardcc_id_drop_clock(id); /* `join` or the barrier phase has it */
        lardcc_id_retire(id, final);
    }
    lardcc_switch(u->creator);
}

static void unit_end(void)
{
    struct task *me = current_task();
    /* While its task has thread-bound state, the next unit comes after. */
    if (thr.work_unit.id != LARD__NO_THREAD && thread_bound(me))
        lardcc_vc_join(&me->units_fin, lardcc_clock(thr.work_unit.id));
    unit_stop(&thr.work_unit, NULL, me->stack_top, NULL);
}

/* libgomp handed a unit to this thread (inside a parallel region: a
 * construct outside any runs as its encountering task); true if it runs as
 * a language thread of its own. */
static bool unit_begin(void)
{
    struct task *me = current_task();
    if (thr.cur_team == NULL || !me->implicit)
        return false;
    unit_start(&thr.work_unit);
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
 * With `split` (lard-cc's default; > 0: in a window of that many language
 * threads, omp/window.c; < 0: every unit its own, lard-cc
 * --lard-omp-iterations): every chunk of the thread's
 * share (every iteration without a chunk size: under some team size each
 * runs on a thread of its own) is a worksharing unit, forked from the
 * implicit task like a chunk libgomp hands out — unless the program fixed
 * the team at one thread (num_threads(1), a false `if` clause), where no
 * other team size can run them.  A chunk of a static
 * schedule is `chunk` iterations except the loop's last, which is its
 * thread's last, so counting the iterations finds the boundaries.  The
 * units' ends join `thr.static_loop.fin`, which the implicit task acquires
 * when it next arrives at a barrier (the loop's own, or with nowait the
 * next one): what the thread does after the loop — the next static loop
 * included — is concurrent with the units it ran, as after a loop whose
 * chunks libgomp hands out.  The one guarantee OpenMP gives across a
 * nowait (5.2 §11.5.3): in two static loops of the same binding region
 * with the same number of iterations and the same chunk size, iteration i
 * runs on the same thread in both.  So a thread keeps the language threads
 * of the units it ran in a nowait loop until its next barrier, and unit k
 * of its next static loop of the same shape in that team (the k-th it
 * runs, the same iterations) comes after unit k of that loop — in a window
 * after its slot, which holds unit k (and the units W apart, as in one
 * loop). */

/* The running task or unit acquires the ends of a loop's units or lanes,
 * collected in `fin`, which starts empty again. */
static void acquire_ends(struct lardcc_dvc *fin)
{
    if (fin->hi != 0) {
        lardcc_acquire_dvc(fin);
        lardcc_dvc_clear(fin);
    }
}

static void kept_add(struct kept_units *k, uint32_t id)
{
    if (k->n == k->cap) {
        unsigned long cap = k->cap != 0 ? 2 * k->cap : 64;
        uint32_t *ids;
        LARDCC_RUNTIME(ids = realloc(k->ids, cap * sizeof *ids));
        if (ids == NULL)
            lard__fatal("lard-cc: out of memory (static loop units)");
        k->ids = ids;
        k->cap = cap;
    }
    k->ids[k->n++] = id;
}

/* The kept units' language threads end for good (their ends are in the
 * loop's `fin` already). */
static void kept_release(struct kept_units *k)
{
    unsigned long i;
    for (i = 0; i < k->n; i++) {
        uint64_t final = lardcc_own(k->ids[i]);
        lardcc_id_drop_clock(k->ids[i]);
        lardcc_id_retire(k->ids[i], final);
    }
    k->n = 0;
    k->team = NULL;
}

/* The implicit task arrives at a barrier or ends: the static loops' units
 * it ran since the last one come before. */
static void static_loops_settle(void)
{
    struct static_loop *L = &thr.static_loop;
    acquire_ends(&L->fin);
    kept_release(&L->kept);
    L->after_kept = 0;
}

static void static_unit_end(void)
{
    struct task *me;
    struct static_loop *L = &thr.static_loop;
    if (thr.work_unit.id == LARD__NO_THREAD)
        return;
    me = current_task();
    if (thread_bound(me))
        lardcc_vc_join(&me->units_fin, lardcc_clock(thr.work_unit.id));
    unit_stop(&thr.work_unit, &L->fin, me->stack_top, L->nowait ? &L->keeping : NULL);
}

/* The unit that just started, the k-th of its loop on this thread, comes
 * after the same unit of the kept loop. */
static void after_kept_unit(const struct kept_units *k, unsigned long unit)
{
    unsigned long i = k->w > 0 ? unit % (unsigned long)k->w : unit;
    if (i < k->n && (k->w == 0 || unit < (unsigned long)k->w))
        lardcc_acquire_vc(lardcc_clock(k->ids[i]));
}

void __lardcc_omp_static_begin(long chunk, long split, long iterations, long nowait);
void __lardcc_omp_static_begin(long chunk, long split, long iterations, long nowait)
{
    struct static_loop *L = &thr.static_loop;
    long w = split > 0 ? (split < WINDOW_MAX ? split : WINDOW_MAX) : 0;
    thr.static_prologue = 1;
    L->split = split != 0;
    L->chunk = chunk > 0 ? chunk : 1;
    L->iterations = iterations;
    L->nowait = nowait != 0;
    L->ran = 0;
    L->units = 0;
    L->site = (uintptr_t)__builtin_return_address(0);
    L->win.w = 0;
    if (split != 0 && L->fin.v == NULL && thr.spare_fin.v != NULL) {
        L->fin = thr.spare_fin;
        memset(&thr.spare_fin, 0, sizeof thr.spare_fin);
    }
    /* The kept units serve a loop of the same shape, in the same team. */
    L->after_kept = L->kept.team != NULL && L->kept.team == thr.cur_team && split != 0 &&
                    iterations >= 0 && L->kept.iterations == iterations &&
                    L->kept.chunk == L->chunk && L->kept.w == w;
    if (!L->after_kept)
        kept_release(&L->kept);
    if (split > 0)
        window_open(&L->win, split, 0, LARDCC_UNIT_ITERATIONS, L->site, L->chunk);
}

/* Whether a static loop's units run as language threads here: in a team
 * that may have more than one thread, as an implicit task. */
static bool static_units_here(void)
{
    return thr.cur_team != NULL && !thr.cur_team->one && current_task()->implicit;
}

void __lardcc_omp_static_iter(long index);
void __lardcc_omp_static_iter(long index)
{
    struct static_loop *L = &thr.static_loop;
    thr.static_prologue = 0;
    if (!L->split || (L->ran != 0 && L->ran++ < L->chunk))
        return;
    L->ran = 1;
    if (L->win.w > 0) {
        if (L->win.units == 0 && !static_units_here()) {
            L->split = 0; /* no team: the loop runs as its encountering task */
        } else {
            window_next(&L->win, index, current_task()->stack_top);
            if (L->after_kept)
                after_kept_unit(&L->kept, L->win.units - 1);
        }
        return;
    }
    static_unit_end();
    if (thr.cur_team != NULL && !thr.cur_team->one && unit_begin()) {
        note_unit(LARDCC_UNIT_ITERATIONS, L->site, (uint64_t)index, (uint64_t)L->chunk);
        if (L->after_kept)
            after_kept_unit(&L->kept, L->units);
        L->units++;
    } else {
        L->split = 0; /* no team: the loop runs as its encountering task */
    }
}

void __lardcc_omp_static_end(void);
void __lardcc_omp_static_end(void)
{
    struct static_loop *L = &thr.static_loop;
    thr.static_prologue = 0;
    if (!L->split)
        return;
    L->split = 0;
    if (L->win.w > 0)
        window_close(&L->win, &L->fin, current_task()->stack_top,
                     L->nowait ? &L->keeping : NULL);
    else
        static_unit_end();
    /* This loop's units replace the kept ones: with nowait, a loop of its
     * shape may follow it. */
    kept_release(&L->kept);
    L->after_kept = 0;
    if (L->keeping.n != 0) {
        struct kept_units k = L->kept;
        L->kept = L->keeping;
        L->keeping = k;
        L->kept.w = L->win.w;
        L->kept.iterations = L->iterations;
        L->kept.chunk = L->chunk;
        L->kept.team = thr.cur_team;
    }
    if (!L->nowait)
        acquire_ends(&L->fin); /* its barrier follows */
    lardcc_floors_alone();
}
