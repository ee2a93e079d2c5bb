/* Race-free: a schedule(dynamic, 1) loop over N iterations, run PASSES
 * times in one parallel region (argv[1], argv[2]; default 1000 and 10).
 * Every chunk is a language thread, and after each pass's barrier every
 * clock names every chunk of the pass: docs/lard-cc.md ("Limits") measures
 * what that costs. */
#include <stdio.h>
#include <stdlib.h>
static double a[1 << 20];
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int passes = argc > 2 ? atoi(argv[2]) : 10;
    double s = 0;
    if (n < 0 || n > (1 << 20))
        n = 1000;
#pragma omp parallel
    for (int p = 0; p < passes; p++) {
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < n; i++)
            a[i] += i * 0.5;
    }
    for (int i = 0; i < n; i++)
        s += a[i];
    printf("%.1f\n", s);
    return 0;
}
