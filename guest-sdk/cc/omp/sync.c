/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* lard-cc runtime, OpenMP: critical, atomic, ordered, single copy and the lock routines
 * (included by cc/gomp.c). */

/* ------------------------------------------- critical, atomic, ordered */

static char critical_key, atomic_key;

#define ACQUIRE_AFTER(name, params, args, key, sync)                                  \
    void __real_##name params;                                                        \
    void __wrap_##name params                                                         \
    {                                                                                 \
        IN_LIBGOMP(__real_##name args);                                               \
        lard_note_acquire(key, 0);                                                    \
        lardcc_acquire(lardcc_sync_of(sync));                                         \
    }
#define RELEASE_BEFORE(name, params, args, key, sync)                                 \
    void __real_##name params;                                                        \
    void __wrap_##name params                                                         \
    {                                                                                 \
        lard_note_release(key);                                                       \
        lardcc_release(lardcc_sync_of(sync));                                         \
        IN_LIBGOMP(__real_##name args);                                               \
    }
ACQUIRE_AFTER(GOMP_critical_start, (void), (), &critical_key, cg_key(&critical_key))
RELEASE_BEFORE(GOMP_critical_end, (void), (), &critical_key, cg_key(&critical_key))
ACQUIRE_AFTER(GOMP_critical_name_start, (void **p), (p), p, cg_key(p))
RELEASE_BEFORE(GOMP_critical_name_end, (void **p), (p), p, cg_key(p))
ACQUIRE_AFTER(GOMP_atomic_start, (void), (), &atomic_key, &atomic_key)
RELEASE_BEFORE(GOMP_atomic_end, (void), (), &atomic_key, &atomic_key)

/* Ordered regions run in iteration order: each one's end happens before the
 * next one's start. */
void __real_GOMP_ordered_start(void);
void __wrap_GOMP_ordered_start(void)
{
    IN_LIBGOMP(__real_GOMP_ordered_start());
    if (thr.cur_team)
        lardcc_acquire(&thr.cur_team->ordered);
}

void __real_GOMP_ordered_end(void);
void __wrap_GOMP_ordered_end(void)
{
    if (thr.cur_team)
        lardcc_release(&thr.cur_team->ordered);
    IN_LIBGOMP(__real_GOMP_ordered_end());
}

/* copyprivate: the single thread's values reach the others. */
void *__real_GOMP_single_copy_start(void);
void *__wrap_GOMP_single_copy_start(void)
{
    void *r = __real_GOMP_single_copy_start();
    if (r != NULL && thr.cur_team)
        lardcc_acquire(&thr.cur_team->copy);
    return r;
}

void __real_GOMP_single_copy_end(void *);
void __wrap_GOMP_single_copy_end(void *data)
{
    if (thr.cur_team)
        lardcc_release_join(&thr.cur_team->copy);
    IN_LIBGOMP(__real_GOMP_single_copy_end(data));
}

/* ---------------------------------------------------------------- locks */


#define LOCK_API(kind)                                                                \
    void __real_omp_init_##kind(void *);                                              \
    void __wrap_omp_init_##kind(void *l)                                              \
    {                                                                                 \
        lardcc_sync_reset(l);                                                         \
        __real_omp_init_##kind(l);                                                    \
    }                                                                                 \
    void __real_omp_set_##kind(void *);                                               \
    void __wrap_omp_set_##kind(void *l)                                               \
    {                                                                                 \
        __real_omp_set_##kind(l);                                                     \
        lard_note_acquire(l, 0);                                                      \
        lardcc_acquire(lardcc_sync_of(cg_key(l)));                                    \
    }                                                                                 \
    void __real_omp_unset_##kind(void *);                                             \
    void __wrap_omp_unset_##kind(void *l)                                             \
    {                                                                                 \
        lard_note_release(l);                                                         \
        lardcc_release(lardcc_sync_of(cg_key(l)));                                    \
        __real_omp_unset_##kind(l);                                                   \
    }                                                                                 \
    int __real_omp_test_##kind(void *);                                               \
    int __wrap_omp_test_##kind(void *l)                                               \
    {                                                                                 \
        int r = __real_omp_test_##kind(l);                                            \
        if (r) {                                                                      \
            lard_note_acquire(l, 0);                                                  \
            lardcc_acquire(lardcc_sync_of(cg_key(l)));                                \
        }                                                                             \
        return r;                                                                     \
    }
LOCK_API(lock)
LOCK_API(nest_lock)
