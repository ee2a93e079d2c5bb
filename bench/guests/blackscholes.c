/* Floating-point guest of bench/fp.py: PARSEC blackscholes' kernel in
 * plain C (written from its published description): a portfolio of
 * European options priced with the Black-Scholes closed form through
 * libm's exp, log and sqrt, the cumulative normal distribution by its
 * polynomial approximation, data-parallel over 4 threads (static chunks),
 * the portfolio priced RUNS times.  Double precision SSE2 scalar code.
 *
 * usage: blackscholes [OPTIONS [RUNS]]   (defaults: 20000 options, 20 runs)
 *
 * Prints the sum of the prices, rounded to 6 significant digits (libm may
 * take another code path natively than under an emulator's CPUID). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4

struct option { double spot, strike, rate, vol, time; int call; };

static struct option *opts;
static double *prices;
static int n = 20000, runs = 20;

static double cndf(double x)
{
    int neg = x < 0;
    if (neg)
        x = -x;
    double k = 1.0 / (1.0 + 0.2316419 * x);
    double poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937
                  + k * (-1.821255978 + k * 1.330274429))));
    double r = 1.0 - exp(-0.5 * x * x) * 0.39894228040143270286 * poly;
    return neg ? 1.0 - r : r;
}

static void *worker(void *arg)
{
    long t = (long)arg;
    int lo = n * t / NT, hi = n * (t + 1) / NT;
    for (int r = 0; r < runs; r++) {
        for (int i = lo; i < hi; i++) {
            const struct option *o = &opts[i];
            double sq = o->vol * sqrt(o->time);
            double d1 = (log(o->spot / o->strike) + (o->rate + 0.5 * o->vol * o->vol) * o->time) / sq;
            double d2 = d1 - sq;
            double disc = o->strike * exp(-o->rate * o->time);
            prices[i] = o->call ? o->spot * cndf(d1) - disc * cndf(d2)
                                : disc * cndf(-d2) - o->spot * cndf(-d1);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n = atoi(argv[1]);
    if (argc > 2)
        runs = atoi(argv[2]);
    opts = malloc(n * sizeof *opts);
    prices = malloc(n * sizeof *prices);
    unsigned long long s = 88172645463325252ull;
    for (int i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        opts[i].spot = 50 + (double)(s % 10000) / 100.0;
        opts[i].strike = 50 + (double)((s >> 16) % 10000) / 100.0;
        opts[i].rate = 0.01 + (double)((s >> 32) % 100) / 1000.0;
        opts[i].vol = 0.05 + (double)((s >> 40) % 100) / 200.0;
        opts[i].time = 0.1 + (double)((s >> 48) % 100) / 50.0;
        opts[i].call = (s >> 60) & 1;
    }
    pthread_t th[NT];
    for (long t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += prices[i];
    printf("options = %d, sum = %.6g\n", n, sum);
    return 0;
}
