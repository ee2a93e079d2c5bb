/* Racy: a shared sum updated without reduction, atomic or critical. */
#include <stdio.h>
int main(void)
{
    long sum = 0; /* NAME sum of main */
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < 40; i++) /* RACE */
        sum += i; /* RACE */
    printf("done %d\n", sum > 0);
    return 0;
}
