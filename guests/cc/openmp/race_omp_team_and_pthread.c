/* Racy: a thread made with pthread_create, which never synchronizes with
 * the OpenMP team, reads what the team's loop chunks wrote in every pass.
 * Each pass's barrier orders its chunks before every member of the team,
 * not before that thread: its clock must keep them unordered (binary mode
 * raises no clock floor for an entry a live thread lacks), and every read
 * of a[] races.  The flag's race is reported at its write, its read, or
 * both, as the schedule has the reader spin before the write or not. */
#include <pthread.h>
#include <stdio.h>
#define N 64
#define PASSES 4
static int a[N];
static volatile int done;
static int seen;
static void *reader(void *p)
{
    (void)p;
    while (!done) /* RACE */
        ;
    for (int i = 0; i < N; i++)
        seen += a[i]; /* RACE */
    return NULL;
}
int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
#pragma omp parallel num_threads(2)
    for (int p = 0; p < PASSES; p++) {
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < N; i++)
            a[i] += i + p;
    }
    done = 1; /* RACE */
    pthread_join(t, NULL);
    printf("seen = %d\n", seen);
    return 0;
}
