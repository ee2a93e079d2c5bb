/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: what every entry of libc_one.S jumps to.  At entry
 * %r11 holds the function's descriptor, the argument registers the
 * program's arguments (%al the vector-register count of a variadic call)
 * and [%rsp] the return address into the program.  All of them are kept
 * for the library's function; lardcc_libc_enter (libc.c) reports the call
 * and, for a function whose ranges its result gives, points the return
 * address at __lardcc_libc_return, which reports the result and returns to
 * the program.
 */
        .text
        .globl __lardcc_libc_common
        .type __lardcc_libc_common, @function
        .p2align 4
__lardcc_libc_common:
        .cfi_startproc
        pushq %rax
        pushq %rdi
        pushq %rsi
        pushq %rdx
        pushq %rcx
        pushq %r8
        pushq %r9
        subq $128, %rsp
        .cfi_adjust_cfa_offset 184
        movdqu %xmm0, 0(%rsp)
        movdqu %xmm1, 16(%rsp)
        movdqu %xmm2, 32(%rsp)
        movdqu %xmm3, 48(%rsp)
        movdqu %xmm4, 64(%rsp)
        movdqu %xmm5, 80(%rsp)
        movdqu %xmm6, 96(%rsp)
        movdqu %xmm7, 112(%rsp)
        movq %r11, %rdi                 /* the descriptor */
        leaq 128(%rsp), %rsi            /* r9, r8, rcx, rdx, rsi, rdi, rax */
        leaq 184(%rsp), %rdx            /* the return address's slot */
        call lardcc_libc_enter
        movq %rax, %r11                 /* the library's function */
        movdqu 0(%rsp), %xmm0
        movdqu 16(%rsp), %xmm1
        movdqu 32(%rsp), %xmm2
        movdqu 48(%rsp), %xmm3
        movdqu 64(%rsp), %xmm4
        movdqu 80(%rsp), %xmm5
        movdqu 96(%rsp), %xmm6
        movdqu 112(%rsp), %xmm7
        addq $128, %rsp
        popq %r9
        popq %r8
        popq %rcx
        popq %rdx
        popq %rsi
        popq %rdi
        popq %rax
        .cfi_adjust_cfa_offset -184
        jmp *%r11
        .cfi_endproc
        .size __lardcc_libc_common, . - __lardcc_libc_common

/* The library's function returned here (its return address was this):
 * %rax is its result, %rsp is one past the slot its return address was
 * in. */
        .globl __lardcc_libc_return
        .type __lardcc_libc_return, @function
        .p2align 4
__lardcc_libc_return:
        .cfi_startproc
        .cfi_undefined rip
        pushq %rax
        pushq %rdx
        movq %rax, %rdi
        leaq 16(%rsp), %rsi
        call lardcc_libc_leave          /* the return address into the program */
        movq %rax, %r11
        popq %rdx
        popq %rax
        jmp *%r11
        .cfi_endproc
        .size __lardcc_libc_return, . - __lardcc_libc_return

        .section .note.GNU-stack, "", @progbits
