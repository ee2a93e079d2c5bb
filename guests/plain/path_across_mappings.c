/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A path string that starts in one mapping and ends in the next (two
 * anonymous mappings side by side, as a compiler's or Go's heap arenas
 * make them), passed to open, stat and access. Output, natively and under
 * lard, is the lines printed below; the exit status is 0. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
    char *a = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const char *path = "/./././.";
    char *p;
    struct stat st;
    int fd;
    if (a == MAP_FAILED)
        return 1;
    /* The second page becomes a mapping of its own. */
    if (mmap(a + 4096, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) == MAP_FAILED)
        return 1;
    p = a + 4096 - 4;
    memcpy(p, path, strlen(path) + 1);
    fd = open(p, O_RDONLY | O_DIRECTORY);
    printf("open: %s\n", fd >= 0 ? "a directory" : "failed");
    printf("stat: %s\n", stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? "a directory" : "failed");
    printf("access: %d\n", access(p, R_OK));
    return 0;
}
