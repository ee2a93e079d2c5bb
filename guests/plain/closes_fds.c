/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A hostile neighbour for lard's own files: after printing, the guest
 * changes directory to / and closes every descriptor from 2 up to 1023 (as
 * daemons and closefrom(3) do), then two threads race on a counter. The
 * race, the text report (on lard's stderr), a --report-json and a
 * --record-trace given as relative paths must all survive. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static volatile long counter;
static void *work(void *arg) {
    (void)arg;
    for (int i = 0; i < 2000; i++)
        counter = counter + 1; /* the race */
    return NULL;
}
int main(void) {
    printf("start\n");
    fflush(stdout);
    if (chdir("/") != 0)
        return 3;
    for (int fd = 2; fd < 1024; fd++)
        close(fd);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, work, NULL);
    pthread_create(&t2, NULL, work, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("done\n");
    return 0;
}
