/* Race-free: a producer/consumer hand-off through a flag written and read
 * with seq_cst atomics plus flush (the seq_cst atomic write
 * releases, the atomic read acquires). */
#include <omp.h>
#include <stdio.h>
static int data, flag, result;
int main(void)
{
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            data = 99;
#pragma omp flush
#pragma omp atomic write seq_cst
            flag = 1;
        } else {
            int f = 0;
            while (!f) {
#pragma omp atomic read seq_cst
                f = flag;
            }
#pragma omp flush
            result = data;
        }
    }
    printf("result = %d\n", result);
    return 0;
}
