/* Race-free: single (implicit barrier at its end) initializes data every
 * thread then reads; masked/master + barrier does the same. */
#include <omp.h>
#include <stdio.h>
static int config, scale, out[4];
int main(void)
{
#pragma omp parallel num_threads(4)
    {
#pragma omp single
        config = 7;
#pragma omp master
        scale = 3;
#pragma omp barrier
        out[omp_get_thread_num()] = config * scale;
    }
    printf("out = %d %d %d %d\n", out[0], out[1], out[2], out[3]);
    return 0;
}
