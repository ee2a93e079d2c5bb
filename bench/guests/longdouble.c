/* Floating-point guest of bench/fp.py: long double (x87) arithmetic and
 * glibc's long double libm, whose x86-64 implementations are x87 code
 * (expl: fldl2e, frndint, f2xm1, fscale; logl: fyl2x; sinl/cosl: fsin,
 * fcos, fprem1; atan2l: fpatan; sqrtl: fsqrt). 4 threads each take a
 * static share of the points; every round each point gets a step of a
 * damped oscillator in long double and the libm functions of its state,
 * accumulated into a per-thread sum; one thread adds the sums after each
 * round.
 *
 * usage: longdouble [POINTS [ROUNDS]]   (defaults: 20000 points, 10 rounds)
 *
 * Prints the sum of the last round, rounded to 9 significant digits. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4

static int n = 20000, rounds = 10;
static long double *pos, *vel;
static long double part[NT];
static long double total;
static pthread_barrier_t bar;

static void *worker(void *arg)
{
    long t = (long)arg;
    int lo = n * t / NT, hi = n * (t + 1) / NT;
    const long double dt = 1e-3L, k = 2.5L, damp = 0.05L;
    for (int r = 0; r < rounds; r++) {
        long double s = 0;
        for (int i = lo; i < hi; i++) {
            long double x = pos[i], v = vel[i];
            long double a = -k * x - damp * v;
            v += a * dt;
            x += v * dt;
            pos[i] = x;
            vel[i] = v;
            long double e = expl(-x * x);
            long double l = logl(1.0L + x * x + v * v);
            long double w = sinl(x) * cosl(v) + atan2l(v, x + 2.0L);
            s += e * l + w / (1.0L + sqrtl(fabsl(x * v)));
        }
        part[t] = s;
        pthread_barrier_wait(&bar);
        if (t == 0) {
            total = 0;
            for (int j = 0; j < NT; j++)
                total += part[j];
        }
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n = atoi(argv[1]);
    if (argc > 2)
        rounds = atoi(argv[2]);
    pos = malloc(sizeof *pos * n);
    vel = malloc(sizeof *vel * n);
    if (!pos || !vel)
        return 1;
    for (int i = 0; i < n; i++) {
        pos[i] = (long double)((i * 7919) % n) / n * 4.0L - 2.0L;
        vel[i] = (long double)((i * 104729) % n) / n - 0.5L;
    }
    pthread_barrier_init(&bar, NULL, NT);
    pthread_t th[NT];
    for (long t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    printf("sum %.9Lg\n", total);
    return 0;
}
