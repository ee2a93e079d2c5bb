/* Race-free: a static-schedule worksharing loop; each iteration writes only
 * its own element and reads an array nobody writes in the region. */
#include <stdio.h>
#define N 64
int main(void)
{
    int a[N], b[N], s = 0;
    for (int i = 0; i < N; i++)
        a[i] = i;
#pragma omp parallel for num_threads(4) schedule(static)
    for (int i = 0; i < N; i++)
        b[i] = a[i] + a[N - 1 - i];
    for (int i = 0; i < N; i++)
        s += b[i];
    printf("s = %d\n", s);
    return 0;
}
