/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Two threads write x without synchronization (a write-write race), then,
 * with the argument "spin", the program loops forever, and with "wait" it
 * reads its standard input to the end (blocked while nothing comes): a run
 * that has to be stopped from outside (lard run --max-insns, --timeout,
 * SIGINT, SIGTERM) must still report the race found before the stop.
 * Without arguments it exits normally.  Expected: racy. */
#include <lard.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint64_t x;                          /* program data (Tracked) */

static void *writer(void *arg)
{
    lard_store64(&x, (uint64_t)(uintptr_t)arg); /* RACE */
    return NULL;
}

int main(int argc, char **argv)
{
    lard_thread_t a, b;
    lard_spawn(&a, writer, (void *)1);
    lard_spawn(&b, writer, (void *)1);
    lard_join(a, NULL);
    lard_join(b, NULL);
    printf("x = %llu\n", (unsigned long long)lard_load64(&x));
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "spin") == 0) {
        volatile uint64_t n = 0;
        for (;;)
            n++;
    }
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        char c;
        while (read(0, &c, 1) > 0)
            ;
    }
    return 0;
}
