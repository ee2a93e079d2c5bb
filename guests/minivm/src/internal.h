/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* minivm internals.  Everything here is system code in LARD's sense: plain C
 * (untracked) accesses and unreported synchronization; the only LARD ops are
 * Thread, WriteVC (language-level clocks), ClearHistory and CopyHistory. */
#ifndef MINIVM_INTERNAL_H
#define MINIVM_INTERNAL_H

#include "minivm.h"

#include <pthread.h>
#include <stdint.h>

enum vm_gc_kind { VM_GC_MARKSWEEP, VM_GC_SEMISPACE };
enum vm_thread_mode { VM_THREADS_1TO1, VM_THREADS_MN };

struct vm_opts {
    enum vm_gc_kind gc;
    enum vm_thread_mode threads;
    unsigned kthreads;
    size_t heap_bytes;
    int32_t quantum;
    int reinstall_clock;
    int verbose;
};
extern struct vm_opts vm__opts;

enum vm_tstate { VM_T_UNUSED, VM_T_RUNNABLE, VM_T_RUNNING, VM_T_DONE };

struct vm_worker;

/* One language thread. */
struct vm_thread {
    uint32_t id;
    int state;                            /* enum vm_tstate (atomic) */
    uint64_t vc[VM_MAX_THREADS];          /* mirrored into the detector */
    size_t nroots;
    vm_obj *roots[VM_MAX_ROOTS];          /* the shadow stack: precise roots */
    void (*fn)(vm_ref);
    int (*main_fn)(void);
    int exit_code;
    pthread_t pthread;                    /* 1:1 */
    int has_pthread;
    void *sp;                             /* M:N: saved stack pointer */
    void *stack;
    struct vm_worker *worker;             /* M:N: the kernel thread running it */
    int started;
};

struct vm_worker {
    void *sp;                             /* the scheduler context */
    pthread_t pthread;
    unsigned index;
};

extern struct vm_thread vm__threads[VM_MAX_THREADS];
uint32_t vm__nids(void);
struct vm_thread *vm__self(void);

void vm__fatal(const char *fmt, ...) __attribute__((__noreturn__, __format__(printf, 1, 2)));

/* Stop the world (unreported) and collect; returns when the world runs again.
 * If another thread is already collecting, just waits for it. */
void vm__collect(void);

/* heap.c */
void vm__heap_init(void);
vm_obj *vm__heap_alloc(size_t bytes);     /* NULL when full; no GC */
void vm__heap_collect(void);              /* the world is stopped */
uint32_t vm__class_nslots(uint32_t cls);
uint64_t vm__class_refmap(uint32_t cls);
uint64_t vm__class_volmap(uint32_t cls);
void vm__heap_stats(void);

/* Runtime-internal records reachable from object headers/slots. */
struct vm_monitor {
    uint32_t owner;                       /* language thread id + 1, 0 free */
    uint32_t count;                       /* recursion depth */
    uint64_t vc[VM_MAX_THREADS];          /* clock of the last release */
};

struct vm_volrec {
    uint32_t lock;                        /* internal spin lock */
    uint32_t reserved;
    uint64_t vc[VM_MAX_THREADS];          /* join of all writers' clocks */
};

/* ctx_x86_64.S */
void vm__ctx_switch(void **save_sp, void *to_sp);
void vm__ctx_start(void);

#endif
