/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* fluidanimate-like kernel (PARSEC fluidanimate, written from its published
 * description, not its source): smoothed-particle hydrodynamics on a grid of
 * cells, the grid split into 8 slabs, one thread per slab.  Each time step
 * has phases separated by barriers: rebuild (each thread clears and refills
 * the per-cell particle counts of its slab), densities (for each particle of
 * its slab, every particle in the 3x3 neighbouring cells, including cells of
 * the neighbouring slabs), forces (the same neighbourhood, reading the
 * densities written in the previous phase) and advance (each thread moves
 * its own particles).  Memory behaviour: private writes, reads of
 * neighbouring threads' particles across slab borders after a barrier.
 * Particles stay in their cell (positions are reflected at its walls), so
 * ownership never changes.  Fixed-point (integer) arithmetic.
 * Usage: fluidanimate_like [CELLS_PER_SLAB_ROW [STEPS]] (default 4 3).
 * Expected: race-free. */
#include <lard.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
#define PER_CELL 4            /* particles per cell */
#define SCALE 1024            /* fixed point: one cell is SCALE units wide */

struct particle { int32_t x, y, vx, vy, density, fx, fy, pad; };

static unsigned width, height, steps;   /* grid: width x height cells */
static struct particle *parts;          /* PER_CELL per cell, cell-major */
static uint32_t *counts;                /* particles per cell (rebuilt) */
static lard_barrier_t barrier;

static struct particle *cell(unsigned cx, unsigned cy) { return &parts[(cy * width + cx) * PER_CELL]; }

static int32_t ld(const int32_t *p) { return (int32_t)lard_load32((const uint32_t *)(const void *)p); }
static void st(int32_t *p, int32_t v) { lard_store32((uint32_t *)(void *)p, (uint32_t)v); }

/* Visits the particles of the 3x3 neighbourhood of cell (cx, cy). */
static int64_t neighbours(unsigned cx, unsigned cy, const struct particle *me, int phase, int64_t *fy)
{
    int64_t acc = 0;
    *fy = 0;
    int32_t mx = ld(&me->x) + (int32_t)cx * SCALE, my = ld(&me->y) + (int32_t)cy * SCALE;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int nx = (int)cx + dx, ny = (int)cy + dy;
            if (nx < 0 || ny < 0 || nx >= (int)width || ny >= (int)height)
                continue;
            struct particle *c = cell((unsigned)nx, (unsigned)ny);
            uint32_t n = lard_load32(&counts[(unsigned)ny * width + (unsigned)nx]);
            for (uint32_t k = 0; k < n; k++) {
                struct particle *p = &c[k];
                if (p == me)
                    continue;
                int64_t ddx = ld(&p->x) + nx * SCALE - mx, ddy = ld(&p->y) + ny * SCALE - my;
                int64_t d2 = ddx * ddx + ddy * ddy, h2 = (int64_t)SCALE * SCALE;
                if (d2 >= h2)
                    continue;
                int64_t w = (h2 - d2) >> 10;
                if (phase == 0) {
                    acc += w;
                } else {
                    int64_t press = (ld(&p->density) + ld(&me->density)) >> 4;
                    acc -= ddx * press / SCALE * w / h2;
                    *fy -= ddy * press / SCALE * w / h2;
                }
            }
        }
    }
    return acc;
}

static void *worker(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    unsigned y0 = height * t / THREADS, y1 = height * (t + 1) / THREADS;
    for (unsigned s = 0; s < steps; s++) {
        for (unsigned cy = y0; cy < y1; cy++)        /* rebuild */
            for (unsigned cx = 0; cx < width; cx++)
                lard_store32(&counts[cy * width + cx], PER_CELL);
        lard_barrier_wait(&barrier);
        for (unsigned cy = y0; cy < y1; cy++)        /* densities */
            for (unsigned cx = 0; cx < width; cx++)
                for (unsigned k = 0; k < PER_CELL; k++) {
                    struct particle *p = &cell(cx, cy)[k];
                    int64_t unused;
                    st(&p->density, (int32_t)(neighbours(cx, cy, p, 0, &unused) >> 6));
                }
        lard_barrier_wait(&barrier);
        for (unsigned cy = y0; cy < y1; cy++)        /* forces */
            for (unsigned cx = 0; cx < width; cx++)
                for (unsigned k = 0; k < PER_CELL; k++) {
                    struct particle *p = &cell(cx, cy)[k];
                    int64_t fy, fx = neighbours(cx, cy, p, 1, &fy);
                    st(&p->fx, (int32_t)fx);
                    st(&p->fy, (int32_t)fy - 4);   /* gravity */
                }
        lard_barrier_wait(&barrier);
        for (unsigned cy = y0; cy < y1; cy++)        /* advance */
            for (unsigned cx = 0; cx < width; cx++)
                for (unsigned k = 0; k < PER_CELL; k++) {
                    struct particle *p = &cell(cx, cy)[k];
                    int32_t vx = ld(&p->vx) + ld(&p->fx) / 8, vy = ld(&p->vy) + ld(&p->fy) / 8;
                    int32_t x = ld(&p->x) + vx, y = ld(&p->y) + vy;
                    if (x < 0 || x >= SCALE) { vx = -vx; x = x < 0 ? -x : 2 * SCALE - 1 - x; }
                    if (y < 0 || y >= SCALE) { vy = -vy; y = y < 0 ? -y : 2 * SCALE - 1 - y; }
                    if (x < 0 || x >= SCALE) x = SCALE / 2;
                    if (y < 0 || y >= SCALE) y = SCALE / 2;
                    st(&p->vx, vx); st(&p->vy, vy); st(&p->x, x); st(&p->y, y);
                }
        lard_barrier_wait(&barrier);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned rows = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4;
    steps = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 3;
    width = 2 * rows;
    height = THREADS * rows;
    parts = calloc((size_t)width * height * PER_CELL, sizeof *parts);
    counts = calloc((size_t)width * height, sizeof *counts);
    if (!parts || !counts || rows == 0)
        return 1;
    uint64_t seed = 7;
    for (size_t i = 0; i < (size_t)width * height * PER_CELL; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        st(&parts[i].x, (int32_t)((seed >> 33) % SCALE));
        st(&parts[i].y, (int32_t)((seed >> 43) % SCALE));
        st(&parts[i].vx, (int32_t)((seed >> 20) % 17) - 8);
        st(&parts[i].vy, 0);
    }
    lard_barrier_init(&barrier, THREADS);
    lard_thread_t th[THREADS];
    for (unsigned t = 0; t < THREADS; t++)
        lard_spawn(&th[t], worker, (void *)(uintptr_t)t);
    for (unsigned t = 0; t < THREADS; t++)
        lard_join(th[t], NULL);
    int64_t sx = 0, sy = 0, sd = 0;
    for (size_t i = 0; i < (size_t)width * height * PER_CELL; i++) {
        sx += ld(&parts[i].x);
        sy += ld(&parts[i].y);
        sd += ld(&parts[i].density);
    }
    printf("particles = %zu\nchecksum = %lld %lld %lld\n", (size_t)width * height * PER_CELL,
           (long long)sx, (long long)sy, (long long)sd);
    return 0;
}
