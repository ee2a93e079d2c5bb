/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Unmasked SSE exceptions and the integer divide error raise SIGFPE as
 * natively (docs/unicorn-patches.md, patch 0023). A SIGFPE handler prints
 * si_code for 1/0 with divide-by-zero unmasked (FPE_FLTDIV), sqrt(-1) with
 * invalid unmasked (FPE_FLTINV), a packed overflow with overflow unmasked
 * (FPE_FLTOVF) and an integer division by zero (FPE_INTDIV), and whether
 * the destination register kept its value; masked operations around them
 * raise nothing. Then, with the handler reset, 1/0 unmasked kills the
 * process with SIGFPE.
 *
 * usage: sse_trap */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf back;
static volatile int code;

static void on_fpe(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    code = si->si_code;
    siglongjmp(back, 1);
}

static inline void set_mxcsr(uint32_t m) { __asm__ volatile("ldmxcsr %0" : : "m"(m)); }

/* Runs INSN on x (destination) and y under MXCSR m; prints what happened. */
#define TRY(WHAT, INSN, X, Y, M)                                              \
    do {                                                                      \
        volatile double x = X, y = Y;                                         \
        volatile double out = x;                                              \
        code = 0;                                                             \
        if (sigsetjmp(back, 1) == 0) {                                        \
            double r = x;                                                     \
            set_mxcsr(M);                                                     \
            __asm__ volatile(INSN " %1, %0" : "+x"(r) : "x"(y));              \
            out = r;                                                          \
            set_mxcsr(0x1f80);                                                \
            printf("%s: no signal, result %a\n", WHAT, out);                  \
        } else {                                                              \
            set_mxcsr(0x1f80);                                                \
            printf("%s: SIGFPE si_code %d, destination %a\n", WHAT, code, out); \
        }                                                                     \
    } while (0)

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fpe;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGFPE, &sa, NULL);
    setvbuf(stdout, NULL, _IONBF, 0);

    TRY("1/0 masked", "divsd", 1.0, 0.0, 0x1f80);
    TRY("1/0 ZE unmasked", "divsd", 1.0, 0.0, 0x1f80 & ~0x200);
    TRY("1/3 ZE unmasked", "divsd", 1.0, 3.0, 0x1f80 & ~0x200);
    TRY("sqrt(-1) IE unmasked", "sqrtsd", 0.0, -1.0, 0x1f80 & ~0x80);
    TRY("max*max OE unmasked", "mulpd", 1.7e308, 1.7e308, 0x1f80 & ~0x400);
    TRY("1/3 PE unmasked", "divsd", 1.0, 3.0, 0x1f80 & ~0x1000);
    TRY("1+1 PE unmasked", "addsd", 1.0, 1.0, 0x1f80 & ~0x1000);

    code = 0;
    if (sigsetjmp(back, 1) == 0) {
        volatile int a = 7, b = 0;
        printf("7/0 = %d\n", a / b);
    } else {
        printf("7/0: SIGFPE si_code %d\n", code);
    }

    signal(SIGFPE, SIG_DFL);
    printf("1/0 ZE unmasked without a handler\n");
    volatile double one = 1.0, zero = 0.0;
    double r = one;
    set_mxcsr(0x1f80 & ~0x200);
    __asm__ volatile("divsd %1, %0" : "+x"(r) : "x"(zero));
    printf("not reached %a\n", r);
    return 0;
}
