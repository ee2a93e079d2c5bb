/* SPDX-License-Identifier: MIT OR Apache-2.0
 * A small allocator exported under mimalloc's names, linked into
 * own_alloc.c and own_alloc_racy.c as mimalloc is linked into a program
 * that uses it: 64-byte blocks from a static arena, a free list guarded
 * by a pthread mutex, counters of its own. Binary mode takes `mi_malloc`
 * and `mi_free` for allocation and this file for system code
 * (docs/binary-mode.md, "Allocators in the executable"): its lock is not
 * the program's synchronization, its accesses are not checked, and a
 * block it hands out again has no history. */
#include <pthread.h>
#include <stddef.h>

#define BLOCK 64
#define BLOCKS 1024

struct block {
    struct block *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Alignas(64) unsigned char arena[BLOCKS * BLOCK];
static size_t used;
static struct block *free_list;
static unsigned long allocs, frees;

void *mi_malloc(size_t n) {
    if (n > BLOCK)
        return NULL;
    pthread_mutex_lock(&lock);
    struct block *b = free_list;
    if (b)
        free_list = b->next;
    else if (used < BLOCKS)
        b = (struct block *)&arena[BLOCK * used++];
    allocs++;
    pthread_mutex_unlock(&lock);
    return b;
}

void mi_free(void *p) {
    if (!p)
        return;
    struct block *b = p;
    pthread_mutex_lock(&lock);
    b->next = free_list;
    free_list = b;
    frees++;
    pthread_mutex_unlock(&lock);
}

/* Blocks allocated and not freed. */
unsigned long mi_live(void) {
    pthread_mutex_lock(&lock);
    unsigned long n = allocs - frees;
    pthread_mutex_unlock(&lock);
    return n;
}
