/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * LARD §3.5 (case b) -- thread identity: one language thread migrating between
 * kernel threads (Rule 5).  Expected: race-free.
 *
 * Language thread L runs first on kernel thread K1, which increments x; K1
 * then hands L over to kernel thread K2 through a runtime-internal,
 * unreported handoff (a pthread mutex/condvar), and K2 resumes L with
 * lard_lang_switch and increments x again.  Both increments are by the same
 * language thread, in program order: no race, though a detector keyed on
 * kernel threads would report one.
 */
#include <lard.h>
#include <pthread.h>
#include <stdio.h>

static uint64_t x;                          /* program data (Tracked) */
static uint32_t lang;                       /* the language thread L */
static pthread_mutex_t handoff_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_cv = PTHREAD_COND_INITIALIZER;
static int handed_over;                     /* system data (untracked) */

static void step(void)                      /* L's program code */
{
    lard_store64(&x, lard_load64(&x) + 1);
}

static void *kernel1(void *arg)
{
    (void)arg;
    lard_lang_switch(lang);
    step();
    pthread_mutex_lock(&handoff_mu);
    handed_over = 1;
    pthread_cond_signal(&handoff_cv);
    pthread_mutex_unlock(&handoff_mu);
    return NULL;
}

static void *kernel2(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&handoff_mu);
    while (!handed_over)
        pthread_cond_wait(&handoff_cv, &handoff_mu);
    pthread_mutex_unlock(&handoff_mu);
    lard_lang_switch(lang);
    step();
    return NULL;
}

int main(void)
{
    pthread_t k1, k2;
    lang = lard_lang_new();
    pthread_create(&k2, NULL, kernel2, NULL);
    pthread_create(&k1, NULL, kernel1, NULL);
    pthread_join(k1, NULL);
    pthread_join(k2, NULL);
    /* Untracked (system) read: main never synchronizes with L. */
    printf("x = %llu\n", (unsigned long long)__atomic_load_n(&x, __ATOMIC_RELAXED));
    return 0;
}
