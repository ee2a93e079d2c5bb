/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: simd loops (included by cc/gomp.c). */

/* ------------------------------------------------------------ simd loops */

/* The plugin marks simd loops (not those with an `ordered simd` region):
 * every iteration is a SIMD lane, a language thread forked from the task
 * or unit that runs the loop, since OpenMP lets lanes run concurrently
 * (5.2 §10.4).  With safelen(l), two iterations l or more apart never run
 * concurrently: the lanes run in a window of l language threads whose
 * chain orders lane j after every lane up to j - l (omp/window.c; for l
 * above WINDOW_MAX, after those up to j - WINDOW_MAX: more order, which can
 * hide a race but not invent one).  Without safelen the lanes run in the
 * build's window (lard-cc's default), or each as a language thread of its
 * own (--lard-omp-iterations), whose end joins a clock the loop's task
 * acquires at the end mark.  A lane starts with its private copies and the
 * previous lane's dead frames without history.  Nothing that starts
 * threads or worksharing may be nested in a simd loop, so a thread runs
 * one at a time. */
static void simd_lane_end(void)
{
    struct simd_loop *L = &thr.simd_loop;
    if (L->lane.id != LARD__NO_THREAD)
        unit_stop(&L->lane, &L->fin, 0, NULL);
}

void __lardcc_omp_simd_begin(long safelen, long split);
void __lardcc_omp_simd_begin(long safelen, long split)
{
    struct simd_loop *L = &thr.simd_loop;
    L->split = split != 0 && !lardcc_in_runtime;
    L->safelen = safelen > 0 ? safelen : 0;
    L->site = (uintptr_t)__builtin_return_address(0);
    L->win.w = 0;
    if (L->split && L->safelen > 0)
        window_open(&L->win, L->safelen, 1, LARDCC_UNIT_LANE, L->site, L->safelen);
    else if (L->split && split > 0)
        window_open(&L->win, split, 0, LARDCC_UNIT_LANE, L->site, 0);
}

void __lardcc_omp_simd_iter(long index);
void __lardcc_omp_simd_iter(long index)
{
    struct simd_loop *L = &thr.simd_loop;
    if (!L->split)
        return;
    if (L->win.w > 0) {
        window_next(&L->win, index, 0);
        return;
    }
    simd_lane_end();
    lardcc_clear_dead_stack(); /* the previous lane's calls */
    unit_start(&L->lane);
    note_unit(LARDCC_UNIT_LANE, L->site, (uint64_t)index, 0);
}

/* A lane's private copy at [addr, addr + size) starts without history: gcc
 * gives every lane of a loop it did not vectorize the same storage (the
 * plugin passes each of the construct's variables that can be memory, and
 * the "omp simd array" slots, after the iteration mark). */
void __lardcc_omp_lane_private(void *addr, long size);
void __lardcc_omp_lane_private(void *addr, long size)
{
    if (thr.simd_loop.split && size > 0)
        lard_clear_history(addr, (size_t)size);
}

void __lardcc_omp_simd_end(void);
void __lardcc_omp_simd_end(void)
{
    struct simd_loop *L = &thr.simd_loop;
    if (!L->split)
        return;
    L->split = 0;
    if (L->win.w > 0)
        window_close(&L->win, &L->fin, 0, NULL);
    else
        simd_lane_end();
    acquire_ends(&L->fin);
    lardcc_floors_alone();
}
