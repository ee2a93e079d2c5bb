/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Differential test of x87 floating point: every instruction lard executes
 * on the host (docs/unicorn-patches.md, patch 0030) in its register, memory
 * and popping forms, on special operands (+-0, +-inf, quiet and signalling
 * NaNs with payloads, denormals, an unnormal, the smallest and largest
 * normals, halfway cases, integer limits) and pseudo-random 80-bit ones,
 * under each rounding mode and precision control, all exceptions masked.
 * For every instruction and control word it prints a hash of the result
 * bits (every 80-bit value left on the stack, the stored integer or float,
 * ZF/PF/CF/OF/SF/AF of fcomi) and of the status word read right after each
 * execution (flags, C0-C3). Then the sticky flags of a sequence after a
 * sched_yield, through fnsave and fxsave; then two threads computing
 * under different control words at once (each sees its own controls and
 * flags); then glibc's (or musl's) long double libm functions on random
 * inputs, printed as hex with the flags fetestexcept sees. The test compares the output with the native run's:
 * any difference is a bug.
 *
 * usage: x87_float [OPS-FILTER]   (prints only instructions whose name
 * contains OPS-FILTER; for debugging a mismatch) */
#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    uint64_t m;
    uint16_t e;
} __attribute__((aligned(16))) f80;

static const f80 F80[] = {
    {0, 0}, {0, 0x8000},                                           /* +-0 */
    {0x8000000000000000, 0x7fff}, {0x8000000000000000, 0xffff},   /* +-inf */
    {0xc000000000001234, 0x7fff}, {0xc0000000abcd0000, 0xffff},   /* qNaN */
    {0xc000000000000000, 0xffff},                                  /* indefinite */
    {0x8000000000000456, 0x7fff}, {0xa000000000000001, 0xffff},   /* sNaN */
    {1, 0}, {0x7fffffffffffffff, 0x8000}, {0x4000000000000000, 0}, /* denormal */
    {0x4000000000000000, 0x3fff},                                  /* unnormal */
    {0x8000000000000000, 1}, {0x8000000000000001, 0x8001},         /* min normal */
    {0xffffffffffffffff, 0x7ffe}, {0xfffffffffffffffe, 0xfffe},    /* max normal */
    {0x8000000000000000, 0x3fff}, {0xc000000000000000, 0xbfff},    /* 1 -1.5 */
    {0xc000000000000000, 0x4000}, {0xaaaaaaaaaaaaaaab, 0x3ffd},    /* 3 1/3 */
    {0x8000000000000000, 0x3ffe}, {0xa000000000000000, 0x4000},    /* .5 2.5 */
    {0xa000000000000000, 0xc000}, {0x8000000000000400, 0x3fff},    /* -2.5, f64 half */
    {0x8000008000000000, 0x3fff}, {0xfffffffe00000000, 0x401d},    /* f32 half, 2^31-1 */
    {0x8000000000000000, 0x401e}, {0x8000000000000000, 0xc01e},    /* +-2^31 */
    {0xfffe000000000000, 0x400d}, {0x8001000000000000, 0xc00e},    /* 32767.5 -32768.5 */
    {0x8000000000000000, 0x403e}, {0xffffffffffffffff, 0x403e},    /* 2^63 2^64-1 */
    {0x8000000000000000, 0xc03e}, {0xc90fdaa22168c235, 0x4000},    /* -2^63 pi */
    {0xc90fdaa22168c235, 0x403f}, {0x8000000000000000, 0x4480},    /* pi*2^63 2^1153 */
    {0x8000000000000000, 0x3b80}, {0x8000000000000000, 0x407f},    /* f64/f32 limits */
    {0xffffff0000000000, 0x407e}, {0x8000000000000000, 0x3f6a},
    {0xd49a784bcd1b8afe, 0x4000}, {0xb17217f7d1cf79ac, 0x3ffe},    /* l2t ln2 */
};
#define NF80 (sizeof F80 / sizeof F80[0])
#define NRAND 14
#define N80 (NF80 + NRAND)

static const uint32_t F32[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00123, 0xffc0abcd,
    0x7f800456, 0xffa00001, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff,
    0x3f800000, 0xbfc00000, 0x40400000, 0x3eaaaaab, 0x4effffff, 0xcf000001,
};
static const uint64_t F64[] = {
    0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000,
    0xfff0000000000000, 0x7ff8000000000123, 0xfff80000000abcde,
    0x7ff0000000000456, 0xfff4000000000001, 0x0000000000000001,
    0x800fffffffffffff, 0x0010000000000000, 0x7fefffffffffffff,
    0x3ff0000000000000, 0xbff8000000000000, 0x3fd5555555555555,
    0x41dfffffffc00000, 0xc3e0000000000001, 0x4340000000000001,
};
static const int32_t INTS[] = {
    0, 1, -1, 32767, -32768, 0x7fffffff, (int32_t)0x80000000, 123456789,
    -987654, 0x01000001,
};
#define NF32 (sizeof F32 / sizeof F32[0])
#define NF64 (sizeof F64 / sizeof F64[0])
#define NINT (sizeof INTS / sizeof INTS[0])

static f80 v[N80];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void operands(void)
{
    memcpy(v, F80, sizeof F80);
    for (unsigned i = 0; i < NRAND; i++) {
        uint64_t r = next(), s = next();
        /* Exponents spread over the whole range, most near 0 and 1. */
        uint16_t e = i % 4 == 0 ? (uint16_t)(s & 0x7ffe) : (uint16_t)(0x3fc0 + (s & 0x7f));
        if (e == 0)
            e = 1;
        v[NF80 + i].m = r | 0x8000000000000000ull;
        v[NF80 + i].e = e | (uint16_t)(s >> 48 & 0x8000);
    }
}

static uint64_t hash;
static void mix(uint64_t x)
{
    for (int i = 0; i < 8; i++) {
        hash ^= (x >> (8 * i)) & 0xff;
        hash *= 0x100000001b3ull;
    }
}
static void mix80(const f80 *x)
{
    mix(x->m);
    mix(x->e);
}

/* What an instruction left: up to two 80-bit values (ST0, ST1 after it),
 * an integer or float stored to memory, the status word, EFLAGS bits. */
typedef struct {
    f80 r0, r1;
    uint64_t mem;
    uint16_t sw;
    uint8_t fl;
} out;

static uint16_t cw;

/* The first lines of each asm: the control word, no flags. */
#define PRE "fldcw %[cw]\n\tfnclex\n\t"
#define IN2 [a] "m"(*a), [b] "m"(*b), [cw] "m"(cw)
#define CLOB "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)", "cc"

/* Two operands (ST0 = a, ST1 = b), two results left on the stack. */
#define TWO_TWO(NAME, INSN)                                                   \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        __asm__ volatile(PRE "fldt %[b]\n\tfldt %[a]\n\t" INSN "\n\t"         \
                         "fnstsw %[sw]\n\tfstpt %[r0]\n\tfstpt %[r1]"         \
                         : [r0] "=m"(o->r0), [r1] "=m"(o->r1), [sw] "=m"(o->sw) \
                         : IN2 : CLOB);                                       \
    }
/* Two operands, the instruction pops: one result. */
#define TWO_ONE(NAME, INSN)                                                   \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        __asm__ volatile(PRE "fldt %[b]\n\tfldt %[a]\n\t" INSN "\n\t"         \
                         "fnstsw %[sw]\n\tfstpt %[r0]"                        \
                         : [r0] "=m"(o->r0), [sw] "=m"(o->sw)                 \
                         : IN2 : CLOB);                                       \
    }
/* Two operands, the instruction pops both (fcompp, fucompp). */
#define TWO_NONE(NAME, INSN)                                                  \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        __asm__ volatile(PRE "fldt %[b]\n\tfldt %[a]\n\t" INSN "\n\t"         \
                         "fnstsw %[sw]"                                       \
                         : [sw] "=m"(o->sw)                                   \
                         : IN2 : CLOB);                                       \
    }
/* fcomi and friends: EFLAGS too (lahf: SF ZF AF PF CF; seto). */
#define COMI(NAME, INSN, POPS)                                                \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        uint16_t fl;                                                          \
        __asm__ volatile(PRE "fldt %[b]\n\tfldt %[a]\n\t" INSN "\n\t"         \
                         "lahf\n\tseto %%al\n\tmovw %%ax, %[fl]\n\t"             \
                         "fnstsw %[sw]\n\t" POPS                              \
                         : [fl] "=m"(fl), [sw] "=m"(o->sw)                    \
                         : IN2 : CLOB, "rax");                                \
        o->fl = (uint8_t)((fl >> 8 & 0xd5) | (fl & 1) << 1);                  \
    }
/* One operand (ST0 = a), one result. */
#define ONE_ONE(NAME, INSN)                                                   \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        (void)b;                                                              \
        __asm__ volatile(PRE "fldt %[a]\n\t" INSN "\n\t"                      \
                         "fnstsw %[sw]\n\tfstpt %[r0]"                        \
                         : [r0] "=m"(o->r0), [sw] "=m"(o->sw)                 \
                         : IN2 : CLOB);                                       \
    }
/* One operand, pushes one unless C2 says out of range (fptan, fsincos). */
#define ONE_PUSH(NAME, INSN)                                                  \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        (void)b;                                                              \
        __asm__ volatile(PRE "fldt %[a]\n\t" INSN "\n\t"                      \
                         "fnstsw %[sw]\n\tfnstsw %%ax\n\ttestb $4, %%ah\n\t"  \
                         "jnz 1f\n\tfstpt %[r1]\n1:\n\tfstpt %[r0]"           \
                         : [r0] "=m"(o->r0), [r1] "=m"(o->r1), [sw] "=m"(o->sw) \
                         : IN2 : CLOB, "rax");                                \
    }
/* ST0 = a with a memory operand m (fadds ..., fcoms ...). */
#define MEM(NAME, INSN, T, POPS)                                              \
    static void NAME(const f80 *a, const void *mp, out *o)                    \
    {                                                                         \
        T m;                                                                  \
        memcpy(&m, mp, sizeof m);                                             \
        __asm__ volatile(PRE "fldt %[a]\n\t" INSN " %[m]\n\t"                 \
                         "fnstsw %[sw]\n\t" POPS                              \
                         : [r0] "=m"(o->r0), [sw] "=m"(o->sw)                 \
                         : [a] "m"(*a), [m] "m"(m), [cw] "m"(cw) : CLOB);     \
    }
/* A load from memory, converting. */
#define LOAD(NAME, INSN, T)                                                   \
    static void NAME(const f80 *a, const void *mp, out *o)                    \
    {                                                                         \
        T m;                                                                  \
        (void)a;                                                              \
        memcpy(&m, mp, sizeof m);                                             \
        __asm__ volatile(PRE INSN " %[m]\n\tfnstsw %[sw]\n\tfstpt %[r0]"      \
                         : [r0] "=m"(o->r0), [sw] "=m"(o->sw)                 \
                         : [m] "m"(m), [cw] "m"(cw) : CLOB);                  \
    }
/* A store of ST0 = a to memory; POPS empties the stack after. */
#define STORE(NAME, INSN, T, POPS)                                            \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        T m;                                                                  \
        (void)b;                                                              \
        memset(&m, 0x5a, sizeof m);                                           \
        __asm__ volatile(PRE "fldt %[a]\n\t" INSN " %[m]\n\t"                 \
                         "fnstsw %[sw]\n\t" POPS                              \
                         : [m] "+m"(m), [sw] "=m"(o->sw)                      \
                         : [a] "m"(*a), [cw] "m"(cw) : CLOB);                 \
        o->mem = 0;                                                           \
        memcpy(&o->mem, &m, sizeof m < 8 ? sizeof m : 8);                     \
        if (sizeof m > 8)                                                     \
            o->r1.m = ((const uint16_t *)&m)[4];                              \
    }
/* A constant. */
#define CONST(NAME, INSN)                                                     \
    static void NAME(const f80 *a, const f80 *b, out *o)                      \
    {                                                                         \
        (void)a;                                                              \
        (void)b;                                                              \
        __asm__ volatile(PRE INSN "\n\tfnstsw %[sw]\n\tfstpt %[r0]"           \
                         : [r0] "=m"(o->r0), [sw] "=m"(o->sw)                 \
                         : [cw] "m"(cw) : CLOB);                              \
    }

/* ST(0) dest and ST(1) dest forms; the popping forms leave one value. */
#define ARITH(OP, I)                                                          \
    TWO_TWO(OP##_st0, #OP " %%st(1), %%st")                                  \
    TWO_TWO(OP##_st1, #OP " %%st, %%st(1)")                                  \
    TWO_ONE(OP##p, #OP "p")                                                   \
    MEM(OP##s, #OP "s", uint32_t, "fstpt %[r0]")                              \
    MEM(OP##l, #OP "l", uint64_t, "fstpt %[r0]")                              \
    MEM(fi##I##l, "fi" #I "l", int32_t, "fstpt %[r0]")                        \
    MEM(fi##I##s, "fi" #I "s", int16_t, "fstpt %[r0]")
ARITH(fadd, add) ARITH(fsub, sub) ARITH(fsubr, subr) ARITH(fmul, mul) ARITH(fdiv, div)
ARITH(fdivr, divr)

TWO_TWO(fcom_, "fcom %%st(1)")
TWO_ONE(fcomp_, "fcomp %%st(1)")
TWO_NONE(fcompp_, "fcompp")
TWO_TWO(fucom_, "fucom %%st(1)")
TWO_ONE(fucomp_, "fucomp %%st(1)")
TWO_NONE(fucompp_, "fucompp")
COMI(fcomi_, "fcomi %%st(1), %%st", "fstp %%st(0)\n\tfstp %%st(0)")
COMI(fucomi_, "fucomi %%st(1), %%st", "fstp %%st(0)\n\tfstp %%st(0)")
COMI(fcomip_, "fcomip %%st(1), %%st", "fstp %%st(0)")
COMI(fucomip_, "fucomip %%st(1), %%st", "fstp %%st(0)")
MEM(fcoms_, "fcoms", uint32_t, "fstp %%st(0)")
MEM(fcoml_, "fcoml", uint64_t, "fstp %%st(0)")
MEM(fcomps_, "fcomps", uint32_t, "")
MEM(ficoml_, "ficoml", int32_t, "fstp %%st(0)")
MEM(ficoms_, "ficoms", int16_t, "fstp %%st(0)")

TWO_TWO(fscale_, "fscale")
TWO_TWO(fprem_, "fprem")
TWO_TWO(fprem1_, "fprem1")
TWO_ONE(fyl2x_, "fyl2x")
TWO_ONE(fyl2xp1_, "fyl2xp1")
TWO_ONE(fpatan_, "fpatan")
ONE_ONE(fsqrt_, "fsqrt")
ONE_ONE(frndint_, "frndint")
ONE_ONE(f2xm1_, "f2xm1")
ONE_ONE(fsin_, "fsin")
ONE_ONE(fcos_, "fcos")
ONE_ONE(fchs_, "fchs")
ONE_ONE(fabs_, "fabs")
ONE_ONE(fxam_, "fxam")
ONE_ONE(ftst_, "ftst")
ONE_PUSH(fptan_, "fptan")
ONE_PUSH(fsincos_, "fsincos")
TWO_TWO(fxtract_, "fstp %%st(1)\n\tfxtract")

LOAD(flds_, "flds", uint32_t)
LOAD(fldl_, "fldl", uint64_t)
LOAD(filds_, "filds", int16_t)
LOAD(fildl_, "fildl", int32_t)
LOAD(fildll_, "fildll", int64_t)
typedef struct {
    uint8_t b[10];
} bcd;
LOAD(fbld_, "fbld", bcd)

STORE(fsts_, "fsts", uint32_t, "fstp %%st(0)")
STORE(fstl_, "fstl", uint64_t, "fstp %%st(0)")
STORE(fstps_, "fstps", uint32_t, "")
STORE(fstpl_, "fstpl", uint64_t, "")
STORE(fists_, "fists", int16_t, "fstp %%st(0)")
STORE(fistl_, "fistl", int32_t, "fstp %%st(0)")
STORE(fistps_, "fistps", int16_t, "")
STORE(fistpl_, "fistpl", int32_t, "")
STORE(fistpll_, "fistpll", int64_t, "")
STORE(fisttps_, "fisttps", int16_t, "")
STORE(fisttpl_, "fisttpl", int32_t, "")
STORE(fisttpll_, "fisttpll", int64_t, "")
STORE(fbstp_, "fbstp", bcd, "")
STORE(fstpt_, "fstpt", f80, "")

CONST(fld1_, "fld1")
CONST(fldz_, "fldz")
CONST(fldpi_, "fldpi")
CONST(fldl2e_, "fldl2e")
CONST(fldl2t_, "fldl2t")
CONST(fldlg2_, "fldlg2")
CONST(fldln2_, "fldln2")

typedef void (*two_fn)(const f80 *, const f80 *, out *);
typedef void (*mem_fn)(const f80 *, const void *, out *);
struct two { const char *name; two_fn fn; int pairs; };
struct mem { const char *name; mem_fn fn; int kind; };
enum { M32, M64, MI32, MI16, MI64, MBCD };

static const struct two TWOS[] = {
#define A(OP) {#OP "_st0", OP##_st0, 1}, {#OP "_st1", OP##_st1, 1}, {#OP "p", OP##p, 1},
    A(fadd) A(fsub) A(fsubr) A(fmul) A(fdiv) A(fdivr)
    {"fcom", fcom_, 1}, {"fcomp", fcomp_, 1}, {"fcompp", fcompp_, 1},
    {"fucom", fucom_, 1}, {"fucomp", fucomp_, 1}, {"fucompp", fucompp_, 1},
    {"fcomi", fcomi_, 1}, {"fucomi", fucomi_, 1}, {"fcomip", fcomip_, 1},
    {"fucomip", fucomip_, 1}, {"fscale", fscale_, 1}, {"fprem", fprem_, 1},
    {"fprem1", fprem1_, 1}, {"fyl2x", fyl2x_, 1}, {"fyl2xp1", fyl2xp1_, 1},
    {"fpatan", fpatan_, 1}, {"fsqrt", fsqrt_, 0}, {"frndint", frndint_, 0},
    {"f2xm1", f2xm1_, 0}, {"fsin", fsin_, 0}, {"fcos", fcos_, 0},
    {"fchs", fchs_, 0}, {"fabs", fabs_, 0}, {"fxam", fxam_, 0},
    {"ftst", ftst_, 0}, {"fptan", fptan_, 0}, {"fsincos", fsincos_, 0},
    {"fxtract", fxtract_, 0}, {"fsts", fsts_, 0}, {"fstl", fstl_, 0},
    {"fstps", fstps_, 0}, {"fstpl", fstpl_, 0}, {"fists", fists_, 0},
    {"fistl", fistl_, 0}, {"fistps", fistps_, 0}, {"fistpl", fistpl_, 0},
    {"fistpll", fistpll_, 0}, {"fisttps", fisttps_, 0},
    {"fisttpl", fisttpl_, 0}, {"fisttpll", fisttpll_, 0},
    {"fbstp", fbstp_, 0}, {"fstpt", fstpt_, 0}, {"fld1", fld1_, 0},
    {"fldz", fldz_, 0}, {"fldpi", fldpi_, 0}, {"fldl2e", fldl2e_, 0},
    {"fldl2t", fldl2t_, 0}, {"fldlg2", fldlg2_, 0}, {"fldln2", fldln2_, 0},
};
static const struct mem MEMS[] = {
#define B(OP, I) {#OP "s", OP##s, M32}, {#OP "l", OP##l, M64}, {"fi" #I "l", fi##I##l, MI32}, \
        {"fi" #I "s", fi##I##s, MI16},
    B(fadd, add) B(fsub, sub) B(fsubr, subr) B(fmul, mul) B(fdiv, div) B(fdivr, divr)
    {"fcoms", fcoms_, M32}, {"fcoml", fcoml_, M64}, {"fcomps", fcomps_, M32},
    {"ficoml", ficoml_, MI32}, {"ficoms", ficoms_, MI16}, {"flds", flds_, M32},
    {"fldl", fldl_, M64}, {"filds", filds_, MI16}, {"fildl", fildl_, MI32},
    {"fildll", fildll_, MI64}, {"fbld", fbld_, MBCD},
};

/* The memory operands of kind k: n of them, the i-th into buf. */
static unsigned nmem(int k)
{
    return k == M32 ? NF32 + 6 : k == M64 ? NF64 + 6 : k == MBCD ? 12 : NINT + 6;
}
static void memop(int k, unsigned i, uint8_t *buf)
{
    memset(buf, 0, 16);
    uint64_t r = 0;
    if (i >= nmem(k) - 6 && k != MBCD) {
        rng = 0x1234567 + i * 0x9e3779b97f4a7c15ull;
        r = next();
    }
    switch (k) {
    case M32: {
        uint32_t x = r ? (uint32_t)r : F32[i];
        memcpy(buf, &x, 4);
        break;
    }
    case M64: {
        uint64_t x = r ? r : F64[i];
        memcpy(buf, &x, 8);
        break;
    }
    case MI16: {
        int16_t x = r ? (int16_t)r : (int16_t)INTS[i];
        memcpy(buf, &x, 2);
        break;
    }
    case MI32: {
        int32_t x = r ? (int32_t)(r >> (i % 20)) : INTS[i];
        memcpy(buf, &x, 4);
        break;
    }
    case MI64: {
        int64_t x = r ? (int64_t)(r >> (i % 50)) : (int64_t)INTS[i] << (i * 3);
        memcpy(buf, &x, 8);
        break;
    }
    default: /* packed BCD: 18 digits, the sign byte; some invalid digits */
        rng = 0x777 + i;
        for (int d = 0; d < 9; d++) {
            uint64_t x = next();
            buf[d] = (uint8_t)((x % 10) | (x / 10 % 10) << 4);
        }
        buf[9] = i & 1 ? 0x80 : 0;
        if (i == 11)
            buf[3] = 0xab;
        break;
    }
}

/* fnsave area: 108 bytes, fsw at offset 4; fxsave: 512, fsw at 2. */
static void sticky(void)
{
    static const f80 one = {0x8000000000000000, 0x3fff}, three = {0xc000000000000000, 0x4000};
    static const f80 zero = {0, 0}, tiny = {0x8000000000000000, 1};
    out o;
    uint16_t sw;
    cw = 0x037f;
    fdiv_st0(&one, &three, &o); /* PE */
    sched_yield();
    __asm__ volatile("fnstsw %0" : "=m"(sw));
    printf("after 1/3, yield: fsw %04x\n", sw);
    __asm__ volatile("fldt %1\n\tfldt %2\n\tfdivp\n\tfstp %%st(0)\n\tfnstsw %0"
                     : "=m"(sw) : "m"(zero), "m"(one) : CLOB); /* ZE */
    __asm__ volatile("fldt %1\n\tfldt %1\n\tfmulp\n\tfstp %%st(0)\n\tfnstsw %0"
                     : "=m"(sw) : "m"(tiny) : CLOB); /* UE PE */
    uint8_t save[108];
    __asm__ volatile("fnsave %0\n\tfrstor %0" : "=m"(save) : : "memory");
    uint16_t fs;
    memcpy(&fs, save + 4, 2);
    struct { uint8_t b[512]; } __attribute__((aligned(16))) fx;
    __asm__ volatile("fxsave %0" : "=m"(fx));
    uint16_t fxs;
    memcpy(&fxs, fx.b + 2, 2);
    __asm__ volatile("fnstsw %0" : "=m"(sw));
    printf("after 1/0, tiny*tiny: fnsave fsw %04x, fxsave fsw %04x, fnstsw %04x\n", fs, fxs,
           sw);
    __asm__ volatile("fnclex\n\tfnstsw %0" : "=m"(sw));
    printf("after fnclex: fsw %04x\n", sw);
}

/* A thread: a series under control word *arg, yielding now and then. */
struct series {
    uint16_t cw, sw;
    f80 sum;
};
static void *series_thread(void *arg)
{
    struct series *t = arg;
    static const f80 three = {0xc000000000000000, 0x4000};
    __asm__ volatile("fninit\n\tfldcw %0" : : "m"(t->cw));
    __asm__ volatile("fldz" : : : "st");
    for (int i = 1; i <= 3000; i++) {
        int32_t k = i;
        __asm__ volatile("fildl %0\n\tfldt %1\n\tfdivp\n\tfaddp"
                         : : "m"(k), "m"(three) : "st(1)");
        if (i % 500 == 0)
            sched_yield();
    }
    __asm__ volatile("fstpt %0\n\tfnstsw %1" : "=m"(t->sum), "=m"(t->sw) : : "st");
    return NULL;
}

static void threads(void)
{
    struct series t[2] = {{.cw = 0x0f7f}, {.cw = 0x007f}}; /* 64-bit chop, 24-bit near */
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, series_thread, &t[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++)
        printf("thread cw %04x: sum %04x%016llx fsw %04x\n", t[i].cw, t[i].sum.e,
               (unsigned long long)t[i].sum.m, t[i].sw);
}

static void libm(const char *only)
{
    if (!strstr("libm", only))
        return;
    rng = 0x5eed;
    for (int i = 0; i < 24; i++) {
        long double x, y;
        uint64_t r = next();
        x = (long double)(int64_t)r / 0x1p60L;        /* [-8, 8) */
        y = (long double)(next() >> 11) / 0x1p49L + 0.001L; /* (0, 16) */
        if (i % 6 == 5)
            x *= 1e6L;
        long double res[13];
        long lr;
        feclearexcept(FE_ALL_EXCEPT);
        res[0] = expl(x);
        res[1] = logl(y);
        res[2] = sinl(x);
        res[3] = cosl(x);
        res[4] = tanl(x);
        res[5] = atan2l(x, y);
        res[6] = powl(y, x);
        res[7] = sqrtl(y);
        res[8] = exp2l(x);
        res[9] = log2l(y);
        res[10] = fmodl(x, y);
        res[11] = remainderl(x, y);
        res[12] = rintl(x * 3.3L);
        lr = lrintl(x * 1e3L);
        int ex = fetestexcept(FE_ALL_EXCEPT);
        printf("libm %2d:", i);
        for (int k = 0; k < 13; k++) {
            f80 f;
            memcpy(&f, &res[k], 10);
            printf(" %04x%016llx", f.e, (unsigned long long)f.m);
        }
        printf(" %ld %02x\n", lr, ex);
    }
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    operands();
    static const uint16_t pcs[] = {0x000, 0x200, 0x300};
    for (unsigned s = 0; s < 12; s++) {
        cw = 0x007f | pcs[s % 3] | (uint16_t)(s / 3) << 10;
        for (unsigned o = 0; o < sizeof TWOS / sizeof TWOS[0]; o++) {
            if (!strstr(TWOS[o].name, only))
                continue;
            hash = 0xcbf29ce484222325ull;
            for (unsigned i = 0; i < N80; i++)
                for (unsigned j = 0; j < (TWOS[o].pairs ? N80 : 1); j++) {
                    out r;
                    memset(&r, 0, sizeof r);
                    TWOS[o].fn(&v[i], &v[j], &r);
                    mix80(&r.r0);
                    mix80(&r.r1);
                    mix(r.mem);
                    mix(r.sw);
                    mix(r.fl);
                }
            printf("%-9s %04x %016llx\n", TWOS[o].name, cw, (unsigned long long)hash);
        }
        for (unsigned o = 0; o < sizeof MEMS / sizeof MEMS[0]; o++) {
            if (!strstr(MEMS[o].name, only))
                continue;
            hash = 0xcbf29ce484222325ull;
            for (unsigned i = 0; i < N80; i++)
                for (unsigned j = 0; j < nmem(MEMS[o].kind); j++) {
                    out r;
                    uint8_t buf[16];
                    memset(&r, 0, sizeof r);
                    memop(MEMS[o].kind, j, buf);
                    MEMS[o].fn(&v[i], buf, &r);
                    mix80(&r.r0);
                    mix(r.sw);
                }
            printf("%-9s %04x %016llx\n", MEMS[o].name, cw, (unsigned long long)hash);
        }
    }
    if (!*only || strstr("sticky", only))
        sticky();
    if (!*only || strstr("threads", only))
        threads();
    __asm__ volatile("fninit");
    libm(only);
    return 0;
}
