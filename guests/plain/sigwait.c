/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Signals taken with sigwait/sigtimedwait instead of delivered: a thread
 * waits for a signal another thread sends it (pending already or not),
 * a zero and a short timeout with nothing pending, and a pending blocked
 * signal taken with its siginfo. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* Posted once the waiter has taken the first signal: the second is sent
 * only then, so the two never merge into one pending signal. */
static sem_t took_first;

static void *waiter(void *arg) {
    sigset_t *set = arg;
    int sig = 0;
    for (int k = 0; k < 2; k++) {
        if (sigwait(set, &sig) != 0) {
            printf("sigwait failed\n");
            return NULL;
        }
        printf("waiter took signal %d\n", sig);
        if (k == 0)
            sem_post(&took_first);
    }
    return NULL;
}

int main(void) {
    sigset_t set, usr2;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);

    /* Nothing pending: a zero timeout polls, a short one expires. */
    struct timespec zero = {0, 0}, short_wait = {0, 20 * 1000 * 1000};
    siginfo_t info;
    int r = sigtimedwait(&usr2, &info, &zero);
    printf("zero timeout: %d %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");
    r = sigtimedwait(&usr2, &info, &short_wait);
    printf("short timeout: %d %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");

    /* A pending blocked signal is taken, with its siginfo. */
    raise(SIGUSR2);
    r = sigtimedwait(&usr2, &info, &zero);
    printf("pending: %d signo %d code %s\n", r, info.si_signo,
           info.si_code == SI_TKILL ? "SI_TKILL" : "other");

    /* A thread waits; one signal is sent before it waits, one after. */
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGUSR1);
    pthread_t t;
    sem_init(&took_first, 0, 0);
    pthread_create(&t, NULL, waiter, &one);
    pthread_kill(t, SIGUSR1);
    while (sem_wait(&took_first) != 0)
        ;
    struct timespec pause_ms = {0, 5 * 1000 * 1000};
    nanosleep(&pause_ms, NULL);
    pthread_kill(t, SIGUSR1);
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
