/* Racy: a temporary that should be private is shared by the team. */
#include <stdio.h>
#define N 32
int main(void)
{
    int a[N], b[N], tmp;
    for (int i = 0; i < N; i++)
        a[i] = i;
#pragma omp parallel for num_threads(4) shared(tmp)
    for (int i = 0; i < N; i++) {
        tmp = a[i] * 2; /* RACE */
        b[i] = tmp + 1; /* RACE */
    }
    printf("done %d\n", b[0] >= 0);
    return 0;
}
