/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm heap: classes, allocation, and the two precise stop-the-world
 * collectors.
 *
 *   mark-sweep  non-moving.  Marks from the shadow stacks, then sweeps the
 *               heap linearly: every unmarked object is reclaimed with ONE
 *               ClearHistory over its whole block (lard_clear_history), then
 *               coalesced with its free neighbours into LIFO free lists that
 *               any thread allocates from next (memory reuse, Rule 3).
 *   semispace   copying (Cheney).  Every object reached is moved: CopyHistory
 *               old->new over the whole block, the data copied untracked,
 *               then ClearHistory over the old block (Rule 4, conservatively
 *               for every object, like Jikes LARDVM).  Afterwards every dead
 *               object of from-space gets ClearHistory too, so from-space is
 *               history-free when it becomes to-space again.
 *
 * All heap metadata (headers, mark bits, forwarding pointers, free lists,
 * reference updates) is accessed untracked.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRANULE 16u
#define MS_EXACT 64u                      /* exact free lists up to 64 granules */
#define MARK_BIT 1u

struct vm_class {
    const char *name;
    uint32_t nslots;
    uint64_t refmap, volmap;
};
static struct vm_class classes[256];
static uint32_t nclasses = VM_CLS_FIRST_USER;

static pthread_mutex_t heap_mutex = PTHREAD_MUTEX_INITIALIZER;
static char *heap;                        /* whole heap, page aligned */
static size_t heap_bytes;

/* mark-sweep */
static char *ms_bump, *ms_end;
static vm_obj *ms_free[MS_EXACT + 1];     /* by granules */
static vm_obj *ms_large;                  /* > MS_EXACT granules, first fit */

/* semispace */
static char *ss_from, *ss_to, *ss_bump, *ss_end;
static size_t ss_half;

/* statistics */
static uint64_t st_collections, st_cleared_objs, st_cleared_bytes;
static uint64_t st_moved_objs, st_moved_bytes, st_allocs;

uint32_t vm_define_class(const char *name, uint32_t nslots, uint64_t refmap,
                         uint64_t volmap)
{
    uint32_t i;
    if (nclasses >= sizeof classes / sizeof classes[0])
        vm__fatal("too many classes");
    if (nslots > VM_MAX_SLOTS)
        vm__fatal("class %s: more than %d slots", name, VM_MAX_SLOTS);
    for (i = 0; i < VM_MAX_SLOTS; i++) {
        if ((refmap | volmap) >> i & 1 && i >= nslots)
            vm__fatal("class %s: map bit %u beyond its slots", name, i);
        if (volmap >> i & 1 &&
            (i + 1 >= nslots || (refmap >> i & 1) || ((refmap | volmap) >> (i + 1) & 1)))
            vm__fatal("class %s: volatile slot %u needs a free clock slot %u", name,
                      i, i + 1);
    }
    classes[nclasses].name = name;
    classes[nclasses].nslots = nslots;
    classes[nclasses].refmap = refmap;
    classes[nclasses].volmap = volmap;
    return nclasses++;
}

uint32_t vm__class_nslots(uint32_t cls) { return classes[cls].nslots; }
uint64_t vm__class_refmap(uint32_t cls) { return classes[cls].refmap; }
uint64_t vm__class_volmap(uint32_t cls) { return classes[cls].volmap; }

void vm__heap_init(void)
{
    void *p;
    heap_bytes = (vm__opts.heap_bytes + 8191) & ~(size_t)8191;
    if (posix_memalign(&p, 4096, heap_bytes) != 0)
        vm__fatal("cannot allocate a %zu-byte heap", heap_bytes);
    heap = p;
    memset(heap, 0, heap_bytes);
    if (vm__opts.gc == VM_GC_MARKSWEEP) {
        ms_bump = heap;
        ms_end = heap + heap_bytes;
    } else {
        ss_half = heap_bytes / 2;
        ss_to = heap;
        ss_from = heap + ss_half;
        ss_bump = ss_to;
        ss_end = ss_to + ss_half;
    }
}

/* ---- allocation (under the internal heap lock, never reported) ---------- */

static void ms_put_free(char *p, size_t bytes)
{
    vm_obj *f = (vm_obj *)p;
    size_t g = bytes / GRANULE;
    f->cls = VM_CLS_FREE;
    f->size = (uint32_t)bytes;
    f->monitor = 0;
    if (g <= MS_EXACT) {
        f->gc = (uint64_t)(uintptr_t)ms_free[g];
        ms_free[g] = f;
    } else {
        f->gc = (uint64_t)(uintptr_t)ms_large;
        ms_large = f;
    }
}

/* Takes `bytes` from the front of free block f (already unlinked). */
static vm_obj *ms_split(vm_obj *f, size_t bytes)
{
    size_t rest = f->size - bytes;
    if (rest != 0)
        ms_put_free((char *)f + bytes, rest);
    return f;
}

static vm_obj *ms_alloc(size_t bytes)
{
    size_t g = bytes / GRANULE, k;
    vm_obj *o, **pp;
    if (g <= MS_EXACT && ms_free[g]) {
        o = ms_free[g];
        ms_free[g] = (vm_obj *)(uintptr_t)o->gc;
        return o;
    }
    if ((size_t)(ms_end - ms_bump) >= bytes) {
        o = (vm_obj *)ms_bump;
        ms_bump += bytes;
        return o;
    }
    /* a bigger exact block, leaving a remainder of at least a header */
    for (k = g + 2; k <= MS_EXACT; k++)
        if (ms_free[k]) {
            o = ms_free[k];
            ms_free[k] = (vm_obj *)(uintptr_t)o->gc;
            return ms_split(o, bytes);
        }
    for (pp = &ms_large; *pp; pp = (vm_obj **)&(*pp)->gc) {
        size_t sz = (*pp)->size;
        if (sz == bytes || sz >= bytes + 2 * GRANULE) {
            o = *pp;
            *pp = (vm_obj *)(uintptr_t)o->gc;
            return ms_split(o, bytes);
        }
    }
    return NULL;
}

static vm_obj *ss_alloc(size_t bytes)
{
    vm_obj *o;
    if ((size_t)(ss_end - ss_bump) < bytes)
        return NULL;
    o = (vm_obj *)ss_bump;
    ss_bump += bytes;
    return o;
}

vm_obj *vm__heap_alloc(size_t bytes)
{
    vm_obj *o;
    pthread_mutex_lock(&heap_mutex);
    o = vm__opts.gc == VM_GC_MARKSWEEP ? ms_alloc(bytes) : ss_alloc(bytes);
    if (o)
        st_allocs++;
    pthread_mutex_unlock(&heap_mutex);
    return o;
}

/* Allocation is a safepoint.  The new object is zeroed untracked: its
 * memory's histories were cleared when its previous occupant died.  The
 * object's extent is reported (lard_note_alloc) with `site`, the return
 * address into the program that asked for it, for object-level detectors
 * (docs/events.md); a report, not synchronization. */
static vm_ref new_object(uint32_t cls, uint32_t length, size_t payload, const void *site)
{
    size_t bytes = (sizeof(vm_obj) + payload + GRANULE - 1) & ~(size_t)(GRANULE - 1);
    vm_obj *o;
    int tries;
    if (bytes > UINT32_MAX)
        vm__fatal("object too large");
    vm__poll();                           /* a safepoint */
    for (tries = 0;; tries++) {
        o = vm__heap_alloc(bytes);
        if (o)
            break;
        if (tries == 3)
            vm__fatal("out of memory: %zu-byte object, heap %zu bytes (--heap)",
                      bytes, heap_bytes);
        vm__collect();
    }
    memset(o, 0, bytes);
    o->cls = cls;
    o->size = (uint32_t)bytes;
    o->length = length;
    lard_note_alloc(o, bytes, site);
    return vm__push(o);
}

vm_ref vm_new(uint32_t cls)
{
    if (cls < VM_CLS_FIRST_USER || cls >= nclasses)
        vm__fatal("vm_new: bad class %u", cls);
    return new_object(cls, classes[cls].nslots, (size_t)classes[cls].nslots * 8,
                      __builtin_return_address(0));
}

vm_ref vm_new_int_array(uint32_t n)
{
    return new_object(VM_CLS_INT_ARRAY, n, (size_t)n * 4, __builtin_return_address(0));
}

vm_ref vm_new_ref_array(uint32_t n)
{
    return new_object(VM_CLS_REF_ARRAY, n, (size_t)n * 8, __builtin_return_address(0));
}

/* ---- shared collector code ---------------------------------------------- */

/* Runtime records of a dead object (not heap objects themselves). */
static void free_records(vm_obj *o)
{
    free((void *)(uintptr_t)o->monitor);
    if (o->cls >= VM_CLS_FIRST_USER) {
        uint64_t vm = classes[o->cls].volmap;
        uint32_t i;
        for (i = 0; vm; i++, vm >>= 1)
            if (vm & 1)
                free((void *)(uintptr_t)vm__slots(o)[i + 1]);
    }
}

/* Reclaim (Rule 3): ClearHistory over the whole block (and the object's
 * end reported for object-level detectors).  A moved object needs no
 * report: CopyHistory from its first byte moves it for them too. */
static void reclaim(vm_obj *o)
{
    lard_note_free(o);
    free_records(o);
    lard_clear_history(o, o->size);
    st_cleared_objs++;
    st_cleared_bytes += o->size;
}

typedef void (*slot_fn)(vm_obj **slot);

static void for_each_ref(vm_obj *o, slot_fn fn)
{
    uint32_t i;
    if (o->cls == VM_CLS_REF_ARRAY) {
        for (i = 0; i < o->length; i++)
            fn((vm_obj **)&vm__slots(o)[i]);
    } else if (o->cls >= VM_CLS_FIRST_USER) {
        uint64_t rm = classes[o->cls].refmap;
        for (i = 0; rm; i++, rm >>= 1)
            if (rm & 1)
                fn((vm_obj **)&vm__slots(o)[i]);
    }
}

static void for_each_root(slot_fn fn)
{
    uint32_t n = vm__nids(), t;
    size_t i;
    for (t = 0; t < n; t++) {
        struct vm_thread *th = &vm__threads[t];
        int st = __atomic_load_n(&th->state, __ATOMIC_ACQUIRE);
        if (st == VM_T_UNUSED || st == VM_T_DONE)
            continue;
        for (i = 0; i < th->nroots; i++)
            fn(&th->roots[i]);
    }
}

/* ---- mark-sweep --------------------------------------------------------- */

static vm_obj **mark_stack;
static size_t mark_top, mark_cap;

static void mark_push(vm_obj **slot)
{
    vm_obj *o = *slot;
    if (o == NULL || (o->gc & MARK_BIT))
        return;
    o->gc |= MARK_BIT;
    if (mark_top == mark_cap) {
        mark_cap = mark_cap ? 2 * mark_cap : 1024;
        mark_stack = realloc(mark_stack, mark_cap * sizeof *mark_stack);
        if (mark_stack == NULL)
            vm__fatal("out of memory (mark stack)");
    }
    mark_stack[mark_top++] = o;
}

static void ms_collect(void)
{
    char *p, *run = NULL;
    size_t g;
    for_each_root(mark_push);
    while (mark_top)
        for_each_ref(mark_stack[--mark_top], mark_push);
    /* sweep, rebuilding the free lists with coalescing */
    for (g = 0; g <= MS_EXACT; g++)
        ms_free[g] = NULL;
    ms_large = NULL;
    for (p = heap; p < ms_bump;) {
        vm_obj *o = (vm_obj *)p;
        size_t sz = o->size;
        if (sz == 0 || sz % GRANULE)
            vm__fatal("heap corrupt at %p", (void *)p);
        if (o->cls != VM_CLS_FREE && (o->gc & MARK_BIT)) {
            o->gc &= ~(uint64_t)MARK_BIT;
            if (run)
                ms_put_free(run, (size_t)(p - run));
            run = NULL;
        } else {
            if (o->cls != VM_CLS_FREE)
                reclaim(o);
            if (!run)
                run = p;
        }
        p += sz;
    }
    if (run)                              /* the tail goes back to the bump area */
        ms_bump = run;
}

/* ---- semispace ---------------------------------------------------------- */

static int in_from(vm_obj *o)
{
    return (char *)o >= ss_from && (char *)o < ss_from + ss_half;
}

/* Move (Rule 4): CopyHistory old->new, copy, ClearHistory old. */
static void ss_forward(vm_obj **slot)
{
    vm_obj *o = *slot, *n;
    if (o == NULL || !in_from(o))
        return;
    if (o->gc) {                          /* already moved */
        *slot = (vm_obj *)(uintptr_t)o->gc;
        return;
    }
    if ((size_t)(ss_end - ss_bump) < o->size)
        vm__fatal("out of memory: live data exceeds a semispace (--heap)");
    n = (vm_obj *)ss_bump;
    ss_bump += o->size;
    lard_copy_history(o, n, o->size);
    memcpy(n, o, o->size);
    lard_clear_history(o, o->size);
    o->gc = (uint64_t)(uintptr_t)n;
    *slot = n;
    st_moved_objs++;
    st_moved_bytes += o->size;
}

static void ss_collect(void)
{
    char *scan, *p, *old_bump = ss_bump, *tmp;
    tmp = ss_from;
    ss_from = ss_to;
    ss_to = tmp;
    ss_bump = ss_to;
    ss_end = ss_to + ss_half;
    for_each_root(ss_forward);
    for (scan = ss_to; scan < ss_bump; scan += ((vm_obj *)scan)->size)
        for_each_ref((vm_obj *)scan, ss_forward);
    /* dead objects of from-space */
    for (p = ss_from; p < old_bump; p += ((vm_obj *)p)->size) {
        vm_obj *o = (vm_obj *)p;
        if (o->gc == 0)
            reclaim(o);
    }
}

void vm__heap_collect(void)
{
    st_collections++;
    if (vm__opts.gc == VM_GC_MARKSWEEP)
        ms_collect();
    else
        ss_collect();
}

void vm__heap_stats(void)
{
    fprintf(stderr,
            "minivm: gc=%s heap=%zu collections=%llu allocs=%llu "
            "cleared=%llu objs/%llu bytes moved=%llu objs/%llu bytes\n",
            vm__opts.gc == VM_GC_MARKSWEEP ? "marksweep" : "semispace", heap_bytes,
            (unsigned long long)st_collections, (unsigned long long)st_allocs,
            (unsigned long long)st_cleared_objs, (unsigned long long)st_cleared_bytes,
            (unsigned long long)st_moved_objs, (unsigned long long)st_moved_bytes);
}
