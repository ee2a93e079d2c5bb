/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Many mappings with mixed permissions, and a fault at each page boundary
 * between them. One mapping of PAGES pages is cut by mprotect and munmap
 * into a run of pages that are unmapped, PROT_NONE, read-only, read-write
 * or read-execute (a pattern with runs of each length, so neighbouring
 * pages that share permissions merge again); then every page is probed:
 * a load, a store, an 8-byte load across its lower boundary and a call
 * into it (each page starts with `ret`). Each probe prints one letter:
 * `.` it ran, `M` SIGSEGV with SEGV_MAPERR, `A` SIGSEGV with SEGV_ACCERR
 * at the probed address (`m`, `a`: at the page's first byte, where a load
 * across from a readable page faults), `?` at another address. The
 * permissions then rotate (each page takes the next kind) and the probes
 * run again, so accesses that ran before fault and the reverse (and code
 * that ran is called again after its page lost EXEC); last, a
 * checksum of the readable pages' first bytes shows that content survived
 * the splits and merges. A native run and an emulated one print the same. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 600

enum kind { UNMAPPED, NONE, RO, RW, RX, KINDS };

static sigjmp_buf back;
static volatile uintptr_t fault_addr;
static volatile int fault_code;

static void on_segv(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    fault_addr = (uintptr_t)info->si_addr;
    fault_code = info->si_code;
    siglongjmp(back, 1);
}

static void load_byte(char *p) { (void)*(volatile char *)p; }
static void store_byte(char *p) { *(volatile char *)p = 7; }
static void load_across(char *p) { (void)*(volatile uint64_t *)p; }
static void call_page(char *p) { ((void (*)(void))p)(); }

/* One letter: whether `f(at)` ran or how it faulted, upper case for a
 * fault at `at`, lower case for one at `page` (a load across into it). */
static char probe(void (*f)(char *), char *at, char *page) {
    if (sigsetjmp(back, 1) == 0) {
        f(at);
        return '.';
    }
    char c = fault_code == SEGV_MAPERR ? 'M' : fault_code == SEGV_ACCERR ? 'A' : '!';
    if (fault_addr == (uintptr_t)at) {
        return c;
    }
    if (fault_addr == (uintptr_t)page) {
        return (char)(c - 'A' + 'a');
    }
    return '?';
}

/* The kind of page i: runs of 1 to 4 pages of each kind in turn. */
static enum kind kind_of(int i, int shift) {
    int run = 0, k = 0;
    for (int at = 0;; k++) {
        run = 1 + (k * 7 + 3) % 4;
        if (i < at + run) {
            break;
        }
        at += run;
    }
    return (enum kind)((k + shift) % KINDS);
}

static int prot_of(enum kind k) {
    switch (k) {
    case RO: return PROT_READ;
    case RW: return PROT_READ | PROT_WRITE;
    case RX: return PROT_READ | PROT_EXEC;
    default: return PROT_NONE;
    }
}

/* Gives every page of `area` its kind for `shift` (it had the kind for
 * `was`, or was read-write); a page to be mapped where none is gets a
 * fresh page (content: `ret`, then its index). */
static void arrange(char *area, long pg, int shift, int was_shift) {
    for (int i = 0; i < PAGES; i++) {
        char *p = area + (long)i * pg;
        enum kind k = kind_of(i, shift);
        enum kind was = was_shift < 0 ? RW : kind_of(i, was_shift);
        if (k == UNMAPPED) {
            munmap(p, pg);
            continue;
        }
        if (was == UNMAPPED) {
            if (mmap(p, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p) {
                printf("mmap failed\n");
                return;
            }
            p[0] = (char)0xc3;
            p[1] = (char)i;
        }
        mprotect(p, pg, prot_of(k));
    }
}

static void probe_all(char *area, long pg) {
    char line[PAGES + 1];
    void (*fns[4])(char *) = {load_byte, store_byte, load_across, call_page};
    const char *names[4] = {"load ", "store", "cross", "call "};
    const int offs[4] = {1, 2, -4, 0};
    for (int f = 0; f < 4; f++) {
        for (int i = 0; i < PAGES; i++) {
            char *p = area + (long)i * pg;
            line[i] = probe(fns[f], p + offs[f], p);
        }
        line[PAGES] = 0;
        printf("%s %s\n", names[f], line);
    }
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    long pg = sysconf(_SC_PAGESIZE);

    /* A guard page of PROT_NONE on each side keeps the neighbours out. */
    char *all = mmap(NULL, (PAGES + 2) * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (all == MAP_FAILED) {
        printf("mmap failed\n");
        return 1;
    }
    char *area = all + pg;
    for (int i = 0; i < PAGES; i++) {
        area[(long)i * pg] = (char)0xc3;
        area[(long)i * pg + 1] = (char)i;
    }
    mprotect(all, pg, PROT_NONE);
    mprotect(area + (long)PAGES * pg, pg, PROT_NONE);

    /* Forward one kind, back one (executable pages lose EXEC, writable
     * ones WRITE, readable ones READ, PROT_NONE ones go), forward two. */
    const int shifts[4] = {0, 1, 0, 2};
    for (int r = 0; r < 4; r++) {
        arrange(area, pg, shifts[r], r ? shifts[r - 1] : -1);
        printf("round %d\n", r);
        probe_all(area, pg);
    }
    unsigned sum = 0;
    for (int i = 0; i < PAGES; i++) {
        if (kind_of(i, shifts[3]) >= RO) {
            sum = sum * 31 + (unsigned char)area[(long)i * pg + 1] + (unsigned char)area[(long)i * pg + 2];
        }
    }
    printf("checksum %u\n", sum);
    return 0;
}
