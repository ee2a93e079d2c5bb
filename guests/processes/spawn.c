/* The ways a C program starts another: posix_spawn, system, popen, and an
 * execvp that fails (ENOENT) and one that succeeds in a forked child. */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fflush(stdout);
    pid_t pid;
    char *args[] = {"echo", "from", "posix_spawn", NULL};
    int r = posix_spawnp(&pid, "echo", NULL, NULL, args, environ);
    int st = -1;
    if (r == 0)
        waitpid(pid, &st, 0);
    printf("posix_spawn %d status %d\n", r, WEXITSTATUS(st));
    fflush(stdout);
    st = system("echo from system; exit 3");
    printf("system status %d\n", WEXITSTATUS(st));
    FILE *f = popen("echo from popen | tr a-z A-Z", "r");
    char line[64] = "";
    if (f && fgets(line, sizeof line, f))
        printf("popen read %s", line);
    printf("pclose %d\n", f ? WEXITSTATUS(pclose(f)) : -1);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        char *none[] = {"no-such-program-anywhere", NULL};
        execvp(none[0], none);
        printf("execvp failed: %s\n", errno == ENOENT ? "ENOENT" : strerror(errno));
        fflush(stdout);
        char *env[] = {"printenv", "LARD_SPAWN", NULL};
        setenv("LARD_SPAWN", "inherited", 1);
        execvp(env[0], env);
        _exit(99);
    }
    waitpid(c, &st, 0);
    printf("exec child status %d\n", WEXITSTATUS(st));
    return 0;
}
