/* Floating-point guest of bench/fp.py: PARSEC swaptions' kernel in plain C
 * (written from its published description): a portfolio of swaptions
 * priced by Monte Carlo simulation of the Heath-Jarrow-Morton forward-rate
 * model. Each swaption's forward curve is evolved over the simulation
 * horizon with factor volatilities and the HJM drift, driven by normal
 * deviates from a linear congruential generator through the inverse
 * cumulative normal (Moro's rational approximation, as PARSEC's
 * CumNormalInv); each path discounts the swap's cash flows (exp) and adds
 * the payer swaption's payoff. Swaptions are split over 4 threads (static
 * chunks), each with its own generator. Double precision SSE2 scalar code.
 *
 * usage: swaptions [SWAPTIONS [TRIALS]]   (defaults: 32 swaptions, 2000 trials)
 *
 * Prints the sum of the prices, rounded to 6 significant digits (libm may
 * take another code path natively than under an emulator's CPUID). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4
#define FACTORS 3
#define STEPS 16 /* forward curve points = simulation steps */

struct swaption { double strike, maturity, tenor, rate0, vol[FACTORS]; };

static struct swaption *sw;
static double *prices;
static int n = 32, trials = 2000;

static const double A[4] = { 2.50662823884, -18.61500062529, 41.39119773534, -25.44106049637 };
static const double B[4] = { -8.47351093090, 23.08336743743, -21.06224101826, 3.13082909833 };
static const double C[9] = { 0.3374754822726147, 0.9761690190917186, 0.1607979714918209,
                             0.0276438810333863, 0.0038405729373609, 0.0003951896511919,
                             0.0000321767881768, 0.0000002888167364, 0.0000003960315187 };

static double cum_normal_inv(double u)
{
    double x = u - 0.5;
    if (fabs(x) < 0.42) {
        double r = x * x;
        return x * (((A[3] * r + A[2]) * r + A[1]) * r + A[0]) /
               ((((B[3] * r + B[2]) * r + B[1]) * r + B[0]) * r + 1.0);
    }
    double r = x > 0 ? 1.0 - u : u;
    r = log(-log(r));
    r = C[0] + r * (C[1] + r * (C[2] + r * (C[3] + r * (C[4] + r * (C[5] + r * (C[6] + r * (C[7] + r * C[8])))))));
    return x < 0 ? -r : r;
}

/* A uniform deviate in (0, 1) from a 64-bit LCG. */
static double uniform(unsigned long long *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static double price(const struct swaption *p, unsigned long long *seed)
{
    double dt = p->maturity / STEPS;
    double drift[STEPS], f[STEPS], f0[STEPS];
    for (int j = 0; j < STEPS; j++) {
        /* HJM drift: sigma(t) * integral of sigma up to t, per factor. */
        double d = 0;
        for (int k = 0; k < FACTORS; k++) {
            double s = p->vol[k] * exp(-0.1 * k * j * dt);
            d += s * s * j * dt;
        }
        drift[j] = d;
        f0[j] = p->rate0 + 0.002 * j * dt;
    }
    double sum = 0;
    for (int t = 0; t < trials; t++) {
        for (int j = 0; j < STEPS; j++)
            f[j] = f0[j];
        double disc = 0;
        for (int i = 0; i < STEPS; i++) {
            double z[FACTORS];
            for (int k = 0; k < FACTORS; k++)
                z[k] = cum_normal_inv(uniform(seed));
            for (int j = i; j < STEPS; j++) {
                double shock = 0;
                for (int k = 0; k < FACTORS; k++)
                    shock += p->vol[k] * exp(-0.1 * k * (j - i) * dt) * z[k];
                f[j] += drift[j - i] * dt + shock * sqrt(dt);
            }
            disc += f[i] * dt;
        }
        /* The swap from maturity: annual cash flows over the tenor. */
        double df = exp(-disc), annuity = 0, fl = 0;
        for (int c = 1; c <= (int)p->tenor; c++) {
            fl += f[STEPS - 1] + 0.001 * c;
            annuity += exp(-fl);
        }
        double payoff = (f[STEPS - 1] - p->strike) * annuity;
        sum += payoff > 0 ? payoff * df : 0;
    }
    return sum / trials;
}

static void *worker(void *arg)
{
    long t = (long)arg;
    unsigned long long seed = 0x9e3779b97f4a7c15ull * (t + 1);
    for (int i = n * t / NT; i < n * (t + 1) / NT; i++)
        prices[i] = price(&sw[i], &seed);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n = atoi(argv[1]);
    if (argc > 2)
        trials = atoi(argv[2]);
    sw = malloc(n * sizeof *sw);
    prices = malloc(n * sizeof *prices);
    unsigned long long s = 88172645463325252ull;
    for (int i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        sw[i].strike = 0.02 + (double)(s % 100) / 2500.0;
        sw[i].maturity = 1 + (double)((s >> 8) % 40) / 10.0;
        sw[i].tenor = 2 + (double)((s >> 16) % 8);
        sw[i].rate0 = 0.02 + (double)((s >> 24) % 100) / 2500.0;
        for (int k = 0; k < FACTORS; k++)
            sw[i].vol[k] = 0.01 / (k + 1) + (double)((s >> (32 + 8 * k)) % 50) / 10000.0;
    }
    pthread_t th[NT];
    for (long t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += prices[i];
    printf("swaptions = %d, trials = %d, sum = %.6g\n", n, trials, sum);
    return 0;
}
