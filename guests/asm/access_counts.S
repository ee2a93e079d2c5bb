/* A program whose data accesses are known from its text (lard's
 * translate-time observation must deliver exactly these): ITERS = 1,000
 * iterations of
 *     mov  buf, %rax             1 read   (8 bytes)
 *     mov  %rax, buf+8           1 write
 *     add  %rax, buf+16          1 read, 1 write
 *     movdqu buf+32, %xmm0       2 reads  (a 16-byte load is two 8-byte
 *                                          loads in the emulator)
 *     fldt buf+64                2 reads  (8 + 2 bytes, in a C helper)
 *     fstpt buf+80               2 writes (8 + 2 bytes, in a C helper)
 *     cmpxchg16b buf+96          2 reads, 2 writes (8-byte halves, in a
 *                                          C helper; it always writes)
 * = 8,000 reads and 6,000 writes, none on the stack; the loop and the exit
 * make no other access. The helper-made accesses (fldt, fstpt, cmpxchg16b)
 * come from C code inside the CPU, not from translated loads and stores. */
    .set ITERS, 1000
    .bss
    .p2align 4
buf: .zero 128
    .text
    .globl _start
_start:
    mov $ITERS, %ecx
1:  mov buf(%rip), %rax
    mov %rax, buf+8(%rip)
    add %rax, buf+16(%rip)
    movdqu buf+32(%rip), %xmm0
    fldt buf+64(%rip)
    fstpt buf+80(%rip)
    xor %eax, %eax
    xor %edx, %edx
    xor %ebx, %ebx
    cmpxchg16b buf+96(%rip)
    dec %ecx
    jnz 1b
    mov $60, %eax        /* exit(0) */
    xor %edi, %edi
    syscall
