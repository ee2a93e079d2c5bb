/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: Tracked accesses made on the program's behalf by the
 * runtime's C code (the atomics, cc/atomic.c), attributed to a program
 * counter the caller passes.
 *
 * Each stub pushes that pc, so that at its Tracked instruction [%rsp]
 * holds it as if it were the stub's return address: in the section
 * `lard_caller_pc` the emulator attributes a Tracked access to the call
 * instruction before [%rsp] (docs/lard-cc.md, "Where a report points").
 * %ecx carries the call-stack id (cc/stack.c).  Reads are Tracked loads,
 * writes Tracked `lock or $0`, as in cc/access.S.
 *
 *   __lardcc_site_readN(addr, pc, stack)    N = 1, 2, 4, 8, 16 bytes
 *   __lardcc_site_writeN(addr, pc, stack)
 */
#define TRACKED .byte 0x36;

        .section lard_caller_pc, "ax", @progbits

#define FUNC(name) \
        .globl name; .hidden name; .type name, @function; .p2align 4; name: .cfi_startproc
#define END(name) \
        .cfi_endproc; .size name, . - name

#define SITE(name, insn)                        \
FUNC(name);                                     \
        pushq %rsi;                             \
        .cfi_adjust_cfa_offset 8;               \
        movl %edx, %ecx;                        \
        insn;                                   \
        popq %rsi;                              \
        .cfi_adjust_cfa_offset -8;              \
        ret;                                    \
END(name)

#define COMMA ,
SITE(__lardcc_site_read1, TRACKED movb (%rdi) COMMA %al)
SITE(__lardcc_site_read2, TRACKED movw (%rdi) COMMA %ax)
SITE(__lardcc_site_read4, TRACKED movl (%rdi) COMMA %eax)
SITE(__lardcc_site_read8, TRACKED movq (%rdi) COMMA %rax)
SITE(__lardcc_site_read16, TRACKED movq (%rdi) COMMA %rax; TRACKED movq 8(%rdi) COMMA %rax)
SITE(__lardcc_site_write1, TRACKED lock orb $0 COMMA (%rdi))
SITE(__lardcc_site_write2, TRACKED lock orw $0 COMMA (%rdi))
SITE(__lardcc_site_write4, TRACKED lock orl $0 COMMA (%rdi))
SITE(__lardcc_site_write8, TRACKED lock orq $0 COMMA (%rdi))
SITE(__lardcc_site_write16, TRACKED lock orq $0 COMMA (%rdi); TRACKED lock orq $0 COMMA 8(%rdi))

        .section .note.GNU-stack, "", @progbits
