/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* JUMBLE Figure 8, racy initialization: thread 1 publishes a circle in x;
 * thread 2 checks x != NULL and then uses x, reading x again, with no
 * synchronization.  Under sequential consistency this is harmless (once
 * non-NULL, x stays non-NULL); under the memory model each read may return
 * NULL or the circle independently, so the use can dereference NULL.
 * Expected: racy; JUMBLE verdict destructive (x); the race on the radius
 * is benign (its value is never printed). */
#include <lard.h>
#include <sched.h>
#include <stdio.h>

struct circle {
    uint64_t radius;
};

static struct circle shape;
static uint64_t x;                          /* struct circle *, Tracked */
static uint64_t area_sum;                   /* thread 2's private result */

static void draw(struct circle *c)
{
    uint64_t r = lard_load64(&c->radius); /* RACE */
    area_sum += 3 * r * r;
}

static void *publisher(void *arg)
{
    (void)arg;
    lard_store64(&shape.radius, 5);
    lard_store64(&x, (uint64_t)(uintptr_t)&shape); /* RACE */
    return NULL;
}

static void *user(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        if (lard_load64(&x) != 0) /* RACE */
            draw((struct circle *)(uintptr_t)lard_load64(&x)); /* RACE */
        sched_yield();
    }
    return NULL;
}

int main(void)
{
    lard_thread_t a, b;
    lard_spawn(&a, publisher, NULL);
    lard_spawn(&b, user, NULL);
    lard_join(a, NULL);
    lard_join(b, NULL);
    printf("done\n");
    return 0;
}
