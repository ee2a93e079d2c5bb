/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode: plain-mov atomics recognized from DWARF types. A producer
 * hands data to main with release stores / acquire loads (plain movs on
 * x86-64) through an _Atomic field of a global struct, through the
 * elements of a static array of atomic_int and through a typedef'd
 * _Atomic global: race-free. Next to them a plain field of the same struct
 * and a plain counter are updated by both threads with nothing ordering
 * them: racy in every schedule. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

typedef _Atomic long flag_t;
struct mailbox {
    int payload;
    atomic_int full;
    long pad;
};
static struct mailbox box;
static atomic_int slots[4];
static int data[4];
static flag_t done;
static int result;
static long unordered;

static void __attribute__((noinline)) bump(void)
{
    unordered++; /* RACE */
    box.pad++;   /* RACE */
}

static void *producer(void *arg)
{
    (void)arg;
    bump();
    box.payload = 42;
    atomic_store_explicit(&box.full, 1, memory_order_release);
    for (int i = 0; i < 4; i++) {
        data[i] = i * 10;
        atomic_store_explicit(&slots[i], 1, memory_order_release);
    }
    result = 7;
    atomic_store_explicit(&done, 1, memory_order_release);
    return NULL;
}

int main(void)
{
    pthread_t t;
    int sum = 0;
    pthread_create(&t, NULL, producer, NULL);
    bump();
    while (!atomic_load_explicit(&box.full, memory_order_acquire))
        ;
    int got = box.payload;
    for (int i = 0; i < 4; i++) {
        while (!atomic_load_explicit(&slots[i], memory_order_acquire))
            ;
        sum += data[i];
    }
    while (!atomic_load_explicit(&done, memory_order_acquire))
        ;
    int r = result;
    pthread_join(t, NULL);
    printf("payload %d sum %d result %d bumps %ld\n", got, sum, r, unordered);
    return 0;
}
