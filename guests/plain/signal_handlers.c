/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Faults delivered to the program's own handlers, the way managed
 * runtimes use them (the JVM's implicit null checks and safepoint polls):
 *  - a load from a PROT_NONE page raises SIGSEGV on the alternate signal
 *    stack; the handler checks siginfo and the ucontext, then moves the
 *    thread past the load and sets its result register; the program goes
 *    on from there, its floating-point state intact;
 *  - an invalid instruction raises SIGILL; that handler leaves with
 *    siglongjmp;
 *  - int3 raises SIGTRAP (si_code SI_KERNEL, the program counter past the
 *    int3), as Go's runtime.Breakpoint and debug traps expect; the handler
 *    returns and the program goes on after the int3.
 * Output, natively and under lard, is the lines printed below; the exit
 * status is 0. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static volatile int segv_hits;
static void *volatile fault_addr;
static volatile int on_altstack;
static volatile int right_pc;
static char *guard;
static sigjmp_buf escape;
extern char after_load[], faulting_load[];

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    stack_t ss;
    sigaltstack(NULL, &ss);
    segv_hits++;
    fault_addr = si->si_addr;
    on_altstack = (ss.ss_flags & SS_ONSTACK) != 0 && sig == SIGSEGV && si->si_code == SEGV_ACCERR;
    right_pc = uc->uc_mcontext.gregs[REG_RIP] == (greg_t)faulting_load;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)after_load;
    uc->uc_mcontext.gregs[REG_RAX] = 42;
}

static volatile int trap_code;
static volatile int trap_past;
extern char after_int3[];

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    (void)sig;
    trap_code = si->si_code;
    trap_past = uc->uc_mcontext.gregs[REG_RIP] == (greg_t)after_int3;
}

static void on_ill(int sig)
{
    (void)sig;
    siglongjmp(escape, 1);
}

int main(void)
{
    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    volatile double scale = 1.25;
    double before = scale * 2;
    long v;
    __asm__ volatile("movq %1, %%rdx\n"
                     ".globl faulting_load\nfaulting_load:\n\tmovl (%%rdx), %%eax\n"
                     ".globl after_load\nafter_load:\n\tmovq %%rax, %0"
                     : "=r"(v)
                     : "r"(guard)
                     : "rax", "rdx", "memory");
    printf("SIGSEGV handled: value %ld, at the guard page %s, on the alternate stack %s, "
           "at the faulting instruction %s\n",
           v, fault_addr == guard ? "yes" : "no", on_altstack ? "yes" : "no",
           right_pc ? "yes" : "no");
    printf("floating point kept: %s\n", scale * 2 == before ? "yes" : "no");

    signal(SIGILL, on_ill);
    if (sigsetjmp(escape, 1) == 0) {
        __asm__ volatile("ud2");
        puts("ud2 returned");
    } else {
        puts("SIGILL handler left with siglongjmp");
    }

    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGTRAP, &sa, NULL);
    __asm__ volatile("int3\n.globl after_int3\nafter_int3:" ::: "memory");
    printf("SIGTRAP handled: si_code %d, resumed after the int3 %s\n", trap_code,
           trap_past ? "yes" : "no");
    printf("handlers run: %d\n", segv_hits);
    return 0;
}
