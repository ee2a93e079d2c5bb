/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, racy, with data in its code: `scaled` (assembly with call
 * frame information, like OpenSSL's perlasm) keeps a constant table in
 * .text after its `ret`, outside its .eh_frame range. The table's bytes
 * 36 8b 03 read, when a linear sweep decodes them, as a Tracked
 * `mov eax, [rbx]`: they must not make the program a LARD program. Two
 * threads then write `shared` without synchronization. */
#include <pthread.h>
#include <stdio.h>

long scaled(long x);
__asm__(".text\n"
        ".globl scaled\n"
        ".type scaled, @function\n"
        "scaled:\n"
        ".cfi_startproc\n"
        "  leaq scaled_table(%rip), %rax\n"
        "  imulq (%rax), %rdi\n"
        "  movq %rdi, %rax\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".p2align 3\n"
        "scaled_table:\n"
        "  .byte 3, 0, 0, 0, 0, 0, 0, 0\n"
        "  .byte 0x36, 0x8b, 0x03, 0x36, 0x8b, 0x03, 0x36, 0x8b\n"
        ".size scaled, .-scaled\n");

static long shared;
static void *writer(void *arg) {
    shared = scaled((long)arg); /* RACE */
    return NULL;
}
int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, writer, (void *)1);
    pthread_create(&b, NULL, writer, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("written = %s\n", shared == 3 || shared == 6 ? "yes" : "no");
    return 0;
}
