/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* blackscholes-like kernel (PARSEC blackscholes, written from its published
 * description, not its source): a portfolio of European options priced with
 * the Black-Scholes closed form, data-parallel over 8 threads, each thread a
 * static contiguous chunk of the portfolio, the whole portfolio priced
 * several times (PARSEC repeats the run to lengthen it).  Memory behaviour:
 * read-only option records shared by nobody at run time, private writes of
 * the prices, one join at the end -- almost no sharing.
 * Every data access is Tracked; exp/log/CNDF are computed here with + - * /
 only, so native and emulated runs print the same checksum.
 * Usage: blackscholes_like [OPTIONS [RUNS]] (default 1024 4).
 * Expected: race-free. */
#include <lard.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8

struct option { double spot, strike, rate, vol, time; uint64_t call; };

static struct option *opts;
static double *prices;
static unsigned n_opts, runs;

static inline double ldd(const double *p)
{
    uint64_t u = lard_load64((const uint64_t *)(const void *)p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline void std_(double *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    lard_store64((uint64_t *)(void *)p, u);
}

static double my_exp(double x)
{
    int k = 0;
    while (x > 0.5) { x /= 2; k++; }
    while (x < -0.5) { x /= 2; k++; }
    double term = 1, sum = 1;
    for (int i = 1; i < 16; i++) { term *= x / i; sum += term; }
    while (k-- > 0) sum *= sum;
    return sum;
}

static double my_log(double x)        /* x > 0 */
{
    int k = 0;
    while (x > 1.5) { x /= 2; k++; }
    while (x < 0.75) { x *= 2; k--; }
    double y = (x - 1) / (x + 1), y2 = y * y, term = y, sum = 0;
    for (int i = 1; i < 30; i += 2) { sum += term / i; term *= y2; }
    return 2 * sum + k * 0.69314718055994530942;
}

static double my_sqrt(double x)        /* x > 0: Newton from above */
{
    double y = x > 1 ? x : 1;
    for (int i = 0; i < 40; i++)
        y = (y + x / y) / 2;
    return y;
}

static double cndf(double x)           /* Abramowitz-Stegun 26.2.17 */
{
    int neg = x < 0;
    if (neg) x = -x;
    double k = 1 / (1 + 0.2316419 * x);
    double poly = k * (0.319381530 + k * (-0.356563782 + k * (1.781477937
                  + k * (-1.821255978 + k * 1.330274429))));
    double n = 1 - 0.39894228040143267794 * my_exp(-x * x / 2) * poly;
    return neg ? 1 - n : n;
}

static void *worker(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    unsigned lo = n_opts * t / THREADS, hi = n_opts * (t + 1) / THREADS;
    for (unsigned r = 0; r < runs; r++) {
        for (unsigned i = lo; i < hi; i++) {
            struct option *o = &opts[i];
            double s = ldd(&o->spot), k = ldd(&o->strike), rate = ldd(&o->rate);
            double v = ldd(&o->vol), tm = ldd(&o->time);
            double sq = v * my_sqrt(tm);
            double d1 = (my_log(s / k) + (rate + v * v / 2) * tm) / sq, d2 = d1 - sq;
            double disc = k * my_exp(-rate * tm);
            double p = lard_load64(&o->call) ? s * cndf(d1) - disc * cndf(d2)
                                             : disc * cndf(-d2) - s * cndf(-d1);
            std_(&prices[i], p);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    n_opts = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1024;
    runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 4;
    opts = malloc(n_opts * sizeof *opts);
    prices = malloc(n_opts * sizeof *prices);
    if (!opts || !prices)
        return 1;
    uint64_t seed = 12345;
    for (unsigned i = 0; i < n_opts; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned a = (unsigned)(seed >> 33);
        std_(&opts[i].spot, 50 + a % 100);
        std_(&opts[i].strike, 50 + (a >> 8) % 100);
        std_(&opts[i].rate, 0.01 + (a >> 16) % 10 * 0.005);
        std_(&opts[i].vol, 0.1 + (a >> 20) % 10 * 0.05);
        std_(&opts[i].time, 0.25 + (a >> 24) % 8 * 0.25);
        lard_store64(&opts[i].call, a & 1);
    }
    lard_thread_t th[THREADS];
    for (unsigned t = 0; t < THREADS; t++)
        lard_spawn(&th[t], worker, (void *)(uintptr_t)t);
    for (unsigned t = 0; t < THREADS; t++)
        lard_join(th[t], NULL);
    double sum = 0;
    for (unsigned i = 0; i < n_opts; i++)
        sum += ldd(&prices[i]);
    printf("options = %u\nportfolio = %lld\n", n_opts, (long long)(sum * 100));
    return 0;
}
