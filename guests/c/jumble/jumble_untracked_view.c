/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Adversarial memory is for Tracked reads only: thread 1 writes x = 1 and
 * then raises an untracked (hardware-atomic, invisible to LARD) flag;
 * thread 2 waits for the flag and reads x twenty times, each time with a
 * Tracked read and right after it with an untracked one.  Under
 * lard run --adversarial a Tracked read may return the stale 0 (no
 * happens-before edge in the program's model), but the untracked read
 * must always see memory as it is: 1.  Prints whether each happened.
 * Expected: racy. */
#include <lard.h>
#include <stdio.h>

static uint64_t x;                          /* Tracked */
static int flag;                            /* untracked, hardware atomic */

static void *writer(void *arg)
{
    (void)arg;
    lard_store64(&x, 1);
    __atomic_store_n(&flag, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void *reader(void *arg)
{
    int stale = 0, real = 1;
    while (!__atomic_load_n(&flag, __ATOMIC_SEQ_CST))
        ;
    for (int i = 0; i < 20; i++) {
        if (lard_load64(&x) != 1) /* RACE */
            stale = 1;
        if (*(volatile uint64_t *)&x != 1)
            real = 0;
    }
    *(int *)arg = stale * 2 + real;
    return NULL;
}

int main(void)
{
    lard_thread_t a, b;
    int r = 0;
    lard_spawn(&a, writer, NULL);
    lard_spawn(&b, reader, &r);
    lard_join(a, NULL);
    lard_join(b, NULL);
    printf("tracked read stale: %s\nuntracked read always real: %s\n",
           r & 2 ? "yes" : "no", r & 1 ? "yes" : "no");
    return 0;
}
