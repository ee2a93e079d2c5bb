/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Program events that LARDx86 does not carry: object extents, lock
 * identities and the end of a language-level thread (docs/events.md).
 *
 * Natively these functions do nothing.  lard intercepts a call at the
 * function's first instruction and reads the System V argument registers,
 * so the functions must stay real, distinct functions: noinline, and each
 * body uses its arguments in an empty asm so no compiler drops or merges
 * them.  All six live in one text section, so a linker's identical-code
 * folding (which works on whole sections) cannot fold them into one
 * address either. */
#include "internal.h"

#define LARD__NOTE __attribute__((__noinline__, __used__))

LARD__NOTE void lard_note_alloc(const void *addr, size_t size, const void *site)
{
    __asm__ volatile("" : : "r"(addr), "r"(size), "r"(site) : "memory");
}

LARD__NOTE void lard_note_free(const void *addr)
{
    __asm__ volatile("" : : "r"(addr) : "memory");
}

LARD__NOTE void lard_note_acquire(const void *lock, int shared)
{
    __asm__ volatile("" : : "r"(lock), "r"(shared) : "memory");
}

LARD__NOTE void lard_note_release(const void *lock)
{
    __asm__ volatile("" : : "r"(lock) : "memory");
}

LARD__NOTE void lard_note_thread_exit(void)
{
    __asm__ volatile("" : : : "memory");
}

LARD__NOTE void lard_note_report_count(uint64_t *n)
{
    __asm__ volatile("" : : "r"(n) : "memory");
}
