/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: parallel regions (included by cc/gomp.c). */

/* ------------------------------------------------------------- parallel */

/* A region's static loop storage (window slots, all free again, and the
 * units' ends, acquired) is kept for the kernel thread's next region; a
 * region nested in another's loop frees its own. */
static void keep_loop_storage(struct static_loop *L)
{
    LARDCC_RUNTIME(free(L->kept.ids));
    LARDCC_RUNTIME(free(L->keeping.ids));
    if (L->win.slot != NULL) {
        if (thr.spare_slots == NULL)
            thr.spare_slots = L->win.slot;
        else
            LARDCC_RUNTIME(free(L->win.slot));
    }
    if (L->fin.v != NULL && thr.spare_fin.v == NULL) {
        lardcc_dvc_clear(&L->fin);
        thr.spare_fin = L->fin;
    } else {
        lardcc_dvc_free(&L->fin);
    }
}

static void team_body(void *arg)
{
    struct team *T = arg;
    struct team *prev_team = thr.cur_team;
    struct task *prev_task = thr.cur_task;
    struct task *implicit = xmalloc(sizeof *implicit);
    uint32_t prev_id = lardcc_me(), id = prev_id, n = (uint32_t)omp_get_num_threads(), stack;
    uint32_t prev_cg;
    int worker = __real_omp_get_thread_num() != 0, slot;
    struct unit saved_unit;
    struct doacross *saved_doacross;
    uint32_t saved_doacross_seq;
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
    thr.cur_team = T;
    thr.cur_task = implicit;
    prev_cg = thr.cur_cg;
    thr.cur_cg = T->cg;
    saved_unit = thr.work_unit;
    saved_doacross = thr.doacross;
    saved_doacross_seq = thr.doacross_seq;
    thr.doacross = NULL;
    thr.doacross_seq = 0;
    saved_loop = thr.static_loop;
    saved_prologue = thr.static_prologue;
    thr.work_unit.id = LARD__NO_THREAD;
    memset(&thr.static_loop, 0, sizeof thr.static_loop);
    thr.static_prologue = 0;
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(T->fn(T->data));
    lardcc_stack_attach(stack);
    static_loops_settle();
    keep_loop_storage(&thr.static_loop);
    thr.work_unit = saved_unit;
    thr.doacross = saved_doacross;
    thr.doacross_seq = saved_doacross_seq;
    thr.static_loop = saved_loop;
    thr.static_prologue = saved_prologue;
    final = lardcc_own(id);
    owned_forget(implicit);
    if (worker)
        lard_note_thread_exit();
    slot = lardcc_barrier_arrive(&T->bar, n);
    if (!worker)
        T->final_slot = slot;
    thr.cur_team = prev_team;
    thr.cur_task = prev_task;
    thr.cur_cg = prev_cg;
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
    T->cg = thr.cur_cg;
    T->one = nt == 1; /* num_threads(1), or an `if` clause that is false */
}

static void team_end(struct team *T)
{
    lardcc_barrier_depart(&T->bar, T->final_slot);
    doacross_forget(T);
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
