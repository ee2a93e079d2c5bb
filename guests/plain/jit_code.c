/* Code written at run time: a JIT's W^X cycle (write, mprotect to
 * executable, run, make writable again, rewrite, run), a buffer that gains
 * EXEC after its pages were written as data, code and data sharing one RWX
 * page, and an instruction that rewrites the instruction right after it.
 * Every call must run the bytes currently in memory, as on a real CPU; the
 * output is compared with the native run. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef uint32_t (*fn_t)(void);

/* mov eax, imm32; ret */
static void emit_ret_imm(uint8_t *p, uint32_t v) {
    p[0] = 0xb8;
    memcpy(p + 1, &v, 4);
    p[5] = 0xc3;
}

static uint8_t *map(int prot) {
    void *p = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        _exit(2);
    }
    return p;
}

static void protect(uint8_t *p, int prot) {
    if (mprotect(p, 4096, prot) != 0) {
        perror("mprotect");
        _exit(2);
    }
}

int main(void) {
    uint64_t sum = 0;

    /* 1. W^X: RW -> write -> RX -> run -> RW -> rewrite -> RX -> run. */
    uint8_t *wx = map(PROT_READ | PROT_WRITE);
    for (uint32_t i = 0; i < 200; i++) {
        protect(wx, PROT_READ | PROT_WRITE);
        emit_ret_imm(wx, 1000 + i);
        protect(wx, PROT_READ | PROT_EXEC);
        uint32_t r = ((fn_t)wx)();
        if (r != 1000 + i) {
            printf("w^x: call %u returned %u\n", i, r);
            return 1;
        }
        sum += r;
    }
    printf("w^x cycle ok, sum %llu\n", (unsigned long long)sum);

    /* 2. Data pages written first, then made RWX and patched in place. */
    uint8_t *late = map(PROT_READ | PROT_WRITE);
    for (int k = 0; k < 4096; k += 8)
        memset(late + k, 0xcc, 8);
    emit_ret_imm(late + 64, 7);
    protect(late, PROT_READ | PROT_WRITE | PROT_EXEC);
    sum = 0;
    for (uint32_t i = 0; i < 200; i++) {
        uint32_t r = ((fn_t)(late + 64))();
        if (r != 7 + i) {
            printf("late exec: call %u returned %u, want %u\n", i, r, 7 + i);
            return 1;
        }
        sum += r;
        uint32_t next = 8 + i;
        memcpy(late + 65, &next, 4); /* patch the immediate in place */
    }
    printf("exec added later ok, sum %llu\n", (unsigned long long)sum);

    /* 3. Code and data on one RWX page: a counter next to the code. */
    uint8_t *rwx = map(PROT_READ | PROT_WRITE | PROT_EXEC);
    uint32_t *counter = (uint32_t *)(rwx + 2048);
    emit_ret_imm(rwx, 0);
    for (uint32_t i = 0; i < 300; i++) {
        *counter += 3;
        uint32_t r = ((fn_t)rwx)();
        if (r != (i == 0 ? 0 : *counter - 3)) {
            printf("rwx: call %u returned %u\n", i, r);
            return 1;
        }
        emit_ret_imm(rwx, *counter);
    }
    printf("code and data on one page ok, counter %u\n", *counter);

    /* 4. An instruction that rewrites the next one:
     *    mov dword [rip+1], imm32   ; the imm32 of the following mov
     *    mov eax, 0x11111111
     *    ret                                                            */
    uint8_t *smc = map(PROT_READ | PROT_WRITE | PROT_EXEC);
    uint32_t results = 0;
    for (uint32_t i = 0; i < 100; i++) {
        static const uint8_t code[] = {0xc7, 0x05, 0x01, 0x00, 0x00, 0x00, 0, 0, 0, 0,
                                       0xb8, 0x11, 0x11, 0x11, 0x11, 0xc3};
        memcpy(smc, code, sizeof code);
        uint32_t v = 0x22220000u + i;
        memcpy(smc + 6, &v, 4);
        uint32_t r = ((fn_t)smc)();
        if (r != v) {
            printf("self-modifying: call %u returned %#x, want %#x\n", i, r, v);
            return 1;
        }
        results += r & 0xffff;
    }
    printf("instruction rewriting the next one ok, %u\n", results);
    return 0;
}
