/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: the memory-access entry points of the ThreadSanitizer
 * instrumentation ABI (gcc 12 and clang 14), turned into Tracked accesses.
 *
 * Every stub is a leaf that never moves %rsp, so at each Tracked instruction
 * [%rsp] is the return address into the program.  The stubs live in the
 * section `lard_caller_pc`; the emulator attributes a Tracked access there to
 * the program's call instruction (docs/lard-cc.md), so reports name the
 * program's file:line, never this file.
 *
 * Before its Tracked access every stub loads the kernel thread's current
 * call-stack id (stack.c) into %ecx, where the emulator reads it to keep the
 * access's call stack beside its PC (docs/lard-cc.md, "Call stacks"); %rcx
 * is a scratch register of the calling convention.
 *
 * Reads are Tracked loads (the value is discarded).  Writes are Tracked
 * `lock or $0` on the program's bytes: an atomic read-modify-write that
 * stores back exactly the value it read, so it never changes memory and
 * never writes a stale value over a concurrent store (a plain load + store
 * could); the detector sees a read and a write of the right size.  Sizes of
 * 16 are two 8-byte accesses; ranges are 8-byte accesses then single bytes.
 */
#define TRACKED .byte 0x36;
/* %ecx := lardcc_stack_id of this thread (initial-exec TLS: the runtime is
 * linked into the executable). */
#define STACK_ID movq lardcc_stack_id@gottpoff(%rip), %rcx; movl %fs:(%rcx), %ecx;

        .section lard_caller_pc, "ax", @progbits

#define FUNC(name) \
        .globl name; .type name, @function; .p2align 4; name: .cfi_startproc
#define END(name) \
        .cfi_endproc; .size name, . - name
#define ALIAS(alias, name) \
        .globl alias; .type alias, @function; .set alias, name

FUNC(__lardcc_read1)
        STACK_ID
        TRACKED movb (%rdi), %al
        ret
END(__lardcc_read1)
FUNC(__lardcc_read2)
        STACK_ID
        TRACKED movw (%rdi), %ax
        ret
END(__lardcc_read2)
FUNC(__lardcc_read4)
        STACK_ID
        TRACKED movl (%rdi), %eax
        ret
END(__lardcc_read4)
FUNC(__lardcc_read8)
        STACK_ID
        TRACKED movq (%rdi), %rax
        ret
END(__lardcc_read8)
FUNC(__lardcc_read16)
        STACK_ID
        TRACKED movq (%rdi), %rax
        TRACKED movq 8(%rdi), %rax
        ret
END(__lardcc_read16)

FUNC(__lardcc_write1)
        STACK_ID
        TRACKED lock orb $0, (%rdi)
        ret
END(__lardcc_write1)
FUNC(__lardcc_write2)
        STACK_ID
        TRACKED lock orw $0, (%rdi)
        ret
END(__lardcc_write2)
FUNC(__lardcc_write4)
        STACK_ID
        TRACKED lock orl $0, (%rdi)
        ret
END(__lardcc_write4)
FUNC(__lardcc_write8)
        STACK_ID
        TRACKED lock orq $0, (%rdi)
        ret
END(__lardcc_write8)
FUNC(__lardcc_write16)
        STACK_ID
        TRACKED lock orq $0, (%rdi)
        TRACKED lock orq $0, 8(%rdi)
        ret
END(__lardcc_write16)

/* void __tsan_read_range(void *addr, size_t size) */
FUNC(__tsan_read_range)
        STACK_ID
1:      cmpq $8, %rsi
        jb 2f
        TRACKED movq (%rdi), %rax
        addq $8, %rdi
        subq $8, %rsi
        jmp 1b
2:      testq %rsi, %rsi
        jz 3f
        TRACKED movb (%rdi), %al
        incq %rdi
        decq %rsi
        jmp 2b
3:      ret
END(__tsan_read_range)

FUNC(__tsan_write_range)
        STACK_ID
1:      cmpq $8, %rsi
        jb 2f
        TRACKED lock orq $0, (%rdi)
        addq $8, %rdi
        subq $8, %rsi
        jmp 1b
2:      testq %rsi, %rsi
        jz 3f
        TRACKED lock orb $0, (%rdi)
        incq %rdi
        decq %rsi
        jmp 2b
3:      ret
END(__tsan_write_range)

/* void __tsan_vptr_read(void **vptr_p) */
ALIAS(__tsan_vptr_read, __lardcc_read8)

/* void __tsan_vptr_update(void **vptr_p, void *new_val): a write only when
 * the vptr changes (a constructor storing the same vptr is no race). */
FUNC(__tsan_vptr_update)
        STACK_ID
        cmpq %rsi, (%rdi)
        je 1f
        TRACKED lock orq $0, (%rdi)
1:      ret
END(__tsan_vptr_update)

/* Every spelling the compilers use for a plain access of each size:
 * aligned, unaligned, volatile (treated as plain, as ThreadSanitizer does),
 * and clang's compound read-write (a write covers the read). */
#define SIZE(n) \
        ALIAS(__tsan_read##n, __lardcc_read##n); \
        ALIAS(__tsan_unaligned_read##n, __lardcc_read##n); \
        ALIAS(__tsan_volatile_read##n, __lardcc_read##n); \
        ALIAS(__tsan_unaligned_volatile_read##n, __lardcc_read##n); \
        ALIAS(__tsan_write##n, __lardcc_write##n); \
        ALIAS(__tsan_unaligned_write##n, __lardcc_write##n); \
        ALIAS(__tsan_volatile_write##n, __lardcc_write##n); \
        ALIAS(__tsan_unaligned_volatile_write##n, __lardcc_write##n); \
        ALIAS(__tsan_read_write##n, __lardcc_write##n); \
        ALIAS(__tsan_unaligned_read_write##n, __lardcc_write##n)
SIZE(1)
SIZE(2)
SIZE(4)
SIZE(8)
SIZE(16)


/* The atomic operations of the ThreadSanitizer ABI (atomic.c): the
 * program's return address stored in lardcc_site_pc, the pc the
 * operation's Tracked access is attributed to (site.S), then a jump to the
 * operation. */
#define ATOMIC_STUB(n, op) \
        FUNC(__tsan_atomic##n##_##op); \
        movq lardcc_site_pc@gottpoff(%rip), %r11; \
        movq (%rsp), %r10; \
        movq %r10, %fs:(%r11); \
        jmp __lardcc_atomic##n##_##op; \
        END(__tsan_atomic##n##_##op)
#define ATOMIC_STUBS(n) \
        ATOMIC_STUB(n, load); \
        ATOMIC_STUB(n, store); \
        ATOMIC_STUB(n, exchange); \
        ATOMIC_STUB(n, fetch_add); \
        ATOMIC_STUB(n, fetch_sub); \
        ATOMIC_STUB(n, fetch_and); \
        ATOMIC_STUB(n, fetch_or); \
        ATOMIC_STUB(n, fetch_xor); \
        ATOMIC_STUB(n, fetch_nand); \
        ATOMIC_STUB(n, compare_exchange_strong); \
        ATOMIC_STUB(n, compare_exchange_weak); \
        ATOMIC_STUB(n, compare_exchange_val)

ATOMIC_STUBS(8)
ATOMIC_STUBS(16)
ATOMIC_STUBS(32)
ATOMIC_STUBS(64)
ATOMIC_STUBS(128)

        .section .note.GNU-stack, "", @progbits
