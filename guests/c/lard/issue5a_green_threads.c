/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * LARD §3.5 (case a) -- thread identity: two language threads on one kernel
 * thread (Rule 5).  Expected: racy.
 *
 * A tiny green-thread scheduler runs two tasks, each a language thread of its
 * own (lard_lang_new), one after the other on the main kernel thread,
 * switching identity with lard_lang_switch (an unreported context switch).
 * Both tasks write x with no program synchronization between them: a data
 * race, which a detector keyed on kernel threads would miss.  Under LARD the
 * second task's write races with the first's.
 */
#include <lard.h>
#include <stdio.h>

static uint64_t x;                          /* program data (Tracked) */

static void task_a(void)
{
    lard_store64(&x, 1);
}

static void task_b(void)
{
    lard_store64(&x, 2); /* RACE */
}

struct task {
    uint32_t id;
    void (*run)(void);
};

int main(void)
{
    struct task tasks[2];
    tasks[0].id = lard_lang_new();
    tasks[0].run = task_a;
    tasks[1].id = lard_lang_new();
    tasks[1].run = task_b;
    for (int i = 0; i < 2; i++) {           /* the scheduler */
        lard_lang_switch(tasks[i].id);
        tasks[i].run();
    }
    lard_lang_switch(0);
    /* The scheduler reports the result with an untracked (system) read. */
    printf("x = %llu\n", (unsigned long long)__atomic_load_n(&x, __ATOMIC_RELAXED));
    return 0;
}
