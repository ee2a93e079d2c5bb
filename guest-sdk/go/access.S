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

/* (addr %rdi, n %rsi, pc %rdx, stack %ecx) */
FUNC(__lardgo_read_range)
        pushq %rdx
        .cfi_adjust_cfa_offset 8
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
3:      popq %rdx
        .cfi_adjust_cfa_offset -8
        ret
END(__lardgo_read_range)

FUNC(__lardgo_write_range)
        pushq %rdx
        .cfi_adjust_cfa_offset 8
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
3:      popq %rdx
        .cfi_adjust_cfa_offset -8
        ret
END(__lardgo_write_range)

        .section .note.GNU-stack, "", @progbits
