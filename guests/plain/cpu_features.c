/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Prints the CPU features glibc/gcc see through CPUID, then exercises the
 * string functions whose implementation glibc picks by those features
 * (ifunc), checking their results. Under lard the CPUID view must advertise
 * only what the emulated CPU implements (no AVX), and everything must work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    __builtin_cpu_init();
    printf("sse2=%d sse4.2=%d avx=%d avx2=%d avx512f=%d\n", !!__builtin_cpu_supports("sse2"),
           !!__builtin_cpu_supports("sse4.2"), !!__builtin_cpu_supports("avx"),
           !!__builtin_cpu_supports("avx2"), !!__builtin_cpu_supports("avx512f"));
    size_t n = 1 << 20;
    char *a = malloc(n + 64), *b = malloc(n + 64);
    for (size_t i = 0; i < n; i++) a[i] = (char)('a' + i % 26);
    a[n] = 0;
    memcpy(b + 3, a, n + 1);
    int ok = strlen(b + 3) == n && memcmp(a, b + 3, n) == 0 && strchr(b + 3, 'z') == b + 3 + 25 &&
             memchr(a, 'q', n) == a + 16 && strcmp(a, b + 3) == 0;
    memset(b, 'x', n);
    ok = ok && b[n - 1] == 'x' && strrchr(a, 'a') == a + (n - 1) / 26 * 26;
    printf("string functions %s\n", ok ? "ok" : "BROKEN");
    return ok ? 0 : 1;
}
