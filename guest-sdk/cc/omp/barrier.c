/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: barriers (included by cc/gomp.c). */

/* ------------------------------------------------------------- barriers */

static void unit_end(void);

/* Explicit barriers and the implicit barriers at the end of worksharing
 * constructs without nowait: all-to-all among the team, and every task the
 * team created in the phase, and every unit of a static loop, happens
 * before every member continues. */
#define TEAM_BARRIER(ret_t, name, retexpr, before)                                    \
    ret_t __real_##name(void);                                                        \
    ret_t __wrap_##name(void)                                                         \
    {                                                                                 \
        struct team *T = thr.cur_team;                                                    \
        int slot;                                                                     \
        ret_t r;                                                                      \
        before                                                                        \
        static_loops_settle();                                                        \
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
        struct team *T = thr.cur_team;                                                    \
        int slot;                                                                     \
        before                                                                        \
        static_loops_settle();                                                        \
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
