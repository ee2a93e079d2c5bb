/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Two fields of one object, each under its own lock: a depositor updates
 * `deposits` under dep_lock, a withdrawer `withdrawals` under wd_lock.
 * Expected: no data race (every field is consistently locked; main reads
 * after the joins), but an object race: the object detector keeps one
 * lockset per object, and {dep_lock} ∩ {wd_lock} is empty (von Praun and
 * Gross §5.3.2, over-reporting at object granularity). */
#include <lard.h>
#include <stdio.h>

struct account {
    uint64_t deposits;
    uint64_t withdrawals;
};

static lard_mutex_t dep_lock = LARD_MUTEX_INIT;
static lard_mutex_t wd_lock = LARD_MUTEX_INIT;

static void *depositor(void *arg)
{
    struct account *a = arg;
    for (int i = 0; i < 200; i++) {
        lard_mutex_lock(&dep_lock);
        lard_store64(&a->deposits, lard_load64(&a->deposits) + 2);
        lard_mutex_unlock(&dep_lock);
    }
    return NULL;
}

static void *withdrawer(void *arg)
{
    struct account *a = arg;
    for (int i = 0; i < 200; i++) {
        lard_mutex_lock(&wd_lock);
        lard_store64(&a->withdrawals, lard_load64(&a->withdrawals) + 1);
        lard_mutex_unlock(&wd_lock);
    }
    return NULL;
}

int main(void)
{
    lard_thread_t d, w;
    struct account *a = lard_malloc(sizeof *a); /* OBJECT */
    lard_store64(&a->deposits, 0);
    lard_store64(&a->withdrawals, 0);
    lard_spawn(&d, depositor, a);
    lard_spawn(&w, withdrawer, a);
    lard_join(d, NULL);
    lard_join(w, NULL);
    printf("deposits = %llu\nwithdrawals = %llu\n",
           (unsigned long long)lard_load64(&a->deposits),
           (unsigned long long)lard_load64(&a->withdrawals));
    lard_free(a);
    return 0;
}
