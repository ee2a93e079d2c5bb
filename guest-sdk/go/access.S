/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard's Go race runtime: the Tracked accesses, attributed to the Go
 * program counter the compiler's instrumentation passes.
 *
 * Each stub pushes that pc, so that at its Tracked instruction [%rsp] holds
 * it as if it were the stub's return address: in the section
 * `lard_caller_pc` the emulator attributes a Tracked access to the call
 * instruction before [%rsp] (docs/lard-cc.md, "Where a report points") --
 * here the Go function's call to runtime.raceread and the like, so reports
 * name the Go source line.  %ecx carries the goroutine's call-stack id
 * (cc/stack.c), as in lard-cc's stubs.  Reads are Tracked loads, writes
 * Tracked `lock or $0`: the same instructions as lard-cc's (cc/access.S).
 *
 *   __lardgo_read(addr, pc, stack)           one byte, as ThreadSanitizer's
 *   __lardgo_write(addr, pc, stack)          Go runtime checks raceread
 *   __lardgo_read_range(addr, n, pc, stack)  8-byte accesses, then bytes
 *   __lardgo_write_range(addr, n, pc, stack)
 */
#define TRACKED .byte 0x36;
#define COMMA ,

        .section lard_caller_pc, "ax", @progbits

#define FUNC(name) \
        .globl name; .hidden name; .type name, @function; .p2align 4; name: .cfi_startproc
#define END(name) \
        .cfi_endproc; .size name, . - name

FUNC(__lardgo_read)
        pushq %rsi
        .cfi_adjust_cfa_offset 8
        movl %edx, %ecx
        TRACKED movb (%rdi), %al
        popq %rsi
        .cfi_adjust_cfa_offset -8
        ret
END(__lardgo_read)

FUNC(__lardgo_write)
        pushq %rsi
        .cfi_adjust_cfa_offset 8
        movl %edx, %ecx
        TRACKED lock orb $0, (%rdi)
        popq %rsi
        .cfi_adjust_cfa_offset -8
        ret
END(__lardgo_write)

/* (addr %rdi, n %rsi, pc %rdx, stack %ecx): `op8` on each 8 bytes, then
 * `op1` on each byte left. */
#define RANGE(name, op8, op1)                   \
FUNC(name);                                     \
        pushq %rdx;                             \
        .cfi_adjust_cfa_offset 8;               \
1:      cmpq $8, %rsi;                          \
        jb 2f;                                  \
        TRACKED op8;                            \
        addq $8, %rdi;                          \
        subq $8, %rsi;                          \
        jmp 1b;                                 \
2:      testq %rsi, %rsi;                       \
        jz 3f;                                  \
        TRACKED op1;                            \
        incq %rdi;                              \
        decq %rsi;                              \
        jmp 2b;                                 \
3:      popq %rdx;                              \
        .cfi_adjust_cfa_offset -8;              \
        ret;                                    \
END(name)

RANGE(__lardgo_read_range, movq (%rdi) COMMA %rax, movb (%rdi) COMMA %al)
RANGE(__lardgo_write_range, lock orq $0 COMMA (%rdi), lock orb $0 COMMA (%rdi))

        .section .note.GNU-stack, "", @progbits
