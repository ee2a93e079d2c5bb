/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: memory a library function reads or writes for its
 * caller (ranges.def: memcpy's source and destination, strlen's string,
 * read's buffer; docs/lard-cc.md, "Library calls").  lard-cc renames the
 * program's references to each function of the table (libc_one.S), so
 * that only the program's own calls come here -- libc's calls for itself
 * (fread filling its buffer) do not.  Each call is reported to the
 * emulator with lardcc_note_ranges: the table's index, the arguments, the
 * result for a function whose ranges it gives, the program's return
 * address and call stack.  The emulator computes the ranges from the same
 * table as binary mode (emu/src/intercept/ranges.rs) and checks them as
 * Tracked accesses of this thread at the program's call.  Natively the
 * note does nothing.
 */
#include "rt.h"

#include <stdint.h>

/* Emitted by libc_one.S, one per function. */
struct lardcc_libc_desc {
    void *real;
    uint16_t index;
    uint8_t at_return;
};

/* What lardcc_note_ranges reports (read by the emulator: intercept/mod.rs). */
struct lardcc_ranges_note {
    uint64_t index;
    uint64_t args[3];
    uint64_t result;
    uint64_t ret;
    uint64_t stack;
};

__attribute__((__noinline__, __used__)) void lardcc_note_ranges(const struct lardcc_ranges_note *n)
{
    __asm__ volatile("" : : "r"(n) : "memory");
}

/* The calls whose result the runtime waits for, innermost last. */
struct libc_frame {
    uintptr_t ret, sp;
    const struct lardcc_libc_desc *d;
    uint64_t args[3];
};
#define LIBC_FRAMES 64
static __thread struct libc_frame libc_frames[LIBC_FRAMES];
static __thread unsigned libc_depth;

void __lardcc_libc_return(void);
void *lardcc_libc_enter(const struct lardcc_libc_desc *d, const uint64_t *regs, uintptr_t *slot);
uintptr_t lardcc_libc_leave(uint64_t result, uintptr_t sp);

static void note(const struct lardcc_libc_desc *d, const uint64_t *args, uint64_t result,
                 uintptr_t ret)
{
    struct lardcc_ranges_note n = {
        .index = d->index,
        .args = {args[0], args[1], args[2]},
        .result = result,
        .ret = ret,
        .stack = lardcc_stack_id,
    };
    lardcc_note_ranges(&n);
}

/* LLVM's ThreadSanitizer pass (clang, rustc) turns memcpy, memmove and
 * memset intrinsics into these calls: the same reports as the program's
 * calls of the functions themselves. */
extern const struct lardcc_libc_desc __lardcc_libc_desc_memcpy, __lardcc_libc_desc_memmove,
    __lardcc_libc_desc_memset;
void *memcpy(void *, const void *, __SIZE_TYPE__);
void *memmove(void *, const void *, __SIZE_TYPE__);
void *memset(void *, int, __SIZE_TYPE__);
void *__tsan_memcpy(void *d, const void *s, __SIZE_TYPE__ n);
void *__tsan_memmove(void *d, const void *s, __SIZE_TYPE__ n);
void *__tsan_memset(void *d, int c, __SIZE_TYPE__ n);

void *__tsan_memcpy(void *d, const void *s, __SIZE_TYPE__ n)
{
    uint64_t args[3] = {(uintptr_t)d, (uintptr_t)s, n};
    note(&__lardcc_libc_desc_memcpy, args, 0, (uintptr_t)__builtin_return_address(0));
    return memcpy(d, s, n);
}

void *__tsan_memmove(void *d, const void *s, __SIZE_TYPE__ n)
{
    uint64_t args[3] = {(uintptr_t)d, (uintptr_t)s, n};
    note(&__lardcc_libc_desc_memmove, args, 0, (uintptr_t)__builtin_return_address(0));
    return memmove(d, s, n);
}

void *__tsan_memset(void *d, int c, __SIZE_TYPE__ n)
{
    uint64_t args[3] = {(uintptr_t)d, (uint64_t)(unsigned)c, n};
    note(&__lardcc_libc_desc_memset, args, 0, (uintptr_t)__builtin_return_address(0));
    return memset(d, c, n);
}

/* A call arrives: regs holds r9, r8, rcx, rdx, rsi, rdi, rax (libc_entry.S),
 * slot the return address. */
void *lardcc_libc_enter(const struct lardcc_libc_desc *d, const uint64_t *regs, uintptr_t *slot)
{
    uint64_t args[3] = {regs[5], regs[4], regs[3]};
    if (!d->at_return) {
        note(d, args, 0, *slot);
        return d->real;
    }
    /* Beyond LIBC_FRAMES nested calls (recursion through a qsort
     * comparator), a result goes unchecked. */
    if (libc_depth < LIBC_FRAMES) {
        struct libc_frame *f = &libc_frames[libc_depth++];
        f->ret = *slot;
        f->sp = (uintptr_t)slot + 8;
        f->d = d;
        f->args[0] = args[0];
        f->args[1] = args[1];
        f->args[2] = args[2];
        *slot = (uintptr_t)__lardcc_libc_return;
    }
    return d->real;
}

/* A call returns with result: its frame is the innermost whose stack
 * pointer matches (deeper ones were left by longjmp). */
uintptr_t lardcc_libc_leave(uint64_t result, uintptr_t sp)
{
    while (libc_depth > 0) {
        struct libc_frame *f = &libc_frames[--libc_depth];
        if (f->sp == sp) {
            note(f->d, f->args, result, f->ret);
            return f->ret;
        }
    }
    lard__fatal("lard-cc: a library call returned to a caller the runtime does not know");
    return 0;
}
