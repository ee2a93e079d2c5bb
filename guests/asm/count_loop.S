/* A program whose instruction count is known from its text: 1 + 2 x ITERS
 * + 3 instructions retired (ITERS = 3,000,000: 6,000,004), long enough to
 * span thousands of scheduling quanta. `lard run --stats` must report exactly
 * that many. */
    .set ITERS, 3000000
    .text
    .globl _start
_start:
    mov $ITERS, %ecx
1:  dec %ecx
    jnz 1b
    mov $60, %eax        /* exit(0) */
    xor %edi, %edi
    syscall
