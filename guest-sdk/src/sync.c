/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Program-level synchronization: mutexes, barriers, volatiles.  Each one
 * carries a vector clock; the internal futex lock that protects it is
 * system synchronization and is never reported. */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

void lard_mutex_init(lard_mutex_t *m)
{
    memset(m, 0, sizeof *m);
}

/* acquire: thread := thread ⊔ lock (WriteVC each entry that grows). */
void lard_mutex_lock(lard_mutex_t *m)
{
    uint32_t me;
    lard__me(&me);
    lard__lock(&m->lock);
    lard__acquire(me, m->vc);
    lard_note_acquire(m, 0);
}

/* release: lock := thread; thread[me] += 1 (WriteVC). */
void lard_mutex_unlock(lard_mutex_t *m)
{
    uint32_t me;
    struct lard__lthread *t = lard__me(&me);
    lard_note_release(m);
    memcpy(m->vc, t->vc, sizeof m->vc);
    lard__tick(me);
    lard__unlock(&m->lock);
}

int lard_barrier_init(lard_barrier_t *b, unsigned n)
{
    if (n == 0)
        return EINVAL;
    memset(b, 0, sizeof *b);
    b->n = n;
    return 0;
}

/* Every waiter's clock before the wait happens before every waiter's
 * operations after it: each waiter joins its clock into `acc` and ticks its
 * own entry (release); the last one publishes `acc` as `out` and opens the
 * next generation; every waiter then joins `out` (acquire).  `out` of
 * generation g is overwritten only when g+1 completes, which needs every
 * waiter of g to have read it first. */
int lard_barrier_wait(lard_barrier_t *b)
{
    uint32_t me, gen;
    int serial = 0;
    struct lard__lthread *t = lard__me(&me);
    lard__lock(&b->lock);
    lard__join_into(b->acc, t->vc);
    lard__tick(me);
    gen = b->gen;
    if (++b->count == b->n) {
        memcpy(b->out, b->acc, sizeof b->out);
        memset(b->acc, 0, sizeof b->acc);
        b->count = 0;
        __atomic_store_n(&b->gen, gen + 1, __ATOMIC_RELEASE);
        lard__futex_wake(&b->gen, INT_MAX);
        serial = 1;
    } else {
        lard__unlock(&b->lock);
        while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen)
            lard__futex_wait(&b->gen, gen);
        lard__lock(&b->lock);
    }
    lard__acquire(me, b->out);
    lard__unlock(&b->lock);
    return serial;
}

void lard_volatile_init(lard_volatile_t *v, uint64_t value)
{
    memset(v, 0, sizeof *v);
    v->value = value;
}

/* Like a Java volatile: the value and its clock change together under the
 * internal lock.  store = release: vol.vc := vol.vc ⊔ thread, then
 * thread[me] += 1.  load = acquire: thread := thread ⊔ vol.vc.  The value
 * itself is accessed untracked, so volatile accesses never race. */
uint64_t lard_volatile_load(lard_volatile_t *v)
{
    uint32_t me;
    uint64_t val;
    lard__me(&me);
    lard__lock(&v->lock);
    val = __atomic_load_n(&v->value, __ATOMIC_RELAXED);
    lard__acquire(me, v->vc);
    lard__unlock(&v->lock);
    return val;
}

void lard_volatile_store(lard_volatile_t *v, uint64_t value)
{
    uint32_t me;
    struct lard__lthread *t = lard__me(&me);
    lard__lock(&v->lock);
    lard__join_into(v->vc, t->vc);
    __atomic_store_n(&v->value, value, __ATOMIC_RELAXED);
    lard__tick(me);
    lard__unlock(&v->lock);
}
