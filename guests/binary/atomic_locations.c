/* SPDX-License-Identifier: MIT OR Apache-2.0
 * Binary mode, race-free: C11 atomics on the heap and on the stack, where
 * no DWARF type or static address says they are atomic. A seq_cst store
 * compiles to `xchg` and a load to a plain `mov`: once an `xchg` (or a
 * lock-prefixed instruction) has touched a location, binary mode takes its
 * plain accesses as atomic ones (a load acquires, a store releases), so
 * each flag publishes its payload. The reader's loads before the writer's
 * `xchg` are plain reads of the flag, which race with no other read. A
 * freed block's flag is forgotten: the next block at its address is plain
 * data, published by the join. Racy twin: atomic_locations_racy.c. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
struct msg {
    int payload;
    atomic_int ready;
};
static struct msg *heap_msg;
static int stack_payload;
static void *heap_writer(void *arg) {
    (void)arg;
    heap_msg->payload = 42;
    atomic_store(&heap_msg->ready, 1);
    return NULL;
}
static void *stack_reader(void *arg) {
    atomic_int *flag = arg;
    while (atomic_load(flag) == 0)
        ;
    return (void *)(long)stack_payload;
}
int main(void) {
    pthread_t w, r;
    void *got;
    atomic_int flag = 0;
    heap_msg = calloc(1, sizeof *heap_msg);
    if (heap_msg == NULL)
        return 1;
    pthread_create(&w, NULL, heap_writer, NULL);
    while (atomic_load(&heap_msg->ready) == 0)
        ;
    int seen = heap_msg->payload;
    pthread_create(&r, NULL, stack_reader, &flag);
    stack_payload = 7;
    atomic_store(&flag, 1);
    pthread_join(r, &got);
    pthread_join(w, NULL);
    free(heap_msg);
    int *reuse = calloc(2, sizeof *reuse);
    if (reuse == NULL)
        return 1;
    reuse[1] = seen;
    printf("heap payload %d, stack payload %ld, reused %d\n", seen, (long)got, reuse[1]);
    free(reuse);
    return 0;
}
