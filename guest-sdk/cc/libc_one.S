/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lard-cc runtime: the entry of one function of ranges.def, built once per
 * function (the Makefile defines NAME, INDEX and AT_RETURN from the
 * table) into liblardcc_libc.a, so that a link pulls in only the entries
 * the program calls.  lard-cc renames the program's references to NAME to
 * __lardcc_libc_NAME (lardcc-libc.syms); the entry hands its descriptor
 * to __lardcc_libc_common (libc_entry.S), which reports the call and
 * jumps to the library's NAME.
 */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define ENTRY CAT(__lardcc_libc_, NAME)
#define DESC CAT(__lardcc_libc_desc_, NAME)

        .text
        .globl ENTRY
        .type ENTRY, @function
        .p2align 4
ENTRY:
        .cfi_startproc
        leaq DESC(%rip), %r11
        jmp __lardcc_libc_common
        .cfi_endproc
        .size ENTRY, . - ENTRY

/* struct lardcc_libc_desc (libc.c): the library's function, its index in
 * ranges.def, whether its ranges come from its result. */
        .section .data.rel.ro, "aw", @progbits
        .globl DESC
        .type DESC, @object
        .p2align 3
DESC:
        .quad NAME
        .short INDEX
        .byte AT_RETURN
        .byte 0
        .long 0
        .size DESC, . - DESC

        .section .note.GNU-stack, "", @progbits
