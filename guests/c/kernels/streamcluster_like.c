/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* streamcluster-like kernel (PARSEC streamcluster, written from its
 * published description, not its source): online k-median clustering of a
 * stream of points, processed in chunks.  For each chunk the 8 threads
 * assign their share of the points to the nearest open center; then, for a
 * series of candidate points, every thread computes the gain of opening the
 * candidate for its own points (reading the shared candidate and the shared
 * center list) into a per-thread partial sum; after a barrier one thread
 * adds the partial sums and opens the candidate if the total gain exceeds
 * the facility cost; after another barrier the threads reassign their
 * points.  Memory behaviour: the candidate and centers are read by all
 * threads (read-shared), partial sums are written privately and read by one
 * thread after a barrier, points are private.  Integer coordinates.
 * Usage: streamcluster_like [POINTS_PER_CHUNK [CHUNKS]] (default 256 2).
 * Expected: race-free. */
#include <lard.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
#define DIM 8
#define MAX_CENTERS 64
#define CANDIDATES 12
#define FACILITY_COST 40000

struct point { int32_t c[DIM]; uint32_t assign; uint32_t pad; int64_t cost; };

static struct point *points;              /* the current chunk */
static int32_t centers[MAX_CENTERS][DIM];
static uint32_t n_centers;
static int64_t partial[THREADS];
static uint32_t open_flag;
static unsigned chunk;
static lard_barrier_t barrier;

static int64_t dist(const int32_t *a, const int32_t *b)
{
    int64_t d = 0;
    for (int i = 0; i < DIM; i++) {
        int64_t x = (int32_t)lard_load32((const uint32_t *)(const void *)&a[i])
                  - (int32_t)lard_load32((const uint32_t *)(const void *)&b[i]);
        d += x * x;
    }
    return d;
}

static void assign_all(unsigned lo, unsigned hi)
{
    uint32_t n = lard_load32(&n_centers);
    for (unsigned i = lo; i < hi; i++) {
        int64_t best = -1;
        uint32_t arg = 0;
        for (uint32_t k = 0; k < n; k++) {
            int64_t d = dist(points[i].c, centers[k]);
            if (best < 0 || d < best) { best = d; arg = k; }
        }
        lard_store32(&points[i].assign, arg);
        lard_store64((uint64_t *)&points[i].cost, (uint64_t)best);
    }
}

static void *worker(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    unsigned lo = chunk * t / THREADS, hi = chunk * (t + 1) / THREADS;
    assign_all(lo, hi);
    lard_barrier_wait(&barrier);
    for (unsigned cand = 0; cand < CANDIDATES; cand++) {
        unsigned x = (cand * 7919u) % chunk;      /* the candidate point */
        int64_t gain = 0;
        for (unsigned i = lo; i < hi; i++) {
            int64_t d = dist(points[i].c, points[x].c);
            int64_t c = (int64_t)lard_load64((uint64_t *)&points[i].cost);
            if (d < c)
                gain += c - d;
        }
        lard_store64((uint64_t *)&partial[t], (uint64_t)gain);
        if (lard_barrier_wait(&barrier)) {       /* one thread decides */
            int64_t total = 0;
            for (unsigned k = 0; k < THREADS; k++)
                total += (int64_t)lard_load64((uint64_t *)&partial[k]);
            uint32_t n = lard_load32(&n_centers);
            uint32_t open = total > FACILITY_COST && n < MAX_CENTERS;
            if (open) {
                for (int i = 0; i < DIM; i++)
                    lard_store32((uint32_t *)&centers[n][i], lard_load32((uint32_t *)&points[x].c[i]));
                lard_store32(&n_centers, n + 1);
            }
            lard_store32(&open_flag, open);
        }
        lard_barrier_wait(&barrier);
        if (lard_load32(&open_flag))
            assign_all(lo, hi);
        lard_barrier_wait(&barrier);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    chunk = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 256;
    unsigned chunks = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 2;
    points = malloc(chunk * sizeof *points);
    if (!points || chunk < THREADS)
        return 1;
    lard_barrier_init(&barrier, THREADS);
    uint64_t seed = 99;
    for (int i = 0; i < DIM; i++)
        lard_store32((uint32_t *)&centers[0][i], 0);
    lard_store32(&n_centers, 1);
    int64_t total_cost = 0;
    for (unsigned ch = 0; ch < chunks; ch++) {
        for (unsigned i = 0; i < chunk; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            unsigned cluster = (unsigned)(seed >> 60);      /* 16 clusters */
            for (int d = 0; d < DIM; d++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                int32_t v = (int32_t)(cluster * 97 % 200) - 100 + (int32_t)((seed >> 40) % 21) - 10;
                lard_store32((uint32_t *)&points[i].c[d], (uint32_t)v);
            }
        }
        lard_thread_t th[THREADS];
        for (unsigned t = 0; t < THREADS; t++)
            lard_spawn(&th[t], worker, (void *)(uintptr_t)t);
        for (unsigned t = 0; t < THREADS; t++)
            lard_join(th[t], NULL);
        for (unsigned i = 0; i < chunk; i++)
            total_cost += (int64_t)lard_load64((uint64_t *)&points[i].cost);
    }
    printf("centers = %u\ncost = %lld\n", lard_load32(&n_centers), (long long)total_cost);
    return 0;
}
