/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: the bookkeeping entry points of the ThreadSanitizer
 * instrumentation ABI for C and C++ (function entry and exit, start-up,
 * ignored regions).  Apart from atomic.c so that a runtime with an ABI of
 * its own (Go's, go/race.c) links the atomics without these names.
 */
#include "rt.h"

extern __thread uintptr_t lardcc_stack_low;

/* Function entry: the lowest stack pointer seen bounds the stack memory of
 * frames that have since returned (see lardcc_clear_dead_stack); the call
 * stack moves to the callee (stack.c). */
void __tsan_func_entry(void *caller_pc)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (sp < lardcc_stack_low || lardcc_stack_low == 0)
        lardcc_stack_low = sp;
    lardcc_stack_enter(sp, (uint64_t)(uintptr_t)caller_pc);
}

void __tsan_func_exit(void)
{
    lardcc_stack_exit();
}

void __tsan_init(void)
{
    lardcc_me();
}

/* Emitted around calls from functions that must not be checked; their own
 * accesses are not instrumented, so there is nothing to switch off. */
void __tsan_ignore_thread_begin(void)
{
}

void __tsan_ignore_thread_end(void)
{
}
