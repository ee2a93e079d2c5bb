/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A program that sends itself SIGUSR1 three times and counts them in its
 * handler, then prints the count: under gdb each signal stops first
 * (`handle SIGUSR1 stop`); continuing delivers it, `signal 0` drops it. */
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t taken;

static void on_usr1(int sig) {
    taken += sig == SIGUSR1;
}

int main(void) {
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < 3; i++)
        raise(SIGUSR1);
    printf("taken %d\n", (int)taken);
    return 0;
}
