/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Differential test of SSE/SSE2/SSE3 floating point: every instruction lard
 * executes on the host (docs/unicorn-patches.md, patch 0023) on special
 * operands (+-0, +-inf, quiet and signalling NaNs with payloads, denormals,
 * the smallest and largest normals, halfway cases, integer limits) and
 * pseudo-random ones, under each rounding mode with FTZ and DAZ off and on,
 * all exceptions masked. For every instruction and MXCSR setting it prints
 * a hash of the result bits (all 128 bits of the destination, or the
 * integer result, or ZF/PF/CF/OF/SF of comis) and of the MXCSR read right
 * after each execution; then the sticky flags of a sequence read by
 * stmxcsr after a sched_yield, and through fxsave. The test compares the
 * output with the native run's: any difference is a bug.
 *
 * usage: sse_float [OPS-FILTER]   (prints only instructions whose name
 * contains OPS-FILTER; for debugging a mismatch) */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef double v2d __attribute__((vector_size(16)));
typedef union {
    v2d v;
    double d[2];
    float f[4];
    uint64_t q[2];
    uint32_t l[4];
} __attribute__((aligned(16))) reg;

static const uint64_t F64[] = {
    0x0000000000000000, 0x8000000000000000,                     /* +-0 */
    0x7ff0000000000000, 0xfff0000000000000,                     /* +-inf */
    0x7ff8000000000123, 0xfff80000000abcde,                     /* qNaN */
    0x7ff0000000000456, 0xfff4000000000001,                     /* sNaN */
    0x0000000000000001, 0x800fffffffffffff, 0x0008000000000000, /* denormal */
    0x0010000000000000, 0x8010000000000001,                     /* min normal */
    0x7fefffffffffffff, 0xffeffffffffffffe,                     /* max normal */
    0x3ff0000000000000, 0xbff8000000000000, 0x4008000000000000, /* 1 -1.5 3 */
    0x3fd5555555555555, 0x3fe0000000000000, 0x4004000000000000, /* 1/3 .5 2.5 */
    0xc004000000000000, 0x41dfffffffc00000, 0xc1e0000000200000, /* -2.5 2^31-1 */
    0x41e0000000000000, 0x43e0000000000000, 0xc3e0000000000001, /* 2^31 2^63 */
    0x4340000000000001, 0x3ca0000000000000, 0x47efffffe0000000, /* 2^54+2 2^-53 */
    0x36a0000000000000, 0x380fffffffffffff,                     /* f32 limits */
};
static const uint32_t F32[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00123, 0xffc0abcd,
    0x7f800456, 0xffa00001, 0x00000001, 0x807fffff, 0x00400000, 0x00800000,
    0x80800001, 0x7f7fffff, 0xff7ffffe, 0x3f800000, 0xbfc00000, 0x40400000,
    0x3eaaaaab, 0x3f000000, 0x40200000, 0xc0200000, 0x4effffff, 0xcf000001,
    0x4f000000, 0x5f000000, 0xdf000001, 0x4b800001, 0x33800000, 0x0b800000,
};
static const uint64_t INTS[] = {
    0, 1, (uint64_t)-1, 0x7fffffff, 0x80000000, 0x01000001, 0xfeffffff,
    0x0020000000000001, 0x7fffffffffffffff, 0x8000000000000000,
    0xffdfffffffffffff, 123456789, 0xfffffffffffe1dc0,
};
#define NF64 (sizeof F64 / sizeof F64[0])
#define NF32 (sizeof F32 / sizeof F32[0])
#define NINT (sizeof INTS / sizeof INTS[0])
#define NRAND 24
#define N64 (NF64 + NRAND)
#define N32 (NF32 + NRAND)
#define NI (NINT + NRAND)

static uint64_t f64v[N64], intv[NI];
static uint32_t f32v[N32];
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
    memcpy(f64v, F64, sizeof F64);
    memcpy(f32v, F32, sizeof F32);
    memcpy(intv, INTS, sizeof INTS);
    for (int i = 0; i < NRAND; i++) {
        /* Exponents spread over the whole range, some near 0 and 1. */
        uint64_t r = next(), e = i % 3 == 0 ? (r >> 52) & 0x7ff : 0x3f0 + (r >> 59);
        f64v[NF64 + i] = (r & 0x800fffffffffffffull) | (e << 52);
        uint32_t s = (uint32_t)next(), es = i % 3 == 0 ? (s >> 23) & 0xff : 0x70 + (s >> 28);
        f32v[NF32 + i] = (s & 0x807fffff) | (es << 23);
        intv[NINT + i] = next() >> (i % 40);
    }
}

static uint64_t hash = 0xcbf29ce484222325ull;
static void mix(uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        hash ^= (v >> (8 * i)) & 0xff;
        hash *= 0x100000001b3ull;
    }
}

static inline void set_mxcsr(uint32_t m) { __asm__ volatile("ldmxcsr %0" : : "m"(m)); }
static inline uint32_t get_mxcsr(void)
{
    uint32_t m;
    __asm__ volatile("stmxcsr %0" : "=m"(m));
    return m;
}

/* Instruction kinds: XMM op XMM, XMM op memory, to GPR, from GPR, comis. */
typedef void (*xx_fn)(reg *d, const reg *s);
typedef uint64_t (*toi_fn)(const reg *s);
typedef void (*fromi_fn)(reg *d, uint64_t v);

#define XX(NAME, INSN)                                                        \
    static void NAME(reg *d, const reg *s)                                    \
    {                                                                         \
        v2d x = d->v;                                                         \
        __asm__ volatile(INSN " %1, %0" : "+x"(x) : "x"(s->v));               \
        d->v = x;                                                             \
    }
#define XM(NAME, INSN)                                                        \
    static void NAME(reg *d, const reg *s)                                    \
    {                                                                         \
        v2d x = d->v;                                                         \
        __asm__ volatile(INSN " %1, %0" : "+x"(x) : "m"(*s));                 \
        d->v = x;                                                             \
    }
#define TOI(NAME, INSN, T)                                                    \
    static uint64_t NAME(const reg *s)                                        \
    {                                                                         \
        T r;                                                                  \
        __asm__ volatile(INSN " %1, %0" : "=r"(r) : "x"(s->v));               \
        return (uint64_t)r;                                                   \
    }
#define FROMI(NAME, INSN, T)                                                  \
    static void NAME(reg *d, uint64_t v)                                      \
    {                                                                         \
        v2d x = d->v;                                                         \
        __asm__ volatile(INSN " %1, %0" : "+x"(x) : "r"((T)v));               \
        d->v = x;                                                             \
    }
#define COMIS(NAME, INSN)                                                     \
    static uint64_t NAME##_f(const reg *d, const reg *s)                      \
    {                                                                         \
        uint8_t z, p, c, o, g;                                                \
        __asm__ volatile(INSN " %5, %6\n\tsetz %0\n\tsetp %1\n\tsetc %2\n\t"  \
                         "seto %3\n\tsets %4"                                 \
                         : "=q"(z), "=q"(p), "=q"(c), "=q"(o), "=q"(g)        \
                         : "x"(s->v), "x"(d->v)                               \
                         : "cc");                                             \
        return z | p << 1 | c << 2 | o << 3 | g << 4;                         \
    }

#define ARITH(OP)                                                             \
    XX(OP##ss, #OP "ss") XX(OP##ps, #OP "ps") XX(OP##sd, #OP "sd")            \
    XX(OP##pd, #OP "pd") XM(OP##sd_m, #OP "sd") XM(OP##ps_m, #OP "ps")
ARITH(add) ARITH(sub) ARITH(mul) ARITH(div) ARITH(min) ARITH(max) ARITH(sqrt)
#define CMP(P)                                                                \
    XX(cmp##P##ss, "cmp" #P "ss") XX(cmp##P##ps, "cmp" #P "ps")               \
    XX(cmp##P##sd, "cmp" #P "sd") XX(cmp##P##pd, "cmp" #P "pd")
CMP(eq) CMP(lt) CMP(le) CMP(unord) CMP(neq) CMP(nlt) CMP(nle) CMP(ord)
XX(rcpps, "rcpps") XX(rcpss, "rcpss") XX(rsqrtps, "rsqrtps") XX(rsqrtss, "rsqrtss")
XX(haddps, "haddps") XX(haddpd, "haddpd") XX(hsubps, "hsubps") XX(hsubpd, "hsubpd")
XX(addsubps, "addsubps") XX(addsubpd, "addsubpd")
XX(cvtps2pd, "cvtps2pd") XX(cvtpd2ps, "cvtpd2ps") XX(cvtss2sd, "cvtss2sd")
XX(cvtsd2ss, "cvtsd2ss") XX(cvtps2dq, "cvtps2dq") XX(cvtpd2dq, "cvtpd2dq")
XX(cvttps2dq, "cvttps2dq") XX(cvttpd2dq, "cvttpd2dq") XX(cvtdq2ps, "cvtdq2ps")
XX(cvtdq2pd, "cvtdq2pd") XM(cvtss2sd_m, "cvtss2sd") XM(cvtsd2ss_m, "cvtsd2ss")
TOI(cvtss2si, "cvtss2si", int32_t) TOI(cvtsd2si, "cvtsd2si", int32_t)
TOI(cvttss2si, "cvttss2si", int32_t) TOI(cvttsd2si, "cvttsd2si", int32_t)
TOI(cvtss2sq, "cvtss2si", int64_t) TOI(cvtsd2sq, "cvtsd2si", int64_t)
TOI(cvttss2sq, "cvttss2si", int64_t) TOI(cvttsd2sq, "cvttsd2si", int64_t)
FROMI(cvtsi2ss, "cvtsi2ssl", int32_t) FROMI(cvtsi2sd, "cvtsi2sdl", int32_t)
FROMI(cvtsq2ss, "cvtsi2ssq", int64_t) FROMI(cvtsq2sd, "cvtsi2sdq", int64_t)
COMIS(comiss, "comiss") COMIS(ucomiss, "ucomiss")
COMIS(comisd, "comisd") COMIS(ucomisd, "ucomisd")

/* The MMX forms: the MMX side through memory; emms after. */
static void cvtpi2ps(reg *d, const reg *s)
{
    v2d x = d->v;
    __asm__ volatile("cvtpi2ps %1, %0\n\temms" : "+x"(x) : "m"(s->q[0]));
    d->v = x;
}
static void cvtpi2pd(reg *d, const reg *s)
{
    v2d x = d->v;
    __asm__ volatile("cvtpi2pd %1, %0\n\temms" : "+x"(x) : "m"(s->q[0]));
    d->v = x;
}
#define TOMMX(NAME, INSN)                                                     \
    static void NAME(reg *d, const reg *s)                                    \
    {                                                                         \
        uint64_t r;                                                           \
        __asm__ volatile(INSN " %1, %%mm0\n\tmovq %%mm0, %0\n\temms"          \
                         : "=m"(r) : "x"(s->v) : "mm0");                      \
        d->q[0] = r;                                                          \
    }
TOMMX(cvtps2pi, "cvtps2pi") TOMMX(cvttps2pi, "cvttps2pi")
TOMMX(cvtpd2pi, "cvtpd2pi") TOMMX(cvttpd2pi, "cvttpd2pi")

enum kind { K32, K64, KINT };
struct xx { const char *name; xx_fn fn; enum kind k; };
static const struct xx XXS[] = {
#define A(OP)                                                                 \
    {#OP "ss", OP##ss, K32}, {#OP "ps", OP##ps, K32}, {#OP "sd", OP##sd, K64}, \
    {#OP "pd", OP##pd, K64}, {#OP "sd_m", OP##sd_m, K64}, {#OP "ps_m", OP##ps_m, K32},
    A(add) A(sub) A(mul) A(div) A(min) A(max) A(sqrt)
#define C(P)                                                                  \
    {"cmp" #P "ss", cmp##P##ss, K32}, {"cmp" #P "ps", cmp##P##ps, K32},         \
    {"cmp" #P "sd", cmp##P##sd, K64}, {"cmp" #P "pd", cmp##P##pd, K64},
    C(eq) C(lt) C(le) C(unord) C(neq) C(nlt) C(nle) C(ord)
    {"rcpps", rcpps, K32}, {"rcpss", rcpss, K32}, {"rsqrtps", rsqrtps, K32},
    {"rsqrtss", rsqrtss, K32}, {"haddps", haddps, K32}, {"haddpd", haddpd, K64},
    {"hsubps", hsubps, K32}, {"hsubpd", hsubpd, K64}, {"addsubps", addsubps, K32},
    {"addsubpd", addsubpd, K64}, {"cvtps2pd", cvtps2pd, K32},
    {"cvtpd2ps", cvtpd2ps, K64}, {"cvtss2sd", cvtss2sd, K32},
    {"cvtsd2ss", cvtsd2ss, K64}, {"cvtps2dq", cvtps2dq, K32},
    {"cvtpd2dq", cvtpd2dq, K64}, {"cvttps2dq", cvttps2dq, K32},
    {"cvttpd2dq", cvttpd2dq, K64}, {"cvtdq2ps", cvtdq2ps, KINT},
    {"cvtdq2pd", cvtdq2pd, KINT}, {"cvtss2sd_m", cvtss2sd_m, K32},
    {"cvtsd2ss_m", cvtsd2ss_m, K64}, {"cvtpi2ps", cvtpi2ps, KINT},
    {"cvtpi2pd", cvtpi2pd, KINT}, {"cvtps2pi", cvtps2pi, K32},
    {"cvttps2pi", cvttps2pi, K32}, {"cvtpd2pi", cvtpd2pi, K64},
    {"cvttpd2pi", cvttpd2pi, K64},
};
struct toi { const char *name; toi_fn fn; enum kind k; };
static const struct toi TOIS[] = {
    {"cvtss2si", cvtss2si, K32}, {"cvtsd2si", cvtsd2si, K64},
    {"cvttss2si", cvttss2si, K32}, {"cvttsd2si", cvttsd2si, K64},
    {"cvtss2sq", cvtss2sq, K32}, {"cvtsd2sq", cvtsd2sq, K64},
    {"cvttss2sq", cvttss2sq, K32}, {"cvttsd2sq", cvttsd2sq, K64},
};
struct fromi { const char *name; fromi_fn fn; };
static const struct fromi FROMIS[] = {
    {"cvtsi2ss", cvtsi2ss}, {"cvtsi2sd", cvtsi2sd},
    {"cvtsq2ss", cvtsq2ss}, {"cvtsq2sd", cvtsq2sd},
};
struct comis { const char *name; uint64_t (*fn)(const reg *, const reg *); enum kind k; };
static const struct comis COMISES[] = {
    {"comiss", comiss_f, K32}, {"ucomiss", ucomiss_f, K32},
    {"comisd", comisd_f, K64}, {"ucomisd", ucomisd_f, K64},
};

/* Operand registers for the pair (i, j): every lane from the kind's list. */
static unsigned count(enum kind k) { return k == K32 ? N32 : k == K64 ? N64 : NI; }
static void fill(reg *r, enum kind k, unsigned i, unsigned j)
{
    unsigned n = count(k);
    for (unsigned l = 0; l < 4; l++) {
        unsigned x = (i + l * (j + 1)) % n;
        if (k == K32)
            r->l[l] = f32v[x];
        else if (l < 2)
            r->q[l] = k == K64 ? f64v[x] : (intv[x] & 0xffffffff) | (intv[(x + 5) % n] << 32);
    }
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    operands();
    static const uint32_t modes[] = {0x0000, 0x2000, 0x4000, 0x6000};
    for (unsigned m = 0; m < 16; m++) {
        uint32_t mx = 0x1f80 | modes[m & 3] | (m & 4 ? 0x8000 : 0) | (m & 8 ? 0x40 : 0);
        for (unsigned o = 0; o < sizeof XXS / sizeof XXS[0]; o++) {
            if (!strstr(XXS[o].name, only))
                continue;
            hash = 0xcbf29ce484222325ull;
            unsigned n = count(XXS[o].k);
            for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++) {
                    reg d, s;
                    fill(&d, XXS[o].k, i, j);
                    fill(&s, XXS[o].k, j, i + 3);
                    set_mxcsr(mx);
                    XXS[o].fn(&d, &s);
                    mix(get_mxcsr());
                    mix(d.q[0]);
                    mix(d.q[1]);
                }
            printf("%-10s %04x %016llx\n", XXS[o].name, mx, (unsigned long long)hash);
        }
        for (unsigned o = 0; o < sizeof TOIS / sizeof TOIS[0]; o++) {
            if (!strstr(TOIS[o].name, only))
                continue;
            hash = 0xcbf29ce484222325ull;
            for (unsigned i = 0; i < count(TOIS[o].k); i++) {
                reg s;
                fill(&s, TOIS[o].k, i, 0);
                set_mxcsr(mx);
                mix(TOIS[o].fn(&s));
                mix(get_mxcsr());
            }
            printf("%-10s %04x %016llx\n", TOIS[o].name, mx, (unsigned long long)hash);
        }
        for (unsigned o = 0; o < sizeof FROMIS / sizeof FROMIS[0]; o++) {
            if (!strstr(FROMIS[o].name, only))
                continue;
            hash = 0xcbf29ce484222325ull;
            for (unsigned i = 0; i < NI; i++) {
                reg d;
                fill(&d, K64, i, 1);
                set_mxcsr(mx);
                FROMIS[o].fn(&d, intv[i]);
                mix(get_mxcsr());
                mix(d.q[0]);
                mix(d.q[1]);
            }
            printf("%-10s %04x %016llx\n", FROMIS[o].name, mx, (unsigned long long)hash);
        }
        for (unsigned o = 0; o < sizeof COMISES / sizeof COMISES[0]; o++) {
            if (!strstr(COMISES[o].name, only))
                continue;
            hash = 0xcbf29ce484222325ull;
            unsigned n = count(COMISES[o].k);
            for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++) {
                    reg d, s;
                    fill(&d, COMISES[o].k, i, 0);
                    fill(&s, COMISES[o].k, j, 0);
                    set_mxcsr(mx);
                    mix(COMISES[o].fn(&d, &s));
                    mix(get_mxcsr());
                }
            printf("%-10s %04x %016llx\n", COMISES[o].name, mx, (unsigned long long)hash);
        }
    }

    /* Sticky flags of a sequence, read after a yield (another quantum). */
    set_mxcsr(0x1f80);
    reg a = {.d = {1.0, 0.0}}, b = {.d = {3.0, 0.0}}, z = {.d = {0.0, 0.0}};
    divsd(&a, &b);   /* PE */
    sched_yield();
    printf("after 1/3, yield: mxcsr %08x\n", get_mxcsr());
    divsd(&a, &z);   /* ZE */
    reg tiny = {.q = {0x0010000000000001, 0}}, half = {.d = {0.5, 0}};
    mulsd(&tiny, &half); /* UE PE */
    struct { uint8_t b[512]; } __attribute__((aligned(16))) fx;
    __asm__ volatile("fxsave %0" : "=m"(fx));
    uint32_t fx_mxcsr;
    memcpy(&fx_mxcsr, fx.b + 24, 4);
    printf("after 1/0, tiny/2: fxsave mxcsr %08x, stmxcsr %08x\n", fx_mxcsr, get_mxcsr());
    set_mxcsr(0x1f80);
    printf("after ldmxcsr: mxcsr %08x\n", get_mxcsr());
    return 0;
}
