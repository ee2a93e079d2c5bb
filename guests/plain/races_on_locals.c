/* Races on a local array element, a local structure's member and a
 * thread-local variable, each reached by another thread through a pointer:
 * reports name the variable (the test reads the names off the NAME
 * comments), not the stack mapping. Each pair of writes is unordered:
 * the other thread starts after the pointer is taken and is joined after
 * the owner's write. */
#include <pthread.h>
#include <stdio.h>

struct point {
    int x;
    long y;
};

__thread long hits; /* NAME hits thread-local */

static void *bump(void *p)
{
    *(long *)p += 1; /* RACE */
    return NULL;
}

static void *set_y(void *p)
{
    ((struct point *)p)->y = 7; /* RACE */
    return NULL;
}

/* A frame of its own, below main's. */
static __attribute__((noinline)) long on_point(void)
{
    struct point pt = {1, 2}; /* NAME pt.y of on_point */
    pthread_t t;
    pthread_create(&t, NULL, set_y, &pt);
    pt.y += 2; /* RACE */
    pthread_join(t, NULL);
    return pt.x + pt.y;
}

int main(void)
{
    long counts[4] = {0}; /* NAME counts[2] of main */
    pthread_t t;
    pthread_create(&t, NULL, bump, &counts[2]);
    counts[2] += 2; /* RACE */
    pthread_join(t, NULL);
    long y = on_point();
    pthread_create(&t, NULL, bump, &hits);
    hits += 2; /* RACE */
    pthread_join(t, NULL);
    printf("%ld %ld %ld\n", counts[2], y, hits);
    return 0;
}
