/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: the teams construct (included by cc/gomp.c). */

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
    struct task *prev = thr.cur_task;
    struct team *prev_team = thr.cur_team;
    struct task *initial = xmalloc(sizeof *initial);
    uint32_t prev_id = lardcc_me(), id, stack, prev_cg = thr.cur_cg;
    lardcc_clear_dead_stack();
    id = lardcc_id_alloc(&G->fork_vc);
    lardcc_switch(id);
    note_unit(LARDCC_UNIT_TEAM, G->site, (uint64_t)omp_get_team_num(), 0);
    initial->id = id;
    initial->implicit = 1;
    initial->stack_top = (uintptr_t)__builtin_frame_address(0);
    thr.cur_task = initial;
    thr.cur_team = NULL;
    thr.cur_cg = initial->cg = cg_new();
    stack = lardcc_stack_detach();
    PROGRAM_CALLBACK(G->fn(G->data));
    lardcc_stack_attach(stack);
    lardcc_clear_dead_stack();
    lardcc_vc_join(&G->join, lardcc_clock(id));
    lard_note_thread_exit();
    lardcc_id_retire(id, lardcc_own(id));
    thr.cur_task = prev;
    thr.cur_team = prev_team;
    thr.cur_cg = prev_cg;
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

bool __real_GOMP_teams4(unsigned, unsigned, unsigned, bool);
bool __wrap_GOMP_teams4(unsigned low, unsigned high, unsigned thread_limit, bool first)
{
    bool r;
    unit_stop(&thr.team_unit, &thr.teams_join, thr.target_top, NULL);
    if (first) {
        thr.teams_outer_cg = thr.cur_cg;
        /* No num_teams clause: libgomp's host fallback would run one team,
         * hiding every race between teams.  The number is the
         * implementation's choice; lard's binary mode makes the same. */
        if (low == 0 && high == 0)
            low = high = LARDCC_TARGET_DEFAULT_TEAMS;
    }
    IN_LIBGOMP(r = __real_GOMP_teams4(low, high, thread_limit, first));
    if (r) {
        unit_start(&thr.team_unit);
        note_unit(LARDCC_UNIT_TEAM, (uintptr_t)__builtin_return_address(0),
                  (uint64_t)omp_get_team_num(), 0);
        thr.cur_cg = cg_new();
    } else {
        thr.cur_cg = thr.teams_outer_cg;
        lardcc_acquire_dvc(&thr.teams_join);
        lardcc_dvc_free(&thr.teams_join);
    }
    return r;
}

void __real_GOMP_target_ext(int, void (*)(void *), size_t, void **, size_t *, unsigned short *,
                            unsigned, void **, void **);
void __wrap_GOMP_target_ext(int device, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                            size_t *sizes, unsigned short *kinds, unsigned flags, void **depend,
                            void **args)
{
    uintptr_t outer = thr.target_top;
    thr.target_top = (uintptr_t)__builtin_frame_address(0);
    IN_LIBGOMP(__real_GOMP_target_ext(device, fn, mapnum, hostaddrs, sizes, kinds, flags, depend,
                                      args));
    thr.target_top = outer;
}
