/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Accesses the program may not make, each caught by its SIGSEGV handler:
 * a store to a read-only page, loads of PROT_NONE and unmapped pages, a
 * load crossing into an inaccessible page, 16-byte and string stores to
 * read-only memory, a load through a null pointer; and the accesses it
 * may make after each mprotect. Prints, per case, whether it faulted and
 * where (as an offset from the page it aimed at), so a native run and an
 * emulated one print the same lines. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile uintptr_t fault_addr;

static void on_segv(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    fault_addr = (uintptr_t)info->si_addr;
    siglongjmp(back, 1);
}

typedef void (*access_fn)(char *p);

static void store_byte(char *p) { *(volatile char *)p = 1; }
static void load_byte(char *p) { (void)*(volatile char *)p; }
static void load_u64(char *p) { (void)*(volatile uint64_t *)p; }
static void store_16(char *p) {
    __asm__ volatile("pxor %%xmm0, %%xmm0\n\tmovdqu %%xmm0, (%0)" : : "r"(p) : "xmm0", "memory");
}
static void store_string(char *p) {
    static const char src[32] = "string instruction";
    const char *s = src;
    size_t n = sizeof src;
    __asm__ volatile("rep movsb" : "+D"(p), "+S"(s), "+c"(n) : : "memory");
}

/* Runs `f(at)` and prints whether it faulted, relative to `page`. */
static void attempt(const char *what, access_fn f, char *at, char *page) {
    if (sigsetjmp(back, 1) == 0) {
        f(at);
        printf("%-34s ok\n", what);
    } else {
        printf("%-34s SIGSEGV at page%+ld\n", what, (long)(fault_addr - (uintptr_t)page));
    }
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    long pg = sysconf(_SC_PAGESIZE);

    for (int round = 0; round < 2; round++) {
        char *a = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char *b = a + pg, *c = a + 2 * pg;
        a[5] = 42;
        mprotect(a, pg, PROT_READ);
        attempt("store to a read-only page", store_byte, a + 10, a);
        attempt("load from a read-only page", load_byte, a + 5, a);
        printf("%-34s %d\n", "its byte", a[5]);
        attempt("16-byte store to it", store_16, a + 64, a);
        attempt("string store to it", store_string, a + 100, a);
        mprotect(b, pg, PROT_NONE);
        attempt("load from a PROT_NONE page", load_byte, b + 7, b);
        attempt("8-byte load across into it", load_u64, b - 4, b);
        mprotect(b, pg, PROT_READ | PROT_WRITE);
        attempt("store after PROT_READ|PROT_WRITE", store_byte, b + 7, b);
        munmap(c, pg);
        attempt("load from an unmapped page", load_byte, c + 1, c);
        mprotect(a, pg, PROT_READ | PROT_WRITE);
        attempt("store to it made writable", store_byte, a + 10, a);
        printf("%-34s %d %d\n", "its bytes", a[5], a[10]);
        attempt("load through a null pointer", load_byte, (char *)16, NULL);
        munmap(a, 2 * pg);
    }
    return 0;
}
