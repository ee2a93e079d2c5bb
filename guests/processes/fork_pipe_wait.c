/* fork, pipe, wait: children write to a pipe and exit with their own
 * statuses (one is killed by a signal); the parent reads and reaps them in
 * order. A helper thread is running when the parent forks: the children
 * have only the forking thread. Ground truth: the native run's stdout and
 * exit status. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int spin_stop;

static void *spinner(void *arg) {
    (void)arg;
    while (!spin_stop)
        sched_yield();
    return NULL;
}

int main(void) {
    int fds[2];
    if (pipe(fds) != 0)
        return 100;
    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    pid_t parent = getpid();
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        pid_t p = fork();
        if (p < 0)
            return 101;
        if (p == 0) {
            close(fds[0]);
            char line[64];
            int n = snprintf(line, sizeof line, "child %d parent-ok %d\n", i, getppid() == parent);
            if (write(fds[1], line, n) != n)
                _exit(102);
            if (i == 3)
                raise(SIGKILL);
            _exit(10 + i);
        }
        kids[i] = p;
        /* One line at a time, so the output order is the native one. */
        char buf[64];
        ssize_t n = read(fds[0], buf, sizeof buf - 1);
        if (n <= 0)
            return 103;
        buf[n] = 0;
        fputs(buf, stdout);
    }
    close(fds[1]);
    for (int i = 0; i < 4; i++) {
        int st;
        pid_t w = waitpid(kids[i], &st, 0);
        if (w != kids[i])
            return 104;
        if (WIFEXITED(st))
            printf("child %d exited %d\n", i, WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            printf("child %d killed by signal %d\n", i, WTERMSIG(st));
    }
    spin_stop = 1;
    pthread_join(t, NULL);
    char c;
    printf("pipe at end of file: %d\n", read(fds[0], &c, 1) == 0);
    printf("no more children: %d\n", wait(NULL) == -1);
    return 5;
}
