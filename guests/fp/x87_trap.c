/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Unmasked x87 exceptions raise SIGFPE as natively (docs/unicorn-patches.md,
 * patch 0030): the instruction that raises one only sets the flag, ES and B,
 * and the next waiting x87 instruction (or fwait) takes the #MF. A SIGFPE
 * handler prints si_code (FPE_FLTDIV, FPE_FLTINV, FPE_FLTOVF, FPE_FLTUND,
 * FPE_FLTRES) and whether the signal came at that next instruction (an
 * MMX instruction is one, an SSE one is not). The
 * non-waiting instructions between (fnstsw, fnstcw, fnstenv, fnsave, fnclex)
 * take no signal: fnsave shows the status word with ES and B and, for an
 * unmasked overflow or underflow, the processor's result with its exponent
 * wrapped; a store to memory with an unmasked exception neither stores nor
 * pops. Then, with the handler reset, 1/0 unmasked and an fwait kill the
 * process with SIGFPE.
 *
 * usage: x87_trap */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static sigjmp_buf back;
static volatile int code;
static volatile uintptr_t where;
static volatile uint16_t handler_cw, handler_sw;
static volatile long double third;

/* The handler starts with a fresh x87 (Linux gives it the initial FPU
 * state): its own long double arithmetic takes no signal. */
static void on_fpe(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    uint16_t hcw, hsw;
    __asm__ volatile("fnstcw %0\n\tfnstsw %1" : "=m"(hcw), "=m"(hsw));
    handler_cw = hcw;
    handler_sw = hsw;
    third = third / 3.0L;
    code = si->si_code;
    where = (uintptr_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
    siglongjmp(back, 1);
}

typedef struct {
    uint64_t m;
    uint16_t e;
} __attribute__((packed)) f80;
static const f80 MAX = {0xffffffffffffffff, 0x7ffe}, TINY = {0x8000000000000000, 1};
static volatile uint16_t sw_seen;
uint8_t x87_scratch[64]; /* memory operands of the asm below */
uint8_t x87_fx[512] __attribute__((aligned(16)));

/* Runs OPS under control word CW; then the waiting instruction NEXT at the
 * label at_NAME. sw_seen is the status word fnstsw read between them. */
#define TRY(NAME, CW, OPS, NEXT)                                              \
    do {                                                                      \
        extern char at_##NAME[];                                              \
        uint16_t cw = CW;                                                     \
        code = 0;                                                             \
        where = 0;                                                            \
        sw_seen = 0;                                                          \
        if (sigsetjmp(back, 1) == 0) {                                        \
            uint16_t sw;                                                      \
            __asm__ volatile("fninit\n\tfldcw %[cw]\n\t" OPS "\n\t"           \
                             "fnstsw %[sw]\n\tmovw %[sw], %%ax\n\t"           \
                             "movw %%ax, sw_seen(%%rip)\n"                    \
                             ".globl at_" #NAME "\nat_" #NAME ":\n\t" NEXT    \
                             "\n\tfninit"                                     \
                             : [sw] "=m"(sw)                                  \
                             : [cw] "m"(cw), [max] "m"(MAX), [tiny] "m"(TINY) \
                             : "st", "st(1)", "st(2)", "st(3)", "st(4)",      \
                               "st(5)", "st(6)", "st(7)", "rax", "xmm0",      \
                               "memory");                                     \
            printf("%s: no signal, fsw %04x\n", #NAME, sw_seen);              \
        } else {                                                              \
            __asm__ volatile("fninit");                                       \
            printf("%s: SIGFPE si_code %d %s, fsw before %04x, handler fcw "  \
                   "%04x fsw %04x\n",                                         \
                   #NAME, code,                                               \
                   where == (uintptr_t)at_##NAME ? "at the next x87 instruction" \
                                                 : "elsewhere",              \
                   sw_seen, handler_cw, handler_sw);                          \
        }                                                                     \
    } while (0)

/* An unmasked overflow or underflow with fnsave right after: no signal. */
#define SAVED(NAME, CW, OPS)                                                  \
    do {                                                                      \
        uint16_t cw = CW;                                                     \
        uint8_t area[108];                                                    \
        code = 0;                                                             \
        __asm__ volatile("fninit\n\tfldcw %[cw]\n\t" OPS "\n\tfnsave %[area]" \
                         : [area] "=m"(area)                                  \
                         : [cw] "m"(cw), [max] "m"(MAX), [tiny] "m"(TINY)     \
                         : "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", \
                           "st(6)", "st(7)", "memory");                       \
        uint16_t fsw;                                                         \
        f80 st0;                                                              \
        memcpy(&fsw, area + 4, 2);                                            \
        memcpy(&st0, area + 28, 10);                                          \
        printf("%s: signal %d, fnsave fsw %04x st0 %04x%016llx\n", #NAME,     \
               code, fsw, st0.e, (unsigned long long)st0.m);                  \
    } while (0)

/* A store raising an exception the control word unmasks, fnsave right
 * after: the processor neither stores nor pops. */
#define STORED(NAME, CW, INSN)                                                \
    do {                                                                      \
        uint16_t cw = CW;                                                     \
        uint8_t area[108];                                                    \
        uint64_t m[2] = {0x1122334455667788ull, 0}; /* fbstp: 10 bytes */    \
        __asm__ volatile("fninit\n\tfldcw %[cw]\n\tfldt %[max]\n\t" INSN     \
                         " %[m]\n\tfnsave %[area]"                            \
                         : [area] "=m"(area), [m] "+m"(m)                     \
                         : [cw] "m"(cw), [max] "m"(MAX)                       \
                         : "st", "st(1)", "memory");                          \
        uint16_t fsw;                                                         \
        memcpy(&fsw, area + 4, 2);                                            \
        printf("%s: memory %016llx, fnsave fsw %04x\n", #NAME,               \
               (unsigned long long)m[0], fsw);                                \
    } while (0)

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fpe;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGFPE, &sa, NULL);
    setvbuf(stdout, NULL, _IONBF, 0);
    third = 1.0L;

    TRY(div_masked, 0x37f, "fldz\n\tfld1\n\tfdiv %%st(1), %%st", "fld1");
    TRY(div_unmasked, 0x37b, "fldz\n\tfld1\n\tfdiv %%st(1), %%st", "fld1");
    TRY(div_then_fwait, 0x37b, "fldz\n\tfld1\n\tfdiv %%st(1), %%st", "fwait");
    TRY(div_then_fnclex, 0x37b, "fldz\n\tfld1\n\tfdiv %%st(1), %%st\n\tfnclex", "fld1");
    TRY(div_then_fnstenv, 0x37b,
        "fldz\n\tfld1\n\tfdiv %%st(1), %%st\n\tfnstcw x87_scratch(%%rip)\n\t"
        "fnstenv x87_scratch+8(%%rip)",
        "fldcw x87_scratch(%%rip)");
    TRY(sqrt_unmasked, 0x37e, "fld1\n\tfchs\n\tfsqrt", "fxch");
    TRY(div_then_mmx, 0x37b, "fldz\n\tfld1\n\tfdiv %%st(1), %%st", "emms");
    TRY(div_then_sse, 0x37b, "fldz\n\tfld1\n\tfdiv %%st(1), %%st",
        "addsd %%xmm0, %%xmm0\n\tfwait");
    TRY(snan_load_unmasked, 0x37e,
        "movl $0x7f800001, x87_scratch(%%rip)\n\tflds x87_scratch(%%rip)", "fldz");
    TRY(overflow_unmasked, 0x377, "fldt %[max]\n\tfmul %%st(0), %%st", "fadd %%st(0), %%st");
    TRY(underflow_unmasked, 0x36f, "fldt %[tiny]\n\tfmul %%st(0), %%st", "fwait");
    TRY(inexact_unmasked, 0x35f, "fldpi\n\tfld1\n\tfdiv %%st(1), %%st", "fstp %%st(0)");
    TRY(exact_inexact_unmasked, 0x35f, "fld1\n\tfld1\n\tfadd %%st(1), %%st", "fstp %%st(0)");
    TRY(unmask_pending, 0x37f,
        "fldz\n\tfld1\n\tfdiv %%st(1), %%st\n\tmovw $0x37b, x87_scratch(%%rip)\n\t"
        "fldcw x87_scratch(%%rip)",
        "fld1");
    TRY(fldenv_unmasks_pending, 0x37f,
        "fldz\n\tfld1\n\tfdiv %%st(1), %%st\n\tfnstenv x87_scratch(%%rip)\n\t"
        "movw $0x37b, x87_scratch(%%rip)\n\tfldenv x87_scratch(%%rip)",
        "fld1");
    TRY(fxrstor_unmasks_pending, 0x37f,
        "fldz\n\tfld1\n\tfdiv %%st(1), %%st\n\tfxsave x87_fx(%%rip)\n\t"
        "movw $0x37b, x87_fx(%%rip)\n\tfxrstor x87_fx(%%rip)",
        "fld1");
    SAVED(overflow_fnsave, 0x377, "fldt %[max]\n\tfmul %%st(0), %%st");
    SAVED(underflow_fnsave, 0x36f, "fldt %[tiny]\n\tfmul %%st(0), %%st");
    SAVED(div_fnsave, 0x37b, "fldz\n\tfld1\n\tfdiv %%st(1), %%st");
    STORED(fstps_overflow_masked, 0x37f, "fstps");
    STORED(fstps_overflow_unmasked, 0x377, "fstps");
    STORED(fsts_overflow_unmasked, 0x377, "fsts");
    STORED(fistpl_invalid_unmasked, 0x37e, "fistpl");
    STORED(fisttpll_invalid_unmasked, 0x37e, "fisttpll");
    STORED(fists_invalid_masked, 0x37f, "fists");
    STORED(fbstp_invalid_unmasked, 0x37e, "fbstp");

    signal(SIGFPE, SIG_DFL);
    printf("1/0 ZE unmasked without a handler\n");
    uint16_t cw = 0x37b;
    __asm__ volatile("fninit\n\tfldcw %0\n\tfldz\n\tfld1\n\tfdiv %%st(1), %%st\n\tfwait\n\t"
                     "fninit"
                     : : "m"(cw) : "st", "st(1)");
    printf("still alive\n");
    return 0;
}
