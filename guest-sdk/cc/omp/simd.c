/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: simd loops (included by cc/gomp.c). */

/* ------------------------------------------------------------ simd loops */

/* With --lard-omp-iterations the plugin marks simd loops too (not those
 * with an `ordered simd` region): every iteration is a SIMD lane, a
 * language thread of its own forked from the task or unit that runs the
 * loop, since OpenMP lets lanes run concurrently (5.2 §10.4).  With
 * safelen(l), two iterations l or more apart never run concurrently: lane j
 * acquires the end of lane j - l, kept in a ring of the last l ends (for l
 * above LANE_RING, of lane j - LANE_RING: more order, which can hide a race
 * but not invent one).  Every lane's end joins a clock the loop's task
 * acquires at the end mark.  A lane starts with its private copies and the
 * previous lane's dead frames without history.  Nothing that starts threads or
 * worksharing may be nested in a simd loop, so a thread runs one at a
 * time. */
static unsigned long ring_len(const struct simd_loop *L)
{
    return L->safelen < LANE_RING ? (unsigned long)L->safelen : LANE_RING;
}

static void simd_lane_end(void)
{
    struct simd_loop *L = &thr.simd_loop;
    if (L->lane.id == LARD__NO_THREAD)
        return;
    if (L->safelen > 0)
        lardcc_vc_copy(&L->ring[(L->lanes - 1) % ring_len(L)], lardcc_clock(L->lane.id));
    unit_stop(&L->lane, &L->fin, 0);
}

void __lardcc_omp_simd_begin(long safelen, long split);
void __lardcc_omp_simd_begin(long safelen, long split)
{
    struct simd_loop *L = &thr.simd_loop;
    L->split = split != 0 && !lardcc_in_runtime;
    L->safelen = safelen > 0 ? safelen : 0;
    L->lanes = 0;
    L->site = (uintptr_t)__builtin_return_address(0);
    if (L->split && L->safelen > 0 && L->ring == NULL)
        L->ring = xmalloc(LANE_RING * sizeof *L->ring);
}

void __lardcc_omp_simd_iter(long index);
void __lardcc_omp_simd_iter(long index)
{
    struct simd_loop *L = &thr.simd_loop;
    unsigned long j;
    if (!L->split)
        return;
    simd_lane_end();
    lardcc_clear_dead_stack(); /* the previous lane's calls */
    j = L->lanes++;
    unit_start(&L->lane);
    if (L->safelen > 0 && j >= ring_len(L))
        lardcc_acquire_vc(&L->ring[j % ring_len(L)]);
    note_unit(LARDCC_UNIT_LANE, L->site, (uint64_t)index, (uint64_t)L->safelen);
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
    simd_lane_end();
    acquire_ends(&L->fin);
    lardcc_floors_alone();
}
