/* Memory shared between processes: what a child writes to a MAP_SHARED
 * anonymous mapping and to a MAP_SHARED mapping of a file, its parent
 * reads after reaping it (and the file holds it too). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long *counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (counter == MAP_FAILED)
        return 100;
    *counter = 0;
    for (int k = 0; k < 3; k++) {
        pid_t c = fork();
        if (c == 0) {
            *counter += 10 + k;
            _exit(0);
        }
        waitpid(c, NULL, 0);
    }
    printf("counter %ld\n", *counter);

    const char *path = argc > 1 ? argv[1] : "shared_mem.map";
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        return 101;
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return 102;
    pid_t c = fork();
    if (c == 0) {
        strcpy(m, "written by the child");
        _exit(0);
    }
    waitpid(c, NULL, 0);
    printf("file mapping: %s\n", m);
    char buf[32] = "";
    if (pread(fd, buf, 20, 0) != 20)
        return 103;
    printf("file contents: %s\n", buf);
    unlink(path);
    return 0;
}
