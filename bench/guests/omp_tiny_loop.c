/* OpenMP benchmark guest: DataRaceBench DRB037's shape without its race —
 * a sequential outer loop over rows, a `parallel for` (schedule(static),
 * no chunk size) over the columns of each row, one tiny body per
 * iteration: b[i][j] = b[i-1][j] + j.
 *
 * usage: omp_tiny_loop [ROWS [COLS]]   (defaults: 1000 x 1000: 10^6
 * iterations in 1,000 loops)
 *
 * The checksum printed at the end keeps the work from being optimised away
 * and is the same for every team size.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long rows = argc > 1 ? atol(argv[1]) : 1000, cols = argc > 2 ? atol(argv[2]) : 1000;
    long *b = calloc((size_t)(rows * cols), sizeof *b), sum = 0;
    if (b == NULL || rows < 2 || cols < 1)
        return 2;
    for (long i = 1; i < rows; i++) {
#pragma omp parallel for
        for (long j = 0; j < cols; j++)
            b[i * cols + j] = b[(i - 1) * cols + j] + j;
    }
    for (long j = 0; j < cols; j++)
        sum += b[(rows - 1) * cols + j];
    printf("%ld\n", sum);
    free(b);
    return 0;
}
