/* Racy: each half of the team protects the counter with a different lock. */
#include <omp.h>
#include <stdio.h>
static omp_lock_t l1, l2;
static int count;
int main(void)
{
    omp_init_lock(&l1);
    omp_init_lock(&l2);
#pragma omp parallel for num_threads(4) schedule(static, 1)
    for (int i = 0; i < 8; i++) {
        omp_lock_t *l = i % 2 ? &l1 : &l2;
        omp_set_lock(l);
        count++; /* RACE */
        omp_unset_lock(l);
    }
    printf("done %d\n", count > 0);
    return 0;
}
