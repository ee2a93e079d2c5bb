/* Racy: one section updates the pair under its nested lock, the other
 * updates one field without taking the lock at all. */
#include <omp.h>
#include <stdio.h>
struct pair {
    int a, b;
    omp_nest_lock_t lck;
};
static void incr_a(struct pair *p, int a)
{
    p->a += a; /* RACE */
}
static void incr_b(struct pair *p, int b)
{
    omp_set_nest_lock(&p->lck);
    p->b += b;
    omp_unset_nest_lock(&p->lck);
}
int main(void)
{
    struct pair p = {0, 0};
    omp_init_nest_lock(&p.lck);
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        {
            omp_set_nest_lock(&p.lck);
            incr_b(&p, 1);
            incr_a(&p, 2);
            omp_unset_nest_lock(&p.lck);
        }
#pragma omp section
        incr_a(&p, 3);
    }
    omp_destroy_nest_lock(&p.lck);
    printf("b = %d done %d\n", p.b, p.a > 0);
    return 0;
}
