/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Writes a file in the directory argv[1], reads it back, stats it, then
 * allocates it to 8 KiB with fallocate (as Go's linker does before it maps
 * its output). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/lard-file-rw.txt", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f) { perror("fopen w"); return 1; }
    for (int i = 0; i < 100; i++) fprintf(f, "line %d\n", i);
    fclose(f);
    struct stat st;
    if (stat(path, &st) != 0) { perror("stat"); return 1; }
    f = fopen(path, "r");
    if (!f) { perror("fopen r"); return 1; }
    char line[64]; long sum = 0; int n = 0;
    while (fgets(line, sizeof line, f)) { int k; if (sscanf(line, "line %d", &k) == 1) { sum += k; n++; } }
    fclose(f);
    printf("size=%lld lines=%d sum=%ld\n", (long long)st.st_size, n, sum);
    int fd = open(path, O_RDWR);
    if (fd < 0) { perror("open"); return 1; }
    if (fallocate(fd, 0, 0, 8192) != 0) { perror("fallocate"); return 1; }
    close(fd);
    if (stat(path, &st) != 0) { perror("stat"); return 1; }
    printf("allocated=%lld\n", (long long)st.st_size);
    return remove(path) == 0 ? 0 : 1;
}
