/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * minivm green-thread context switch (x86-64 System V).  musl has no
 * makecontext/swapcontext, and these two routines are all M:N needs.
 *
 * void vm__ctx_switch(void **save_sp, void *to_sp)
 *   pushes the callee-saved registers, stores rsp in *save_sp, loads to_sp
 *   and pops the registers saved there.  A context switch is system code:
 *   no memory access here is Tracked and no synchronization is reported.
 *
 * vm__ctx_start: first "return address" of a new context; calls r12(r13).
 */
	.text
	.globl	vm__ctx_switch
	.type	vm__ctx_switch, @function
vm__ctx_switch:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.size	vm__ctx_switch, .-vm__ctx_switch

	.globl	vm__ctx_start
	.type	vm__ctx_start, @function
vm__ctx_start:
	movq	%r13, %rdi
	callq	*%r12
	ud2
	.size	vm__ctx_start, .-vm__ctx_start

	.section .note.GNU-stack,"",@progbits
