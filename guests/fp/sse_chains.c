/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Differential test of SSE floating point in straight-line code: chains of
 * dependent instructions on all sixteen XMM registers, with copies between
 * registers (movaps, movapd, movss, movsd), memory operands, loads that
 * replace part of a register (movsd, movss, movhps, movlps), instructions
 * translated as calls or element stores (cvtsi2sd, shufpd, unpcklpd,
 * pshufd, xorpd, pinsrw), logic, integer and compare instructions
 * (andpd, pcmpeqd, cmpltsd...), conversions to and from integers
 * (cvtsi2sd, cvttsd2si...), general-register moves (movq) and a store into a
 * page mapped read-write-execute, in the middle of the chains. lard keeps
 * guest XMM registers in host registers within a translated block
 * (docs/unicorn-patches.md, patch 0025); every such instruction must see
 * the value the one before left. Each sequence runs on special and
 * pseudo-random operands under four MXCSR settings (the default, round up,
 * FTZ, DAZ); the program prints a hash per sequence and setting of the
 * sixteen registers, the flags of comisd/comiss and the MXCSR after each
 * run. The test compares the output with the native run's.
 *
 * usage: sse_chains */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef struct {
    uint64_t q[16][2];
} __attribute__((aligned(16))) regs;

static const uint64_t SPECIAL[] = {
    0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
    0x7ff8000000000123, 0xfff4000000000001, 0x0000000000000001, 0x800fffffffffffff,
    0x0010000000000000, 0x7fefffffffffffff, 0x3ff0000000000000, 0xbff8000000000000,
    0x3fd5555555555555, 0x4004000000000000, 0x00800000ff800001, 0x7f7fffff00000001,
    0x3f8000003f800000, 0x7fc00123807fffff, 0xc3e0000000000001, 0x36a0000000000000,
};
#define NSPECIAL (sizeof SPECIAL / sizeof SPECIAL[0])
#define NRUNS 48

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A pseudo-random double or float pair, or a special value, often near 1. */
static uint64_t operand(void)
{
    uint64_t r = next();
    switch (r & 3) {
    case 0:
        return SPECIAL[(r >> 8) % NSPECIAL];
    case 1:
        return (r >> 12) | 0x3ff0000000000000ull;
    case 2:
        return ((r >> 9) & 0x807fffff807fffffull) | 0x3f0000003f000000ull;
    default:
        return r;
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

/* EFLAGS into REG, below the red zone (lea leaves the flags alone). */
#define SAVE_FLAGS(reg)                                                       \
    "leaq -128(%%rsp), %%rsp\n\tpushfq\n\tpopq %%" reg "\n\t"                 \
    "leaq 128(%%rsp), %%rsp\n\t"
#define LOAD_ALL                                                              \
    "movupd 0(%[r]), %%xmm0\n\tmovupd 16(%[r]), %%xmm1\n\t"                   \
    "movupd 32(%[r]), %%xmm2\n\tmovupd 48(%[r]), %%xmm3\n\t"                  \
    "movupd 64(%[r]), %%xmm4\n\tmovupd 80(%[r]), %%xmm5\n\t"                  \
    "movupd 96(%[r]), %%xmm6\n\tmovupd 112(%[r]), %%xmm7\n\t"                 \
    "movupd 128(%[r]), %%xmm8\n\tmovupd 144(%[r]), %%xmm9\n\t"                \
    "movupd 160(%[r]), %%xmm10\n\tmovupd 176(%[r]), %%xmm11\n\t"              \
    "movupd 192(%[r]), %%xmm12\n\tmovupd 208(%[r]), %%xmm13\n\t"              \
    "movupd 224(%[r]), %%xmm14\n\tmovupd 240(%[r]), %%xmm15\n\t"
#define STORE_ALL                                                             \
    "\n\tmovupd %%xmm0, 0(%[r])\n\tmovupd %%xmm1, 16(%[r])\n\t"               \
    "movupd %%xmm2, 32(%[r])\n\tmovupd %%xmm3, 48(%[r])\n\t"                  \
    "movupd %%xmm4, 64(%[r])\n\tmovupd %%xmm5, 80(%[r])\n\t"                  \
    "movupd %%xmm6, 96(%[r])\n\tmovupd %%xmm7, 112(%[r])\n\t"                 \
    "movupd %%xmm8, 128(%[r])\n\tmovupd %%xmm9, 144(%[r])\n\t"                \
    "movupd %%xmm10, 160(%[r])\n\tmovupd %%xmm11, 176(%[r])\n\t"              \
    "movupd %%xmm12, 192(%[r])\n\tmovupd %%xmm13, 208(%[r])\n\t"              \
    "movupd %%xmm14, 224(%[r])\n\tmovupd %%xmm15, 240(%[r])"
#define CLOBBERS                                                              \
    "rax", "rcx", "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",     \
        "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",    \
        "xmm13", "xmm14", "xmm15"

/* Scalar and packed double: chains, copies, partial loads, helper calls. */
static uint64_t seq_double(regs *r, uint64_t *mem, uint64_t *rwx)
{
    uint64_t flags;
    __asm__ volatile(LOAD_ALL
                     "addsd %%xmm1, %%xmm0\n\t"
                     "mulsd %%xmm0, %%xmm0\n\t"
                     "movapd %%xmm0, %%xmm2\n\t"
                     "subsd %%xmm1, %%xmm2\n\t"
                     "divsd %%xmm3, %%xmm2\n\t"
                     "movsd %%xmm2, %%xmm4\n\t"
                     "sqrtsd %%xmm4, %%xmm5\n\t"
                     "maxsd %%xmm0, %%xmm5\n\t"
                     "minsd %%xmm5, %%xmm6\n\t"
                     "comisd %%xmm5, %%xmm6\n\t"
                     SAVE_FLAGS("rcx")
                     "mulsd 0(%[m]), %%xmm1\n\t"
                     "addsd %%xmm1, %%xmm1\n\t"
                     "unpcklpd %%xmm0, %%xmm1\n\t"
                     "addpd %%xmm2, %%xmm1\n\t"
                     "movsd 8(%[m]), %%xmm7\n\t"
                     "addsd %%xmm1, %%xmm7\n\t"
                     "movhps 16(%[m]), %%xmm1\n\t"
                     "mulpd %%xmm1, %%xmm7\n\t"
                     "pshufd $0x4e, %%xmm1, %%xmm3\n\t"
                     "mulpd %%xmm1, %%xmm3\n\t"
                     "movq %%xmm3, %%rax\n\t"
                     "cvtsi2sd %%rax, %%xmm4\n\t"
                     "addsd %%xmm4, %%xmm4\n\t"
                     "movsd %%xmm3, 0(%[x])\n\t"
                     "addsd %%xmm1, %%xmm3\n\t"
                     "xorpd %%xmm5, %%xmm5\n\t"
                     "addsd %%xmm0, %%xmm5\n\t"
                     "shufpd $1, %%xmm3, %%xmm5\n\t"
                     "divpd %%xmm5, %%xmm3\n\t"
                     "movlps 24(%[m]), %%xmm3\n\t"
                     "sqrtpd %%xmm3, %%xmm8\n\t"
                     "addpd %%xmm8, %%xmm9\n\t"
                     "movapd %%xmm9, %%xmm10\n\t"
                     "subpd %%xmm11, %%xmm10\n\t"
                     "maxpd %%xmm10, %%xmm12\n\t"
                     "minpd %%xmm12, %%xmm13\n\t"
                     "movaps %%xmm13, %%xmm14\n\t"
                     "mulsd %%xmm14, %%xmm14\n\t"
                     "pinsrw $1, %%eax, %%xmm14\n\t"
                     "addsd %%xmm14, %%xmm15\n\t"
                     "movq %%rax, %%xmm6\n\t"
                     "addpd %%xmm6, %%xmm6\n\t"
                     "ucomisd %%xmm15, %%xmm6\n\t"
                     SAVE_FLAGS("rax")
                     "shlq $16, %%rax\n\t"
                     "orq %%rax, %%rcx\n\t"
                     "movsd %%xmm6, %%xmm0\n\t"
                     "addsd %%xmm15, %%xmm0\n\t"
                     "movapd %%xmm0, %%xmm1\n\t"
                     "mulpd %%xmm7, %%xmm1\n\t"
                     "movsd 0(%[x]), %%xmm2\n\t"
                     "addsd %%xmm1, %%xmm2\n\t"
                     "movq %%rcx, %[f]"
                     STORE_ALL
                     : [f] "=m"(flags)
                     : [r] "r"(r), [m] "r"(mem), [x] "r"(rwx)
                     : CLOBBERS);
    return flags;
}

/* Scalar and packed single, with copies of 4 bytes and reciprocals. */
static uint64_t seq_single(regs *r, uint64_t *mem, uint64_t *rwx)
{
    uint64_t flags;
    __asm__ volatile(LOAD_ALL
                     "addss %%xmm1, %%xmm0\n\t"
                     "mulss %%xmm0, %%xmm0\n\t"
                     "movss %%xmm0, %%xmm2\n\t"
                     "subss %%xmm1, %%xmm2\n\t"
                     "divss %%xmm3, %%xmm2\n\t"
                     "movaps %%xmm2, %%xmm4\n\t"
                     "rcpss %%xmm4, %%xmm5\n\t"
                     "rsqrtps %%xmm5, %%xmm6\n\t"
                     "mulps %%xmm6, %%xmm4\n\t"
                     "comiss %%xmm4, %%xmm0\n\t"
                     SAVE_FLAGS("rcx")
                     "movss 4(%[m]), %%xmm7\n\t"
                     "addss %%xmm7, %%xmm4\n\t"
                     "sqrtss %%xmm4, %%xmm7\n\t"
                     "shufps $0x1b, %%xmm4, %%xmm7\n\t"
                     "addps %%xmm7, %%xmm7\n\t"
                     "movss %%xmm7, 0(%[x])\n\t"
                     "minps %%xmm7, %%xmm8\n\t"
                     "maxss %%xmm8, %%xmm9\n\t"
                     "movss %%xmm9, %%xmm10\n\t"
                     "divps %%xmm9, %%xmm10\n\t"
                     "cvtss2sd %%xmm10, %%xmm11\n\t"
                     "addss %%xmm11, %%xmm11\n\t"
                     "movaps %%xmm11, %%xmm12\n\t"
                     "subps %%xmm10, %%xmm12\n\t"
                     "movhps 8(%[m]), %%xmm12\n\t"
                     "sqrtps %%xmm12, %%xmm13\n\t"
                     "rcpps %%xmm13, %%xmm14\n\t"
                     "mulss %%xmm14, %%xmm15\n\t"
                     "ucomiss %%xmm15, %%xmm14\n\t"
                     SAVE_FLAGS("rax")
                     "shlq $16, %%rax\n\t"
                     "orq %%rax, %%rcx\n\t"
                     "movd %%xmm15, %%eax\n\t"
                     "movd %%eax, %%xmm1\n\t"
                     "addps %%xmm15, %%xmm1\n\t"
                     "movss 0(%[x]), %%xmm3\n\t"
                     "mulss %%xmm1, %%xmm3\n\t"
                     "movq %%rcx, %[f]"
                     STORE_ALL
                     : [f] "=m"(flags)
                     : [r] "r"(r), [m] "r"(mem), [x] "r"(rwx)
                     : CLOBBERS);
    return flags;
}

/* Copies around all sixteen registers: more live values than host
 * registers hold them, each copy then an operation on it. */
static uint64_t seq_rotate(regs *r, uint64_t *mem, uint64_t *rwx)
{
    (void)mem;
    (void)rwx;
    __asm__ volatile(LOAD_ALL
                     "addsd %%xmm0, %%xmm1\n\taddsd %%xmm1, %%xmm2\n\t"
                     "addsd %%xmm2, %%xmm3\n\taddsd %%xmm3, %%xmm4\n\t"
                     "addsd %%xmm4, %%xmm5\n\taddsd %%xmm5, %%xmm6\n\t"
                     "addsd %%xmm6, %%xmm7\n\taddsd %%xmm7, %%xmm8\n\t"
                     "addsd %%xmm8, %%xmm9\n\taddsd %%xmm9, %%xmm10\n\t"
                     "addsd %%xmm10, %%xmm11\n\taddsd %%xmm11, %%xmm12\n\t"
                     "addsd %%xmm12, %%xmm13\n\taddsd %%xmm13, %%xmm14\n\t"
                     "addsd %%xmm14, %%xmm15\n\taddsd %%xmm15, %%xmm0\n\t"
                     "movapd %%xmm0, %%xmm15\n\tmulpd %%xmm1, %%xmm15\n\t"
                     "movsd %%xmm15, %%xmm14\n\tmulpd %%xmm2, %%xmm14\n\t"
                     "movss %%xmm14, %%xmm13\n\tmulps %%xmm3, %%xmm13\n\t"
                     "movaps %%xmm13, %%xmm12\n\tsubpd %%xmm4, %%xmm12\n\t"
                     "movsd %%xmm12, %%xmm11\n\tdivsd %%xmm5, %%xmm11\n\t"
                     "movapd %%xmm11, %%xmm10\n\tsubsd %%xmm6, %%xmm10\n\t"
                     "movss %%xmm10, %%xmm9\n\tdivss %%xmm7, %%xmm9\n\t"
                     "movapd %%xmm9, %%xmm8\n\tmaxpd %%xmm8, %%xmm8\n\t"
                     "movapd %%xmm8, %%xmm7\n\taddpd %%xmm0, %%xmm7\n\t"
                     "movsd %%xmm7, %%xmm6\n\taddsd %%xmm15, %%xmm6\n\t"
                     "movapd %%xmm6, %%xmm5\n\tminpd %%xmm14, %%xmm5\n\t"
                     "movss %%xmm5, %%xmm4\n\tsubss %%xmm13, %%xmm4\n\t"
                     "movapd %%xmm4, %%xmm3\n\tsqrtsd %%xmm12, %%xmm3\n\t"
                     "movapd %%xmm3, %%xmm2\n\tmulsd %%xmm11, %%xmm2\n\t"
                     "movapd %%xmm2, %%xmm1\n\taddsd %%xmm10, %%xmm1\n\t"
                     "movapd %%xmm1, %%xmm0\n\tmulpd %%xmm9, %%xmm0\n\t"
                     "movapd %%xmm0, %%xmm0\n\tmovsd %%xmm0, %%xmm0\n\t"
                     "addpd %%xmm0, %%xmm0"
                     STORE_ALL
                     :
                     : [r] "r"(r)
                     : CLOBBERS);
    return 0;
}

/* Logic, integer and compare instructions on the same registers, with
 * 4-, 8- and 16-byte memory operands and loads. */
static uint64_t seq_mixed(regs *r, uint64_t *mem, uint64_t *rwx)
{
    (void)rwx;
    __asm__ volatile(LOAD_ALL
                     "mulsd %%xmm1, %%xmm0\n\t"
                     "andpd %%xmm2, %%xmm0\n\t"
                     "addsd %%xmm0, %%xmm3\n\t"
                     "andnpd %%xmm3, %%xmm4\n\t"
                     "orpd %%xmm4, %%xmm5\n\t"
                     "cmpltsd %%xmm5, %%xmm6\n\t"
                     "andps %%xmm6, %%xmm7\n\t"
                     "cmpunordpd %%xmm7, %%xmm8\n\t"
                     "cmpnless %%xmm8, %%xmm9\n\t"
                     "cmpeqps 0(%[m]), %%xmm10\n\t"
                     "addpd 0(%[m]), %%xmm10\n\t"
                     "mulss 4(%[m]), %%xmm11\n\t"
                     "subsd 8(%[m]), %%xmm11\n\t"
                     "cmplesd 16(%[m]), %%xmm11\n\t"
                     "movups 8(%[m]), %%xmm12\n\t"
                     "pcmpeqd %%xmm12, %%xmm13\n\t"
                     "paddq %%xmm12, %%xmm13\n\t"
                     "psubd %%xmm0, %%xmm13\n\t"
                     "pminub %%xmm1, %%xmm13\n\t"
                     "pmullw %%xmm13, %%xmm14\n\t"
                     "pcmpgtd %%xmm14, %%xmm15\n\t"
                     "paddsw %%xmm15, %%xmm14\n\t"
                     "pxor %%xmm15, %%xmm15\n\t"
                     "xorps %%xmm14, %%xmm15\n\t"
                     "por %%xmm1, %%xmm15\n\t"
                     "pandn %%xmm2, %%xmm15\n\t"
                     "movsd 24(%[m]), %%xmm1\n\t"
                     "movss 0(%[m]), %%xmm2\n\t"
                     "addsd %%xmm1, %%xmm2\n\t"
                     "addps %%xmm2, %%xmm1\n\t"
                     "maxpd %%xmm15, %%xmm1\n\t"
                     "movapd 16(%[m]), %%xmm3\n\t"
                     "divpd %%xmm1, %%xmm3\n\t"
                     "cvttsd2si %%xmm3, %%rax\n\t"
                     "cvtsi2ss %%eax, %%xmm4\n\t"
                     "cvtsd2si %%xmm4, %%ecx\n\t"
                     "cvtsi2sd %%rcx, %%xmm4\n\t"
                     "cvttss2si 8(%[m]), %%rax\n\t"
                     "cvtss2si %%xmm2, %%ecx\n\t"
                     "addsd %%xmm4, %%xmm3\n\t"
                     "cvtsi2sd %%eax, %%xmm5\n\t"
                     "cvtsd2si 16(%[m]), %%rax\n\t"
                     "cvtsi2ss %%rax, %%xmm6\n\t"
                     "cvtsi2sd %%ecx, %%xmm6\n\t"
                     "cmpordsd %%xmm3, %%xmm3\n\t"
                     "pcmpeqb %%xmm3, %%xmm3\n\t"
                     "psubusb %%xmm0, %%xmm3"
                     STORE_ALL
                     :
                     : [r] "r"(r), [m] "r"(mem)
                     : CLOBBERS);
    return 0;
}

static const struct {
    const char *name;
    uint64_t (*run)(regs *, uint64_t *, uint64_t *);
} SEQS[] = {
    { "double", seq_double },
    { "single", seq_single },
    { "rotate", seq_rotate },
    { "mixed", seq_mixed },
};

static const uint32_t MXCSRS[] = { 0x1f80, 0x5f80, 0x9f80, 0x1fc0 };

int main(void)
{
    /* Code and data on one page: stores into it are not plain stores for
     * an emulator that watches code pages. */
    uint64_t *rwx = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (rwx == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (unsigned s = 0; s < sizeof SEQS / sizeof SEQS[0]; s++) {
        for (unsigned k = 0; k < sizeof MXCSRS / sizeof MXCSRS[0]; k++) {
            hash = 0xcbf29ce484222325ull;
            for (int run = 0; run < NRUNS; run++) {
                regs r;
                uint64_t mem[4] __attribute__((aligned(16)));
                for (int i = 0; i < 16; i++) {
                    r.q[i][0] = operand();
                    r.q[i][1] = operand();
                }
                for (int i = 0; i < 4; i++) {
                    mem[i] = operand();
                }
                rwx[0] = operand();
                set_mxcsr(MXCSRS[k]);
                uint64_t flags = SEQS[s].run(&r, mem, rwx);
                uint32_t mx = get_mxcsr();
                set_mxcsr(0x1f80);
                for (int i = 0; i < 16; i++) {
                    mix(r.q[i][0]);
                    mix(r.q[i][1]);
                }
                mix(flags & 0x00c500c5);
                mix(mx);
                mix(rwx[0]);
            }
            printf("%-7s %04x %016llx\n", SEQS[s].name, MXCSRS[k], (unsigned long long)hash);
        }
    }
    munmap(rwx, 4096);
    return 0;
}
