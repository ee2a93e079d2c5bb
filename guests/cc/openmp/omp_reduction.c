/* Race-free: reduction(+) and reduction(max). */
#include <stdio.h>
#define N 100
int main(void)
{
    int a[N], sum = 0, mx = 0;
    for (int i = 0; i < N; i++)
        a[i] = (i * 37) % 101;
#pragma omp parallel for num_threads(4) reduction(+ : sum) reduction(max : mx)
    for (int i = 0; i < N; i++) {
        sum += a[i];
        if (a[i] > mx)
            mx = a[i];
    }
    printf("sum = %d max = %d\n", sum, mx);
    return 0;
}
