/* Racy: an OpenMP atomic without a memory-order clause is relaxed (OpenMP
 * 5.2 §15.8.4) and orders nothing: the flag itself never races, but the data
 * written before the atomic write and read after the atomic read that sees
 * it race. The reader resets the flag with an atomic update. */
#include <omp.h>
#include <stdio.h>
static int data, flag;
int main(void)
{
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            data = 42; /* races with the read below */
#pragma omp atomic write
            flag = 1;
        } else {
            int f = 0, a;
            while (!f) {
#pragma omp atomic read
                f = flag;
            }
            a = data; /* RACE */
#pragma omp atomic update
            flag -= 1;
            printf("data = %d\n", a);
        }
    }
    return 0;
}
