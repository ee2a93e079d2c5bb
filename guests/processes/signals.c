/* Asynchronous signals as the kernel delivers them (ground truth: POSIX,
 * signal(7), and the native run, which prints the same lines):
 *  - a handler runs for a signal the process sends itself (kill, raise)
 *    and receives its siginfo (si_code, si_pid, si_value);
 *  - a blocked signal stays pending (sigpending) and runs its handler when
 *    unblocked; the handler's sa_mask is blocked while it runs and the
 *    thread's mask comes back after it;
 *  - alarm() + pause(); setitimer's periodic SIGALRM; a POSIX timer with
 *    SIGEV_SIGNAL and its sigev_value;
 *  - a read() on a pipe interrupted by SIGALRM: EINTR without SA_RESTART,
 *    made again (and satisfied by the handler's own write) with it;
 *  - pthread_kill() runs the handler on the target thread;
 *  - sigsuspend() waits with a temporary mask, then the old mask is back;
 *  - SIG_IGN discards, and a default-ignored signal (SIGCHLD) does nothing;
 *  - a signal left at its default action ends the process: exit status
 *    128 + SIGUSR2 as a shell shows it. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits, last_code, last_pid_ok, alarms, on_worker;
static volatile int last_value;
static int pipefd[2];
static pthread_t worker_id;

static void on_usr1(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    hits++;
    last_code = si->si_code;
    last_pid_ok = si->si_pid == getpid();
    sigset_t now;
    sigprocmask(SIG_SETMASK, NULL, &now);
    /* The signal itself and the sa_mask (SIGUSR2) are blocked here. */
    if (!sigismember(&now, sig) || !sigismember(&now, SIGUSR2))
        hits += 100;
}

static void on_alarm(int sig) { (void)sig; alarms++; }

static void on_alarm_write(int sig) {
    (void)sig;
    alarms++;
    if (write(pipefd[1], "x", 1) != 1)
        _exit(9);
}

static void on_timer(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    if (si->si_code == SI_TIMER)
        last_value = si->si_value.sival_int;
}

static void on_thread(int sig) {
    (void)sig;
    on_worker = pthread_equal(pthread_self(), worker_id);
}

static void *worker(void *arg) {
    (void)arg;
    while (!on_worker)
        usleep(1000);
    return NULL;
}

static void set(int sig, void (*h)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaction(SIGUSR1, &sa, NULL);

    kill(getpid(), SIGUSR1);
    printf("kill: hits %d code %d pid %d\n", hits, last_code, last_pid_ok);
    raise(SIGUSR1);
    printf("raise: hits %d code %s\n", hits, last_code == SI_TKILL ? "SI_TKILL" : "other");

    sigset_t block, old, pend;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigprocmask(SIG_BLOCK, &block, &old);
    kill(getpid(), SIGUSR1);
    sigpending(&pend);
    printf("blocked: hits %d pending %d\n", hits, sigismember(&pend, SIGUSR1));
    sigprocmask(SIG_SETMASK, &old, NULL);
    sigprocmask(SIG_SETMASK, NULL, &old);
    printf("unblocked: hits %d mask back %d\n", hits, !sigismember(&old, SIGUSR2));

    set(SIGALRM, on_alarm, 0);
    alarm(1);
    pause();
    printf("alarm+pause: alarms %d\n", alarms);

    struct itimerval it = {{0, 100000}, {0, 100000}};
    setitimer(ITIMER_REAL, &it, NULL);
    while (alarms < 4)
        usleep(30000);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("setitimer: alarms %d\n", alarms);

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_timer;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGRTMIN + 1, &sa, NULL);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGRTMIN + 1;
    sev.sigev_value.sival_int = 4242;
    timer_t t;
    timer_create(CLOCK_MONOTONIC, &sev, &t);
    struct itimerspec its = {{0, 0}, {0, 50000000}};
    timer_settime(t, 0, &its, NULL);
    while (last_value == 0)
        usleep(10000);
    timer_delete(t);
    printf("timer: value %d\n", last_value);

    char c;
    if (pipe(pipefd) != 0)
        return 8;
    set(SIGALRM, on_alarm_write, 0);
    alarm(1);
    ssize_t r = read(pipefd[0], &c, 1);
    printf("read without SA_RESTART: %zd %s\n", r, r < 0 && errno == EINTR ? "EINTR" : "?");
    if (read(pipefd[0], &c, 1) != 1)
        return 7;
    set(SIGALRM, on_alarm_write, SA_RESTART);
    alarm(1);
    r = read(pipefd[0], &c, 1);
    printf("read with SA_RESTART: %zd %c\n", r, c);

    set(SIGUSR2, on_thread, 0);
    pthread_create(&worker_id, NULL, worker, NULL);
    pthread_kill(worker_id, SIGUSR2);
    pthread_join(worker_id, NULL);
    printf("pthread_kill: on the worker %d\n", on_worker);

    sigprocmask(SIG_BLOCK, &block, NULL);
    kill(getpid(), SIGUSR1);
    sigset_t wait_mask;
    sigemptyset(&wait_mask);
    int before = hits;
    sigsuspend(&wait_mask);
    sigprocmask(SIG_SETMASK, NULL, &old);
    printf("sigsuspend: ran %d blocked again %d\n", hits - before, sigismember(&old, SIGUSR1));
    sigprocmask(SIG_UNBLOCK, &block, NULL);

    signal(SIGUSR1, SIG_IGN);
    kill(getpid(), SIGUSR1);
    kill(getpid(), SIGCHLD);
    printf("ignored: hits %d\n", hits);
    fflush(stdout);

    signal(SIGUSR2, SIG_DFL);
    kill(getpid(), SIGUSR2);
    printf("not reached\n");
    return 0;
}
