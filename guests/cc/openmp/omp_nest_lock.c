/* Race-free: a nested lock held across calls that take it again; every
 * update of the pair happens with the lock held, in whichever section. */
#include <omp.h>
#include <stdio.h>
struct pair {
    int a, b;
    omp_nest_lock_t lck;
};
static void incr_a(struct pair *p, int a)
{
    omp_set_nest_lock(&p->lck);
    p->a += a;
    omp_unset_nest_lock(&p->lck);
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
        {
            incr_a(&p, 3);
            incr_b(&p, 4);
        }
    }
    omp_destroy_nest_lock(&p.lck);
    printf("a = %d b = %d\n", p.a, p.b);
    return 0;
}
