/* Race-free: a simple lock and a nestable lock (taken recursively) guard
 * shared counters. */
#include <omp.h>
#include <stdio.h>
static omp_lock_t lock;
static omp_nest_lock_t nest;
static int count, depth_sum;
static void visit(int d)
{
    omp_set_nest_lock(&nest);
    depth_sum += d;
    if (d < 3)
        visit(d + 1);
    omp_unset_nest_lock(&nest);
}
int main(void)
{
    omp_init_lock(&lock);
    omp_init_nest_lock(&nest);
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < 20; i++) {
        omp_set_lock(&lock);
        count++;
        omp_unset_lock(&lock);
        visit(1);
        while (!omp_test_lock(&lock))
            ;
        count++;
        omp_unset_lock(&lock);
    }
    omp_destroy_lock(&lock);
    omp_destroy_nest_lock(&nest);
    printf("count = %d depth_sum = %d\n", count, depth_sum);
    return 0;
}
