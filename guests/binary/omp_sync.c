/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, race-free OpenMP: parallel for, critical (unnamed and
 * named), atomic, reduction, barrier, single with copyprivate, ordered,
 * locks, tasks with taskwait, and reads after the region. */
#include <omp.h>
#include <stdio.h>
#define N 64
int main(void) {
    long a[N], sum = 0, crit = 0, named = 0, atom = 0, ord = 0, tasks = 0, locked = 0;
    omp_lock_t lock;
    omp_init_lock(&lock);
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < N; i++)
        a[i] = i;
#pragma omp parallel num_threads(4) reduction(+ : sum)
    {
        int me = omp_get_thread_num();
        for (int i = me; i < N; i += 4)
            sum += a[(i + 1) % N];
#pragma omp critical
        crit++;
#pragma omp critical(other)
        named += 2;
#pragma omp atomic
        atom++;
        omp_set_lock(&lock);
        locked++;
        omp_unset_lock(&lock);
#pragma omp barrier
        long seen;
#pragma omp single copyprivate(seen)
        seen = crit;
        if (seen != 4)
            a[0] = -1;
#pragma omp for ordered schedule(dynamic)
        for (int i = 0; i < 8; i++) {
#pragma omp ordered
            ord += i;
        }
#pragma omp single
        {
            for (int t = 0; t < 4; t++) {
#pragma omp task shared(tasks)
                {
#pragma omp atomic
                    tasks++;
                }
            }
#pragma omp taskwait
            tasks += 100;
        }
    }
    omp_destroy_lock(&lock);
    printf("sum = %ld crit = %ld named = %ld atom = %ld locked = %ld ord = %ld tasks = %ld a0 = %ld\n",
           sum, crit, named, atom, locked, ord, tasks, a[0]);
    return 0;
}
