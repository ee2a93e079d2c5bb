/* Loops that repeat their accesses, and races among them.
 *
 * Four readers sweep a shared table again and again (read-shared: every
 * reader's reads stay in each cell), each also accumulating into its own
 * row now and then (read-modify-write) and reading a byte table through
 * 16-byte loads at every alignment. A writer thread stores into both
 * tables without any synchronization while they sweep: each of its stores
 * races with the readers' reads before it, and their next repeated reads
 * race with the store. Between two phases a barrier orders everything, and in the second
 * phase the readers only read: no race.
 *
 * Then a hand-off: a thread reads a value again and again, releases a
 * mutex, and reads the value again after long local work, while a second
 * thread, after shorter work, takes the mutex and overwrites the value.
 * The reads before the release happen before the write (no system call
 * in between: the mutex is never contended); the read after the work
 * races with it, though it is the same instruction as the reads before.
 *
 * Ground truth by design: the writer's stores race with the readers' reads
 * of the table and the bytes, and the hand-off's write with the read after
 * the work; the lines marked RACE are the racy accesses (the hand-off's
 * write is the earlier access of its race); nothing else races.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N 512
#define READERS 4
#define SWEEPS 40

static double table[N];
static double rows[READERS][N];
static unsigned char bytes[N + 32];
static pthread_barrier_t bar;

static double sweep(long t)
{
    double s = 0;
    for (int k = 0; k < SWEEPS; k++) {
        for (int i = 0; i < N; i++)
            s += table[i]; /* RACE */
        if (k % 8 == 7)
            for (int i = 0; i < N; i++)
                rows[t][i] += i * s;
        for (int i = 0; i + 16 <= N; i += 5) {
            double pair[2];
            memcpy(pair, bytes + i + (k % 16), sizeof pair), s += pair[0] - pair[1]; /* RACE */
        }
    }
    return s;
}

static void *reader(void *arg)
{
    long t = (long)arg;
    double s = sweep(t);
    pthread_barrier_wait(&bar);
    double q = 0;
    for (int k = 0; k < SWEEPS; k++)
        for (int i = 0; i < N; i++)
            q += table[i] + rows[t][i];
    return (void *)(long)(s + q > 0);
}

static void *writer(void *arg)
{
    (void)arg;
    for (int k = 0; k < 3; k++)
        for (int i = k; i < N; i += 64) {
            table[i] = i + k; /* RACE */
            bytes[i] = (unsigned char)k; /* RACE */
        }
    pthread_barrier_wait(&bar);
    return 0;
}

static volatile double handed;
static pthread_mutex_t hand = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static double read_handed(void)
{
    return handed; /* RACE */
}

static double work(int n)
{
    volatile double w = 0;
    for (int k = 0; k < n; k++)
        w += k;
    return w;
}

static void *holder(void *arg)
{
    (void)arg;
    double s = 0;
    for (int k = 0; k < 1000; k++)
        s += read_handed();
    pthread_mutex_lock(&hand);
    pthread_mutex_unlock(&hand);
    s += work(400000);
    s += read_handed();
    return (void *)(long)(s > 0);
}

static void *taker(void *arg)
{
    (void)arg;
    double w = work(100000);
    pthread_mutex_lock(&hand);
    handed = 2;
    pthread_mutex_unlock(&hand);
    /* (No system call, such as its exit's, before the holder's last read.) */
    w += work(800000);
    return (void *)(long)(w > 0);
}

int main(void)
{
    pthread_t th[READERS + 1];
    for (int i = 0; i < N; i++)
        table[i] = i;
    pthread_barrier_init(&bar, 0, READERS + 1);
    for (long t = 0; t < READERS; t++)
        pthread_create(&th[t], 0, reader, (void *)t);
    pthread_create(&th[READERS], 0, writer, 0);
    long ok = 0;
    for (int t = 0; t <= READERS; t++) {
        void *r;
        pthread_join(th[t], &r);
        ok += (long)r;
    }
    handed = 1;
    pthread_create(&th[0], 0, holder, 0);
    pthread_create(&th[1], 0, taker, 0);
    for (int t = 0; t < 2; t++) {
        void *r;
        pthread_join(th[t], &r);
        ok += (long)r;
    }
    printf("threads %ld\n", ok);
    return 0;
}
