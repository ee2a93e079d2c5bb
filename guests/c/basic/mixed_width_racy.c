/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* One thread writes whole 8-byte words with no lock while another reads
 * single bytes and 2-byte halves of the same words; a third pair of
 * accesses at mixed widths is under a lock.  Expected: racy (the unlocked
 * 8-byte writes and the 1- and 2-byte reads of the same bytes race, in
 * either order). */
#include <lard.h>
#include <stdio.h>

static uint64_t shared[4];                  /* program data (Tracked) */
static uint64_t guarded[4];
static lard_mutex_t lock = LARD_MUTEX_INIT;

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++) {
        lard_store64(&shared[i % 4], (uint64_t)i); /* RACE */
        lard_mutex_lock(&lock);
        lard_store64(&guarded[i % 4], (uint64_t)i);
        lard_mutex_unlock(&lock);
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    unsigned char *bytes = (unsigned char *)shared;
    unsigned char *g = (unsigned char *)guarded;
    for (int i = 0; i < 200; i++) {
        (void)lard_load8(bytes + 8 * (i % 4) + 3); /* RACE */
        (void)lard_load16((uint16_t *)(bytes + 8 * (i % 4) + 6)); /* RACE */
        lard_mutex_lock(&lock);
        (void)lard_load8(g + 8 * (i % 4) + 1);
        lard_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    lard_thread_t w, r;
    lard_spawn(&w, writer, NULL);
    lard_spawn(&r, reader, NULL);
    lard_join(w, NULL);
    lard_join(r, NULL);
    printf("done\n");
    return 0;
}
