/* A process tree with a race in the child only: the parent's threads
 * update `total` under a mutex; the child's threads update `counter`
 * without one (unless argv[1] is "safe"). The parent prints the child's
 * pid so a test can find the child's report. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long counter;
static long total;
static int safe;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *child_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        if (safe)
            pthread_mutex_lock(&lock);
        counter++; /* child race */
        if (safe)
            pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *parent_worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        total++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void two(void *(*f)(void *)) {
    pthread_t a, b;
    pthread_create(&a, NULL, f, NULL);
    pthread_create(&b, NULL, f, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
}

int main(int argc, char **argv) {
    safe = argc > 1 && strcmp(argv[1], "safe") == 0;
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        two(child_worker);
        _exit(counter > 0 ? 0 : 1);
    }
    two(parent_worker);
    int st;
    waitpid(p, &st, 0);
    printf("child %d status %d total %ld\n", (int)p, WEXITSTATUS(st), total);
    return 0;
}
