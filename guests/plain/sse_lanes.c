/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Runs SSE instructions on a table of operands and prints, per instruction,
 * a hash of every result: register-register (low and REX registers),
 * register-memory and register-with-itself forms. The table covers the
 * lane-wise SSE2 integer and logic operations the emulator translates
 * inline, and a sample of the ones it runs through helpers (shuffles,
 * unpacks, packs, shifts, float arithmetic), so that a run under lard can be
 * compared with the native one. The loops at the end are what compilers
 * vectorise them into, with general registers live around the instructions. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    _Alignas(16) uint8_t b[16];
} v128;

enum { NV = 8 };
static v128 ops[NV];

static uint64_t h = 1469598103934665603ull;
static void mix(const v128 *r) {
    for (int i = 0; i < 16; i++) h = (h ^ r->b[i]) * 1099511628211ull;
}

#define LOAD2 "movdqu (%[a]), %%xmm0\n\tmovdqu (%[b]), %%xmm1\n\t"
#define OP(name, insn)                                                                                     \
    static void name(void) {                                                                               \
        h = 1469598103934665603ull;                                                                        \
        v128 r, m;                                                                                         \
        for (int i = 0; i < NV; i++)                                                                       \
            for (int j = 0; j < NV; j++) {                                                                 \
                const v128 *a = &ops[i], *b = &ops[j];                                                     \
                __asm__ volatile(LOAD2 insn " %%xmm1, %%xmm0\n\tmovdqu %%xmm0, (%[r])"                     \
                                 : : [a] "r"(a), [b] "r"(b), [r] "r"(&r) : "xmm0", "xmm1", "memory");       \
                mix(&r);                                                                                   \
                __asm__ volatile("movdqu (%[a]), %%xmm8\n\tmovdqu (%[b]), %%xmm13\n\t" insn                \
                                 " %%xmm13, %%xmm8\n\tmovdqu %%xmm8, (%[r])"                               \
                                 : : [a] "r"(a), [b] "r"(b), [r] "r"(&r) : "xmm8", "xmm13", "memory");      \
                mix(&r);                                                                                   \
                m = *b;                                                                                    \
                __asm__ volatile("movdqu (%[a]), %%xmm2\n\t" insn " (%[m]), %%xmm2\n\tmovdqu %%xmm2, (%[r])" \
                                 : : [a] "r"(a), [m] "r"(&m), [r] "r"(&r) : "xmm2", "memory");              \
                mix(&r);                                                                                   \
            }                                                                                              \
        for (int i = 0; i < NV; i++) {                                                                     \
            __asm__ volatile("movdqu (%[a]), %%xmm3\n\t" insn " %%xmm3, %%xmm3\n\tmovdqu %%xmm3, (%[r])"   \
                             : : [a] "r"(&ops[i]), [r] "r"(&r) : "xmm3", "memory");                         \
            mix(&r);                                                                                       \
        }                                                                                                  \
        printf("%-10s %016llx\n", #name, (unsigned long long)h);                                           \
    }

/* inline on the emulator */
OP(pand, "pand") OP(pandn, "pandn") OP(por, "por") OP(pxor, "pxor")
OP(andps, "andps") OP(andnps, "andnps") OP(orps, "orps") OP(xorps, "xorps")
OP(andpd, "andpd") OP(andnpd, "andnpd") OP(orpd, "orpd") OP(xorpd, "xorpd")
OP(paddb, "paddb") OP(paddw, "paddw") OP(paddd, "paddd") OP(paddq, "paddq")
OP(psubb, "psubb") OP(psubw, "psubw") OP(psubd, "psubd") OP(psubq, "psubq")
OP(paddusb, "paddusb") OP(paddusw, "paddusw") OP(psubusb, "psubusb") OP(psubusw, "psubusw")
OP(paddsb, "paddsb") OP(paddsw, "paddsw") OP(psubsb, "psubsb") OP(psubsw, "psubsw")
OP(pminub, "pminub") OP(pmaxub, "pmaxub") OP(pminsw, "pminsw") OP(pmaxsw, "pmaxsw")
OP(pmullw, "pmullw")
OP(pcmpeqb, "pcmpeqb") OP(pcmpeqw, "pcmpeqw") OP(pcmpeqd, "pcmpeqd")
OP(pcmpgtb, "pcmpgtb") OP(pcmpgtw, "pcmpgtw") OP(pcmpgtd, "pcmpgtd")
/* helpers */
OP(punpcklbw, "punpcklbw") OP(punpcklwd, "punpcklwd") OP(punpckldq, "punpckldq")
OP(punpcklqdq, "punpcklqdq") OP(punpckhbw, "punpckhbw") OP(punpckhwd, "punpckhwd")
OP(packsswb, "packsswb") OP(packuswb, "packuswb") OP(packssdw, "packssdw")
OP(pmuludq, "pmuludq") OP(pmaddwd, "pmaddwd") OP(psadbw, "psadbw") OP(pavgb, "pavgb")
OP(pmulhw, "pmulhw") OP(psrlw, "psrlw") OP(psrad, "psrad") OP(psllq, "psllq")
OP(pshufd, "pshufd $0x1b,") OP(pshuflw, "pshuflw $0x9c,") OP(pshufhw, "pshufhw $0x4e,")
OP(shufps, "shufps $0xb1,") OP(pshufb, "pshufb") OP(pminsd, "pminsd") OP(palignr, "palignr $5,")

static void fill(void) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 16; i++) {
        ops[0].b[i] = 0;
        ops[1].b[i] = 0xff;
        ops[2].b[i] = (i & 1) ? 0x80 : 0x7f;
        ops[3].b[i] = (uint8_t)i;
        ops[4].b[i] = (i & 2) ? 0x00 : 0x80;
        ops[5].b[i] = (uint8_t)(0xf0 - 17 * i);
    }
    for (int k = 6; k < NV; k++)
        for (int i = 0; i < 16; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            ops[k].b[i] = (uint8_t)x;
        }
    /* shift counts the shift instructions read from the low quadword */
    ops[3].b[0] = 3;
    ops[6].b[0] = 17;
    memset(ops[6].b + 1, 0, 7);
}

/* float arithmetic on ordinary values (no NaN payloads involved) */
static void floats(void) {
    _Alignas(16) float f[4] = {1.5f, -2.25f, 3.0e10f, 1e-3f}, g[4] = {0.75f, 8.0f, -1.0e-5f, 2.0f}, r[4];
    _Alignas(16) double d[2] = {1.5, -1e300}, e[2] = {3.25, 2.5e-3}, s[2];
    __asm__ volatile("movaps (%0), %%xmm0\n\taddps (%1), %%xmm0\n\tmulps (%1), %%xmm0\n\t"
                     "movaps (%1), %%xmm1\n\tdivps %%xmm1, %%xmm0\n\tmaxps %%xmm1, %%xmm0\n\t"
                     "subss %%xmm1, %%xmm0\n\tmovaps %%xmm0, (%2)"
                     : : "r"(f), "r"(g), "r"(r) : "xmm0", "xmm1", "memory");
    __asm__ volatile("movapd (%0), %%xmm0\n\tmulpd (%1), %%xmm0\n\tminpd (%1), %%xmm0\n\t"
                     "sqrtpd %%xmm0, %%xmm1\n\taddsd %%xmm1, %%xmm0\n\tmovapd %%xmm0, (%2)"
                     : : "r"(d), "r"(e), "r"(s) : "xmm0", "xmm1", "memory");
    /* the bits, not printf's formatting of them */
    uint32_t rb[4];
    uint64_t sb[2];
    memcpy(rb, r, sizeof rb);
    memcpy(sb, s, sizeof sb);
    printf("floats     %08x %08x %08x %08x %016llx %016llx\n", rb[0], rb[1], rb[2], rb[3],
           (unsigned long long)sb[0], (unsigned long long)sb[1]);
}

/* zlib's slide_hash and a saturating byte loop, vectorised by the compiler */
__attribute__((noinline, optimize("O3"))) static unsigned slide(uint16_t *p, unsigned n, unsigned w) {
    for (unsigned i = 0; i < n; i++) p[i] = (uint16_t)(p[i] >= w ? p[i] - w : 0);
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++) s = s * 31 + p[i];
    return s;
}
__attribute__((noinline, optimize("O3"))) static unsigned bytes(uint8_t *a, const uint8_t *b, unsigned n) {
    for (unsigned i = 0; i < n; i++) a[i] = (uint8_t)(a[i] + b[i] > 255 ? 255 : a[i] + b[i]);
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++) s = s * 33 + (a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]);
    return s;
}

int main(void) {
    fill();
    pand(), pandn(), por(), pxor(), andps(), andnps(), orps(), xorps(), andpd(), andnpd(), orpd(), xorpd();
    paddb(), paddw(), paddd(), paddq(), psubb(), psubw(), psubd(), psubq();
    paddusb(), paddusw(), psubusb(), psubusw(), paddsb(), paddsw(), psubsb(), psubsw();
    pminub(), pmaxub(), pminsw(), pmaxsw(), pmullw();
    pcmpeqb(), pcmpeqw(), pcmpeqd(), pcmpgtb(), pcmpgtw(), pcmpgtd();
    punpcklbw(), punpcklwd(), punpckldq(), punpcklqdq(), punpckhbw(), punpckhwd();
    packsswb(), packuswb(), packssdw(), pmuludq(), pmaddwd(), psadbw(), pavgb(), pmulhw();
    psrlw(), psrad(), psllq(), pshufd(), pshuflw(), pshufhw(), shufps(), pshufb(), pminsd(), palignr();
    floats();
    static uint16_t p[1000];
    static uint8_t a[999], b[999];
    for (unsigned i = 0; i < 1000; i++) p[i] = (uint16_t)(i * 40503u);
    for (unsigned i = 0; i < 999; i++) a[i] = (uint8_t)(i * 7), b[i] = (uint8_t)(i * 13 + 5);
    printf("slide      %08x\n", slide(p, 1000, 32768));
    printf("bytes      %08x\n", bytes(a, b, 999));
    return 0;
}
