/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Four threads update the same words under one lard_mutex at mixed widths:
 * a whole 8-byte word, its low 4 bytes, one byte of it, 2 bytes that span
 * two of its bytes, and 4 bytes that straddle two words.  Expected:
 * race-free (every access is under the lock), whatever width the bytes
 * were first accessed at. */
#include <lard.h>
#include <stdio.h>

#define WORDS 16

static uint64_t words[WORDS];               /* program data (Tracked) */
static lard_mutex_t lock = LARD_MUTEX_INIT;

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    unsigned char *bytes = (unsigned char *)words;
    for (int i = 0; i < 40; i++) {
        int k = (int)((i + id) % WORDS);
        lard_mutex_lock(&lock);
        lard_store64(&words[k], lard_load64(&words[k]) + 1);
        uint32_t *low = (uint32_t *)&words[k];
        lard_store32(low, lard_load32(low) + 1);
        unsigned char *b5 = bytes + 8 * k + 5;
        lard_store8(b5, (unsigned char)(lard_load8(b5) + 1));
        uint16_t *mid = (uint16_t *)(bytes + 8 * k + 2);
        lard_store16(mid, (uint16_t)(lard_load16(mid) + 0));
        if (k + 1 < WORDS) {
            uint32_t *across = (uint32_t *)(bytes + 8 * k + 6);
            (void)lard_load32(across);
        }
        lard_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    lard_thread_t t[4];
    for (int k = 0; k < WORDS; k++)
        lard_store64(&words[k], 0);
    for (uintptr_t i = 0; i < 4; i++)
        lard_spawn(&t[i], worker, (void *)i);
    for (int i = 0; i < 4; i++)
        lard_join(t[i], NULL);
    uint64_t sum = 0;
    for (int k = 0; k < WORDS; k++)
        sum += lard_load64(&words[k]);
    printf("sum = %llu\n", (unsigned long long)sum);
    return 0;
}
