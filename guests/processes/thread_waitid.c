/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The main thread waits for a child with waitid(WEXITED | WNOWAIT), then
 * reaps it with waitpid, while another thread works: the pattern of Go's
 * os/exec. Under lard the wait must not stop the worker, and must end
 * when the child has. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int waited;

/* Alive until the waits are over, as a Go program's other threads are. */
static void *worker(void *arg) {
    (void)arg;
    while (!waited)
        usleep(1000);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        usleep(20000);
        _exit(3);
    }
    siginfo_t info = {0};
    int r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT);
    printf("waitid: %d, same pid: %d, code %d, status %d\n", r, info.si_pid == pid,
           info.si_code == CLD_EXITED, info.si_status);
    int status = 0;
    pid_t reaped = waitpid(pid, &status, 0);
    printf("waitpid: same pid: %d, exit status %d\n", reaped == pid, WEXITSTATUS(status));
    waited = 1;
    pthread_join(t, NULL);
    printf("worker done\n");
    return 0;
}
