/* A thread blocks reading a pipe that the main thread writes only later,
 * after work of its own; a child process's output is read by a thread
 * while the main thread waits for the child. Natively the threads run in
 * parallel; under lard the reader must not stop the writer. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fds[2];
static char got[64];

static void *reader(void *arg) {
    (void)arg;
    ssize_t n = read(fds[0], got, sizeof got - 1);
    if (n > 0)
        got[n] = 0;
    return NULL;
}

static int out[2];
static char child_said[64];

static void *child_reader(void *arg) {
    (void)arg;
    size_t have = 0;
    ssize_t n;
    while ((n = read(out[0], child_said + have, sizeof child_said - 1 - have)) > 0)
        have += (size_t)n;
    child_said[have] = 0;
    return NULL;
}

int main(void) {
    if (pipe(fds) != 0 || pipe(out) != 0)
        return 100;
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 2000000; i++)
        x += i;
    const char *msg = "hello through the pipe";
    if (write(fds[1], msg, strlen(msg)) < 0)
        return 101;
    pthread_join(t, NULL);
    printf("reader got: %s\n", got);

    pid_t c = fork();
    if (c == 0) {
        close(out[0]);
        dup2(out[1], 1);
        execlp("echo", "echo", "from", "the", "child", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    pthread_create(&t, NULL, child_reader, NULL);
    int st;
    waitpid(c, &st, 0);
    pthread_join(t, NULL);
    printf("child said: %s", child_said);
    printf("child status %d\n", WEXITSTATUS(st));
    return 0;
}
