/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A three-stage pipeline hands one item from stage to stage: each stage
 * waits until `stage` (a condition guarded by `lock`) says the previous
 * stage is done, works on the item without a lock, and announces itself;
 * every stage thread stays alive until the last stage is done.
 * Expected: no data race (each hand-off goes through the lock), but an
 * object race: after the second owner, a third thread's access revokes
 * ownership, the item becomes shared with the third stage's empty lockset
 * and is written (ownership transfer works for two owners only). */
#include <lard.h>
#include <sched.h>
#include <stdio.h>

#define WORDS 4

static lard_mutex_t lock = LARD_MUTEX_INIT;
static uint64_t stage;                   /* guarded by lock */
static uint64_t *item;                   /* set before stage 1 */

static void wait_stage(uint64_t s)
{
    for (;;) {
        lard_mutex_lock(&lock);
        uint64_t now = lard_load64(&stage);
        lard_mutex_unlock(&lock);
        if (now >= s)
            return;
        sched_yield();
    }
}

static void set_stage(uint64_t s)
{
    lard_mutex_lock(&lock);
    lard_store64(&stage, s);
    lard_mutex_unlock(&lock);
}

static void *produce(void *arg)
{
    (void)arg;
    uint64_t *it = lard_malloc(WORDS * sizeof *it); /* OBJECT */
    for (int i = 0; i < WORDS; i++)
        lard_store64(&it[i], (uint64_t)i + 1);
    item = it;
    set_stage(1);
    wait_stage(3);
    return NULL;
}

static void *scale(void *arg)
{
    (void)arg;
    wait_stage(1);
    for (int i = 0; i < WORDS; i++)
        lard_store64(&item[i], lard_load64(&item[i]) * 10);
    set_stage(2);
    wait_stage(3);
    return NULL;
}

static void *offset(void *arg)
{
    (void)arg;
    wait_stage(2);
    for (int i = 0; i < WORDS; i++)
        lard_store64(&item[i], lard_load64(&item[i]) + 7);
    set_stage(3);
    return NULL;
}

int main(void)
{
    lard_thread_t t[3];
    lard_spawn(&t[0], produce, NULL);
    lard_spawn(&t[1], scale, NULL);
    lard_spawn(&t[2], offset, NULL);
    for (int i = 0; i < 3; i++)
        lard_join(t[i], NULL);
    uint64_t sum = 0;
    for (int i = 0; i < WORDS; i++)
        sum += lard_load64(&item[i]);
    printf("sum = %llu\n", (unsigned long long)sum);
    return 0;
}
