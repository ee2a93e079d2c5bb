/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime, dynamically linked programs: the real functions behind
 * the interposed ones (docs/lard-cc.md, "Static and dynamic builds").
 *
 * A static link wraps with `ld --wrap`: every reference to SYM in every
 * input object (the program, libstdc++.a, libgomp.a) reaches __wrap_SYM,
 * and __real_SYM is the library's.  A dynamic link cannot wrap the shared
 * libraries' references, so the dynamic runtime archives are the same
 * objects with __wrap_SYM renamed to SYM (exported from the executable with
 * --dynamic-list: the dynamic linker binds every object's references to the
 * executable's definition first) and __real_SYM renamed to
 * __lardcc_real_SYM, a trampoline (generated: real.S) that jumps to the
 * next definition after the executable's, found here on its first call.
 */
#define _GNU_SOURCE
#include "rt.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* glibc's allocator under its own names: resolving malloc with dlsym could
 * itself allocate. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

/* Called by the trampolines (real.S) with the function's name. */
void *lardcc_real_resolve(const char *name)
{
    void *p = NULL;
    if (strcmp(name, "malloc") == 0)
        return (void *)__libc_malloc;
    if (strcmp(name, "calloc") == 0)
        return (void *)__libc_calloc;
    if (strcmp(name, "realloc") == 0)
        return (void *)__libc_realloc;
    if (strcmp(name, "free") == 0)
        return (void *)__libc_free;
    /* glibc keeps the pre-2.3.2 condition variables under the same names. */
    if (strncmp(name, "pthread_cond_", 13) == 0)
        p = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
    if (p == NULL)
        p = dlsym(RTLD_NEXT, name);
    if (p == NULL) {
        char msg[160] = "lard-cc: no shared library defines ";
        strncat(msg, name, sizeof msg - strlen(msg) - 1);
        lard__fatal(msg);
    }
    return p;
}
