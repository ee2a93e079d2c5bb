/* SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * lard_ops: issues every LARDx86 operation once, with no C library.
 * Natively the ops are NOPs and the program prints "lard ops: ok".
 * Under `lard run`, ReadVC returns the thread's own clock entry (1 for a fresh
 * language thread), so the program prints "lard ops: lard" instead.
 * Build: gcc -static -nostdlib -I guest-sdk/include -o lard_ops lard_ops.S
 */
        .include "lardx86.inc"

        .section .bss
        .balign 64
        .type buf, @object
        .size buf, 128
buf:    .skip 128

        .section .rodata
native: .ascii "lard ops: ok\n"
        .set native_len, . - native
lard:   .ascii "lard ops: lard\n"
        .set lard_len, . - lard

        .text
        .globl _start
        .type _start, @function
_start:
        mov     $7, %r12                /* language thread 7 */
        lard_thread %r12
        mov     $7, %rsi
        mov     $5, %rdx
        lard_writevc %rsi, %rdx         /* clock[7] = 5 */
        lea     buf(%rip), %rbx
        mov     $42, %eax
        lard_tracked movl %eax, (%rbx)  /* tracked store */
        lard_tracked movl (%rbx), %ecx  /* tracked load */
        lea     64(%rbx), %r13
        mov     $16, %r14
        lard_copyhistory %rbx, %r13, %r14
        lard_clearhistory %rbx, %r14
        xor     %r15d, %r15d            /* ReadVC leaves r15 unchanged natively */
        lard_readvc %r15, %rsi          /* r15 = clock[7] */
        lea     native(%rip), %rsi
        mov     $native_len, %edx
        test    %r15, %r15
        jz      1f
        lea     lard(%rip), %rsi
        mov     $lard_len, %edx
1:      mov     $1, %eax                /* write(1, msg, len) */
        mov     $1, %edi
        syscall
        mov     $60, %eax               /* exit(0) */
        xor     %edi, %edi
        syscall
        .size _start, . - _start
