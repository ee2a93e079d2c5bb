/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, racy: the main thread's library calls read or write memory
 * that a second thread accessed with no synchronization -- memcpy's
 * source, memset's table, strlen's and strcpy's strings, qsort's array,
 * snprintf's output, fread's buffer, read(2)'s buffer and write(2)'s.
 * Each call is checked as the main thread's access at the call's line
 * (RACE), racing with the other thread's line (OTHER); the main thread
 * sleeps first, so the other's accesses come first in every schedule.
 * With LOCKED defined (libc_ranges_locked.c), every access is under one
 * mutex: race-free. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef LOCKED
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&m)
#define UNLOCK() pthread_mutex_unlock(&m)
#else
#define LOCK() ((void)0)
#define UNLOCK() ((void)0)
#endif
/* Keeps each access on its own line in the optimized code. */
#define STEP() __asm__ volatile("" ::: "memory")

static char src[256], dst[256], table[256], name[32] = "lard", name2[32] = "race", copy[32];
static char out[32], fbuf[16], rbuf[16], wbuf[16] = "pipe";
static int arr[64];
static volatile int sink;
size_t n = 256; /* not a constant: gcc calls memcpy and memset */

static int cmp(const void *a, const void *b) {
    return *(const int *)a - *(const int *)b;
}

static void *other(void *arg) {
    (void)arg;
    LOCK();
    src[3] = 1; STEP(); /* OTHER */
    sink = table[7]; STEP(); /* OTHER */
    name[2] = 'r'; STEP(); /* OTHER */
    name2[1] = 'a'; STEP(); /* OTHER */
    sink = arr[4]; STEP(); /* OTHER */
    sink = out[1]; STEP(); /* OTHER */
    sink = fbuf[2]; STEP(); /* OTHER */
    sink = rbuf[0]; STEP(); /* OTHER */
    wbuf[3] = 'e'; STEP(); /* OTHER */
    UNLOCK();
    return NULL;
}

int main(void) {
    static const char data[] = "fread's input";
    int fds[2];
    FILE *f = fmemopen((void *)data, sizeof data, "r");
    if (!f || pipe(fds) != 0)
        return 1;
    if (write(fds[1], "hello", 5) != 5)
        return 1;
    for (int i = 0; i < 64; i++)
        arr[i] = (i * 37) % 64;
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    usleep(50000);
    LOCK();
    memcpy(dst, src, n); /* RACE */
    memset(table, 1, n); /* RACE */
    size_t len = strlen(name); /* RACE */
    strcpy(copy, name2); /* RACE */
    qsort(arr, 64, sizeof arr[0], cmp); /* RACE */
    int w = snprintf(out, sizeof out, "%d-%d", 4, 2); /* RACE */
    size_t got = fread(fbuf, 1, 5, f); /* RACE */
    ssize_t r = read(fds[0], rbuf, 5); /* RACE */
    ssize_t wr = write(fds[1], wbuf, 4); /* RACE */
    UNLOCK();
    pthread_join(t, NULL);
    printf("len %zu copy %.4s sorted %d..%d out %s (%d) fread %zu read %zd write %zd\n", len,
           copy, arr[0], arr[63], out, w, got, r, wr);
    fclose(f);
    return 0;
}
