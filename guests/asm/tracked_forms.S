/* Tracked accesses of every form the emulator translates differently
 * (unicorn patch 0009 makes each in the observation call's C code): stores
 * and loads of 1, 2, 4 and 8 bytes, sign-extending loads, a read-modify-
 * write, big-endian movbe loads and stores, a 16-byte SSE load and store
 * (two 8-byte halves each) and an 8-byte load and store across a page
 * boundary (the softmmu slow path). The program checks every value it reads
 * and exits with the number of the first failed check (0: all correct).
 * Tracked accesses by construction: 13 reads, 10 writes (none on the
 * stack; the untracked checks make their own, untracked accesses).
 *
 * With an argument it faults on a Tracked access instead: "rodata" stores
 * 4 bytes into read-only data, "null" loads 8 bytes from address 0.
 *
 * `unused` holds 8,192 more Tracked sites that never run: with them the
 * program has enough sites (lard's IN_HELPER_SITES) for the emulator to make
 * each Tracked access inside its observation call (unicorn patch 0009)
 * rather than in translated code.
 *
 * Build: gcc -static -nostdlib -I guest-sdk/include -o tracked_forms tracked_forms.S */
        .include "lardx86.inc"

        .section .rodata
        .p2align 3
ro:     .quad 0x1122334455667788

        .bss
        .p2align 12
buf:    .zero 8192

        .text
        .globl _start
_start:
        cmpq $1, (%rsp)                 /* argc */
        jne fault

        /* 1: stores of 8, 4, 2, 1 bytes, loads of 8, 4, 2, 1 bytes (W4 R4) */
        mov $0x8877665544332211, %rax
        lard_tracked movq %rax, buf(%rip)
        lard_tracked movl %eax, buf+8(%rip)
        lard_tracked movw %ax, buf+12(%rip)
        lard_tracked movb %al, buf+14(%rip)
        mov $1, %edi
        lard_tracked movq buf(%rip), %rbx
        cmp %rax, %rbx
        jne exit
        mov $2, %edi
        lard_tracked movl buf+8(%rip), %ebx
        mov $0x44332211, %ecx
        cmp %rcx, %rbx
        jne exit
        mov $3, %edi
        lard_tracked movzwl buf+12(%rip), %ebx
        cmp $0x2211, %rbx
        jne exit
        mov $4, %edi
        lard_tracked movzbl buf+14(%rip), %ebx
        cmp $0x11, %rbx
        jne exit

        /* 2: sign-extending loads of 1, 2, 4 bytes (R3) */
        movq $-2, buf+16(%rip)
        mov $5, %edi
        lard_tracked movsbq buf+16(%rip), %rbx
        cmp $-2, %rbx
        jne exit
        mov $6, %edi
        lard_tracked movswq buf+16(%rip), %rbx
        cmp $-2, %rbx
        jne exit
        mov $7, %edi
        lard_tracked movslq buf+16(%rip), %rbx
        cmp $-2, %rbx
        jne exit

        /* 3: read-modify-write (R1 W1) */
        movq $40, buf+24(%rip)
        mov $2, %eax
        lard_tracked addq %rax, buf+24(%rip)
        mov $8, %edi
        cmpq $42, buf+24(%rip)
        jne exit

        /* 4: big-endian: movbe stores of 8 and 2 bytes, loads of 8 and 4 (W2 R2) */
        mov $0x0102030405060708, %rax
        lard_tracked movbe %rax, buf+32(%rip)
        mov buf+32(%rip), %rbx
        bswap %rbx
        mov $9, %edi
        cmp %rax, %rbx
        jne exit
        lard_tracked movbe buf+32(%rip), %rcx
        mov $10, %edi
        cmp %rax, %rcx
        jne exit
        lard_tracked movbe buf+32(%rip), %ecx
        mov $11, %edi
        cmp $0x01020304, %ecx
        jne exit
        lard_tracked movbe %cx, buf+40(%rip)
        movzwl buf+40(%rip), %ebx
        mov $12, %edi
        cmp $0x0403, %ebx
        jne exit

        /* 5: 16 bytes through SSE (R2 W2) */
        lard_tracked movdqu buf(%rip), %xmm0
        lard_tracked movdqu %xmm0, buf+48(%rip)
        mov buf(%rip), %rax
        mov $13, %edi
        cmp buf+48(%rip), %rax
        jne exit
        mov buf+8(%rip), %rax
        mov $14, %edi
        cmp buf+56(%rip), %rax
        jne exit

        /* 6: 8 bytes across the page boundary at buf+4096 (W1 R1) */
        mov $0x1122334455667788, %rax
        lard_tracked movq %rax, buf+4092(%rip)
        lard_tracked movq buf+4092(%rip), %rbx
        mov $15, %edi
        cmp %rax, %rbx
        jne exit
        mov buf+4096(%rip), %ebx
        mov $16, %edi
        cmp $0x11223344, %ebx
        jne exit

        xor %edi, %edi
exit:   mov $60, %eax                   /* exit(edi) */
        syscall

fault:  mov 16(%rsp), %rsi              /* argv[1] */
        cmpb $'r', (%rsi)
        jne 1f
        mov $7, %eax
        lard_tracked movl %eax, ro(%rip)
        jmp 2f
1:      xor %ebx, %ebx
        lard_tracked movq (%rbx), %rax
2:      mov $99, %edi
        jmp exit

unused: .rept 8192
        lard_tracked movl buf(%rip), %eax
        .endr
        ret
