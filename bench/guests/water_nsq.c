/* Floating-point guest of bench/fp.py: the O(n^2) pairwise force loop of
 * SPLASH-2's WATER-NSQUARED in plain C (written from its published
 * description, one site per molecule, a Lennard-Jones potential with a
 * cutoff instead of the water model): 4 threads each take a static share
 * of the molecules and accumulate forces into private arrays, reduced by
 * one thread after a barrier, then every thread moves its molecules.
 * Double precision SSE2 arithmetic with sqrt and division in the inner loop.
 *
 * usage: water_nsq [MOLECULES [STEPS]]   (defaults: 1200 molecules, 4 steps)
 *
 * Prints the potential energy of the last step, rounded to 6 significant
 * digits. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4

static int n = 1200, steps = 4;
static double *x, *y, *z, *vx, *vy, *vz;
static double *fx[NT], *fy[NT], *fz[NT];
static double epot[NT];
static pthread_barrier_t bar;

static void *worker(void *arg)
{
    long t = (long)arg;
    int lo = n * t / NT, hi = n * (t + 1) / NT;
    const double cut2 = 9.0, dt = 1e-4;
    for (int s = 0; s < steps; s++) {
        double *ax = fx[t], *ay = fy[t], *az = fz[t], e = 0;
        for (int i = 0; i < n; i++)
            ax[i] = ay[i] = az[i] = 0;
        for (int i = lo; i < hi; i++) {
            for (int j = i + 1; j < n; j++) {
                double dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
                double r2 = dx * dx + dy * dy + dz * dz;
                if (r2 > cut2)
                    continue;
                double r = sqrt(r2), inv2 = 1.0 / r2, inv6 = inv2 * inv2 * inv2;
                e += 4.0 * inv6 * (inv6 - 1.0) + 0.01 * r;
                double f = (48.0 * inv6 * inv6 - 24.0 * inv6) * inv2;
                ax[i] += f * dx, ay[i] += f * dy, az[i] += f * dz;
                ax[j] -= f * dx, ay[j] -= f * dy, az[j] -= f * dz;
            }
        }
        epot[t] = e;
        pthread_barrier_wait(&bar);
        for (int i = lo; i < hi; i++) {
            double gx = 0, gy = 0, gz = 0;
            for (int k = 0; k < NT; k++)
                gx += fx[k][i], gy += fy[k][i], gz += fz[k][i];
            vx[i] += gx * dt, vy[i] += gy * dt, vz[i] += gz * dt;
        }
        pthread_barrier_wait(&bar);
        for (int i = lo; i < hi; i++)
            x[i] += vx[i] * dt, y[i] += vy[i] * dt, z[i] += vz[i] * dt;
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n = atoi(argv[1]);
    if (argc > 2)
        steps = atoi(argv[2]);
    double **arrs[] = { &x, &y, &z, &vx, &vy, &vz };
    for (int k = 0; k < 6; k++)
        *arrs[k] = calloc(n, sizeof(double));
    for (int t = 0; t < NT; t++) {
        fx[t] = malloc(n * sizeof(double));
        fy[t] = malloc(n * sizeof(double));
        fz[t] = malloc(n * sizeof(double));
    }
    /* A jittered cubic lattice of spacing 1.1. */
    int side = (int)ceil(cbrt((double)n));
    unsigned long long s = 2463534242ull;
    for (int i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = 1.1 * (i % side) + (double)(s % 1000) / 20000.0;
        y[i] = 1.1 * (i / side % side) + (double)((s >> 20) % 1000) / 20000.0;
        z[i] = 1.1 * (i / side / side) + (double)((s >> 40) % 1000) / 20000.0;
    }
    pthread_barrier_init(&bar, NULL, NT);
    pthread_t th[NT];
    for (long t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    double e = 0;
    for (int t = 0; t < NT; t++)
        e += epot[t];
    printf("molecules = %d, energy = %.6g\n", n, e);
    return 0;
}
