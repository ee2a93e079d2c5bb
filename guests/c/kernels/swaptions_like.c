/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* swaptions-like kernel (PARSEC swaptions, written from its published
 * description, not its source): a portfolio of swaptions priced by
 * Monte-Carlo simulation of forward-rate paths (HJM-style), the swaptions
 * divided statically among 8 threads.  Per swaption a thread allocates
 * scratch arrays (forward-rate path, discount factors, random shocks),
 * simulates many paths with its own random number generator, and writes
 * the price and its standard error into the swaption's record.  Memory
 * behaviour: heavy use of private heap scratch memory allocated and freed
 * per swaption (lard_malloc/lard_free), read-only shared parameters, one
 * private result write per swaption.  Fixed-point (integer) arithmetic.
 * Usage: swaptions_like [SWAPTIONS [PATHS]] (default 16 16).
 * Expected: race-free. */
#include <lard.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
#define STEPS 16            /* time steps per path */
#define FACTORS 3
#define ONE 65536           /* fixed point 1.0 */

struct swaption { int64_t strike, maturity, tenor, vol[FACTORS]; int64_t price, stderr_; };

static struct swaption *swaps;
static unsigned n_swaps, n_paths;
static int64_t curve[STEPS];      /* initial forward curve, shared read-only */

static int64_t ld(const int64_t *p) { return (int64_t)lard_load64((const uint64_t *)(const void *)p); }
static void st(int64_t *p, int64_t v) { lard_store64((uint64_t *)(void *)p, (uint64_t)v); }

static int64_t gauss(uint64_t *s)     /* sum of 4 uniforms, centred: about N(0, 1/3) */
{
    int64_t sum = 0;
    for (int i = 0; i < 4; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        sum += (int64_t)(*s >> 48);
    }
    return sum - ONE * 2;
}

static void price(struct swaption *sw, uint64_t *seed)
{
    int64_t *fwd = lard_malloc(STEPS * sizeof *fwd);
    int64_t *disc = lard_malloc(STEPS * sizeof *disc);
    int64_t *shock = lard_malloc(STEPS * FACTORS * sizeof *shock);
    int64_t mat = ld(&sw->maturity), tenor = ld(&sw->tenor), strike = ld(&sw->strike);
    int64_t sum = 0, sum2 = 0;
    for (unsigned p = 0; p < n_paths; p++) {
        for (int i = 0; i < STEPS * FACTORS; i++)
            st(&shock[i], gauss(seed));
        for (int i = 0; i < STEPS; i++)
            st(&fwd[i], ld(&curve[i]));
        for (int step = 1; step < STEPS; step++) {       /* evolve the curve */
            for (int i = step; i < STEPS; i++) {
                int64_t f = ld(&fwd[i]), dz = 0;
                for (int k = 0; k < FACTORS; k++)
                    dz += ld(&sw->vol[k]) * ld(&shock[step * FACTORS + k]) / ONE;
                f += dz / 16 + ld(&sw->vol[0]) * ld(&sw->vol[0]) / ONE / 64;
                st(&fwd[i], f < 0 ? 0 : f);
            }
        }
        int64_t d = ONE;                                   /* discount factors */
        for (int i = 0; i < STEPS; i++) {
            d = d * ONE / (ONE + ld(&fwd[i]) / 4);
            st(&disc[i], d);
        }
        int64_t annuity = 0, swap_rate_num = 0;
        for (int64_t i = mat; i < mat + tenor && i < STEPS; i++) {
            annuity += ld(&disc[i]) / 4;
            swap_rate_num += ld(&disc[i]) * ld(&fwd[i]) / ONE / 4;
        }
        int64_t payoff = annuity ? swap_rate_num - strike * annuity / ONE : 0;
        if (payoff < 0)
            payoff = 0;
        sum += payoff;
        sum2 += payoff / 64 * (payoff / 64);
    }
    int64_t mean = sum / n_paths;
    st(&sw->price, mean);
    st(&sw->stderr_, sum2 / n_paths - (mean / 64) * (mean / 64));
    lard_free(shock);
    lard_free(disc);
    lard_free(fwd);
}

static void *worker(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    uint64_t seed = 1000 + t;
    for (unsigned i = t; i < n_swaps; i += THREADS)
        price(&swaps[i], &seed);
    return NULL;
}

int main(int argc, char **argv)
{
    n_swaps = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 16;
    n_paths = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 16;
    swaps = lard_malloc(n_swaps * sizeof *swaps);
    if (!swaps || n_paths == 0)
        return 1;
    for (int i = 0; i < STEPS; i++)
        st(&curve[i], ONE / 25 + i * ONE / 1000);
    for (unsigned i = 0; i < n_swaps; i++) {
        st(&swaps[i].strike, ONE / 25 + (int64_t)(i % 5) * ONE / 400);
        st(&swaps[i].maturity, 2 + i % 6);
        st(&swaps[i].tenor, 4 + i % 5);
        for (int k = 0; k < FACTORS; k++)
            st(&swaps[i].vol[k], ONE / 100 * (3 - k) + (int64_t)(i % 3) * ONE / 500);
    }
    lard_thread_t th[THREADS];
    for (unsigned t = 0; t < THREADS; t++)
        lard_spawn(&th[t], worker, (void *)(uintptr_t)t);
    for (unsigned t = 0; t < THREADS; t++)
        lard_join(th[t], NULL);
    int64_t total = 0, err = 0;
    for (unsigned i = 0; i < n_swaps; i++) {
        total += ld(&swaps[i].price);
        err += ld(&swaps[i].stderr_);
    }
    printf("swaptions = %u\nvalue = %lld\nspread = %lld\n", n_swaps, (long long)total, (long long)err);
    lard_free(swaps);
    return 0;
}
