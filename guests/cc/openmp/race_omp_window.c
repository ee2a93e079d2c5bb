/* Racy: two races between iterations that one thread's share holds under
 * a team of two (iterations 0-499 go to thread 0), so that only iterations
 * as logical threads of their own expose them.  Iteration 223 reads what
 * iteration 222 writes, one iteration apart: reported by a default lard-cc
 * build (a window of 61 logical threads per thread, iteration i after
 * iteration i - 61, i - 122, ...).  Iteration 222 also reads what
 * iteration 100 writes, 122 iterations apart: a multiple of the window,
 * reported with --lard-omp-iterations (every iteration its own).  With
 * --lard-omp-iterations=off the iterations are their thread's and neither
 * is reported. */
#include <stdio.h>
#define N 1000
static int a[N], far, near_copy;
int main(void)
{
#pragma omp parallel for num_threads(2)
    for (int i = 0; i < N; i++) {
        a[i] = i;
        if (i == 100)
            far = 1; /* RACE far */
        if (i == 222)
            a[i] = far + 1; /* RACE far, RACE near */
        if (i == 223)
            near_copy = a[222]; /* RACE near */
    }
    printf("%d %d\n", a[222], near_copy);
    return 0;
}
