/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm.h -- a small managed runtime on LARDx86 (the role of the LARD
 * paper's Jikes LARDVM, §4.3).  See docs/minivm.md.
 *
 * Programs ("workloads") are C functions that use only this API:
 *
 *   - objects of user classes (64-bit int or reference slots, with a
 *     reference map and a volatile map), int arrays (32-bit elements) and
 *     reference arrays, allocated on a garbage-collected heap;
 *   - handles (vm_ref): every reference a program holds lives in a slot of
 *     its language thread's shadow stack, so the collector knows every root
 *     precisely and may move objects at any safepoint;
 *   - language threads (1:1 on pthreads, or M:N green threads on M kernel
 *     threads), monitors on every object, volatile fields.
 *
 * Field and array accesses are the program's own accesses: each is ONE
 * Tracked instruction (lard_loadN/lard_storeN).  The accessors below are
 * always inlined, so in the DWARF line table that instruction is in lard.h,
 * inlined in minivm.h, inlined at the workload's line: a race report's line
 * is the innermost inlined-at location in the workload source.  Everything
 * else the runtime does (headers, mark bits, forwarding, copying, scheduler
 * queues, monitor internals, volatile values, array lengths) is untracked.
 */
#ifndef MINIVM_H
#define MINIVM_H

#include <lard.h>

#include <stddef.h>
#include <stdint.h>

#define VM_INLINE static inline __attribute__((__always_inline__))

/* Language thread ids are 0 (main) .. VM_MAX_THREADS-1, never reused. */
#define VM_MAX_THREADS LARD_MAX_THREADS
/* Handle slots (shadow stack) per language thread. */
#define VM_MAX_ROOTS 2048
/* Slots per object of a user class (the reference/volatile maps are 64-bit). */
#define VM_MAX_SLOTS 64

/* Object header: 32 bytes, then the payload (16-byte aligned). */
typedef struct vm_obj {
    uint32_t cls;            /* class id (VM_CLS_*, or a user class) */
    uint32_t size;           /* bytes of the whole block, multiple of 16 */
    uint64_t gc;             /* mark bit (mark-sweep) / forwarding address
                                (semispace) / next free block (free blocks) */
    uint64_t monitor;        /* struct vm_monitor * (lazily allocated) or 0 */
    uint32_t length;         /* slots (objects) or elements (arrays) */
    uint32_t flags;          /* reserved */
} vm_obj;

#define VM_CLS_FREE 0u       /* a free block (mark-sweep heap) */
#define VM_CLS_INT_ARRAY 1u  /* int32_t elements */
#define VM_CLS_REF_ARRAY 2u  /* reference elements */
#define VM_CLS_FIRST_USER 8u

/* A handle: the address of a root slot holding a reference (or NULL). */
typedef vm_obj **vm_ref;

/* ---- running a program ------------------------------------------------- */

/* Defaults a workload may set before vm_run (options/env override them). */
typedef struct vm_defaults {
    size_t heap_bytes;       /* total heap (semispace: two halves) */
} vm_defaults;

/* Parses options (argv) and environment, starts the VM, runs main_fn as
 * language thread 0, waits for every language thread, returns main_fn's
 * value.  Options (each also as an environment variable):
 *   --gc=marksweep|semispace        MINIVM_GC       (default marksweep)
 *   --threads=1:1|m:n               MINIVM_THREADS  (default 1:1)
 *   --kthreads=M  (M:N only)        MINIVM_KTHREADS (default 2)
 *   --heap=BYTES[k|m]               MINIVM_HEAP     (default: workload's)
 *   --quantum=K   (accesses between safepoint polls / green switches)
 *                                   MINIVM_QUANTUM  (default 50)
 *   --reinstall-clock  (M:N: WriteVC the whole clock on every switch-in)
 *                                   MINIVM_REINSTALL_CLOCK=1
 *   --verbose     (GC statistics on stderr at exit)  MINIVM_VERBOSE=1 */
int vm_run(int argc, char **argv, const vm_defaults *defaults,
           int (*main_fn)(void));

/* ---- classes and allocation (allocation is a safepoint) ---------------- */

/* A user class of nslots 64-bit slots; bit i of refmap: slot i holds a
 * reference; bit i of volmap: slot i is a volatile int field, and slot i+1 is
 * reserved for its vector-clock record (neither a reference nor volatile).
 * Call before spawning threads.  Returns the class id. */
uint32_t vm_define_class(const char *name, uint32_t nslots, uint64_t refmap,
                         uint64_t volmap);

vm_ref vm_new(uint32_t cls);                   /* all slots 0 / null */
vm_ref vm_new_int_array(uint32_t n);           /* all elements 0 */
vm_ref vm_new_ref_array(uint32_t n);           /* all elements null */

/* ---- handles (shadow stack of the current language thread) ------------- */

size_t vm_frame(void);                 /* mark the shadow stack */
void vm_unframe(size_t mark);          /* drop the handles made since mark */
vm_ref vm_local(void);                 /* a new null handle */
void vm_assign(vm_ref dst, vm_ref src);/* dst := src (src may be NULL: null) */
VM_INLINE int vm_is_null(vm_ref h) { return *h == NULL; }
VM_INLINE int vm_same(vm_ref a, vm_ref b) { return *a == *b; }

/* ---- threads ------------------------------------------------------------ */

/* A new language thread running fn(arg') where arg' is a handle of the new
 * thread holding what `arg` holds now (fork edge).  Returns its id. */
int vm_spawn(void (*fn)(vm_ref arg), vm_ref arg);
void vm_join(int tid);                 /* waits, then join edge */
uint32_t vm_thread_id(void);
void vm_yield(void);                   /* safepoint; green switch (M:N) */

/* ---- synchronization ---------------------------------------------------- */

void vm_monitor_enter(vm_ref obj);     /* acquire (may block: safepoint) */
void vm_monitor_exit(vm_ref obj);      /* release */
int64_t vm_volatile_get(vm_ref obj, uint32_t slot);         /* acquire */
void vm_volatile_set(vm_ref obj, uint32_t slot, int64_t v); /* release */

/* The current address of the object (runtime information, untracked; it
 * changes when a semispace collection moves the object). */
uintptr_t vm_address(vm_ref obj);

/* ---- the collector ------------------------------------------------------ */

void vm_gc(void);                      /* a full stop-the-world collection */
/* Collections so far: a runtime statistic (untracked, no edge), like
 * Java's GarbageCollectorMXBean.getCollectionCount(). */
uint64_t vm_gc_count(void);

/* ---- internals used by the inline accessors ----------------------------- */

void vm__safepoint_slow(void);
vm_ref vm__push(vm_obj *o);            /* roots o in a new handle (no GC) */
void vm__bad_index(vm_ref h, uint32_t i) __attribute__((__noreturn__));

/* Per kernel thread: accesses left before the next safepoint poll.  Kept in
 * TLS and touched only through %fs-relative asm, so that a green thread that
 * migrates between kernel threads never uses a stale TLS address. */
extern __thread int32_t vm__budget;

VM_INLINE void vm__poll(void)
{
    int32_t b;
    __asm__ __volatile__("subl $1, %%fs:vm__budget@tpoff\n\t"
                         "movl %%fs:vm__budget@tpoff, %0"
                         : "=r"(b) : : "cc");
    if (__builtin_expect(b <= 0, 0))
        vm__safepoint_slow();
}

VM_INLINE uint64_t *vm__slots(vm_obj *o) { return (uint64_t *)(o + 1); }
VM_INLINE int32_t *vm__ints(vm_obj *o) { return (int32_t *)(o + 1); }

VM_INLINE void vm__check(vm_ref h, uint32_t i)
{
    if (__builtin_expect(i >= (*h)->length, 0))
        vm__bad_index(h, i);
}

/* ---- program accesses: each is one Tracked instruction ----------------- */

/* Fields of user classes: slot i (not a volatile slot). */
VM_INLINE int64_t vm_get_int(vm_ref obj, uint32_t slot)
{
    vm__poll();
    vm__check(obj, slot);
    return (int64_t)lard_load64(&vm__slots(*obj)[slot]);
}

VM_INLINE void vm_set_int(vm_ref obj, uint32_t slot, int64_t v)
{
    vm__poll();
    vm__check(obj, slot);
    lard_store64(&vm__slots(*obj)[slot], (uint64_t)v);
}

/* Returns a new handle of the current frame. */
VM_INLINE vm_ref vm_get_ref(vm_ref obj, uint32_t slot)
{
    vm__poll();
    vm__check(obj, slot);
    return vm__push((vm_obj *)(uintptr_t)lard_load64(&vm__slots(*obj)[slot]));
}

/* val may be NULL (stores null). */
VM_INLINE void vm_set_ref(vm_ref obj, uint32_t slot, vm_ref val)
{
    vm__poll();
    vm__check(obj, slot);
    lard_store64(&vm__slots(*obj)[slot], (uint64_t)(uintptr_t)(val ? *val : NULL));
}

/* Arrays.  The length is final: read untracked (like Java's arraylength). */
VM_INLINE uint32_t vm_length(vm_ref arr)
{
    return (*arr)->length;
}

VM_INLINE int32_t vm_aget_int(vm_ref arr, uint32_t i)
{
    vm__poll();
    vm__check(arr, i);
    return (int32_t)lard_load32(&vm__ints(*arr)[i]);
}

VM_INLINE void vm_aset_int(vm_ref arr, uint32_t i, int32_t v)
{
    vm__poll();
    vm__check(arr, i);
    lard_store32(&vm__ints(*arr)[i], (uint32_t)v);
}

VM_INLINE vm_ref vm_aget_ref(vm_ref arr, uint32_t i)
{
    vm__poll();
    vm__check(arr, i);
    return vm__push((vm_obj *)(uintptr_t)lard_load64(&vm__slots(*arr)[i]));
}

VM_INLINE void vm_aset_ref(vm_ref arr, uint32_t i, vm_ref val)
{
    vm__poll();
    vm__check(arr, i);
    lard_store64(&vm__slots(*arr)[i], (uint64_t)(uintptr_t)(val ? *val : NULL));
}

#endif
