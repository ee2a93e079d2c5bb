/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Program memory: allocation that clears access histories on free (Rule 3)
 * and movement that carries them along (Rule 4).
 *
 * Blocks of up to LARD__MAX_SMALL bytes come from global size-class free
 * lists (LIFO, shared by all threads, protected by an internal unreported
 * lock), so a block freed by one thread is handed to the next allocation of
 * the same class by any thread -- the reuse LARD §3.3 is about.  Larger
 * blocks go to libc malloc/free.  Every block has a 16-byte header. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define LARD__MIN_SHIFT 4                 /* 16 bytes */
#define LARD__MAX_SHIFT 11                /* 2048 bytes */
#define LARD__MAX_SMALL (1u << LARD__MAX_SHIFT)
#define LARD__NCLASSES (LARD__MAX_SHIFT - LARD__MIN_SHIFT + 1)
#define LARD__CHUNK (64u * 1024u)
#define LARD__LARGE UINT64_MAX

struct header {
    uint64_t size;                        /* usable bytes */
    uint64_t cls;                         /* size class, or LARD__LARGE */
};

struct free_block {
    struct free_block *next;
};

static uint32_t alloc_lock;
static struct free_block *free_lists[LARD__NCLASSES];
static char *chunk_cur, *chunk_end;

static void *small_alloc(unsigned cls)
{
    size_t bsize = sizeof(struct header) + ((size_t)1 << (cls + LARD__MIN_SHIFT));
    struct header *h;
    lard__lock(&alloc_lock);
    if (free_lists[cls]) {
        h = (struct header *)free_lists[cls];
        free_lists[cls] = free_lists[cls]->next;
    } else {
        if (chunk_cur == NULL || (size_t)(chunk_end - chunk_cur) < bsize) {
            chunk_cur = (char *)malloc(LARD__CHUNK);
            if (chunk_cur == NULL) {
                lard__unlock(&alloc_lock);
                return NULL;
            }
            chunk_end = chunk_cur + LARD__CHUNK;
        }
        h = (struct header *)chunk_cur;
        chunk_cur += bsize;
    }
    lard__unlock(&alloc_lock);
    h->size = (size_t)1 << (cls + LARD__MIN_SHIFT);
    h->cls = cls;
    return h + 1;
}

static void *alloc_block(size_t n)
{
    unsigned cls = 0;
    struct header *h;
    if (n <= LARD__MAX_SMALL) {
        while (((size_t)1 << (cls + LARD__MIN_SHIFT)) < n)
            cls++;
        return small_alloc(cls);
    }
    if (n > SIZE_MAX - sizeof *h)
        return NULL;
    h = (struct header *)malloc(sizeof *h + n);
    if (h == NULL)
        return NULL;
    h->size = n;
    h->cls = LARD__LARGE;
    return h + 1;
}

/* The block is an object of n bytes allocated at the caller's site. */
void *lard_malloc(size_t n)
{
    void *p;
    lard__current();
    p = alloc_block(n);
    if (p != NULL)
        lard_note_alloc(p, n, __builtin_return_address(0));
    return p;
}

/* The block's histories are cleared before it can be reused (Rule 3). */
void lard_free(void *p)
{
    struct header *h;
    struct free_block *b;
    if (p == NULL)
        return;
    h = (struct header *)p - 1;
    lard_note_free(p);
    lard_clear_history(p, h->size);
    if (h->cls == LARD__LARGE) {
        free(h);
        return;
    }
    b = (struct free_block *)h;
    lard__lock(&alloc_lock);
    b->next = free_lists[h->cls];
    free_lists[h->cls] = b;
    lard__unlock(&alloc_lock);
}

/* Move n bytes from src to dst (the regions may overlap): copy the access
 * histories and the data (untracked), then clear the histories of the part
 * of src that is not also part of dst (Rule 4). */
void lard_move(void *dst, const void *src, size_t n)
{
    uintptr_t s = (uintptr_t)src, d = (uintptr_t)dst;
    if (n == 0 || s == d)
        return;
    lard_copy_history(src, dst, n);
    memmove(dst, src, n);
    if (d >= s + n || s >= d + n)
        lard_clear_history((void *)s, n);       /* disjoint */
    else if (d > s)
        lard_clear_history((void *)s, d - s);   /* src head stays behind */
    else
        lard_clear_history((void *)(d + n), s - d); /* src tail stays behind */
}
