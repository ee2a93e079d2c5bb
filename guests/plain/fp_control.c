/* SPDX-License-Identifier: MIT OR Apache-2.0
 * The floating-point state a process starts with: the x87 control word
 * (0x37f: extended precision, every exception masked), MXCSR (0x1f80), and
 * x87 arithmetic at that precision (1/3 in long double, printed as bits;
 * musl's printf formats a double with long double arithmetic, so at single
 * precision its digits go wrong). Prints them, so that a run under lard can
 * be compared with the native one. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    uint16_t cw;
    uint32_t mxcsr;
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    volatile long double one = 1.0L, three = 3.0L;
    long double third = one / three;
    unsigned char b[16] = {0};
    memcpy(b, &third, 10);
    printf("fpcw %04x mxcsr %08x\n", cw, mxcsr);
    printf("1/3 ");
    for (int i = 9; i >= 0; i--) printf("%02x", b[i]);
    printf("\n");
    volatile double d = 5.0527598437645, e = -1.0e-300 / 7.0;
    printf("%.17g %a %.17g %a\n", d, d, e, e);
    return 0;
}
