/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Two workers increment a counter in a shared heap object without a lock,
 * between two barrier waits (both workers are alive while either
 * increments).  Expected: a data race (the increments are unordered) and
 * an object race (the second worker's first access revokes the first
 * one's ownership and its write leaves the object shared-modified with an
 * empty lockset).  Without the second barrier a worker could finish and
 * terminate first; the other would then inherit the object (§4.2) and
 * the object detector would report nothing. */
#include <lard.h>
#include <stdio.h>

struct stats {
    uint64_t hits;
};

static lard_barrier_t both;

static void *worker(void *arg)
{
    struct stats *s = arg;
    lard_barrier_wait(&both);
    for (int i = 0; i < 300; i++)
        lard_store64(&s->hits, lard_load64(&s->hits) + 1); /* RACE */
    lard_barrier_wait(&both);
    return NULL;
}

int main(void)
{
    lard_thread_t t[2];
    struct stats *s = lard_malloc(sizeof *s); /* OBJECT */
    lard_store64(&s->hits, 0);
    lard_barrier_init(&both, 2);
    for (int i = 0; i < 2; i++)
        lard_spawn(&t[i], worker, s);
    for (int i = 0; i < 2; i++)
        lard_join(t[i], NULL);
    /* The final count depends on the interleaving: print only "done". */
    printf("done\n");
    lard_free(s);
    return 0;
}
