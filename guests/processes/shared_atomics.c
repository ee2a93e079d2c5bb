/* Atomic instructions on memory shared between processes: two children
 * update counters in one MAP_SHARED page at the same time, through a lock
 * xadd, a compare-and-swap loop, an xchg spinlock, a process-shared mutex,
 * a process-shared semaphore and a misaligned lock xadd. Every update must count: the
 * totals are exact (2 x ROUNDS each), as natively. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 100000

struct shared {
    long ready;
    long xadd;
    long cas;
    int spin;
    long spinlocked;
    long locked;
    long sem_locked;
    pthread_mutex_t mutex;
    sem_t sem;
    char pad[3];
    char misaligned[16];
};

static void work(struct shared *s) {
    long *odd = (long *)(s->misaligned + 1);
    __atomic_fetch_add(&s->ready, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&s->ready, __ATOMIC_SEQ_CST) < 2)
        ;
    for (int i = 0; i < ROUNDS; i++) {
        __atomic_fetch_add(&s->xadd, 1, __ATOMIC_SEQ_CST);
        long v = __atomic_load_n(&s->cas, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&s->cas, &v, v + 1, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_RELAXED))
            ;
        while (__atomic_exchange_n(&s->spin, 1, __ATOMIC_ACQUIRE))
            ;
        s->spinlocked++;
        __atomic_exchange_n(&s->spin, 0, __ATOMIC_RELEASE);
        pthread_mutex_lock(&s->mutex);
        s->locked++;
        pthread_mutex_unlock(&s->mutex);
        sem_wait(&s->sem);
        s->sem_locked++;
        sem_post(&s->sem);
        __atomic_fetch_add(odd, 1, __ATOMIC_SEQ_CST);
    }
}

int main(void) {
    struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED)
        return 100;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&s->mutex, &a);
    if (sem_init(&s->sem, 1, 1) != 0)
        return 101;
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            work(s);
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++)
        waitpid(kids[k], NULL, 0);
    long odd;
    __builtin_memcpy(&odd, s->misaligned + 1, sizeof odd);
    printf("xadd %ld\ncas %ld\nspinlock %ld\nmutex %ld\nsemaphore %ld\nmisaligned %ld\n",
           s->xadd, s->cas, s->spinlocked, s->locked, s->sem_locked, odd);
    return 0;
}
