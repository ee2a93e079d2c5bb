/* Racy: two differently named critical sections guard the same variable. */
#include <stdio.h>
static int hits;
int main(void)
{
#pragma omp parallel for num_threads(4) schedule(static, 1)
    for (int i = 0; i < 8; i++) {
        if (i % 2) {
#pragma omp critical(a)
            hits++; /* RACE */
        } else {
#pragma omp critical(b)
            hits += 2; /* RACE */
        }
    }
    printf("done %d\n", hits > 0);
    return 0;
}
