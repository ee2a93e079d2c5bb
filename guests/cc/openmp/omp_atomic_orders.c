/* Race-free: the memory-order clauses of atomic and flush (OpenMP 5.2
 * §15.8.4, §15.8.5). An atomic write with release and an atomic read with
 * acquire that reads its value synchronize; so do a release flush before a
 * relaxed atomic write and an acquire flush after a relaxed atomic read
 * that reads its value. The data written before each release is read after
 * the matching acquire. The reader resets each flag with an atomic update. */
#include <omp.h>
#include <stdio.h>
static int data1, data2, flag1, flag2;
int main(void)
{
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            data1 = 42;
#pragma omp atomic write release
            flag1 = 1;
            data2 = 7;
#pragma omp flush release
#pragma omp atomic write
            flag2 = 1;
        } else {
            int f = 0, a, b;
            while (!f) {
#pragma omp atomic read acquire
                f = flag1;
            }
            a = data1;
            f = 0;
            while (!f) {
#pragma omp atomic read
                f = flag2;
            }
#pragma omp flush acquire
            b = data2;
#pragma omp atomic update
            flag1 -= 1;
#pragma omp atomic update
            flag2 -= 1;
            printf("data = %d %d\n", a, b);
        }
    }
    return 0;
}
